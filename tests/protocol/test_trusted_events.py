"""``protocol.events.trusted``: server-built events without the schema walk, the same
event as the constructor builds; checked like the constructor under the tests' flag."""

from __future__ import annotations

import pytest

from protocol import events as ev
from protocol.errors import LocalProtocolError


def test_trusted_builds_the_constructors_event(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ev, "CHECK_TRUSTED", False)
    fields = {"match": "m1", "seq": 3, "id": 9}
    built = ev.trusted(ev.Ok, **fields)
    assert built == ev.Ok(**fields)
    assert built.to_wire() == {"type": "ok", "match": "m1", "seq": 3, "id": 9}
    assert type(built) is ev.Ok and built.seat is None


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
