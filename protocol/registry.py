"""The machinery of protocol events: the :class:`Event` base, field declarations,
and the one registry ``type -> class`` per direction, with the wire conversions.

The message types themselves are declared in :mod:`protocol.events` (import
everything from there); this module knows no message by name.

* ``event.to_wire()`` is the message map (``type`` first, then the fields in
  declaration order, which puts a request's or reply's ``id`` last, as the
  project's client and server have always sent it; an optional field left at
  None is absent);
* :func:`from_wire` turns a decoded map into the event its ``type`` names, or
  raises :class:`~protocol.errors.RemoteProtocolError` (``bad_message`` naming the
  field, or ``unknown_type``), echoing the map's ``id`` when it had a valid one.
  Unknown extra fields are ignored, so a newer peer may add some;
* :func:`outgoing` is the same for a map we are about to send, raising
  :class:`~protocol.errors.LocalProtocolError` (our mistake) instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from protocol.errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from protocol.schema import MAX_ID, Checker, F, FieldError, Struct, describe_check, kind_name

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

    Class attributes (set by :func:`register`): ``TYPE`` (the wire ``type``),
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
    #: field name -> its place in the wire order (:func:`protocol.events.trusted`)
    ORDER: ClassVar[dict[str, int]] = {}
    #: the names of the required fields
    REQUIRED: ClassVar[frozenset[str]] = frozenset()
    #: the class's events made from their wire map (:func:`wired`), set by :func:`register`
    WIRED: ClassVar[type[Event]]
    #: an event of the class from a map its schema accepted (:func:`_make_build`)
    BUILD: ClassVar[Callable[[Mapping[str, Any]], Event]]

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

    def wire_map(self) -> dict[str, Any]:
        """The map to frame: :meth:`to_wire`'s, but possibly the event's own (an
        event made from its map, :func:`wired`): read it, never change it."""
        return self.to_wire()

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
        return parse_as(cls, msg)


#: type -> event class, per direction: the one registry :func:`from_wire` uses.
EVENTS: dict[str, dict[str, type[Event]]] = {TO_SERVER: {}, TO_CLIENT: {}}


def register(mtype: str, *directions: str, request: bool = False) -> Callable[[type[E]], type[E]]:
    def wrap(cls: type[E]) -> type[E]:
        cls.TYPE = mtype
        cls.IS_REQUEST = request
        cls.FIELDS = tuple(
            FieldSpec(f.name, f.metadata["check"], not f.metadata["optional"], f.metadata["doc"])
            for f in dataclasses.fields(cls)
        )
        cls.KEYS = frozenset({"type", *(s.name for s in cls.FIELDS)})
        cls.ORDER = {spec.name: i for i, spec in enumerate(cls.FIELDS)}
        cls.REQUIRED = frozenset(spec.name for spec in cls.FIELDS if spec.required)
        cls.SCHEMA = Struct({s.name: F(s.check, s.required, s.doc) for s in cls.FIELDS})
        cls.to_wire = _make_to_wire(cls)  # type: ignore[method-assign]
        cls.BUILD = _make_build(cls)
        cls.WIRED = _make_wired(cls)
        for direction in directions:
            if mtype in EVENTS[direction]:
                raise ValueError(f"two events for {mtype!r} {direction}")
            EVENTS[direction][mtype] = cls
        return cls

    return wrap


def _make_to_wire(cls: type[Event]) -> Callable[[Event], dict[str, Any]]:
    """``cls.to_wire`` as straight-line code (as :mod:`dataclasses` makes ``__init__``):
    the same map as :meth:`Event.to_wire`, in the same order, without a loop over
    :attr:`Event.FIELDS` and a ``getattr`` per field (2.6 of a snapshot's 3 µs)."""
    lines = [f"def to_wire(self):\n    msg = {{'type': {cls.TYPE!r}}}"]
    for spec in cls.FIELDS:   # names of dataclass fields: identifiers
        if spec.required:
            lines.append(f"    msg[{spec.name!r}] = self.{spec.name}")
        else:
            lines.append(f"    value = self.{spec.name}\n"
                         f"    if value is not None:\n        msg[{spec.name!r}] = value")
    lines.append("    return msg")
    namespace: dict[str, Any] = {}
    exec("\n".join(lines), {}, namespace)  # noqa: S102 - our own field names only
    to_wire = namespace["to_wire"]
    to_wire.__qualname__ = f"{cls.__qualname__}.to_wire"
    to_wire.__doc__ = Event.to_wire.__doc__
    return to_wire


def _make_build(cls: type[E]) -> Callable[[Mapping[str, Any]], E]:
    """An event of ``cls`` from a map its schema accepted, unchecked, every field
    set (an absent optional one to None) by straight-line code: what a loop over
    :attr:`Event.FIELDS` with a ``setattr`` each does, without the loop."""
    lines = ["def build(msg):", "    event = new(cls)", "    get = msg.get"]
    # each field's slot set through its descriptor (a frozen event refuses setattr)
    slots = {f"set_{spec.name}": getattr(cls, spec.name).__set__ for spec in cls.FIELDS}
    for spec in cls.FIELDS:   # names of dataclass fields: identifiers
        lines.append(f"    set_{spec.name}(event, get({spec.name!r}))")
    lines.append("    return event")
    namespace: dict[str, Any] = {}
    exec("\n".join(lines), {"new": object.__new__, "cls": cls, **slots},
         namespace)  # noqa: S102 - our own field names only
    build = namespace["build"]
    build.__qualname__ = f"{cls.__qualname__}.build"
    return build  # type: ignore[no-any-return]


def wired(cls: type[E], wire: dict[str, Any]) -> E:
    """A ``cls`` event that is its wire map ``wire``, kept (not copied: the caller
    hands it over and never changes it again), without a slot set per field.

    ``wire`` must be the map ``to_wire()`` of the same event would be: ``type``
    first, the fields in declaration order, optional ones at None left out (the
    caller's promise; :func:`protocol.events.trusted_wire` checks it under the
    tests' flag). Fields read as attributes as usual; ``to_wire()`` is a copy of
    ``wire``, ``wire_map()`` the map itself. Used for the messages a server builds
    by the thousand (a match's snapshots and ``ok``s): one map per message instead
    of the map, an event of two dozen slots and the map again.
    """
    event = object.__new__(cls.WIRED)
    object.__setattr__(event, "_wire", wire)
    return event


def _make_wired(cls: type[E]) -> type[E]:
    """The subclass of ``cls`` whose events hold their wire map (see :func:`wired`).

    Its fields' slots stay empty, so reading one falls through to ``__getattr__``,
    which reads the map (None for an optional field left out). An event made by
    ``dataclasses.replace`` (the constructor: every slot set, no map) still works.
    """
    keys = cls.KEYS
    base_to_wire = cls.to_wire

    def __getattr__(self: Any, name: str) -> Any:
        if name in keys:
            try:
                wire = object.__getattribute__(self, "_wire")
            except AttributeError:
                raise AttributeError(name) from None
            return wire.get(name)
        raise AttributeError(f"{cls.__name__!r} object has no attribute {name!r}")

    def to_wire(self: Any) -> dict[str, Any]:
        try:
            return dict(object.__getattribute__(self, "_wire"))
        except AttributeError:
            return base_to_wire(self)

    def wire_map(self: Any) -> dict[str, Any]:
        try:   # the slot (unset: __getattr__ raises AttributeError for it)
            return self._wire  # type: ignore[no-any-return]
        except AttributeError:
            return base_to_wire(self)

    def __eq__(self: Any, other: Any) -> bool:
        if isinstance(other, cls):
            return to_wire(self) == other.to_wire()
        return NotImplemented

    namespace = {"__slots__": ("_wire",), "__getattr__": __getattr__, "to_wire": to_wire,
                 "wire_map": wire_map, "__eq__": __eq__, "__hash__": cls.__hash__,
                 "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                 "__doc__": cls.__doc__}
    return type(cls.__name__, (cls,), namespace)


def _echo(msg: Mapping[str, Any]) -> int | None:
    raw = msg.get("id")
    if type(raw) is int and 0 <= raw <= MAX_ID:
        return raw
    return None


def parse_as(cls: type[E], msg: Mapping[str, Any]) -> E:
    """The ``cls`` event of the decoded map ``msg`` (its ``type`` already known to
    name ``cls``): ``msg`` checked against the schema once, the event built unchecked.

    Raises:
        RemoteProtocolError: ``bad_message`` naming the field (``.id`` set when
            the map carried a valid one).
    """
    try:
        cls.SCHEMA(msg, "")
    except FieldError as exc:
        raise RemoteProtocolError("bad_message", exc.message, exc.field, id=_echo(msg)) from None
    return cls.BUILD(msg)  # type: ignore[return-value]


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
    return parse_as(_class_for(msg, direction), msg)


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
        cls = EVENTS[direction].get(msg.TYPE)
        if cls is not type(msg) and (cls is None or cls.WIRED is not type(msg)):
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
