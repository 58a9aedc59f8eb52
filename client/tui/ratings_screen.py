"""The leaderboard and profile screens of cardclient: their state, keys and requests.

``L`` in the lobby opens the leaderboard of the first game (left/right: the other
game, PgUp/PgDn: pages, up/down and Enter: that player's profile), ``P`` opens
your own profile (PgUp/PgDn: pages of recent matches). Esc goes back (from a
profile opened on the leaderboard, to the leaderboard). Drawing is
:mod:`client.tui.ratings_view`; the screen lives in ``model.ratings`` while
``model.overlay`` is ``"ratings"``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from client.tui.layout import Block
from client.tui.model import Model
from client.tui.ratings_view import render_leaderboard, render_profile

BOARD_PAGE = 15
RECENT_PAGE = 8

Call = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]


@dataclass
class RatingsScreen:
    """One leaderboard or profile on screen.

    Attributes:
        kind: ``"leaderboard"`` or ``"profile"``.
        game: the leaderboard's game.
        name: the profile's name.
        offset: the page (entries or recent matches skipped).
        data: the server's answer (``{"game", "entries"}`` or a profile), None: loading.
        cursor: the highlighted leaderboard row.
        back: the leaderboard a profile was opened from.
    """

    kind: str
    game: str = ""
    name: str = ""
    offset: int = 0
    data: dict[str, Any] | None = None
    cursor: int = 0
    back: RatingsScreen | None = None

    def request(self) -> dict[str, Any]:
        """The request that loads this screen."""
        if self.kind == "leaderboard":
            return {"type": "leaderboard", "game": self.game, "limit": BOARD_PAGE,
                    "offset": self.offset}
        return {"type": "profile", "name": self.name, "limit": RECENT_PAGE,
                "offset": self.offset}


def open_leaderboard(model: Model) -> RatingsScreen | None:
    """Show the leaderboard of the first game; None when the game list is not in yet."""
    if not model.games:
        model.say("no game list yet; press r to refresh", error=True)
        return None
    model.ratings = RatingsScreen("leaderboard", game=str(model.games[0].get("name")))
    model.overlay = "ratings"
    return model.ratings


def open_profile(model: Model, name: str, back: RatingsScreen | None = None) -> RatingsScreen:
    """Show ``name``'s profile."""
    model.ratings = RatingsScreen("profile", name=name, back=back)
    model.overlay = "ratings"
    return model.ratings


async def load(model: Model, screen: RatingsScreen, call: Call) -> None:
    """Fetch ``screen``'s data (an error reply is shown in the notice line)."""
    reply = await call(screen.request())
    if reply is None or model.ratings is not screen:
        return
    if screen.kind == "leaderboard":
        screen.data = {"game": reply.get("game", screen.game),
                       "entries": list(reply.get("entries") or [])}
        screen.cursor = min(screen.cursor, max(len(screen.data["entries"]) - 1, 0))
    else:
        screen.data = dict(reply.get("profile") or {})


def handle_key(model: Model, key: str, reload: Callable[[RatingsScreen], None]) -> None:
    """Act on a key while a ratings screen is up; ``reload(screen)`` fetches it anew."""
    screen = model.ratings
    if not isinstance(screen, RatingsScreen) or key in ("escape", "q"):
        back = screen.back if isinstance(screen, RatingsScreen) else None
        model.ratings = back
        model.overlay = "ratings" if back is not None else None
        return
    page = BOARD_PAGE if screen.kind == "leaderboard" else RECENT_PAGE
    if key == "pagedown" and _has_more(screen, page):
        screen.offset += page
        screen.cursor = 0
    elif key == "pageup" and screen.offset > 0:
        screen.offset = max(screen.offset - page, 0)
        screen.cursor = 0
    elif screen.kind == "leaderboard" and key in ("left", "right") and model.games:
        names = [str(g.get("name")) for g in model.games]
        here = names.index(screen.game) if screen.game in names else 0
        screen.game = names[(here + (1 if key == "right" else -1)) % len(names)]
        screen.offset, screen.cursor = 0, 0
    elif screen.kind == "leaderboard" and key in ("up", "down"):
        entries = (screen.data or {}).get("entries") or []
        step = 1 if key == "down" else -1
        screen.cursor = min(max(screen.cursor + step, 0), max(len(entries) - 1, 0))
        return
    elif screen.kind == "leaderboard" and key == "enter":
        entries = (screen.data or {}).get("entries") or []
        if entries:
            reload(open_profile(model, str(entries[screen.cursor].get("name")), back=screen))
        return
    else:
        return
    screen.data = None
    reload(screen)


def _has_more(screen: RatingsScreen, page: int) -> bool:
    data = screen.data or {}
    if screen.kind == "leaderboard":
        return len(data.get("entries") or []) >= page
    return screen.offset + page < int(data.get("recent_total") or 0)


def render(model: Model, cells: int, rows: int) -> Block:
    """The ratings screen as an overlay block."""
    screen = model.ratings
    if not isinstance(screen, RatingsScreen):
        return []
    if screen.kind == "leaderboard":
        data = screen.data
        return render_leaderboard(None if data is None else {**data, "cursor": screen.cursor},
                                  cells, rows)
    return render_profile(screen.data, cells, rows)
