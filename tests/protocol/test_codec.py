"""Codec: one msgpack map per body; everything else is a documented ProtocolError."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.codec import CLIENT_LIMITS, SERVER_LIMITS, Limits, pack, unpack
from protocol.errors import LocalProtocolError, ProtocolError


def code_of(body: bytes, limits: Limits = SERVER_LIMITS) -> tuple[str, bool]:
    with pytest.raises(ProtocolError) as info:
        unpack(body, limits)
    return info.value.code, info.value.fatal


def test_round_trip() -> None:
    msg = {"type": "intent", "id": 3, "intent": {"a": [1, 2.5, None, True, "x"]}}
    assert unpack(pack(msg)) == msg


@pytest.mark.parametrize(
    "body",
    [
        b"",  # nothing
        b"\xc1",  # never-used byte
        b"\x82\xa4type",  # truncated map
        msgpack.packb({"type": "ping"}) + b"\x00",  # trailing bytes
        msgpack.packb({"type": "ping"}) * 2,  # two messages in one frame
        msgpack.packb({"type": "x", "e": msgpack.ExtType(5, b"abc")}),  # ext type
        msgpack.packb({"type": "x", "s": "a" * 20_000}),  # string over max_str_len
        msgpack.packb({"type": "x", "b": b"a" * 2000}),  # binary over max_bin_len
        msgpack.packb({"type": "x", "l": [0] * 5000}),  # array over max_array_len
        msgpack.packb({"type": "x", **{str(i): i for i in range(1100)}}),  # map over max_map_len
        msgpack.packb({"type": "x", "d": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}),  # too deep
        b"\x81\x91\x01\x01",  # an array as a map key (unhashable)
    ],
)
def test_undecodable_bodies_are_bad_frame(body: bytes) -> None:
    assert code_of(body) == ("bad_frame", True)


@pytest.mark.parametrize(
    "value",
    [[1, 2], "hello", 5, None, {"id": 1}, {"type": 7}, {"type": None}, {1: "x", "type": "ping"}],
)
def test_valid_msgpack_that_is_not_a_message_is_bad_message(value: object) -> None:
    assert code_of(msgpack.packb(value)) == ("bad_message", False)


def test_non_string_key_deep_inside_is_bad_message() -> None:
    assert code_of(msgpack.packb({"type": "x", "m": {"a": {2: 1}}})) == ("bad_message", False)


def test_client_limits_are_looser() -> None:
    body = msgpack.packb({"type": "ok", "l": list(range(5000))})
    assert code_of(body) == ("bad_frame", True)
    assert len(unpack(body, CLIENT_LIMITS)["l"]) == 5000


def test_binary_decodes_as_bytes_and_strings_as_str() -> None:
    assert unpack(msgpack.packb({"type": "x", "b": b"\x00", "s": "é"})) == {
        "type": "x",
        "b": b"\x00",
        "s": "é",
    }


def test_pack_refuses_unencodable_values() -> None:
    with pytest.raises(LocalProtocolError) as info:
        pack({"type": "x", "v": object()})
    assert info.value.code == "bad_message"
    with pytest.raises(LocalProtocolError):
        pack({"type": "x", "v": 2**70})


def test_pack_writes_the_bytes_msgpack_writes() -> None:
    from engine.registry import get_game
    from tests.protocol.helpers import TO_CLIENT_EXAMPLES, TO_SERVER_EXAMPLES

    samples = [*TO_CLIENT_EXAMPLES.values(), *TO_SERVER_EXAMPLES.values(),
               {"type": "x", "f": 0.1, "big": 2**64 - 1, "neg": -(2**63), "b": b"\x00" * 300,
                "s": "é" * 40, "t": (1, [2, {"k": None}]), "u": True, "long": "x" * 70000,
                "n": [-1, -33, 127, 128, 255, 256, 65535, 65536, 2**32, -(2**31) - 1]}]
    for game in ("war", "datastructures"):
        state = get_game(game).new_state(5)
        samples += [state.view(0), state.view(None), {"legal": state.legal(0)}]
    for msg in samples:
        assert pack(msg) == msgpack.packb(msg, use_bin_type=True), msg


def _slow_unpack(body: bytes, limits: Limits) -> object:
    """:func:`unpack` through msgpack's decoding alone (msgspec's first try refused)."""
    from unittest import mock

    from protocol import codec

    def refuse(_: bytes) -> object:
        raise ValueError("refused")

    with mock.patch.object(codec, "_DECODE", refuse):
        return _outcome(body, limits)


def _outcome(body: bytes, limits: Limits) -> object:
    try:
        value = unpack(body, limits)
    except ProtocolError as exc:
        return ("error", exc.code, exc.fatal, str(exc))
    return ("value", value, repr(value))


_keys = st.one_of(st.text(max_size=4), st.integers(-3, 3), st.binary(max_size=2), st.none(),
                  st.booleans())
_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.floats(),
              st.text(max_size=8), st.binary(max_size=8),
              st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=4)),
              st.builds(msgpack.Timestamp, st.integers(0, 2**33), st.integers(0, 999_999_999))),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(st.one_of(
    _values,
    st.dictionaries(st.just("type") | st.text(max_size=3), _values, max_size=4),
    st.fixed_dictionaries({"type": st.text(max_size=6)},
                          optional={"id": st.integers(-5, 2**40), "seq": st.integers(0, 99),
                                    "intent": st.dictionaries(st.text(max_size=5), _values,
                                                              max_size=3)})),
       st.binary(max_size=3), st.sampled_from([SERVER_LIMITS, CLIENT_LIMITS,
                                               Limits(max_depth=2), Limits(max_bin_len=4)]))
def test_the_msgspec_first_try_decodes_as_msgpack_alone(value: object, tail: bytes,
                                                        limits: Limits) -> None:
    """Whatever the body (a message, any value, trailing bytes, ext types and
    timestamps, odd keys, deep nesting), :func:`unpack` returns or raises exactly
    what msgpack's decoding alone does."""
    body = msgpack.packb(value, use_bin_type=True, strict_types=False, datetime=False)
    for data in (body, body + tail, body[:-1]):
        assert _outcome(data, limits) == _slow_unpack(data, limits), data


def test_the_msgspec_first_try_takes_a_plain_request() -> None:
    from unittest import mock

    from protocol import codec

    body = msgpack.packb({"type": "intent", "id": 3, "match": "m1", "seq": 4,
                          "intent": {"type": "flip"}})
    with mock.patch.object(codec.msgpack, "unpackb", side_effect=AssertionError):
        assert unpack(body)["intent"] == {"type": "flip"}
    assert SERVER_LIMITS.plain_size == 1024
