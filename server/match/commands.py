"""What a match task hands its :class:`~server.match.core.MatchCore`: frozen commands.

Requests from sessions carry the session's id (``session``) and the request id
to echo (``rid``); the core never sees a connection. ``live`` says whether the
session still had a connection when the task handed the command over (the task
fills it in; a resume whose connection dropped again must not end a grace
period). Timers are commands too: the task reports :class:`Tick` when the
deadline the core asked for has passed, and the core decides what is due.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from server.match.frozen import maker


@dataclass(frozen=True, slots=True)
class Command:
    """Anything a match core handles."""


@dataclass(frozen=True, slots=True)
class Start(Command):
    """The task has started: grace periods for absent seats, the first snapshots."""


@dataclass(frozen=True, slots=True)
class Tick(Command):
    """The deadline the core asked for has passed: fire every timer that is due."""


@dataclass(frozen=True, slots=True)
class Detach(Command):
    """The session lost its connection: grace periods start, the others are told."""

    session: str


@dataclass(frozen=True, slots=True)
class Request(Command):
    """A request from a session; ``rid`` is echoed in the reply."""

    session: str
    rid: int | None = None
    live: bool = True


@dataclass(frozen=True, slots=True)
class Attach(Request):
    """The session (re)connected: mark its seats present, send it fresh snapshots."""


@dataclass(frozen=True, slots=True)
class Join(Request):
    """Take a seat (``seat`` None: the free one) under the session's ``name``;
    ``account``: the session's account (None: a guest), ``player``: what the player
    map says of it (see :meth:`MatchCore.set_account`); ``client_seed``: the seat's
    client seed (the player's, or one the lobby chose)."""

    name: str = ""
    seat: int | None = None
    account: int | None = None
    player: dict[str, Any] | None = None
    client_seed: str = "0"


@dataclass(frozen=True, slots=True)
class Watch(Request):
    """Become a spectator."""


@dataclass(frozen=True, slots=True)
class Leave(Request):
    """Stop watching; free a waiting seat; resign an active one."""


@dataclass(frozen=True, slots=True)
class PlayIntent(Request):
    """One intent for the match's ``seq``."""

    seq: int = 0
    intent: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Resign(Request):
    """Resign (R0.4); in a waiting match, free the seat."""


@dataclass(frozen=True, slots=True)
class SetAutoFlip(Request):
    """Let the server play this seat's moves on a short timer (games with ``auto_play``);
    ``delay`` (seconds, None: unchanged) is its pace."""

    on: bool = False
    delay: float | None = None


@dataclass(frozen=True, slots=True)
class SetFastForward(Request):
    """Ask (or stop asking) to play the rest of the match out at once (``auto_play``)."""

    on: bool = False


@dataclass(frozen=True, slots=True)
class MuteSpectators(Request):
    """A player stops (``on``) or starts again receiving the spectators' chat."""

    on: bool = False


@dataclass(frozen=True, slots=True)
class Chat(Request):
    """A chat line for every participant, signed with the session's ``name``."""

    name: str = ""
    text: str = ""


#: ``PlayIntent(session, rid, live, seq, intent)``, every field given
#: (:func:`server.match.frozen.maker`): the command of every intent a client sends
play_intent = maker(PlayIntent)


@dataclass(frozen=True, slots=True)
class BotIntent(Command):
    """A server bot's choice for ``seat`` at ``seq`` (dropped when it is out of date)."""

    seat: int
    seq: int
    intent: dict[str, Any]
