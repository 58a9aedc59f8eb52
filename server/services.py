"""What a client connection needs of the server, and nothing more."""

from __future__ import annotations

from dataclasses import dataclass

from server.config import ServerConfig
from server.lobby import Lobby
from server.logvolume import LogVolume
from server.ratelimit import AddressThrottle


@dataclass(frozen=True, slots=True)
class Services:
    """The lobby a connection hands its session's requests to, the limits it
    enforces and the log-volume bound it logs through (a connection never sees the
    whole server)."""

    lobby: Lobby
    config: ServerConfig
    log_volume: LogVolume
    throttle: AddressThrottle
