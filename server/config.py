"""Server configuration: each option declared once, as a field of :class:`ServerConfig`.

A field's declaration (:func:`option`) holds its default, its bounds, its help
text and its unit; from it come the ``cardserver`` flag (:func:`add_arguments`,
``--max-frame`` for ``max_frame``), the range checks (:func:`validate`) and the
README's table of limits (:func:`limits_table`, checked by a test). Tests build
a ``ServerConfig`` directly.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path
from typing import Any


def default_db_path() -> Path:
    """The store's default file: ``$XDG_STATE_HOME/cardserver/cardserver.db``
    (``~/.local/state/cardserver/cardserver.db`` when XDG_STATE_HOME is unset or empty)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "cardserver" / "cardserver.db"


@dataclass(frozen=True, slots=True)
class Option:
    """What the command line and the docs know of one field.

    ``gt``/``ge``/``le``: bounds (exclusive lower, inclusive lower, inclusive upper);
    ``choices``: the allowed values (compared lower-cased); ``unit``: shown after
    the default in the README (``"s"`` for seconds); ``shown``: the default as the
    help and README print it, when not the value itself.
    """

    help: str
    gt: float | None = None
    ge: float | None = None
    le: float | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""
    shown: str | None = None


def option(default: Any, help: str, *, factory: Any = None, **spec: Any) -> Any:
    """Declare one ``ServerConfig`` field and its option (see :class:`Option`)."""
    meta = {"option": Option(help, **spec)}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


POSITIVE = {"gt": 0}
NON_NEGATIVE = {"ge": 0}


