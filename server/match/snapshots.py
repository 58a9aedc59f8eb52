"""Every ``snapshot`` a match sends, built through the engine's projection.

:class:`SnapshotParts` is what every recipient of one change shares (the
players, the clocks, the seeds, the public view of a game that has one, the
projected events ...), built once per change; :func:`build` adds what is the
seat's own (its view, its legal list, its own deadline and auto-flip pace) and
makes the event. A War move's two snapshots used to build every part twice
and walk the schema twice; now the shared parts are built once and the event is
made with :func:`protocol.events.trusted` (the test suite still walks it).

A game without a public view (Data Structures: a hand is private) gets each
seat's view and events from the engine per seat, as before; only the rest is
shared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from engine import cards
from engine.core import Event, Game, Outcome, State, View
from engine.fairness import seed_hex
from protocol import events as ev
from server.store import MatchRecord


class MatchCore(Protocol):
    """What the snapshots read of a match (:class:`server.match.core.MatchCore`)."""

    id: str
    game: Game
    seq: int
    status: str
    state: State
    seats: Sequence[Any]   # server.match.core.SeatState
    options: dict[str, Any]
    commitment: str
    rules: Any             # server.match.core.Rules
    rec: MatchRecord
    roster: Roster | None

    @property
    def now(self) -> float: ...

    def players(self) -> list[dict[str, Any]]: ...

    def client_seeds(self) -> list[str] | None: ...

    def result_of(self, outcome: Outcome) -> dict[str, Any]: ...

    def legal_of(self, seat: int) -> list[dict[str, Any]]: ...

    def flip_delay(self, seat: Any) -> float: ...


def face_down(value: Any) -> Any:
    """``value`` (a view) with every card face replaced by ``"back"``: nothing of a
    waiting match is dealt yet, so no card in its view is real."""
    if isinstance(value, str):
        try:
            cards.from_str(value)
        except ValueError:
            return value
        return cards.BACK
    if isinstance(value, dict):
        return {k: face_down(v) for k, v in value.items()}
    if isinstance(value, list):
        return [face_down(v) for v in value]
    return value


#: What :func:`parts` keeps in ``core.roster`` between changes: the status it was
#: built at, the players, and the ``stream`` and ``client_seeds`` fields (absent: None).
Roster = tuple[str, list[dict[str, Any]], str | None, list[str] | None]


@dataclass(slots=True)
class SnapshotParts:
    """The parts of a snapshot every recipient of one change shares.

    ``head`` are the shared fields up to ``commitment`` (the snapshot's own
    fields come between them: see :func:`build`), ``middle`` the shared optional
    fields from ``result`` to ``client_seeds`` and ``tail`` those from ``timers``
    to ``timeout_limit``, each without the ones at None (absent on the wire);
    ``public`` the spectator's view and projected events of a game with a public
    view (None: the engine projects per seat); ``events`` the raw events;
    ``views`` the views of a game without a public one, every seat's and the
    spectator's, made by the engine at once when the first is needed.
    """

    status: str
    head: tuple[str, str, int, list[dict[str, Any]], dict[str, Any], str]
    middle: dict[str, Any]
    tail: dict[str, Any]
    fast_forward: list[bool] | None
    events: list[Event]
    public: tuple[View, list[Event]] | None
    views: dict[int | None, View] | None = None


def parts(core: MatchCore, events: list[Event]) -> SnapshotParts:
    """The shared parts of the snapshots for ``events`` (the change just made)."""
    status = core.status
    now = core.now
    seats = core.seats
    roster = core.roster
    if roster is None or roster[0] != status:
        roster = core.roster = (status, core.players(),
                                None if status == "waiting" else core.rec.stream,
                                core.client_seeds())
    _, players, stream, seeds = roster
    middle: dict[str, Any] = {}
    if status == "finished":
        outcome = core.state.outcome()
        # a waiting match removed when its last seat left was never played
        middle["result"] = ({"winner": None, "reason": "cancelled"} if outcome is None
                            else core.result_of(outcome))
        middle["reveal"] = {"seed": seed_hex(core.rec.seed), "salt": core.rec.salt}
    if stream is not None:
        middle["stream"] = stream
    if seeds is not None:
        middle["client_seeds"] = seeds
    tail = {
        "timers": [None if s.turn_deadline is None else max(0.0, s.turn_deadline - now)
                   for s in seats],
        "timeouts": [s.timeouts for s in seats],
        "timeout_limit": core.rules.timeout_forfeit,
    }
    public = None
    if core.game.public_view:
        state = core.state
        public = (state.view(None), state.project_events(events, None) if events else [])
    return SnapshotParts(
        status, (core.id, core.game.name, core.seq, players, core.options,
                 core.commitment),
        middle, tail, [s.fast_forward for s in seats] if core.game.auto_play else None,
        events, public)


def build(core: MatchCore, seat: int | None, shared: SnapshotParts,
          cut: bool | None = None) -> ev.Snapshot:
    """The ``snapshot`` for ``seat`` (None: a spectator) from ``shared``, the parts of
    the current change. ``cut``: older events this seat missed were left out.

    The event is made from its wire map (:func:`protocol.events.trusted_wire`), built
    here in the snapshot's field order (the order ``to_wire`` has; the tests' check
    compares the two)."""
    if shared.public is not None:
        view = dict(shared.public[0])
        view["seat"] = seat
        projected = shared.public[1]
    else:
        state = core.state
        views = shared.views
        if views is None:   # every recipient's at once: the engine shares the public parts
            seats = (*range(len(core.seats)), None)
            views = shared.views = dict(zip(seats, state.views(seats), strict=True))
        view = views[seat]
        projected = state.project_events(shared.events, seat) if shared.events else []
    status = shared.status
    if status == "waiting":
        view = face_down(view)
    if seat is None:
        legal: list[dict[str, Any]] = []
        deadline = _earliest(core)
        auto_flip = False
        flip_delay = None
    else:
        own = core.seats[seat]
        legal = core.legal_of(seat) if status == "active" else []
        deadline = (None if own.turn_deadline is None
                    else max(0.0, own.turn_deadline - core.now))
        auto_flip = own.auto_flip
        flip_delay = core.flip_delay(own)
    match, game, seq, players, options, commitment = shared.head
    wire = {"type": "snapshot", "match": match, "game": game, "seq": seq, "seat": seat,
            "view": view, "legal": legal, "status": status, "events": projected,
            "players": players, "options": options, "commitment": commitment,
            "deadline": deadline, "auto_flip": auto_flip}
    if shared.middle:
        wire.update(shared.middle)
    if cut is not None:
        wire["events_cut"] = cut
    wire.update(shared.tail)
    if flip_delay is not None:
        wire["auto_flip_delay"] = flip_delay
    if shared.fast_forward is not None:
        wire["fast_forward"] = shared.fast_forward
    return ev.trusted_wire(ev.Snapshot, wire)


def _earliest(core: MatchCore) -> float | None:
    """A spectator's ``deadline``: the earliest running turn timer (None: none)."""
    times = [s.turn_deadline for s in core.seats if s.turn_deadline is not None]
    return max(0.0, min(times) - core.now) if times else None
