"""The fair-shuffle commitment (R0.2): publish sha256(seed || salt) at the start,
reveal seed and salt at the end, so anyone can check the deck was fixed in advance."""

from __future__ import annotations

import hashlib
import hmac

SEED_BYTES = 32


def seed_hex(seed: int) -> str:
    """The seed as 64 lowercase hex digits, as sent in a reveal.

    Raises:
        ValueError: the seed is negative or does not fit in 256 bits.
    """
    if not 0 <= seed < 1 << (8 * SEED_BYTES):
        raise ValueError(f"seed must be in [0, 2**256), got {seed}")
    return seed.to_bytes(SEED_BYTES, "big").hex()


def commitment(seed: int, salt_hex: str) -> str:
    """SHA-256 hex of the seed (32 big-endian bytes) followed by the salt's bytes.

    Raises:
        ValueError: bad seed, or a salt that is not hex.
    """
    return hashlib.sha256(bytes.fromhex(seed_hex(seed)) + bytes.fromhex(salt_hex)).hexdigest()


def verify(seed_hex_digits: str, salt_hex: str, expected: str) -> bool:
    """True when the revealed seed and salt match the published commitment."""
    try:
        seed = int(seed_hex_digits, 16)
        return hmac.compare_digest(commitment(seed, salt_hex), expected.lower())
    except ValueError:
        return False
