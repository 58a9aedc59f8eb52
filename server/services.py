"""What a client connection needs of the server, and nothing more."""

from __future__ import annotations

from dataclasses import dataclass

from server.config import ServerConfig
from server.lobby import Lobby
from server.logvolume import LogVolume
from server.poller import Poller
from server.ratelimit import AddressThrottle


@dataclass(frozen=True, slots=True)
class Services:
    """The lobby a connection hands its session's requests to, the limits it
    enforces, the log-volume bound it logs through and the poller it waits in (a
    connection never sees the whole server)."""

    lobby: Lobby
    config: ServerConfig
    log_volume: LogVolume
    throttle: AddressThrottle
    #: where idle plain-socket connections wait (server/poller.py; None: each
    #: reader waits for its own socket)
    poller: Poller | None = None
