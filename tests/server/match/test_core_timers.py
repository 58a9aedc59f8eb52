"""The match core's clocks: turn timers and their defaults, forfeit after repeated
timeouts, auto-flip, grace periods and abandonment, the linger after the end.
Time is whatever ``now`` the test passes; nothing waits."""

from __future__ import annotations

import math
from dataclasses import replace

from server.match import commands as c
from server.match.core import MatchCore, Rules
from server.match.effects import SPECTATORS, Membership, SaveSeat, SaveTimers, SaveWatcher
from tests.server.match.helpers import (
    EVE,
    RULES,
    A,
    B,
    active,
    error,
    mover,
    play,
    record,
    waiting,
)


def test_no_turn_timer_no_deadline() -> None:
    core = active(turn_timer=0)
    assert core.next_deadline() == math.inf
    assert play(core).to(A if mover(core) == 0 else B)[-1]["deadline"] is None


def test_the_turn_timer_is_armed_for_the_mover_and_shown_in_its_snapshot() -> None:
    core = active(turn_timer=20)
    seat = mover(core)
    assert core.seats[seat].turn_deadline == 20.0
    assert core.next_deadline() == 20.0
    fx = core.handle(c.Attach(A if seat == 0 else B), 5.0)
    snap = [m for m in fx.to(A if seat == 0 else B) if m["type"] == "snapshot"][0]
    assert snap["deadline"] == 15.0


def test_nothing_fires_before_the_deadline() -> None:
    core = active(turn_timer=20)
    fx = core.handle(c.Tick(), 19.9)
    assert fx.writes == [] and core.seq == 0 and fx.deadline == 20.0


def test_a_timed_out_turn_plays_the_default_intents() -> None:
    core = active(turn_timer=20)
    seat = mover(core)
    fx = core.handle(c.Tick(), 20.0)
    assert fx.journal and all(r.by == "timer" and r.kind == "intent" for r in fx.journal)
    assert fx.journal[0].intent == core_default(seat)
    assert core.seats[seat].timeouts == 1
    assert core.seq == len(fx.journal)


def core_default(seat: int) -> dict:
    """The default intent of ``seat`` in a fresh match (the same seed as ``active``)."""
    return active(turn_timer=20).state.default_intent(seat)


def test_repeated_timeouts_forfeit_and_an_own_intent_resets_the_count() -> None:
    rules = Rules(grace=10.0, timeout_forfeit=2, auto_flip_delay=0.5, abandon_bot="random",
                  finished_linger=30.0)
    core = active("war", turn_timer=5, rules=rules)
    now = 0.0
    core.seats[0].timeouts = 1
    play(core, now=1.0, seat=0)  # seat 0 acts itself: its count starts again
    assert core.seats[0].timeouts == 0
    for _ in range(2):  # seat 1 never acts
        now = core.seats[1].turn_deadline
        fx = core.handle(c.Tick(), now)
    assert core.status == "finished"
    row = fx.journal[-1]
    assert (row.kind, row.seat, row.reason, row.by) == ("forfeit", 1, "timeout", "timer")
    assert core.state.outcome().winner == 0


def test_auto_flip_plays_after_the_delay_and_stops_when_turned_off() -> None:
    core = active("war")
    core.handle(c.SetAutoFlip(A, 1, on=True), 2.0)
    assert core.seats[0].auto_at == 2.5 and core.next_deadline() == 2.5
    fx = core.handle(c.Tick(), 2.5)
    assert [(r.seat, r.by, r.intent) for r in fx.journal] == [(0, "auto", {"type": "flip"})]
    core.handle(c.SetAutoFlip(A, 2, on=False), 3.0)
    assert core.seats[0].auto_at is None


def test_detach_starts_the_grace_period_and_tells_the_others() -> None:
    core = active()
    core.handle(c.Watch(EVE, 1), 1.0)
    fx = core.handle(c.Detach(B), 3.0)
    assert core.seats[1].grace_deadline == 13.0 and fx.deadline == 13.0
    presence = {"type": "presence", "match": "m1", "seat": 1, "name": "bob",
                "connected": False, "grace": 10.0}
    assert fx.to(A) == fx.to(SPECTATORS) == [presence]
    assert fx.to(B) == []  # never to the seat's own session


def test_a_return_within_grace_ends_it_and_a_dead_return_does_not() -> None:
    core = active()
    core.handle(c.Detach(B), 3.0)
    fx = core.handle(c.Attach(B, live=False), 4.0)  # queued before the drop
    assert fx.messages == [] and core.seats[1].grace_deadline == 13.0
    fx = core.handle(c.Attach(B), 5.0)
    assert core.seats[1].grace_deadline is None
    assert [m["type"] for m in fx.to(B)] == ["snapshot"] and fx.to(B)[0]["seat"] == 1
    assert fx.to(A)[0]["connected"] is True and fx.to(A)[0]["grace"] is None


def test_grace_runs_out_and_the_seat_forfeits() -> None:
    core = active()
    core.handle(c.Detach(B), 3.0)
    fx = core.handle(c.Tick(), 13.0)
    row = fx.journal[0]
    assert (row.kind, row.seat, row.reason, row.by) == ("forfeit", 1, "abandoned", "timer")
    assert core.status == "finished" and core.state.outcome().winner == 0


