"""The value checkers every message field is built from, and the shared field types.

A checker is a callable ``check(value, path)`` that returns ``value`` or raises
:class:`FieldError` naming the offending path (a dotted path such as
``"players[0].name"``). The events of :mod:`protocol.events` declare each field
with one of these; this module knows nothing of message types or error kinds.

Rules common to all checkers:

* unknown extra fields of a :class:`Struct` are ignored (a newer peer may add some);
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

INT64_MIN = -(2**63)
UINT64_MAX = 2**64 - 1
#: Largest request id (ids are non-negative and fit in a signed 64-bit integer).
MAX_ID = 2**63 - 1

Checker = Callable[[Any, str], Any]


class FieldError(Exception):
    """A value failed its checker.

    Attributes:
        field: the dotted path of the offending value ("" for the whole message).
        message: what is wrong, prefixed by the path.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _bad(path: str, message: str) -> FieldError:
    return FieldError(path, f"{path}: {message}")


def _again(check: Checker, value: Any, path: str) -> None:
    """Re-run a check that failed with an empty path, to raise its error with ``path``.

    Containers check their items with ``""`` and build an item's path only when it
    failed (formatting a path per item was most of the cost of a valid message).
    """
    check(value, path)
    raise AssertionError(f"{path}: a check failed once and passed the second time")


def kind_name(value: Any) -> str:
    """How a value's type is named in error messages (msgpack's words)."""
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
            raise _bad(path, f"expected a string, got {kind_name(value)}")
        if not self.min <= len(value) <= self.max:
            raise _bad(path, f"length {len(value)} outside {self.min}..{self.max}")
        if self.text and any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in value):
            raise _bad(path, "control characters are not allowed")
        return value

    def describe(self) -> str:
        return f"str {self.min}..{self.max}" + (" (no control chars)" if self.text else "")


@dataclass(frozen=True, slots=True)
class Hex:
    """A string of ``min``..``max`` hexadecimal digits (either case)."""

    min: int = 1
    max: int = 64

    def __call__(self, value: Any, path: str) -> Any:
        Str(self.min, self.max)(value, path)
        if value.strip("0123456789abcdefABCDEF"):
            raise _bad(path, "expected hexadecimal digits only")
        return value

    def describe(self) -> str:
        return f"hex {self.min}..{self.max} digits"


@dataclass(frozen=True, slots=True)
class Int:
    """An integer (never a bool) in ``min``..``max``."""

    min: int = INT64_MIN
    max: int = UINT64_MAX

    def __call__(self, value: Any, path: str) -> Any:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _bad(path, f"expected an integer, got {kind_name(value)}")
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
            raise _bad(path, f"expected a number, got {kind_name(value)}")
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
            raise _bad(path, f"expected a boolean, got {kind_name(value)}")
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
        return f"{describe_check(self.inner)} | nil"


