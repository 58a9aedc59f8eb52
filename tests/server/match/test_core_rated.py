"""A rated match in the core (#14): who may join, the rater called once at the end
with the winner, aborted matches rating nobody, result.ratings. No trio, no store."""

from __future__ import annotations

from dataclasses import replace

from server.match import commands as c
from server.match.core import MatchCore
from server.match.effects import AppendJournal
from server.ratings import Rating, rate_match
from server.store import RatingChange
from tests.server.match.helpers import EVE, RULES, A, B, error, record


def _rated(calls: list[int | None]) -> MatchCore:
    core = MatchCore.create(replace(record("war", options={"cap": 5}), rated=True), RULES)

    def rater(winner: int | None) -> tuple[RatingChange, ...]:
        calls.append(winner)
        new = rate_match(Rating(), Rating(), winner)
        return tuple(RatingChange("m1", seat, 10 + seat, "war", 0.0, Rating(), new[seat])
                     for seat in (0, 1))

    core.rater = rater
    core.seat(0, A, "alice", account=10, player={"registered": True, "rating": 1500.0})
    core.handle(c.Start(), 0.0)
    return core


def test_only_another_account_may_join() -> None:
    core = _rated([])
    assert error(core.handle(c.Join(EVE, 1, name="eve"), 1.0), EVE)["code"] == "not_registered"
    twin = core.handle(c.Join(EVE, 2, name="alice", account=10), 1.0)
    assert error(twin, EVE)["code"] == "already_seated"
    core.handle(c.Join(B, 3, name="bob", account=11, player={"registered": True}), 1.0)
    assert core.status == "active" and core.summary()["rated"]
    assert [p.get("registered") for p in core.players()] == [True, True]


def _flip(core: MatchCore, session: str, now: float = 1.0) -> list:
    return core.handle(c.PlayIntent(session, 1, seq=core.seq, intent={"type": "flip"}), now).writes


def test_the_end_is_rated_once_with_the_winner() -> None:
    calls: list[int | None] = []
    core = _rated(calls)
    core.handle(c.Join(B, 3, name="bob", account=11), 1.0)
    writes = []
    for _ in range(200):
        if core.status == "finished":
            break
        for session in (A, B):
            if core.status != "finished":
                writes += _flip(core, session)
    assert core.status == "finished" and len(calls) == 1
    last = [w for w in writes if isinstance(w, AppendJournal)][-1]
    assert last.finished is not None and len(last.ratings) == 2
    assert calls == [last.finished[0]]
    result = core.snapshot(0, [])
    assert result.result is not None and result.result["rated"]
    assert [r["rating_after"] for r in result.result["ratings"]] == \
        [ch.after.rating for ch in last.ratings]


def test_an_aborted_match_rates_nobody() -> None:
    calls: list[int | None] = []
    core = _rated(calls)
    core.handle(c.Join(B, 3, name="bob", account=11), 1.0)
    _flip(core, A)
    fx = core.handle(c.Resign(B, 4), 2.0)  # bob never made an intent
    (row,) = [w for w in fx.writes if isinstance(w, AppendJournal)]
    assert row.finished is not None and row.ratings == () and calls == []
    assert core.snapshot(0, []).result == {"winner": 0, "reason": "resign", "rated": True,
                                           "ratings": []}
