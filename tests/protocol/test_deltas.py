"""Protocol 2's snapshot deltas: what goes over the wire, and what each side sees."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from engine.registry import get_game
from protocol.codec import pack
from protocol.connection import NEED_DATA, Connection
from protocol.deltas import REMEMBERED, SnapshotDeltas
from protocol.errors import ProtocolError
from protocol.events import Hello, Snapshot, Welcome

from .helpers import LIMITS, PLAYERS


def open_pair(client_versions: list[int]) -> tuple[Connection, Connection]:
    """A server and a client Connection after the handshake (the server speaks 1 and 2)."""
    server, client = Connection("server"), Connection("client")
    server.receive_data(client.send(Hello(protocol=client_versions, name="alice",
                                          client="t/1")))
    hello = server.next_event()
    version = max(set(hello.protocol) & {1, 2})
    client.receive_data(server.send(Welcome(
        protocol=version, server="cardserver/t", session="s", token="t", name="alice",
        resumed=False, limits=LIMITS)))
    client.next_event()
    return server, client


def war_snapshots(count: int, seed: int = 7, cap: int = 40) -> list[dict[str, Any]]:
    """``count`` snapshot maps, both seats' after each flip of War games played one
    after another (each game's last two finished), as the match core builds them."""
    game = get_game("war")
    out: list[dict[str, Any]] = []
    match = 0
    while len(out) < count:
        match += 1
        state, seq = game.new_state(seed + match, {"cap": cap}), 0
        while state.outcome() is None and len(out) < count:
            events = state.apply(min(state.to_move()), {"type": "flip"})
            seq += 1
            outcome = state.outcome()
            for seat in (0, 1):
                msg = {"type": "snapshot", "match": f"m{match}", "game": "war", "seq": seq,
                       "seat": seat, "view": state.view(seat), "legal": state.legal(seat),
                       "status": "active" if outcome is None else "finished",
                       "events": state.project_events(events, seat), "players": PLAYERS,
                       "options": {"cap": cap}, "commitment": "ab" * 32,
                       "deadline": None, "auto_flip": False}
                if outcome is not None:
                    msg["result"] = outcome.to_dict()
                    msg["reveal"] = {"seed": "00", "salt": "11"}
                out.append(msg)
    return out[:count]


def wire_maps(server: Connection, client: Connection, maps: list[dict[str, Any]]
              ) -> tuple[list[int], list[dict[str, Any]]]:
    """Send every map as a Snapshot; the frame sizes, and the maps the client rebuilt."""
    sizes, got = [], []
    for msg in maps:
        data = server.send(Snapshot.from_wire(msg))
        sizes.append(len(data))
        client.receive_data(data)
        got.append(client.next_message())
    assert client.next_message() is NEED_DATA
    return sizes, got


@pytest.mark.parametrize("versions", [[1], [1, 2]])
def test_every_client_rebuilds_exactly_the_snapshots_the_server_built(versions) -> None:
    maps = war_snapshots(400)
    server, client = open_pair(versions)
    sizes, got = wire_maps(server, client, copy.deepcopy(maps))
    assert got == maps


def test_protocol_2_sends_less_and_a_1_0_client_gets_full_snapshots() -> None:
    maps = war_snapshots(300)
    v1 = wire_maps(*open_pair([1]), maps)[0]
    v2 = wire_maps(*open_pair([1, 2]), maps)[0]
    assert v1 == [len(pack(m)) + 4 for m in maps]  # protocol 1: every snapshot in full
    assert sum(v2) < 0.6 * sum(v1)


def test_the_first_snapshot_of_a_pair_and_one_after_finished_are_full() -> None:
    deltas = SnapshotDeltas()
    first = war_snapshots(4)
    wire, sent = deltas.encode(first[0])
    assert wire is first[0]
    sent()
    wire, sent = deltas.encode(first[2])     # seat 0 again: a delta
    assert wire["base"] == first[0]["seq"] and "players" not in wire
    sent()
    done = {**first[2], "status": "finished", "seq": first[2]["seq"] + 1}
    wire, sent = deltas.encode(done)
    sent()
    assert len(deltas) == 0
    wire, _ = deltas.encode({**done, "seq": done["seq"] + 1})
    assert "base" not in wire


def test_a_snapshot_not_sent_is_no_base_and_a_vanished_field_goes_full() -> None:
    deltas = SnapshotDeltas()
    a, _, b, _, c = war_snapshots(5)[:5]
    deltas.encode(a)[1]()
    deltas.encode(b)                          # framed but never sent: not remembered
    wire, sent = deltas.encode(c)
    assert wire["base"] == a["seq"]
    sent()
    fewer = {k: v for k, v in c.items() if k != "auto_flip"}
    assert "base" not in deltas.encode(fewer)[0]
    smaller_view = {**c, "view": {k: v for k, v in c["view"].items() if k != "last"}}
    assert "base" not in deltas.encode(smaller_view)[0]


def test_both_ends_forget_the_same_pairs() -> None:
    server, client = SnapshotDeltas(remembered=3), SnapshotDeltas(remembered=3)
    base = war_snapshots(1)[0]
    for round_ in range(3):
        for m in range(6):
            msg = {**base, "match": f"m{m}", "seq": round_ + 1}
            wire, sent = server.encode(msg)
            sent()
            assert client.merge(copy.deepcopy(wire)) == msg
    assert len(server) == len(client) == 3
    assert REMEMBERED >= 64


def test_a_delta_against_a_snapshot_the_client_lacks_is_bad_message() -> None:
    server, client = open_pair([1, 2])
    maps = war_snapshots(3)
    server.send(Snapshot.from_wire(maps[0]))          # lost: the client never reads it
    data = server.send(Snapshot.from_wire(maps[2]))
    client.receive_data(data)
    with pytest.raises(ProtocolError) as info:
        client.next_message()
    assert (info.value.code, info.value.field) == ("bad_message", "base")
