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
    """The log line saying what of the match's fairness was checked here, or None."""
    ok = verify_reveal(snapshot.get("commitment"), snapshot.get("reveal"))
    if ok is None:
        return None
    if not ok:
        return "WARNING: the revealed seed does NOT match the commitment: the shuffle is unproven"
    line = ("fair shuffle checked: the revealed seed matches the commitment made before "
            "the deal")
    seeds = snapshot.get("client_seeds")
    if isinstance(seeds, list) and seeds:
        line += (f"; the deal came from it and the client seeds {', '.join(map(str, seeds))} "
                 f"({snapshot.get('stream')}): `cardserver replay {snapshot.get('match')} "
                 "--verify` replays every shuffle and card")
    return line
