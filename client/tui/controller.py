"""The presenter: turns key presses into model changes and server requests.

:meth:`Controller.handle_key` takes a key name (``"a"``, ``"enter"``,
``"escape"``, ``"left"``, ``"c-c"``, ...) and is called from prompt_toolkit's key
bindings, or directly by tests. Keys that only move the UI change the model at
once; keys that need the server schedule one of the ``async`` request methods
on the trio side through ``submit`` (see :mod:`client.tui.runner`). Every error
reply is shown in words in the notice line; nothing here raises on bad input.

The client never decides legality: intents sent are elements of the newest
snapshot's ``legal`` list, picked through :mod:`client.tui.selection`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import trio

from client.tui import explain, ratings_screen, rematch
from client.tui import form as form_fns
from client.tui import hint as hint_fns
from client.tui import selection as sel
from client.tui.ds_view import choices
from client.tui.lobby_view import selected_summary
from client.tui.model import MatchView, Model, error_words, has_open_seat, player_names
from client.tui.replay_control import ReplayControl
from client.tui.screen import help_pages, help_sections

Submit = Callable[[Callable[[], Awaitable[None]]], None]


class Requester(Protocol):
    """What the controller needs from the connection: one request, its reply."""

    async def __call__(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Send ``msg`` (an ``id`` is added) and return the reply (``ok`` or ``error``).

        Raises:
            ConnectionError (or any OSError): the request could not be sent or answered.
        """
        ...


#: The longest chat line the protocol takes.
CHAT_MAX = 200


