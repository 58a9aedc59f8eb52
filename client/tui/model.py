"""The client's model: everything the screens draw, and nothing else.

The model is plain data. Messages from the server are folded into it by
:func:`apply_message` (a pure reducer: no I/O, no clock but the one passed in);
key presses change its UI fields through the presenter (``controller.py``).
Drawing reads it and never changes it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from client.tui import events as event_text
from client.tui import rematch
from client.tui.fair import FairCheck, check, shuffle_line
from client.tui.ratings_view import rating_change_lines, rating_text

#: How many log lines a match keeps.
LOG_LINES = 300
#: Seconds a plain notice stays on screen; an error's.
NOTICE_SECONDS, ERROR_SECONDS = 8.0, 30.0
#: A turn timer at or under this many seconds is drawn as a warning.
WARN_SECONDS = 10.0


@dataclass
class Connection:
    """What the status line says about the link to the server."""

    state: str = "connecting"  # connecting | connected | reconnecting | closed
    server: str = ""
    detail: str = ""  # e.g. "refused", or the reason for closing
    rtt: float | None = None  # seconds
    failure: str = ""  # what failed last, in words ("refused: nothing listens on ...")
    kind: str = ""  # refused | unknown_host | tls | timeout | unreachable | closed | other
    retry_at: float | None = None  # monotonic time of the next attempt
    attempt: int = 0  # failed attempts in a row
    connected_once: bool = False  # a welcome was ever received

    def retry_in(self, now: float | None) -> float | None:
        """Seconds until the next attempt (None: no attempt is scheduled)."""
        if self.retry_at is None:
            return None
        return max(self.retry_at - now, 0.0) if now is not None else None


@dataclass
class MatchView:
    """One match the client sits in or watches: its newest snapshot and its log."""

    match: str
    snapshot: dict[str, Any] | None = None
    log: deque[str] = field(default_factory=lambda: deque(maxlen=LOG_LINES))
    pending: bool = False  # an intent was sent and not yet answered
    received: float | None = None  # monotonic time the newest snapshot arrived
    first_view: dict[str, Any] | None = None  # the view of the first snapshot seen
    first_seq: int | None = None  # ... and its seq (0: the opening deal)
    timeouts: list[int] = field(default_factory=lambda: [0, 0])  # as last reported
    warned: bool = False  # the 10 s warning was given for the running turn timer
    end_closed: bool = False  # the end screen was put away (Esc): the board shows
    fair: FairCheck | None = None  # the fair-shuffle check, made when the match ended
    rematch_offer: str | None = None  # the match the opponent offered as the rematch
    rematch_own: str | None = None  # the rematch this client created and offered

    @property
    def seat(self) -> int | None:
        """Own seat (None: a spectator or not known yet)."""
        return self.snapshot.get("seat") if self.snapshot else None

    @property
    def game(self) -> str | None:
        """The game's name, once a snapshot arrived."""
        return self.snapshot.get("game") if self.snapshot else None

    def time_left(self, now: float | None, seat: int | None = -1) -> float | None:
        """Seconds left on a turn timer at monotonic time ``now`` (None: no timer).

        ``seat`` -1 (the default) is the own timer (a spectator's: the running one);
        0 or 1 a seat's, from the snapshot's ``timers`` (servers that send only
        ``deadline`` give the own seat's). Times count from when the snapshot
        arrived; without ``now`` they are returned as they came."""
        snap = self.snapshot
        if not snap:
            return None
        timers = snap.get("timers")
        if seat == -1 or seat is None:
            left = snap.get("deadline")
        elif isinstance(timers, list) and 0 <= seat < len(timers):
            left = timers[seat]
        elif seat == snap.get("seat"):
            left = snap.get("deadline")
        else:
            left = None
        if not isinstance(left, (int, float)) or isinstance(left, bool):
            return None
        left = float(left)
        if now is not None and self.received is not None:
            left -= now - self.received
        return max(left, 0.0)

    @property
    def finished(self) -> bool:
        """The match is over (its last snapshot arrived)."""
        return bool(self.snapshot) and self.snapshot.get("status") == "finished"

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
    bots: list[str] = field(default_factory=list)  # the server bots ``games`` listed
    matches: list[dict[str, Any]] = field(default_factory=list)
    queues: dict[str, int] = field(default_factory=dict)
    queued: str | None = None  # the game this client queues for
    screen: str = "lobby"  # lobby | match
    current: str | None = None  # the match on screen
    views: dict[str, MatchView] = field(default_factory=dict)
    left: set[str] = field(default_factory=set)  # matches we left: late snapshots are dropped
    notice: str = ""  # the last error or message, in words
    notice_error: bool = False
    notice_at: float | None = None  # monotonic time it was said (old notices fade)
    overlay: str | None = None  # None | help | stacks | legal | form | chat | queue | details
    help_section: int = 0  # the help overlay's section: keys, then each game's rules
    form_memory: dict[str, dict[str, Any]] = field(default_factory=dict)  # game -> last values
    last_game: str | None = None  # the game of the last create form sent
    exit_error: str | None = None  # why the client stopped on its own (printed on exit)
    follow: str | None = None  # a match just created: the lobby cursor goes to it
    history: list[dict[str, Any]] = field(default_factory=list)  # finished matches shown
    history_pages: list[str | None] = field(default_factory=list)  # cursors of pages seen
    history_next: str | None = None  # the cursor of the next page (None: the last page)
    history_cursor: int = 0
    replay: Any = None  # the replay viewer's state (client.tui.replay.Replay) on screen
    hint: dict[str, Any] | None = None  # the local bot's suggested intent, highlighted
    hint_busy: bool = False  # the local bot is thinking
    flip_pace: float | None = None  # War auto-flip pace chosen with + / - (None: the server's)
    clock: Callable[[], float] = time.monotonic
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
        """The matches listed in the lobby, in display order: matches with an open seat
        first, then other waiting ones, running ones, finished ones; newest first in each."""
        def rank(m: dict[str, Any]) -> int:
            status = m.get("status")
            if status == "waiting":
                return 0 if has_open_seat(m) else 1
            return {"active": 2, "finished": 3}.get(str(status), 4)

        return sorted(self.matches, key=lambda m: (rank(m), -float(m.get("created") or 0)))

    def say(self, text: str, *, error: bool = False) -> None:
        """Show ``text`` in the notice line (an error in words, or a plain message)."""
        self.notice = text
        self.notice_error = error
        self.notice_at = self.clock()

    def notice_now(self, now: float | None) -> str:
        """The notice as it should show at ``now``: plain messages fade after
        :data:`NOTICE_SECONDS`, errors after :data:`ERROR_SECONDS`."""
        if now is None or self.notice_at is None:
            return self.notice
        ttl = ERROR_SECONDS if self.notice_error else NOTICE_SECONDS
        return self.notice if now - self.notice_at <= ttl else ""


