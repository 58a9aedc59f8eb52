"""The sans-IO connection: bytes in, events out; events in, bytes out.

Modelled on h11: no sockets here. The caller feeds what it read with
:meth:`Connection.receive_data` (``b""`` when the peer closed), pulls events
(:mod:`protocol.events`) with :meth:`Connection.next_event` until it returns
:data:`NEED_DATA`, and writes whatever :meth:`Connection.send` returns. Every
message sent is validated, snapshots included: an event was checked when it was
built, and a plain map is turned into its event first.

The handshake is a small state machine, entirely in the ``_TRANSITIONS`` table
below ("Rule 1": everything that moves the state lives there). A (role, state,
direction, kind) missing from the table is a protocol error: for what we
received, a :class:`ProtocolError` whose code depends on the state; for what we
try to send, a :class:`LocalProtocolError`.

States, server side::

    AWAIT_HELLO --recv hello--> HANDSHAKING --send welcome--> OPEN
         |                          |                          |
         +-- send error/bye --------+-- send error/bye --------+-- send fatal error/bye
         +-- recv anything else: handshake_required (fatal)    +-- fatal recv error
                                    v                          v
                                MUST_CLOSE  (only error/bye may still be sent)

States, client side::

    START --send hello--> AWAIT_WELCOME --recv welcome--> OPEN
                              |                             |
                              +-- recv error/bye -----------+-- recv fatal error/bye
                                         v                  v
                                     MUST_CLOSE

Either side goes to CLOSED when the peer closed and every buffered frame has
been delivered.
"""

from __future__ import annotations

import enum
from typing import Any, Final

from protocol.codec import CLIENT_LIMITS, SERVER_LIMITS, pack, unpack
from protocol.deltas import DELTA_VERSION, SnapshotDeltas
from protocol.errors import LocalProtocolError, ProtocolError, RemoteProtocolError, is_fatal
from protocol.events import (
    EVENTS,
    TO_CLIENT,
    TO_SERVER,
    Event,
    Hello,
    Snapshot,
    Welcome,
    from_wire,
    outgoing,
)
from protocol.framing import (
    DEFAULT_MAX_FRAME,
    HEADER,
    MAX_REPRESENTABLE,
    FrameDecoder,
    encode_frame,
)
from protocol.registry import parse_as


class _Sentinel(enum.Enum):
    NEED_DATA = "NEED_DATA"
    CLOSED = "CLOSED"

    def __repr__(self) -> str:
        return self.value


#: next_event() result: no whole message buffered; feed more bytes.
NEED_DATA: Final = _Sentinel.NEED_DATA
#: next_event() result: the connection is over (peer closed, or we must close).
CLOSED: Final = _Sentinel.CLOSED

#: The largest frame a client must accept from a server (and so the most a server sends).
CLIENT_MAX_FRAME = 1024 * 1024


class State(enum.Enum):
    """Where a connection is in its life."""

    AWAIT_HELLO = "AWAIT_HELLO"  # server: nothing received yet
    HANDSHAKING = "HANDSHAKING"  # server: hello received, welcome not yet sent
    START = "START"  # client: hello not yet sent
    AWAIT_WELCOME = "AWAIT_WELCOME"  # client: hello sent, welcome not yet received
    OPEN = "OPEN"  # handshake done
    MUST_CLOSE = "MUST_CLOSE"  # a fatal error or bye happened; close after sending it
    CLOSED = "CLOSED"  # the peer closed and everything it sent was delivered

    # members are singletons compared by identity: hash them so too, in C (Enum's
    # own __hash__, a Python call, was a third of the transition table's lookup)
    __hash__ = object.__hash__


SERVER, CLIENT = "server", "client"
RECV, SEND = "recv", "send"
_S = State
#: the members the per-message paths compare with, read once: ``State.OPEN`` goes
#: through the enum class's attribute lookup (about 0.13 µs in Python 3.11)
_OPEN = State.OPEN
_ENDED = (State.MUST_CLOSE, State.CLOSED)

