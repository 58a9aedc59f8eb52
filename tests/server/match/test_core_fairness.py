"""The match core's seq rule, its deal from the client seeds, and what a resumed seat
is told (#12), without trio, sockets or a store."""

from __future__ import annotations

from engine.rng import HmacStream
from server.match import commands as c
from server.match.core import MatchCore
from server.match.effects import SPECTATORS
from tests.server.match.helpers import EVE, RULES, A, B, active, error, record, waiting

FLIP = {"type": "flip"}


def _snapshots(fx, session: str) -> list[dict]:
    return [m for m in fx.to(session) if m["type"] == "snapshot"]


def test_both_war_seats_act_on_the_same_seq_and_both_count() -> None:
    core = active("war")
    fx = core.handle(c.PlayIntent(A, 1, seq=0, intent=FLIP), 1.0)
    assert [m["type"] for m in fx.to(A)] == ["ok", "snapshot"]
    fx = core.handle(c.PlayIntent(B, 2, seq=0, intent=FLIP), 1.0)
    assert fx.to(B)[0]["type"] == "ok" and core.seq == 2 and core.state.battles == 1
    # alice's list changed at 1 ([]) and 2 ([flip] again): seq 1 is outdated for her
    assert error(core.handle(c.PlayIntent(A, 3, seq=1, intent=FLIP), 1.0), A)["code"] == "stale"
    # bob's list has been [flip] since 0, so seq 1 still counts for him
    assert core.handle(c.PlayIntent(B, 4, seq=1, intent=FLIP), 1.0).to(B)[0]["type"] == "ok"


def test_a_server_bot_on_an_older_war_snapshot_still_flips() -> None:
    core = MatchCore.create(record("war"), RULES)
    core.seat(0, A, "alice", client_seed="aa")
    core.seat_bot(1, "random", client_seed="bb")
    core.handle(c.Start(), 0.0)
    core.handle(c.PlayIntent(A, 1, seq=0, intent=FLIP), 1.0)
    fx = core.handle(c.BotIntent(1, 0, FLIP), 1.0)
    assert core.seq == 2 and fx.journal and fx.journal[0].by == "bot"


def test_a_datastructures_seat_acts_only_on_the_current_seq() -> None:
    core = active()
    seat = core.state.to_move()[0]
    who = (A, B)[seat]
    core.handle(c.PlayIntent(who, 1, seq=0, intent={"type": "end_phase"}), 1.0)
    legal = core.state.legal(seat)
    fx = core.handle(c.PlayIntent(who, 2, seq=0, intent=legal[0]), 1.0)
    assert error(fx, who)["code"] == "stale" and core.seq == 1


def test_the_deal_is_made_at_the_start_from_both_client_seeds() -> None:
    core = MatchCore.create(record("datastructures", seed=99), RULES)
    core.seat(0, A, "alice", client_seed="c0ffee")
    waiting_view = core.snapshot(0, []).view
    assert set(waiting_view["hand"]) == {"back"} and set(waiting_view["queue"]) == {"back"}
    core.handle(c.Join(B, 1, name="bob", client_seed="1234"), 1.0)
    assert core.status == "active" and core.client_seeds() == ["c0ffee", "1234"]
    expected = core.game.new_state(99, core.options,
                                   rng=HmacStream.for_match(99, ["c0ffee", "1234"]))
    assert core.state.digest() == expected.digest()
    snap = core.snapshot(0, [])
    assert snap.client_seeds == ["c0ffee", "1234"] and snap.stream == "hmac-sha256-ctr/1"
    assert "back" not in snap.view["hand"]


def test_a_resumed_seat_gets_what_it_missed_and_a_restored_one_a_cut() -> None:
    core = active("war")
    core.handle(c.Detach(B), 1.0)
    core.handle(c.PlayIntent(A, 1, seq=0, intent=FLIP), 2.0)
    fx = core.handle(c.Attach(B, None), 3.0)
    (snap,) = _snapshots(fx, B)
    assert snap["events"] == [{"type": "flip", "seat": 0, "up": snap["view"]["up"][0]}]
    assert "events_cut" not in snap
    # after a restart the server does not know what the seat saw: it says so
    fresh = active("war")
    rows = fresh.handle(c.PlayIntent(A, 1, seq=0, intent=FLIP), 1.0).journal
    restored = MatchCore.restore(fresh.record(), rows, RULES)
    restored.handle(c.Start(), 5.0)
    (snap,) = _snapshots(restored.handle(c.Attach(B, None), 6.0), B)
    assert snap["events"] == [] and snap["events_cut"] is True


def test_spectators_of_a_removed_waiting_match_are_told() -> None:
    core = waiting("war")
    core.handle(c.Watch(EVE, 1), 1.0)
    fx = core.handle(c.Leave(A, 2), 2.0)
    (snap,) = [m for m in fx.to(SPECTATORS) if m["type"] == "snapshot"]
    assert snap["status"] == "finished"
    assert snap["result"] == {"winner": None, "reason": "cancelled"}


def test_a_rollback_forgets_the_undone_changes_of_the_seq_rule() -> None:
    core = active("war")
    kept = core.handle(c.PlayIntent(A, 1, seq=0, intent=FLIP), 1.0).journal
    core.handle(c.PlayIntent(B, 2, seq=0, intent=FLIP), 1.0)   # its commit "fails"
    core.rollback(kept)
    assert core.seq == 1
    fx = core.handle(c.PlayIntent(B, 3, seq=1, intent=FLIP), 2.0)
    assert fx.to(B)[0]["type"] == "ok" and core.seq == 2
