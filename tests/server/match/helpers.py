"""Build a :class:`MatchCore` and drive it with commands, at chosen times."""

from __future__ import annotations

from typing import Any

from engine.registry import get_game
from server.match import commands as c
from server.match.core import MatchCore, Rules
from server.match.effects import Effects
from server.store import MatchRecord

RULES = Rules(grace=10.0, timeout_forfeit=3, auto_flip_delay=0.5, abandon_bot="random",
              finished_linger=30.0)
A, B, EVE = "sa", "sb", "se"


def record(game: str = "datastructures", *, turn_timer: int = 0, abandon: str = "forfeit",
           options: dict[str, Any] | None = None, seed: int = 7) -> MatchRecord:
    """A waiting match's record."""
    return MatchRecord("m1", game, get_game(game).normalize_options(options), seed, "ab" * 16,
                       turn_timer, abandon, "waiting", 1.0)


def waiting(game: str = "datastructures", **kw: Any) -> MatchCore:
    """A started match with alice in seat 0 and seat 1 free."""
    core = MatchCore.create(record(game, **kw), RULES)
    core.seat(0, A, "alice")
    core.handle(c.Start(), 0.0)
    return core


def active(game: str = "datastructures", *, rules: Rules = RULES, **kw: Any) -> MatchCore:
    """A started match: alice in seat 0, bob in seat 1."""
    core = MatchCore.create(record(game, **kw), rules)
    core.seat(0, A, "alice")
    core.seat(1, B, "bob")
    core.handle(c.Start(), 0.0)
    return core


SESSIONS = {0: A, 1: B}


def mover(core: MatchCore) -> int:
    """A seat that has something to do."""
    return core.state.to_move()[0]


def play(core: MatchCore, now: float = 1.0, seat: int | None = None,
         rid: int | None = 1) -> Effects:
    """The mover (or ``seat``) plays its first legal intent at the current seq."""
    seat = mover(core) if seat is None else seat
    intent = core.state.legal(seat)[0]
    return core.handle(c.PlayIntent(SESSIONS[seat], rid, seq=core.seq, intent=intent), now)


def error(fx: Effects, session: str) -> dict[str, Any]:
    """The one error ``session`` got."""
    errors = [m for m in fx.to(session) if m["type"] == "error"]
    assert len(errors) == 1, fx.messages
    return errors[0]


def types(fx: Effects, session: str) -> list[str]:
    """The message types ``session`` got, in order."""
    return [m["type"] for m in fx.to(session)]
