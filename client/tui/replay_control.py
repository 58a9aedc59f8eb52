"""The replay viewer's keys and requests: pages of a finished match's ``record``.

:class:`ReplayControl` belongs to the :class:`~client.tui.controller.Controller`
(``controller.replays``): it opens a match in the viewer, fetches the page a
position needs, steps, jumps, plays at the chosen speed and switches between a
spectator's eyes and the own seat's. What each page shows is the server's
projection (``record`` with or without ``seat``); the client only draws it.
"""

from __future__ import annotations

from typing import Any

import trio

from client.tui.replay import PAGE as REPLAY_PAGE
from client.tui.replay import Replay


class ReplayControl:
    """The replay viewer's presenter (see the module docstring)."""

    def __init__(self, controller: Any) -> None:
        """``controller``: the :class:`~client.tui.controller.Controller` it belongs to
        (its model, ``call``, ``submit``, ``invalidate`` and ``refresh`` are used)."""
        self.ctl = controller

    async def open(self, match: str, seat: int | None = -1) -> None:
        """Open the replay viewer on finished ``match``: its first page of moves, as
        the own seat saw it when this session played it (``seat`` -1), else as a
        spectator saw it."""
        m = self.ctl.model
        mv = m.views.get(match)
        own = seat == -1
        if own:
            seat = mv.seat if mv is not None else None
        replay = Replay(match, seat=seat, back_to=m.screen if m.screen != "replay" else "lobby")
        if not await self._fetch_page(replay, 0):
            if seat is None:
                return
            replay.seat = None  # not this seat's match after all: the public record
            if not await self._fetch_page(replay, 0):
                return
        if own and replay.seat is None and replay.own_seats:
            # a match this session played (the server says which seat): as it saw it
            mine = Replay(match, seat=replay.own_seats[0], back_to=replay.back_to)
            if await self._fetch_page(mine, 0):
                replay = mine
        m.replay, m.screen, m.overlay = replay, "replay", None
        m.say(f"replay of match {match}: {replay.total} moves")
        self.ctl.invalidate()

    async def _fetch_page(self, replay: Replay, offset: int) -> bool:
        """Fetch the page of moves from ``offset``; False (and a notice) on an error."""
        msg: dict[str, Any] = {"type": "record", "match": replay.match, "offset": offset,
                               "limit": REPLAY_PAGE}
        if replay.seat is not None:
            msg["seat"] = replay.seat
        replay.loading = True
        try:
            reply = await self.ctl.call(msg)
        finally:
            replay.loading = False
        if reply is None or not isinstance(reply.get("record"), dict):
            replay.error = self.ctl.model.notice
            return False
        replay.take(reply["record"])
        replay.error = ""
        self.ctl.invalidate()
        return True

    async def goto(self, position: int) -> None:
        """Move the replay to ``position``, fetching its page first if needed."""
        replay = self.ctl.model.replay
        if replay is None:
            return
        position = replay.clamp(position)
        offset = replay.missing_page(position)
        if offset is not None and not await self._fetch_page(replay, offset):
            replay.playing = False
            return
        replay.position = position
        self.ctl.invalidate()

    async def view_as(self, seat: int | None) -> None:
        """See the replay through another pair of eyes (the server checks the seat)."""
        replay = self.ctl.model.replay
        if replay is None:
            return
        other = Replay(replay.match, seat=seat, position=replay.position, speed=replay.speed,
                       back_to=replay.back_to)
        offset = max(((replay.position - 1) // REPLAY_PAGE) * REPLAY_PAGE, 0)
        await self._fetch_page(other, offset)  # every page brings the header and the opening
        if other.header:
            self.ctl.model.replay = other
            self.ctl.model.say("as a spectator saw it" if seat is None else
                           f"as seat {seat + 1} saw it (that seat's projection)")
        self.ctl.invalidate()

    async def play(self) -> None:
        """Play the replay forward at its speed until paused or at the end."""
        while True:
            replay = self.ctl.model.replay
            if replay is None or not replay.playing or self.ctl.model.screen != "replay":
                return
            if replay.position >= replay.total:
                replay.playing = False
                self.ctl.invalidate()
                return
            await trio.sleep(1.0 / replay.speed)
            if replay is self.ctl.model.replay and replay.playing:
                await self.goto(replay.position + 1)

    def _move(self, replay: Replay, target: int) -> None:
        """Go to ``target`` at once when its page is here (so quick key presses add
        up), else fetch the page first."""
        target = replay.clamp(target)
        if replay.missing_page(target) is None:
            replay.position = target
        else:
            self.ctl.submit(lambda: self.goto(target))

    def key(self, key: str) -> None:
        m = self.ctl.model
        replay = m.replay
        if replay is None:
            m.screen = "lobby"
            return
        if replay.goto_input is not None:
            if key.isdigit() and len(key) == 1:
                replay.goto_input = (replay.goto_input + key)[-6:]
            elif key == "backspace":
                replay.goto_input = replay.goto_input[:-1]
            elif key == "enter":
                target = int(replay.goto_input) if replay.goto_input else replay.position
                replay.goto_input = None
                self._move(replay, target)
            else:
                replay.goto_input = None
            return
        steps = {"right": 1, "left": -1, "down": 10, "up": -10, "pagedown": 50,
                 "pageup": -50}
        if key in steps:
            replay.playing = False
            self._move(replay, replay.position + steps[key])
        elif key in ("home", "0"):
            replay.playing = False
            self._move(replay, 0)
        elif key in ("end", "G"):
            replay.playing = False
            self._move(replay, replay.total)
        elif key == "g":
            replay.playing, replay.goto_input = False, ""
        elif key in (" ", "enter"):
            replay.playing = not replay.playing
            if replay.playing:
                if replay.position >= replay.total:
                    replay.position = 0
                self.ctl.submit(self.play)
        elif key in ("+", "="):
            replay.faster()
        elif key == "-":
            replay.slower()
        elif key == "v":
            choices: list[int | None] = [None, *replay.own_seats]
            if len(choices) == 1:
                m.say("only a spectator's view: you did not play this match")
                return
            i = choices.index(replay.seat) if replay.seat in choices else 0
            seat = choices[(i + 1) % len(choices)]
            self.ctl.submit(lambda: self.view_as(seat))
        elif key in ("escape", "q", "tab"):
            replay.playing = False
            back = replay.back_to
            m.replay = None
            m.screen = back if back == "match" and m.view is not None else "lobby"
            if m.screen == "lobby":
                self.ctl.submit(self.ctl.refresh)
