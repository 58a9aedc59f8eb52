"""The sans-IO Connection: handshake state machine, round trips, errors per state."""

from __future__ import annotations

import pytest

from protocol.codec import pack
from protocol.connection import CLOSED, NEED_DATA, Connection, State
from protocol.errors import LocalProtocolError, ProtocolError
from protocol.events import Hello, Join, Snapshot, Welcome
from protocol.framing import encode_frame
from tests.protocol.helpers import (
    HELLO,
    TO_CLIENT_EXAMPLES,
    TO_SERVER_EXAMPLES,
    WELCOME,
    drain,
    handshake,
)


@pytest.mark.parametrize("mtype", sorted(TO_SERVER_EXAMPLES))
def test_every_client_message_round_trips(mtype: str) -> None:
    client, server = handshake()
    msg = TO_SERVER_EXAMPLES[mtype]
    if mtype == "hello":
        client, server = Connection("client"), Connection("server")
    server.receive_data(client.send(msg))
    assert server.next_message() == msg
    assert server.next_message() is NEED_DATA


@pytest.mark.parametrize("mtype", sorted(TO_CLIENT_EXAMPLES))
def test_every_server_message_round_trips(mtype: str) -> None:
    msg = TO_CLIENT_EXAMPLES[mtype]
    if mtype == "welcome":
        client, server = Connection("client"), Connection("server")
        server.receive_data(client.send(HELLO))
        server.next_message()
    else:
        client, server = handshake()
    client.receive_data(server.send(msg))
    assert client.next_message() == msg


def test_handshake_states() -> None:
    client, server = Connection("client"), Connection("server")
    assert (client.state, server.state) == (State.START, State.AWAIT_HELLO)
    server.receive_data(client.send(HELLO))
    assert client.state is State.AWAIT_WELCOME
    assert server.next_message() == HELLO
    assert server.state is State.HANDSHAKING and server.hello.to_wire() == HELLO
    client.receive_data(server.send(WELCOME))
    assert server.state is State.OPEN and server.version == 1
    assert client.next_message() == WELCOME
    assert client.state is State.OPEN and client.version == 1
    assert client.peer_max_frame == 65536


def test_server_refuses_anything_before_hello() -> None:
    server = Connection("server")
    server.receive_data(encode_frame(pack({"type": "ping", "id": 1})))
    with pytest.raises(ProtocolError) as info:
        server.next_message()
    assert info.value.code == "handshake_required" and info.value.fatal
    assert server.state is State.MUST_CLOSE
    # the error can still be reported, then nothing more comes out
    data = server.send(info.value.to_message())
    assert data.startswith(b"\x00\x00\x00")
    assert server.next_message() is CLOSED
    with pytest.raises(LocalProtocolError):
        server.send({"type": "pong", "id": 1})


def test_client_cannot_send_before_hello() -> None:
    client = Connection("client")
    with pytest.raises(LocalProtocolError):
        client.send({"type": "games", "id": 1})
    assert client.state is State.START


def test_client_may_pipeline_requests_after_hello() -> None:
    client, server = Connection("client"), Connection("server")
    data = client.send(HELLO) + client.send({"type": "games", "id": 1})
    server.receive_data(data)
    assert server.next_message() == HELLO
    assert server.next_message() == {"type": "games", "id": 1}
    client.receive_data(server.send(WELCOME))
    assert client.next_message() == WELCOME


def test_handshake_error_closes_the_client() -> None:
    client, server = Connection("client"), Connection("server")
    server.receive_data(client.send(HELLO))
    server.next_message()
    err = ProtocolError("bad_token", "unknown token")
    client.receive_data(server.send(err.to_message()))
    assert server.state is State.MUST_CLOSE
    assert client.next_message() == {
        "type": "error",
        "code": "bad_token",
        "message": "unknown token",
    }
    assert client.state is State.MUST_CLOSE
    assert client.next_message() is CLOSED


def test_non_fatal_error_keeps_the_connection() -> None:
    client, server = handshake()
    client.receive_data(
        server.send({"type": "error", "id": 3, "code": "stale", "message": "seq 4"})
    )
    assert client.next_message()["code"] == "stale"
    assert client.state is State.OPEN
    client.receive_data(server.send({"type": "bye", "reason": "server_shutdown", "message": ""}))
    assert client.next_message()["type"] == "bye"
    assert client.next_message() is CLOSED


def test_bad_message_is_reported_and_the_connection_survives() -> None:
    client, server = handshake()
    server.receive_data(encode_frame(pack({"type": "join", "id": 9, "match": 5})))
    with pytest.raises(ProtocolError) as info:
        server.next_message()
    err = info.value
    assert (err.code, err.field, err.fatal, err.id) == ("bad_message", "match", False, 9)
    assert err.to_message() == {
        "type": "error",
        "id": 9,
        "code": "bad_message",
        "message": err.message,
        "field": "match",
    }
    server.receive_data(client.send({"type": "ping", "id": 1}))
    assert server.next_message() == {"type": "ping", "id": 1}


def test_client_skips_unknown_pushes() -> None:
    client, _server = handshake()
    client.receive_data(encode_frame(pack({"type": "fireworks", "n": 3})))
    client.receive_data(encode_frame(pack({"type": "pong", "id": 7, "extra": [1]})))
    assert drain(client) == [{"type": "pong", "id": 7, "extra": [1]}, NEED_DATA]


