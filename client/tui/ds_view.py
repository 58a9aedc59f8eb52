"""The Data Structures screen as a pure function of a snapshot and the UI selection.

View format: engine/datastructures/view.py. Everything selectable is derived
from the snapshot's ``legal`` list through :mod:`client.tui.selection`; this
module only draws. Key letters are printed next to what they choose, so the
screen reads the same with colour off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from client.tui import selection as sel
from client.tui.cards import BIG_WIDTH, GLYPH_WIDTH, big_card, card_glyph, empty_slot
from client.tui.layout import Block, Line, log_tail, side_by_side, text
from client.tui.model import WARN_SECONDS, MatchView, away, player_names
from engine import notation

PHASES = {"play": "phase 1: play", "discard": "phase 2: stack & queue", "over": "game over"}


def choices(legal: Sequence[dict[str, Any]], selected: tuple[Any, ...] | None) -> list[tuple]:
    """What Left/Right/Enter move through now: the sources, or the chosen source's targets."""
    return sel.targets(legal, selected) if selected is not None else sel.sources(legal)


def _mark(thing: tuple, legal: Sequence[dict[str, Any]], selected: tuple[Any, ...] | None,
          cursor: tuple | None) -> str:
    """The style classes for a source or target, given the current selection."""
    styles = []
    if selected is None:
        if thing in sel.sources(legal):
            styles.append("class:selectable")
    else:
        if thing == selected:
            styles.append("class:selected")
        elif thing in sel.targets(legal, selected):
            styles.append("class:target")
    if cursor is not None and thing == cursor:
        styles.append("class:cursor")
    return " ".join(styles)


def _is_marked(style: str) -> bool:
    return any(k in style for k in ("selectable", "target", "selected"))


def _keyed(key: str, style: str) -> Fragment:
    """A key label: ``3`` normally, ``*3`` when it can be chosen now (readable without colour)."""
    return (style or "class:key", ("*" if _is_marked(style) else " ") + key)


Fragment = tuple[str, str]