# (role, state, direction, kind) -> next state. kind: hello | welcome | error | fatal | bye | other
# ("fatal" is an error message whose code closes the connection).
_TRANSITIONS: dict[tuple[str, State, str, str], State] = {
    # ---- server
    (SERVER, _S.AWAIT_HELLO, RECV, "hello"): _S.HANDSHAKING,
    (SERVER, _S.AWAIT_HELLO, SEND, "error"): _S.MUST_CLOSE,  # e.g. handshake_timeout
    (SERVER, _S.AWAIT_HELLO, SEND, "fatal"): _S.MUST_CLOSE,
    (SERVER, _S.AWAIT_HELLO, SEND, "bye"): _S.MUST_CLOSE,
    (SERVER, _S.HANDSHAKING, RECV, "other"): _S.HANDSHAKING,  # requests pipelined after hello
    (SERVER, _S.HANDSHAKING, SEND, "welcome"): _S.OPEN,
    (SERVER, _S.HANDSHAKING, SEND, "error"): _S.MUST_CLOSE,  # a failed handshake closes
    (SERVER, _S.HANDSHAKING, SEND, "fatal"): _S.MUST_CLOSE,
    (SERVER, _S.HANDSHAKING, SEND, "bye"): _S.MUST_CLOSE,
    (SERVER, _S.OPEN, RECV, "other"): _S.OPEN,
    (SERVER, _S.OPEN, SEND, "other"): _S.OPEN,
    (SERVER, _S.OPEN, SEND, "error"): _S.OPEN,
    (SERVER, _S.OPEN, SEND, "fatal"): _S.MUST_CLOSE,
    (SERVER, _S.OPEN, SEND, "bye"): _S.MUST_CLOSE,
    (SERVER, _S.MUST_CLOSE, SEND, "error"): _S.MUST_CLOSE,
    (SERVER, _S.MUST_CLOSE, SEND, "fatal"): _S.MUST_CLOSE,
    (SERVER, _S.MUST_CLOSE, SEND, "bye"): _S.MUST_CLOSE,
    # ---- client
    (CLIENT, _S.START, SEND, "hello"): _S.AWAIT_WELCOME,
    (CLIENT, _S.START, RECV, "error"): _S.MUST_CLOSE,  # refused before hello (too_many_connections)
    (CLIENT, _S.START, RECV, "fatal"): _S.MUST_CLOSE,
    (CLIENT, _S.START, RECV, "bye"): _S.MUST_CLOSE,
    (CLIENT, _S.AWAIT_WELCOME, SEND, "other"): _S.AWAIT_WELCOME,  # pipelining is allowed
    (CLIENT, _S.AWAIT_WELCOME, RECV, "welcome"): _S.OPEN,
    (CLIENT, _S.AWAIT_WELCOME, RECV, "error"): _S.MUST_CLOSE,  # unsupported_version, bad_token...
    (CLIENT, _S.AWAIT_WELCOME, RECV, "fatal"): _S.MUST_CLOSE,
    (CLIENT, _S.AWAIT_WELCOME, RECV, "bye"): _S.MUST_CLOSE,
    (CLIENT, _S.OPEN, SEND, "other"): _S.OPEN,
    (CLIENT, _S.OPEN, RECV, "other"): _S.OPEN,
    (CLIENT, _S.OPEN, RECV, "error"): _S.OPEN,
    (CLIENT, _S.OPEN, RECV, "fatal"): _S.MUST_CLOSE,
    (CLIENT, _S.OPEN, RECV, "bye"): _S.MUST_CLOSE,
}

#: States in which anything wrong with a received message fails the handshake (fatal).
#: (HANDSHAKING is not one: the hello is in, later frames are ordinary pipelined requests.)
_HANDSHAKE_STATES = frozenset({_S.AWAIT_HELLO, _S.START, _S.AWAIT_WELCOME})


def _plain_sends(direction: str) -> frozenset[type[Event]]:
    """The event classes of ``direction`` (and their :func:`~protocol.registry.wired`
    kind) whose kind is "other": sent in OPEN, they leave it OPEN, for either role."""
    assert _TRANSITIONS[(SERVER, _S.OPEN, SEND, "other")] is _S.OPEN
    assert _TRANSITIONS[(CLIENT, _S.OPEN, SEND, "other")] is _S.OPEN
    plain = [cls for mtype, cls in EVENTS[direction].items()
             if mtype not in ("error", "hello", "welcome", "bye")]
    return frozenset(plain + [cls.WIRED for cls in plain])


def _kind(mtype: str, code: Any = None) -> str:
    """The kind of a message for the transition table, from its type (and an error's code)."""
    if mtype == "error":
        return "fatal" if is_fatal(str(code)) else "error"
    if mtype in ("hello", "welcome", "bye"):
        return mtype
    return "other"


_HEADER_PACK = HEADER.pack

