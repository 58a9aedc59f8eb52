"""Message schemas: the single source of truth for every message, per direction.

Each message type has a schema for the direction it travels in
(:data:`TO_SERVER`: client -> server, :data:`TO_CLIENT`: server -> client).
:func:`validate` checks a decoded map against it and returns the map, or raises
a :class:`~protocol.errors.ProtocolError` naming the offending field.

Rules common to all schemas:

* unknown extra fields are ignored (kept in the returned map, never checked),
  so a version-2 peer may add fields;
* ``bool`` is never accepted where an integer is expected (msgpack keeps them
  apart, and so do we);
* free-form values (intents, options, views, events) are "data": nil, bool,
  int, float, str, or arrays/maps of data with string keys, bounded in size
  and depth (see :class:`Data`).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from protocol.errors import ProtocolError

TO_SERVER = "to_server"
TO_CLIENT = "to_client"
DIRECTIONS = (TO_SERVER, TO_CLIENT)

INT64_MIN = -(2**63)
UINT64_MAX = 2**64 - 1
#: Largest request id (ids are non-negative and fit in a signed 64-bit integer).
MAX_ID = 2**63 - 1

Checker = Callable[[Any, str], Any]


def _bad(path: str, message: str) -> ProtocolError:
    return ProtocolError("bad_message", f"{path}: {message}", path)


def _kind(value: Any) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "boolean"
    return {
        int: "integer",
        float: "float",
        str: "string",
        bytes: "binary",
        list: "array",
        dict: "map",
    }.get(type(value), type(value).__name__)


# --------------------------------------------------------------------------- checkers


class _Where(Exception):
    """A failure deep inside a Data value; ``parts`` collects the path while unwinding."""

    def __init__(self, message: str, whole: bool = False) -> None:
        self.message = message
        self.whole = whole
        self.parts: list[str] = []


@dataclass(frozen=True, slots=True)
class Str:
    """A string of ``min``..``max`` characters; ``text`` refuses control characters."""

    min: int = 0
    max: int = 256
    text: bool = False

    def __call__(self, value: Any, path: str) -> Any:
        if not isinstance(value, str):
            raise _bad(path, f"expected a string, got {_kind(value)}")
        if not self.min <= len(value) <= self.max:
            raise _bad(path, f"length {len(value)} outside {self.min}..{self.max}")
        if self.text and any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in value):
            raise _bad(path, "control characters are not allowed")
        return value

    def describe(self) -> str:
        return f"str {self.min}..{self.max}" + (" (no control chars)" if self.text else "")


@dataclass(frozen=True, slots=True)
class Int:
    """An integer (never a bool) in ``min``..``max``."""

    min: int = INT64_MIN
    max: int = UINT64_MAX

    def __call__(self, value: Any, path: str) -> Any:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _bad(path, f"expected an integer, got {_kind(value)}")
        if not self.min <= value <= self.max:
            raise _bad(path, f"{value} outside {self.min}..{self.max}")
        return value

    def describe(self) -> str:
        return f"int {self.min}..{self.max}"


@dataclass(frozen=True, slots=True)
class Num:
    """A finite number (int or float, never a bool) in ``min``..``max``."""

    min: float = -math.inf
    max: float = math.inf

    def __call__(self, value: Any, path: str) -> Any:
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise _bad(path, f"expected a number, got {_kind(value)}")
        if not math.isfinite(value) or not self.min <= value <= self.max:
            raise _bad(path, f"{value} outside {self.min}..{self.max}")
        return value

    def describe(self) -> str:
        return "number" if self.min == -math.inf else f"number >= {self.min:g}"


@dataclass(frozen=True, slots=True)
class Bool:
    """true or false."""

    def __call__(self, value: Any, path: str) -> Any:
        if not isinstance(value, bool):
            raise _bad(path, f"expected a boolean, got {_kind(value)}")
        return value

    def describe(self) -> str:
        return "bool"


@dataclass(frozen=True, slots=True)
class Enum:
    """One of the given strings."""

    choices: tuple[str, ...]

    def __call__(self, value: Any, path: str) -> Any:
        if not isinstance(value, str) or value not in self.choices:
            raise _bad(path, f"expected one of {', '.join(self.choices)}")
        return value

    def describe(self) -> str:
        return " | ".join(f'"{c}"' for c in self.choices)


@dataclass(frozen=True, slots=True)
class Nullable:
    """nil, or what ``inner`` accepts."""

    inner: Checker

    def __call__(self, value: Any, path: str) -> Any:
        return None if value is None else self.inner(value, path)

    def describe(self) -> str:
        return f"{_describe(self.inner)} | nil"


@dataclass(frozen=True, slots=True)
class ListOf:
    """An array of ``min``..``max`` items, each accepted by ``item``."""

    item: Checker
    min: int = 0
    max: int = 64

    def __call__(self, value: Any, path: str) -> Any:
        if not isinstance(value, list | tuple):
            raise _bad(path, f"expected an array, got {_kind(value)}")
        if not self.min <= len(value) <= self.max:
            raise _bad(path, f"{len(value)} items, outside {self.min}..{self.max}")
        for i, item in enumerate(value):
            self.item(item, f"{path}[{i}]")
        return value

    def describe(self) -> str:
        return f"[{_describe(self.item)}] ({self.min}..{self.max} items)"


@dataclass(frozen=True, slots=True)
class F:
    """A field of a :class:`Struct`: its checker and whether it must be present."""

    check: Checker
    required: bool = True
    doc: str = ""


@dataclass(frozen=True, slots=True)
class Struct:
    """A map with named fields; unknown extra fields are ignored."""

    fields: Mapping[str, F] = field(default_factory=dict)

    def __call__(self, value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise _bad(path, f"expected a map, got {_kind(value)}")
        for name, spec in self.fields.items():
            sub = f"{path}.{name}" if path else name
            if name not in value:
                if spec.required:
                    raise _bad(sub, "missing")
                continue
            spec.check(value[name], sub)
        return value

    def describe(self) -> str:
        return (
            "{" + ", ".join(f"{n}{'' if f.required else '?'}" for n, f in self.fields.items()) + "}"
        )


@dataclass(frozen=True, slots=True)
class Data:
    """A free-form value: nil/bool/int/float/str, or arrays/maps (str keys) of data.

    Bounds: ``max_depth`` levels of arrays/maps (the value itself is level 1),
    ``max_items`` items in total over all arrays and maps, ``max_str`` characters
    per string (keys included). ``map_only`` requires the top level to be a map;
    ``scalars_only`` forbids arrays/maps below the top level.
    """

    max_depth: int = 4
    max_items: int = 64
    max_str: int = 256
    map_only: bool = True
    scalars_only: bool = False

    def __call__(self, value: Any, path: str) -> Any:
        if self.map_only and not isinstance(value, dict):
            raise _bad(path, f"expected a map, got {_kind(value)}")
        budget = [self.max_items]
        try:
            self._walk(value, 1, budget)
        except _Where as where:
            sub = path + "".join(reversed(where.parts))
            raise _bad(path if where.whole else sub, where.message) from None
        return value

    def _walk(self, value: Any, depth: int, budget: list[int]) -> None:
        """Check ``value`` (recursion depth <= max_depth); the path is built only on failure."""
        kind = type(value)
        if kind is not dict and kind is not list and kind is not tuple:
            self._scalar(value)
            return
        if depth > self.max_depth or (self.scalars_only and depth > 1):
            raise _Where(f"nested deeper than {1 if self.scalars_only else self.max_depth}")
        budget[0] -= len(value)
        if budget[0] < 0:
            raise _Where(f"more than {self.max_items} items in total", whole=True)
        max_str = self.max_str
        if kind is dict:
            for key, sub in value.items():
                if type(key) is not str or len(key) > max_str:
                    raise _Where("map keys must be strings within the length limit")
                sub_kind = type(sub)
                if sub_kind is int or sub_kind is bool or sub is None:
                    continue
                if sub_kind is str and len(sub) <= max_str:
                    continue
                try:
                    self._walk(sub, depth + 1, budget)
                except _Where as where:
                    where.parts.append(f".{key}")
                    raise
        else:
            for i, sub in enumerate(value):
                sub_kind = type(sub)
                if sub_kind is int or sub_kind is bool or sub is None:
                    continue
                if sub_kind is str and len(sub) <= max_str:
                    continue
                try:
                    self._walk(sub, depth + 1, budget)
                except _Where as where:
                    where.parts.append(f"[{i}]")
                    raise

    def _scalar(self, value: Any) -> None:
        if isinstance(value, str):
            if len(value) > self.max_str:
                raise _Where(f"string longer than {self.max_str}")
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise _Where("numbers must be finite")
        elif value is not None and not isinstance(value, int):  # bool is an int
            raise _Where(f"{_kind(value)} is not allowed here")

    def describe(self) -> str:
        top = "map" if self.map_only else "value"
        inner = "scalars" if self.scalars_only else f"data, depth <= {self.max_depth}"
        return f"{top} of {inner}, <= {self.max_items} items, strings <= {self.max_str}"


def _describe(check: Checker) -> str:
    describe = getattr(check, "describe", None)
    return describe() if describe else type(check).__name__


# --------------------------------------------------------------------------- field types

REQ_ID = Int(0, MAX_ID)
NAME = Str(1, 32, text=True)
GAME = Str(1, 32)
MATCH = Str(1, 64)
SEAT = Int(0, 1)
SEQ = Int(0, MAX_ID)
TOKEN = Str(1, 256)
CHAT_TEXT = Str(1, 200, text=True)
OPTIONS = Data(max_depth=1, max_items=32, max_str=64, scalars_only=True)
INTENT = Data(max_depth=4, max_items=64, max_str=64)
STATUS = Enum(("waiting", "active", "finished"))
#: Generous bounds for what the server sends (views, events, legal intents).
VIEW = Data(max_depth=8, max_items=8192, max_str=1024)
EVENT = Data(max_depth=8, max_items=1024, max_str=1024)
LEGAL_INTENT = Data(max_depth=4, max_items=64, max_str=64)
TIME = Num(0)

PLAYER = Struct(
    {
        "seat": F(SEAT),
        "name": F(Nullable(Str(0, 64))),
        "connected": F(Bool()),
        "bot": F(Nullable(Str(0, 64))),
    }
)
OPTION_SPEC = Struct(
    {
        "name": F(Str(1, 64)),
        "kind": F(Str(1, 32)),
        "default": F(Data(map_only=False, max_depth=1, max_str=256)),
        "doc": F(Str(0, 1024)),
        "choices": F(Data(map_only=False, max_depth=2, max_items=256, max_str=256), required=False),
        "min": F(Nullable(Num()), required=False),
        "max": F(Nullable(Num()), required=False),
    }
)
GAME_INFO = Struct(
    {
        "name": F(GAME),
        "seats": F(Int(1, 16)),
        "options": F(ListOf(OPTION_SPEC, 0, 64)),
    }
)
SUMMARY = Struct(
    {
        "match": F(MATCH),
        "game": F(GAME),
        "status": F(STATUS),
        "options": F(Data(max_depth=2, max_items=64, max_str=256)),
        "seq": F(SEQ),
        "players": F(ListOf(PLAYER, 0, 16)),
        "spectators": F(Int(0, MAX_ID)),
        "created": F(TIME),
    }
)
LIMITS = Struct(
    {
        "max_frame": F(Int(1, 2**32 - 1)),
        "rate": F(Num(0)),
        "burst": F(Num(0)),
        "ping_interval": F(Num(0)),
        "ping_timeout": F(Num(0)),
        "grace": F(Num(0)),
        "handshake_timeout": F(Num(0)),
    }
)


def _msg(**fields: F) -> Struct:
    return Struct(fields)


def _opt(check: Checker, doc: str = "") -> F:
    return F(check, required=False, doc=doc)


_ID = _opt(REQ_ID, "request id, echoed by the reply")

SCHEMAS: dict[str, dict[str, Struct]] = {
    TO_SERVER: {
        "hello": _msg(
            protocol=F(ListOf(Int(0, 65535), 1, 16), doc="protocol versions the client speaks"),
            name=F(NAME, doc="display name"),
            client=F(Str(0, 64), doc="client software and version"),
            resume=_opt(TOKEN, "resume token from an earlier welcome"),
            id=_ID,
        ),
        "ping": _msg(id=F(REQ_ID)),
        "pong": _msg(id=F(REQ_ID)),
        "games": _msg(id=_ID),
        "matches": _msg(id=_ID, game=_opt(GAME), status=_opt(STATUS)),
        "create": _msg(
            id=_ID,
            game=F(GAME),
            options=_opt(OPTIONS),
            bot=_opt(Str(1, 32), "strategy name: a server bot takes the other seat"),
            seat=_opt(SEAT),
            turn_timer=_opt(Int(0, 3600), "seconds per turn, 0 = off"),
            abandon=_opt(Enum(("forfeit", "bot"))),
        ),
        "join": _msg(id=_ID, match=F(MATCH), seat=_opt(SEAT)),
        "watch": _msg(id=_ID, match=F(MATCH)),
        "leave": _msg(id=_ID, match=F(MATCH)),
        "queue": _msg(id=_ID, game=F(GAME), options=_opt(OPTIONS)),
        "unqueue": _msg(id=_ID, game=_opt(GAME)),
        "intent": _msg(id=_ID, match=F(MATCH), seq=F(SEQ), intent=F(INTENT)),
        "resign": _msg(id=_ID, match=F(MATCH)),
        "auto_flip": _msg(id=_ID, match=F(MATCH), on=F(Bool())),
        "chat": _msg(id=_ID, match=F(MATCH), text=F(CHAT_TEXT)),
    },
    TO_CLIENT: {
        "welcome": _msg(
            protocol=F(Int(0, 65535)),
            server=F(Str(0, 64)),
            session=F(Str(1, 256)),
            token=F(TOKEN),
            name=F(Str(1, 64)),
            resumed=F(Bool()),
            limits=F(LIMITS),
        ),
        "ping": _msg(id=F(REQ_ID)),
        "pong": _msg(id=F(REQ_ID)),
        "ok": _msg(
            id=_ID,
            match=_opt(MATCH),
            seat=_opt(SEAT),
            seq=_opt(SEQ),
            game=_opt(GAME),
            games=_opt(ListOf(GAME_INFO, 0, 64)),
            matches=_opt(ListOf(SUMMARY, 0, 10000)),
            queues=_opt(Data(max_depth=1, max_items=64, max_str=64, scalars_only=True)),
        ),
        "error": _msg(
            id=_ID,
            code=F(Str(1, 64)),
            message=F(Str(0, 1024)),
            field=_opt(Str(0, 256)),
            match=_opt(MATCH),
            versions=_opt(ListOf(Int(0, 65535), 0, 16)),
        ),
        "snapshot": _msg(
            match=F(MATCH),
            game=F(GAME),
            seq=F(SEQ),
            seat=F(Nullable(SEAT)),
            view=F(VIEW),
            legal=F(ListOf(LEGAL_INTENT, 0, 512)),
            status=F(STATUS),
            events=F(ListOf(EVENT, 0, 1024)),
            players=F(ListOf(PLAYER, 0, 16)),
            options=F(Data(max_depth=2, max_items=64, max_str=256)),
            commitment=F(Str(0, 128)),
            deadline=F(Nullable(TIME)),
            auto_flip=F(Bool()),
            result=_opt(Struct({"winner": F(Nullable(SEAT)), "reason": F(Str(0, 64))})),
            reveal=_opt(Struct({"seed": F(Str(0, 128)), "salt": F(Str(0, 256))})),
        ),
        "presence": _msg(
            match=F(MATCH),
            seat=F(SEAT),
            name=F(Nullable(Str(0, 64))),
            connected=F(Bool()),
            grace=F(Nullable(TIME)),
        ),
        "chat": _msg(
            match=F(MATCH), seat=F(Nullable(SEAT)), name=F(Str(0, 64)), text=F(Str(0, 1024))
        ),
        "bye": _msg(reason=F(Str(1, 64)), message=F(Str(0, 1024))),
    },
}

#: Message types that are requests (may carry an ``id``; answered ``ok`` or ``error``).
REQUEST_TYPES = frozenset(t for t in SCHEMAS[TO_SERVER] if t not in ("hello", "pong"))


def validate(msg: Any, direction: str) -> dict[str, Any]:
    """Check a decoded message against its schema for ``direction``.

    Args:
        msg: a decoded map (from :func:`protocol.codec.unpack`).
        direction: :data:`TO_SERVER` or :data:`TO_CLIENT`.

    Returns:
        ``msg`` itself (extra unknown fields are left in and ignored).

    Raises:
        ProtocolError: ``bad_message`` naming the field (``field`` is a dotted path),
            or ``unknown_type``; ``.id`` is set when the message carried a valid id.
        ValueError: ``direction`` is not one of :data:`DIRECTIONS` (a caller bug).
    """
    if direction not in SCHEMAS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if not isinstance(msg, dict):
        raise ProtocolError("bad_message", f"a message must be a map, got {_kind(msg)}")
    raw_id = msg.get("id")
    echo = (
        raw_id
        if isinstance(raw_id, int) and not isinstance(raw_id, bool) and 0 <= raw_id <= MAX_ID
        else None
    )
    mtype = msg.get("type")
    if not isinstance(mtype, str):
        raise ProtocolError(
            "bad_message", "the message has no string field 'type'", "type", id=echo
        )
    schema = SCHEMAS[direction].get(mtype)
    if schema is None:
        shown = mtype if len(mtype) <= 32 else mtype[:32] + "..."
        raise ProtocolError("unknown_type", f"unknown message type {shown!r}", "type", id=echo)
    try:
        schema(msg, "")
    except ProtocolError as exc:
        exc.id = echo
        raise
    return msg


def describe(direction: str, mtype: str) -> list[tuple[str, bool, str]]:
    """(field, required, description) for each field of a message, for documentation."""
    schema = SCHEMAS[direction][mtype]
    return [(name, spec.required, _describe(spec.check)) for name, spec in schema.fields.items()]
