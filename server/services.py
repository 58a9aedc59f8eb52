"""What a client connection needs of the server, and nothing more."""

from __future__ import annotations

from dataclasses import dataclass

from server.config import ServerConfig
from server.lobby import Lobby


@dataclass(frozen=True, slots=True)
class Services:
    """The lobby a connection hands its session's requests to, and the limits it
    enforces (a connection never sees the whole server)."""

    lobby: Lobby
    config: ServerConfig
