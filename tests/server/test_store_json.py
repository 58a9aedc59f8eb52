"""The store's JSON text (server/store.py ``_dumps``): exactly what
``json.dumps(value, sort_keys=True, separators=(",", ":"))`` writes, so rows written
before and after the encoder was built once read and compare the same."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.store import _dumps, _intent_text


def reference(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=5),
    max_leaves=30)


@given(JSON)
def test_same_text_as_json_dumps(value: object) -> None:
    assert _dumps(value) == reference(value)


def test_a_journal_rows_parts() -> None:
    assert _dumps({"type": "flip"}) == '{"type":"flip"}'
    assert _dumps([[0, 119.5, None, 0], [1, math.inf, None, 2]]) == \
        '[[0,119.5,null,0],[1,Infinity,null,2]]'
    assert _dumps("é\n") == '"\\u00e9\\n"'


def test_what_json_refuses_it_refuses() -> None:
    with pytest.raises(TypeError):
        _dumps({"x": object()})
    with pytest.raises(TypeError):
        _dumps({1: 2, "a": 3})   # keys that cannot be sorted


@given(st.dictionaries(st.sampled_from(["type", "card", "pile"]),
                       st.text(max_size=3) | st.integers(-2, 2) | st.none(), max_size=3))
def test_an_intents_text_is_its_json_text(intent: dict[str, object]) -> None:
    """A journal row's intent text, read from the table of one-field intents or not,
    is ``_dumps``' (twice: the second time from the table)."""
    assert _intent_text(intent) == _intent_text(intent) == reference(intent)
