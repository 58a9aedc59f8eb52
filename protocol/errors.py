"""Every error code of the protocol, and the three kinds of exception that carry them.

:data:`CODES` is the single table of codes: for each, its :class:`Kind`, whether
sending it closes the connection (``fatal``) and what it means (``doc``, the text
of the table in docs/protocol.md, which tests/protocol/test_docs.py checks
against this table). Add a code only here, then regenerate the table in the docs
(``python -m protocol.errors``).

The exceptions, after h11's ``_util.py``: :class:`ProtocolError` is the abstract
base (``except ProtocolError`` catches all three), and every instance is one of

* :class:`RemoteProtocolError` -- the peer broke the protocol (``bad_frame``,
  ``bad_message``, ``unknown_type``, ``handshake_required``, ...);
* :class:`Refusal` -- a well-formed request the server will not serve now, in
  the normal course of things (``seat_taken``, ``stale``, ``not_your_turn``,
  ``no_such_match``, ``rate_limited``, ...);
* :class:`LocalProtocolError` -- our own side is wrong: it tried to send
  something the protocol forbids, or a handler failed (``internal_error``).
  Whoever catches one logs it at ERROR; the peer is told only ``internal_error``.

Each carries what to tell the peer: :meth:`ProtocolError.to_event` (an
:class:`protocol.events.Error`) or :meth:`ProtocolError.to_message` (its wire map).

``ProtocolError(code, ...)`` itself builds the kind the code belongs to, so
``ProtocolError("seat_taken", ...)`` is a :class:`Refusal`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class Kind(enum.Enum):
    """Whose doing an error code is; each maps to one exception class."""

    REMOTE = "peer"  # the peer broke the protocol
    REFUSAL = "refusal"  # a normal refusal of a well-formed request
    LOCAL = "ours"  # our own bug


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """One error code: its kind, ``fatal`` (the sender closes the connection after
    it) and ``doc``, when it is sent (the docs' table text)."""

    kind: Kind
    fatal: bool
    doc: str

    @property
    def meaning(self) -> str:
        """The same as :attr:`doc` (the name older code uses)."""
        return self.doc


_R, _N, _L = Kind.REMOTE, Kind.REFUSAL, Kind.LOCAL

#: The one table of error codes: code -> (kind, fatal, doc).
CODES: dict[str, CodeInfo] = {
    # --- framing and codec (PROTOCOL-CORE) ---
    "bad_frame": CodeInfo(
        _R, True, "a body is not one MessagePack value within the decoder limits (garbage, "
        "truncated, trailing bytes, ext type, too long, too deep)"),
    "frame_too_large": CodeInfo(
        _R, True, "a frame header announces more than `max_frame` bytes (refused before "
        "reading the body)"),
    # --- messages ---
    "bad_message": CodeInfo(
        _R, False, "a field is missing, has the wrong type or is out of its limits (`field` "
        "names it); or the value is not a map with a string `type`; fatal during the "
        "handshake"),
    "unknown_type": CodeInfo(_R, False, "the message `type` is not a client→server type"),
    # --- handshake ---
    "handshake_required": CodeInfo(_R, True, "the first frame was not `hello`"),
    "handshake_timeout": CodeInfo(
        _R, True, "no `hello` within `handshake_timeout` seconds"),
    "unsupported_version": CodeInfo(
        _N, True, "no protocol version in common; `versions` lists the server's"),
    "bad_token": CodeInfo(_N, True, "`hello.resume` is unknown or expired"),
    "too_many_connections": CodeInfo(
        _N, True, "the server is at its connection limit"),
    # --- lobby ---
    "no_such_game": CodeInfo(
        _N, False, "`create`/`queue`/`matches` names an unknown game"),
    "bad_option": CodeInfo(
        _N, False, "an unknown option name or a bad value (`field` names it)"),
    "no_such_match": CodeInfo(_N, False, "`join`/`watch`/... names an unknown match"),
    "seat_taken": CodeInfo(_N, False, "the requested seat, or every seat, is taken"),
    "already_seated": CodeInfo(
        _N, False, "the session already sits in that match, or is already queued"),
    "not_supported": CodeInfo(
        _N, False, "the request does not apply here (`auto_flip` outside War; in cluster "
        "mode, accounts, rated matches and records: see \"Accounts and ratings\")"),
    "server_full": CodeInfo(
        _N, False, "`create`/`queue`: the server holds its maximum number of unfinished "
        "matches (`--max-matches`); try again later"),
    "too_many_waiting": CodeInfo(
        _N, False, "`create`: the session (or its address) already has its maximum of "
        "waiting matches (`--max-waiting-per-session`, `--max-waiting-per-address`)"),
    "too_many_active": CodeInfo(
        _N, False, "`create`/`join`/`queue`: the session (or its address) already sits in its "
        "maximum of unfinished matches (`--max-active-per-session`, "
        "`--max-active-per-address`)"),
    "creating_too_fast": CodeInfo(
        _N, False, "`create`/`queue`: the session (or its address) created its maximum of "
        "matches this minute (`--creates-per-minute`, `--creates-per-minute-per-address`)"),
    "too_many_watches": CodeInfo(
        _N, False, "`watch`: the session already watches its maximum of matches "
        "(`--max-watches-per-session`)"),
    "match_expired": CodeInfo(
        _N, False, "pushed (no `id`, with `match`) to the players of a waiting match nobody "
        "joined within `--waiting-ttl`: the match is gone"),
    "chat_rate_limited": CodeInfo(
        _N, False, "`chat`: more lines than the chat limit (`limits.chat_rate` per second, "
        "bursts of `limits.chat_burst`), or than the match's spectators together may say; "
        "this line was not relayed"),
    "too_many_handshakes": CodeInfo(
        _N, True, "`hello`: the client's address opens sessions or resumes faster than "
        "`--handshakes-per-second`, or holds `--max-sessions-per-address` live sessions"),
    # --- playing ---
    "not_in_match": CodeInfo(
        _N, False, "the session neither sits in nor watches that match"),
    "not_seated": CodeInfo(
        _N, False, "the request needs a seat and the session only watches"),
    "match_finished": CodeInfo(
        _N, False, "the match is over; no more intents, joins or resigns"),
    "not_finished": CodeInfo(
        _N, False, "`record` names a match that is not over yet (its seed is still secret): "
        "watch it instead"),
    "stale": CodeInfo(
        _N, False, "`intent.seq` is before the seat's `legal` list last changed (or after "
        "the match's seq): act again on your newest snapshot"),
    "not_your_turn": CodeInfo(_N, False, "the seat has nothing to do now"),
    "illegal_intent": CodeInfo(
        _N, False, "the intent is not one of the seat's legal intents"),
    # --- accounts and ratings (1.1) ---
    "bad_name": CodeInfo(
        _N, False, "the name breaks the name rules (blank, invisible, bidirectional or "
        "control characters, mixed scripts, a \"(bot)\" suffix...; the message says which); "
        "fatal in `hello`"),
    "name_taken": CodeInfo(
        _N, False, "the name (or a look-alike of it) belongs to a registered account: log in "
        "with `hello.auth`, or choose another; fatal in `hello`"),
    "bad_password": CodeInfo(_N, False, "`register`/`change_password`: the password is empty "
                             "or longer than 1024 characters"),
    "bad_credentials": CodeInfo(
        _N, False, "`hello.auth` (fatal) or `change_password.old`: wrong name, password or API "
        "token"),
    "not_registered": CodeInfo(
        _N, False, "the request needs an account (`rated`, tokens, `set_bot`, "
        "`change_password`) and the session is a guest's"),
    "already_registered": CodeInfo(
        _N, False, "`register` from a session that is logged in already"),
    "no_such_token": CodeInfo(_N, False, "`token_revoke` names no token of this account"),
    "too_many_tokens": CodeInfo(_N, False, "`token_create`: the account has 32 tokens"),
    "logged_out": CodeInfo(
        _N, True, "the session logged out; its resume token is revoked (as a `bye` reason)"),
    # --- flow control and liveness ---
    "rate_limited": CodeInfo(
        _N, False, "too many requests; this one was dropped (not run). Persistent abuse: "
        "`bye` `rate_limited`. Also too many failed logins or registrations (fatal in "
        "`hello`)"),
    "heartbeat_timeout": CodeInfo(
        _R, True, "the peer stayed silent past the heartbeat bound (as a `bye` reason)"),
    "slow_consumer": CodeInfo(
        _R, True, "the client reads so slowly that its outgoing queue overflowed (as a `bye` "
        "reason)"),
    "server_shutdown": CodeInfo(
        _N, True, "the server is shutting down (as a `bye` reason)"),
    # --- cluster mode (docs/cluster.md) ---
    "unavailable": CodeInfo(
        _N, False, "cluster mode: Redis did not answer; the request was not carried out "
        "(nothing of it was acknowledged; `create`/`queue` are refused while Redis is "
        "unreachable); retry after a while. Also: the node that runs the match is "
        "unreachable (its lease is gone: not carried out), or did not answer a relayed "
        "request within 5 s (it may have been carried out: act on the next snapshot)"),
    "match_moved": CodeInfo(
        _N, False, "cluster mode: another node runs the match now (this node was presumed "
        "dead and its matches were adopted); the request was not carried out. As a `bye` "
        "reason: the connection closes; reconnect and resume (on any node) to reach the "
        "match"),
    "internal_error": CodeInfo(
        _L, False, "the server failed handling this request (a bug, logged); retrying may "
        "work"),
}

#: The longest ``error.message`` and ``error.field`` on the wire (characters); a
#: longer one is cut to fit (:func:`cut`), so the error is still sent.
MAX_MESSAGE = 1024
MAX_FIELD = 256

#: What the peer is told about any :class:`LocalProtocolError`.
INTERNAL_ERROR_MESSAGE = "the server failed handling this request"

#: The ``error`` event class (:class:`protocol.events.Error`). Events are built on
#: this module, so it cannot import them: protocol.events sets this when it defines
#: the class, and the package's ``__init__`` imports protocol.events, so it is set
#: whenever anything of ``protocol`` is imported.
error_event: Callable[..., Any] | None = None


def _error(**fields: Any) -> Any:
    if error_event is None:  # pragma: no cover - protocol/__init__.py imports the events
        raise RuntimeError("protocol.events has not been imported")
    return error_event(**fields)


def cut(text: str | None, limit: int) -> str | None:
    """``text`` cut to at most ``limit`` characters, the last of them "…" when cut."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit - 1] + "…"


def is_fatal(code: str) -> bool:
    """True when ``code`` closes the connection. Unknown codes count as not fatal."""
    info = CODES.get(code)
    return info.fatal if info is not None else False


def kind_of(code: str) -> Kind:
    """The :class:`Kind` of ``code``.

    Raises:
        ValueError: ``code`` is not in :data:`CODES`.
    """
    info = CODES.get(code)
    if info is None:
        raise ValueError(f"unknown error code {code!r}")
    return info.kind


def markdown_table() -> str:
    """The error-code table of docs/protocol.md, generated from :data:`CODES`."""
    rows = ["| code | kind | fatal | sent when |", "|---|---|---|---|"]
    for code, info in CODES.items():
        fatal = "yes" if info.fatal else "no"
        rows.append(f"| `{code}` | {info.kind.value} | {fatal} | {info.doc} |")
    return "\n".join(rows)


class ProtocolError(Exception):
    """Abstract base of the three kinds; ``ProtocolError(code, ...)`` builds the
    subclass that :data:`CODES` names for ``code``.

    Args:
        code: a key of :data:`CODES`.
        message: human-readable detail (sent to the peer for remote errors and
            refusals, so never secrets).
        field: the offending field (dotted path, e.g. ``"intent.index"``), or None.
        fatal: True when the connection must be closed after reporting it. Defaults
            to the code's entry in :data:`CODES`; the handshake makes any error fatal
            (the attribute may be set later for that reason).
        id: the request ``id`` to echo, when the bad message carried one.
        match: the match the error is about, or None.
        versions: for ``unsupported_version``, the versions the server speaks.
        retry_after: for a refusal of pace (``rate_limited``, ``creating_too_fast``,
            ``chat_rate_limited``), seconds until the same request may succeed (sent
            to the millisecond).

    Raises:
        ValueError: ``code`` is not in :data:`CODES`, or (for :class:`RemoteProtocolError`
            and :class:`Refusal`) is of another kind: a bug in the caller.
    """

    #: The kind of codes this class carries (None: any; set by each subclass).
    kind: Kind | None = None

    def __new__(cls, code: str, *args: Any, **kwargs: Any) -> ProtocolError:
        if cls is ProtocolError:
            cls = _CLASS_OF[kind_of(code)]
        return super().__new__(cls)

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
        retry_after: float | None = None,
    ) -> None:
        info = CODES.get(code)
        if info is None:
            raise ValueError(f"unknown error code {code!r}")
        if type(self).kind not in (None, info.kind):
            raise ValueError(f"{code!r} is a {info.kind.value} code, not a "
                             f"{type(self).__name__}")
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.field = field
        self.fatal = info.fatal if fatal is None else fatal
        self.id = id
        self.match = match
        self.versions = versions
        self.retry_after = retry_after

    def __str__(self) -> str:
        where = f" (field {self.field})" if self.field else ""
        return f"{self.code}: {self.message}{where}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r}, field={self.field!r})"

    def to_event(self, id: int | None = None) -> Any:
        """The ``error`` event (a :class:`protocol.events.Error`) to send for this error.

        Args:
            id: the request id to echo; defaults to the id of the bad message, if any.
        """
        echo = id if id is not None else self.id
        return _error(code=self.code, message=cut(self.message, MAX_MESSAGE), id=echo,
                      field=cut(self.field, MAX_FIELD), match=self.match,
                      versions=list(self.versions) if self.versions is not None else None,
                      retry_after=(None if self.retry_after is None
                                   else round(self.retry_after, 3)))

    def to_message(self, id: int | None = None) -> dict[str, Any]:
        """The wire map of :meth:`to_event` (``type`` first, then code, message, id,
        field, match, versions where set)."""
        return self.to_event(id).to_wire()


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol: bad bytes, a bad message, a handshake violation."""

    kind = Kind.REMOTE


class Refusal(ProtocolError):
    """A well-formed request the server refuses in the normal course of things."""

    kind = Kind.REFUSAL


class LocalProtocolError(ProtocolError):
    """Our own side is wrong: it tried to send what the protocol forbids, or failed
    handling a request. Log it at ERROR.

    Any code may describe what went wrong locally (``bad_message`` for an invalid
    outgoing message, ``frame_too_large`` for one too big for the peer); the peer is
    only ever told ``internal_error``. Raised by
    :meth:`protocol.connection.Connection.send`, the codec's ``pack`` and event
    construction; nothing has been sent and the connection state is unchanged.
    """

    kind = None  # any code may describe our own mistake

    def to_event(self, id: int | None = None) -> Any:
        """An ``internal_error`` event. The detail of any other code stays in our log,
        not on the wire; an ``internal_error``'s own message is sent as it is."""
        echo = id if id is not None else self.id
        message = self.message if self.code == "internal_error" else INTERNAL_ERROR_MESSAGE
        message = cut(message, MAX_MESSAGE)
        return _error(code="internal_error", message=message, id=echo, match=self.match)


_CLASS_OF: dict[Kind, type[ProtocolError]] = {
    Kind.REMOTE: RemoteProtocolError,
    Kind.REFUSAL: Refusal,
    Kind.LOCAL: LocalProtocolError,
}


if __name__ == "__main__":  # pragma: no cover - the docs' table, to paste
    print(markdown_table())