def test_peer_close_delivers_buffered_messages_first() -> None:
    client, server = handshake()
    server.receive_data(client.send({"type": "ping", "id": 1}) + b"\x00\x00")
    server.receive_data(b"")
    assert drain(server) == [{"type": "ping", "id": 1}, CLOSED]
    assert server.state is State.CLOSED


def test_unknown_type_and_second_hello_are_not_fatal_once_open() -> None:
    client, server = handshake()
    server.receive_data(encode_frame(pack({"type": "teleport", "id": 5})))
    server.receive_data(encode_frame(pack(HELLO)))
    server.receive_data(client.send({"type": "games", "id": 6}))
    codes = []
    for _ in range(2):
        with pytest.raises(ProtocolError) as info:
            server.next_message()
        codes.append((info.value.code, info.value.fatal))
    assert codes == [("unknown_type", False), ("bad_message", False)]
    assert server.next_message() == {"type": "games", "id": 6}


def test_a_bad_hello_is_fatal() -> None:
    server = Connection("server")
    server.receive_data(encode_frame(pack({**HELLO, "protocol": "1"})))
    with pytest.raises(ProtocolError) as info:
        server.next_message()
    assert (info.value.code, info.value.field, info.value.fatal) == (
        "bad_message",
        "protocol",
        True,
    )
    assert server.state is State.MUST_CLOSE


def test_client_refuses_anything_but_welcome_during_the_handshake() -> None:
    client = Connection("client")
    client.send(HELLO)
    client.receive_data(encode_frame(pack({"type": "ping", "id": 1})))
    with pytest.raises(ProtocolError) as info:
        client.next_message()
    assert info.value.fatal and client.state is State.MUST_CLOSE


def test_send_validates_and_respects_the_peer_limit() -> None:
    client, server = handshake()
    with pytest.raises(LocalProtocolError) as info:
        client.send({"type": "join", "id": 1})
    assert info.value.field == "match"
    with pytest.raises(LocalProtocolError):
        server.send(HELLO)  # wrong direction: unknown_type
    with pytest.raises(LocalProtocolError):
        server.send(WELCOME)  # welcome only once
    client.peer_max_frame = 50
    with pytest.raises(LocalProtocolError) as info:
        client.send({"type": "chat", "id": 1, "match": "m", "text": "x" * 60})
    assert info.value.code == "frame_too_large"
    assert client.state is State.OPEN


def test_documented_hello_frame_bytes() -> None:
    """docs/protocol.md shows these bytes; keep them true."""
    data = Connection("client").send(HELLO)
    assert data.hex(" ") == (
        "00 00 00 33 84 a4 74 79 70 65 a5 68 65 6c 6c 6f a8 70 72 6f 74 6f 63 6f 6c 91 01 a4 6e 61 "
        "6d 65 a5 61 6c 69 63 65 a6 63 6c 69 65 6e 74 a9 6d 79 62 6f 74 2f 30 2e 31"
    )


def test_documented_intent_frame_bytes() -> None:
    client, _server = handshake()
    msg = {"type": "intent", "id": 8, "match": "m1a2b3c4d5", "seq": 17, "intent": {"type": "flip"}}
    assert client.send(msg).hex(" ") == (
        "00 00 00 39 85 a4 74 79 70 65 a6 69 6e 74 65 6e 74 a2 69 64 08 a5 6d 61 74 63 68 aa "
        "6d 31 61 32 62 33 63 34 64 35 a3 73 65 71 11 a6 69 6e 74 65 6e 74 81 a4 74 79 70 65 "
        "a4 66 6c 69 70"
    )


def test_pipelined_bad_request_before_welcome_is_not_fatal() -> None:
    server = Connection("server")
    server.receive_data(encode_frame(pack(HELLO)) + encode_frame(pack({"type": "join", "id": 1})))
    server.receive_data(encode_frame(pack({"type": "games", "id": 2})))
    assert server.next_message() == HELLO
    with pytest.raises(ProtocolError) as info:
        server.next_message()
    assert (info.value.code, info.value.fatal) == ("bad_message", False)
    assert server.next_message() == {"type": "games", "id": 2}
    assert server.state is State.HANDSHAKING


def test_events_in_and_out() -> None:
    client, server = Connection("client"), Connection("server")
    server.receive_data(client.send(Hello(protocol=[1], name="alice", client="mybot/0.1")))
    hello = server.next_event()
    assert isinstance(hello, Hello) and hello.name == "alice" and server.hello is hello
    client.receive_data(server.send(Welcome(**{k: v for k, v in WELCOME.items() if k != "type"})))
    assert isinstance(client.next_event(), Welcome) and client.next_event() is NEED_DATA
    server.receive_data(client.send(Join(id=3, match="m1")))
    assert server.next_event() == Join(id=3, match="m1")


def test_every_outgoing_message_is_validated_snapshots_included() -> None:
    client, server = handshake()
    snapshot = dict(TO_CLIENT_EXAMPLES["snapshot"])
    assert server.send(snapshot) == server.send(Snapshot.from_wire(snapshot))
    for bad, field in [
        ({**snapshot, "seat": 5}, "seat"),
        ({**snapshot, "view": {"k": float("inf")}}, "view.k"),
        ({**snapshot, "deck_order": ["AS"]}, "deck_order"),  # never silently dropped
    ]:
        with pytest.raises(LocalProtocolError) as info:
            server.send(bad)
        assert info.value.field == field
    with pytest.raises(LocalProtocolError):
        client.send(Snapshot.from_wire(snapshot))  # not a client's message
    with pytest.raises(LocalProtocolError):
        server.send(Join(match="m1"))
    assert server.state is State.OPEN and client.state is State.OPEN
