"""The whole screen as a pure function of the model and the terminal size.

Layout, top to bottom: the body (lobby or match, overlays drawn over it), the
notice line (the last error or message, in words), the key hint line, and the
status line (connection state and round-trip time). The result has exactly
``rows`` lines of exactly ``cells`` cells, so it fits any size from 80x24 up
and is simply drawn again after a resize.
"""

from __future__ import annotations

from client.tui import (
    conn_view,
    ds_view,
    end_view,
    keys,
    lobby_view,
    ratings_screen,
    rules,
    war_view,
)
from client.tui import selection as sel
from client.tui.layout import Block, Line, boxed, fit, fit_block, text, width
from client.tui.model import MatchView, Model, player_names

MIN_CELLS, MIN_ROWS = 40, 10

Hint = tuple[str, str]


def fit_hints(items: list[Hint], cells: int, keep_last: int = 1) -> Line:
    """Key hints ``[(key, what), ...]`` on one line of at most ``cells`` cells: items
    are dropped from the end (sparing the last ``keep_last``, e.g. ``? help``) until
    the rest fits, so a narrow terminal loses whole hints, never half a word."""
    items = list(items)

    def line_of(chosen: list[Hint]) -> Line:
        out: Line = []
        for i, (key, what) in enumerate(chosen):
            out += [("class:key", ("  " if i else "") + key), ("class:dim", f" {what}")]
        return out

    tail = items[-keep_last:] if keep_last else []
    head = items[:len(items) - len(tail)]
    while head and width(line_of(head + tail)) > cells:
        head.pop()
    return line_of(head + tail)


def status_line(model: Model, cells: int = 200, now: float | None = None) -> Line:
    """Connection state (with the countdown to the next try), where we are, the RTT
    (only while connected), the own name and the server; the least needed parts are
    left out first when the line is too long."""
    conn = model.conn
    state_style = {"connected": "class:status.ok", "reconnecting": "class:status.warn",
                   "connecting": "class:status.warn"}.get(conn.state, "class:status.bad")
    detail = conn.detail
    left = conn.retry_in(now)
    if left is not None and conn.state != "connected":
        retry = f"retry {conn.attempt} in {left:.0f} s"
        detail = f"{retry}: {detail}" if detail else retry
    head = f" {conn.state}" + (f" ({detail})" if detail else "") + " "
    if width([("", head)]) > cells - 10:
        head = head[:max(cells - 13, 10)] + "...) "
    where = "lobby"
    if model.screen == "match" and model.view is not None:
        mv = model.view
        where = f"{mv.game or '?'} {mv.match}" + ("" if mv.seat is not None else " (watching)")
    elif model.screen == "replay" and model.replay is not None:
        where = f"replay {model.replay.match}"
    parts = [where]
    if conn.state == "connected" and conn.rtt is not None:
        parts.append(f"rtt {conn.rtt * 1000:.0f} ms")
    parts += [model.name, conn.server]
    room = cells - width([("", head)]) - len(" ? help ")
    while parts and len("  ".join(parts)) + 2 > room:
        parts.pop()
    return [(state_style, head), ("class:status", f" {'  '.join(parts)}  ? help ")]


def hint_items(model: Model) -> list[Hint]:
    """The key reminders for the current screen, most useful first, ``? help`` last."""
    if model.overlay == "form":
        return [("Up/Down", "field"), ("Left/Right", "change"), ("Enter", "create"),
                ("Esc", "cancel"), ("?", "help")]
    if model.overlay == "legal":
        return [("number", "then Enter plays it"), ("Esc", "close"), ("?", "help")]
    if model.overlay == "chat":
        return [("Enter", "send"), ("Esc", "cancel"), ("", "at most 200 characters")]
    if model.overlay == "help":
        return [("Left/Right", "section"), ("Space", "next page"), ("Esc", "close")]
    if model.overlay == "details":
        return [("Enter", "open"), ("p", "replay"), ("Esc", "close"), ("?", "help")]
    if model.overlay == "ratings":
        return [("Left/Right", "game"), ("PgUp/PgDn", "page"), ("Enter", "profile"),
                ("Esc", "close")]
    if model.overlay == "history":
        return [("Up/Down", "choose"), ("Enter", "replay"), ("n", "older"),
                ("PgUp", "newer"), ("Esc", "close")]
    if model.screen == "replay":
        return [("Left/Right", "step"), ("Home/End", "start/end"), ("g", "go to move"),
                ("Space", "play/pause"), ("+/-", "speed"), ("v", "view as"), ("Esc", "back"),
                ("?", "help")]
    if model.screen == "lobby" or model.view is None:
        if not model.conn.connected_once and model.conn.state != "connected":
            return [("q", "quit"), ("Ctrl-C", "quit")]
        return lobby_view.hint_items(model)
    mv = model.view
    if mv.finished and not mv.end_closed:
        return [("r", "rematch"), ("p", "replay"), ("Tab", "lobby"), ("Esc", "board"),
                ("x", "leave"), ("?", "help")]
    if mv.seat is None:
        return [("Tab", "lobby"), ("x", "stop watching"), ("v", "stacks"), ("c", "chat"),
                ("PgUp/PgDn", "log"), ("Ctrl-C", "quit"), ("?", "help")]
    if mv.game == "war":
        return [("f", "flip"), ("a", "auto-flip"), ("+/-", "pace"), ("F", "fast-forward"),
                ("c", "chat"), ("Tab", "lobby"), ("x", "leave"), ("?", "help")]
    return [("1-9 h t o", "source"), ("1-3 s q k", "target"), ("e", "end"),
            ("m", "mulligan"), ("H", "hint"), ("v", "stacks"), ("l", "list"), ("c", "chat"),
            ("?", "help")]


