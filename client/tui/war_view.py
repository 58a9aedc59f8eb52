"""The War screen as a pure function of a snapshot (view format: engine/war/view.py).

Shows both face-up cards of the current battle, each seat's war pile with the
face-down cards as backs, both card counts, who still has to flip, the auto-flip
state, the last resolved battle, and the running log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from client.tui.cards import BIG_WIDTH, GLYPH_WIDTH, big_card, card_glyph, empty_slot
from client.tui.layout import Block, Line, boxed, side_by_side, text, wrap_tail
from client.tui.model import MatchView, away, player_names


def _seat_panel(view: dict[str, Any], seat: int, names: dict[int, str], me: int | None,
                cells: int, color: bool, big: bool, is_away: bool = False) -> Block:
    counts = view.get("counts") or [0, 0]
    table = (view.get("table") or [[], []])[seat] or []
    up = (view.get("up") or [None, None])[seat]
    waiting = view.get("waiting") or []
    stands = (view.get("stands") or [False, False])[seat]
    name = names.get(seat, f"seat {seat}")
    title = f"{name} (you)" if seat == me else name
    if is_away:
        title += " (away)"
    info: Block = []
    info.append(text(f"deck: {counts[seat]} cards", "class:count"))
    if not big:
        face: Line = [("", "face up: ")]
        face.append(card_glyph(up, color=color) if up else empty_slot(color=color))
        info.append(face)
    if stands:
        info.append(text("(stands: out of cards)", "class:dim"))
    pile: Line = [("", "on table: ")]
    inner = cells - 2 - (BIG_WIDTH + 1 if big else 0)
    room = max((inner - 14) // GLYPH_WIDTH, 1)
    shown = table[-room:]
    if len(table) > len(shown):
        pile.append(("class:dim", f"+{len(table) - len(shown)} "))
    pile.extend(card_glyph(c, color=color) for c in shown)
    if not table:
        pile.append(("class:dim", "(nothing yet)"))
    info.append(pile)
    if seat in waiting:
        info.append(text("your flip: press f" if seat == me else "to flip", "class:turn"))
    elif view.get("result") is None:
        info.append(text("flipped" if (view.get("flipped") or [False, False])[seat] else "",
                         "class:dim"))
    if big:
        body = side_by_side([big_card(up, color=color), info], [BIG_WIDTH, inner])
    else:
        body = info
    return boxed(title, body, cells)


def _last_line(view: dict[str, Any], names: dict[int, str], color: bool) -> Line:
    last = view.get("last")
    if not last:
        return text("No battle resolved yet.", "class:dim")
    up = last.get("up") or [None, None]
    winner = last.get("winner")
    line: Line = [("", f"Last battle #{last.get('battle')}: ")]
    line.append(card_glyph(up[0], color=color, pad=False) if up[0] else ("", "[  ]"))
    line.append(("", " vs "))
    line.append(card_glyph(up[1], color=color, pad=False) if up[1] else ("", "[  ]"))
    taken = sum(len(t) for t in (last.get("table") or []))
    wars = last.get("wars") or 0
    line.append(("", f"  -> {names.get(winner, f'seat {winner}')} takes {taken} cards"
                     + (f" after {wars} war(s)" if wars else "")))
    return line


def render_war(mv: MatchView, cells: int, rows: int, *, color: bool = True,
               log: Sequence[str] = (), now: float | None = None) -> Block:
    """The War match body, ``cells`` wide, at most ``rows`` lines.

    Args:
        mv: the match (its snapshot's ``view`` follows engine/war/view.py).
        log: the log lines to show under the table (newest last).
        now: monotonic time, to count the turn timer down.
    """
    snap = mv.snapshot or {}
    view = snap.get("view") or {}
    names = player_names(snap)
    me = snap.get("seat")
    out: Block = []
    head = (f"War  battle {view.get('battle', '?')}  resolved {view.get('battles', 0)}"
            f"  wars {view.get('wars', 0)}  cap {view.get('cap', '?')}")
    if view.get("war"):
        head += f"   WAR! step {view['war']}"
    result = snap.get("result") or view.get("result")
    if result:
        winner = result.get("winner")
        who = "a draw" if winner is None else "you win" if winner == me else \
            f"{names.get(winner, f'seat {winner}')} wins"
        head += f"   GAME OVER: {who} ({result.get('reason', '?')})"
    out.append(text(head, "class:title"))
    if cells >= 60:
        big = rows >= 18
        half = (cells - 1) // 2
        out.extend(side_by_side(
            [_seat_panel(view, 0, names, me, half, color, big, away(snap, 0)),
             _seat_panel(view, 1, names, me, cells - 1 - half, color, big, away(snap, 1))],
            [half, cells - 1 - half]))
    else:
        out.extend(_seat_panel(view, 0, names, me, cells, color, False, away(snap, 0)))
        out.extend(_seat_panel(view, 1, names, me, cells, color, False, away(snap, 1)))
    out.append(_last_line(view, names, color))
    flip_state = "on" if snap.get("auto_flip") else "off"
    status = snap.get("status", "?")
    extra = ""
    left = mv.time_left(now)
    if left is not None:
        extra = f"   turn timer: {left:.0f} s"
    if isinstance(me, int):
        out.append(text(f"Auto-flip: {flip_state}   match {status}{extra}", "class:dim"))
    else:
        out.append(text(f"Watching   match {status}{extra}", "class:dim"))
    room = rows - len(out) - 1
    if room > 0:
        lines = wrap_tail(list(log), cells, room)
        out.append(text("Log:", "class:dim"))
        out.extend(text(line) for line in lines)
    return out[:rows]
