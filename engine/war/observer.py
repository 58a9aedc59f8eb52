"""The War projection: the one place that decides what a seat or spectator sees.

War has no private hand: every face-up card is public and every face-down card
is secret from everyone, the owner included (R0.3). So the view is the same
for both seats and spectators except for its ``seat`` field. Deck order is
never shown, only deck sizes; a face-down card on the table is ``"back"``.

View (all keys always present)::

    {"game": "war", "seat": 0 | 1 | None,
     "battle": int,            # current battle number, 1-based (the last one once over)
     "battles": int,           # battles resolved so far
     "cap": int,               # W5 battle cap
     "counts": [int, int],     # cards in each seat's deck (the table not included)
     "table": [[str], [str]],  # each seat's cards on the table this battle, in the
                               # order placed; face-down cards are "back"
     "up": [str | None, str | None],  # the face-up card each seat competes with
                                      # (its latest this battle; W4: may stand)
     "war": int,               # war steps in the current battle (0: a plain battle)
     "wars": int,              # ties so far in the game (a double war counts two)
     "flipped": [bool, bool],  # placed its card(s) in the current step
     "waiting": [int],         # seats that still have to flip (either order, W6)
     "stands": [bool, bool],   # out of cards in a war; its last face-up card stands
     "last": None | {"battle": int, "winner": int, "table": [[str], [str]],
                     "up": [str, str], "wars": int},   # the last resolved battle
     "result": None | {"winner": int | None, "reason": str}}

Events (projected; unknown raw events are dropped)::

    {"type": "flip", "seat": s, "up": "10H"[, "down": "back"]}  # "down": a war step's
                                                     # face-down card was placed first
    {"type": "war", "battle": n, "step": k}          # a tie: war step k follows
    {"type": "battle", "battle": n, "winner": s, "cards": k, "wars": w}
                                        # the pile of k cards (w war steps) went to s
    {"type": "resign" | "forfeit", "seat": s, "reason": str}   # R0.4, timeouts
    {"type": "game_over", "winner": s | None, "reason": str}
"""

from __future__ import annotations

from engine.cards import BACK, STRINGS, to_str
from engine.core import Event, View
from engine.war.rules import WarState
from engine.war.table import STEP, steps_of


def _check_seat(seat: int | None) -> None:
    if seat is not None and (isinstance(seat, bool) or seat not in (0, 1)):
        raise ValueError(f"no seat {seat!r} in War (seats are 0, 1, or None for a spectator)")


def _table(table: list[int | None]) -> tuple[list[list[str]], list[str | None]]:
    """Per-seat cards on the table in placement order (face-down as "back"), and each
    seat's latest face-up card."""
    if len(table) == STEP and table[0] is None and table[1] is None:   # a plain battle
        up0, up1 = table[2], table[3]
        s0 = None if up0 is None else STRINGS[up0]
        s1 = None if up1 is None else STRINGS[up1]
        return [[] if s0 is None else [s0], [] if s1 is None else [s1]], [s0, s1]
    cards: list[list[str]] = [[], []]
    up: list[str | None] = [None, None]
    for step in steps_of(table):
        for seat in (0, 1):
            if step[seat] is not None:
                cards[seat].append(BACK)
            card = step[2 + seat]
            if card is not None:
                up[seat] = STRINGS[card]
                cards[seat].append(up[seat])
    return cards, up


def view(state: WarState, seat: int | None) -> View:
    """The War view for ``seat`` (0, 1, or None for a spectator); see the module doc.

    Raises:
        ValueError: ``seat`` is not 0, 1 or None.
    """
    if seat is not None:
        _check_seat(seat)
    table = state.table
    cards, up = _table(table)
    outcome = state.outcome()
    steps = len(table) // STEP
    if steps:
        flipped = [table[-2] is not None, table[-1] is not None]
    else:
        flipped = [False, False]
    pending = state.pending
    waiting = list(state.to_move())
    last = None
    if state.last is not None:
        number, winner, last_table = state.last
        last_cards, last_up = _table(last_table)
        last = {"battle": number, "winner": winner, "table": last_cards, "up": last_up,
                "wars": len(last_table) // STEP - 1}
    if outcome is None and steps > 1:
        stands = [not flipped[s] and not pending[s] for s in (0, 1)]
    else:
        stands = [False, False]
    decks = state.decks
    return {
        "game": "war",
        "seat": seat,
        "battle": state.battle,
        "battles": state.battles,
        "cap": state.options["cap"],
        "counts": [len(decks[0]), len(decks[1])],
        "table": cards,
        "up": up,
        "war": max(steps - 1, 0),
        "wars": state.wars,
        "flipped": flipped,
        "waiting": waiting,
        "stands": stands,
        "last": last,
        "result": None if outcome is None else outcome.to_dict(),
    }


def project_events(events: list[Event], seat: int | None) -> list[Event]:
    """The raw War events as ``seat`` (or a spectator) may see them: card ids become
    strings, face-down cards become ``"back"``, unknown event types are dropped.

    Raises:
        ValueError: ``seat`` is not 0, 1 or None.
    """
    _check_seat(seat)
    out: list[Event] = []
    for event in events:
        kind = event.get("type")
        if kind == "flip":
            flip = {"type": "flip", "seat": event["seat"], "up": to_str(event["up"])}
            if "down" in event:
                flip["down"] = BACK
            out.append(flip)
        elif kind == "war":
            out.append({"type": "war", "battle": event["battle"], "step": event["step"]})
        elif kind == "battle":
            out.append({"type": "battle", "battle": event["battle"],
                        "winner": event["winner"], "cards": event.get("cards", 2),
                        "wars": event.get("wars", 0)})
        elif kind == "game_over":
            out.append({"type": "game_over", "winner": event["winner"],
                        "reason": event["reason"]})
        elif kind in ("resign", "forfeit"):
            out.append({"type": kind, "seat": event["seat"], "reason": event["reason"]})
    return out