def has_open_seat(summary: dict[str, Any]) -> bool:
    """A waiting match with a seat nobody (player or bot) has taken."""
    return summary.get("status") == "waiting" and any(
        p.get("name") is None and not p.get("bot") for p in summary.get("players") or [])


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
            offer = rematch.opponent_offer(msg, mv.seat)
            if offer is not None:
                mv.rematch_offer = offer
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
    me = msg.get("seat")
    game = str(msg.get("game"))
    if mv.first_view is None and msg.get("status") == "active":
        # the opening position as dealt: the first snapshot of the running match
        mv.first_view, mv.first_seq = msg.get("view"), msg.get("seq")
    if not repeat:  # a resumed connection re-sends the same snapshot: log it once
        mv.log.extend(event_text.describe_events(game, msg.get("events") or [], me, names,
                                                 glyphs=model.color))
        _log_timeouts(mv, msg, names)
        _log_fast_forward(mv, old, msg)
    if first:
        mv.log.append(event_text.describe_start(msg, names))
    elif old is not None:
        before = player_names(old)
        for seat, name in sorted(names.items()):
            if before.get(seat) == "(open)" and name != "(open)":
                mv.log.append(f"{name} took seat {seat + 1}")
    left = mv.time_left(None, me if isinstance(me, int) else -1)
    if old is None or left is None or (msg.get("seq") != old.get("seq")
                                       and left > WARN_SECONDS):
        mv.warned = False  # a new or restarted turn timer earns a new warning
    if msg.get("status") == "finished" and (old is None or old.get("status") != "finished"):
        mv.log.append(event_text.describe_result(msg, names))
        if not model.notice_error:
            model.notice = ""  # "reconnected", "auto-flip on": stale once the game is over
        rating_lines = rating_change_lines(msg.get("result"), msg.get("seat"))
        mv.log.extend(rating_lines)
        mine = [line for line in rating_lines if line.startswith(("You:", "Rated match"))]
        if mine:
            model.say(f"{msg.get('game')} rating: {mine[0].removeprefix('You: ')}")
        mv.fair = check(msg, mv.first_view, mv.first_seq)
        line = shuffle_line(msg)
        if line:
            mv.log.append(line)
    if model.queued and msg.get("game") == model.queued and first:
        model.queued = None  # matchmaking paired us
        if model.notice.startswith("queued"):
            model.say(f"paired: {game} match {match}")
    if first and (model.current is None or model.screen == "lobby"):
        model.current = match
        model.screen = "match"
        model.selection = None
    elif first and model.current != match:
        model.say(f"{msg.get('game')} match {match} has a seat for you: "
                  "Tab to the lobby, then Enter on it")
    if model.hint is not None and model.hint.get("match") == match and \
            model.hint.get("seq") != msg.get("seq"):
        model.hint = None  # a hint is for one position only
    if model.current == match:
        model.selection = None if msg.get("seq") != (old or {}).get("seq") else model.selection
        mv.pending = False


def _log_fast_forward(mv: MatchView, old: dict[str, Any] | None, msg: dict[str, Any]) -> None:
    """A fast-forward step sends no events: log the battles it played in one line."""
    asked = msg.get("fast_forward")
    if old is None or not isinstance(asked, list) or not any(asked) or msg.get("events"):
        return
    before = (old.get("view") or {}).get("battles")
    after = (msg.get("view") or {}).get("battles")
    if isinstance(before, int) and isinstance(after, int) and after > before + 1:
        mv.log.append(f"fast-forward: battles {before + 1} to {after} played")


def _log_timeouts(mv: MatchView, msg: dict[str, Any], names: dict[int, str]) -> None:
    """Log each seat whose count of turn timeouts in a row went up (``timeouts``)."""
    counts = msg.get("timeouts")
    if not isinstance(counts, list):
        return
    limit = msg.get("timeout_limit")
    limit = limit if isinstance(limit, int) and not isinstance(limit, bool) else None
    for seat, count in enumerate(counts[:2]):
        if not isinstance(count, int) or isinstance(count, bool):
            continue
        if count > mv.timeouts[seat]:
            mv.log.append(event_text.describe_timeout(seat, count, limit, msg.get("seat"),
                                                      names))
        mv.timeouts[seat] = count


def error_words(msg: dict[str, Any]) -> str:
    """An ``error`` reply in words: its message, with the code in brackets."""
    code = msg.get("code") or "error"
    text = msg.get("message") or code.replace("_", " ")
    extra = f" (field {msg['field']})" if msg.get("field") else ""
    return f"{text}{extra} [{code}]"
