"""The lobby screen as a pure function of the model: games, matches, queues, the
details of one match, the create form and the matchmaking picker."""

from __future__ import annotations

import textwrap
import time
from typing import Any

from client.tui import form as form_fns
from client.tui.layout import Block, boxed, text
from client.tui.model import Model, has_open_seat
from client.tui.ratings_view import rating_text
from engine import notation

GAME_TITLES = {"datastructures": "Data Structures", "war": "War"}


def _player(p: dict[str, Any], running: bool = True) -> str:
    if p.get("name"):
        name = str(p["name"])
        if p.get("bot") and "bot" not in name:
            name += f" (bot {p['bot']})"
        if p.get("account_bot"):
            name += " (bot)"
        if "rating" in p:
            name += f" ({rating_text(p['rating'], p.get('provisional'))})"
        if running and not p.get("connected", True) and not p.get("bot"):
            name += " (away)"
        return name
    if p.get("bot"):
        return f"bot:{p['bot']}"
    return "(open seat)"


def _players(summary: dict[str, Any]) -> str:
    running = summary.get("status") != "finished"  # nobody is "away" from a finished match
    return " vs ".join(_player(p, running) for p in summary.get("players") or []) or "-"


def _names(summary: dict[str, Any]) -> dict[int, str]:
    out: dict[int, str] = {}
    for p in summary.get("players") or []:
        if isinstance(p.get("seat"), int):
            out[p["seat"]] = str(p.get("name") or (f"bot:{p['bot']}" if p.get("bot") else
                                                    f"seat {p['seat'] + 1}"))
    return out


def status_words(summary: dict[str, Any]) -> str:
    """``open``, ``waiting``, ``running``, or who won a finished match."""
    status = str(summary.get("status", "?"))
    if status == "waiting":
        return "open" if has_open_seat(summary) else "waiting"
    if status == "active":
        return "running"
    if status == "finished":
        result = summary.get("result")
        if isinstance(result, dict):
            winner = result.get("winner")
            return "draw" if winner is None else \
                f"{notation.seat_name(winner, _names(summary))} won"
        return "over"
    return status


def option_words(game: str | None, options: Any) -> str:
    """A match's options in words (``won cards go back: shuffled first, battle cap: 500``)."""
    if not isinstance(options, dict):
        return ""
    return ", ".join(f"{form_fns.option_label(game, k)}: {form_fns.value_label(game, k, v)}"
                     for k, v in sorted(options.items()))


def id_width(rows: list[dict[str, Any]]) -> int:
    """Cells for the match id column: the longest id shown (ids are never cut)."""
    return max([len(str(r.get("match", ""))) for r in rows] + [5])


def status_width(rows: list[dict[str, Any]]) -> int:
    """Cells for the status column (who won can be long; at most 24)."""
    return min(max([len(status_words(r)) for r in rows] + [7]), 24)


def match_row(summary: dict[str, Any], cells: int, ids: int = 11, statuses: int = 10) -> str:
    """One match as one line of the lobby table; the whole id, always."""
    watchers = summary.get("spectators") or 0
    eye = f" +{watchers} watching" if watchers else ""
    rated = " [rated]" if summary.get("rated") else ""
    game = GAME_TITLES.get(str(summary.get("game")), str(summary.get("game", "?")))
    row = (f"{str(summary.get('match', '?')):<{ids}} {game:<15} "
           f"{status_words(summary)[:statuses]:<{statuses}} {_players(summary)}{rated}{eye}")
    opts = option_words(summary.get("game"), summary.get("options"))
    if opts and len(row) + len(opts) + 3 < cells:
        row += f"  [{opts}]"
    return row


