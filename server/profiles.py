"""Profiles and leaderboards as the protocol sends them, built from the store.

Synchronous and without side effects: each function reads the store and returns
the wire value (plain maps, lists, numbers and strings), so the lobby only adds
the ``ok`` around it and ``cardserver leaderboard`` prints the same rows.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from engine.core import RuleError
from engine.registry import get_game
from server.names import name_key
from server.store import AccountRecord, LeaderboardRow, RecentMatch, Standing, Store, StoreError

DEFAULT_RECENT = 10
MAX_RECENT = 50
DEFAULT_BOARD = 20
MAX_BOARD = 100


def player_extras(store: Store, account: AccountRecord | None, game: str,
                  rated: bool) -> dict[str, Any] | None:
    """What a seat's player map adds for an account: ``registered``, ``account_bot``
    and, in a rated match, its ``rating`` in the game now and ``provisional``.
    None for a guest."""
    if account is None:
        return None
    extras: dict[str, Any] = {"registered": True, "account_bot": account.bot}
    if rated:
        rating = store.standing(account.id, game).rating
        extras["rating"] = rating.rating
        extras["provisional"] = rating.provisional
    return extras


def standing_wire(standing: Standing) -> dict[str, Any]:
    """One game's rating as ``profile.ratings[game]`` carries it."""
    r = standing.rating
    return {"rating": r.rating, "rd": r.rd, "volatility": r.volatility,
            "games": standing.games, "wins": standing.wins, "losses": standing.losses,
            "draws": standing.draws, "provisional": r.provisional}


def recent_wire(recent: RecentMatch) -> dict[str, Any]:
    """One of ``profile.recent``: a finished match from the account's side."""
    entry: dict[str, Any] = {"match": recent.match, "game": recent.game, "seat": recent.seat,
                             "opponent": recent.opponent, "result": recent.result,
                             "reason": recent.reason, "finished": recent.finished,
                             "rated": recent.change is not None}
    if recent.change is not None:
        entry["rating_before"] = recent.change.before.rating
        entry["rating_after"] = recent.change.after.rating
        entry["rating_change"] = recent.change.delta
    return entry


def profile(store: Store, name: str, games: Iterable[str], limit: int = DEFAULT_RECENT,
            offset: int = 0) -> dict[str, Any]:
    """The ``profile`` of ``name``: its account's ratings in every game (initial values
    for a game it never played rated) and a page of its recent matches.

    A name no account has is a guest's: ``registered`` false, no ratings, no matches.

    Args:
        games: every game the server offers (each gets a ``ratings`` entry).
        limit, offset: the page of ``recent`` (newest first); ``recent_total`` counts all.
    """
    account = store.find_account(name_key(name))
    if account is None:
        return {"name": name, "registered": False, "bot": False, "ratings": {},
                "recent": [], "recent_total": 0}
    stored = store.standings(account.id)
    ratings = {game: standing_wire(stored.get(game, Standing())) for game in games}
    recent, total = store.recent_matches(account.id, limit, offset)
    return {"name": account.name, "registered": True, "bot": account.bot,
            "ratings": ratings, "recent": [recent_wire(r) for r in recent],
            "recent_total": total}


def board_entry(row: LeaderboardRow) -> dict[str, Any]:
    """One of ``leaderboard``'s ``entries``."""
    r = row.standing.rating
    return {"rank": row.rank, "name": row.name, "rating": r.rating, "rd": r.rd,
            "games": row.standing.games, "wins": row.standing.wins,
            "losses": row.standing.losses, "draws": row.standing.draws,
            "provisional": r.provisional, "bot": row.bot}


def leaderboard(store: Store, game: str, limit: int = DEFAULT_BOARD,
                offset: int = 0) -> list[dict[str, Any]]:
    """``leaderboard`` entries of ``game``, best first: every account with at least one
    rated match of it (provisional ones included, marked so)."""
    return [board_entry(row) for row in store.leaderboard(game, limit, offset)]


def board_text(entries: list[dict[str, Any]]) -> str:
    """The leaderboard as a plain-text table (``cardserver leaderboard``)."""
    lines = [f"{'rank':>4}  {'name':<32} {'rating':>7} {'rd':>6} {'games':>5}  w/l/d"]
    for e in entries:
        mark = "?" if e["provisional"] else " "
        name = e["name"] + (" (bot)" if e["bot"] else "")
        lines.append(f"{e['rank']:>4}  {name:<32} {e['rating']:>7.1f}{mark}{e['rd']:>6.1f} "
                     f"{e['games']:>5}  {e['wins']}/{e['losses']}/{e['draws']}")
    if not entries:
        lines.append("(no rated matches yet)")
    else:
        lines.append("? provisional: RD above 110")
    return "\n".join(lines)


def leaderboard_command(game: str, db: str, limit: int, as_json: bool,
                        out: TextIO | None = None) -> int:
    """Run ``cardserver leaderboard GAME``: print the game's leaderboard from the store
    (a running server's unless it runs with ``--store-lock exclusive``). Returns the
    exit status (1: no such game, no store, or a store a running server holds)."""
    out = out or sys.stdout
    try:
        game = get_game(game).name
    except RuleError as exc:
        print(f"cardserver leaderboard: {exc}", file=sys.stderr)
        return 1
    if db != ":memory:" and not Path(db).exists():
        print(f"cardserver leaderboard: no store at {db}", file=sys.stderr)
        return 1
    try:
        store = Store(db)
    except StoreError as exc:
        print(f"cardserver leaderboard: {exc}", file=sys.stderr)
        return 1
    try:
        entries = leaderboard(store, game, limit)
    finally:
        store.close()
    if as_json:
        json.dump({"game": game, "entries": entries}, out)
        out.write("\n")
    else:
        print(f"Leaderboard: {game}", file=out)
        print(board_text(entries), file=out)
    return 0
