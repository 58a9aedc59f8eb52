"""The match core's answers to requests: the order of the intent checks, seats,
spectators, leaving and resigning. No trio, no sockets, no store."""

from __future__ import annotations

import pytest

from server.match import commands as c
from server.match.effects import (
    SPECTATORS,
    AppendJournal,
    DeleteMatch,
    Membership,
    SaveSeat,
    SaveWatcher,
)
from tests.server.match.helpers import EVE, A, B, active, error, mover, play, types, waiting


def test_an_intent_from_a_stranger_is_not_in_match_before_anything_else() -> None:
    core = active()
    fx = core.handle(c.PlayIntent("stranger", 5, seq=99, intent={"type": "bogus"}), 1.0)
    err = error(fx, "stranger")
    assert (err["code"], err["id"], err["match"]) == ("not_in_match", 5, "m1")
    assert fx.writes == [] and core.seq == 0


def test_a_spectator_intent_is_not_seated() -> None:
    core = active()
    core.handle(c.Watch(EVE, 1), 1.0)
    fx = core.handle(c.PlayIntent(EVE, 2, seq=99, intent={}), 1.0)
    assert error(fx, EVE)["code"] == "not_seated"


def test_stale_comes_before_not_your_turn_and_illegal_intent() -> None:
    core = active()
    idle = 1 - mover(core)
    if core.state.to_move() == (0, 1):  # both may act: any seat, a wrong seq
        idle = 0
    session = A if idle == 0 else B
    fx = core.handle(c.PlayIntent(session, 1, seq=core.seq + 1, intent={"type": "bogus"}), 1.0)
    err = error(fx, session)
    assert (err["code"], err["field"]) == ("stale", "seq")


def test_not_your_turn_before_illegal_intent_while_waiting() -> None:
    core = waiting()
    fx = core.handle(c.PlayIntent(A, 1, seq=0, intent={"type": "bogus"}), 1.0)
    assert error(fx, A)["code"] == "not_your_turn"


def test_an_illegal_intent_is_refused_naming_the_intent_and_changes_nothing() -> None:
    core = active()
    seat = mover(core)
    digest = core.state.digest()
    fx = core.handle(c.PlayIntent(A if seat == 0 else B, 1, seq=0,
                                  intent={"type": "bogus"}), 1.0)
    err = error(fx, A if seat == 0 else B)
    assert err["field"] == "intent" and err["code"] in ("illegal_intent", "bad_message")
    assert core.state.digest() == digest and fx.writes == []


def test_a_good_intent_journals_one_row_then_answers_ok_with_the_new_seq() -> None:
    core = active()
    seat = mover(core)
    me = A if seat == 0 else B
    fx = play(core, rid=9)
    assert [type(w) for w in fx.writes] == [AppendJournal]
    row = fx.journal[0]
    assert (row.seq, row.kind, row.seat, row.by) == (1, "intent", seat, "seat")
    assert row.digest == core.state.journal_digest()
    assert fx.to(me)[0] == {"type": "ok", "match": "m1", "seq": 1, "id": 9}


def test_match_finished_comes_before_stale() -> None:
    core = active("war")
    core.handle(c.Resign(A, 1), 1.0)
    fx = core.handle(c.PlayIntent(B, 2, seq=99, intent={}), 1.0)
    assert error(fx, B)["code"] == "match_finished"
    for command in (c.Resign(B, 3), c.SetAutoFlip(B, 4, on=True)):
        assert error(core.handle(command, 1.0), B)["code"] == "match_finished"


def test_join_takes_the_free_seat_and_starts_the_match() -> None:
    core = waiting()
    fx = core.handle(c.Join(B, 3, name="bob"), 1.0)
    assert fx.to(B)[0] == {"type": "ok", "match": "m1", "seat": 1, "id": 3}
    assert core.status == "active"
    assert SaveSeat(core.seats[1].record(), "active") in fx.writes
    assert Membership(B, 1, True) in fx.members
    assert types(fx, A) == ["snapshot"] and types(fx, B) == ["ok", "snapshot"]


