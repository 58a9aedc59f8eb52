"""The lobby screen as a pure function of the model: games, matches, queues."""

from __future__ import annotations

from typing import Any

from client.tui import form as form_fns
from client.tui.layout import Block, Line, boxed, fit, text
from client.tui.model import Model
from client.tui.ratings_view import rating_text


def _players(summary: dict[str, Any]) -> str:
    parts = []
    for p in summary.get("players") or []:
        if p.get("name"):
            name = str(p["name"])
            if p.get("bot") and "bot" not in name:
                name += f" (bot {p['bot']})"
            if p.get("account_bot"):
                name += " (bot)"
            if "rating" in p:
                name += f" ({rating_text(p['rating'], p.get('provisional'))})"
            if not p.get("connected", True):
                name += " (away)"
        elif p.get("bot"):
            name = f"bot:{p['bot']}"
        else:
            name = "(open seat)"
        parts.append(name)
    return " vs ".join(parts) or "-"


def _options(summary: dict[str, Any]) -> str:
    opts = summary.get("options") or {}
    return ", ".join(f"{k}={v}" for k, v in sorted(opts.items())) if isinstance(opts, dict) else ""


def match_row(summary: dict[str, Any], cells: int) -> str:
    """One match as one line of the lobby table."""
    status = str(summary.get("status", "?"))
    label = {"waiting": "open", "active": "running"}.get(status, status)
    watchers = summary.get("spectators") or 0
    eye = f" +{watchers} watching" if watchers else ""
    rated = " [rated]" if summary.get("rated") else ""
    row = (f"{str(summary.get('match', '?'))[:10]:<10} {str(summary.get('game', '?')):<14} "
           f"{label:<8} {_players(summary)}{rated}{eye}")
    opts = _options(summary)
    if opts and len(row) + len(opts) + 3 < cells:
        row += f"  [{opts}]"
    return row


def render_lobby(model: Model, cells: int, rows: int) -> Block:
    """The lobby body, ``cells`` wide and at most ``rows`` lines."""
    out: Block = []
    games = ", ".join(str(g.get("name")) for g in model.games) or "(loading...)"
    out.append(text(f"Games: {games}", "class:title"))
    queue_bits = [f"{g}: {n} waiting" for g, n in sorted(model.queues.items())]
    waiting = sum(1 for m in model.matches if m.get("status") == "waiting")
    line = f"Matchmaking: {', '.join(queue_bits) or 'nobody waiting'}    Open matches: {waiting}"
    out.append(text(line))
    if model.queued:
        out.append(text(f"You are queued for {model.queued}; waiting for an opponent "
                        "(u: leave the queue)", "class:notice"))
    else:
        out.append(text(""))
    table_rows = model.lobby_rows()
    header = f"   {'match':<10} {'game':<14} {'status':<8} players   (* yours)"
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
        body.append(text(f"{mark} {match_row(summary, cells - 5)}", style))
    out.extend(boxed("Matches", body, cells))
    return out[:rows]


def render_form(model: Model, cells: int) -> Block:
    """The create-match form as an overlay block."""
    form = model.form
    if form is None:
        return []
    lines: Block = []
    for i, field in enumerate(form.fields):
        mark = "> " if i == form.focus else "  "
        style = "class:cursor" if i == form.focus else ""
        value = form_fns.show_value(form, i)
        lines.append(text(f"{mark}{field['label']:<16} < {value} >", style))
    focused = form.fields[form.focus]
    lines.append(text(""))
    lines.append(text(str(focused.get("doc", "")), "class:dim"))
    lines.append(text("up/down field  left/right change  digits type  Enter create  Esc cancel",
                      "class:dim"))
    return boxed("Create a match", lines, cells)


def render_queue_picker(model: Model, cells: int) -> Block:
    """The matchmaking game picker as an overlay block."""
    lines: Block = []
    for i, g in enumerate(model.games):
        mark = "> " if i == model.queue_pick else "  "
        n = model.queues.get(str(g.get("name")), 0)
        lines.append(text(f"{mark}{g.get('name')}  ({n} waiting)",
                          "class:cursor" if i == model.queue_pick else ""))
    lines.append(text("up/down choose  Enter queue  Esc cancel", "class:dim"))
    return boxed("Queue for matchmaking", lines, cells)


def hint_line(model: Model) -> Line:
    """The one-line key reminder for the lobby."""
    return fit(text("c create  j join  w watch  m queue  u unqueue  r refresh  "
                    "Enter open  ? help  q quit", "class:dim"), 200)
