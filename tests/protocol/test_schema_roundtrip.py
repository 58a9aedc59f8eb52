"""Any message its schema accepts goes through send -> bytes -> next_message unchanged.

Messages are generated from the schemas themselves (protocol/events.py), so a
new field or limit is covered without editing this file.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import events as ev
from protocol import schema as m
from protocol.connection import CLOSED, NEED_DATA
from protocol.errors import is_fatal
from tests.protocol.helpers import handshake

_text = st.characters(blacklist_categories=("Cc", "Cf", "Cs"))


def strategy_for(check: Any) -> st.SearchStrategy[Any]:
    """A hypothesis strategy producing values ``check`` accepts."""
    if isinstance(check, m.Str):
        return st.text(_text, min_size=check.min, max_size=min(check.max, 40))
    if isinstance(check, m.Hex):
        return st.text("0123456789abcdefABCDEF", min_size=check.min, max_size=check.max)
    if isinstance(check, m.Int):
        return st.integers(check.min, min(check.max, 2**63 - 1))
    if isinstance(check, m.Num):
        lo = 0.0 if check.min == 0 else -1e9
        return st.floats(lo, 1e9, allow_nan=False) | st.integers(int(lo), 10**9)
    if isinstance(check, m.Bool):
        return st.booleans()
    if isinstance(check, m.Enum):
        return st.sampled_from(check.choices)
    if isinstance(check, m.Nullable):
        return st.none() | strategy_for(check.inner)
    if isinstance(check, m.ListOf):
        return st.lists(strategy_for(check.item), min_size=check.min, max_size=min(check.max, 3))
    if isinstance(check, m.Struct):
        return struct_strategy(check)
    if isinstance(check, m.Data):
        scalar = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8)
        leaf = scalar | st.floats(allow_nan=False, allow_infinity=False)
        if check.scalars_only or check.max_depth == 1:
            inner = leaf
        else:
            inner = st.recursive(
                leaf,
                lambda x: (
                    st.lists(x, max_size=3) | st.dictionaries(st.text(max_size=6), x, max_size=3)
                ),
                max_leaves=4,
            )
            inner = leaf if check.max_depth < 4 else inner
        maps = st.dictionaries(st.text(max_size=6), inner, max_size=4)
        return maps if check.map_only else (maps | leaf)
    raise AssertionError(f"no strategy for {check!r}")


def struct_strategy(struct: m.Struct) -> st.SearchStrategy[dict[str, Any]]:
    required = {n: strategy_for(f.check) for n, f in struct.fields.items() if f.required}
    optional = {n: strategy_for(f.check) for n, f in struct.fields.items() if not f.required}
    return st.fixed_dictionaries(required, optional=optional)


@st.composite
def valid_message(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    direction = draw(st.sampled_from(ev.DIRECTIONS))
    mtype = draw(
        st.sampled_from(sorted(t for t in ev.SCHEMAS[direction] if t not in ("hello", "welcome")))
    )
    body = draw(struct_strategy(ev.SCHEMAS[direction][mtype]))
    return direction, {"type": mtype, **body}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_message())
def test_valid_messages_round_trip(case: tuple[str, dict[str, Any]]) -> None:
    direction, msg = case
    ev.validate(msg, direction)  # the generator only makes valid messages
    client, server = handshake()
    sender, receiver = (client, server) if direction == ev.TO_SERVER else (server, client)
    receiver.receive_data(sender.send(msg))
    assert receiver.next_message() == msg
    closes = msg["type"] == "bye" or (msg["type"] == "error" and is_fatal(msg["code"]))
    assert receiver.next_message() is (CLOSED if closes else NEED_DATA)
