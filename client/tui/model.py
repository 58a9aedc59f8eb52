"""The client's model: everything the screens draw, and nothing else.

The model is plain data. Messages from the server are folded into it by
:func:`apply_message` (a pure reducer: no I/O, no clock but the one passed in);
key presses change its UI fields through the presenter (``controller.py``).
Drawing reads it and never changes it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from client.tui import events as event_text
from client.tui.fair import shuffle_line
from client.tui.ratings_view import rating_change_lines, rating_text

#: How many log lines a match keeps.
LOG_LINES = 300


@dataclass
class Connection:
    """What the status line says about the link to the server."""

    state: str = "connecting"  # connecting | connected | reconnecting | closed
    server: str = ""
    detail: str = ""  # e.g. "retry 2 in 1.5 s", or the reason for closing
    rtt: float | None = None  # seconds


@dataclass
class MatchView:
    """One match the client sits in or watches: its newest snapshot and its log."""

    match: str
    snapshot: dict[str, Any] | None = None
    log: deque[str] = field(default_factory=lambda: deque(maxlen=LOG_LINES))
    pending: bool = False  # an intent was sent and not yet answered
    received: float | None = None  # monotonic time the newest snapshot arrived

    @property
    def seat(self) -> int | None:
        """Own seat (None: a spectator or not known yet)."""
        return self.snapshot.get("seat") if self.snapshot else None

    @property
    def game(self) -> str | None:
        """The game's name, once a snapshot arrived."""
        return self.snapshot.get("game") if self.snapshot else None

    def time_left(self, now: float | None) -> float | None:
        """Seconds left on the turn timer at monotonic time ``now`` (None: no timer).

        The snapshot's ``deadline`` counts from when it arrived; without ``now`` it is
        returned as it came."""
        if not self.snapshot or self.snapshot.get("deadline") is None:
            return None
        left = float(self.snapshot["deadline"])
        if now is not None and self.received is not None:
            left -= now - self.received
        return max(left, 0.0)

    @property
    def legal(self) -> list[dict[str, Any]]:
        """The newest snapshot's legal intents (empty when none or not active)."""
        if not self.snapshot or self.snapshot.get("status") != "active":
            return []
        return list(self.snapshot.get("legal") or [])


@dataclass
class CreateForm:
    """The "create a match" form: one field focused, values edited in place."""

    game: str
    fields: list[dict[str, Any]]  # {name, kind, value, choices?, min?, max?, doc, label}
    focus: int = 0
    typed: str = ""  # digits typed into an int field, not yet committed


@dataclass
class Model:
    """Everything on screen."""

    name: str = ""
    color: bool = True
    conn: Connection = field(default_factory=Connection)
    games: list[dict[str, Any]] = field(default_factory=list)
    matches: list[dict[str, Any]] = field(default_factory=list)
    queues: dict[str, int] = field(default_factory=dict)
    queued: str | None = None  # the game this client queues for
    screen: str = "lobby"  # lobby | match
    current: str | None = None  # the match on screen
    views: dict[str, MatchView] = field(default_factory=dict)
    left: set[str] = field(default_factory=set)  # matches we left: late snapshots are dropped
    notice: str = ""  # the last error or message, in words
    notice_error: bool = False
    overlay: str | None = None  # None | help | stacks | legal | form
    lobby_cursor: int = 0
    form: CreateForm | None = None
    selection: tuple[Any, ...] | None = None  # the chosen DS source
    cursor: int = 0  # the highlighted choice among sources (or targets, once selected)
    log_scroll: int = 0  # log lines scrolled back from the newest
    help_page: int = 0  # the help overlay's page
    mulligan_mode: bool = False  # "m" pressed: the next digit names the card to keep
    confirm_leave: bool = False  # "x" pressed on a running seat: the next "x" resigns
    legal_input: str = ""  # digits typed in the numbered list
    chat_input: str = ""  # the chat line being typed
    queue_pick: int = 0  # game index for matchmaking picker
    quitting: bool = False
    confirm_quit: bool = False  # "q" pressed while seated: the next "q" quits
    ratings: Any = None  # the leaderboard / profile screen's state (ratings_screen)
    size: tuple[int, int] = (80, 24)  # the terminal's cells and rows at the last draw

    # -- derived -----------------------------------------------------------------

    def seated_matches(self) -> list[str]:
        """The matches this client holds a seat in that are not over yet."""
        return sorted(m for m, mv in self.views.items()
                      if mv.seat is not None and mv.snapshot is not None
                      and mv.snapshot.get("status") != "finished")

    @property
    def view(self) -> MatchView | None:
        """The match on screen, if any."""
        return self.views.get(self.current) if self.current else None

    def lobby_rows(self) -> list[dict[str, Any]]:
        """The matches listed in the lobby, in display order: waiting first, then active."""
        order = {"waiting": 0, "active": 1, "finished": 2}
        return sorted(self.matches, key=lambda m: (order.get(m.get("status"), 3),
                                                   -float(m.get("created") or 0)))

    def say(self, text: str, *, error: bool = False) -> None:
        """Show ``text`` in the notice line (an error in words, or a plain message)."""
        self.notice = text
        self.notice_error = error