def test_join_refusals() -> None:
    core = waiting()
    assert error(core.handle(c.Join(A, 1, name="alice"), 1.0), A)["code"] == "already_seated"
    err = error(core.handle(c.Join(B, 1, name="bob", seat=5), 1.0), B)
    assert (err["code"], err["field"]) == ("bad_message", "seat")
    err = error(core.handle(c.Join(B, 1, name="bob", seat=0), 1.0), B)
    assert (err["code"], err["field"]) == ("seat_taken", "seat")
    core.handle(c.Join(B, 1, name="bob"), 1.0)
    err = error(core.handle(c.Join(EVE, 1, name="eve"), 1.0), EVE)
    assert err["code"] == "seat_taken" and "field" not in err
    core.handle(c.Resign(A, 2), 1.0)
    assert error(core.handle(c.Join("late", 1, name="x"), 1.0), "late")["code"] == \
        "match_finished"


def test_a_spectator_who_joins_stops_watching() -> None:
    core = waiting()
    core.handle(c.Watch(B, 1), 1.0)
    fx = core.handle(c.Join(B, 2, name="bob"), 1.0)
    assert B not in core.spectators
    assert fx.writes[0] == SaveWatcher(B, False)
    assert Membership(B, None, False) in fx.members


def test_watch_sends_the_public_snapshot_and_refuses_a_seat() -> None:
    core = active()
    fx = core.handle(c.Watch(EVE, 4), 1.0)
    ok, snap = fx.to(EVE)
    assert ok == {"type": "ok", "match": "m1", "id": 4}
    assert snap["seat"] is None and snap["legal"] == []
    assert snap["view"] == core.state.view(None)
    assert fx.writes == [SaveWatcher(EVE, True)]
    assert error(core.handle(c.Watch(A, 5), 1.0), A)["code"] == "already_seated"


@pytest.mark.parametrize("status", ["waiting", "active", "finished"])
def test_leave_in_each_status(status: str) -> None:
    core = waiting() if status == "waiting" else active()
    if status == "finished":
        core.handle(c.Resign(B, 1), 1.0)
    core.handle(c.Watch(EVE, 1), 1.0)
    fx = core.handle(c.Leave(EVE, 2), 1.0)  # a spectator just stops watching
    assert types(fx, EVE) == ["ok"] and EVE not in core.spectators
    fx = core.handle(c.Leave(A, 3), 1.0)
    assert fx.to(A)[0] == {"type": "ok", "match": "m1", "id": 3}
    if status == "waiting":  # the last seat leaves: the match is removed
        assert fx.writes == [DeleteMatch()] and core.status == "finished"
        assert core.handle(c.Tick(), 1.0).close
    elif status == "active":  # leaving an active match resigns it
        assert fx.journal[0].kind == "resign" and core.state.outcome().winner == 1
    else:
        assert fx.writes == [] and fx.members == [Membership(A, 0, False)]
    assert error(core.handle(c.Leave("stranger", 4), 1.0), "stranger")["code"] == "not_in_match"


def test_resign_in_a_waiting_match_frees_the_seat_and_removes_an_empty_match() -> None:
    core = waiting()
    core.handle(c.Watch(EVE, 1), 1.0)
    fx = core.handle(c.Resign(A, 2), 4.0)
    assert fx.to(A) == [{"type": "ok", "match": "m1", "id": 2}]
    assert core.seats[0].session is None and fx.members == [Membership(A, 0, False)]
    assert fx.writes == [DeleteMatch()] and fx.deadline == 4.0
    assert core.handle(c.Tick(), 4.0).close


def test_resign_an_active_match_ends_it_and_lingers() -> None:
    core = active()
    fx = core.handle(c.Resign(A, 1), 5.0)
    row = fx.journal[0]
    assert (row.kind, row.seat) == ("resign", 0)
    assert fx.writes[0].finished == (1, "resign")
    assert core.status == "finished" and fx.stop_bots
    assert fx.deadline == 5.0 + 30.0
    snap = fx.to(A)[1]
    assert snap["result"] == {"winner": 1, "reason": "resign"}
    assert set(snap["reveal"]) == {"seed", "salt"}


def test_chat_reaches_every_seat_and_the_spectators() -> None:
    core = active()
    core.handle(c.Watch(EVE, 1), 1.0)
    fx = core.handle(c.Chat(EVE, 7, name="eve", text="hi"), 1.0)
    line = {"type": "chat", "match": "m1", "seat": None, "name": "eve", "text": "hi",
            "role": "spectator"}
    assert fx.to(EVE) == [{"type": "ok", "id": 7}]
    assert fx.to(A) == fx.to(B) == fx.to(SPECTATORS) == [line]
    assert error(core.handle(c.Chat("x", 1, name="x", text="hi"), 1.0), "x")["code"] == \
        "not_in_match"


