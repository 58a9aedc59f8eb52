"""The one random stream of a match: documented, portable, replayable in any language.

Every random choice a game makes (shuffles, the first player) is drawn from one
:class:`Stream` per match. The current stream, :data:`HMAC_STREAM`
(``"hmac-sha256-ctr/1"``), is specified in docs/protocol.md ("The random
stream") with test vectors, so that after the reveal anyone can replay every
shuffle of a match without this project's code:

1. **Key.** ``key = HMAC-SHA256(server_seed, "cardserver/stream/1" || 0x00 ||
   client_seed_0 || 0x00 || client_seed_1)``, where ``server_seed`` is the 32
   big-endian bytes of the committed seed and each client seed is its lower-case
   hex text in ASCII (1..64 digits, as announced in the start snapshot).
2. **Blocks.** Block ``i`` (i = 0, 1, 2, ...) is ``HMAC-SHA256(key, uint64_be(i))``:
   32 bytes, read as eight unsigned 32-bit big-endian *words*, used in order.
3. **Integers.** ``randbelow(n)`` for ``1 <= n <= 2**32``: 0 without drawing if
   ``n == 1``; otherwise with ``k = bit_length(n - 1)``, draw words ``w`` until
   ``w >> (32 - k) < n`` and return that value (rejection sampling: unbiased).
4. **Shuffle.** Fisher-Yates from the end: for ``i = len - 1`` down to ``1``,
   ``j = randbelow(i + 1)``, swap items ``i`` and ``j``.

Matches created before this stream existed used Python's Mersenne Twister
(``random.Random(seed)``); :data:`LEGACY_STREAM` (``"mt19937"``) keeps them
replaying with the very same draws and digests. :func:`open_stream` is the one
place that turns a stored stream name into a generator.
"""

from __future__ import annotations

import hmac
import random
import re
import struct
from collections.abc import MutableSequence, Sequence
from typing import Any, Protocol, TypeVar

#: The documented stream of docs/protocol.md (HMAC-SHA256 in counter mode).
HMAC_STREAM = "hmac-sha256-ctr/1"
#: Python's ``random.Random(seed)``: the stream of matches created before HMAC_STREAM.
LEGACY_STREAM = "mt19937"
#: Every stream a stored match may name.
STREAM_NAMES = (HMAC_STREAM, LEGACY_STREAM)

#: Bytes of a server seed and of a derived key.
SEED_BYTES = 32
#: Domain-separation label at the start of the key derivation message.
KEY_LABEL = b"cardserver/stream/1"
#: Most hex digits in one client seed (PROTOCOL-CORE 1.1: 1..64).
CLIENT_SEED_MAX = 64

_WORDS = struct.Struct(">8I")
_COUNTER = struct.Struct(">Q")
_MT_WORDS = struct.Struct(">625I")
_HEX = re.compile(r"[0-9a-fA-F]{1,64}")
_MAX_N = 1 << 32

T = TypeVar("T")


class Stream(Protocol):
    """What a game may ask of its match's generator."""

    name: str

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""

    def shuffle(self, items: MutableSequence[Any]) -> None:
        """Shuffle ``items`` in place (Fisher-Yates)."""

    def fingerprint(self) -> bytes:
        """The generator's whole state as bytes, for state digests."""

    def copy(self) -> Stream:
        """An independent generator in the same state."""


def normalize_client_seed(text: Any) -> str:
    """A client seed as the stream uses it: 1..64 hex digits, lower case.

    Raises:
        ValueError: ``text`` is not a string of 1..64 hex digits.
    """
    if not isinstance(text, str) or not _HEX.fullmatch(text):
        raise ValueError(f"a client seed is 1..{CLIENT_SEED_MAX} hex digits, got {text!r}")
    return text.lower()