def away(snapshot: dict[str, Any], seat: int) -> bool:
    """True when ``seat``'s player is disconnected (a bot never is)."""
    for p in snapshot.get("players") or []:
        if p.get("seat") == seat:
            return p.get("connected") is False and not p.get("bot")
    return False


def player_names(snapshot: dict[str, Any]) -> dict[int, str]:
    """Seat -> display name for a snapshot's players (bots and open seats named too)."""
    out: dict[int, str] = {}
    for p in snapshot.get("players") or []:
        seat = p.get("seat")
        if not isinstance(seat, int):
            continue
        if p.get("name"):
            out[seat] = str(p["name"])
            if p.get("account_bot"):  # a bot's account, shown as one
                out[seat] += " (bot)"
            if "rating" in p:  # a rated match: the rating next to the name
                out[seat] += f" ({rating_text(p['rating'], p.get('provisional'))})"
        elif p.get("bot"):
            out[seat] = f"bot:{p['bot']}"
        else:
            out[seat] = "(open)"
    return out


def apply_message(model: Model, msg: dict[str, Any], now: float | None = None) -> None:
    """Fold one pushed server message into the model.

    ``now`` (a monotonic time) stamps a snapshot, so its turn timer can count down.

    Handles ``snapshot``, ``presence``, ``chat``, ``bye`` and unsolicited ``error``;
    ignores unknown types (as the protocol asks of clients). Never raises on a
    message with missing fields: what cannot be read is skipped.
    """
    kind = msg.get("type")
    if kind == "snapshot":
        _apply_snapshot(model, msg, now)
    elif kind == "presence":
        mv = model.views.get(str(msg.get("match")))
        if mv is not None:
            mv.log.append(event_text.describe_presence(msg))
            if mv.snapshot is not None:
                for p in mv.snapshot.get("players") or []:
                    if p.get("seat") == msg.get("seat"):
                        p["connected"] = bool(msg.get("connected"))
    elif kind == "chat":
        mv = model.views.get(str(msg.get("match")))
        if mv is not None:
            mv.log.append(f"<{msg.get('name') or 'someone'}> {msg.get('text', '')}")
    elif kind == "bye":
        model.say(f"server closed the connection: {msg.get('message') or msg.get('reason')}",
                  error=True)
    elif kind == "error":
        model.say(error_words(msg), error=True)


def _apply_snapshot(model: Model, msg: dict[str, Any], now: float | None = None) -> None:
    match = str(msg.get("match"))
    if match in model.left:
        return
    mv = model.views.get(match)
    if mv is None:
        mv = model.views[match] = MatchView(match)
    old = mv.snapshot
    first = old is None
    if old is not None and msg.get("seq", 0) < old.get("seq", 0):
        return  # an older snapshot arriving late: keep the newer one
    repeat = old is not None and msg.get("seq") == old.get("seq") \
        and msg.get("status") == old.get("status")
    mv.snapshot = msg
    mv.received = now
    names = player_names(msg)
    if not repeat:  # a resumed connection re-sends the same snapshot: log it once
        mv.log.extend(event_text.describe_events(
            str(msg.get("game")), msg.get("events") or [], msg.get("seat"), names))
    if first:
        mv.log.append(event_text.describe_start(msg, names))
    if msg.get("status") == "finished" and (old is None or old.get("status") != "finished"):
        mv.log.append(event_text.describe_result(msg, names))
        rating_lines = rating_change_lines(msg.get("result"), msg.get("seat"))
        mv.log.extend(rating_lines)
        mine = [line for line in rating_lines if line.startswith(("You:", "Rated match"))]
        if mine:
            model.say(f"{msg.get('game')} rating: {mine[0].removeprefix('You: ')}")
        check = shuffle_line(msg)
        if check:
            mv.log.append(check)
    if model.queued and msg.get("game") == model.queued and first:
        model.queued = None  # matchmaking paired us
    if first and (model.current is None or model.screen == "lobby"):
        model.current = match
        model.screen = "match"
        model.selection = None
    elif first and model.current != match:
        model.say(f"{msg.get('game')} match {match} has a seat for you: "
                  "Tab to the lobby, then Enter on it")
    if model.current == match:
        model.selection = None if msg.get("seq") != (old or {}).get("seq") else model.selection
        mv.pending = False


def error_words(msg: dict[str, Any]) -> str:
    """An ``error`` reply in words: its message, with the code in brackets."""
    code = msg.get("code") or "error"
    text = msg.get("message") or code.replace("_", " ")
    extra = f" (field {msg['field']})" if msg.get("field") else ""
    return f"{text}{extra} [{code}]"
