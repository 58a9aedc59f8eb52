"""``server.match.frozen.maker``: the positional maker of a frozen slotted dataclass
makes what its constructor makes, frozen, and refuses a class it cannot make."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.match import commands as cmd
from server.match.effects import journal_entry, wall_timers
from server.match.frozen import maker
from server.store import JournalEntry, SeatTimers

MAYBE = st.none() | st.floats(0, 1e9, allow_nan=False)


@given(seq=st.integers(1, 10**6), kind=st.sampled_from(["intent", "resign", "forfeit"]),
       seat=st.integers(0, 1), ts=st.floats(0, 2e9, allow_nan=False),
       digest=st.text(max_size=8), timers=st.none() | st.just((SeatTimers(0, 1.0),)))
def test_a_journal_row_as_its_constructor_makes_it(seq: int, kind: str, seat: int, ts: float,
                                                  digest: str,
                                                  timers: tuple[SeatTimers, ...] | None) -> None:
    made = journal_entry(seq, kind, seat, {"type": "flip"}, None, "seat", ts, digest, timers)
    built = JournalEntry(seq, kind, seat, {"type": "flip"}, None, "seat", ts, digest, timers)
    assert type(made) is JournalEntry
    assert made == built and repr(made) == repr(built)
    row = journal_entry(seq, kind, seat, None, "r", "seat", ts, digest, timers)
    assert hash(row) == hash(JournalEntry(seq, kind, seat, None, "r", "seat", ts, digest, timers))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.seq = 0  # type: ignore[misc]


@given(turn=MAYBE, grace=MAYBE, wall=st.floats(0, 2e9, allow_nan=False))
def test_wall_timers_as_before(turn: float | None, grace: float | None, wall: float) -> None:
    left = ((0, turn, grace, 2), (1, None, None, 0))
    assert wall_timers(left, wall) == (
        SeatTimers(0, None if turn is None else wall + turn,
                   None if grace is None else wall + grace, 2),
        SeatTimers(1, None, None, 0))


def test_a_command_as_its_constructor_makes_it() -> None:
    made = cmd.play_intent("s1", 7, True, 3, {"type": "flip"})
    assert made == cmd.PlayIntent("s1", 7, seq=3, intent={"type": "flip"})
    assert dataclasses.replace(made, live=False).live is False


def test_a_class_it_cannot_make_is_refused() -> None:
    @dataclasses.dataclass(slots=True)
    class Loose:
        a: int

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            assert self.a > 0

    for cls in (Loose, NoSlots, Checked):
        with pytest.raises(TypeError):
            maker(cls)
    with pytest.raises(TypeError):
        maker(JournalEntry)(1, "intent")   # every field is given
