"""The whole screen as a pure function of the model and the terminal size.

Layout, top to bottom: the body (lobby or match, overlays drawn over it), the
notice line (the last error or message, in words), the key hint line, and the
status line (connection state and round-trip time). The result has exactly
``rows`` lines of exactly ``cells`` cells, so it fits any size from 80x24 up
and is simply drawn again after a resize.
"""

from __future__ import annotations

from client.tui import ds_view, keys, lobby_view, ratings_screen, war_view
from client.tui import selection as sel
from client.tui.layout import Block, Line, boxed, fit, fit_block, text, width
from client.tui.model import Model, player_names

MIN_CELLS, MIN_ROWS = 40, 10


def status_line(model: Model) -> Line:
    """Connection state, server, RTT, the own name, and where we are."""
    conn = model.conn
    state_style = {"connected": "class:status.ok", "reconnecting": "class:status.warn",
                   "connecting": "class:status.warn"}.get(conn.state, "class:status.bad")
    rtt = f"rtt {conn.rtt * 1000:.0f} ms" if conn.rtt is not None else "rtt -"
    where = "lobby"
    if model.screen == "match" and model.view is not None:
        mv = model.view
        where = f"{mv.game or '?'} {mv.match}" + ("" if mv.seat is not None else " (watching)")
    detail = f" ({conn.detail})" if conn.detail else ""
    return [(state_style, f" {conn.state}{detail} "),
            ("class:status", f" {conn.server}  {rtt}  {model.name}  {where}  ? help ")]


def hint_line(model: Model) -> Line:
    """The one-line key reminder for the current screen."""
    if model.overlay == "form":
        return text("up/down field  left/right change  Enter create  Esc cancel", "class:dim")
    if model.overlay == "legal":
        return text("type a move's number, Enter to play it, Esc to close", "class:dim")
    if model.overlay == "chat":
        return text("type your message, Enter to send, Esc to cancel", "class:dim")
    if model.screen == "lobby":
        return lobby_view.hint_line(model)
    mv = model.view
    if mv is not None and mv.seat is None:
        return text("Tab lobby  x stop watching  v stacks  c chat  PgUp/PgDn log  ? help  "
                    "Ctrl-C quit", "class:dim")
    if mv is not None and mv.game == "war":
        return text("f flip  a auto-flip  c chat  l list  Tab lobby  x leave  ? help  Ctrl-C quit",
                    "class:dim")
    return text("from 1-9 h t o, to 1-3 s q k  e end  m mulligan  v stacks  l list  c chat  "
                "? help", "class:dim")


def _log(model: Model) -> list[str]:
    mv = model.view
    if mv is None:
        return []
    lines = list(mv.log)
    if model.log_scroll:
        lines = lines[:max(len(lines) - model.log_scroll, 1)]
    return lines


def body(model: Model, cells: int, rows: int, now: float | None = None) -> Block:
    """The main area (without overlays)."""
    if model.screen == "lobby" or model.view is None:
        return lobby_view.render_lobby(model, cells, rows)
    mv = model.view
    snap = mv.snapshot
    if snap is None:
        return [text(f"match {mv.match}: waiting for its first snapshot...", "class:dim")]
    if mv.game == "war":
        return war_view.render_war(mv, cells, rows, color=model.color, log=_log(model),
                                   now=now)
    if mv.game == "datastructures":
        return ds_view.render_ds(mv, cells, rows, color=model.color, selected=model.selection,
                                 cursor_index=model.cursor,
                                 mulligan_mode=model.mulligan_mode, log=_log(model),
                                 now=now)
    return [text(f"{mv.game}: this client cannot draw that game; l lists its legal moves")]


def help_pages(model: Model, rows: int) -> list[list[str]]:
    """The help text for the current screen, cut into pages that fit ``rows`` lines."""
    if model.screen == "lobby" or model.view is None:
        screens: tuple[str, ...] = ("any", "lobby")
    else:
        screens = ("any", "match", model.view.game or "datastructures")
    lines = keys.help_lines(screens)
    room = max(rows - 3, 3)
    return [lines[i:i + room] for i in range(0, len(lines), room)] or [[]]


def overlay(model: Model, cells: int, rows: int) -> Block:
    """The overlay block (help, form, numbered moves, stacks, queue picker), or []."""
    box_cells = min(cells, 76)
    if model.overlay == "help":
        pages = help_pages(model, rows)
        page = pages[model.help_page % len(pages)]
        footer = (f"page {model.help_page % len(pages) + 1}/{len(pages)}: Space for more, "
                  "any other key closes" if len(pages) > 1 else "any key closes this help")
        return boxed("Keys", [*(text(x) for x in page), text(footer, "class:dim")], box_cells)
    if model.overlay == "ratings":
        return ratings_screen.render(model, box_cells, rows)
    if model.overlay == "form":
        return lobby_view.render_form(model, box_cells)
    if model.overlay == "chat":
        return boxed("Say (Enter sends, Esc cancels)",
                     [text(f"> {model.chat_input[-(box_cells - 5):]}_", "class:cursor")],
                     box_cells)
    if model.overlay == "queue":
        return lobby_view.render_queue_picker(model, box_cells)
    if model.overlay == "legal" and model.view is not None:
        mv = model.view
        hand = ((mv.snapshot or {}).get("view") or {}).get("hand")
        legal = mv.legal
        lines = [text(f"{i:>3}. {sel.describe_intent(intent, hand, mv.seat)}")
                 for i, intent in enumerate(legal, 1)]
        room = rows - 4
        if len(lines) > room:
            cols = 2 if cells >= 80 else 1
            half = (len(lines) + cols - 1) // cols
            if cols == 2:
                box_cells = cells
                lines = [[*fit(lines[i], cells // 2 - 2), *lines[i + half]]
                         if i + half < len(lines) else lines[i] for i in range(half)]
            lines = lines[:room]
        lines.append(text(f"number: {model.legal_input}_", "class:cursor"))
        return boxed("Legal moves", lines, box_cells)
    if model.overlay == "stacks" and model.view is not None:
        snap = model.view.snapshot or {}
        lines = ds_view.render_stacks(snap.get("view") or {}, player_names(snap), box_cells - 2,
                                      color=model.color)
        return boxed("Stacks (Esc closes)", lines[:rows - 2], box_cells)
    return []


def render(model: Model, cells: int, rows: int, now: float | None = None) -> Block:
    """The full screen: exactly ``rows`` lines of exactly ``cells`` cells.

    ``now`` (monotonic seconds) counts turn timers down; None shows them as received.
    """
    cells, rows = max(cells, MIN_CELLS), max(rows, MIN_ROWS)
    main_rows = rows - 3
    screen = fit_block(body(model, cells, main_rows, now), cells, main_rows)
    over = overlay(model, cells, main_rows)
    if over:
        over = over[:main_rows]
        top = max((main_rows - len(over)) // 2, 0)
        left = max((cells - max(width(line) for line in over)) // 2, 0)
        for i, line in enumerate(over):
            pad = [("", " " * left), *line]
            screen[top + i] = fit(pad, cells)
    notice_style = "class:error" if model.notice_error else "class:notice"
    screen.append(fit(text(model.notice, notice_style), cells))
    screen.append(fit(hint_line(model), cells))
    screen.append(fit(status_line(model), cells, "class:status"))
    return screen
