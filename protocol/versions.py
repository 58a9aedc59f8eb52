"""Protocol version negotiation: the server picks the highest version both sides speak."""

from __future__ import annotations

from collections.abc import Iterable

from protocol.errors import ProtocolError
from protocol.version import PROTOCOL_VERSIONS


def negotiate(
    client_versions: Iterable[int], server_versions: Iterable[int] = PROTOCOL_VERSIONS
) -> int:
    """The highest version in both lists.

    Args:
        client_versions: the versions from the client's ``hello.protocol``.
        server_versions: the versions this server speaks (default: all we speak).

    Raises:
        ProtocolError: ``unsupported_version`` (fatal), carrying ``versions``
            (the server's list, ascending) for the error message.
    """
    ours = sorted(set(server_versions))
    shared = set(ours).intersection(client_versions)
    if not shared:
        raise ProtocolError(
            "unsupported_version",
            f"no shared protocol version; this server speaks {ours}",
            "protocol",
            versions=ours,
        )
    return max(shared)
