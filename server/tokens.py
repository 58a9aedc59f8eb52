"""Session ids, resume tokens and match ids, all from ``secrets``.

A resume token carries 256 random bits; the store keeps only its SHA-256, so a
copy of the database does not let anyone resume a session.
"""

from __future__ import annotations

import hashlib
import secrets

TOKEN_BYTES = 32


def new_token() -> str:
    """A fresh resume token (URL-safe text, 256 bits of entropy)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def hash_token(token: str) -> str:
    """The SHA-256 hex digest under which a token is stored and looked up."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_session_id() -> str:
    """An opaque session id (public: it is not a credential)."""
    return "s" + secrets.token_hex(8)


def new_match_id() -> str:
    """An opaque match id, short enough to type."""
    return "m" + secrets.token_hex(5)


def new_seed() -> int:
    """A match seed: 256 bits from the OS's cryptographic generator (R0.1)."""
    return secrets.randbits(256)


def new_salt() -> str:
    """The salt of a fair-shuffle commitment (R0.2): 16 random bytes as hex."""
    return secrets.token_hex(16)


def new_client_seed() -> str:
    """A client seed for a seat whose player sent none: 128 random bits as 32 hex digits."""
    return secrets.token_hex(16)