def render_lobby(model: Model, cells: int, rows: int) -> Block:
    """The lobby body, ``cells`` wide and at most ``rows`` lines."""
    out: Block = []
    games = ", ".join(str(g.get("name")) for g in model.games) or "(loading...)"
    out.append(text(f"Games: {games}", "class:title"))
    queue_bits = [f"{g}: {n} waiting" for g, n in sorted(model.queues.items())]
    table_rows = model.lobby_rows()
    waiting = sum(1 for m in table_rows if has_open_seat(m))
    line = f"Matchmaking: {', '.join(queue_bits) or 'nobody waiting'}    Open matches: {waiting}"
    out.append(text(line))
    if model.queued:
        out.append(text(f"You are queued for {model.queued}; waiting for an opponent "
                        "(u: leave the queue)", "class:notice"))
    else:
        out.append(text(""))
    ids, statuses = id_width(table_rows), status_width(table_rows)
    header = f"   {'match':<{ids}} {'game':<15} {'status':<{statuses}} players   (* yours)"
    body: Block = [text(header, "class:dim")]
    if not table_rows:
        body.append(text("  (no matches yet: press c to create one, m to queue)"))
    cursor = min(model.lobby_cursor, max(len(table_rows) - 1, 0))
    room = max(rows - len(out) - 4, 1)
    start = max(0, min(cursor - room // 2, len(table_rows) - room))
    for i, summary in enumerate(table_rows[start:start + room], start):
        mark = ">" if i == cursor else " "
        mark += "*" if str(summary.get("match")) in model.views else " "
        style = "class:cursor" if i == cursor else ""
        body.append(text(f"{mark} {match_row(summary, cells - 5, ids, statuses)}", style))
    out.extend(boxed("Matches", body, cells))
    return out[:rows]


def selected_summary(model: Model) -> dict[str, Any] | None:
    """The match under the lobby cursor, or None."""
    rows = model.lobby_rows()
    return rows[min(model.lobby_cursor, len(rows) - 1)] if rows else None


def _when(ts: Any) -> str:
    if not isinstance(ts, (int, float)) or isinstance(ts, bool):
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def details_lines(summary: dict[str, Any], cells: int) -> list[str]:
    """The details of one match, in words, wrapped to ``cells``."""
    game = summary.get("game")
    out = [f"match       {summary.get('match')}",
           f"game        {GAME_TITLES.get(str(game), str(game))}",
           f"status      {status_words(summary)}"]
    opts = option_words(game, summary.get("options")) or "defaults"
    out += textwrap.wrap(f"options     {opts}", cells, subsequent_indent=" " * 12)
    for p in summary.get("players") or []:
        out.append(f"seat {notation.number(p.get('seat'))}      {_player(p)}")
    out.append(f"spectators  {summary.get('spectators') or 0}")
    out.append(f"created     {_when(summary.get('created'))}")
    if summary.get("started") is not None:
        out.append(f"started     {_when(summary.get('started'))}")
    if summary.get("finished") is not None:
        out.append(f"finished    {_when(summary.get('finished'))}")
    out.append(f"moves       {summary.get('seq', 0)}")
    result = summary.get("result")
    if isinstance(result, dict):
        why = notation.result_words(str(game), result, None, _names(summary))
        out += textwrap.wrap(f"result      {why}", cells, subsequent_indent=" " * 12)
    return out


def render_details(model: Model, cells: int) -> Block:
    """The details overlay of the match under the lobby cursor."""
    summary = selected_summary(model)
    if summary is None:
        return boxed("Match details", [text("no match selected")], cells)
    lines = [text(x) for x in details_lines(summary, cells - 4)]
    lines.append(text(""))
    lines.append(text("Enter open/join/watch   p replay (finished)   Esc close", "class:dim"))
    return boxed("Match details", lines, cells)


def render_history(model: Model, cells: int) -> Block:
    """The finished matches overlay (one page of ``records``)."""
    lines: Block = []
    if not model.history:
        lines.append(text("no finished matches stored yet"))
    rows = model.history
    ids, statuses = id_width(rows), status_width(rows)
    for i, summary in enumerate(rows):
        mark = "> " if i == model.history_cursor else "  "
        when = _when(summary.get("finished"))[5:16]
        style = "class:cursor" if i == model.history_cursor else ""
        lines.append(text(f"{mark}{when} {match_row(summary, cells - 20, ids, statuses)}",
                          style))
    page = len(model.history_pages)
    more = "  n older" if model.history_next else ""
    back = "  PgUp newer" if page > 1 else ""
    lines.append(text(f"page {page}{more}{back}   Enter replay   Esc close", "class:dim"))
    return boxed("Finished matches", lines, cells)


def render_form(model: Model, cells: int) -> Block:
    """The create-match form as an overlay block; the focused field's description is
    wrapped at word boundaries, never cut."""
    form = model.form
    if form is None:
        return []
    lines: Block = []
    labels = max(len(f["label"]) for f in form.fields)
    for i, field in enumerate(form.fields):
        mark = "> " if i == form.focus else "  "
        style = "class:cursor" if i == form.focus else ""
        value = form_fns.show_value(form, i)
        lines.append(text(f"{mark}{field['label']:<{labels}}  < {value} >", style))
    focused = form.fields[form.focus]
    lines.append(text(""))
    for part in textwrap.wrap(form_fns.doc_words(focused), cells - 4) or [""]:
        lines.append(text(part, "class:dim"))
    lines.append(text("Up/Down field  Left/Right change  digits type  Enter create  "
                      "Esc cancel", "class:dim"))
    return boxed("Create a match", lines, cells)


def render_queue_picker(model: Model, cells: int) -> Block:
    """The matchmaking game picker as an overlay block."""
    lines: Block = []
    for i, g in enumerate(model.games):
        mark = "> " if i == model.queue_pick else "  "
        name = str(g.get("name"))
        n = model.queues.get(name, 0)
        lines.append(text(f"{mark}{GAME_TITLES.get(name, name)}  ({n} waiting)",
                          "class:cursor" if i == model.queue_pick else ""))
    lines.append(text("Up/Down choose  Enter queue  Esc cancel", "class:dim"))
    return boxed("Queue for matchmaking", lines, cells)


def hint_items(model: Model) -> list[tuple[str, str]]:
    """The key reminders for the lobby, most useful first."""
    return [("c", "create"), ("Enter", "open"), ("i", "details"), ("m", "queue"),
            ("h", "history"), ("L", "leaderboard"), ("P", "profile"), ("w", "watch"),
            ("p", "replay"), ("u", "unqueue"), ("r", "refresh"), ("q", "quit"), ("?", "help")]
