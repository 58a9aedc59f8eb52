"""``SeatState.copy`` (the rollback's copy of every seat) copies every field."""

from __future__ import annotations

import dataclasses

from server.match.core import SeatState


def test_copy_copies_every_field() -> None:
    values = {f.name: f"value {i}" for i, f in enumerate(dataclasses.fields(SeatState))}
    seat = SeatState(**values)
    copied = seat.copy()
    assert copied == seat and copied is not seat
    assert dataclasses.asdict(copied) == values   # a field added later must be copied too
    copied.timeouts = 99
    assert seat.timeouts == "value 6"
