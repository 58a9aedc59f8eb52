"""One frozen, validated type per protocol message, with its wire form.

Every message of docs/protocol.md is an :class:`~protocol.registry.Event`
subclass here, registered for the direction(s) it travels in (:data:`TO_SERVER`:
client -> server, :data:`TO_CLIENT`: server -> client). Like h11's events, an
event checks its fields when it is built::

    Join(match="m1", seat=0)                    # fine
    Join(match="", seat=0)                      # LocalProtocolError naming "match"

``event.to_wire()`` is its map; :func:`from_wire` (the peer's maps) and
:func:`outgoing` (our own) go the other way (see :mod:`protocol.registry`).

The field declarations here are the single source of truth for every message:
:data:`SCHEMAS` (used by :func:`validate` and the docs test) is derived from them.

Constructor arguments are keyword-only. Values of free-form fields (views,
intents, options) are not copied: once a map or list is in an event, treat it
as frozen too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, TypeVar

from protocol import errors
from protocol.registry import (
    DIRECTIONS,
    EVENTS,
    TO_CLIENT,
    TO_SERVER,
    Event,
    FieldSpec,
    describe,
    from_wire,
    opt,
    outgoing,
    register,
    req,
    validate,
    wired,
)
from protocol.schema import (
    AUTH,
    BOT_INFO,
    CHAT_TEXT,
    CLIENT_SEED,
    CURSOR,
    EVENT,
    GAME,
    GAME_INFO,
    INTENT,
    LEGAL_INTENT,
    LIMITS,
    MATCH,
    MAX_ID,
    NAME,
    OPTIONS,
    PLAYER,
    RECORD,
    REQ_ID,
    RESULT,
    REVEAL,
    ROLE,
    SEAT,
    SEQ,
    STATUS,
    SUMMARY,
    TIME,
    TOKEN,
    VERSION,
    VIEW,
    Bool,
    Data,
    Enum,
    F,
    Int,
    ListOf,
    Nullable,
    Str,
    Struct,
)

E = TypeVar("E", bound=Event)

#: When True, :func:`trusted` checks what it builds like the constructor does. The
#: test suite turns it on (``CARDSERVER_CHECK_EVENTS=1``, inherited by the servers it
#: starts), so every server-built message of every test is still checked against
#: the one schema; a server in production skips the walk.
CHECK_TRUSTED = os.environ.get("CARDSERVER_CHECK_EVENTS", "") not in ("", "0")


def trusted(cls: type[E], **fields: Any) -> E:
    """A ``cls`` event built by the server from values it made itself (a match's
    snapshot from the engine's projection, an ``ok`` of an accepted intent), without
    re-walking the schema on every message: the walk was 23 µs of a War move.

    Everything a peer sends is still checked (:func:`from_wire`), and so is every
    event built with its constructor. Fields left out (or None) are absent on the
    wire. The event is made from its wire map (:func:`trusted_wire`).

    Raises:
        TypeError: a field ``cls`` does not have (always checked: a typo, not data).
        LocalProtocolError: only with :data:`CHECK_TRUSTED`: a field is invalid.
    """
    order, required = cls.ORDER, cls.REQUIRED
    try:
        names = sorted(fields, key=order.__getitem__)
    except KeyError as exc:
        raise TypeError(f"{cls.__name__} has no field {exc.args[0]!r}") from None
    wire: dict[str, Any] = {"type": cls.TYPE}
    for name in names:
        value = fields[name]
        if value is not None or name in required:
            wire[name] = value
    return trusted_wire(cls, wire)


def trusted_wire(cls: type[E], wire: dict[str, Any]) -> E:
    """A ``cls`` event that is the wire map ``wire`` (:func:`protocol.registry.wired`):
    for the server's busiest messages, built as their map directly. ``wire`` is
    kept, not copied: hand it over and leave it alone.

    Raises:
        LocalProtocolError: only with :data:`CHECK_TRUSTED`: a field is invalid.
        AssertionError: only with :data:`CHECK_TRUSTED`: ``wire`` is not the map the
            constructor's event sends (another key order, a None left in, a key
            the message does not have).
    """
    if CHECK_TRUSTED:
        built = cls(**{k: v for k, v in wire.items() if k != "type"})
        expected = built.to_wire()
        assert list(wire.items()) == list(expected.items()), (
            f"{cls.__name__} map {list(wire)} is not its to_wire() {list(expected)}")
    return wired(cls, wire)


# --------------------------------------------------------------------------- both ways

_ID_DOC = "request id, echoed by the reply"
_SEED_DOC = "1..64 hex digits mixed into the deal (docs/protocol.md, 'The random stream')"


@register("ping", TO_SERVER, TO_CLIENT, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Ping(Event):
    """A heartbeat; the other side answers :class:`Pong` with the same ``id``."""

    id: int = req(REQ_ID)


@register("pong", TO_SERVER, TO_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Pong(Event):
    """The answer to a :class:`Ping`."""

    id: int = req(REQ_ID)


# --------------------------------------------------------------------------- client -> server


@register("hello", TO_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Hello(Event):
    """The client's first frame."""

    protocol: list[int] = req(ListOf(VERSION, 1, 16), "protocol versions the client speaks")
    name: str = req(NAME, "display name")
    client: str = req(Str(0, 64), "client software and version")
    resume: str | None = opt(TOKEN, "resume token from an earlier welcome")
    id: int | None = opt(REQ_ID, _ID_DOC)
    auth: dict[str, Any] | None = opt(AUTH, "log in: {password} or {api_token}")