def hint_line(model: Model, cells: int = 200) -> Line:
    """The one-line key reminder for the current screen, fitted to ``cells``."""
    return fit_hints(hint_items(model), cells)


def _log(model: Model) -> list[str]:
    mv = model.view
    return list(mv.log) if mv is not None else []


def body(model: Model, cells: int, rows: int, now: float | None = None) -> Block:
    """The main area (without overlays)."""
    if model.screen == "replay" and model.replay is not None:
        from client.tui import replay_view

        return replay_view.render_replay(model.replay, cells, rows, color=model.color, now=now)
    if model.screen == "lobby" or model.view is None:
        if not model.conn.connected_once and model.conn.state != "connected":
            return conn_view.render_connection(model, cells, rows, now)
        return lobby_view.render_lobby(model, cells, rows)
    mv = model.view
    snap = mv.snapshot
    if snap is None:
        return [text(f"match {mv.match}: waiting for its first snapshot...", "class:dim")]
    if mv.finished and not mv.end_closed:
        end = end_view.render_end(mv, cells, rows, fair=mv.fair)
        room = rows - len(end) - 1
        if room < 16:
            return end
        # room to spare (160x50): the final position under the end screen
        final = MatchView(mv.match, snapshot=snap)
        log = _log(model)
        board = war_view.render_war(final, cells, room, color=model.color, log=log,
                                    replay=True) if mv.game == "war" else \
            ds_view.render_ds(final, cells, room, color=model.color, log=log, replay=True) \
            if mv.game == "datastructures" else []
        return [*end, text(""), *board]
    if mv.game == "war":
        return war_view.render_war(mv, cells, rows, color=model.color, log=_log(model),
                                   now=now, log_scroll=model.log_scroll)
    if mv.game == "datastructures":
        return ds_view.render_ds(mv, cells, rows, color=model.color, selected=model.selection,
                                 cursor_index=model.cursor,
                                 mulligan_mode=model.mulligan_mode, log=_log(model),
                                 now=now, hint=model.hint, log_scroll=model.log_scroll)
    return [text(f"{mv.game}: this client cannot draw that game; l lists its legal moves")]


def help_sections(model: Model) -> list[str]:
    """The help's sections for the current screen: ``"keys"``, then the rules of the
    game on screen (both games' in the lobby), then the fair-shuffle page."""
    if model.screen == "match" and model.view is not None and model.view.game in rules.RULES:
        games = [str(model.view.game)]
    elif model.screen == "replay" and model.replay is not None and \
            model.replay.game in rules.RULES:
        games = [str(model.replay.game)]
    else:
        games = ["datastructures", "war"]
    return ["keys", *games, "fair"]


def help_pages(model: Model, rows: int, cells: int = 76) -> list[list[str]]:
    """The current help section, cut into pages that fit ``rows`` lines."""
    sections = help_sections(model)
    section = sections[model.help_section % len(sections)]
    if section == "keys":
        if model.screen == "replay":
            screens: tuple[str, ...] = ("any", "replay")
        elif model.screen == "lobby" or model.view is None:
            screens = ("any", "lobby")
        else:
            screens = ("any", "match", model.view.game or "datastructures")
        lines = keys.help_lines(screens)
    else:
        lines = rules.rules_lines(section, cells - 4)
    room = max(rows - 5, 3)
    return [lines[i:i + room] for i in range(0, len(lines), room)] or [[]]


SECTION_TITLES = {"keys": "Keys", "datastructures": "Rules: Data Structures",
                  "war": "Rules: War", "fair": "Fair shuffles"}


def overlay(model: Model, cells: int, rows: int) -> Block:
    """The overlay block (help, form, numbered moves, stacks, queue picker), or []."""
    box_cells = min(cells, 76)
    if model.overlay == "help":
        sections = help_sections(model)
        name = sections[model.help_section % len(sections)]
        pages = help_pages(model, rows, box_cells)
        page = pages[model.help_page % len(pages)]
        tabs = "  ".join(f"[{SECTION_TITLES[s]}]" if s == name else SECTION_TITLES[s]
                         for s in sections)
        more = (f"page {model.help_page % len(pages) + 1}/{len(pages)}, Space: more; "
                if len(pages) > 1 else "")
        footer = f"{more}Left/Right: another section; Esc closes"
        return boxed(SECTION_TITLES[name], [text(tabs, "class:dim"), text(""),
                                            *(text(x) for x in page),
                                            text(footer, "class:dim")], box_cells)
    if model.overlay == "details":
        return lobby_view.render_details(model, box_cells)
    if model.overlay == "ratings":
        return ratings_screen.render(model, box_cells, rows)
    if model.overlay == "history":
        return lobby_view.render_history(model, min(cells, 110))
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
        hinted = (model.hint or {}).get("intent") if (model.hint or {}).get("match") == mv.match \
            else None
        lines = [text(f"{'*' if intent == hinted else ' '}{i:>3}. "
                      f"{sel.describe_intent(intent, hand, mv.seat, model.color)}",
                      "class:target" if intent == hinted else "")
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
    screen.append(fit(text(model.notice_now(now), notice_style), cells))
    screen.append(fit(hint_line(model, cells), cells))
    screen.append(fit(status_line(model, cells, now), cells, "class:status"))
    return screen