def test_auto_flip_is_a_capability_of_the_game() -> None:
    core = active()
    err = error(core.handle(c.SetAutoFlip(A, 1, on=True), 1.0), A)
    assert err["code"] == "not_supported"
    war = active("war")
    fx = war.handle(c.SetAutoFlip(A, 2, on=True), 1.0)
    assert types(fx, A) == ["ok", "snapshot"] and fx.to(A)[1]["auto_flip"] is True
    assert fx.writes == [SaveSeat(war.seats[0].record())]


def test_chat_lines_say_player_or_spectator_and_players_may_mute_spectators() -> None:
    core = active()
    core.handle(c.Watch(EVE, 1), 1.0)
    fx = core.handle(c.Chat(A, 2, name="bob", text="gg"), 1.0)  # a player named like another
    assert fx.to(B)[0]["role"] == "player" and fx.to(B)[0]["seat"] == 0
    assert core.handle(c.MuteSpectators(A, 3, on=True), 1.0).to(A) == [
        {"type": "ok", "match": "m1", "id": 3}]
    fx = core.handle(c.Chat(EVE, 4, name="alice", text="I am alice"), 1.0)
    assert fx.to(A) == [] and fx.to(B)[0]["role"] == "spectator"
    assert fx.to(SPECTATORS)[0]["role"] == "spectator"
    fx = core.handle(c.Chat(B, 5, name="bob", text="still here"), 1.0)
    assert [m["text"] for m in fx.to(A)] == ["still here"]  # players are never muted
    core.handle(c.MuteSpectators(A, 6, on=False), 1.0)
    assert core.handle(c.Chat(EVE, 7, name="eve", text="hi"), 1.0).to(A)[0]["text"] == "hi"
    assert error(core.handle(c.MuteSpectators(EVE, 8, on=True), 1.0), EVE)["code"] == \
        "not_seated"


def test_a_join_or_watch_from_a_connection_that_dropped_is_undone() -> None:
    """The join race, on the core: the joiner's connection dropped while its join
    (or watch) waited in the inbox (``live`` False, no resume since): the request
    is undone, the seat stays free and the match waiting. Never a seat taken but
    unusable."""
    core = waiting(game="war")
    fx = core.handle(c.Join(B, 4, name="bob", live=False), 1.0)
    assert fx.writes == [] and fx.members == [] and fx.messages == []
    assert not core.seats[1].taken and core.status == "waiting"
    fx = core.handle(c.Watch(EVE, 5, live=False), 1.0)
    assert fx.writes == [] and EVE not in core.spectators
    fx = core.handle(c.Join(B, 6, name="bob"), 2.0)  # it tries again once back
    assert core.seats[1].session == B and core.status == "active"


def test_a_join_that_runs_after_the_resume_is_seated_and_usable() -> None:
    core = waiting(game="war")
    fx = core.handle(c.Join(B, 4, name="bob", live=True), 1.0)
    assert Membership(B, 1, True) in fx.members
    snap = [m for m in fx.to(B) if m["type"] == "snapshot"][-1]
    assert snap["seat"] == 1 and snap["legal"]


def test_the_spectators_together_are_held_to_the_match_chat_rate() -> None:
    """However many spectators chat, the seats get at most the match's spectator
    rate of their lines (burst 20 here, then 10 a second); players are not held."""
    core = active()
    watchers = [f"w{i}" for i in range(30)]
    for w in watchers:
        core.handle(c.Watch(w, 1), 1.0)
    codes = [(core.handle(c.Chat(w, 2, name=w, text="hi"), 1.0).to(w)[0].get("code", "ok"))
             for w in watchers]
    assert codes.count("ok") == 20 and codes.count("chat_rate_limited") == 10
    assert types(core.handle(c.Chat(A, 3, name="alice", text="gg"), 1.0), A) == ["ok", "chat"]
    assert core.handle(c.Chat("w0", 4, name="w0", text="later"), 2.0).to("w0")[0]["type"] \
        == "ok"