#: the requests a server in OPEN receives and stays OPEN by the table (every type
#: a client sends but hello and the handshake's kinds): :meth:`Connection._next`
#: checks them against their schema without the table's look-up
_OPEN_REQUESTS: dict[str, type[Event]] = {
    mtype: cls for mtype, cls in EVENTS[TO_SERVER].items()
    if mtype not in ("error", "hello", "welcome", "bye")
    and _TRANSITIONS.get((SERVER, _S.OPEN, RECV, _kind(mtype))) is _S.OPEN}

#: per direction, the events :meth:`Connection.send` frames at once in OPEN
_PLAIN_SENDS = {direction: _plain_sends(direction) for direction in (TO_CLIENT, TO_SERVER)}


class Connection:
    """One end of a protocol connection, without I/O.

    Args:
        role: ``"server"`` or ``"client"`` (which end we are).
        max_frame: the largest body we accept; default 65536 for a server,
            :data:`CLIENT_MAX_FRAME` for a client.

    Attributes:
        state: the :class:`State`.
        peer_max_frame: the largest body the peer accepts; :meth:`send` refuses
            bigger ones. A client learns it from ``welcome.limits.max_frame``.
        version: the negotiated protocol version once the welcome passed, else None.
        welcome: (client) the :class:`~protocol.events.Welcome` event, once received.
        hello: (server) the :class:`~protocol.events.Hello` event, once received.
    """

    def __init__(self, role: str, max_frame: int | None = None) -> None:
        if role not in (SERVER, CLIENT):
            raise ValueError(f"role must be 'server' or 'client', got {role!r}")
        self.role = role
        if max_frame is None:
            max_frame = DEFAULT_MAX_FRAME if role == SERVER else CLIENT_MAX_FRAME
        self.max_frame = max_frame
        self.peer_max_frame = CLIENT_MAX_FRAME if role == SERVER else DEFAULT_MAX_FRAME
        self._decoder = FrameDecoder(max_frame)
        self._limits = SERVER_LIMITS if role == SERVER else CLIENT_LIMITS
        self._incoming = TO_SERVER if role == SERVER else TO_CLIENT
        self._outgoing = TO_CLIENT if role == SERVER else TO_SERVER
        self.state = State.AWAIT_HELLO if role == SERVER else State.START
        self._peer_closed = False
        self.version: int | None = None
        self.welcome: Welcome | None = None
        self.hello: Hello | None = None
        #: protocol 2's memory of the snapshots sent (server) or received (client)
        self._deltas = SnapshotDeltas()
        #: the event classes :meth:`send` frames without the table once OPEN
        self._plain = _PLAIN_SENDS[self._outgoing]

    def __repr__(self) -> str:
        return f"<Connection {self.role} {self.state.value}>"

    @property
    def buffered(self) -> int:
        """Bytes received and not yet turned into messages."""
        return self._decoder.buffered

    # ------------------------------------------------------------------ receiving

    def receive_data(self, data: bytes) -> None:
        """Feed bytes read from the peer; ``b""`` means the peer closed its side.

        Never raises; problems surface from :meth:`next_event`.
        """
        if not data:
            self._peer_closed = True
            return
        if self._peer_closed or self.state in _ENDED:
            return
        self._decoder.feed(data)

    def next_event(self) -> Event | _Sentinel:
        """The next event from the peer, :data:`NEED_DATA`, or :data:`CLOSED`.

        Unknown extra fields of the message are not in the event (see
        :meth:`next_message` for the map as received).

        A client silently skips pushed messages of unknown types (room for v2).

        Raises:
            ProtocolError: the peer sent something wrong (a
                :class:`~protocol.errors.RemoteProtocolError`). When ``exc.fatal``
                is True the connection is now ``MUST_CLOSE``: send ``exc.to_event()``
                and close. Otherwise the bad message was dropped; report it and
                keep reading. Errors during the handshake are always fatal.
        """
        got = self._next()
        return got if isinstance(got, _Sentinel) else got[0]

    def next_message(self) -> dict[str, Any] | _Sentinel:
        """As :meth:`next_event`, but the validated map as received (extra fields
        kept), for tools and tests that read maps; raises as :meth:`next_event`."""
        got = self._next()
        return got if isinstance(got, _Sentinel) else got[1]

    def _next(self) -> tuple[Event, dict[str, Any]] | _Sentinel:
        while True:
            if self.state in _ENDED:
                return CLOSED
            try:
                body = self._decoder.next_frame()
                if body is None:
                    if self._peer_closed:
                        self.state = State.CLOSED
                        return CLOSED
                    return NEED_DATA
                msg = unpack(body, self._limits)
                if self.state is _OPEN and self.role == SERVER:
                    # the common case: a request to an open server, which the table
                    # leaves OPEN (every type of _OPEN_REQUESTS) and _received ignores
                    cls = _OPEN_REQUESTS.get(msg["type"])
                    if cls is not None:
                        return parse_as(cls, msg), msg
                if self.role == CLIENT and msg["type"] not in EVENTS[self._incoming]:
                    continue
                if msg["type"] == "snapshot" and self.version == DELTA_VERSION:
                    msg = self._deltas.merge(msg)
                next_state = _TRANSITIONS.get((self.role, self.state, RECV, _kind(msg["type"], msg.get("code"))))
                if next_state is None:
                    raise self._unexpected(msg)
                event = from_wire(msg, self._incoming)
            except ProtocolError as exc:
                if self.state in _HANDSHAKE_STATES:
                    exc.fatal = True
                if exc.fatal:
                    self.state = State.MUST_CLOSE
                raise
            self._received(event)
            self.state = next_state
            return event, msg

    def _unexpected(self, msg: dict[str, Any]) -> ProtocolError:
        mtype = msg["type"]
        if self.state == State.AWAIT_HELLO:
            return RemoteProtocolError(
                "handshake_required", f"the first message must be hello, got {mtype[:32]!r}", "type"
            )
        if self.state in (State.START, State.AWAIT_WELCOME):
            return RemoteProtocolError(
                "bad_message", f"expected welcome or error, got {mtype[:32]!r}", "type", fatal=True
            )
        return RemoteProtocolError(
            "bad_message", f"unexpected {mtype[:32]!r} in state {self.state.value}", "type"
        )

    def _received(self, event: Event) -> None:
        if isinstance(event, Hello) and self.role == SERVER:
            self.hello = event
        elif isinstance(event, Welcome) and self.role == CLIENT:
            self.welcome = event
            self.version = event.protocol
            self.peer_max_frame = event.limits["max_frame"]

    # ------------------------------------------------------------------ sending

    def send(self, event: Event | dict[str, Any]) -> bytes:
        """Frame ``event`` for the peer and return the bytes to write.

        Args:
            event: an :class:`~protocol.events.Event` of our direction (validated
                when it was built), or, transitionally, its wire map, which is
                turned into its event first (and so validated the same way), then
                sent as given (same keys, its own key order).

        Raises:
            LocalProtocolError: the message is invalid (``bad_message``,
                ``unknown_type``: a map that is no event of our direction, or has a
                field the protocol does not know), too big for the peer
                (``frame_too_large``), or not allowed in the current state;
                nothing changed.
        """
        cls = type(event)
        if cls in self._plain and self.state is _OPEN:
            # the common case (a snapshot, an ok...): an event of our direction that
            # leaves an open connection open; the table says so for every such event
            return self._frame(event, event.wire_map())  # type: ignore[union-attr]
        # a map is checked as its event and sent as it is (its key order kept)
        wire = None if isinstance(event, Event) else event
        event = outgoing(event, self._outgoing)
        next_state = _TRANSITIONS.get((self.role, self.state, SEND, _kind(event.TYPE, getattr(event, "code", None))))
        if next_state is None:
            raise LocalProtocolError(
                "bad_message",
                f"cannot send {event.TYPE!r} in state {self.state.value}",
                "type",
                fatal=False,
            )
        data = self._frame(event, event.wire_map() if wire is None else wire)
        if isinstance(event, Welcome) and self.role == SERVER:
            self.version = event.protocol
        self.state = next_state
        return data

    def _frame(self, event: Event, wire: dict[str, Any]) -> bytes:
        """The frame of ``event``'s map ``wire`` (protocol 2: a snapshot as a delta).

        Raises:
            LocalProtocolError: as :meth:`send` (nothing changed).
        """
        if self.version == DELTA_VERSION and isinstance(event, Snapshot):
            wire, sent = self._deltas.encode(wire)
            data = encode_frame(pack(wire), self.peer_max_frame)
            sent()
            return data
        body = pack(wire)
        size = len(body)
        if size <= self.peer_max_frame and size <= MAX_REPRESENTABLE:
            return _HEADER_PACK(size) + body
        return encode_frame(body, self.peer_max_frame)   # raises frame_too_large