def server_seed_bytes(seed: int) -> bytes:
    """The 32 big-endian bytes of a server seed (the reveal's 64 hex digits).

    Raises:
        ValueError: ``seed`` is not an int in ``[0, 2**256)``.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 256:
        raise ValueError(f"a server seed is an int in [0, 2**256), got {seed!r}")
    return seed.to_bytes(SEED_BYTES, "big")


def derive_key(server_seed: int, client_seeds: Sequence[str]) -> bytes:
    """The match key: HMAC-SHA256 keyed by the server seed over the label and seeds.

    Args:
        server_seed: the committed seed, an int in ``[0, 2**256)``.
        client_seeds: one client seed per seat, seat 0 first (normalized here).

    Raises:
        ValueError: a bad server seed or client seed.
    """
    message = KEY_LABEL + b"".join(
        b"\x00" + normalize_client_seed(seed).encode("ascii") for seed in client_seeds
    )
    return hmac.digest(server_seed_bytes(server_seed), message, "sha256")


class HmacStream:
    """HMAC-SHA256 in counter mode over a 32-byte key (see the module doc).

    ``randbelow`` and ``shuffle`` are the whole interface the games use; the
    state is the key, the next block's counter and the position in the current
    block, so :meth:`fingerprint` and :meth:`copy` are cheap.
    """

    __slots__ = ("_key", "_counter", "_words", "_pos")
    name = HMAC_STREAM

    def __init__(self, key: bytes) -> None:
        """A stream at its start (block 0, word 0).

        Raises:
            ValueError: ``key`` is not 32 bytes.
        """
        if not isinstance(key, bytes) or len(key) != SEED_BYTES:
            raise ValueError(f"a stream key is {SEED_BYTES} bytes, got {key!r}")
        self._key = key
        self._counter = 0
        self._words: tuple[int, ...] = ()
        self._pos = 8

    @classmethod
    def for_match(cls, server_seed: int, client_seeds: Sequence[str]) -> HmacStream:
        """The stream of a match: :func:`derive_key` then block 0.

        Raises:
            ValueError: a bad server seed or client seed.
        """
        return cls(derive_key(server_seed, client_seeds))

    @property
    def key(self) -> bytes:
        """The 32-byte key (secret until the reveal, like the seed it comes from)."""
        return self._key

    def block(self, index: int) -> bytes:
        """Block ``index`` of this stream: ``HMAC-SHA256(key, uint64_be(index))``."""
        return hmac.digest(self._key, _COUNTER.pack(index), "sha256")

    def word(self) -> int:
        """The next unsigned 32-bit word of the stream."""
        pos = self._pos
        if pos == 8:
            self._words = _WORDS.unpack(hmac.digest(self._key, _COUNTER.pack(self._counter),
                                                    "sha256"))
            self._counter += 1
            pos = 0
        self._pos = pos + 1
        return self._words[pos]

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` by rejection sampling on the top bits of words.

        Raises:
            ValueError: ``n`` is not an int in ``[1, 2**32]``.
        """
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= _MAX_N:
            raise ValueError(f"randbelow takes an int in [1, 2**32], got {n!r}")
        if n == 1:
            return 0
        shift = 32 - (n - 1).bit_length()
        while True:
            value = self.word() >> shift
            if value < n:
                return value

    def shuffle(self, items: MutableSequence[Any]) -> None:
        """Fisher-Yates in place: for i from the end down to 1, swap i with randbelow(i + 1).

        The same draws as calling :meth:`randbelow` in that loop, inlined: War
        shuffles a won pile after every battle.
        """
        if len(items) == 2:   # a plain War battle's pile: one word, never rejected
            if not self.word() >> 31:   # j = 0: swap items 1 and 0
                items[0], items[1] = items[1], items[0]
            return
        key, counter, words, pos = self._key, self._counter, self._words, self._pos
        digest, pack, unpack = hmac.digest, _COUNTER.pack, _WORDS.unpack
        for i in range(len(items) - 1, 0, -1):
            shift = 32 - i.bit_length()
            while True:
                if pos == 8:
                    words = unpack(digest(key, pack(counter), "sha256"))
                    counter += 1
                    pos = 0
                j = words[pos] >> shift
                pos += 1
                if j <= i:
                    break
            items[i], items[j] = items[j], items[i]
        self._counter, self._words, self._pos = counter, words, pos

    def fingerprint(self) -> bytes:
        """Key, counter and word position: equal streams, equal bytes."""
        return self._key + _COUNTER.pack(self._counter) + bytes((self._pos,))

    def copy(self) -> HmacStream:
        """An independent stream in the same state."""
        other = HmacStream.__new__(HmacStream)
        other._key = self._key
        other._counter = self._counter
        other._words = self._words
        other._pos = self._pos
        return other


class LegacyStream:
    """``random.Random(seed)``, the generator of matches journaled before HMAC_STREAM.

    Its draws and :meth:`fingerprint` are byte-for-byte those of the engine that
    wrote those journals, so their recorded state digests stay valid.
    """

    __slots__ = ("_random",)
    name = LEGACY_STREAM

    def __init__(self, seed: int) -> None:
        """``random.Random(seed)``.

        Raises:
            ValueError: ``seed`` is not an int in ``[0, 2**256)``.
        """
        server_seed_bytes(seed)
        self._random = random.Random(seed)

    def randbelow(self, n: int) -> int:
        """``random.Random.randrange(n)``.

        Raises:
            ValueError: ``n`` is not a positive int.
        """
        return self._random.randrange(n)

    def shuffle(self, items: MutableSequence[Any]) -> None:
        """``random.Random.shuffle``."""
        self._random.shuffle(items)

    def fingerprint(self) -> bytes:
        """The Mersenne Twister's 624 words and position big-endian, then version and gauss."""
        version, words, gauss_next = self._random.getstate()
        return _MT_WORDS.pack(*words) + repr((version, gauss_next)).encode()

    def copy(self) -> LegacyStream:
        """An independent generator in the same state."""
        other = LegacyStream.__new__(LegacyStream)
        other._random = random.Random()
        other._random.setstate(self._random.getstate())
        return other


def open_stream(name: str, server_seed: int, client_seeds: Sequence[str] = ()) -> Stream:
    """The generator of a match from its stored stream name, seed and client seeds.

    Args:
        name: one of :data:`STREAM_NAMES`.
        server_seed: the committed seed.
        client_seeds: per seat, seat 0 first (ignored by :data:`LEGACY_STREAM`).

    Raises:
        ValueError: an unknown stream name, or a bad seed.
    """
    if name == HMAC_STREAM:
        return HmacStream.for_match(server_seed, client_seeds)
    if name == LEGACY_STREAM:
        return LegacyStream(server_seed)
    raise ValueError(f"unknown random stream {name!r}; known: {', '.join(STREAM_NAMES)}")
