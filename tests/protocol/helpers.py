"""Sample messages of every type, for round-trip tests and the fuzzer's seeds."""

from __future__ import annotations

from typing import Any

from protocol.connection import NEED_DATA, Connection

LIMITS = {
    "max_frame": 65536,
    "rate": 500,
    "burst": 1000,
    "ping_interval": 10.0,
    "ping_timeout": 30.0,
    "grace": 60.0,
    "handshake_timeout": 10.0,
}
HELLO = {"type": "hello", "protocol": [1], "name": "alice", "client": "mybot/0.1"}
WELCOME = {
    "type": "welcome",
    "protocol": 1,
    "server": "cardserver/0.1.0",
    "session": "s-1",
    "token": "tok-1",
    "name": "alice",
    "resumed": False,
    "limits": LIMITS,
}
PLAYERS = [
    {"seat": 0, "name": "alice", "connected": True, "bot": None},
    {"seat": 1, "name": None, "connected": False, "bot": None},
]

#: One valid example of every client -> server message.
TO_SERVER_EXAMPLES: dict[str, dict[str, Any]] = {
    "hello": {**HELLO, "resume": "tok-0"},
    "ping": {"type": "ping", "id": 1},
    "pong": {"type": "pong", "id": 2},
    "games": {"type": "games", "id": 3},
    "matches": {"type": "matches", "id": 4, "game": "war", "status": "waiting"},
    "create": {
        "type": "create",
        "id": 5,
        "game": "datastructures",
        "options": {"hand_size": 7, "fast": True},
        "bot": "greedy",
        "seat": 1,
        "turn_timer": 30,
        "abandon": "bot",
    },
    "join": {"type": "join", "id": 6, "match": "m1", "seat": 0},
    "watch": {"type": "watch", "id": 7, "match": "m1"},
    "leave": {"type": "leave", "id": 8, "match": "m1"},
    "queue": {"type": "queue", "id": 9, "game": "war", "options": {}},
    "unqueue": {"type": "unqueue", "id": 10, "game": "war"},
    "register": {"type": "register", "id": 20, "password": "correct horse", "bot": False},
    "logout": {"type": "logout", "id": 21},
    "change_password": {"type": "change_password", "id": 22, "old": "a", "new": "b"},
    "token_create": {"type": "token_create", "id": 23, "label": "my bot"},
    "tokens": {"type": "tokens", "id": 24},
    "token_revoke": {"type": "token_revoke", "id": 25, "token": "t0123456789ab"},
    "set_bot": {"type": "set_bot", "id": 26, "bot": True},
    "profile": {"type": "profile", "id": 27, "name": "alice", "limit": 10, "offset": 0},
    "leaderboard": {"type": "leaderboard", "id": 28, "game": "war", "limit": 20, "offset": 0},
    "intent": {
        "type": "intent",
        "id": 11,
        "match": "m1",
        "seq": 17,
        "intent": {"type": "play", "src": "hand", "index": 2, "array": 0},
    },
    "resign": {"type": "resign", "id": 12, "match": "m1"},
    "auto_flip": {"type": "auto_flip", "id": 13, "match": "m1", "on": True, "delay": 0.2},
    "fast_forward": {"type": "fast_forward", "id": 15, "match": "m1", "on": True},
    "records": {"type": "records", "id": 16, "game": "war", "limit": 10},
    "record": {"type": "record", "id": 17, "match": "m1", "seat": 0, "offset": 50,
               "limit": 50},
    "chat": {"type": "chat", "id": 14, "match": "m1", "text": "good luck!"},
    "mute_spectators": {"type": "mute_spectators", "id": 15, "match": "m1", "on": True},
}

#: One valid example of every server -> client message (welcome first).
TO_CLIENT_EXAMPLES: dict[str, dict[str, Any]] = {
    "welcome": WELCOME,
    "ping": {"type": "ping", "id": 1},
    "pong": {"type": "pong", "id": 2},
    "ok": {
        "type": "ok",
        "id": 3,
        "games": [
            {
                "name": "war",
                "seats": 2,
                "options": [
                    {
                        "name": "cap",
                        "kind": "int",
                        "default": 500,
                        "doc": "turn cap",
                        "min": 1,
                        "max": 10000,
                    },
                    {
                        "name": "mode",
                        "kind": "choice",
                        "default": "a",
                        "doc": "",
                        "choices": ["a", "b"],
                    },
                ],
            }
        ],
        "matches": [
            {
                "match": "m1",
                "game": "war",
                "status": "waiting",
                "options": {"cap": 500},
                "seq": 0,
                "players": PLAYERS,
                "spectators": 0,
                "created": 1764540000.5,
            }
        ],
        "queues": {"war": 1, "datastructures": 0},
    },
    "error": {
        "type": "error",
        "id": 4,
        "code": "unsupported_version",
        "message": "no shared version",
        "field": "protocol",
        "versions": [1],
    },
    "snapshot": {
        "type": "snapshot",
        "match": "m1",
        "game": "war",
        "seq": 17,
        "seat": 0,
        "view": {"you": {"pile": 20, "top": "10H"}, "them": {"pile": 32, "top": "back"}},
        "legal": [{"type": "flip"}],
        "status": "finished",
        "events": [{"type": "flip", "seat": 0, "card": "10H"}],
        "players": PLAYERS,
        "options": {"cap": 500},
        "commitment": "ab" * 32,
        "deadline": 12.5,
        "auto_flip": False,
        "result": {"winner": None, "reason": "draw"},
        "reveal": {"seed": "00" * 32, "salt": "ff" * 16},
    },
    "presence": {
        "type": "presence",
        "match": "m1",
        "seat": 1,
        "name": "bob",
        "connected": False,
        "grace": 60.0,
    },
    "chat": {"type": "chat", "match": "m1", "seat": None, "name": "carol", "text": "hi",
             "role": "spectator"},
    "bye": {"type": "bye", "reason": "server_shutdown", "message": "restarting"},
}


def handshake() -> tuple[Connection, Connection]:
    """A client and a server connection that have completed the handshake."""
    client, server = Connection("client"), Connection("server")
    server.receive_data(client.send(HELLO))
    assert server.next_message() == HELLO
    client.receive_data(server.send(WELCOME))
    assert client.next_message() == WELCOME
    assert client.next_message() is NEED_DATA
    return client, server


def drain(conn: Connection) -> list[Any]:
    """Every message available now (stops at NEED_DATA or CLOSED, which is included)."""
    out: list[Any] = []
    while True:
        msg = conn.next_message()
        out.append(msg)
        if not isinstance(msg, dict):
            return out