class Controller:
    """The presenter between the keys, the model and the server."""

    def __init__(self, model: Model, submit: Submit | None = None,
                 invalidate: Callable[[], None] | None = None,
                 on_quit: Callable[[], None] | None = None) -> None:
        self.model = model
        self.request: Requester | None = None
        self.submit: Submit = submit or (lambda fn: None)
        self.invalidate = invalidate or (lambda: None)
        self.on_quit = on_quit or (lambda: None)
        self.replays = ReplayControl(self)
        #: called with the create-form memory after each create (cardclient keeps it)
        self.on_remember: Callable[[dict[str, dict[str, Any]]], None] = lambda memory: None

    # ------------------------------------------------------------------ keys

    def handle_key(self, key: str) -> None:
        """Act on one key press (see :mod:`client.tui.keys` for the map)."""
        m = self.model
        if key == "c-c":
            self.quit(confirmed=m.confirm_quit)
            return
        if m.overlay == "help":
            self._help_key(key)
            self.invalidate()
            return
        if key in ("?", "f1") and m.overlay not in ("form", "chat"):
            m.overlay, m.help_page, m.help_section = "help", 0, 0
            return
        if m.overlay == "form":
            self._form_key(key)
        elif m.overlay == "queue":
            self._queue_key(key)
        elif m.overlay == "legal":
            self._legal_key(key)
        elif m.overlay == "chat":
            self._chat_key(key)
        elif m.overlay == "ratings":
            ratings_screen.handle_key(m, key, self.load_ratings)
        elif m.confirm_quit:
            m.confirm_quit = False
            if key in ("q", "y", "c-c"):
                self.quit(confirmed=True)
            else:
                m.say("still here")
        elif m.overlay == "details":
            self._details_key(key)
        elif m.overlay == "history":
            self._history_key(key)
        elif m.overlay == "stacks":
            if key in ("escape", "v", "enter", "q"):
                m.overlay = None
        elif self.model.confirm_leave:
            self.model.confirm_leave = False
            if key in ("x", "y"):
                self._leave(confirmed=True)
            else:
                m.say("leave cancelled")
        elif m.screen == "replay":
            self.replays.key(key)
        elif m.screen == "lobby":
            self._lobby_key(key)
        else:
            self._match_key(key)
        self.invalidate()

    def _help_key(self, key: str) -> None:
        """Left/Right (Tab): another section; Space/PgDn, PgUp: pages; else close."""
        m = self.model
        sections = help_sections(m)
        if key in ("right", "tab", "left"):
            step = -1 if key == "left" else 1
            m.help_section, m.help_page = (m.help_section + step) % len(sections), 0
        elif key in (" ", "pagedown"):
            pages = help_pages(m, m.size[1] - 3, min(m.size[0], 76))
            if m.help_page + 1 < len(pages):
                m.help_page += 1
            elif m.help_section + 1 < len(sections):
                m.help_section, m.help_page = m.help_section + 1, 0
            else:
                m.overlay = None
        elif key == "pageup":
            m.help_page = max(m.help_page - 1, 0)
        else:
            m.overlay = None

    def quit(self, confirmed: bool = True) -> None:
        """Stop the client (the seats stay held for the server's grace period, and a
        restarted client resumes them). Unless ``confirmed``, a client that sits in
        running matches asks first: the next ``q`` (or Ctrl-C) quits."""
        m = self.model
        seated = m.seated_matches()
        if seated and not confirmed:
            m.confirm_quit = True
            m.say(f"you sit in {len(seated)} running match{'es' if len(seated) > 1 else ''} "
                  f"({', '.join(seated)}): q again quits (run cardclient again within the "
                  "grace period to take your seats back), any other key stays", error=True)
            self.invalidate()
            return
        m.quitting = True
        self.on_quit()

    def load_ratings(self, screen: ratings_screen.RatingsScreen) -> None:
        """Fetch a leaderboard or profile screen's data on the trio side."""
        self.submit(lambda: self._load_ratings(screen))

    async def _load_ratings(self, screen: ratings_screen.RatingsScreen) -> None:
        await ratings_screen.load(self.model, screen, self.call)
        self.invalidate()

    # -- lobby ---------------------------------------------------------------

    def _lobby_key(self, key: str) -> None:
        m = self.model
        rows = m.lobby_rows()
        if key == "up":
            m.lobby_cursor = max(m.lobby_cursor - 1, 0)
        elif key == "down":
            m.lobby_cursor = min(m.lobby_cursor + 1, max(len(rows) - 1, 0))
        elif key == "q":
            self.quit(confirmed=False)
        elif key == "L":
            board = ratings_screen.open_leaderboard(m)
            if board is not None:
                self.load_ratings(board)
        elif key == "P":
            self.load_ratings(ratings_screen.open_profile(m, m.name))
        elif key == "r":
            self.submit(self.refresh)
        elif key == "i":
            if not rows:
                m.say("no match to show: c creates one, m queues for one")
                return
            m.overlay = "details"
        elif key == "p":
            self._replay_selected()
        elif key == "h":
            self.submit(lambda: self.load_history(None))
        elif key == "c":
            if not m.games:
                m.say("no game list yet; press r to refresh", error=True)
                return
            m.form = form_fns.new_form(m.games, m.last_game, m.form_memory, m.bots)
            m.overlay = "form"
        elif key == "m":
            if not m.games:
                m.say("no game list yet; press r to refresh", error=True)
                return
            m.queue_pick = 0
            m.overlay = "queue"
        elif key == "u":
            self.submit(self.unqueue)
        elif key == "tab":
            if m.current and m.current in m.views:
                m.screen = "match"
            elif m.views:
                m.current = next(iter(m.views))
                m.screen = "match"
            else:
                m.say("you are in no match yet")
        elif key in ("enter", "j", "w"):
            self._open_selected(key)

    def _open_selected(self, key: str = "enter") -> None:
        """Enter: back to an own match, join an open seat, replay a finished match,
        else watch; j joins, w watches."""
        m = self.model
        summary = selected_summary(m)
        if summary is None:
            m.say("no match to open: c creates one, m queues for one")
            return
        match = str(summary.get("match"))
        if key == "enter" and match in m.views:
            m.current, m.screen = match, "match"
        elif key == "enter" and summary.get("status") == "finished":
            self._replay_selected()
        elif key == "w" or (key == "enter" and not has_open_seat(summary)):
            self.submit(lambda: self.watch(match))
        else:
            self.submit(lambda: self.join(match))

    def _details_key(self, key: str) -> None:
        m = self.model
        if key == "enter":
            m.overlay = None
            self._open_selected("enter")
        elif key == "p":
            m.overlay = None
            self._replay_selected()
        elif key in ("up", "down"):
            rows = m.lobby_rows()
            step = -1 if key == "up" else 1
            m.lobby_cursor = min(max(m.lobby_cursor + step, 0), max(len(rows) - 1, 0))
        else:
            m.overlay = None

    def _history_key(self, key: str) -> None:
        m = self.model
        if key in ("up", "down"):
            step = -1 if key == "up" else 1
            m.history_cursor = min(max(m.history_cursor + step, 0), max(len(m.history) - 1, 0))
        elif key in ("n", "pagedown", "right"):
            if m.history_next is None:
                m.say("that was the oldest page")
                return
            cursor = m.history_next
            self.submit(lambda: self.load_history(cursor))
        elif key in ("pageup", "left"):
            if len(m.history_pages) < 2:
                m.say("this is the newest page")
                return
            back = m.history_pages[-2]
            m.history_pages = m.history_pages[:-2]
            self.submit(lambda: self.load_history(back))
        elif key in ("enter", "p") and m.history:
            match = str(m.history[min(m.history_cursor, len(m.history) - 1)].get("match"))
            m.overlay = None
            self.submit(lambda: self.replays.open(match))
        else:
            m.overlay = None

    async def load_history(self, before: str | None) -> None:
        """Show one page of finished matches (``records``), newest first."""
        msg: dict[str, Any] = {"type": "records", "limit": HISTORY_PAGE}
        if before is not None:
            msg["before"] = before
        reply = await self.call(msg)
        if reply is None:
            return
        m = self.model
        m.history = list(reply.get("records") or [])
        m.history_next = reply.get("next")
        m.history_pages.append(before)
        m.history_cursor, m.overlay = 0, "history"
        if not m.history:
            m.say("no finished matches are stored yet")
        self.invalidate()

    def _replay_selected(self) -> None:
        """Open the replay viewer on the finished match under the lobby cursor."""
        m = self.model
        summary = selected_summary(m)
        if summary is None:
            m.say("no match to replay")
            return
        if summary.get("status") != "finished":
            m.say("only finished matches can be replayed (their seed is revealed)")
            return
        match = str(summary.get("match"))
        self.submit(lambda: self.replays.open(match))

    def _form_key(self, key: str) -> None:
        m = self.model
        form = m.form
        if form is None:
            m.overlay = None
            return
        if key == "escape":
            m.overlay, m.form = None, None
        elif key == "up":
            form_fns.move(form, -1)
        elif key in ("down", "tab"):
            form_fns.move(form, 1)
        elif key == "left":
            m.form = form_fns.change(form, -1, m.games, m.form_memory, m.bots)
        elif key in ("right", " "):
            m.form = form_fns.change(form, 1, m.games, m.form_memory, m.bots)
        elif len(key) == 1 and key.isdigit():
            form_fns.type_digit(form, key)
        elif key == "backspace":
            form_fns.backspace(form)
        elif key == "enter":
            msg = form_fns.to_request(form)
            form_fns.remember(form, m.form_memory)
            m.last_game = form.game
            self.on_remember(m.form_memory)
            m.overlay, m.form = None, None
            self.submit(lambda: self.create(msg))

    def _queue_key(self, key: str) -> None:
        m = self.model
        if key == "escape":
            m.overlay = None
        elif key == "up":
            m.queue_pick = max(m.queue_pick - 1, 0)
        elif key == "down":
            m.queue_pick = min(m.queue_pick + 1, max(len(m.games) - 1, 0))
        elif key == "enter" and m.games:
            game = str(m.games[m.queue_pick].get("name"))
            m.overlay = None
            self.submit(lambda: self.queue(game))

    # -- in a match ------------------------------------------------------------

    def _match_key(self, key: str) -> None:
        m = self.model
        mv = m.view
        if mv is None:
            m.screen = "lobby"
            return
        if key == "tab":
            m.screen = "lobby"
            self._clear_selection()
            self.submit(self.refresh)
            return
        if key == "x":
            self._leave(confirmed=False)
            return
        if mv.finished:
            self._end_key(mv, key)
            return
        if key == "c":
            m.overlay, m.chat_input = "chat", ""
            return
        if key == "l":
            if not mv.legal:
                m.say("nothing to do right now")
                return
            m.overlay, m.legal_input = "legal", ""
            return
        if key == "pageup":
            m.log_scroll = min(m.log_scroll + 5, max(len(mv.log) - 5, 0))
            if m.log_scroll == max(len(mv.log) - 5, 0):
                m.say("the oldest kept log line is on screen")
            return
        if key == "pagedown":
            m.log_scroll = max(m.log_scroll - 5, 0)
            return
        if mv.game == "war":
            self._war_key(mv, key)
        elif mv.game == "datastructures":
            self._ds_key(mv, key)

    def _war_key(self, mv: MatchView, key: str) -> None:
        if key in ("f", " "):
            intent = sel.action(mv.legal, "flip")
            if intent is None:
                self.model.say(self._why_no_flip(mv))
                return
            self._send_intent(mv, intent)
        elif key == "a":
            if mv.seat is None:
                self.model.say("spectators have no auto-flip")
                return
            on = not bool((mv.snapshot or {}).get("auto_flip"))
            pace = self.model.flip_pace if on else None  # the pace chosen last, if any
            self.submit(lambda: self.auto_flip(mv.match, on, pace))
        elif key in ("+", "-", "="):
            if mv.seat is None:
                self.model.say("spectators have no auto-flip")
                return
            delay = pace_step(auto_flip_delay(mv), faster=key != "-")
            self.model.flip_pace = delay  # the setting: later matches start at this pace
            self.submit(lambda: self.auto_flip(mv.match, True, delay))
        elif key == "F":
            if mv.seat is None:
                self.model.say("only the players can fast-forward")
                return
            asked = fast_forward_asked(mv)
            self.submit(lambda: self.fast_forward(mv.match, not asked))

    def _ds_key(self, mv: MatchView, key: str) -> None:
        m = self.model
        legal = mv.legal
        me = mv.seat
        if key == "v":
            m.overlay = "stacks"
            return
        if key == "escape":
            if m.selection is None and not self.model.mulligan_mode:
                return
            self._clear_selection()
            return
        if not legal:
            if key not in ("left", "right"):
                m.say(self._whose_move(mv) if me is not None else "you are watching")
            return
        if self.model.mulligan_mode:
            if key.isdigit() and len(key) == 1:
                intent = next((i for i in legal if i.get("type") == "mulligan"
                               and i.get("keep") == int(key) - 1), None)
                if intent is None:
                    m.say(f"cannot keep card {key}", error=True)
                    return
                self.model.mulligan_mode = False
                self._send_intent(mv, intent)
            return
        view = (mv.snapshot or {}).get("view") or {}
        if key == "e":
            intent = sel.action(legal, "end_phase", "end_turn")
            if intent is None:
                m.say(explain.why_cannot_end(view, legal), error=True)
                return
            self._send_intent(mv, intent)
            return
        if key == "H":
            self.submit(lambda: self.ask_hint(mv))
            return
        if key == "m":
            if not any(i.get("type") == "mulligan" for i in legal):
                m.say(explain.why_no_mulligan(view, legal), error=True)
                return
            self._clear_selection()
            self.model.mulligan_mode = True
            return
        now = choices(legal, m.selection)
        if key in ("left", "right"):
            if now:
                m.cursor = (m.cursor + (1 if key == "right" else -1)) % len(now)
            return
        if key == "enter":
            if now:
                self._choose(mv, now[m.cursor % len(now)])
            return
        thing = self._thing_for_key(key, me, target=m.selection is not None)
        if thing is None:
            return
        if m.selection is not None and thing[0] in ("hand", "queue", "stack"):
            self._clear_selection()  # a new source instead of a target
        self._choose(mv, thing)

    @staticmethod
    def _thing_for_key(key: str, me: int | None, *, target: bool) -> tuple | None:
        if target:
            if key in ("1", "2", "3"):
                return ("array", int(key) - 1)
            mapping = {"s": ("mystack",), "q": ("qtail",), "k": ("keep",)}
            if key in mapping:
                return mapping[key]
        elif len(key) == 1 and key.isdigit() and key != "0":
            return ("hand", int(key) - 1)
        if key == "h":
            return ("queue",)
        if key == "t" and me is not None:
            return ("stack", me)
        if key == "o" and me is not None:
            return ("stack", 1 - me)
        return None

    def _choose(self, mv: MatchView, thing: tuple) -> None:
        """Take a source or a target; a complete pair sends its legal intent."""
        m = self.model
        legal = mv.legal
        view = (mv.snapshot or {}).get("view") or {}
        if m.selection is None:
            if thing not in sel.sources(legal):
                why = explain.why_not_source(thing, view, mv.seat, legal, glyphs=m.color)
                m.say(why if thing[0] == "hand" else f"{_words(thing)}: {why}", error=True)
                return
            m.selection, m.cursor = thing, 0
            m.say("")
            return
        intent = sel.intent_for(legal, m.selection, thing)
        if intent is None:
            m.say(explain.why_not_target(m.selection, thing, view, mv.seat, glyphs=m.color),
                  error=True)
            return
        self._clear_selection()
        self._send_intent(mv, intent)

    def _legal_key(self, key: str) -> None:
        m = self.model
        mv = m.view
        if key == "escape" or mv is None:
            m.overlay = None
            return
        if len(key) == 1 and key.isdigit():
            m.legal_input = (m.legal_input + key)[-4:]
        elif key == "backspace":
            m.legal_input = m.legal_input[:-1]
        elif key == "enter":
            legal = mv.legal
            try:
                n = int(m.legal_input)
            except ValueError:
                n = 0
            if not 1 <= n <= len(legal):
                m.say(f"type a number from 1 to {len(legal)}, then Enter", error=True)
                m.legal_input = ""
                return
            m.overlay, m.legal_input = None, ""
            self._clear_selection()
            self._send_intent(mv, legal[n - 1])

    def _chat_key(self, key: str) -> None:
        m = self.model
        mv = m.view
        if key == "escape" or mv is None:
            m.overlay = None
        elif key == "backspace":
            m.chat_input = m.chat_input[:-1]
        elif key == "enter":
            line = m.chat_input.strip()
            m.overlay, m.chat_input = None, ""
            if line:
                match = mv.match
                self.submit(lambda: self.chat(match, line))
        elif len(key) == 1:
            if len(m.chat_input) >= CHAT_MAX:
                m.say(f"a chat line holds at most {CHAT_MAX} characters: Enter sends it",
                      error=True)
                return
            m.chat_input += key

    def _clear_selection(self) -> None:
        self.model.selection = None
        self.model.cursor = 0
        self.model.mulligan_mode = False

    def _leave(self, *, confirmed: bool) -> None:
        m = self.model
        mv = m.view
        if mv is None:
            return
        snap = mv.snapshot or {}
        if not confirmed and mv.seat is not None and snap.get("status") == "active":
            self.model.confirm_leave = True
            m.say("leave a running match? it resigns it: press x again to confirm")
            return
        match = mv.match
        self.submit(lambda: self.leave(match))

    def _send_intent(self, mv: MatchView, intent: dict[str, Any]) -> None:
        if mv.pending:
            self.model.say("still waiting for the server's answer to your last move")
            return
        mv.pending = True
        self.submit(lambda: self.intent(mv.match, intent))

    # ---------------------------------------------------------- requests (trio)

    async def call(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        """Send one request; show an error reply in words. Returns the ``ok`` reply or None."""
        if self.request is None:
            self.model.say("not connected", error=True)
            self.invalidate()
            return None
        try:
            reply = await self.request(msg)
        except (OSError, ConnectionError, EOFError) as exc:
            self.model.say(f"request not answered: {exc or 'connection lost'}", error=True)
            self.invalidate()
            return None
        if reply.get("type") == "error":
            self.model.say(error_words(reply), error=True)
            self.invalidate()
            return None
        return reply

    async def refresh(self) -> None:
        """Fetch the games (once) and the match list with the queue counts."""
        m = self.model
        if not m.games:
            reply = await self.call({"type": "games"})
            if reply is not None:
                m.games = list(reply.get("games") or [])
                m.bots = [str(b.get("name")) for b in reply.get("bots") or []
                          if isinstance(b, dict) and b.get("name")]
        reply = await self.call({"type": "matches"})
        if reply is not None:
            rows = m.lobby_rows()
            chosen = rows[m.lobby_cursor].get("match") if m.lobby_cursor < len(rows) else None
            m.matches = list(reply.get("matches") or [])
            m.queues = dict(reply.get("queues") or {})
            ids = [row.get("match") for row in m.lobby_rows()]
            if m.follow in ids:  # a match just created: the cursor goes to it
                chosen, m.follow = m.follow, None
            # the cursor stays on the same match when the list changes around it
            m.lobby_cursor = ids.index(chosen) if chosen in ids else \
                min(m.lobby_cursor, max(len(ids) - 1, 0))
        self.invalidate()

    async def create(self, msg: dict[str, Any]) -> None:
        """Create a match (with a server bot opponent if ``msg`` names one)."""
        reply = await self.call(msg)
        if reply is not None:
            self.model.follow = str(reply.get("match"))
            seat = reply.get("seat")
            self._seated(str(reply.get("match")), f"created match {reply.get('match')}, "
                         f"seat {seat + 1 if isinstance(seat, int) else '?'}")
            await self.refresh()

    async def join(self, match: str, words: str = "joined") -> bool:
        """Take a seat in ``match`` (said as "``words`` match ..."); whether it did."""
        reply = await self.call({"type": "join", "match": match})
        if reply is None:
            return False
        seat = reply.get("seat")
        self._seated(match, f"{words} match {match}, seat "
                     f"{seat + 1 if isinstance(seat, int) else '?'}")
        return True

    async def watch(self, match: str) -> None:
        """Watch ``match`` as a spectator."""
        reply = await self.call({"type": "watch", "match": match})
        if reply is not None:
            self._seated(match, f"watching match {match}")

    def _seated(self, match: str, words: str) -> None:
        m = self.model
        m.left.discard(match)
        m.views.setdefault(match, MatchView(match))
        m.current, m.screen = match, "match"
        self._clear_selection()
        m.say(words)
        self.invalidate()

    async def leave(self, match: str) -> None:
        """Leave ``match`` (a running seat resigns) and go back to the lobby."""
        reply = await self.call({"type": "leave", "match": match})
        m = self.model
        mv = m.views.get(match)
        finished = mv is not None and (mv.snapshot or {}).get("status") == "finished"
        if reply is not None or finished:
            m.left.add(match)
            m.views.pop(match, None)
            if m.current == match:
                m.current, m.screen = None, "lobby"
            m.say(f"left match {match}")
            await self.refresh()

    async def queue(self, game: str) -> None:
        """Queue for matchmaking in ``game``; the paired match's snapshot opens it."""
        self.model.queued = game  # before the request: the pairing snapshot may come first
        reply = await self.call({"type": "queue", "game": game})
        if reply is None:
            self.model.queued = None
            return
        if self.model.queued == game:
            self.model.say(f"queued for {game}: waiting for an opponent")
        await self.refresh()

    async def unqueue(self) -> None:
        """Leave the matchmaking queue."""
        msg: dict[str, Any] = {"type": "unqueue"}
        if self.model.queued:
            msg["game"] = self.model.queued
        reply = await self.call(msg)
        if reply is not None:
            self.model.queued = None
            self.model.say("left the matchmaking queue")
            await self.refresh()

    async def chat(self, match: str, line: str) -> None:
        """Say ``line`` to everyone in ``match`` (it comes back as a chat push)."""
        await self.call({"type": "chat", "match": match, "text": line[:CHAT_MAX]})

    async def auto_flip(self, match: str, on: bool, delay: float | None = None) -> None:
        """Turn War auto-flip on or off for the own seat; ``delay``: its pace, seconds
        between the server's flips (the server keeps it within its bounds)."""
        msg: dict[str, Any] = {"type": "auto_flip", "match": match, "on": on}
        if delay is not None:
            msg["delay"] = delay
        reply = await self.call(msg)
        if reply is not None:
            mv = self.model.views.get(match)
            if mv is not None and mv.snapshot is not None:
                mv.snapshot["auto_flip"] = on
                if isinstance(reply.get("delay"), (int, float)):
                    mv.snapshot["auto_flip_delay"] = reply["delay"]
            pace = f", one flip every {reply['delay']:.2f} s" \
                if on and isinstance(reply.get("delay"), (int, float)) else ""
            self.model.say(f"auto-flip {'on' if on else 'off'}{pace}")
            self.invalidate()

    async def fast_forward(self, match: str, on: bool) -> None:
        """Ask (or stop asking) to play the rest of a War match out at once; it runs
        when both seats ask (a server bot always agrees)."""
        reply = await self.call({"type": "fast_forward", "match": match, "on": on})
        if reply is not None:
            self.model.say("fast-forward asked: it runs when your opponent agrees (F)"
                           if on else "fast-forward request withdrawn")
            self.invalidate()

    async def rematch(self, mv: MatchView) -> None:
        """A new match of the same game and options; the same server bot if the
        opponent was one. Against a person: the match the opponent offered, if it
        did (:mod:`client.tui.rematch`), else a new one with an open seat, offered in
        the old match's chat."""
        snap = mv.snapshot or {}
        me = mv.seat if mv.seat is not None else 0
        if mv.rematch_own is not None:
            self.model.say(f"rematch: match {mv.rematch_own} is waiting for your opponent")
            self.invalidate()
            return
        if mv.rematch_offer is not None and await self._join_rematch(mv.rematch_offer):
            return
        msg: dict[str, Any] = {"type": "create", "game": mv.game,
                               "options": dict(snap.get("options") or {}), "seat": me}
        other = next((p for p in snap.get("players") or [] if p.get("seat") == 1 - me), {})
        if other.get("bot"):
            msg["bot"] = other["bot"]
        reply = await self.call(msg)
        if reply is None:
            return
        new = str(reply.get("match"))
        if not other.get("bot") and mv.seat is not None:
            mv.rematch_own = new
            try:
                await self.call({"type": "chat", "match": mv.match,
                                 "text": rematch.offer_text(new)})
            except Exception:  # the old match may be gone already: the lobby lists it
                pass
        self.model.follow = new
        self._seated(new, f"rematch: match {new}, seat {reply.get('seat', me) + 1}")
        await self.refresh()
        if mv.rematch_offer is not None:   # the opponent's offer came while we created
            await self.settle_rematch(mv)

    async def _join_rematch(self, match: str) -> bool:
        """Take the open seat of the rematch the opponent offered; False if it is gone."""
        if not await self.join(match, "rematch: joined"):
            return False
        self.model.follow = match
        return True

    async def settle_rematch(self, mv: MatchView) -> None:
        """Both players offered a rematch at once: keep the offer both clients keep
        (:func:`client.tui.rematch.keeps_own`); the other's client leaves its own match
        and joins this one. Nothing to do unless both offers are known."""
        own, offered = mv.rematch_own, mv.rematch_offer
        if own is None or offered is None or own == offered or rematch.keeps_own(own, offered):
            return
        mv.rematch_own = None
        await self.call({"type": "leave", "match": own})
        self.model.views.pop(own, None)
        self.model.left.add(own)
        if not await self._join_rematch(offered):
            self.model.say("the opponent's rematch is gone: press r for a new one", error=True)
        await self.refresh()

    def pushed(self, msg: dict[str, Any]) -> None:
        """A push was folded into the model: settle crossing rematch offers."""
        if msg.get("type") != "chat":
            return
        mv = self.model.views.get(str(msg.get("match")))
        if mv is not None and mv.rematch_own is not None and mv.rematch_offer is not None:
            self.submit(lambda: self.settle_rematch(mv))

    def _end_key(self, mv: MatchView, key: str) -> None:
        """Keys of a finished match: the end screen's, or the board's once put away."""
        m = self.model
        if key == "r":
            self.submit(lambda: self.rematch(mv))
        elif key == "p":
            match = mv.match
            self.submit(lambda: self.replays.open(match))
        elif key == "escape":
            mv.end_closed = not mv.end_closed
        elif key in ("pageup", "pagedown") and mv.end_closed:
            step = 5 if key == "pageup" else -5
            m.log_scroll = max(min(m.log_scroll + step, max(len(mv.log) - 5, 0)), 0)
        elif key == "v" and mv.game == "datastructures":
            m.overlay = "stacks"
        else:
            m.say("the match is over: r rematch, p replay, Tab lobby, Esc "
                  + ("the end screen" if mv.end_closed else "the board"))

    # -- the hint -----------------------------------------------------------------

    async def ask_hint(self, mv: MatchView) -> None:
        """Ask a local bot (in a worker thread, on this seat's own view and legal list)
        for a move, and highlight it: the hint line, the cursor on its source, a *
        in the numbered list."""
        m = self.model
        snap = mv.snapshot or {}
        legal, seat, seq = mv.legal, mv.seat, snap.get("seq")
        if not legal or seat is None:
            m.say("no hint: it is not your move")
            return
        if m.hint_busy:
            m.say("the hint is still thinking...")
            return
        m.hint_busy = True
        m.say(f"asking the {hint_fns.HINT_STRATEGY} bot for a hint...")
        self.invalidate()
        try:
            intent = await trio.to_thread.run_sync(
                hint_fns.suggest, str(mv.game), seat, snap.get("view") or {}, legal)
        except Exception as exc:  # the bot failed: say so, the game goes on
            m.say(f"no hint: {exc}", error=True)
            return
        finally:
            m.hint_busy = False
            self.invalidate()
        if (mv.snapshot or {}).get("seq") != seq:
            m.say("the position changed while the hint was thinking; press H again")
            return
        m.hint = {"match": mv.match, "seq": seq, "intent": intent,
                  "strategy": hint_fns.HINT_STRATEGY}
        pair = sel.split_intent(intent)
        if pair is not None and m.selection is None:
            options = sel.sources(legal)
            if pair[0] in options:
                m.cursor = options.index(pair[0])
        m.say(f"hint: {sel.describe_intent(intent, (snap.get('view') or {}).get('hand'), seat, m.color)}")

    @staticmethod
    def _why_no_flip(mv: MatchView) -> str:
        """Why ``f`` does nothing now, read off the War view."""
        snap = mv.snapshot or {}
        view = snap.get("view") or {}
        if mv.seat is None:
            return "spectators cannot flip"
        if snap.get("status") == "waiting":
            return "the match starts when the other seat is taken"
        if (view.get("stands") or [False, False])[mv.seat]:
            return "you are out of cards: your last face-up card stands for this war"
        if mv.seat not in (view.get("waiting") or []):
            other = player_names(snap).get(1 - mv.seat, "the opponent")
            return f"you have flipped: waiting for {other}"
        return "nothing to flip now"

    def _whose_move(self, mv: MatchView) -> str:
        snap = mv.snapshot or {}
        if snap.get("status") == "waiting":
            return "the match starts when the other seat is taken"
        to_move = (snap.get("view") or {}).get("to_move")
        names = player_names(snap)
        if isinstance(to_move, int) and to_move != mv.seat:
            return f"not your move: it is {names.get(to_move, 'the opponent')}'s turn"
        return "not your move"

    async def intent(self, match: str, intent: dict[str, Any]) -> None:
        """Send one legal intent on the newest snapshot's seq.

        No retry: under the server's seq rule a War flip is never ``stale`` (both
        seats may flip on the same snapshot), and a ``stale`` Data Structures move
        was made on a position that has changed: the player looks again.
        """
        m = self.model
        mv = m.views.get(match)
        if mv is None or mv.snapshot is None:
            return
        try:
            msg = {"type": "intent", "match": match, "seq": mv.snapshot.get("seq"),
                   "intent": intent}
            if self.request is None:
                m.say("not connected", error=True)
                return
            try:
                reply = await self.request(msg)
            except (OSError, ConnectionError, EOFError) as exc:
                m.say(f"move not answered: {exc or 'connection lost'}", error=True)
                return
            if reply.get("type") == "error":
                m.say("the game moved on before your move arrived; look and try again"
                      if reply.get("code") == "stale" else error_words(reply), error=True)
        finally:
            mv.pending = False
            self.invalidate()


#: Finished matches per page of the history overlay.
HISTORY_PAGE = 12

#: War auto-flip paces offered by + and -, seconds between flips.
PACES = (0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0)


def auto_flip_delay(mv: MatchView) -> float:
    """The own seat's auto-flip pace as the server last said (0.5 s if it never did)."""
    delay = (mv.snapshot or {}).get("auto_flip_delay")
    return float(delay) if isinstance(delay, (int, float)) and not isinstance(delay, bool) \
        else 0.5


def pace_step(delay: float, *, faster: bool) -> float:
    """The next pace from :data:`PACES`: shorter delays when ``faster``."""
    if faster:
        return max((p for p in PACES if p < delay - 1e-9), default=PACES[0])
    return min((p for p in PACES if p > delay + 1e-9), default=PACES[-1])


def fast_forward_asked(mv: MatchView) -> bool:
    """True when the own seat asked to fast-forward (``fast_forward`` in snapshots)."""
    asked = (mv.snapshot or {}).get("fast_forward")
    seat = mv.seat
    return isinstance(asked, list) and isinstance(seat, int) and seat < len(asked) \
        and bool(asked[seat])



def _words(thing: tuple) -> str:
    kind = thing[0]
    if kind == "hand":
        return f"hand card {thing[1] + 1}"
    if kind == "array":
        return f"array {thing[1] + 1}"
    return {"queue": "the queue head", "stack": "that stack top", "mystack": "your stack",
            "qtail": "the queue tail", "keep": "keeping that card"}.get(kind, str(thing))
