"""The one parser of server addresses on every client command line (TUI, bots, SDK).

Accepted forms (``DEFAULT_PORT`` when the port is left out)::

    host            example.org       ->  ("example.org", 7000)
    host:port       127.0.0.1:7001    ->  ("127.0.0.1", 7001)
    [v6]:port       [::1]:7001        ->  ("::1", 7001)
    [v6] or v6      [::1], ::1        ->  ("::1", 7000)
    tls://...       tls://example.org ->  ("example.org", 7000), .tls True

An :class:`Address` unpacks and compares as the pair ``(host, port)``; its
``tls`` attribute records a ``tls://`` scheme: the client then speaks TLS
(:func:`client.session.connector`), as a server started with ``--tls-cert``
expects.

Several addresses of one server (the nodes of a cluster, docs/cluster.md) are
given as a comma-separated list, or repeated on the command line
(:func:`parse_addresses`)::

    127.0.0.1:7000,127.0.0.1:7001   ->  [("127.0.0.1", 7000), ("127.0.0.1", 7001)]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

#: The port a bare host means (the server's default).
DEFAULT_PORT = 7000
#: The only scheme accepted, case-insensitively.
TLS_SCHEME = "tls"

_FORBIDDEN_IN_HOST = frozenset(" \t\r\n/?#@[]")


class _HostPort(NamedTuple):
    host: str
    port: int


class Address(_HostPort):
    """``(host, port)``, plus ``tls``: True when the address said ``tls://``."""

    tls: bool

    def __new__(cls, host: str, port: int, tls: bool = False) -> Address:
        self = super().__new__(cls, host, port)
        self.tls = tls
        return self

    def __getnewargs__(self) -> tuple[str, int, bool]:  # type: ignore[override]
        return (self.host, self.port, self.tls)

    def __repr__(self) -> str:
        return f"Address(host={self.host!r}, port={self.port}, tls={self.tls})"

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'tls://' if self.tls else ''}{host}:{self.port}"


def parse_address(text: str, default_port: int = DEFAULT_PORT) -> Address:
    """Parse a server address (see the module docstring for the forms).

    Args:
        text: what the user typed.
        default_port: the port when ``text`` gives none.

    Raises:
        ValueError: empty, an unknown scheme, an empty or malformed host, or a port
            that is not a number in 1..65535; the message quotes ``text`` and says
            which forms are accepted.
    """
    rest = text.strip()
    if not rest:
        raise ValueError("expected HOST:PORT or HOST (default port "
                         f"{default_port}), got an empty address")
    tls = False
    scheme, sep, after = rest.partition("://")
    if sep:
        if scheme.lower() != TLS_SCHEME:
            raise ValueError(f"unknown scheme {scheme + '://'!r} in {text!r}; "
                             "only tls:// is accepted")
        tls, rest = True, after
    host, port_text = _split(rest)
    if not host or _FORBIDDEN_IN_HOST.intersection(host):
        raise ValueError(f"expected HOST:PORT or HOST (default port {default_port}), "
                         f"got {text!r}")
    port = default_port if port_text is None else _port(port_text)
    return Address(host, port, tls)


def parse_addresses(texts: str | Iterable[str], default_port: int = DEFAULT_PORT,
                    ) -> list[Address]:
    """Parse one or more server addresses: each text may itself be a comma-separated
    list. Repeats are dropped (the first one keeps its place).

    Args:
        texts: ``"a:7000,b:7001"``, or several such texts (repeated arguments).
        default_port: the port of an address that gives none.

    Raises:
        ValueError: no address at all, or one malformed (as :func:`parse_address`
            says, naming it).
    """
    if isinstance(texts, str):
        texts = [texts]
    found: list[Address] = []
    for text in texts:
        for part in text.split(","):
            address = parse_address(part, default_port)
            if address not in found:
                found.append(address)
    if not found:
        raise ValueError("expected at least one HOST:PORT")
    return found


def _split(rest: str) -> tuple[str, str | None]:
    """(host, port text or None) of an address without its scheme."""
    if rest.startswith("["):
        host, close, after = rest[1:].partition("]")
        if not close or (after and not after.startswith(":")):
            return "", None  # malformed: refused by the caller
        return host, after[1:] if after else None
    if rest.count(":") == 1:
        host, _, port = rest.partition(":")
        return host, port
    return rest, None  # a bare host, or a bare IPv6 address (two colons or more)


def _port(text: str) -> int:
    if not text.isdigit():
        raise ValueError(f"the port must be a number, got {text!r}")
    port = int(text)
    if not 0 < port < 65536:
        raise ValueError(f"the port must be 1..65535, got {port}")
    return port
