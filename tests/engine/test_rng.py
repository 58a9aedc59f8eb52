"""The match's random stream (engine/rng.py) against its published test vectors.

The vectors in examples/rng_vectors.json were cross-checked with ``openssl dgst
-sha256 -mac HMAC`` (key and block 0) and with examples/verify_match.js, an
implementation written from docs/protocol.md alone.
"""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import cards
from engine.rng import (
    HMAC_STREAM,
    LEGACY_STREAM,
    HmacStream,
    LegacyStream,
    derive_key,
    normalize_client_seed,
    open_stream,
)

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "examples" / "rng_vectors.json").read_text())["vectors"]


def _stream(vector: dict) -> HmacStream:
    return HmacStream.for_match(int(vector["server_seed"], 16), vector["client_seeds"])


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["server_seed"][-4:])
def test_key_blocks_and_words_match_the_vectors(vector: dict) -> None:
    stream = _stream(vector)
    assert stream.key.hex() == vector["key"]
    assert stream.block(0).hex() == vector["block0"]
    assert stream.block(1).hex() == vector["block1"]
    assert [stream.word() for _ in vector["words"]] == vector["words"]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v["server_seed"][-4:])
def test_randbelow_and_shuffles_match_the_vectors(vector: dict) -> None:
    stream = _stream(vector)
    assert [stream.randbelow(52) for _ in vector["randbelow_52"]] == vector["randbelow_52"]
    deck = cards.deck()
    _stream(vector).shuffle(deck)
    assert [cards.to_str(c) for c in deck] == vector["shuffle_52"]
    double = list(range(104))
    _stream(vector).shuffle(double)
    assert double == vector["shuffle_104"]


def test_the_first_vector_rejects_a_draw() -> None:
    """randbelow(52) keeps the top 6 bits of a word and rejects 52..63 (unbiased)."""
    vector = VECTORS[0]
    tops = [word >> 26 for word in vector["words"]]
    assert any(top >= 52 for top in tops)
    assert [top for top in tops if top < 52][:5] == vector["randbelow_52"][:5]


def test_client_seeds_are_case_insensitive_and_order_matters() -> None:
    assert derive_key(7, ["ABCdef", "1"]) == derive_key(7, ["abcdef", "1"])
    assert derive_key(7, ["a", "b"]) != derive_key(7, ["b", "a"])
    assert derive_key(7, ["a", "bc"]) != derive_key(7, ["ab", "c"])
    assert derive_key(7, ["a", "b"]) != derive_key(8, ["a", "b"])


@pytest.mark.parametrize("bad", ["", "g", "0x12", " 1", "1" * 65, 12, None, b"ab"])
def test_bad_client_seeds_are_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        normalize_client_seed(bad)


def test_good_client_seeds_are_lowered() -> None:
    assert normalize_client_seed("F" * 64) == "f" * 64
    assert normalize_client_seed("0") == "0"


@pytest.mark.parametrize("bad", [0, -1, (1 << 32) + 1, True, 2.0])
def test_randbelow_refuses_bounds_outside_1_to_2_pow_32(bad: object) -> None:
    with pytest.raises(ValueError):
        HmacStream(bytes(32)).randbelow(bad)  # type: ignore[arg-type]


def test_randbelow_one_draws_nothing_and_the_full_range_is_the_word() -> None:
    a, b = HmacStream(bytes(32)), HmacStream(bytes(32))
    assert a.randbelow(1) == 0
    assert a.fingerprint() == b.fingerprint()
    assert a.randbelow(1 << 32) == b.word()


@given(st.lists(st.integers(min_value=1, max_value=200), max_size=40), st.binary(min_size=32,
                                                                              max_size=32))
def test_randbelow_is_the_documented_rejection_rule(bounds: list[int], key: bytes) -> None:
    stream, words = HmacStream(key), HmacStream(key)
    for n in bounds:
        got = stream.randbelow(n)
        if n == 1:
            assert got == 0
            continue
        shift = 32 - (n - 1).bit_length()
        while (expected := words.word() >> shift) >= n:
            pass
        assert got == expected < n
    assert stream.fingerprint() == words.fingerprint()


@given(st.lists(st.integers(min_value=0, max_value=110), max_size=20), st.binary(min_size=32,
                                                                             max_size=32))
def test_shuffle_is_fisher_yates_over_randbelow(lengths: list[int], key: bytes) -> None:
    fast, slow = HmacStream(key), HmacStream(key)
    for length in lengths:
        got, expected = list(range(length)), list(range(length))
        fast.shuffle(got)
        for i in range(length - 1, 0, -1):
            j = slow.randbelow(i + 1)
            expected[i], expected[j] = expected[j], expected[i]
        assert got == expected
        assert fast.fingerprint() == slow.fingerprint()


def test_every_ordering_of_three_is_about_equally_likely() -> None:
    stream = HmacStream(derive_key(1, ["1", "2"]))
    counts: dict[tuple[int, ...], int] = {}
    for _ in range(6000):
        items = [0, 1, 2]
        stream.shuffle(items)
        counts[tuple(items)] = counts.get(tuple(items), 0) + 1
    assert len(counts) == 6
    assert all(850 < n < 1150 for n in counts.values()), counts


def test_copy_is_independent_and_fingerprints_follow_the_draws() -> None:
    a = HmacStream(derive_key(3, ["a", "b"]))
    a.randbelow(10)
    b = a.copy()
    assert a.fingerprint() == b.fingerprint()
    assert a.randbelow(1000) == b.randbelow(1000)
    a.word()
    assert a.fingerprint() != b.fingerprint()
    b.word()
    assert a.fingerprint() == b.fingerprint()


def test_a_stream_key_must_be_32_bytes() -> None:
    with pytest.raises(ValueError):
        HmacStream(bytes(31))


def test_legacy_stream_draws_and_fingerprints_exactly_like_random_random() -> None:
    legacy, mt = LegacyStream(12345), random.Random(12345)
    deck, expected = list(range(52)), list(range(52))
    legacy.shuffle(deck)
    mt.shuffle(expected)
    assert deck == expected
    assert legacy.randbelow(2) == mt.randrange(2)
    version, words, gauss = mt.getstate()
    assert legacy.fingerprint() == struct.pack(">625I", *words) + repr((version, gauss)).encode()
    copy = legacy.copy()
    assert copy.randbelow(100) == legacy.randbelow(100)


def test_open_stream_by_name() -> None:
    assert isinstance(open_stream(HMAC_STREAM, 5, ["1", "2"]), HmacStream)
    assert open_stream(HMAC_STREAM, 5, ["1", "2"]).fingerprint() == \
        HmacStream.for_match(5, ["1", "2"]).fingerprint()
    assert isinstance(open_stream(LEGACY_STREAM, 5), LegacyStream)
    with pytest.raises(ValueError, match="unknown random stream"):
        open_stream("xorshift", 5)
    with pytest.raises(ValueError):
        open_stream(HMAC_STREAM, 1 << 256, ["1", "2"])
