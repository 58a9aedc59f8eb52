"""The bytes of every snapshot a match sends, pinned: random Data Structures and War
matches played through the match core (both seats connected, a spectator watching),
every message framed by a server-side protocol-1 and protocol-2 connection per
recipient, all of it hashed and compared with the hash recorded from the build
before the view, digest and encoding work of round 4 (#16). A change to how views,
legal lists or snapshots are built or encoded that alters one byte fails here."""

from __future__ import annotations

import hashlib
import random

import pytest

from engine.registry import get_game
from protocol.codec import pack
from protocol.connection import Connection
from protocol.events import Welcome
from protocol.framing import encode_frame
from server.config import ServerConfig
from server.match import commands as c
from server.match.core import MatchCore, Rules
from server.match.effects import SPECTATORS
from server.store import MatchRecord

SESSIONS = ("sa", "sb", "sw")


def _connection(protocol: int) -> Connection:
    conn = Connection("server")
    conn.receive_data(encode_frame(pack({"type": "hello", "protocol": [1, 2], "name": "x",
                                         "client": "test"}), 65536))
    conn.next_event()
    conn.send(Welcome(protocol=protocol, server="test", session="s", token="t" * 22,
                      name="x", resumed=False, limits=ServerConfig().limits()))
    return conn


def played_bytes(game_name: str, matches: int, protocol: int) -> tuple[int, str]:
    """(snapshots framed, SHA-256 hex of every frame in order) for ``matches`` random
    matches of ``game_name``, each played to its end (seeded: the same every run)."""
    game = get_game(game_name)
    digest = hashlib.sha256()
    count = 0
    for n in range(matches):
        rng = random.Random(n)
        rec = MatchRecord(f"m{n:09d}", game_name, game.normalize_options({}), 7000 + n,
                          "ab" * 16, 120, "forfeit", "waiting", 1.0)
        core = MatchCore.create(rec, Rules())
        core.seat(0, "sa", "alice", client_seed="1234")
        core.seat(1, "sb", "bob", client_seed="5678")
        conns = {s: _connection(protocol) for s in SESSIONS}
        now = 0.0
        fxs = [core.handle(c.Start(), now), core.handle(c.Watch("sw", 1), now)]
        for i in range(4000):
            for fx in fxs:
                for batch in (fx.messages, fx.later().messages if fx.later else []):
                    for to, msg in batch:
                        frame = conns["sw" if to == SPECTATORS else to].send(msg)
                        if msg.TYPE == "snapshot":
                            digest.update(frame)
                            count += 1
            if core.status == "finished":
                break
            seat = core.state.to_move()[0]
            now += 0.25
            intent = rng.choice(core.state.legal(seat))
            fxs = [core.handle(c.PlayIntent(SESSIONS[seat], i, seq=core.seq, intent=intent),
                               now)]
    return count, digest.hexdigest()


#: (game, matches, protocol) -> (snapshots, hash), recorded from main at 96e6641
RECORDED = {
    ("datastructures", 6, 1):
        (6189, "8d9aead2491e14f592c8064fa5aeff490def2b1d1af4a7c60647c94bc62551cf"),
    ("datastructures", 6, 2):
        (6189, "0c08d2ae9b544f97e1c778dfd7b4c400730498c68c6e5a279cceff532065e09a"),
    ("war", 3, 1): (4011, "5bb8ff0c4c40d42f94347609640a3cb058654f28480442864d2e25fefe57b73d"),
    ("war", 3, 2): (4011, "415615ff4eef7d5654f54ae2e49e4ba38ad660c0a266e30a40021208dc42d61f"),
}


@pytest.mark.parametrize("key", sorted(RECORDED))
def test_snapshot_bytes_are_the_recorded_ones(key: tuple[str, int, int]) -> None:
    assert played_bytes(*key) == RECORDED[key]
