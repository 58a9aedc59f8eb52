"""The relay: a client's requests about a match another node owns go to that owner,
and what the owner sends the client comes back (docs/cluster.md, "Routing").

Every node listens on its channel ``cs:to:NAME`` (and on ``cs:all``). Messages are
msgpack maps ``{from: NODE, items: [...]}``; one publish carries every item this
node had for that node in one scheduler pass (:meth:`Relay.send` queues, one task
publishes, so items to one node keep their order). The items:

* ``{t: "q", s, n, a, v, m}`` home -> owner: the request ``m`` (its wire map) of
  session ``s`` (name ``n``, address ``a``, its connection's protocol version ``v``);
* ``{t: "e", s, m}`` owner -> home: a message for session ``s`` (an event's wire map);
* ``{t: "a", s, n, v}`` / ``{t: "d", s}`` home -> owner: the session's connection
  attached (a fresh snapshot of every match there) / detached (grace timers run);
* ``{t: "p", s, match, game}`` pairing node -> home: the session waiting in the
  ``game`` queue was paired into ``match``, run by the sender;
* ``{t: "c", s, match}`` owner -> home: ``match`` has closed (forget it).

On the owner a relayed request runs for a *remote session*: the
:class:`~server.session.Session` of that id whose ``client`` is a
:class:`RemoteOutbox`, so the match task is the same code as for a local client.
The home node pushes what comes back into the client's own connection, which
encodes it for its protocol version (protocol-2 snapshot deltas included).

Every relayed request gets exactly one answer: the owner's, or ``unavailable``
when the owner's lease is gone or it has not answered within
:data:`RELAY_TIMEOUT` (its late answer is then dropped).

The owner runs each remote session's items (``q``, ``a``, ``d``) in order, in a
*lane* of that session: a task that lives while the lane has items. A request
that has to wait (its match's inbox full, a slow commit) holds up only its own
session's lane, not the other sessions' relayed traffic; a lane holding
:data:`LANE_DEPTH` requests refuses the next ``rate_limited`` (the home node's
rate limit keeps a well-behaved session far below it).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import coredis
import msgpack
import trio

from protocol.errors import Refusal
from protocol.events import Event
from server import metrics
from server.cluster import keys
from server.cluster.node import ClusterNode
from server.direct import DIRECT
from server.match.task import Match
from server.session import Message, Session

log = logging.getLogger("cardserver.cluster")

#: Seconds a relayed request waits for its owner's answer before ``unavailable``.
RELAY_TIMEOUT = 5.0
#: Most match owners remembered (the cache is emptied when it grows past it).
OWNER_CACHE = 100_000
#: Requests one remote session may have waiting in its lane on the owner.
LANE_DEPTH = 64
#: Items that run in the lane of their session (``s``), in order.
_LANE_ITEMS = frozenset({"q", "a", "d"})
#: Errors that mean "ask Redis again who owns this match".
_STALE_OWNER = frozenset({"no_such_match", "match_moved", "unavailable"})

#: KEYS[1] the owner record, KEYS[2] cs:unfinished; ARGV[1] the alive-key prefix,
#: ARGV[2] the match id. {node, alive, unfinished} or nil.
_WHO_OWNS = """
local node = redis.call('HGET', KEYS[1], 'node')
if not node then return false end
return {node, redis.call('EXISTS', ARGV[1] .. node), redis.call('SISMEMBER', KEYS[2], ARGV[2])}
"""


class RemoteOutbox:
    """The outbox of a session whose connection lives on another node (its home):
    every message is relayed there as its wire map.

    ``direct``: the match may run this session's requests on its fast path (the
    group commit), since pushes here are queued in order and never block.
    """

    direct = True
    __slots__ = ("relay", "home", "session", "protocol")

    def __init__(self, relay: Relay, home: str, session: str, protocol: int) -> None:
        self.relay = relay
        self.home = home
        self.session = session
        self.protocol = protocol

    def push(self, msg: Message) -> None:
        """Queue ``msg`` for the home node (never blocks)."""
        wire = msg.to_wire() if isinstance(msg, Event) else msg
        self.relay.send(self.home, {"t": "e", "s": self.session, "m": wire})

    def __repr__(self) -> str:
        return f"RemoteOutbox({self.home!r}, {self.session!r})"


class RelayHost(Protocol):
    """What the relay needs of the lobby."""

    sessions: dict[str, Session]
    matches: dict[str, Match]

    async def run_relayed(self, session: Session, msg: dict[str, Any]) -> None:
        """Run a relayed request about a match of this node and answer it (never raises)."""

    def detach(self, session: Session, client: Any) -> None:
        """The session's connection is gone."""


