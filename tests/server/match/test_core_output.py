"""Who gets which message from the match core: snapshots per seat through the
projection, the public view for spectators, the requester first, bots' turns,
and the rollback rule when a journal commit fails."""

from __future__ import annotations

from server.match import commands as c
from server.match.effects import SPECTATORS
from tests.server.match.helpers import EVE, A, B, active, mover, play, types


def test_start_sends_each_seat_its_own_snapshot() -> None:
    from server.match.core import MatchCore
    from tests.server.match.helpers import RULES, record

    core = MatchCore.create(record(), RULES)
    core.seat(0, A, "alice")
    core.seat(1, B, "bob")
    fx = core.handle(c.Start(), 0.0)
    for seat, session in ((0, A), (1, B)):
        (snap,) = fx.to(session)
        assert snap["seat"] == seat and snap["view"] == core.state.view(seat)
        assert snap["legal"] == core.state.legal(seat) and snap["status"] == "active"
        assert snap["commitment"] == core.commitment and "reveal" not in snap
    assert fx.to(SPECTATORS) == []  # nobody watches


def test_the_requester_first_the_others_later_from_the_same_state() -> None:
    core = active()
    core.handle(c.Watch(EVE, 1), 0.0)
    seat = mover(core)
    me, other = (A, B) if seat == 0 else (B, A)
    fx = play(core)
    assert types(fx, me) == ["ok", "snapshot"] and fx.to(other) == []
    assert fx.later is not None
    rest = fx.later()
    assert types(rest, other) == ["snapshot"] and rest.to(me) == []
    (public,) = rest.to(SPECTATORS)
    assert public["seat"] is None and public["legal"] == []
    assert public["view"] == core.state.view(None)
    assert public["seq"] == rest.to(other)[0]["seq"] == fx.to(me)[1]["seq"] == 1
    assert rest.to(other)[0]["view"] == core.state.view(1 - seat)


def test_events_are_projected_per_recipient() -> None:
    core = active()
    core.handle(c.Watch(EVE, 1), 0.0)
    seat = mover(core)
    me = A if seat == 0 else B
    events_before = core.state.clone()
    intent = core.state.legal(seat)[0]
    raw = events_before.apply(seat, intent)
    fx = core.handle(c.PlayIntent(me, 1, seq=0, intent=intent), 1.0)
    assert fx.to(me)[1]["events"] == events_before.project_events(raw, seat)
    assert fx.later().to(SPECTATORS)[0]["events"] == events_before.project_events(raw, None)


def test_nothing_is_sent_to_a_disconnected_seat() -> None:
    core = active()
    core.handle(c.Detach(B), 1.0)
    fx = core.handle(c.Attach(A), 2.0)
    assert fx.to(B) == []
    fx = core.handle(c.Resign(A, 1), 2.0)
    assert fx.to(B) == [] and fx.later is not None and fx.later().to(B) == []


def test_players_show_who_is_connected_and_who_is_a_bot() -> None:
    from server.match.core import MatchCore
    from tests.server.match.helpers import RULES, record

    core = MatchCore.create(record(), RULES)
    core.seat(0, A, "alice")
    core.seat_bot(1, "greedy")
    fx = core.handle(c.Start(), 0.0)
    assert fx.to(A)[0]["players"] == [
        {"seat": 0, "name": "alice", "connected": True, "bot": None},
        {"seat": 1, "name": "greedy (bot)", "connected": True, "bot": "greedy"}]
    (turn,) = fx.bots
    assert (turn.seat, turn.strategy, turn.seq) == (1, "greedy", 0)
    assert turn.view == core.state.view(1)


def test_a_bot_intent_on_an_old_seq_is_dropped_a_current_one_journals() -> None:
    from server.match.core import MatchCore
    from tests.server.match.helpers import RULES, record

    core = MatchCore.create(record("war"), RULES)
    core.seat(0, A, "alice")
    core.seat_bot(1, "random")
    core.handle(c.Start(), 0.0)
    assert core.handle(c.BotIntent(1, 5, {"type": "flip"}), 1.0).writes == []
    fx = core.handle(c.BotIntent(1, 0, {"type": "flip"}), 1.0)
    assert [(r.seat, r.by) for r in fx.journal] == [(1, "bot")]
    assert types(fx, A) == ["snapshot"]  # no ok: nobody asked
    assert core.handle(c.BotIntent(0, 1, {"type": "flip"}), 1.0).writes == []  # not a bot


def test_a_failed_commit_rolls_the_engine_back_to_the_stored_rows() -> None:
    core = active()
    digest = core.state.digest()
    fx = core.handle(c.Resign(A, 1), 1.0)
    assert core.status == "finished" and core.seq == 1 and fx.journal
    core.rollback([])  # the store holds no row: the resign never happened
    assert core.seq == 0 and core.state.digest() == digest
    assert core.status == "active" and core.linger_until is None
    fx = play(core)  # and the match goes on
    assert fx.journal[0].seq == 1


def test_rollback_keeps_the_rows_that_were_committed() -> None:
    core = active()
    first = play(core).journal
    after_first = core.state.digest()
    play(core)
    core.rollback(first)
    assert core.seq == 1 and core.state.digest() == after_first


def test_summary_lists_the_match() -> None:
    core = active()
    core.handle(c.Watch(EVE, 1), 0.0)
    summary = core.summary()
    assert summary["status"] == "active" and summary["spectators"] == 1
    assert summary["game"] == "datastructures" and summary["seq"] == 0



def test_a_public_view_is_built_once_per_change_and_is_each_seats_own_projection() -> None:
    from engine.registry import get_game

    assert get_game("war").public_view and not get_game("datastructures").public_view
    core = active("war")
    for _ in range(60):
        fx = play(core)
        snaps = [msg for _, msg in fx.messages if msg.TYPE == "snapshot"]
        if fx.later is not None:
            snaps += [msg for _, msg in fx.later().messages if msg.TYPE == "snapshot"]
        assert {s.seat for s in snaps} == {0, 1}
        for snap in snaps:
            assert snap.view == core.state.view(snap.seat)
            assert snap.events == snaps[0].events and snap.events


def test_the_players_of_a_snapshot_follow_every_change_between_intents() -> None:
    """The players are kept between intents (core.roster); a presence change, an
    account set from outside, and a rollback each show in the next snapshot, which
    always says what ``core.players()`` says then."""
    core = active("war")
    core.handle(c.Watch(EVE, 1), 0.0)

    def players_after_a_flip(now: float) -> list[dict]:
        seat = mover(core)
        fx = play(core, now, seat)
        rest = fx.later()
        players = rest.to(SPECTATORS)[0]["players"]
        assert players == core.players()
        return players

    assert [p["connected"] for p in players_after_a_flip(1.0)] == [True, True]
    core.handle(c.Detach(B), 2.0)
    assert [p["connected"] for p in players_after_a_flip(3.0)] == [True, False]
    core.set_account(0, 42, {"registered": True})
    assert players_after_a_flip(4.0)[0]["registered"] is True
    core.handle(c.Attach(B, 2), 5.0)
    before = players_after_a_flip(6.0)
    assert [p["connected"] for p in before] == [True, True]
    core.handle(c.Detach(A), 7.0)
    core.rollback(None)   # the detach's writes failed (it stays detached)
    assert [p["connected"] for p in players_after_a_flip(8.0)] == [False, True]