@register("games", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class ListGames(Event):
    """Ask for the games and their options."""
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("matches", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class ListMatches(Event):
    """Ask for one page of the matches (optionally of one game or status) and the
    queues; ``cursor`` is the ``next`` of the previous page."""

    game: str | None = opt(GAME)
    status: str | None = opt(STATUS)
    limit: int | None = opt(Int(1, 100), "most summaries in the page (default: the "
                            "server's --list-limit)")
    cursor: str | None = opt(CURSOR, "where the page starts: the previous page's `next`")
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("create", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Create(Event):
    """Create a match and take a seat in it."""

    game: str = req(GAME)
    options: dict[str, Any] | None = opt(OPTIONS)
    bot: str | None = opt(Str(1, 32), "strategy name: a server bot takes the other seat")
    seat: int | None = opt(SEAT)
    turn_timer: int | None = opt(Int(0, 3600), "seconds per turn, 0 = off")
    abandon: str | None = opt(Enum(("forfeit", "bot")))
    rated: bool | None = opt(Bool(), "a rated match (accounts only)")
    client_seed: str | None = opt(CLIENT_SEED, _SEED_DOC)
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("join", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Join(Event):
    """Take a seat (a given one, or any free one)."""

    match: str = req(MATCH)
    seat: int | None = opt(SEAT)
    client_seed: str | None = opt(CLIENT_SEED, _SEED_DOC)
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("watch", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Watch(Event):
    """Spectate a match."""

    match: str = req(MATCH)
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("leave", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Leave(Event):
    """Stop watching, or leave a seat of a waiting match."""

    match: str = req(MATCH)
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("queue", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Queue(Event):
    """Wait for an opponent in a game's matchmaking queue."""

    game: str = req(GAME)
    options: dict[str, Any] | None = opt(OPTIONS)
    rated: bool | None = opt(Bool(), "the rated queue (accounts only)")
    client_seed: str | None = opt(CLIENT_SEED, _SEED_DOC)
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("unqueue", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Unqueue(Event):
    """Leave a matchmaking queue (one game's, or every one)."""

    game: str | None = opt(GAME)
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("intent", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Intent(Event):
    """Act: one element of the seat's ``legal`` list, on the snapshot of ``seq``."""

    match: str = req(MATCH)
    seq: int = req(SEQ)
    intent: dict[str, Any] = req(INTENT)
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("resign", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Resign(Event):
    """Resign a match (the opponent wins)."""

    match: str = req(MATCH)
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("auto_flip", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class AutoFlip(Event):
    """Turn the server's auto-flip for the seat on or off (War); ``delay`` sets its pace."""

    match: str = req(MATCH)
    on: bool = req(Bool())
    delay: float | None = opt(TIME, "seconds between the server's flips (the server keeps "
                                    "it within its bounds)")
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("fast_forward", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class FastForward(Event):
    """Ask (or stop asking) to play the rest of a War match out at once; it runs when
    every seat asks (a server bot always agrees)."""

    match: str = req(MATCH)
    on: bool = req(Bool())
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("records", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Records(Event):
    """List finished matches, newest first, one page at a time."""

    game: str | None = opt(GAME)
    player: str | None = opt(NAME, "only matches this name played")
    before: str | None = opt(Str(1, 128), "the `next` cursor of the previous page")
    limit: int | None = opt(Int(1, 50), "matches per page (default 20)")
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("record", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Record(Event):
    """One page of a finished match's record, as a spectator saw it or (``seat``) as
    the seat this session played saw it."""

    match: str = req(MATCH)
    seat: int | None = opt(SEAT, "see the match through this seat's eyes (yours only)")
    offset: int | None = opt(Int(0, MAX_ID), "moves to skip (default 0)")
    limit: int | None = opt(Int(1, 200), "moves per page (default 50)")
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("chat", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class ChatRequest(Event):
    """Say something in a match (the server relays it as :class:`Chat`)."""

    match: str = req(MATCH)
    text: str = req(CHAT_TEXT)
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("mute_spectators", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class MuteSpectators(Event):
    """A player stops (``on``) or starts again receiving the spectators' chat."""

    match: str = req(MATCH)
    on: bool = req(Bool())
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("register", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Register(Event):
    """Register the session's current name as an account with a password."""

    password: str = req(Str(0, 1024))
    bot: bool | None = opt(Bool(), "the account is a bot's")
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("logout", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Logout(Event):
    """Revoke the session's resume token; the server then closes the connection."""

    id: int | None = opt(REQ_ID, _ID_DOC)


@register("change_password", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class ChangePassword(Event):
    """Replace the account's password."""

    old: str = req(Str(0, 1024))
    new: str = req(Str(0, 1024))
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("token_create", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class TokenCreate(Event):
    """Create an API token for the account (for ``hello.auth.api_token``)."""

    label: str | None = opt(Str(1, 64), "what the token is for")
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("tokens", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class ListTokens(Event):
    """List the account's API tokens (never the tokens themselves)."""

    id: int | None = opt(REQ_ID, _ID_DOC)


@register("token_revoke", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class TokenRevoke(Event):
    """Revoke one of the account's API tokens (by its id)."""

    token: str = req(Str(1, 64), "the token's id")
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("set_bot", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class SetBot(Event):
    """Mark the account as a bot's, or not."""

    bot: bool = req(Bool())
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("profile", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileRequest(Event):
    """A name's profile: account, ratings, a page of recent matches."""

    name: str | None = opt(NAME, "default: your own")
    limit: int | None = opt(Int(1, 50), "recent matches per page")
    offset: int | None = opt(Int(0, 2**63 - 1), "recent matches to skip")
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("leaderboard", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderboardRequest(Event):
    """A page of a game's leaderboard, best first."""

    game: str = req(GAME)
    limit: int | None = opt(Int(1, 100))
    offset: int | None = opt(Int(0, 2**63 - 1))
    id: int | None = opt(REQ_ID, _ID_DOC)


#: An account as ``welcome.account`` and the account replies carry it.
ACCOUNT = Struct({"name": F(Str(1, 64)), "bot": F(Bool())})


# --------------------------------------------------------------------------- server -> client


@register("welcome", TO_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Welcome(Event):
    """The server's answer to a good hello."""

    protocol: int = req(VERSION)
    server: str = req(Str(0, 64))
    session: str = req(Str(1, 256))
    token: str = req(TOKEN)
    name: str = req(Str(1, 64))
    resumed: bool = req(Bool())
    limits: dict[str, Any] = req(LIMITS)
    account: dict[str, Any] | None = opt(ACCOUNT, "the account logged in (absent: a guest)")
    nodes: list[str] | None = opt(ListOf(Str(1, 300), 1, 64),
                                  "cluster mode: every live node's host:port, this one first")


@register("ok", TO_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Ok(Event):
    """Success reply to a request (``id`` last on the wire)."""

    match: str | None = opt(MATCH)
    seat: int | None = opt(SEAT)
    seq: int | None = opt(SEQ)
    game: str | None = opt(GAME)
    games: list[dict[str, Any]] | None = opt(ListOf(GAME_INFO, 0, 64))
    bots: list[dict[str, Any]] | None = opt(
        ListOf(BOT_INFO, 0, 32), "games: the strategies a server bot plays (`create`'s `bot`)")
    matches: list[dict[str, Any]] | None = opt(ListOf(SUMMARY, 0, 100))
    next: str | None = opt(CURSOR, "`matches`: the cursor of the next page (absent: the last)")
    queues: dict[str, Any] | None = opt(
        Data(max_depth=1, max_items=64, max_str=64, scalars_only=True))
    rated_queues: dict[str, Any] | None = opt(
        Data(max_depth=1, max_items=64, max_str=64, scalars_only=True))
    rated: bool | None = opt(Bool())
    account: dict[str, Any] | None = opt(ACCOUNT)
    profile: dict[str, Any] | None = opt(Data(max_depth=4, max_items=2048, max_str=256))
    entries: list[dict[str, Any]] | None = opt(ListOf(Data(max_depth=1, max_items=16), 0, 100))
    tokens: list[dict[str, Any]] | None = opt(ListOf(Data(max_depth=1, max_items=8), 0, 64))
    token: dict[str, Any] | None = opt(Data(max_depth=1, max_items=8))
    api_token: str | None = opt(TOKEN, "a new API token (sent once)")
    commitment: str | None = opt(Str(0, 128), "queue: the commitment of the match to come")
    delay: float | None = opt(TIME, "auto_flip: the pace now in force, seconds")
    records: list[dict[str, Any]] | None = opt(ListOf(SUMMARY, 0, 50))
    record: dict[str, Any] | None = opt(RECORD)
    next: str | int | None = opt(Nullable(Data(map_only=False, max_depth=1, max_str=128,
                                               scalars_only=True)),
                                 "records: the cursor of the next page; record: its offset")
    id: int | None = opt(REQ_ID, _ID_DOC)


@register("error", TO_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Error(Event):
    """A request failed, or the connection is closing for a protocol error.

    Build it from an exception with :meth:`protocol.errors.ProtocolError.to_event`.
    ``code`` is not checked against the table here: a newer server may send codes
    an older client does not know.
    """

    code: str = req(Str(1, 64))
    message: str = req(Str(0, 1024))
    id: int | None = opt(REQ_ID, _ID_DOC)
    field: str | None = opt(Str(0, 256))
    match: str | None = opt(MATCH)
    versions: list[int] | None = opt(ListOf(VERSION, 0, 16))
    retry_after: float | None = opt(
        TIME, "a refusal of pace: seconds until the same request may succeed")


errors.error_event = Error  # what ProtocolError.to_event builds


@register("snapshot", TO_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot(Event):
    """The state of one match as one seat (or a spectator: ``seat`` None) may see it."""

    match: str = req(MATCH)
    game: str = req(GAME)
    seq: int = req(SEQ)
    seat: int | None = req(Nullable(SEAT))
    view: dict[str, Any] = req(VIEW)
    legal: list[dict[str, Any]] = req(ListOf(LEGAL_INTENT, 0, 512))
    status: str = req(STATUS)
    events: list[dict[str, Any]] = req(ListOf(EVENT, 0, 1024))
    players: list[dict[str, Any]] = req(ListOf(PLAYER, 0, 16))
    options: dict[str, Any] = req(Data(max_depth=2, max_items=64, max_str=256))
    commitment: str = req(Str(0, 128))
    deadline: float | None = req(Nullable(TIME))
    auto_flip: bool = req(Bool())
    result: dict[str, Any] | None = opt(RESULT)
    reveal: dict[str, Any] | None = opt(REVEAL)
    stream: str | None = opt(Str(1, 32), "the match's random stream, once it has started")
    client_seeds: list[str] | None = opt(ListOf(CLIENT_SEED, 2, 2),
                                         "each seat's client seed, once the match has started")
    events_cut: bool | None = opt(Bool(), "true: older events the seat missed are left out")
    timers: list[float | None] | None = opt(ListOf(Nullable(TIME), 0, 16),
                                            "per seat: seconds left on its turn timer")
    timeouts: list[int] | None = opt(ListOf(Int(0, MAX_ID), 0, 16),
                                     "per seat: turn timeouts in a row")
    timeout_limit: int | None = opt(Int(0, MAX_ID), "timeouts in a row that forfeit (0: never)")
    auto_flip_delay: float | None = opt(TIME, "the seat's auto-flip pace, seconds")
    fast_forward: list[bool] | None = opt(ListOf(Bool(), 0, 16),
                                          "per seat: asks to play the rest out at once")


@register("presence", TO_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Presence(Event):
    """A seat's player connected or dropped (``grace``: seconds before forfeit)."""

    match: str = req(MATCH)
    seat: int = req(SEAT)
    name: str | None = req(Nullable(Str(0, 64)))
    connected: bool = req(Bool())
    grace: float | None = req(Nullable(TIME))


@register("chat", TO_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Chat(Event):
    """A chat line relayed to a match's audience (``seat`` None: a spectator)."""

    match: str = req(MATCH)
    seat: int | None = req(Nullable(SEAT))
    name: str = req(Str(0, 64))
    text: str = req(Str(0, 1024))
    role: str | None = opt(ROLE, "who said it: a player (seated) or a spectator")


@register("bye", TO_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Bye(Event):
    """The server closes the connection on purpose (``reason`` is a snake_case word)."""

    reason: str = req(Str(1, 64))
    message: str = req(Str(0, 1024))


#: The wire schema of every message, per direction, derived from the events.
SCHEMAS: dict[str, dict[str, Struct]] = {
    direction: {mtype: cls.SCHEMA for mtype, cls in registry.items()}
    for direction, registry in EVENTS.items()
}

#: Message types that are requests (may carry an ``id``; answered ``ok`` or ``error``).
REQUEST_TYPES = frozenset(t for t, cls in EVENTS[TO_SERVER].items() if cls.IS_REQUEST)

__all__ = [
    "DIRECTIONS", "EVENTS", "REQUEST_TYPES", "SCHEMAS", "TO_CLIENT", "TO_SERVER",
    "AutoFlip", "Bye", "Chat", "ChatRequest", "Create", "Error", "Event", "FieldSpec", "Hello",
    "Intent", "Join", "Leave", "ListGames", "ListMatches", "Ok", "Ping", "Pong", "Presence",
    "Queue", "Resign", "Snapshot", "Unqueue", "Watch", "Welcome",
    "ChangePassword", "LeaderboardRequest", "ListTokens", "Logout", "ProfileRequest",
    "Register", "SetBot", "TokenCreate", "TokenRevoke",
    "describe", "from_wire", "opt", "outgoing", "req", "trusted", "trusted_wire", "validate",
]