@dataclass(frozen=True, slots=True)
class ListOf:
    """An array of ``min``..``max`` items, each accepted by ``item``."""

    item: Checker
    min: int = 0
    max: int = 64

    def __call__(self, value: Any, path: str) -> Any:
        if not isinstance(value, list | tuple):
            raise _bad(path, f"expected an array, got {kind_name(value)}")
        if not self.min <= len(value) <= self.max:
            raise _bad(path, f"{len(value)} items, outside {self.min}..{self.max}")
        check = self.item
        for i, item in enumerate(value):
            try:
                check(item, "")
            except FieldError:
                _again(check, item, f"{path}[{i}]")
        return value

    def describe(self) -> str:
        return f"[{describe_check(self.item)}] ({self.min}..{self.max} items)"


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
    #: :func:`_plainly_valid_struct`'s straight-line check of a map of these fields
    _fast: Callable[[Any], bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_fast", _plainly_valid_struct(self.fields))

    def __call__(self, value: Any, path: str) -> Any:
        if self._fast(value):
            return value
        return self._walk(value, path)   # not shown valid by the fast check

    def _walk(self, value: Any, path: str) -> Any:
        """The authority: each field through its checker, the first wrong one named."""
        if not isinstance(value, dict):
            raise _bad(path, f"expected a map, got {kind_name(value)}")
        for name, spec in self.fields.items():
            if name not in value:
                if spec.required:
                    raise _bad(f"{path}.{name}" if path else name, "missing")
                continue
            try:
                spec.check(value[name], "")
            except FieldError:
                _again(spec.check, value[name], f"{path}.{name}" if path else name)
        return value

    def describe(self) -> str:
        return (
            "{" + ", ".join(f"{n}{'' if f.required else '?'}" for n, f in self.fields.items()) + "}"
        )


_MISSING = object()


def _inline_check(check: Checker, value: str, helpers: dict[str, Any]) -> str:
    """A Python expression, True only when ``check`` surely accepts the value named
    ``value``; it may be stricter than ``check`` (a subclass of str or int, a text
    that is not plain ASCII), never laxer: a False sends the map to the checkers
    themselves. A checker without an inline form is called (a ``FieldError`` from
    it makes the whole fast check False)."""
    kind = type(check)
    if kind is Str:
        expr = f"type({value}) is str and {check.min} <= len({value}) <= {check.max}"
        if check.text:   # printable ASCII has no control character (Cc, Cf, Cs)
            expr += f" and {value}.isascii() and {value}.isprintable()"
        return f"({expr})"
    if kind is Int:
        return f"(type({value}) is int and {check.min} <= {value} <= {check.max})"
    if kind is Bool:
        return f"({value} is True or {value} is False)"
    if kind is Nullable:
        return f"({value} is None or {_inline_check(check.inner, value, helpers)})"
    name = f"c{len(helpers)}"
    if kind is Data:
        if check.map_only:
            helpers[name] = check._plainly_valid_map
        else:
            helpers[name] = check._plainly_valid
        return f"{name}({value})"
    helpers[name] = check
    return f"({name}({value}, '') is not None or True)"


def _plainly_valid_struct(fields: Mapping[str, F]) -> Callable[[Any], bool]:
    """A check of a map against ``fields`` as straight-line code (the way
    :mod:`dataclasses` makes ``__init__``): True when the map is valid by
    :func:`_inline_check`'s expressions, False when it is not shown valid (then
    :meth:`Struct.__call__`'s loop decides and names the field). One call instead
    of a loop over the fields and a checker's call each (a request's fields cost
    1.3 µs that way). tests/protocol/test_schema_fast.py checks it is never laxer."""
    helpers: dict[str, Any] = {"_MISSING": _MISSING, "FieldError": FieldError}
    lines = ["def fast(value):", "    if type(value) is not dict:", "        return False",
             "    get = value.get", "    try:"]
    for i, (name, spec) in enumerate(fields.items()):
        var = f"v{i}"
        expr = _inline_check(spec.check, var, helpers)
        lines.append(f"        {var} = get({name!r}, _MISSING)")
        if spec.required:
            lines.append(f"        if {var} is _MISSING or not {expr}:")
        else:
            lines.append(f"        if {var} is not _MISSING and not {expr}:")
        lines.append("            return False")
    lines += ["        pass", "    except FieldError:", "        return False", "    return True"]
    namespace: dict[str, Any] = {}
    exec("\n".join(lines), helpers, namespace)  # noqa: S102 - our own field names (repr'd)
    return namespace["fast"]  # type: ignore[no-any-return]


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
            raise _bad(path, f"expected a map, got {kind_name(value)}")
        if self._plainly_valid(value):
            return value
        budget = [self.max_items]
        try:
            self._walk(value, 1, budget)
        except _Where as where:
            sub = path + "".join(reversed(where.parts))
            raise _bad(path if where.whole else sub, where.message) from None
        return value

    def _plainly_valid_map(self, value: Any) -> bool:
        """:meth:`_plainly_valid` for a map, with a quicker loop first for a flat
        one (an intent such as ``{"type": "flip"}``): string keys, values strings,
        integers, booleans or nil, all within the bounds."""
        if type(value) is not dict or len(value) > self.max_items:
            return False
        max_str = self.max_str
        for key, sub in value.items():
            if type(key) is not str or len(key) > max_str:
                return False
            kind = type(sub)
            if kind is str:
                if len(sub) > max_str:
                    return False
            elif kind is not int and kind is not bool and sub is not None:
                return self._plainly_valid(value)   # nested (or a float): the full loop
        return True

    def _plainly_valid(self, value: Any) -> bool:
        """The fast path (outgoing snapshots are mostly views): True when ``value`` is
        valid and made of the plain types only (dict, list, tuple, str, int, bool,
        None, finite float). One loop, no recursion, no path bookkeeping. False means
        "not shown valid here": :meth:`_walk`, the authority, then decides and names
        the offending path. So this may be stricter than :meth:`_walk`, never laxer
        (tests/protocol/test_schema_fast.py checks the two agree)."""
        max_depth = 1 if self.scalars_only else self.max_depth
        max_str = self.max_str
        items = self.max_items
        isfinite = math.isfinite
        kind = type(value)
        if kind is not dict and kind is not list and kind is not tuple:
            if kind is str:
                return len(value) <= max_str
            if kind is int or kind is bool or value is None:
                return True
            return kind is float and isfinite(value)
        level = [value]  # the containers at this depth, breadth first
        depth = 1
        while level:
            if depth > max_depth:
                return False
            deeper: list[Any] = []
            push = deeper.append
            for node in level:
                items -= len(node)
                if type(node) is dict:
                    for key in node:
                        if type(key) is not str or len(key) > max_str:
                            return False
                    node = node.values()
                for sub in node:
                    kind = type(sub)
                    if kind is str:
                        if len(sub) > max_str:
                            return False
                    elif kind is int or kind is bool or sub is None:
                        continue
                    elif kind is dict or kind is list or kind is tuple:
                        push(sub)
                    elif kind is not float or not isfinite(sub):
                        return False
            if items < 0:
                return False
            level = deeper
            depth += 1
        return True

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
        is_map = kind is dict
        for key, sub in value.items() if is_map else enumerate(value):
            if is_map and (type(key) is not str or len(key) > max_str):
                raise _Where("map keys must be strings within the length limit")
            sub_kind = type(sub)
            if sub_kind is int or sub_kind is bool or sub is None:
                continue
            if sub_kind is str and len(sub) <= max_str:
                continue
            try:
                self._walk(sub, depth + 1, budget)
            except _Where as where:
                where.parts.append(f".{key}" if is_map else f"[{key}]")
                raise

    def _scalar(self, value: Any) -> None:
        if isinstance(value, str):
            if len(value) > self.max_str:
                raise _Where(f"string longer than {self.max_str}")
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise _Where("numbers must be finite")
        elif value is not None and not isinstance(value, int):  # bool is an int
            raise _Where(f"{kind_name(value)} is not allowed here")

    def describe(self) -> str:
        top = "map" if self.map_only else "value"
        inner = "scalars" if self.scalars_only else f"data, depth <= {self.max_depth}"
        return f"{top} of {inner}, <= {self.max_items} items, strings <= {self.max_str}"


def describe_check(check: Checker) -> str:
    """A short human description of what ``check`` accepts (for the docs)."""
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
#: An opaque ``matches`` page cursor (the ``next`` of the previous page).
CURSOR = Str(1, 128)
#: Who said a chat line: a player (seated) or a spectator.
ROLE = Enum(("player", "spectator"))
#: Generous bounds for what the server sends (views, events, legal intents).
VIEW = Data(max_depth=8, max_items=8192, max_str=1024)
EVENT = Data(max_depth=8, max_items=1024, max_str=1024)
LEGAL_INTENT = Data(max_depth=4, max_items=64, max_str=64)
TIME = Num(0)

#: A rating value on the wire (Glicko scale; finite).
RATING = Num()
PLAYER = Struct(
    {
        "seat": F(SEAT),
        "name": F(Nullable(Str(0, 64))),
        "connected": F(Bool()),
        "bot": F(Nullable(Str(0, 64))),
        "registered": F(Bool(), required=False, doc="the seat's player has an account"),
        "account_bot": F(Bool(), required=False, doc="that account is a bot's"),
        "rating": F(RATING, required=False, doc="rating in this game (rated matches)"),
        "provisional": F(Bool(), required=False, doc="that rating's RD is above 110"),
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
#: A server bot as ``games`` lists it: a strategy name ``create``'s ``bot`` takes.
BOT_INFO = Struct({"name": F(Str(1, 32)), "doc": F(Str(0, 256))})
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
        "rated": F(Bool(), required=False),
        "finished": F(Nullable(TIME), required=False),
        "result": F(Nullable(Struct({"winner": F(Nullable(SEAT)), "reason": F(Str(0, 64))})),
                    required=False),
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
        "chat_rate": F(Num(0), required=False),
        "chat_burst": F(Num(0), required=False),
    }
)
RATING_CHANGE = Struct(
    {
        "seat": F(SEAT),
        "name": F(Str(0, 64)),
        "rating_before": F(RATING),
        "rating_after": F(RATING),
        "rd_before": F(RATING),
        "rd_after": F(RATING),
        "volatility_after": F(RATING),
        "change": F(RATING),
    }
)
RESULT = Struct(
    {
        "winner": F(Nullable(SEAT)),
        "reason": F(Str(0, 64)),
        "rated": F(Bool(), required=False, doc="the match was rated"),
        "ratings": F(ListOf(RATING_CHANGE, 0, 16), required=False,
                     doc="what it did to each seat's rating (empty: aborted)"),
    }
)
#: ``hello.auth``: exactly one of the two (the server checks that).
AUTH = Struct(
    {
        "password": F(Str(1, 1024), required=False),
        "api_token": F(Str(1, 256), required=False),
    }
)
#: Free-form maps the account replies carry (profiles, leaderboard rows, tokens).
ACCOUNT_DATA = Data(max_depth=4, max_items=256, max_str=256)
REVEAL = Struct({"seed": F(Str(0, 128)), "salt": F(Str(0, 256))})
#: A seat's contribution to the deal (PROTOCOL-CORE 1.1; docs/protocol.md, "The random stream").
CLIENT_SEED = Hex(1, 64)
#: One page of a finished match's record (see docs/protocol.md, `record`).
RECORD = Data(max_depth=10, max_items=1 << 20, max_str=1024)
VERSION = Int(0, 65535)
