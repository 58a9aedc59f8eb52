"""The replay viewer's state: a finished match's public record, fetched page by page.

The server serves a finished match through the ``record`` request (see
docs/protocol.md): a header (game, options, players, commitment, reveal,
result, the opening view) and its moves, each with the projected events and
the view after it, as a spectator saw them, or, for a seat the session played,
as that seat saw them (the server's projection decides, never the client).
:class:`Replay` holds the pages fetched so far and the position on screen;
the controller fetches missing pages and drives playback.

Position 0 is the opening position; position ``k`` is the match after its
``k``-th move (seq ``k``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Moves asked for per ``record`` request.
PAGE = 50
#: Playback speeds, moves per second.
SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)


@dataclass
class Replay:
    """One match in the replay viewer."""

    match: str
    seat: int | None = None  # whose eyes: None is a spectator's
    header: dict[str, Any] = field(default_factory=dict)
    moves: dict[int, dict[str, Any]] = field(default_factory=dict)  # seq -> move
    total: int = 0  # moves in the match
    position: int = 0
    playing: bool = False
    speed: float = 2.0
    goto_input: str | None = None  # digits typed after g; None when not typing
    loading: bool = False
    error: str = ""
    back_to: str = "lobby"  # the screen Esc returns to ("lobby" or "match")
    own_seats: tuple[int, ...] = ()  # seats the server says this session played

    @property
    def game(self) -> str | None:
        """The match's game, once the header arrived."""
        return self.header.get("game")

    def move(self, seq: int) -> dict[str, Any] | None:
        """Move ``seq`` (1-based) if fetched."""
        return self.moves.get(seq)

    def view_at(self, position: int) -> dict[str, Any] | None:
        """The view after ``position`` moves (0: the opening), if fetched."""
        if position <= 0:
            return self.header.get("start")
        move = self.moves.get(position)
        return move.get("view") if move else None

    def missing_page(self, position: int) -> int | None:
        """The offset of the page to fetch so ``position`` can be drawn, or None."""
        if position <= 0 or position in self.moves:
            return None
        return ((position - 1) // PAGE) * PAGE

    def clamp(self, position: int) -> int:
        """``position`` within 0..total."""
        return max(0, min(position, self.total))

    def faster(self) -> None:
        """The next higher speed."""
        self.speed = next((s for s in SPEEDS if s > self.speed), SPEEDS[-1])

    def slower(self) -> None:
        """The next lower speed."""
        self.speed = next((s for s in reversed(SPEEDS) if s < self.speed), SPEEDS[0])

    def take(self, record: dict[str, Any]) -> None:
        """Fold one ``record`` reply's page into the state."""
        self.header = {k: v for k, v in record.items() if k != "moves"} or self.header
        self.total = int(record.get("total") or 0)
        for move in record.get("moves") or []:
            if isinstance(move, dict) and isinstance(move.get("seq"), int):
                self.moves[move["seq"]] = move
        own = record.get("own_seats")
        if isinstance(own, list):
            self.own_seats = tuple(s for s in own if isinstance(s, int))
