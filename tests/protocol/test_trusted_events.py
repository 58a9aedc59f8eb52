"""``protocol.events.trusted``: server-built events without the schema walk, the same
event as the constructor builds; checked like the constructor under the tests' flag."""

from __future__ import annotations

import dataclasses

import pytest

from protocol import events as ev
from protocol.codec import pack
from protocol.connection import Connection
from protocol.errors import LocalProtocolError
from protocol.framing import encode_frame
from server.config import ServerConfig

SERVER_LIMITS_FOR_WELCOME = ServerConfig().limits()


def test_trusted_builds_the_constructors_event(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ev, "CHECK_TRUSTED", False)
    fields = {"match": "m1", "seq": 3, "id": 9}
    built = ev.trusted(ev.Ok, **fields)
    assert built == ev.Ok(**fields)
    assert built.to_wire() == {"type": "ok", "match": "m1", "seq": 3, "id": 9}
    assert isinstance(built, ev.Ok) and built.seat is None


def test_trusted_skips_the_walk_only_when_not_checking(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ev, "CHECK_TRUSTED", False)
    assert ev.trusted(ev.Ok, seat="zero").seat == "zero"   # not walked: the server's word
    monkeypatch.setattr(ev, "CHECK_TRUSTED", True)
    with pytest.raises(LocalProtocolError) as info:
        ev.trusted(ev.Ok, seat="zero")
    assert info.value.field == "seat"


def test_trusted_refuses_unknown_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ev, "CHECK_TRUSTED", False)
    with pytest.raises(TypeError, match="secret_deck"):
        ev.trusted(ev.Snapshot, secret_deck=["AS"])


def test_the_test_suite_checks_trusted_events() -> None:
    assert ev.CHECK_TRUSTED   # tests/conftest.py: every server-built event is walked here


def _snapshot_fields() -> dict[str, object]:
    return {"match": "m1", "game": "war", "seq": 4, "seat": 0,
            "view": {"game": "war", "seat": 0}, "legal": [{"type": "flip"}],
            "status": "active", "events": [], "players": [], "options": {"cap": 10},
            "commitment": "ab" * 32, "deadline": None, "auto_flip": False,
            "timers": [None, None], "timeouts": [0, 0], "timeout_limit": 3}


def test_a_wired_event_reads_and_sends_as_the_constructors(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ev, "CHECK_TRUSTED", False)
    built = ev.Snapshot(**_snapshot_fields())   # type: ignore[arg-type]
    wire = built.to_wire()
    got = ev.trusted_wire(ev.Snapshot, dict(wire))
    assert isinstance(got, ev.Snapshot) and type(got) is not ev.Snapshot
    assert got == built and built == got
    assert got.seq == 4 and got.deadline is None and got.result is None
    assert list(got.to_wire().items()) == list(wire.items())
    assert got.wire_map() is got.wire_map() and got.to_wire() is not got.wire_map()
    with pytest.raises(AttributeError):
        got.no_such_field  # noqa: B018
    replaced = dataclasses.replace(got, seq=5)
    assert replaced.seq == 5 and replaced.to_wire() == {**wire, "seq": 5}


def test_a_wired_event_frames_the_bytes_of_the_constructors() -> None:
    conns = []
    for _ in range(2):
        conn = Connection("server")
        conn.receive_data(encode_frame(pack({"type": "hello", "protocol": [1],
                                             "name": "x", "client": "t"})))
        conn.next_event()
        conn.send(ev.Welcome(protocol=1, server="t", session="s", token="t" * 22, name="x",
                             resumed=False, limits=SERVER_LIMITS_FOR_WELCOME))
        conns.append(conn)
    built = ev.Snapshot(**_snapshot_fields())   # type: ignore[arg-type]
    assert conns[0].send(built) == conns[1].send(ev.trusted_wire(ev.Snapshot, built.to_wire()))
    assert conns[0].send(ev.Ok(match="m1", seq=4, id=7)) == conns[1].send(
        ev.trusted(ev.Ok, match="m1", id=7, seq=4))


def test_the_tests_check_a_wired_maps_order() -> None:
    wire = ev.Snapshot(**_snapshot_fields()).to_wire()   # type: ignore[arg-type]
    wire["seq"] = wire.pop("seq")   # same fields, another order: not what to_wire sends
    with pytest.raises(AssertionError, match="to_wire"):
        ev.trusted_wire(ev.Snapshot, wire)
