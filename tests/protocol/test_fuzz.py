"""Fuzz: whatever bytes arrive, only a documented ProtocolError comes out, memory stays bounded."""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codec import pack
from protocol.connection import CLOSED, NEED_DATA, Connection, State
from protocol.errors import CODES, ProtocolError
from protocol.events import SCHEMAS, TO_CLIENT, TO_SERVER, validate
from protocol.framing import encode_frame
from tests.protocol.helpers import HELLO, TO_CLIENT_EXAMPLES, TO_SERVER_EXAMPLES, handshake

#: The codes protocol/ itself raises for bad input (docs/protocol.md lists them).
RAISED = {"bad_frame", "frame_too_large", "bad_message", "unknown_type", "handshake_required"}
MAX_FRAME = 512
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def server_conn(greeted: bool) -> Connection:
    server = Connection("server", max_frame=MAX_FRAME)
    if greeted:
        server.receive_data(Connection("client").send(HELLO))
        server.next_message()
    return server


def pump(conn: Connection, chunks: list[bytes]) -> list[str]:
    """Feed chunk by chunk, draining after each; return the error codes seen."""
    codes = []
    for chunk in chunks:
        conn.receive_data(chunk)
        while True:
            try:
                msg = conn.next_message()
            except ProtocolError as exc:
                assert exc.code in CODES and exc.code in RAISED, exc.code
                assert exc.to_message()["code"] == exc.code
                codes.append(exc.code)
                if exc.fatal:
                    assert conn.state is State.MUST_CLOSE
                continue
            if msg is NEED_DATA or msg is CLOSED:
                break
            assert isinstance(msg, dict) and isinstance(msg["type"], str)
        # bounded: after draining, at most one incomplete frame is held
        assert conn.buffered <= 4 + MAX_FRAME
    conn.receive_data(b"")
    assert conn.next_message() is CLOSED
    return codes


@FUZZ
@given(st.booleans(), st.lists(st.binary(max_size=700), max_size=12))
def test_random_bytes(greeted: bool, chunks: list[bytes]) -> None:
    pump(server_conn(greeted), chunks)


def _frames() -> bytes:
    return b"".join(
        encode_frame(pack(m)) for m in TO_SERVER_EXAMPLES.values() if m["type"] != "hello"
    )


VALID = encode_frame(pack(HELLO)) + _frames()


@st.composite
def mutated_stream(draw: st.DrawFn) -> bytes:
    data = bytearray(VALID)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        pos = draw(st.integers(0, len(data) - 1)) if data else 0
        if op == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete" and data:
            del data[pos : pos + draw(st.integers(1, 8))]
        elif op == "truncate":
            del data[pos:]
    return bytes(data)


@FUZZ
@given(mutated_stream(), st.lists(st.integers(1, 64), min_size=1, max_size=20))
def test_mutated_frames(stream: bytes, cuts: list[int]) -> None:
    chunks, pos, i = [], 0, 0
    while pos < len(stream):
        step = cuts[i % len(cuts)]
        chunks.append(stream[pos : pos + step])
        pos, i = pos + step, i + 1
    pump(server_conn(False), chunks)


def test_unmutated_stream_decodes_cleanly() -> None:
    assert pump(server_conn(False), [VALID[i : i + 3] for i in range(0, len(VALID), 3)]) == []


scalars = (
    st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.floats() | st.text(max_size=40)
)
values = st.recursive(
    scalars | st.binary(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=6)
    ),
    max_leaves=30,
)


@st.composite
def messages(draw: st.DrawFn) -> dict[Any, Any]:
    direction = draw(st.sampled_from([TO_SERVER, TO_CLIENT]))
    examples = TO_SERVER_EXAMPLES if direction == TO_SERVER else TO_CLIENT_EXAMPLES
    mtype = draw(st.sampled_from(sorted(SCHEMAS[direction])) | st.text(max_size=5))
    base = dict(examples.get(mtype, {"type": mtype}))
    for key in draw(st.lists(st.sampled_from(sorted(base)), max_size=3)):
        if draw(st.booleans()):
            base.pop(key, None)
        else:
            base[key] = draw(values)
    base["type"] = mtype
    return {"direction": direction, "msg": base}


@FUZZ
@given(messages())
def test_schemas_never_crash(case: dict[str, Any]) -> None:
    try:
        validate(case["msg"], case["direction"])
    except ProtocolError as exc:
        assert exc.code in ("bad_message", "unknown_type")
        assert exc.field


@FUZZ
@given(
    st.dictionaries(st.text(max_size=8), values, max_size=6),
    st.sampled_from(sorted(SCHEMAS[TO_SERVER])),
)
def test_arbitrary_fields_through_a_live_connection(fields: dict[str, Any], mtype: str) -> None:
    _client, server = handshake()
    try:
        body = msgpack.packb({**fields, "type": mtype}, use_bin_type=True)
    except (OverflowError, ValueError, TypeError):
        return
    frame = len(body).to_bytes(4, "big") + body
    codes = pump(server, [frame])
    assert set(codes) <= {"bad_message", "bad_frame", "frame_too_large"}


@FUZZ
@given(st.lists(st.binary(max_size=700), max_size=12), st.booleans())
def test_random_bytes_at_a_client(chunks: list[bytes], greeted: bool) -> None:
    client = Connection("client", max_frame=MAX_FRAME)
    client.send(HELLO)
    if greeted:
        client.receive_data(encode_frame(pack(TO_CLIENT_EXAMPLES["welcome"])))
        assert client.next_message()["type"] == "welcome"
    pump(client, chunks)
