"""Several addresses of one server, and which to try next (docs/cluster.md, "Clients").

A :class:`Failover` is the stream factory of a :class:`client.session.Session`
that was given more than one address (``cardclient connect a:7000,b:7001``,
``cardbot connect a:7000 b:7001``, the SDK's ``addresses``). Each call opens a
TCP (or TLS) connection to the first address of its *ring* that answers,
starting after the one it connected to last; so the first connection tries
the addresses in the order given, and after a lost connection the session
resumes on the next live one, the address it lost coming last (it may be back
by then). The ring is every node the latest ``welcome`` listed
(``welcome.nodes``: the cluster's live nodes, the answering one first), then
the given addresses it did not list.

A resume token refused (``bad_token``) by a node of the session's cluster (a
listed node) is refused by all of them: the cluster shares its sessions. An
address that is no listed node (a server of its own, say a standby) may simply
not know the session, so the session tries the others first: such an address
is left out of the ring until a ``welcome`` comes (:meth:`Failover.token_refused`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence

import trio

from client.address import Address, parse_address

log = logging.getLogger(__name__)

#: Opens a stream to one address.
Opener = Callable[[Address], Awaitable[trio.abc.Stream]]

#: Seconds one address may take to accept a connection before the next is tried.
CONNECT_TIMEOUT = 5.0


class NoAddressAnswered(OSError):
    """No address of the ring accepted a connection; ``failures`` says why for each
    (the last one's exception is the ``__cause__``)."""

    def __init__(self, failures: list[tuple[Address, BaseException]]) -> None:
        words = "; ".join(f"{a}: {e or type(e).__name__}" for a, e in failures)
        super().__init__(f"no address answered ({words})")
        self.failures = failures


class Failover:
    """A stream factory over several addresses of one server (see the module text).

    Args:
        addresses: the given addresses, in the order to try them first.
        open_stream: opens a stream to one address (TCP or TLS as it says).
        connect_timeout: seconds one address may take before the next is tried.

    Raises:
        ValueError: no address.
    """

    def __init__(self, addresses: Sequence[Address], open_stream: Opener, *,
                 connect_timeout: float = CONNECT_TIMEOUT) -> None:
        if not addresses:
            raise ValueError("a failover needs at least one address")
        self.given = tuple(addresses)
        self.open_stream = open_stream
        self.connect_timeout = connect_timeout
        #: the nodes the latest welcome listed (the session's cluster)
        self.nodes: tuple[Address, ...] = ()
        #: the address of the latest stream handed out (None before the first)
        self.current: Address | None = None
        #: addresses (no listed node) that refused the session's token since the
        #: latest welcome: left out of the ring
        self.refused: set[Address] = set()

    def ring(self) -> list[Address]:
        """Every address that may be tried: the listed nodes, then the given ones."""
        return [*self.nodes, *(a for a in self.given if a not in self.nodes)]

    def candidates(self) -> list[Address]:
        """The order of the next call: the ring (less the refusing addresses) starting
        after :attr:`current`, which comes last."""
        ring = [a for a in self.ring() if a not in self.refused]
        if self.current in ring:
            at = ring.index(self.current) + 1
            ring = ring[at:] + ring[:at]
        return ring

    async def __call__(self) -> trio.abc.Stream:
        """A stream to the first candidate that accepts one.

        Raises:
            NoAddressAnswered: none did (each within ``connect_timeout``); with a
                single address, its own OSError (as a one-address client has).
        """
        failures: list[tuple[Address, BaseException]] = []
        candidates = self.candidates()
        for address in candidates:
            try:
                with trio.fail_after(self.connect_timeout):
                    stream = await self.open_stream(address)
            except (OSError, trio.TooSlowError) as exc:
                if len(candidates) == 1:
                    raise
                log.info("cannot connect to %s: %r", address, exc)
                failures.append((address, exc))
                continue
            self.current = address
            return stream
        if not failures:
            raise NoAddressAnswered([])
        raise NoAddressAnswered(failures) from failures[-1][1]

    def welcomed(self, nodes: Iterable[str] | None) -> None:
        """The handshake at :attr:`current` succeeded; ``nodes`` is its ``welcome.nodes``
        (None on a single server). Unparseable entries are skipped; each node is
        reached with TLS when the address that listed it was."""
        tls = self.current.tls if self.current is not None else False
        found: list[Address] = []
        for text in nodes or ():
            try:
                address = parse_address(text)
            except ValueError:
                log.warning("ignoring a node address the server listed: %r", text)
                continue
            address = Address(address.host, address.port, tls or address.tls)
            if address not in found:
                found.append(address)
        self.nodes = tuple(found)
        self.refused.clear()

    def token_refused(self) -> bool:
        """:attr:`current` refused the session's resume token (``bad_token``). True
        when another address may still know it (``current`` is no listed node and
        others remain): ``current`` is then left out until the next welcome."""
        current = self.current
        if current is None or current in self.nodes:
            return False
        self.refused.add(current)
        return bool(self.candidates())
