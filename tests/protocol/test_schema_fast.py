"""The fast path of Data checks (used for every outgoing snapshot) never accepts what
the full walk refuses, and accepts the plain values servers build."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.schema import VIEW, Data, FieldError

SCALARS = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12)
    | st.binary(max_size=3)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=12) | st.integers(0, 3), inner, max_size=5),
    max_leaves=40,
)
CHECKERS = [
    Data(max_depth=3, max_items=12, max_str=8),
    Data(max_depth=2, max_items=64, max_str=64, map_only=False),
    Data(max_depth=1, max_items=6, max_str=4, scalars_only=True, map_only=False),
    VIEW,
]


def walk_accepts(check: Data, value: Any) -> bool:
    try:
        check._walk(value, 1, [check.max_items])
    except Exception:
        return False
    return True


@pytest.mark.parametrize("check", CHECKERS)
@settings(max_examples=300, deadline=None)
@given(value=VALUES)
def test_the_fast_path_is_never_laxer_than_the_walk(check: Data, value: Any) -> None:
    if check._plainly_valid(value):
        assert walk_accepts(check, value)


@pytest.mark.parametrize("check", CHECKERS)
@settings(max_examples=300, deadline=None)
@given(value=VALUES)
def test_the_fast_path_agrees_on_plain_values(check: Data, value: Any) -> None:
    """For the plain types (no bytes, no int keys) the two agree exactly, so the walk
    runs only for values that really are wrong."""
    if walk_accepts(check, value):
        assert check._plainly_valid(value) or _has_unplain(value)


def _has_unplain(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_unplain(k) or _has_unplain(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_unplain(v) for v in value)
    return type(value) not in (str, int, bool, float, type(None))


def test_a_bad_value_is_still_named_by_the_walk() -> None:
    with pytest.raises(FieldError) as info:
        VIEW({"players": [{"hand": ["x" * 2000]}]}, "view")
    assert info.value.field == "view.players[0].hand[0]"