@dataclass(slots=True)
class ServerConfig:
    """Everything the server can be told. Times are in seconds."""

    host: str | None = option(None, "interface to listen on", shown="all interfaces")
    port: int = option(7000, "TCP port to listen on (0: any free port)", ge=0, le=65535)
    db: Path = option(None, "SQLite store file (under $XDG_STATE_HOME or ~/.local/state)",
                      factory=default_db_path,
                      shown="$XDG_STATE_HOME/cardserver/cardserver.db")
    store_lock: str = option("shared", "shared: `cardserver replay`, `leaderboard` and "
                             "SQLite's own tools (a backup) may read the store while the "
                             "server runs; exclusive: the server keeps the file to itself "
                             "(no file locks per commit, about 4 µs less each; nothing else "
                             "can open it until the server stops)",
                             choices=("shared", "exclusive"))
    journal_log: str = option("on", "on: each write is appended to a redo log beside the "
                              "store (PATH-redo) before it is answered, and SQLite commits "
                              "every --journal-fold seconds (the same durability: a write "
                              "survives the process being killed; other processes reading "
                              "the store see it that much later); off: one SQLite commit "
                              "a write", choices=("on", "off"))
    journal_fold: float = option(0.05, "with --journal-log on: seconds between SQLite's "
                                 "commits of the redo log's writes (what another process "
                                 "reading the running server's store may miss)", unit="s",
                                 **POSITIVE)
    busy_poll: float = option(0.0002, "seconds the server goes on polling its sockets "
                              "after serving them before it sleeps (adapted down to 0 "
                              "when requests come further apart): a request that follows "
                              "soon is served without a wake-up, for at most this much CPU "
                              "time a pass; 0: sleep at once", unit="s", le=0.01,
                              **NON_NEGATIVE)
    tls_cert: Path | None = option(None, "PEM certificate chain: the port then speaks TLS "
                                   "only (with --tls-key)", shown="off (plain TCP)")
    tls_key: Path | None = option(None, "PEM private key of --tls-cert", shown="off")
    cluster: str | None = option(None, "Redis URL (redis://HOST:PORT/DB): run as one node "
                                 "of a cluster (docs/cluster.md)", shown="off (one process, "
                                 "SQLite)")
    node_name: str | None = option(None, "this node's name in the cluster (unique; with "
                                   "--cluster)", shown="the host name and port")
    advertise: str | None = option(None, "HOST:PORT clients are told to reach this node at "
                                   "(welcome.nodes)", shown="the address it listens on")
    metrics_port: int = option(0, "port of the Prometheus metrics and /healthz HTTP "
                               "endpoint (0: off)", ge=0, le=65535)
    redis_persistence: str = option("refuse", "with --cluster, a Redis that does not fsync "
                                    "every write (appendfsync always): refuse to start "
                                    "or warn", choices=("refuse", "warn"))
    node_lease: float = option(5.0, "with --cluster, seconds a silent node keeps its "
                               "matches before another node adopts them", gt=0.5, unit="s")
    log_level: str = option("info", "debug, info, warning or error",
                            choices=("debug", "info", "warning", "error"))
    max_connections: int = option(
        1000, "connections served at once; more get too_many_connections", **POSITIVE)
    max_frame: int = option(65536, "largest msgpack body accepted, in bytes", **POSITIVE)
    rate: float = option(1000.0, "requests per second allowed per connection (token bucket "
                         "refill)", **POSITIVE, unit="/s")
    burst: int = option(500, "token bucket size: requests allowed at once", **POSITIVE)
    abuse_limit: int = option(200, "rate_limited errors within --abuse-window before "
                              "disconnecting", **POSITIVE)
    abuse_window: float = option(10.0, "window for --abuse-limit, seconds", **POSITIVE,
                                 unit="s")
    handshake_timeout: float = option(5.0, "seconds a new connection has to send hello",
                                      **POSITIVE, unit="s")
    ping_interval: float = option(15.0, "seconds between server pings", **POSITIVE, unit="s")
    ping_timeout: float = option(15.0, "a peer silent for ping-interval + ping-timeout "
                                 "seconds is dropped", **POSITIVE, unit="s")
    outbox_size: int = option(256, "messages queued per connection before it is a slow "
                              "consumer", **POSITIVE)
    inbox_size: int = option(64, "requests queued per match", **POSITIVE)
    grace: float = option(60.0, "seconds a disconnected seat is kept before forfeit or bot "
                          "takeover", **NON_NEGATIVE, unit="s")
    turn_timer: int = option(120, "default turn timer for new matches, seconds (0: off)",
                             **NON_NEGATIVE, unit="s")
    max_turn_timer: int = option(3600, "largest turn_timer a create may ask for, seconds",
                                 **NON_NEGATIVE, unit="s")
    timeout_forfeit: int = option(3, "a seat that times out this many turns in a row "
                                  "forfeits (0: never)", **NON_NEGATIVE)
    auto_flip_delay: float = option(0.5, "War: seconds before the server flips for an "
                                    "auto-flip seat", **NON_NEGATIVE, unit="s")
    abandon_bot: str = option("greedy", "strategy that takes over an abandoned seat "
                              "(abandon=\"bot\")")
    bot_time_budget: float = option(0.5, "seconds a server bot may think per move",
                                    **POSITIVE, unit="s")
    bot_workers: int = option(2, "server bots thinking at once (worker processes)",
                              **POSITIVE)
    bot_queue: int = option(200, "bot moves waiting for a worker; one more gets the seat's "
                            "default intent at once", **POSITIVE)
    bot_deadline: float = option(2.0, "seconds from a bot's turn to its move, waiting "
                                 "included; later, the seat's default intent is played",
                                 **POSITIVE, unit="s")
    bot_nice: int = option(10, "CPU niceness added to bot worker processes (0: as the "
                           "server)", ge=0, le=19)
    finished_linger: float = option(300.0, "seconds a finished match stays listed",
                                    **NON_NEGATIVE, unit="s")
    session_ttl: float = option(7 * 24 * 3600.0, "seconds an idle session's resume token "
                                "stays valid", **NON_NEGATIVE, unit="s",
                                shown="604800 s (7 days)")
    max_matches: int = option(10000, "unfinished matches held at once (waiting + active; "
                              "finished ones hold no capacity)", **POSITIVE)
    max_waiting_per_session: int = option(
        5, "waiting matches one session may have created at once", **POSITIVE)
    max_active_per_session: int = option(
        20, "unfinished matches one session may sit in at once", **POSITIVE)
    creates_per_minute: int = option(
        30, "matches one session may create (or be paired into) per minute", **POSITIVE,
        unit="/min")
    max_waiting_per_address: int = option(
        20, "waiting matches the sessions of one client address may have at once",
        **POSITIVE)
    max_active_per_address: int = option(
        100, "unfinished matches the sessions of one client address may sit in at once",
        **POSITIVE)
    creates_per_minute_per_address: int = option(
        120, "matches the sessions of one client address may create per minute",
        **POSITIVE, unit="/min")
    waiting_ttl: float = option(900.0, "seconds a waiting match waits for its players "
                                "before it expires (0: never)", **NON_NEGATIVE, unit="s")
    list_limit: int = option(50, "summaries in one `matches` page when the request sets "
                             "no limit (at most 100)", ge=1, le=100)
    outbox_bytes: int = option(4 * 1024 * 1024, "bytes queued per connection before it "
                               "is a slow consumer", **POSITIVE, shown="4194304 (4 MiB)")
    chat_rate: float = option(1.0, "chat lines per second per session (token bucket "
                              "refill)", **POSITIVE, unit="/s")
    chat_burst: int = option(5, "chat lines one session may send at once", **POSITIVE)
    spectator_chat_rate: float = option(
        10.0, "spectators' chat lines per second relayed in one match, all spectators "
        "together (bursts of --chat-burst x 4)", **POSITIVE, unit="/s")
    address_rate: float = option(
        2000.0, "requests per second of one client address, all its connections "
        "together; beyond it they wait (are read later)", **POSITIVE, unit="/s")
    address_burst: int = option(2000, "requests one client address may send at once",
                                **POSITIVE)
    handshakes_per_second: float = option(
        20.0, "hello (new session or resume) per second per client address", **POSITIVE,
        unit="/s")
    handshake_burst: int = option(40, "hellos one client address may send at once",
                                  **POSITIVE)
    max_sessions_per_address: int = option(
        200, "live sessions (with a connection) per client address", **POSITIVE)
    max_watches_per_session: int = option(
        50, "matches one session may watch at once", **POSITIVE)
    session_sweep_interval: float = option(
        600.0, "seconds between deletions of sessions past --session-ttl", **POSITIVE,
        unit="s")
    log_burst: int = option(100, "connection log lines per client address before they are "
                            "aggregated (one summary line per --log-interval)", **POSITIVE)
    log_interval: float = option(10.0, "seconds per connection-log summary line of a noisy "
                                 "address", **POSITIVE, unit="s")
    store_retry: float = option(0.05, "seconds before a bot's move or a timer's change "
                                "that the store refused is tried again (doubling each "
                                "time)", **POSITIVE, unit="s")
    store_retry_max: float = option(5.0, "longest wait between two tries of a change the "
                                    "store refused", **POSITIVE, unit="s")
    shutdown_timeout: float = option(2.0, "seconds given to flush bye messages at shutdown",
                                     **NON_NEGATIVE, unit="s")

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
            "chat_rate": self.chat_rate,
            "chat_burst": self.chat_burst,
        }


