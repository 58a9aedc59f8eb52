"""Every Redis key and pub/sub channel the cluster uses (docs/cluster.md, "Keys").

A match's keys share the hash tag ``{m:ID}``, so that under Redis Cluster they
live in one slot and one script may touch them all.
"""

from __future__ import annotations

PREFIX = "cs:"

#: hash: node name -> msgpack {advertise, started}
NODES = PREFIX + "nodes"
#: set of the ids of every unfinished match (the adoption scan reads it)
UNFINISHED = PREFIX + "unfinished"
#: hash: match id -> msgpack summary (the cluster-wide lobby listing)
LOBBY = PREFIX + "lobby"
#: pub/sub channel every node listens on (adoptions, node departures)
ALL = PREFIX + "all"


def alive(node: str) -> str:
    """String with a TTL: present while ``node`` renews its liveness lease."""
    return f"{PREFIX}alive:{node}"


def to_node(node: str) -> str:
    """Pub/sub channel of messages for ``node`` (relayed requests and replies)."""
    return f"{PREFIX}to:{node}"


def _match(match_id: str, what: str) -> str:
    return f"{PREFIX}{{m:{match_id}}}:{what}"


def owner(match_id: str) -> str:
    """Hash {node, epoch}: the match's owner and its fencing epoch."""
    return _match(match_id, "owner")


def record(match_id: str) -> str:
    """Hash: the match's stored record (header, seats, watchers, timers)."""
    return _match(match_id, "rec")


def journal(match_id: str) -> str:
    """Stream: the match's journal rows, one entry per row, in seq order."""
    return _match(match_id, "journal")


def session_token(token_hash: str) -> str:
    """String: the session id a resume token's hash belongs to."""
    return f"{PREFIX}token:{token_hash}"


def session(session_id: str) -> str:
    """Hash: a session's name, account, node and times."""
    return f"{PREFIX}session:{session_id}"


def session_matches(session_id: str) -> str:
    """Set: the ids of the matches a session sits in or watches."""
    return f"{PREFIX}session:{session_id}:matches"


def queue(game: str) -> str:
    """List: the players waiting in a game's matchmaking queue, oldest first."""
    return f"{PREFIX}queue:{game}"
