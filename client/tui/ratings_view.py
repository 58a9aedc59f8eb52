"""Ratings on screen: the leaderboard and profile screens, the rating next to a
name, and the rating change at the end of a rated match. Pure functions of the
server's ``leaderboard`` / ``profile`` replies and snapshots."""

from __future__ import annotations

from typing import Any

from client.tui.layout import Block, boxed, text


def rating_text(rating: Any, provisional: Any = False) -> str:
    """A rating as shown next to a name: ``1623`` or ``1500?`` (provisional)."""
    if not isinstance(rating, int | float):
        return ""
    return f"{rating:.0f}{'?' if provisional else ''}"


def player_label(player: dict[str, Any]) -> str:
    """A seat's name with its rating in brackets and a bot mark (a snapshot's
    ``players`` entry, or a match summary's)."""
    name = str(player.get("name") or "(open seat)")
    if player.get("account_bot") and "(bot)" not in name:
        name += " (bot)"
    shown = rating_text(player.get("rating"), player.get("provisional"))
    return f"{name} [{shown}]" if shown else name


def change_text(delta: float) -> str:
    """A rating change, signed: ``+12.3``, ``-4.0``, ``±0.0``."""
    if abs(delta) < 0.05:
        return "\u00b10.0"
    return f"{delta:+.1f}"


def rating_change_lines(result: dict[str, Any] | None, seat: int | None) -> list[str]:
    """The end-of-match lines about ratings, from a finished snapshot's ``result``.

    Empty for an unrated match; says so for an aborted rated one.
    """
    if not result or not result.get("rated"):
        return []
    changes = result.get("ratings")
    if not isinstance(changes, list) or not changes:
        return ["Rated match aborted (a seat made no move): ratings unchanged."]
    lines = []
    for change in changes:
        if not isinstance(change, dict):
            continue
        who = "You" if change.get("seat") == seat else str(change.get("name", "Opponent"))
        before, after = change.get("rating_before"), change.get("rating_after")
        if not isinstance(before, int | float) or not isinstance(after, int | float):
            continue
        lines.append(f"{who}: {before:.0f} -> {after:.0f} ({change_text(after - before)})")
    return lines


def render_leaderboard(board: dict[str, Any] | None, cells: int, rows: int) -> Block:
    """The leaderboard screen: ``board`` is ``{"game": ..., "entries": [...],
    "offset": n}`` as the client keeps the server's reply (None: still loading)."""
    if board is None:
        return boxed("Leaderboard", [text("(loading...)")], cells)[:rows]
    game = str(board.get("game", "?"))
    entries = board.get("entries") or []
    lines: Block = [text(f"{'#':>4}  {'name':<26} {'rating':>7} {'rd':>5} {'games':>5}  w/l/d",
                         "class:dim")]
    cursor = board.get("cursor")
    for i, e in enumerate(entries[:max(rows - 5, 1)]):
        name = str(e.get("name", "?")) + (" (bot)" if e.get("bot") else "")
        mark = "?" if e.get("provisional") else " "
        lines.append(text(
            f"{e.get('rank', 0):>4}  {name[:26]:<26} {float(e.get('rating', 0)):>7.1f}{mark}"
            f"{float(e.get('rd', 0)):>5.0f} {e.get('games', 0):>5}  "
            f"{e.get('wins', 0)}/{e.get('losses', 0)}/{e.get('draws', 0)}",
            "class:cursor" if i == cursor else ""))
    if not entries:
        lines.append(text("  (nobody has played a rated match of this game yet)"))
    lines.append(text(""))
    lines.append(text("? provisional (RD above 110)   left/right game  pgup/pgdn page  "
                      "Enter profile  Esc back", "class:dim"))
    return boxed(f"Leaderboard: {game}", lines, cells)[:rows]


def render_profile(profile: dict[str, Any] | None, cells: int, rows: int) -> Block:
    """The profile screen from a ``profile`` reply's ``profile`` map (None: loading)."""
    if profile is None:
        return boxed("Profile", [text("(loading...)")], cells)[:rows]
    name = str(profile.get("name", "?"))
    lines: Block = []
    if not profile.get("registered"):
        lines.append(text(f"{name} is a guest: no account, no ratings."))
    else:
        kind = "bot account" if profile.get("bot") else "account"
        lines.append(text(f"{name}  ({kind})", "class:title"))
        lines.append(text(""))
        lines.append(text(f"  {'game':<16} {'rating':>7} {'rd':>6} {'vol':>8} {'games':>5}  "
                          "w/l/d", "class:dim"))
        for game, r in sorted((profile.get("ratings") or {}).items()):
            mark = "?" if r.get("provisional") else " "
            lines.append(text(
                f"  {game:<16} {float(r.get('rating', 0)):>7.1f}{mark}"
                f"{float(r.get('rd', 0)):>5.1f} {float(r.get('volatility', 0)):>8.5f} "
                f"{r.get('games', 0):>5}  {r.get('wins', 0)}/{r.get('losses', 0)}/"
                f"{r.get('draws', 0)}"))
        lines.append(text(""))
        total = int(profile.get("recent_total") or 0)
        recent = profile.get("recent") or []
        lines.append(text(f"Recent matches ({total}):", "class:title"))
        for m in recent:
            change = ""
            if m.get("rated") and isinstance(m.get("rating_change"), int | float):
                change = f"  {change_text(float(m['rating_change']))}"
            lines.append(text(f"  {str(m.get('match', '?')):<12} {str(m.get('game', '')):<14} "
                              f"{str(m.get('result', '?')):<5} vs {m.get('opponent') or '?'}"
                              f"{change}"))
        if not recent:
            lines.append(text("  (none yet)"))
    lines.append(text(""))
    lines.append(text("pgup/pgdn page  Esc back", "class:dim"))
    return boxed(f"Profile: {name}", lines, cells)[:rows]