def array_line(arr: dict[str, Any], index: int, *, cells: int, color: bool,
               style: str = "", key: str | None = None) -> Line:
    """One array: its key, the newest cards (older ones counted), and the value it needs next."""
    line: Line = []
    label = key if key is not None else str(index + 1)
    line.append(_keyed(label, style) if key is not None else ("class:key", f" {label}"))
    line.append(("", ": "))
    if arr.get("closed"):
        line.append(("class:closed", "closed (12 cards, face down)"))
        return line
    cards = list(arr.get("cards") or [])
    if not cards:
        line.append(empty_slot(color=color))
        line.append(("class:dim", " empty: start it from the hand"))
        return line
    room = max((cells - 24) // GLYPH_WIDTH, 2)
    if len(cards) > room:
        line.append(card_glyph(cards[0], color=color))
        line.append(("class:dim", " .."))
        shown = cards[-(room - 1):]
    else:
        shown = cards
    line.extend(card_glyph(c, color=color) for c in shown)
    nxt = arr.get("next")
    line.append(("class:dim", f"  ({len(cards)})"))
    line.append(("class:need", f" needs {nxt}" if nxt else ""))
    return line


def _stack_line(stack: list[str], key: str, style: str, color: bool) -> Line:
    line: Line = [("", "stack "), _keyed(key, style), ("", " ")] if key else [("", "stack ")]
    if stack:
        line.append(card_glyph(stack[-1], color=color))
        line.append(("class:dim", f"depth {len(stack)}"))
    else:
        line.append(empty_slot(color=color))
        line.append(("class:dim", " empty"))
    return line


def _player_block(view: dict[str, Any], seat: int, me: int | None, names: dict[int, str],
                  legal: Sequence[dict[str, Any]], selected: tuple | None, cursor: tuple | None,
                  cells: int, color: bool, is_away: bool = False) -> Block:
    players = view.get("players") or [{}, {}]
    p = players[seat] if seat < len(players) else {}
    own = seat == me
    name = names.get(seat, f"seat {seat}")
    who = f"{name} (you)" if own else name
    if is_away:
        who += " (away)"
    to_move = view.get("to_move")
    turn_mark = "  <- to move" if to_move == seat else ""
    stack_key = "" if me is None else "t" if own else "o"
    stack_style = _mark(("stack", seat), legal, selected, cursor) if me is not None else ""
    if own and selected is not None and ("mystack",) in sel.targets(legal, selected):
        stack_style = _mark(("mystack",), legal, selected, cursor)
        stack_key = "s"
    head: Line = [("class:player", who), ("", f"  hand {p.get('hand_count', '?')}"
                                          f"  closed {p.get('closed', 0)}/3  "),
                  *_stack_line(list(p.get("stack") or []), stack_key, stack_style, color),
                  ("class:turn", turn_mark)]
    out: Block = [head]
    for a, arr in enumerate(p.get("arrays") or []):
        if own:
            style = _mark(("array", a), legal, selected, cursor)
            out.append([("", "  "), *array_line(arr, a, cells=cells - 2, color=color,
                                                style=style, key=str(a + 1))])
        else:
            out.append([("", "  "), *array_line(arr, a, cells=cells - 2, color=color)])
    return out


def queue_line(view: dict[str, Any], legal: Sequence[dict[str, Any]], selected: tuple | None,
               cursor: tuple | None, color: bool, mine: bool) -> Line:
    """The queue, head first, with the head marked (key ``h``) and the tail (key ``q``)."""
    queue = list(view.get("queue") or [])
    head_style = _mark(("queue",), legal, selected, cursor) if mine else ""
    line: Line = [("", "queue "), _keyed("h", head_style)] if mine else [("", "queue")]
    line.append(("class:dim", " head> "))
    if queue:
        line.append(card_glyph(queue[0], color=color, extra="class:head"))
        line.extend(card_glyph(c, color=color) for c in queue[1:])
    line.extend(empty_slot(color=color) for _ in range(max(0, 5 - len(queue))))
    tail_style = ""
    if mine and selected is not None and ("qtail",) in sel.targets(legal, selected):
        tail_style = _mark(("qtail",), legal, selected, cursor)
    line.append(("class:dim", " <tail "))
    if tail_style:
        line.append(_keyed("q", tail_style))
    line.append(("class:dim", "   " + piles_text(view, color)))
    return line


def hand_line(view: dict[str, Any], legal: Sequence[dict[str, Any]], selected: tuple | None,
              cursor: tuple | None, color: bool) -> Line:
    """The own hand, each card numbered by its key (``1``..)."""
    hand = view.get("hand")
    line: Line = [("", "hand ")]
    if hand is None:
        line.append(("class:dim", "(watching: hands are hidden)"))
        return line
    if not hand:
        line.append(("class:dim", "(empty)"))
    for i, card in enumerate(hand):
        style = _mark(("hand", i), legal, selected, cursor)
        line.append(_keyed(str(i + 1), style))
        line.append(card_glyph(card, color=color, extra="class:chosen" if style else ""))
    if selected is not None and ("keep",) in sel.targets(legal, selected):
        line.append(("", "  "))
        line.append(_keyed("k", _mark(("keep",), legal, selected, cursor)))
        line.append(("", " keep this one (mulligan)"))
    return line


def _thing_words(thing: tuple, view: dict[str, Any], me: int | None,
                 glyphs: bool = True) -> str:
    kind = thing[0]
    hand = view.get("hand") or []
    if kind == "hand":
        card = notation.card(hand[thing[1]], glyphs=glyphs) if thing[1] < len(hand) else "?"
        return f"hand card {thing[1] + 1} ({card})"
    if kind == "queue":
        return "the queue head"
    if kind == "stack":
        return "your stack top" if thing[1] == me else "the opponent's stack top"
    if kind == "array":
        return f"array {thing[1] + 1}"
    if kind == "mystack":
        return "your stack (s)"
    if kind == "qtail":
        return "the queue tail (q)"
    if kind == "keep":
        return "keep it, mulligan (k)"
    return str(thing)


def _key_of(thing: tuple, me: int | None) -> str:
    kind = thing[0]
    if kind == "hand":
        return str(thing[1] + 1)
    if kind == "array":
        return str(thing[1] + 1)
    return {"queue": "h", "mystack": "s", "qtail": "q", "keep": "k"}.get(
        kind, "t" if kind == "stack" and thing[1] == me else "o")


def prompt_line(mv: MatchView, selected: tuple | None, cursor_index: int,
                mulligan_mode: bool = False, glyphs: bool = True) -> Line:
    """What to do now, in words: the selectable keys, or why there is nothing to do."""
    snap = mv.snapshot or {}
    view = snap.get("view") or {}
    me = snap.get("seat")
    names = player_names(snap)
    legal = mv.legal
    if snap.get("status") == "waiting":
        return text("Waiting for an opponent to join...", "class:turn")
    if snap.get("status") == "finished":
        return text("The game is over. Tab: lobby, x: leave the match.", "class:turn")
    if me is None:
        return text("Watching.", "class:dim")
    if not legal:
        other = view.get("to_move")
        return text(f"{names.get(other, 'the opponent')} to move...", "class:dim")
    if mv.pending:
        return text("sent; waiting for the server...", "class:dim")
    if mulligan_mode:
        keeps = [str(i["keep"] + 1) for i in legal if i.get("type") == "mulligan"]
        return text(f"Mulligan: which card to keep? {' '.join(keeps)}   Esc cancel", "class:turn")
    options = choices(legal, selected)
    cur = options[cursor_index % len(options)] if options else None
    if selected is None:
        keys = " ".join(_key_of(t, me) for t in options)
        acts = []
        if sel.action(legal, "end_phase"):
            acts.append("e end phase")
        if sel.action(legal, "end_turn"):
            acts.append("e end turn")
        if any(i.get("type") == "mulligan" for i in legal):
            acts.append("m mulligan")
        kinds = {i.get("type") for i in legal}
        if "stack" in kinds:
            head = f"Phase 2: a hand card for your stack [{keys}], then s"
        elif "enqueue" in kinds:
            head = f"Phase 2: enqueue a hand card [{keys}], then q; or"
        elif options:
            head = f"Your move: source [{keys}]"
        else:
            head = "Your move:"
        tail = f"  Enter: {_thing_words(cur, view, me, glyphs)}" if cur else ""
        return text(f"{head}  {'  '.join(acts)}{tail}", "class:turn")
    keys = " ".join(_key_of(t, me) for t in options)
    return text(f"{_thing_words(selected, view, me, glyphs)} -> target [{keys}]"
                f"  Enter: {_thing_words(cur, view, me, glyphs) if cur else '-'}  Esc cancel",
                "class:turn")


def header_line(mv: MatchView, now: float | None = None, replay: bool = False) -> Line:
    """Turn, whose move, phase, and both turn timers (a warning at 10 s or less)."""
    snap = mv.snapshot or {}
    view = snap.get("view") or {}
    names = player_names(snap)
    me = snap.get("seat")
    to_move = view.get("to_move")
    if snap.get("status") == "waiting":
        whose = "waiting for an opponent"
    elif snap.get("status") == "finished" or to_move is None:
        result = snap.get("result") or view.get("result") or {}
        whose = ("GAME OVER: " + notation.result_words("datastructures", result, me, names)) \
            if result else "waiting"
    elif to_move == me and not replay:
        whose = "YOUR TURN"
    elif to_move == me:
        whose = "your turn (then)"
    else:
        whose = f"{names.get(to_move, f'seat {to_move + 1}')}'s turn"
    phase = "" if view.get("phase") == "over" else \
        PHASES.get(str(view.get("phase")), str(view.get("phase")))
    line: Line = [("class:title", f"Data Structures  turn {view.get('turn', '?')}/"
                                  f"{view.get('cap', '?')}  "),
                  ("class:turn", whose), ("", f"  {phase}")]
    if replay:
        return line
    if isinstance(snap.get("timers"), list):
        timers = [(seat, mv.time_left(now, seat),
                   "your" if seat == me else f"{names.get(seat, f'seat {seat + 1}')}'s")
                  for seat in (0, 1)]
    else:  # a server that sends only the own (or, to spectators, the running) timer
        timers = [(me, mv.time_left(now), "")]
    for _seat, left, who in timers:
        if left is not None:
            style = "class:error" if left <= WARN_SECONDS else "class:dim"
            line.append((style, f"  {who} timer {left:.0f}s" if who else f"  timer {left:.0f}s"))
    return line


def piles_text(view: dict[str, Any], glyphs: bool = True) -> str:
    """Deck, discard (with its top card) and recycle counts, for the queue line."""
    discard = list(view.get("discard") or [])
    top = f" ({notation.card(discard[-1], glyphs=glyphs)})" if discard else ""
    recycle = f"  recycle {view['recycle']}" if view.get("recycle") else ""
    return f"deck {view.get('deck', '?')}  discard {len(discard)}{top}{recycle}"


def big_row(cards: Sequence[str], labels: Sequence[Fragment], color: bool,
            indent: int = 0) -> Block:
    """Cards drawn large side by side, each with its key label above it."""
    if not cards:
        return []
    blocks: list[Block] = [[[label], *big_card(card, color=color)]
                           for card, label in zip(cards, labels, strict=False)]
    row = side_by_side(blocks, [BIG_WIDTH] * len(blocks))
    return [[("", " " * indent), *line] for line in row]


def render_ds(mv: MatchView, cells: int, rows: int, *, color: bool = True,
              selected: tuple | None = None, cursor_index: int = 0,
              mulligan_mode: bool = False, log: Sequence[str] = (),
              now: float | None = None, hint: dict[str, Any] | None = None,
              replay: bool = False, log_scroll: int = 0) -> Block:
    """The Data Structures match body, ``cells`` wide, at most ``rows`` lines.

    The opponent is drawn on top, the queue in the middle, the own seat below
    with the hand; a spectator sees seat 1 on top and seat 0 below. With 110
    cells or more the log goes to a column on the right, else below the board.
    ``now`` (monotonic) counts the turn timer down.
    """
    snap = mv.snapshot or {}
    view = snap.get("view") or {}
    me = snap.get("seat")
    names = player_names(snap)
    legal = mv.legal
    options = choices(legal, selected)
    cursor = options[cursor_index % len(options)] if options and not mulligan_mode else None
    bottom = me if isinstance(me, int) else 0
    top = 1 - bottom
    board_cells = max(80, min(100, cells - 50)) if cells >= 110 else cells
    roomy = rows >= 34 and board_cells >= 80  # room to spare: big cards, spaced sections
    gap: Block = [text("")] if roomy else []
    board: Block = [header_line(mv, now, replay), *gap]
    if snap.get("status") != "active":  # nobody is to move in a waiting or finished match
        view = {**view, "to_move": None}
    board.extend(_player_block(view, top, me, names, legal, selected, cursor, board_cells, color,
                               away(snap, top)))
    board.extend(gap)
    board.append(queue_line(view, legal, selected, cursor, color, isinstance(me, int)))
    if roomy:
        queue = list(view.get("queue") or [])
        head_style = _mark(("queue",), legal, selected, cursor) if isinstance(me, int) else ""
        labels = [_keyed("h", head_style) if isinstance(me, int) else ("class:dim", " head")]
        labels += [("class:dim", "")] * (len(queue) - 1)
        board.extend(big_row(queue, labels, color, indent=6))
        board.extend(gap)
    mull = view.get("last_mulligan")
    recent = isinstance(mull, dict) and isinstance(mull.get("turn"), int) \
        and isinstance(view.get("turn"), int) and mull["turn"] >= view["turn"] - 1
    if recent and mull.get("seat") != me:  # shown through the next turn too
        kept = mull.get("card")
        if not isinstance(kept, str):
            hand_shown = mull.get("hand") or []
            keep = mull.get("keep")
            kept = hand_shown[keep] if isinstance(keep, int) and 0 <= keep < len(hand_shown) \
                else mull.get("keep")
        board.append(text(f"{names.get(mull.get('seat'), 'opponent')} mulliganed: showed "
                          f"{notation.cards(mull.get('hand'), glyphs=color)}, kept "
                          f"{notation.card(kept, glyphs=color)}", "class:notice"))
    board.extend(_player_block(view, bottom, me, names, legal, selected, cursor, board_cells,
                               color, away(snap, bottom)))
    board.extend(gap)
    if view.get("hand") is not None or not replay:
        board.append(hand_line(view, legal, selected, cursor, color))
    if roomy and view.get("hand"):
        hand = list(view["hand"])
        labels = [_keyed(str(i + 1), _mark(("hand", i), legal, selected, cursor))
                  for i in range(len(hand))]
        board.extend(big_row(hand, labels, color, indent=5))
    if hint is not None and hint.get("match") == mv.match and hint.get("intent") in legal:
        words = sel.describe_intent(hint["intent"], view.get("hand"), me, color)
        board.append(text(f"Hint ({hint.get('strategy', 'bot')}): {words}   "
                          "l lists the moves; it is the one marked *", "class:target"))
    if not replay:
        board.append(prompt_line(mv, selected, cursor_index, mulligan_mode, color))
    if cells >= 110:
        log_cells = cells - board_cells - 1
        lines = log_tail(list(log), log_cells, rows - 1, log_scroll)
        log_block: Block = [text("Log", "class:dim"), *[text(x) for x in lines]]
        return side_by_side([board, log_block], [board_cells, log_cells])[:rows]
    room = rows - len(board) - 1
    if room > 0:
        board.append(text("Log:", "class:dim"))
        board.extend(text(line) for line in log_tail(list(log), cells, room, log_scroll))
    return board[:rows]


def render_stacks(view: dict[str, Any], names: dict[int, str], cells: int, *,
                  color: bool = True) -> Block:
    """Both stacks in full, bottom to top, wrapped to ``cells`` (the ``v`` overlay)."""
    out: Block = []
    per_row = max((cells - 4) // GLYPH_WIDTH, 1)
    for p in view.get("players") or []:
        seat = p.get("seat")
        stack = list(p.get("stack") or [])
        out.append(text(f"{names.get(seat, f'seat {seat}')}'s stack, bottom to top "
                        f"({len(stack)} cards):", "class:player"))
        if not stack:
            out.append(text("  (empty)", "class:dim"))
        for i in range(0, len(stack), per_row):
            out.append([("", "  "), *(card_glyph(c, color=color) for c in stack[i:i + per_row])])
        out.append(text(""))
    discard = list(view.get("discard") or [])
    out.append(text(f"discard pile, bottom to top ({len(discard)} cards):", "class:player"))
    for i in range(0, len(discard), per_row):
        out.append([("", "  "), *(card_glyph(c, color=color) for c in discard[i:i + per_row])])
    return out
