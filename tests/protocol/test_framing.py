"""FrameDecoder: any chunking, oversize refused from the header alone, bounded memory."""

from __future__ import annotations

import random

import pytest

from protocol.errors import LocalProtocolError, ProtocolError
from protocol.framing import FrameDecoder, encode_frame


def frames_of(decoder: FrameDecoder) -> list[bytes]:
    out = []
    while (body := decoder.next_frame()) is not None:
        out.append(body)
    return out


BODIES = [b"", b"a", b"hello world", bytes(range(256)) * 10, b"\x00" * 70]


def test_byte_at_a_time() -> None:
    stream = b"".join(encode_frame(b) for b in BODIES)
    decoder = FrameDecoder()
    got = []
    for i in range(len(stream)):
        decoder.feed(stream[i : i + 1])
        got += frames_of(decoder)
    assert got == BODIES
    assert decoder.buffered == 0


def test_many_frames_in_one_chunk() -> None:
    stream = b"".join(encode_frame(b) for b in BODIES * 50)
    decoder = FrameDecoder()
    decoder.feed(stream)
    assert frames_of(decoder) == BODIES * 50


def test_random_chunking_gives_the_same_frames() -> None:
    rng = random.Random(7)
    bodies = [rng.randbytes(rng.randrange(0, 300)) for _ in range(200)]
    stream = b"".join(encode_frame(b) for b in bodies)
    decoder = FrameDecoder(max_frame=300)
    got, pos = [], 0
    while pos < len(stream):
        step = rng.randrange(1, 700)
        decoder.feed(stream[pos : pos + step])
        pos += step
        got += frames_of(decoder)
        assert decoder.partial <= 4 + 300
    assert got == bodies


def test_oversize_refused_from_the_header_before_the_body() -> None:
    decoder = FrameDecoder(max_frame=100)
    decoder.feed(encode_frame(b"ok"))
    decoder.feed(b"\xff\xff\xff\xff")  # announces 4 GiB
    decoder.feed(b"x" * 10_000)  # the body starts coming: must not be kept
    assert decoder.buffered == 2  # only the complete frame before the bad header
    assert decoder.next_frame() == b"ok"
    with pytest.raises(ProtocolError) as info:
        decoder.next_frame()
    assert info.value.code == "frame_too_large" and info.value.fatal
    assert decoder.buffered == 0
    with pytest.raises(ProtocolError):  # stays failed
        decoder.next_frame()


def test_exactly_max_frame_is_accepted_and_one_more_is_not() -> None:
    decoder = FrameDecoder(max_frame=10)
    decoder.feed(encode_frame(b"x" * 10))
    assert decoder.next_frame() == b"x" * 10
    decoder.feed((11).to_bytes(4, "big"))
    with pytest.raises(ProtocolError, match="frame_too_large"):
        decoder.next_frame()


def test_encode_refuses_a_body_over_the_peer_limit() -> None:
    assert encode_frame(b"abc") == b"\x00\x00\x00\x03abc"
    with pytest.raises(LocalProtocolError) as info:
        encode_frame(b"x" * 11, max_frame=10)
    assert info.value.code == "frame_too_large"


def test_bad_max_frame() -> None:
    with pytest.raises(ValueError):
        FrameDecoder(max_frame=0)
