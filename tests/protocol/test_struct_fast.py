"""The straight-line check of a message's fields (``Struct._fast``, run first for
every message received and every map sent) never accepts what the loop over the
fields' checkers refuses, accepts the valid messages of every type, and leaves
the loop to name the wrong field; ``Event.BUILD`` makes the event the loop over
the fields made."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import events as ev
from protocol import schema as m
from protocol.registry import EVENTS
from tests.protocol.test_schema_roundtrip import struct_strategy

SCALARS = (
    st.none() | st.booleans() | st.integers(-(2**64), 2**65)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=70)
    | st.binary(max_size=3)
)
ODD = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8) | st.integers(0, 3), inner, max_size=4),
    max_leaves=12,
)
SCHEMAS = sorted(
    {(direction, mtype): cls.SCHEMA for direction, table in EVENTS.items()
     for mtype, cls in table.items()}.items())


class _Text(str):
    """A str subclass: the fast check refuses it, the checkers decide."""


def loop_accepts(struct: m.Struct, value: Any) -> bool:
    try:
        struct._walk(value, "")
    except m.FieldError:
        return False
    return True


@st.composite
def near_valid(draw: st.DrawFn, struct: m.Struct) -> dict[str, Any]:
    """A valid map of ``struct`` with some fields dropped or replaced by odd values."""
    value = dict(draw(struct_strategy(struct)))
    for name in struct.fields:
        how = draw(st.integers(0, 5))
        if how == 0:
            value.pop(name, None)
        elif how == 1:
            value[name] = draw(ODD)
        elif how == 2 and isinstance(value.get(name), str):
            value[name] = _Text(value[name])
    return value


@pytest.mark.parametrize(("key", "struct"), SCHEMAS, ids=[f"{d}:{t}" for (d, t), _ in SCHEMAS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_fast_check_is_never_laxer_than_the_loop(key: tuple[str, str], struct: m.Struct,
                                                      data: st.DataObject) -> None:
    value = data.draw(near_valid(struct))
    if struct._fast(value):
        assert loop_accepts(struct, value)
    assert loop_accepts(struct, value) == _accepted(struct, value)


@pytest.mark.parametrize(("key", "struct"), SCHEMAS, ids=[f"{d}:{t}" for (d, t), _ in SCHEMAS])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_fast_check_accepts_valid_maps(key: tuple[str, str], struct: m.Struct,
                                           data: st.DataObject) -> None:
    """Valid maps of plain values pass without the loop (no float in a Data field,
    which the flat-map check leaves to the full one, and no control character)."""
    value = data.draw(struct_strategy(struct))
    assert loop_accepts(struct, value)
    if not _has_unplain(value):
        assert struct._fast(value)


def _accepted(struct: m.Struct, value: Any) -> bool:
    try:
        struct(value, "")
    except m.FieldError:
        return False
    return True


def _has_unplain(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_unplain(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_has_unplain(v) for v in value)
    if isinstance(value, str):
        return not (value.isascii() and value.isprintable())
    return type(value) is float


def test_the_loop_still_names_the_wrong_field() -> None:
    good = {"type": "intent", "match": "m1", "seq": 3, "intent": {"type": "flip"}, "id": 1}
    assert ev.Intent.SCHEMA._fast(good)
    for field, bad in [("match", ""), ("seq", -1), ("seq", True), ("intent", [1]), ("id", None)]:
        with pytest.raises(m.FieldError) as info:
            ev.Intent.SCHEMA({**good, field: bad}, "")
        assert info.value.field == field
    with pytest.raises(m.FieldError) as info:
        ev.Intent.SCHEMA({k: v for k, v in good.items() if k != "seq"}, "")
    assert info.value.field == "seq"


@pytest.mark.parametrize("cls", sorted({c for t in EVENTS.values() for c in t.values()},
                                       key=lambda c: c.__name__), ids=lambda c: c.__name__)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_build_sets_every_field_as_the_loop_did(cls: type[ev.Event],
                                                data: st.DataObject) -> None:
    value = {"type": cls.TYPE, **data.draw(struct_strategy(cls.SCHEMA))}
    built = cls.BUILD(value)
    assert type(built) is cls
    for spec in cls.FIELDS:
        assert getattr(built, spec.name) == value.get(spec.name)
