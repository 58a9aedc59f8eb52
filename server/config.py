"""Server configuration: one dataclass holding every limit and timeout, and its CLI.

Every field of :class:`ServerConfig` is a ``cardserver`` option with a default
(``cardserver --help`` lists them). Tests build a ``ServerConfig`` directly.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field, fields
from pathlib import Path


def default_db_path() -> Path:
    """The store's default file: ``$XDG_STATE_HOME/cardserver/cardserver.db``
    (``~/.local/state/cardserver/cardserver.db`` when XDG_STATE_HOME is unset or empty)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "cardserver" / "cardserver.db"


@dataclass(slots=True)
class ServerConfig:
    """Everything the server can be told. Times are in seconds."""

    host: str | None = None
    port: int = 7000
    db: Path = field(default_factory=default_db_path)
    log_level: str = "info"
    max_connections: int = 1000
    max_frame: int = 65536
    rate: float = 1000.0
    burst: int = 500
    abuse_limit: int = 200
    abuse_window: float = 10.0
    handshake_timeout: float = 5.0
    ping_interval: float = 15.0
    ping_timeout: float = 15.0
    outbox_size: int = 256
    inbox_size: int = 64
    grace: float = 60.0
    turn_timer: int = 120
    max_turn_timer: int = 3600
    timeout_forfeit: int = 3
    auto_flip_delay: float = 0.5
    abandon_bot: str = "greedy"
    bot_time_budget: float = 0.5
    bot_threads: int = 2
    finished_linger: float = 300.0
    session_ttl: float = 7 * 24 * 3600.0
    max_matches: int = 10000
    shutdown_timeout: float = 2.0

    def limits(self) -> dict[str, float | int]:
        """The limits announced in ``welcome.limits``."""
        return {
            "max_frame": self.max_frame,
            "rate": self.rate,
            "burst": self.burst,
            "ping_interval": self.ping_interval,
            "ping_timeout": self.ping_timeout,
            "grace": self.grace,
            "handshake_timeout": self.handshake_timeout,
        }


#: name -> (type, help). The order is the order of ``--help``.
_OPTIONS: dict[str, tuple[type, str]] = {
    "host": (str, "interface to listen on"),
    "port": (int, "TCP port to listen on (0: any free port)"),
    "db": (Path, "SQLite store file (under $XDG_STATE_HOME or ~/.local/state)"),
    "log_level": (str, "debug, info, warning or error"),
    "max_connections": (int, "connections served at once; more get too_many_connections"),
    "max_frame": (int, "largest msgpack body accepted, in bytes"),
    "rate": (float, "requests per second allowed per connection (token bucket refill)"),
    "burst": (int, "token bucket size: requests allowed at once"),
    "abuse_limit": (int, "rate_limited errors within --abuse-window before disconnecting"),
    "abuse_window": (float, "window for --abuse-limit, seconds"),
    "handshake_timeout": (float, "seconds a new connection has to send hello"),
    "ping_interval": (float, "seconds between server pings"),
    "ping_timeout": (float, "a peer silent for ping-interval + ping-timeout seconds is dropped"),
    "outbox_size": (int, "messages queued per connection before it is a slow consumer"),
    "inbox_size": (int, "requests queued per match"),
    "grace": (float, "seconds a disconnected seat is kept before forfeit or bot takeover"),
    "turn_timer": (int, "default turn timer for new matches, seconds (0: off)"),
    "max_turn_timer": (int, "largest turn_timer a create may ask for, seconds"),
    "timeout_forfeit": (int, "a seat that times out this many turns in a row forfeits (0: never)"),
    "auto_flip_delay": (float, "War: seconds before the server flips for an auto-flip seat"),
    "abandon_bot": (str, "strategy that takes over an abandoned seat (abandon=\"bot\")"),
    "bot_time_budget": (float, "seconds a server bot may think per move"),
    "bot_threads": (int, "server bots thinking at once (worker threads)"),
    "finished_linger": (float, "seconds a finished match stays listed"),
    "session_ttl": (float, "seconds an idle session's resume token stays valid"),
    "max_matches": (int, "matches held at once (waiting + active + lingering)"),
    "shutdown_timeout": (float, "seconds given to flush bye messages at shutdown"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add one ``--option`` per config field, each with its default in the help."""
    defaults = ServerConfig()
    for name, (kind, text) in _OPTIONS.items():
        default = getattr(defaults, name)
        shown = "all interfaces" if name == "host" and default is None else default
        parser.add_argument(
            "--" + name.replace("_", "-"),
            dest=name,
            type=kind,
            default=default,
            metavar=name.split("_")[-1].upper(),
            help=f"{text} [default: {shown}]",
        )


def from_namespace(ns: argparse.Namespace) -> ServerConfig:
    """Build a config from parsed arguments.

    Raises:
        ValueError: a value out of range (the message names the option).
    """
    values = {f.name: getattr(ns, f.name) for f in fields(ServerConfig) if hasattr(ns, f.name)}
    config = ServerConfig(**values)
    validate(config)
    return config


def validate(config: ServerConfig) -> None:
    """Check ranges that would make the server misbehave.

    Raises:
        ValueError: naming the first bad option.
    """
    positive = ["max_connections", "max_frame", "rate", "burst", "abuse_limit", "abuse_window",
                "handshake_timeout", "ping_interval", "ping_timeout", "outbox_size",
                "inbox_size", "bot_threads", "max_matches", "bot_time_budget"]
    for name in positive:
        if getattr(config, name) <= 0:
            raise ValueError(f"--{name.replace('_', '-')} must be > 0")
    non_negative = ["grace", "turn_timer", "max_turn_timer", "timeout_forfeit",
                    "auto_flip_delay", "finished_linger", "session_ttl", "shutdown_timeout"]
    for name in non_negative:
        if getattr(config, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 0")
    if not 0 <= config.port < 65536:
        raise ValueError("--port must be in 0..65535")
    if config.log_level.lower() not in ("debug", "info", "warning", "error"):
        raise ValueError("--log-level must be debug, info, warning or error")