def options() -> list[tuple[Field[Any], Option]]:
    """Every option's field and declaration, in declaration order (``--help``'s)."""
    return [(f, f.metadata["option"]) for f in fields(ServerConfig)]


def flag(name: str) -> str:
    """The command-line flag of field ``name`` (``max_frame`` -> ``--max-frame``)."""
    return "--" + name.replace("_", "-")


def _default(f: Field[Any]) -> Any:
    return f.default_factory() if f.default is MISSING else f.default  # type: ignore[misc]


def _kind(f: Field[Any]) -> type:
    return {"int": int, "float": float, "Path": Path, "Path | None": Path}.get(str(f.type), str)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add one flag per option, each with its default in the help."""
    for f, opt in options():
        default = _default(f)
        parser.add_argument(
            flag(f.name), dest=f.name, type=_kind(f), default=default,
            metavar=f.name.split("_")[-1].upper(),
            help=f"{opt.help} [default: {opt.shown or default}]")


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
    """Check every option against its declared bounds.

    Raises:
        ValueError: naming the first bad option.
    """
    for f, opt in options():
        value = getattr(config, f.name)
        name = flag(f.name)
        if opt.choices and str(value).lower() not in opt.choices:
            raise ValueError(f"{name} must be {', '.join(opt.choices[:-1])} or "
                             f"{opt.choices[-1]}")
        if opt.gt is not None and not value > opt.gt:
            raise ValueError(f"{name} must be > {opt.gt:g}")
        if opt.ge is not None and opt.le is not None and not opt.ge <= value <= opt.le:
            raise ValueError(f"{name} must be in {opt.ge:g}..{opt.le:g}")
        if opt.ge is not None and not value >= opt.ge:
            raise ValueError(f"{name} must be >= {opt.ge:g}")
    if (config.tls_cert is None) != (config.tls_key is None):
        raise ValueError("--tls-cert and --tls-key go together")
    if config.cluster is None and (config.node_name or config.advertise):
        raise ValueError("--node-name and --advertise need --cluster")
    if config.cluster is not None and not config.cluster.startswith(("redis://", "rediss://")):
        raise ValueError("--cluster must be a redis:// or rediss:// URL")


def _shown(f: Field[Any], opt: Option) -> str:
    if opt.shown is not None:
        return opt.shown
    value = _default(f)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value}{' ' if opt.unit == 's' else ''}{opt.unit}"


def limits_table() -> str:
    """The README's table of options (one row per option), in Markdown."""
    rows = ["| option | default | what it bounds |", "|---|---|---|"]
    for f, opt in options():
        rows.append(f"| `{flag(f.name)}` | {_shown(f, opt)} | {opt.help} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(limits_table())