@dataclass
class _Lane:
    """One remote session's items waiting on this owner, oldest first."""

    items: deque[tuple[str, dict[str, Any]]] = field(default_factory=deque)
    requests: int = 0  # the ``q`` items among them


class Relay:
    """This node's end of the relay (see the module docstring).

    Args:
        node: this node (its Redis client, name and registry).
        host: the lobby.
        timeout: seconds a relayed request waits for its answer.
    """

    def __init__(self, node: ClusterNode, host: RelayHost, timeout: float = RELAY_TIMEOUT
                 ) -> None:
        self.redis = node.redis
        self.name = node.name
        self.registry = node.registry
        self.registry.on_nodes_gone.append(self.nodes_gone)  # the registry sees them go
        self.host = host
        self.timeout = timeout
        #: match id -> the node that owns it (as last looked up)
        self.owners: dict[str, str] = {}
        #: session id of a client of this node -> {match id: owner} of its remote matches
        self.remote: dict[str, dict[str, str]] = {}
        #: (session, rid) -> [(deadline, match, owner)] of relayed requests not answered
        self._pending: dict[tuple[str, int | None], list[tuple[float, str, str]]] = {}
        #: (session, rid) answered ``unavailable`` on timeout -> when (its answer is dropped)
        self._late: dict[tuple[str, int | None], float] = {}
        self._outgoing: dict[str, list[dict[str, Any]]] = {}
        self._wake = trio.Event()
        self._who_owns = self.redis.register_script(_WHO_OWNS)
        #: called with (session, match id, game) when a pairing notice arrives
        self.on_paired: Callable[[Session, str, str], None] = lambda s, m, g: None
        #: Redis publishes made (each carries one batch for one node)
        self.publishes = 0
        #: remote session id -> its lane (present while its task runs)
        self._lanes: dict[str, _Lane] = {}
        self._nursery: trio.Nursery | None = None

    # -- running ------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Listen on this node's channel and ``cs:all``, publish what is queued and
        answer the requests that time out, until cancelled."""
        pubsub = self.redis.pubsub(channels=[keys.to_node(self.name), keys.ALL],
                                   ignore_subscribe_messages=True)
        try:
            async with pubsub, trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._publish_loop)
                nursery.start_soon(self._expire_loop)
                task_status.started()
                async for message in pubsub:
                    try:
                        await self._received(message["channel"], message["data"])
                    except Exception:
                        log.exception("relay %s: a message could not be handled", self.name)
        except BaseExceptionGroup as group:
            # cancelled at shutdown, coredis's clean-up may try to unsubscribe on a
            # connection its pool has closed already: that is no failure
            _, rest = group.split(anyio.ClosedResourceError)
            if rest is not None:
                raise rest from None

    def send(self, node: str, item: dict[str, Any]) -> None:
        """Queue ``item`` for ``node`` (published at the next scheduler pass, in order)."""
        metrics.relayed(True)
        self._outgoing.setdefault(node, []).append(item)
        self._wake.set()

    async def _publish_loop(self) -> None:
        """Publish every queued batch, one publish per node, in one round trip; items
        queued meanwhile go with the next (so a busy node batches more)."""
        while True:
            await self._wake.wait()
            self._wake = trio.Event()
            out, self._outgoing = self._outgoing, {}
            try:
                await self._publish(out)
            except coredis.exceptions.RedisError as exc:
                # the requests among them are answered unavailable by their timeout
                log.warning("relay %s: cannot publish to %s: %s", self.name,
                            ", ".join(out), exc)

    async def _publish(self, out: dict[str, list[dict[str, Any]]]) -> None:
        bodies = [(keys.to_node(node), msgpack.packb({"from": self.name, "items": items}))
                  for node, items in out.items()]
        self.publishes += len(bodies)
        if len(bodies) == 1:
            await self.redis.publish(*bodies[0])
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            results = [pipe.publish(channel, body) for channel, body in bodies]
        for result in results:
            await result

    # -- the home node: requests out, answers in ---------------------------------

    async def forward(self, session: Session, msg: dict[str, Any]) -> None:
        """Relay ``msg`` (a request about ``msg["match"]``, which this node does not
        run) to the match's owner; its answer comes back to ``session`` later.

        Raises:
            Refusal: ``no_such_match`` (the cluster knows no such match),
                ``unavailable`` (its owner's lease is gone: retry after adoption).
            coredis.exceptions.RedisError: Redis is unreachable.
        """
        match_id = msg["match"]
        owner = self.owners.get(match_id)
        if owner is None or not self.registry.is_alive(owner):
            owner = await self._look_up(match_id)
        rid = msg.get("id")
        self.remote.setdefault(session.id, {})[match_id] = owner
        self._pending.setdefault((session.id, rid), []).append(
            (trio.current_time() + self.timeout, match_id, owner))
        self.send(owner, {"t": "q", "s": session.id, "n": session.name, "a": session.address,
                          "v": _protocol_of(session), "m": msg})

    async def _look_up(self, match_id: str) -> str:
        """The live owner of ``match_id`` (one round trip), cached.

        Raises:
            Refusal: ``no_such_match``, ``unavailable``.
        """
        self.owners.pop(match_id, None)
        found = await self._who_owns(keys=[keys.owner(match_id), keys.UNFINISHED],
                                     args=[keys.alive(""), match_id])
        if not found:
            raise Refusal("no_such_match", f"no match {match_id!r}", "match", match=match_id)
        owner, alive, unfinished = found[0].decode(), int(found[1]), int(found[2])
        if owner == self.name and unfinished:  # this node is adopting it right now
            raise Refusal("unavailable", f"match {match_id} is being taken over by this "
                          "node; retry in a moment", "match", match=match_id)
        if owner == self.name:  # owned here but not running: it has closed
            raise Refusal("no_such_match", f"match {match_id} is closed", "match",
                          match=match_id)
        if not alive:
            raise Refusal("unavailable", f"the node running match {match_id} is unreachable; "
                          "retry in a few seconds", "match", match=match_id)
        if len(self.owners) >= OWNER_CACHE:
            self.owners.clear()
        self.owners[match_id] = owner
        return owner

    async def attached(self, session: Session) -> None:
        """The session's connection (here) attached: its remote matches' owners send
        it fresh snapshots and end its grace periods. Those this node does not know
        of (the session was last home elsewhere) are read from
        ``cs:session:ID:matches``, which the owners keep (one round trip, and one per
        match found there).

        Raises:
            coredis.exceptions.RedisError: Redis is unreachable.
        """
        known = self.remote.setdefault(session.id, {})
        listed = await self.redis.smembers(keys.session_matches(session.id))
        for raw in sorted(listed):
            match_id = raw.decode()
            if match_id in known or match_id in self.host.matches:
                continue
            try:
                known[match_id] = await self._look_up(match_id)
            except Refusal:
                continue  # closed, or its owner is gone: the adoption notice will come
        if not known:
            del self.remote[session.id]
        for owner in set(known.values()):
            self._send_attach(owner, session)

    def _send_attach(self, owner: str, session: Session) -> None:
        self.send(owner, {"t": "a", "s": session.id, "n": session.name,
                          "v": _protocol_of(session)})

    def detached(self, session: Session) -> None:
        """The session's connection (here) is gone: its remote matches' owners start
        its grace periods."""
        for owner in set(self.remote.get(session.id, {}).values()):
            self.send(owner, {"t": "d", "s": session.id})

    def _answered(self, session_id: str, wire: dict[str, Any]) -> bool:
        """Note an ``ok``/``error`` that answers a relayed request; False when it
        answers one already answered ``unavailable`` (it is dropped)."""
        key = (session_id, wire.get("id"))
        if self._late.pop(key, None) is not None:
            return False
        waiting = self._pending.get(key)
        if not waiting:
            return True
        _, match_id, _ = waiting.pop(0)
        if not waiting:
            del self._pending[key]
        if wire["type"] == "error" and wire.get("code") in _STALE_OWNER:
            self.owners.pop(match_id, None)
        return True

    async def _expire_loop(self) -> None:
        """Answer ``unavailable`` to every relayed request past its deadline."""
        while True:
            await trio.sleep(min(self.timeout / 10, 0.5))
            self._expire(lambda deadline, owner: deadline <= trio.current_time())

    def _expire(self, due: Callable[[float, str], bool]) -> None:
        now = trio.current_time()
        for key in list(self._pending):
            waiting = self._pending[key]
            for entry in [e for e in waiting if due(e[0], e[2])]:
                waiting.remove(entry)
                deadline, match_id, owner = entry
                self.owners.pop(match_id, None)
                self._late[key] = now
                session = self.host.sessions.get(key[0])
                if session is not None:
                    session.push(Refusal("unavailable", f"node {owner} running match "
                                         f"{match_id} did not answer", "match",
                                         match=match_id).to_event(key[1]))
            if not waiting:
                del self._pending[key]
        for key, when in list(self._late.items()):
            if now - when > 10 * self.timeout:
                del self._late[key]

    # -- receiving ------------------------------------------------------------

    async def _received(self, channel: bytes, data: bytes) -> None:
        body = msgpack.unpackb(data)
        if channel.decode() == keys.ALL:
            await self._notice(body)
            return
        sender = body["from"]
        items = body["items"]
        metrics.relayed(False, len(items))
        if all(item["t"] == "e" for item in items):
            # the common case: messages only, pushed without a checkpoint, so their
            # connections write them straight to their sockets at the end
            with DIRECT:
                for item in items:
                    self._deliver(item)
            return
        for item in items:
            if item["t"] in _LANE_ITEMS:
                self._enqueue(sender, item)
                continue
            try:
                await self._item(sender, item)
            except Exception:
                log.exception("relay %s: item %s from %s failed", self.name,
                              item.get("t"), sender)

    def _enqueue(self, sender: str, item: dict[str, Any]) -> None:
        """Queue a session's item in its lane (starting the lane's task if it has
        none); a request beyond :data:`LANE_DEPTH` waiting is answered
        ``rate_limited`` instead."""
        session_id = item["s"]
        lane = self._lanes.get(session_id)
        if lane is None:
            assert self._nursery is not None, "relay not running"
            lane = self._lanes[session_id] = _Lane()
            self._nursery.start_soon(self._run_lane, session_id, lane)
        if item["t"] == "q":
            if lane.requests >= LANE_DEPTH:
                self._refuse_waiting(sender, item)
                return
            lane.requests += 1
        lane.items.append((sender, item))

    async def _run_lane(self, session_id: str, lane: _Lane) -> None:
        """Run a lane's items in order until it is empty, then forget it."""
        try:
            while lane.items:
                sender, item = lane.items.popleft()
                if item["t"] == "q":
                    lane.requests -= 1
                try:
                    await self._item(sender, item)
                except Exception:
                    log.exception("relay %s: item %s from %s failed", self.name,
                                  item.get("t"), sender)
        finally:
            del self._lanes[session_id]

    def _refuse_waiting(self, sender: str, item: dict[str, Any]) -> None:
        """Answer a request its session's full lane cannot take: ``rate_limited``."""
        request = item["m"]
        session = self.remote_session(item["s"], item["n"], sender, item["v"], item["a"])
        session.push(Refusal("rate_limited", f"too many requests waiting on node "
                             f"{self.name}; this one was not run",
                             "type").to_event(request.get("id")))

    async def _item(self, sender: str, item: dict[str, Any]) -> None:
        kind = item["t"]
        if kind == "e":
            self._deliver(item)
        elif kind == "q":
            known = self.host.sessions.get(item["s"])
            detached = known is not None and not known.connected
            session = self.remote_session(item["s"], item["n"], sender, item["v"], item["a"])
            if detached:  # detached here meanwhile (its home seemed gone): present again
                await self._attach_here(session)
            await self.host.run_relayed(session, item["m"])
        elif kind == "a":
            session = self.remote_session(item["s"], item["n"], sender, item["v"])
            await self._attach_here(session)
        elif kind == "d":
            session = self.host.sessions.get(item["s"])
            client = None if session is None else session.client
            if isinstance(client, RemoteOutbox) and client.home == sender:
                assert session is not None
                self.host.detach(session, client)
        elif kind == "p":
            self._paired(sender, item["s"], item["match"], item["game"])
        elif kind == "c":
            self.remote.get(item["s"], {}).pop(item["match"], None)
        else:
            log.warning("relay %s: unknown item %r from %s", self.name, kind, sender)

    def _deliver(self, item: dict[str, Any]) -> None:
        """An ``e`` item: push the message to this node's session (an answer to a
        request already answered ``unavailable`` is dropped)."""
        wire = item["m"]
        if wire.get("type") in ("ok", "error") and not self._answered(item["s"], wire):
            return
        session = self.host.sessions.get(item["s"])
        if session is not None:
            session.push(wire)

    def remote_session(self, session_id: str, name: str, home: str, protocol: int,
                       address: str | None = None) -> Session:
        """The session of this id, registered here with a :class:`RemoteOutbox` to
        ``home`` (a connection it had here before is closed: the newest wins)."""
        session = self.host.sessions.get(session_id)
        if session is None:
            session = self.host.sessions[session_id] = Session(session_id, name)
        client = session.client
        if not (isinstance(client, RemoteOutbox) and client.home == home):
            close = getattr(client, "close_with_bye", None)
            if close is not None:
                close("session_resumed", "this session was resumed on another node")
            session.client = RemoteOutbox(self, home, session_id, protocol)
        session.name = name
        if address is not None:
            session.address = address
        return session

    async def _attach_here(self, session: Session, only: str | None = None) -> None:
        """Mark the session present in every match of this node it is in (``only``:
        in that one), each sending it a fresh snapshot."""
        for match_id in sorted(session.match_ids() if only is None else {only}):
            match = self.host.matches.get(match_id)
            if match is not None:
                await match.attach(session)

    def _paired(self, owner: str, session_id: str, match_id: str, game: str) -> None:
        """The waiting session ``session_id`` of this node was paired by ``owner``."""
        self.remote.setdefault(session_id, {})[match_id] = owner
        self.owners[match_id] = owner
        session = self.host.sessions.get(session_id)
        if session is None or not session.connected:
            self.send(owner, {"t": "d", "s": session_id})  # its grace period starts now
            if session is None:
                return
        self.on_paired(session, match_id, game)

    def paired(self, session: Session, home: str, match_id: str, game: str) -> None:
        """Tell ``home`` that its waiting ``session`` now sits in ``match_id``, run
        here (queued before anything the match sends it)."""
        self.send(home, {"t": "p", "s": session.id, "match": match_id, "game": game})

    def closed(self, match: Match) -> None:
        """``match`` of this node has closed: the homes of its remote members forget it."""
        for session, _ in match.members():
            client = session.client
            if isinstance(client, RemoteOutbox):
                self.send(client.home, {"t": "c", "s": session.id, "match": match.id})

    async def _notice(self, body: dict[str, Any]) -> None:
        """``cs:all``: a node ``left`` (its pending requests are answered at once) or
        a match was ``adopted`` (this node's clients in it re-attach to the adopter)."""
        kind = body.get("t")
        if kind == "left":
            self.registry.live_nodes.pop(body["node"], None)
            self.nodes_gone({body["node"]})
        elif kind == "adopted":
            await self._adopted(body["match"], body["node"])

    def nodes_gone(self, nodes: set[str]) -> None:
        """``nodes`` left or lost their lease: the requests relayed to them are answered
        ``unavailable`` now, and the sessions whose home they were are detached here
        (their grace periods start, as for a client that dropped)."""
        self._expire(lambda deadline, owner: owner in nodes)
        for match_id in [m for m, o in self.owners.items() if o in nodes]:
            del self.owners[match_id]
        for session in list(self.host.sessions.values()):
            client = session.client
            if isinstance(client, RemoteOutbox) and client.home in nodes:
                self.host.detach(session, client)

    async def _adopted(self, match_id: str, node: str) -> None:
        self.owners.pop(match_id, None)
        if node != self.name:
            self.owners[match_id] = node
        for session_id, matches in list(self.remote.items()):
            if match_id not in matches:
                continue
            if node == self.name:
                del matches[match_id]  # local from now on
            else:
                matches[match_id] = node
            session = self.host.sessions.get(session_id)
            if session is None or not session.connected:
                continue
            if node == self.name:
                await self._attach_here(session, match_id)
            else:
                self._send_attach(node, session)


def _protocol_of(session: Session) -> int:
    """The protocol version the session's connection speaks (1 when unknown)."""
    conn = getattr(session.client, "conn", None)
    version = getattr(conn, "version", None)
    return version if isinstance(version, int) else 1
