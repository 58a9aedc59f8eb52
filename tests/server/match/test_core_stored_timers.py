"""The core stores running timers with the journal row of the command that changed
them (or on their own when no row was made), and a restored core resumes them."""

from __future__ import annotations

from dataclasses import replace

from server.match import commands as c
from server.match.core import MatchCore, stored_timers
from server.match.effects import AppendJournal, SaveTimers
from server.store import SeatTimers
from tests.server.match.helpers import RULES, B, active, mover, play


def test_timers_ride_on_the_journal_row_or_are_saved_alone() -> None:
    core = active(turn_timer=10)
    seat = mover(core)
    fx = play(core, now=1.0)
    rows = [w for w in fx.writes if isinstance(w, AppendJournal)]
    assert rows and rows[-1].timers is not None
    assert not any(isinstance(w, SaveTimers) for w in fx.writes)
    left = {i: turn for i, turn, _, _ in rows[-1].timers}
    assert left[seat] == 10.0  # restarted by its own intent
    fx = core.handle(c.Detach(B), 2.0)
    assert [type(w) for w in fx.writes] == [SaveTimers]
    saved = fx.writes[0]
    assert saved.seq == core.seq and dict((i, g) for i, _, g, _ in saved.left)[1] == 10.0
    assert core.handle(c.Tick(), 2.5).writes == []  # nothing changed: nothing stored


def test_the_newest_stored_timers_win_and_resume_on_restore() -> None:
    core = active(turn_timer=10)
    entries = list(play(core, now=1.0).journal)
    m = mover(core)
    rec = core.record()
    row = [SeatTimers(m, 1000.0 + 5, None, 1), SeatTimers(1 - m, None, None, 0)]
    entries[-1] = replace(entries[-1], timers=tuple(row))
    assert stored_timers(rec, entries) == tuple(row)
    rec.timers, rec.timers_seq = [SeatTimers(m, 1000.0 + 3, 1000.0 + 7, 1)], len(entries)
    assert stored_timers(rec, entries) == tuple(rec.timers)   # stored after the row
    rec.timers_seq = len(entries) - 1
    assert stored_timers(rec, entries) == tuple(row)          # the row is newer

    rec.status = "active"
    restored = MatchCore.restore(rec, entries, RULES, wall=1000.0)
    restored.handle(c.Start(), 50.0)
    assert restored.state.to_move() == (m,)
    assert restored.seats[m].turn_deadline == 55.0  # 5 s were left at wall 1000
    assert restored.seats[m].timeouts == 1
    # no grace period was stored: both (away after a restart) get a fresh one
    assert all(s.grace_deadline == 50.0 + RULES.grace for s in restored.seats)
