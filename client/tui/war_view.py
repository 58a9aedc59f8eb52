"""The War screen as a pure function of a snapshot (view format: engine/war/view.py).

Shows both face-up cards of the current battle, each seat's war pile with the
face-down cards as backs, both card counts, who still has to flip, the auto-flip
state, the last resolved battle, and the running log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from client.tui.cards import BIG_WIDTH, GLYPH_WIDTH, big_card, card_glyph, empty_slot
from client.tui.layout import Block, Line, boxed, log_tail, side_by_side, text
from client.tui.model import WARN_SECONDS, MatchView, away, player_names
from engine import notation


def _seat_panel(view: dict[str, Any], seat: int, names: dict[int, str], me: int | None,
                cells: int, color: bool, big: bool, is_away: bool = False,
                flip_note: str = "", timer: Line | None = None, roomy: bool = False) -> Block:
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
    if flip_note:
        info.append(text(flip_note, "class:turn" if "press f" in flip_note else "class:dim"))
    elif seat in waiting and view.get("result") is None:
        info.append(text("to flip", "class:dim"))
    elif view.get("result") is None:
        info.append(text("flipped" if (view.get("flipped") or [False, False])[seat] else "",
                         "class:dim"))
    if timer:
        info.append(timer)
    if big:
        body = side_by_side([big_card(up, color=color), info], [BIG_WIDTH, inner])
    else:
        body = info
    if roomy:  # room to spare: the whole pile on the table drawn large too
        fits = max((cells - 2) // (BIG_WIDTH + 1), 1)
        cards = table[-fits:] or [None]
        body.append(text("the pile on the table:" if table else "nothing on the table yet",
                         "class:dim"))
        body.extend(side_by_side([big_card(c, color=color) for c in cards],
                                 [BIG_WIDTH] * len(cards)))
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
    line.append(("", f"  -> {notation.seat_name(winner, names)} takes {taken} cards"
                     + (f" after {wars} war(s)" if wars else "")))
    return line


def timer_line(mv: MatchView, seat: int, now: float | None) -> Line | None:
    """A seat's turn timer (``timer 42 s``), drawn as a warning at 10 s or less."""
    left = mv.time_left(now, seat)
    if left is None:
        return None
    style = "class:error" if left <= WARN_SECONDS else "class:dim"
    return text(f"turn timer: {left:.0f} s" + ("  hurry!" if left <= WARN_SECONDS else ""),
                style)


def _flip_note(snap: dict[str, Any], view: dict[str, Any], seat: int, me: int | None) -> str:
    """What a seat's panel says about flipping: only for a running match."""
    if snap.get("status") != "active" or seat not in (view.get("waiting") or []):
        return ""
    if seat != me:
        return ""
    if snap.get("auto_flip"):
        return "auto-flip flips for you"
    return "your flip: press f"


def render_war(mv: MatchView, cells: int, rows: int, *, color: bool = True,
               log: Sequence[str] = (), now: float | None = None,
               replay: bool = False, log_scroll: int = 0) -> Block:
    """The War match body, ``cells`` wide, at most ``rows`` lines.

    Args:
        mv: the match (its snapshot's ``view`` follows engine/war/view.py).
        log: the log lines to show under the table (newest last).
        now: monotonic time, to count the turn timers down.
        replay: drawn in the replay viewer (no prompts, no timers).
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
        head += f"   GAME OVER: {notation.result_words('war', result, me, names)}"
    out.append(text(head, "class:title"))
    big = rows >= 18
    roomy = rows >= 30 and cells >= 120
    timers = [None if replay else timer_line(mv, s, now) for s in (0, 1)]
    notes = ["" if replay else _flip_note(snap, view, s, me) for s in (0, 1)]
    if cells >= 60:
        half = (cells - 1) // 2
        out.extend(side_by_side(
            [_seat_panel(view, 0, names, me, half, color, big, away(snap, 0), notes[0],
                         timers[0], roomy),
             _seat_panel(view, 1, names, me, cells - 1 - half, color, big, away(snap, 1),
                         notes[1], timers[1], roomy)],
            [half, cells - 1 - half]))
    else:
        out.extend(_seat_panel(view, 0, names, me, cells, color, False, away(snap, 0),
                               notes[0], timers[0]))
        out.extend(_seat_panel(view, 1, names, me, cells, color, False, away(snap, 1),
                               notes[1], timers[1]))
    out.append(_last_line(view, names, color))
    status = {"waiting": "waiting for an opponent", "active": "running",
              "finished": "over"}.get(str(snap.get("status")), str(snap.get("status", "?")))
    if replay:
        pass
    elif isinstance(me, int):
        pace = snap.get("auto_flip_delay")
        pace_words = f", a flip every {pace:g} s (+ -)" \
            if snap.get("auto_flip") and isinstance(pace, (int, float)) else ""
        flip_state = "on" if snap.get("auto_flip") else "off"
        line = f"Auto-flip: {flip_state}{pace_words}   {status}"
        line += fast_forward_words(snap, me, names)
        out.append(text(line, "class:dim"))
    else:
        out.append(text(f"Watching   {status}", "class:dim"))
    room = rows - len(out) - 1
    if room > 0:
        lines = log_tail(list(log), cells, room, log_scroll)
        out.append(text("Log:", "class:dim"))
        out.extend(text(line) for line in lines)
    return out[:rows]


def fast_forward_words(snap: dict[str, Any], me: int, names: dict[int, str]) -> str:
    """Who asked to fast-forward, from the snapshot's ``fast_forward`` list."""
    asked = snap.get("fast_forward")
    if not isinstance(asked, list) or len(asked) < 2 or not any(asked):
        return "   F fast-forward"
    if all(asked):
        return "   fast-forwarding..."
    if asked[me]:
        return f"   fast-forward: waiting for {notation.seat_name(1 - me, names)} to agree"
    return f"   {notation.seat_name(1 - me, names)} asks to fast-forward: F agrees"
