"""Every error code of the protocol, and the one exception type that carries them.

``CODES`` is the single list of codes: for each, whether sending it closes the
connection (``fatal``) and what it means. docs/protocol.md documents when each
is sent; add a code only with an entry in both.

:class:`ProtocolError` is what every function of ``protocol/`` raises for a bad
peer (bad bytes, bad message, handshake violation). :class:`LocalProtocolError`
(a subclass) is raised when *our own* side tries to send something the
protocol forbids (a bug in the caller, not in the peer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """One error code: ``fatal`` is True when the sender closes the connection after it."""

    fatal: bool
    meaning: str


CODES: dict[str, CodeInfo] = {
    # --- framing and codec (PROTOCOL-CORE) ---
    "bad_frame": CodeInfo(
        True, "the frame body is not one MessagePack value within the codec limits"
    ),
    "frame_too_large": CodeInfo(True, "a frame header announced more than max_frame bytes"),
    # --- messages ---
    "bad_message": CodeInfo(False, "a field is missing, of the wrong type or out of its limits"),
    "unknown_type": CodeInfo(False, "the message type is not one the receiver knows"),
    # --- handshake ---
    "handshake_required": CodeInfo(True, "the first frame from a client was not hello"),
    "handshake_timeout": CodeInfo(True, "no hello arrived within the server's handshake timeout"),
    "unsupported_version": CodeInfo(True, "no protocol version is shared; see `versions`"),
    "bad_token": CodeInfo(True, "the resume token is unknown or expired"),
    "too_many_connections": CodeInfo(True, "the server (or this address) has too many connections"),
    # --- lobby ---
    "no_such_game": CodeInfo(False, "no game has that name"),
    "bad_option": CodeInfo(False, "an option name or value the game does not know"),
    "no_such_match": CodeInfo(False, "no match has that id"),
    "seat_taken": CodeInfo(False, "the requested seat (or every seat) is taken"),
    "already_seated": CodeInfo(False, "this session already sits in that match (or is queued)"),
    "not_supported": CodeInfo(
        False, "the request does not apply here (e.g. auto_flip outside War)"
    ),
    # --- playing ---
    "not_in_match": CodeInfo(False, "this session neither sits in nor watches that match"),
    "not_seated": CodeInfo(False, "the request needs a seat, and this session only watches"),
    "match_finished": CodeInfo(False, "the match is over; it accepts no more intents"),
    "stale": CodeInfo(False, "the intent's seq is not the match's current seq"),
    "not_your_turn": CodeInfo(False, "the seat has nothing to do now"),
    "illegal_intent": CodeInfo(False, "the intent is not in the seat's legal list"),
    # --- flow control and liveness ---
    "rate_limited": CodeInfo(False, "too many requests; this one was dropped"),
    "heartbeat_timeout": CodeInfo(True, "the peer answered no ping within ping_timeout"),
    "slow_consumer": CodeInfo(True, "the client reads too slowly; its outgoing queue overflowed"),
    "server_shutdown": CodeInfo(True, "the server is shutting down"),
    "internal_error": CodeInfo(False, "the server failed handling this request (a bug); retry"),
}


def is_fatal(code: str) -> bool:
    """True when ``code`` closes the connection. Unknown codes count as not fatal."""
    info = CODES.get(code)
    return info.fatal if info is not None else False


class ProtocolError(Exception):
    """The peer broke the protocol, or a request cannot be served.

    Attributes:
        code: a key of :data:`CODES`.
        message: human-readable detail (sent to the peer, so never secrets).
        field: the offending field (dotted path, e.g. ``"intent.index"``), or None.
        fatal: True when the connection must be closed after reporting it. Defaults
            to the code's entry in :data:`CODES`; the handshake makes any error fatal.
        id: the request ``id`` to echo, when the bad message carried one.
        match: the match the error is about, or None.
        versions: for ``unsupported_version``, the versions the server speaks.

    Raises:
        ValueError: ``code`` is not in :data:`CODES` (a bug in the caller).
    """

    def __init__(
        self,
        code: str,
        message: str,
        field: str | None = None,
        *,
        fatal: bool | None = None,
        id: int | None = None,
        match: str | None = None,
        versions: list[int] | None = None,
    ) -> None:
        if code not in CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.field = field
        self.fatal = CODES[code].fatal if fatal is None else fatal
        self.id = id
        self.match = match
        self.versions = versions

    def __str__(self) -> str:
        where = f" (field {self.field})" if self.field else ""
        return f"{self.code}: {self.message}{where}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r}, field={self.field!r})"

    def to_message(self, id: int | None = None) -> dict[str, Any]:
        """The ``error`` message to send for this error.

        Args:
            id: the request id to echo; defaults to the id of the bad message, if any.
        """
        msg: dict[str, Any] = {"type": "error", "code": self.code, "message": self.message}
        echo = id if id is not None else self.id
        if echo is not None:
            msg["id"] = echo
        if self.field is not None:
            msg["field"] = self.field
        if self.match is not None:
            msg["match"] = self.match
        if self.versions is not None:
            msg["versions"] = list(self.versions)
        return msg


class LocalProtocolError(ProtocolError):
    """Our own side tried to send something the protocol forbids (a caller bug).

    Raised by :meth:`protocol.connection.Connection.send` and the codec's ``pack``;
    nothing has been sent and the connection state is unchanged.
    """