def test_grace_runs_out_and_a_bot_takes_over() -> None:
    core = active(abandon="bot")
    core.handle(c.Detach(B), 3.0)
    fx = core.handle(c.Tick(), 13.0)
    seat = core.seats[1]
    assert (seat.session, seat.bot, seat.name) == (None, "random", "bob (random bot)")
    # bob's session watches from now on: its resume is sent the match, bot and all
    assert fx.members == [Membership(B, 1, False), Membership(B, None, True)]
    assert [w for w in fx.writes if not isinstance(w, SaveTimers)] == [
        SaveWatcher(B, True), SaveSeat(seat.record())]
    assert B in core.spectators
    assert fx.to(A)[0]["type"] == "presence" and fx.to(A)[0]["connected"] is True
    turns = [t for t in fx.bots if t.seat == 1]
    assert turns and turns[0].strategy == "random" and turns[0].pace == 0.0
    assert turns[0].legal == core.state.legal(1)


def test_a_waiting_seat_whose_grace_runs_out_is_freed() -> None:
    core = waiting()
    core.handle(c.Detach(A), 1.0)
    fx = core.handle(c.Tick(), 11.0)
    assert core.seats[0].session is None and core.status == "finished" and fx.writes


def test_restore_brings_seats_back_absent_and_start_arms_their_grace() -> None:
    from server.match.core import MatchCore

    core = active()
    rows = play(core).journal + play(core).journal
    rec = core.record()
    again = MatchCore.restore(rec, rows, RULES)
    assert again.seq == 2 and again.state.digest() == core.state.digest()
    assert again.connected == set()
    fx = again.handle(c.Start(), 100.0)
    assert again.seats[0].grace_deadline == again.seats[1].grace_deadline == 110.0
    assert fx.messages == []  # nobody is connected to tell


def test_a_finished_match_lingers_then_closes() -> None:
    core = active()
    core.handle(c.Resign(A, 1), 5.0)
    assert not core.handle(c.Tick(), 34.9).close
    assert core.handle(c.Tick(), 35.0).close
    assert error(core.handle(c.Resign(B, 2), 36.0), B)["code"] == "match_finished"


def test_a_match_with_no_human_left_ends() -> None:
    """abandon "bot": the first seat whose grace runs out passes to a bot; when the
    last human's runs out, nobody is left, so that seat forfeits (``abandoned``)
    instead: no match of bots alone plays on."""
    core = active(abandon="bot")
    core.handle(c.Detach(A), 1.0)
    fx = core.handle(c.Tick(), 11.0)
    assert core.seats[0].bot == "random" and core.status == "active"
    core.handle(c.Detach(B), 12.0)
    fx = core.handle(c.Tick(), 22.0)
    assert core.status == "finished" and core.seats[1].bot is None
    row = fx.journal[-1]
    assert (row.kind, row.seat, row.reason, row.by) == ("forfeit", 1, "abandoned", "timer")
    outcome = core.state.outcome()
    assert outcome is not None and (outcome.winner, outcome.reason) == (0, "abandoned")
    assert fx.stop_bots


def test_a_match_against_a_server_bot_ends_when_its_human_leaves() -> None:
    core = MatchCore.create(record(abandon="bot"), RULES)
    core.seat(0, A, "alice")
    core.seat_bot(1, "random")
    core.handle(c.Start(), 0.0)
    core.handle(c.Detach(A), 1.0)
    fx = core.handle(c.Tick(), 11.0)
    assert core.status == "finished" and fx.journal[-1].reason == "abandoned"


def test_a_stored_match_of_bots_alone_ends_when_restored() -> None:
    core = MatchCore.create(record(), RULES)
    core.seat_bot(0, "random")
    core.seat_bot(1, "random")
    fx = core.handle(c.Start(), 0.0)
    assert core.status == "finished" and fx.journal[-1].reason == "abandoned"


def test_a_waiting_match_nobody_joins_expires() -> None:
    core = MatchCore.create(record(), replace(RULES, waiting_ttl=100.0))
    core.seat(0, A, "alice")
    core.handle(c.Start(), 0.0)
    core.handle(c.Watch(EVE, 1), 1.0)
    assert core.next_deadline() == 100.0
    assert core.handle(c.Tick(), 99.0).writes == []
    fx = core.handle(c.Tick(), 100.0)
    for who in (A, EVE):
        notice = error(fx, who)
        assert notice["code"] == "match_expired" and notice["match"] == "m1"
        assert "id" not in notice
    assert core.status == "finished" and not any(s.taken for s in core.seats)
    assert Membership(A, 0, False) in fx.members and Membership(EVE, None, False) in fx.members
    assert any(type(w).__name__ == "DeleteMatch" for w in fx.writes)
    assert core.handle(c.Tick(), 100.0).close


def test_a_match_that_started_does_not_expire() -> None:
    core = MatchCore.create(record(), replace(RULES, waiting_ttl=100.0))
    core.seat(0, A, "alice")
    core.handle(c.Start(), 0.0)
    core.handle(c.Join(B, 1, name="bob"), 50.0)
    core.handle(c.Tick(), 100.0)
    assert core.status == "active"
