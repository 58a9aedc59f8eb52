"""The fair-shuffle check (R0.2) a player's client can do itself, with no engine code.

At the start a snapshot carries ``commitment`` = SHA-256 of the seed (32 big-endian
bytes) followed by the salt's bytes; the last snapshot reveals ``{seed, salt}`` as hex.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any


def verify_reveal(commitment: Any, reveal: Any) -> bool | None:
    """True when the revealed seed and salt hash to the commitment, False when they do
    not (or are malformed), None when there is nothing to check yet."""
    if not isinstance(reveal, Mapping) or not isinstance(commitment, str):
        return None
    try:
        seed = bytes.fromhex(str(reveal.get("seed")))
        salt = bytes.fromhex(str(reveal.get("salt")))
    except ValueError:
        return False
    if len(seed) != 32:
        return False
    digest = hashlib.sha256(seed + salt).hexdigest()
    return hmac.compare_digest(digest, commitment.lower())


def shuffle_line(snapshot: Mapping[str, Any]) -> str | None:
    """The log line saying whether the match's shuffle was proven fair, or None."""
    ok = verify_reveal(snapshot.get("commitment"), snapshot.get("reveal"))
    if ok is None:
        return None
    if ok:
        return "fair shuffle checked: the revealed seed matches the commitment made at the start"
    return "WARNING: the revealed seed does NOT match the commitment: the shuffle is unproven"
