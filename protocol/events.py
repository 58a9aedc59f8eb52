"""One frozen, validated type per protocol message, with its wire form.

Every message of docs/protocol.md is an :class:`Event` subclass, registered for
the direction(s) it travels in (:data:`TO_SERVER`: client -> server,
:data:`TO_CLIENT`: server -> client). Like h11's events, an event checks its
fields when it is built::

    Join(match="m1", seat=0)                    # fine
    Join(match="", seat=0)                      # LocalProtocolError naming "match"

* ``event.to_wire()`` is the message map (``type`` first, then the fields in
  declaration order, which puts a request's or reply's ``id`` last, as the
  project's client and server have always sent it; an optional field left at
  None is absent);
* :func:`from_wire` turns a decoded map into the event its ``type`` names, or
  raises :class:`~protocol.errors.RemoteProtocolError` (``bad_message`` naming the
  field, or ``unknown_type``), echoing the map's ``id`` when it had a valid one.
  Unknown extra fields are ignored, so a newer peer may add some.

The field declarations here are the single source of truth for every message:
:data:`SCHEMAS` (used by :func:`validate` and the docs test) is derived from them.

Constructor arguments are keyword-only. Values of free-form fields (views,
intents, options) are not copied: once a map or list is in an event, treat it
as frozen too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from protocol.errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from protocol.schema import (
    CHAT_TEXT,
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
    REQ_ID,
    RESULT,
    REVEAL,
    SEAT,
    SEQ,
    STATUS,
    SUMMARY,
    TIME,
    TOKEN,
    VERSION,
    VIEW,
    Bool,
    Checker,
    Data,
    Enum,
    F,
    FieldError,
    Int,
    ListOf,
    Nullable,
    Str,
    Struct,
    describe_check,
    kind_name,
)

TO_SERVER = "to_server"
TO_CLIENT = "to_client"
DIRECTIONS = (TO_SERVER, TO_CLIENT)

E = TypeVar("E", bound="Event")


def _field(check: Checker, doc: str = "", *, optional: bool = False) -> Any:
    meta = {"check": check, "doc": doc, "optional": optional}
    if optional:
        return dataclasses.field(default=None, metadata=meta)
    return dataclasses.field(metadata=meta)


def req(check: Checker, doc: str = "") -> Any:
    """A required field checked by ``check``."""
    return _field(check, doc)


def opt(check: Checker, doc: str = "") -> Any:
    """An optional field (None: absent on the wire) checked by ``check`` when set."""
    return _field(check, doc, optional=True)


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One declared field of an event."""

    name: str
    check: Checker
    required: bool
    doc: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Base of every message type; see the module docstring.

    Class attributes (set by :func:`_register`): ``TYPE`` (the wire ``type``),
    ``FIELDS`` (the :class:`FieldSpec` of each field, in wire order), ``KEYS`` (the
    wire map's possible keys, ``type`` included), ``SCHEMA``
    (the :class:`~protocol.schema.Struct` checking a wire map), ``IS_REQUEST``
    (True for client requests that may carry an ``id`` and get ``ok``/``error``).
    """

    TYPE: ClassVar[str] = ""
    FIELDS: ClassVar[tuple[FieldSpec, ...]] = ()
    KEYS: ClassVar[frozenset[str]] = frozenset({"type"})
    SCHEMA: ClassVar[Struct] = Struct({})
    IS_REQUEST: ClassVar[bool] = False

    def __post_init__(self) -> None:
        for spec in self.FIELDS:
            value = getattr(self, spec.name)
            if value is None and not spec.required:
                continue
            try:
                spec.check(value, spec.name)
            except FieldError as exc:
                raise LocalProtocolError(
                    "bad_message", f"{self.TYPE} {exc.message}", exc.field
                ) from None

    def to_wire(self) -> dict[str, Any]:
        """The message map, ``type`` first; optional fields left at None are absent."""
        msg: dict[str, Any] = {"type": self.TYPE}
        for spec in self.FIELDS:
            value = getattr(self, spec.name)
            if value is not None or spec.required:
                msg[spec.name] = value
        return msg

    @classmethod
    def from_wire(cls: type[E], msg: Mapping[str, Any]) -> E:
        """This event from its wire map (whose ``type`` must be :attr:`TYPE`).

        Raises:
            RemoteProtocolError: ``bad_message`` naming the field (``.id`` set when
                the map carried a valid id).
        """
        if not isinstance(msg, dict):
            raise RemoteProtocolError("bad_message",
                                      f"a message must be a map, got {kind_name(msg)}")
        if msg.get("type") != cls.TYPE:
            raise RemoteProtocolError("bad_message", f"expected a {cls.TYPE!r} message",
                                      "type", id=_echo(msg))
        return _parse(cls, msg)


#: type -> event class, per direction: the one registry :func:`from_wire` uses.
EVENTS: dict[str, dict[str, type[Event]]] = {TO_SERVER: {}, TO_CLIENT: {}}


def _register(mtype: str, *directions: str, request: bool = False) -> Callable[[type[E]], type[E]]:
    def wrap(cls: type[E]) -> type[E]:
        cls.TYPE = mtype
        cls.IS_REQUEST = request
        cls.FIELDS = tuple(
            FieldSpec(f.name, f.metadata["check"], not f.metadata["optional"], f.metadata["doc"])
            for f in dataclasses.fields(cls)
        )
        cls.KEYS = frozenset({"type", *(s.name for s in cls.FIELDS)})
        cls.SCHEMA = Struct({s.name: F(s.check, s.required, s.doc) for s in cls.FIELDS})
        for direction in directions:
            if mtype in EVENTS[direction]:
                raise ValueError(f"two events for {mtype!r} {direction}")
            EVENTS[direction][mtype] = cls
        return cls

    return wrap


def _echo(msg: Mapping[str, Any]) -> int | None:
    raw = msg.get("id")
    if type(raw) is int and 0 <= raw <= MAX_ID:
        return raw
    return None


def _parse(cls: type[E], msg: Mapping[str, Any]) -> E:
    """Check ``msg`` against ``cls``'s schema once and build the event unchecked."""
    try:
        cls.SCHEMA(msg, "")
    except FieldError as exc:
        raise RemoteProtocolError("bad_message", exc.message, exc.field, id=_echo(msg)) from None
    event = object.__new__(cls)
    for spec in cls.FIELDS:
        object.__setattr__(event, spec.name, msg.get(spec.name))
    return event


def from_wire(msg: Any, direction: str) -> Event:
    """The event for a decoded message map travelling in ``direction``.

    Args:
        msg: a decoded map (from :func:`protocol.codec.unpack`).
        direction: :data:`TO_SERVER` or :data:`TO_CLIENT`.

    Raises:
        RemoteProtocolError: ``bad_message`` (not a map, no string ``type``, or a
            field wrong; ``field`` names it) or ``unknown_type``; ``.id`` is the
            map's id when it carried a valid one.
        ValueError: ``direction`` is not one of :data:`DIRECTIONS` (a caller bug).
    """
    return _parse(_class_for(msg, direction), msg)


def _class_for(msg: Any, direction: str) -> type[Event]:
    registry = EVENTS.get(direction)
    if registry is None:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if not isinstance(msg, dict):
        raise RemoteProtocolError("bad_message", f"a message must be a map, got {kind_name(msg)}")
    mtype = msg.get("type")
    if not isinstance(mtype, str):
        raise RemoteProtocolError("bad_message", "the message has no string field 'type'",
                                  "type", id=_echo(msg))
    cls = registry.get(mtype)
    if cls is None:
        shown = mtype if len(mtype) <= 32 else mtype[:32] + "..."
        raise RemoteProtocolError("unknown_type", f"unknown message type {shown!r}", "type",
                                  id=_echo(msg))
    return cls


def outgoing(msg: Event | Mapping[str, Any], direction: str) -> Event:
    """The event to send for ``msg``: an event of ``direction`` as it is, or a wire
    map (the transitional form) turned into its event.

    Raises:
        LocalProtocolError: ``msg`` is no valid message of ``direction`` (``bad_message``
            naming the field, ``unknown_type``), or a map has a field the protocol does
            not know (refused, never silently dropped). It is our own mistake.
    """
    if isinstance(msg, Event):
        if EVENTS[direction].get(msg.TYPE) is not type(msg):
            raise LocalProtocolError("bad_message", f"a {type(msg).__name__} does not "
                                     f"travel {direction}", "type")
        return msg
    try:
        event = from_wire(msg, direction)
    except ProtocolError as exc:
        raise LocalProtocolError(exc.code, exc.message, exc.field) from None
    if not msg.keys() <= event.KEYS:
        unknown = sorted(k for k in msg if k not in event.KEYS)[0]
        raise LocalProtocolError("bad_message", f"{event.TYPE} has no field {unknown!r}", unknown)
    return event


def validate(msg: Any, direction: str) -> dict[str, Any]:
    """Check a decoded map against its message's fields, without building an event.

    Returns:
        ``msg`` itself (unknown extra fields are left in and ignored).

    Raises:
        RemoteProtocolError: as :func:`from_wire`.
        ValueError: ``direction`` is not one of :data:`DIRECTIONS`.
    """
    cls = _class_for(msg, direction)
    try:
        cls.SCHEMA(msg, "")
    except FieldError as exc:
        raise RemoteProtocolError("bad_message", exc.message, exc.field, id=_echo(msg)) from None
    return msg


def describe(direction: str, mtype: str) -> list[tuple[str, bool, str]]:
    """(field, required, description) for each field of a message, for documentation."""
    return [(s.name, s.required, describe_check(s.check)) for s in EVENTS[direction][mtype].FIELDS]


# --------------------------------------------------------------------------- both ways

_ID_DOC = "request id, echoed by the reply"


@_register("ping", TO_SERVER, TO_CLIENT, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Ping(Event):
    """A heartbeat; the other side answers :class:`Pong` with the same ``id``."""

    id: int = req(REQ_ID)


@_register("pong", TO_SERVER, TO_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Pong(Event):
    """The answer to a :class:`Ping`."""

    id: int = req(REQ_ID)


# --------------------------------------------------------------------------- client -> server


@_register("hello", TO_SERVER)
@dataclass(frozen=True, slots=True, kw_only=True)
class Hello(Event):
    """The client's first frame."""

    protocol: list[int] = req(ListOf(VERSION, 1, 16), "protocol versions the client speaks")
    name: str = req(NAME, "display name")
    client: str = req(Str(0, 64), "client software and version")
    resume: str | None = opt(TOKEN, "resume token from an earlier welcome")
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("games", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class ListGames(Event):
    """Ask for the games and their options."""
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("matches", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class ListMatches(Event):
    """Ask for the matches (optionally of one game or status) and the queues."""

    game: str | None = opt(GAME)
    status: str | None = opt(STATUS)
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("create", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Create(Event):
    """Create a match and take a seat in it."""

    game: str = req(GAME)
    options: dict[str, Any] | None = opt(OPTIONS)
    bot: str | None = opt(Str(1, 32), "strategy name: a server bot takes the other seat")
    seat: int | None = opt(SEAT)
    turn_timer: int | None = opt(Int(0, 3600), "seconds per turn, 0 = off")
    abandon: str | None = opt(Enum(("forfeit", "bot")))
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("join", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Join(Event):
    """Take a seat (a given one, or any free one)."""

    match: str = req(MATCH)
    seat: int | None = opt(SEAT)
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("watch", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Watch(Event):
    """Spectate a match."""

    match: str = req(MATCH)
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("leave", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Leave(Event):
    """Stop watching, or leave a seat of a waiting match."""

    match: str = req(MATCH)
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("queue", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Queue(Event):
    """Wait for an opponent in a game's matchmaking queue."""

    game: str = req(GAME)
    options: dict[str, Any] | None = opt(OPTIONS)
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("unqueue", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Unqueue(Event):
    """Leave a matchmaking queue (one game's, or every one)."""

    game: str | None = opt(GAME)
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("intent", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Intent(Event):
    """Act: one element of the seat's ``legal`` list, on the snapshot of ``seq``."""

    match: str = req(MATCH)
    seq: int = req(SEQ)
    intent: dict[str, Any] = req(INTENT)
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("resign", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class Resign(Event):
    """Resign a match (the opponent wins)."""

    match: str = req(MATCH)
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("auto_flip", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class AutoFlip(Event):
    """Turn the server's auto-flip for the seat on or off (War)."""

    match: str = req(MATCH)
    on: bool = req(Bool())
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("chat", TO_SERVER, request=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class ChatRequest(Event):
    """Say something in a match (the server relays it as :class:`Chat`)."""

    match: str = req(MATCH)
    text: str = req(CHAT_TEXT)
    id: int | None = opt(REQ_ID, _ID_DOC)


# --------------------------------------------------------------------------- server -> client


@_register("welcome", TO_CLIENT)
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


@_register("ok", TO_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Ok(Event):
    """Success reply to a request (``id`` last on the wire)."""

    match: str | None = opt(MATCH)
    seat: int | None = opt(SEAT)
    seq: int | None = opt(SEQ)
    game: str | None = opt(GAME)
    games: list[dict[str, Any]] | None = opt(ListOf(GAME_INFO, 0, 64))
    matches: list[dict[str, Any]] | None = opt(ListOf(SUMMARY, 0, 10000))
    queues: dict[str, Any] | None = opt(
        Data(max_depth=1, max_items=64, max_str=64, scalars_only=True))
    id: int | None = opt(REQ_ID, _ID_DOC)


@_register("error", TO_CLIENT)
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


@_register("snapshot", TO_CLIENT)
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


@_register("presence", TO_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Presence(Event):
    """A seat's player connected or dropped (``grace``: seconds before forfeit)."""

    match: str = req(MATCH)
    seat: int = req(SEAT)
    name: str | None = req(Nullable(Str(0, 64)))
    connected: bool = req(Bool())
    grace: float | None = req(Nullable(TIME))


@_register("chat", TO_CLIENT)
@dataclass(frozen=True, slots=True, kw_only=True)
class Chat(Event):
    """A chat line relayed to a match's audience (``seat`` None: a spectator)."""

    match: str = req(MATCH)
    seat: int | None = req(Nullable(SEAT))
    name: str = req(Str(0, 64))
    text: str = req(Str(0, 1024))


@_register("bye", TO_CLIENT)
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
    "describe", "from_wire", "opt", "outgoing", "req", "validate",
]
