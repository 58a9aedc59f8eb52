"""How much of the server one session, and one client address, may hold.

A session is identified by its id, an address by the host part of its peer
(``203.0.113.7`` for ``203.0.113.7:51234``). :class:`Quotas` keeps, per session
id, the address it last connected from and its buckets (creations per minute,
chat lines), and per address the session ids bound to it and its own buckets
(creations, handshakes). Counting a session's waiting and unfinished matches is
left to the caller, who knows the matches (:meth:`Quotas.check_create` takes the
counts); so this module holds no match and no connection.

Every refusal is a :class:`~protocol.errors.Refusal` with its own code:
``too_many_handshakes``, ``too_many_waiting``, ``too_many_active``,
``creating_too_fast``, ``chat_rate_limited``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from protocol.errors import Refusal
from server.config import ServerConfig
from server.ratelimit import TokenBucket

#: The address of connections that have none (memory streams in tests).
NO_ADDRESS = "-"


def address_of(peer: str) -> str:
    """The host part of a peer name (``host:port``, ``[v6]:port``); the name itself
    when it has no port."""
    if peer.startswith("["):
        return peer[1:].split("]", 1)[0]
    host, sep, port = peer.rpartition(":")
    return host if sep and port.isdigit() and ":" not in host else peer


@dataclass(slots=True)
class Counts:
    """Matches a session (or an address) holds: ``waiting`` ones it sits in alone,
    ``unfinished`` ones (waiting or active) it sits in."""

    waiting: int = 0
    unfinished: int = 0

    def __iadd__(self, other: Counts) -> Counts:
        self.waiting += other.waiting
        self.unfinished += other.unfinished
        return self


@dataclass(slots=True)
class _SessionState:
    address: str
    creates: TokenBucket
    chat: TokenBucket


@dataclass(slots=True)
class _AddressState:
    creates: TokenBucket
    hellos: TokenBucket
    sessions: set[str] = field(default_factory=set)


class Quotas:
    """Per-session and per-address limits of one server (see the module docstring).

    Args:
        config: the limits (``max_*_per_session``, ``*_per_address``, ``chat_*``,
            ``handshake*``).
        clock: seconds, monotonic (the server passes ``trio.current_time``).
    """

    def __init__(self, config: ServerConfig, clock: Callable[[], float]) -> None:
        self.config = config
        self.clock = clock
        self._sessions: dict[str, _SessionState] = {}
        self._addresses: dict[str, _AddressState] = {}

    # -- sessions and addresses ---------------------------------------------------

    def _address(self, address: str) -> _AddressState:
        state = self._addresses.get(address)
        if state is None:
            c, now = self.config, self.clock()
            state = self._addresses[address] = _AddressState(
                TokenBucket(c.creates_per_minute_per_address / 60.0,
                            c.creates_per_minute_per_address, now),
                TokenBucket(c.handshakes_per_second, c.handshake_burst, now))
        return state

    def admit_handshake(self, address: str, live: Callable[[str], bool]) -> None:
        """A ``hello`` (new session or resume) arrives from ``address``.

        Args:
            live: whether a session id has a live connection now.

        Raises:
            Refusal: ``too_many_handshakes``: the address says hello faster than
                ``handshakes_per_second`` allows, or holds
                ``max_sessions_per_address`` live sessions already.
        """
        state = self._address(address)
        if not state.hellos.allow(self.clock()):
            raise Refusal("too_many_handshakes", f"more than "
                          f"{self.config.handshakes_per_second:g} handshakes per second "
                          "from your address")
        alive = sum(1 for sid in state.sessions if live(sid))
        if alive >= self.config.max_sessions_per_address:
            raise Refusal("too_many_handshakes", f"your address holds "
                          f"{self.config.max_sessions_per_address} live sessions already")

    def bind(self, session_id: str, address: str) -> None:
        """``session_id`` now connects from ``address`` (a new session, or a resume)."""
        state = self._sessions.get(session_id)
        if state is None:
            c, now = self.config, self.clock()
            self._sessions[session_id] = _SessionState(
                address, TokenBucket(c.creates_per_minute / 60.0, c.creates_per_minute, now),
                TokenBucket(c.chat_rate, c.chat_burst, now))
        elif state.address != address:
            self._unbind_address(session_id, state.address)
            state.address = address
        self._address(address).sessions.add(session_id)

    def forget(self, session_id: str) -> None:
        """The server forgets ``session_id`` (no connection, no seat, nothing watched)."""
        state = self._sessions.pop(session_id, None)
        if state is not None:
            self._unbind_address(session_id, state.address)

    def _unbind_address(self, session_id: str, address: str) -> None:
        addr = self._addresses.get(address)
        if addr is None:
            return
        addr.sessions.discard(session_id)
        if not addr.sessions and self._idle(addr):
            del self._addresses[address]

    def _idle(self, addr: _AddressState) -> bool:
        """Both buckets full again: forgetting the address loses nothing."""
        now = self.clock()
        return all(b.available(now) >= b.burst for b in (addr.creates, addr.hellos))

    def address(self, session_id: str) -> str:
        """The address ``session_id`` last connected from (:data:`NO_ADDRESS`: none)."""
        state = self._sessions.get(session_id)
        return state.address if state is not None else NO_ADDRESS

    def neighbours(self, session_id: str) -> set[str]:
        """Every session id bound to the address of ``session_id`` (itself included)."""
        state = self._sessions.get(session_id)
        if state is None:
            return {session_id}
        addr = self._addresses.get(state.address)
        return set(addr.sessions) if addr is not None else {session_id}

    # -- matches ------------------------------------------------------------------

    def check_seat(self, mine: Counts, theirs: Counts, creating: bool) -> None:
        """May a session holding ``mine`` (its address: ``theirs``, itself included)
        take one more seat (``creating``: in a match of its own, still waiting)?

        Raises:
            Refusal: ``too_many_waiting`` or ``too_many_active``.
        """
        c = self.config
        if creating and mine.waiting >= c.max_waiting_per_session:
            raise Refusal("too_many_waiting", f"you have {mine.waiting} waiting matches; "
                          f"at most {c.max_waiting_per_session}")
        if creating and theirs.waiting >= c.max_waiting_per_address:
            raise Refusal("too_many_waiting", f"your address has {theirs.waiting} waiting "
                          f"matches; at most {c.max_waiting_per_address}")
        if mine.unfinished >= c.max_active_per_session:
            raise Refusal("too_many_active", f"you sit in {mine.unfinished} unfinished "
                          f"matches; at most {c.max_active_per_session}")
        if theirs.unfinished >= c.max_active_per_address:
            raise Refusal("too_many_active", f"your address sits in {theirs.unfinished} "
                          f"unfinished matches; at most {c.max_active_per_address}")

    def charge_create(self, session_id: str) -> None:
        """Count one new match against the session's and its address's rate.

        Raises:
            Refusal: ``creating_too_fast`` (nothing is charged then).
        """
        state = self._sessions.get(session_id)
        if state is None:
            return
        now, c = self.clock(), self.config
        addr = self._address(state.address)
        if state.creates.available(now) < 1.0:
            raise Refusal("creating_too_fast", f"you created {c.creates_per_minute} matches "
                          "in the last minute", retry_after=state.creates.wait(now))
        if not addr.creates.allow(now):
            raise Refusal("creating_too_fast", f"your address created "
                          f"{c.creates_per_minute_per_address} matches in the last minute",
                          retry_after=addr.creates.wait(now))
        state.creates.allow(now)

    # -- chat ---------------------------------------------------------------------

    def allow_chat(self, session_id: str) -> None:
        """One chat line from ``session_id``.

        Raises:
            Refusal: ``chat_rate_limited``.
        """
        state = self._sessions.get(session_id)
        now = self.clock()
        if state is not None and not state.chat.allow(now):
            raise Refusal("chat_rate_limited", f"more than {self.config.chat_rate:g} chat "
                          f"lines per second (bursts of {self.config.chat_burst})",
                          retry_after=state.chat.wait(now))
