"""The server's Prometheus metrics: what each point of the server counts, in one place.

Counters and histograms are per process (one process is one node): they are
created once here, in no registry of prometheus-client's own, and every running
server collects them into its own :class:`~prometheus_client.CollectorRegistry`
(:func:`registry_for`) together with what it reads from the server at scrape
time (connections, matches by game and status). ``--metrics-port`` serves that
registry over HTTP (:mod:`server.metrics_http`).

The rest of the server calls the functions below, one line at each point. On
the path of an intent they cost a few hundred nanoseconds each: the request and
accepted-intent counters and the two latency histograms are kept by the server's
trio thread without prometheus-client's locks (:class:`HotCounter`,
:class:`HotHistogram`), every other labelled child is bound once (a dict lookup
picks it, never ``labels()`` per call), and nothing here allocates.
``scripts/bench_metrics.py`` measures the sum per intent.

Names (docs/cluster.md, "Metrics reference"):

=====================================  =========  ==================================
``cardserver_connections``             gauge      open client connections
``cardserver_sessions``                gauge      sessions the server knows
``cardserver_matches{game,status}``    gauge      matches held (waiting/active/finished)
``cardserver_requests_total{type}``    counter    requests handed to the lobby
``cardserver_errors_total{code}``      counter    ``error`` messages sent
``cardserver_byes_total{reason}``      counter    connections closed with ``bye``
``cardserver_intents_accepted_total``  counter    by ``game``
``cardserver_intents_refused_total``   counter    by ``game`` and ``code``
``cardserver_intent_seconds``          histogram  an intent's handling to its replies
                                                  handed to the connections
``cardserver_commit_seconds``          histogram  one commit (a group's transaction)
``cardserver_bot_moves_total{how}``    counter    ``thought`` or ``default``
``cardserver_bot_think_seconds``       histogram  a bot's turn offered to its choice
``cardserver_outbox_dropped_bytes``    counter    bytes a slow consumer never got
``cardserver_redis_round_trips_total`` counter    by ``command`` (``pipeline``: one batch)
``cardserver_redis_seconds``           histogram  one round trip
``cardserver_redis_errors_total``      counter    round trips that failed
``cardserver_relayed_total{direction}`` counter   messages relayed between nodes
``cardserver_adoptions_total``         counter    matches this node adopted
``cardserver_busy_poll_seconds_total`` counter    time the poller spent polling
``cardserver_busy_poll_caught_total``  counter    passes a poll caught (no wake-up)
=====================================  =========  ==================================
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any, Protocol

import trio
from prometheus_client import (
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Histogram,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from engine.registry import game_names
from protocol.events import REQUEST_TYPES, Error
from server.match.commands import PlayIntent

perf_counter = time.perf_counter

#: Latency buckets (seconds): a loopback round trip is ~100 us, a commit a few ms.
FAST_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
#: A bot thinks up to --bot-deadline (2 s by default).
BOT_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0)

ERRORS = Counter("cardserver_errors", "error messages sent to clients, by code", ["code"],
                 registry=None)
BYES = Counter("cardserver_byes", "connections the server closed with bye, by reason",
               ["reason"], registry=None)
INTENTS_REFUSED = Counter("cardserver_intents_refused", "intents refused, by game and "
                          "error code", ["game", "code"], registry=None)


class HotHistogram(Collector):
    """A histogram for the path of every intent: ``observe`` is a ``bisect`` and two
    additions, without prometheus-client's per-call locks (0.5 µs each), so it must
    be called from the server's trio thread only; prometheus-client renders it
    (:class:`~prometheus_client.core.HistogramMetricFamily`) when scraped."""

    def __init__(self, name: str, documentation: str, buckets: tuple[float, ...]) -> None:
        self.name = name
        self.documentation = documentation
        self.bounds = list(buckets)
        #: counts[i]: observations in (bounds[i-1], bounds[i]]; the last one: above all
        self.counts = [0] * (len(buckets) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        """Count one observation of ``value`` (seconds)."""
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value

    def collect(self) -> Iterator[Metric]:
        cumulative, total = [], 0
        for bound, count in zip([*map(floatToGoString, self.bounds), "+Inf"], self.counts,
                                strict=True):
            total += count
            cumulative.append((bound, total))
        yield HistogramMetricFamily(self.name, self.documentation, buckets=cumulative,
                                    sum_value=self.sum)


class HotCounter(Collector):
    """A counter with one label for the path of every intent: ``inc`` is a dict
    addition, without prometheus-client's per-call lock (0.4 µs a call), so it must
    be called from the server's trio thread only; rendered as prometheus-client's
    labelled :class:`~prometheus_client.Counter` is (``NAME_total`` and
    ``NAME_created`` per label value) when scraped."""

    def __init__(self, name: str, documentation: str, label: str,
                 values: list[str]) -> None:
        self.name = name
        self.documentation = documentation
        self.label = label
        #: label value -> count (the values given are exported from the start, at 0)
        self.counts = dict.fromkeys(values, 0)
        now = time.time()
        #: label value -> when it was first counted (the ``_created`` sample)
        self.created = dict.fromkeys(values, now)

    def inc(self, value: str) -> None:
        """Count one for the label ``value``."""
        counts = self.counts
        if value in counts:
            counts[value] += 1
        else:
            self.created[value] = time.time()
            counts[value] = 1

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=[self.label])
        created = self.created
        for value, count in list(self.counts.items()):
            family.add_metric([value], count, created=created.get(value))
        yield family


REQUESTS = HotCounter("cardserver_requests", "requests handed to the lobby, by type", "type",
                      sorted(REQUEST_TYPES))
INTENTS_ACCEPTED = HotCounter("cardserver_intents_accepted", "intents accepted, by game",
                              "game", game_names())
INTENT_SECONDS = HotHistogram("cardserver_intent_seconds", "from an intent (accepted or "
                              "refused) reaching its match's core to its reply and "
                              "snapshots handed to the connections, commit included",
                              FAST_BUCKETS)
COMMIT_SECONDS = HotHistogram("cardserver_commit_seconds", "one commit of journal rows "
                              "(a group commit's transaction, or one match's)",
                              FAST_BUCKETS)
BOT_MOVES = Counter("cardserver_bot_moves", "server bot moves: thought (the strategy "
                    "chose in time) or default (the seat's default intent)", ["how"],
                    registry=None)
BOT_THINK_SECONDS = Histogram("cardserver_bot_think_seconds", "from a bot's turn handed "
                              "to the worker pool to its choice (waiting included)",
                              buckets=BOT_BUCKETS, registry=None)
OUTBOX_DROPPED = Counter("cardserver_outbox_dropped_bytes", "bytes queued for a slow "
                         "consumer and dropped when it was disconnected", registry=None)
REDIS_ROUND_TRIPS = Counter("cardserver_redis_round_trips", "round trips to Redis, by "
                            "command (pipeline: one batch of commands)", ["command"],
                            registry=None)
REDIS_SECONDS = Histogram("cardserver_redis_seconds", "one round trip to Redis",
                          buckets=FAST_BUCKETS, registry=None)
REDIS_ERRORS = Counter("cardserver_redis_errors", "round trips to Redis that failed",
                       registry=None)
RELAYED = Counter("cardserver_relayed", "messages relayed between nodes: out (published "
                  "to another node) or in (received from one)", ["direction"],
                  registry=None)
ADOPTIONS = Counter("cardserver_adoptions", "matches of a dead node this node adopted",
                    registry=None)

PROCESS_WIDE = (REQUESTS, ERRORS, BYES, INTENTS_ACCEPTED, INTENTS_REFUSED, INTENT_SECONDS,
                COMMIT_SECONDS, BOT_MOVES, BOT_THINK_SECONDS, OUTBOX_DROPPED,
                REDIS_ROUND_TRIPS, REDIS_SECONDS, REDIS_ERRORS, RELAYED, ADOPTIONS)

# -- children bound once --------------------------------------------------------

_REFUSED: dict[tuple[str, str], Any] = {}
_ERROR: dict[str, Any] = {}
_BYE: dict[str, Any] = {}
_REDIS: dict[str, Any] = {}
_THOUGHT = BOT_MOVES.labels("thought")
_DEFAULT = BOT_MOVES.labels("default")
_RELAYED_IN = RELAYED.labels("in")
_RELAYED_OUT = RELAYED.labels("out")
_observe_intent = INTENT_SECONDS.observe
_observe_commit = COMMIT_SECONDS.observe


def _child(table: dict[Any, Any], metric: Any, *key: str) -> Any:
    """The bound child of ``metric`` for ``key`` (bound the first time it is seen)."""
    k = key if len(key) > 1 else key[0]
    child = table.get(k)
    if child is None:
        child = table[k] = metric.labels(*key)
    return child


# -- the one-line calls ----------------------------------------------------------

#: ``request(kind)``: a request of type ``kind`` is handed to the lobby (the hot
#: counter's own ``inc``, bound: no call of a function of ours around it)
request = REQUESTS.inc


def sent(msg: Any) -> None:
    """``msg`` is being sent to a client: counted if it is an ``error``."""
    if type(msg) is Error:
        _child(_ERROR, ERRORS, msg.code).inc()


def error(code: str) -> None:
    """An ``error`` with ``code`` is sent outside a connection's outbox (handshake)."""
    _child(_ERROR, ERRORS, code).inc()


def bye(reason: str) -> None:
    """A connection is closed with ``bye {reason}``."""
    _child(_BYE, BYES, reason).inc()


def dropped(nbytes: int) -> None:
    """``nbytes`` queued for a slow consumer are dropped."""
    OUTBOX_DROPPED.inc(nbytes)


def handled(game: str, command: Any, fx: Any) -> None:
    """The core has handled ``command``: an intent counts as accepted or refused (a
    refusal is the error the core answered it with, its last message)."""
    if type(command) is not PlayIntent:
        return
    messages = fx.messages
    last = messages[-1][1] if messages else None
    if type(last) is Error:
        _child(_REFUSED, INTENTS_REFUSED, game, last.code).inc()
    else:
        INTENTS_ACCEPTED.inc(game)


def delivered(command: Any, began: float) -> None:
    """The effects of ``command``, handled from ``began`` (``perf_counter``), are handed
    to the connections: an intent's latency."""
    if type(command) is PlayIntent:
        _observe_intent(perf_counter() - began)


def committed(began: float) -> None:
    """A commit that started at ``began`` (``perf_counter``) is done."""
    _observe_commit(perf_counter() - began)


def bot_move(began: float, chosen: bool) -> None:
    """A bot's move offered at ``began`` (trio time, as the pool keeps it) is decided:
    by its strategy (``chosen``) or, too late, the default intent."""
    (_THOUGHT if chosen else _DEFAULT).inc()
    if chosen:
        BOT_THINK_SECONDS.observe(trio.current_time() - began)


def redis_round_trip(command: str, seconds: float, failed: bool = False) -> None:
    """One round trip to Redis (:class:`server.cluster.metered.MeteredRedis` calls it)."""
    _child(_REDIS, REDIS_ROUND_TRIPS, command).inc()
    REDIS_SECONDS.observe(seconds)
    if failed:
        REDIS_ERRORS.inc()


def relayed(outgoing: bool, count: int = 1) -> None:
    """``count`` messages relayed to another node (``outgoing``) or from one."""
    (_RELAYED_OUT if outgoing else _RELAYED_IN).inc(count)


def adopted(count: int = 1) -> None:
    """This node adopted ``count`` matches of a dead node."""
    ADOPTIONS.inc(count)


# -- what is read from a server when scraped --------------------------------------

class Observed(Protocol):
    """What :class:`ServerCollector` reads of a server (:class:`server.app.Server`)."""

    clients: Any
    lobby: Any
    poller: Any


class ServerCollector(Collector):
    """The gauges of one server, read when scraped: connections, sessions and the
    matches it holds by game and status (in cluster mode: the matches it owns)."""

    def __init__(self, server: Observed) -> None:
        self.server = server

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily("cardserver_connections", "open client connections",
                                value=len(self.server.clients))
        yield GaugeMetricFamily("cardserver_sessions", "sessions this server knows",
                                value=len(self.server.lobby.sessions))
        matches = GaugeMetricFamily("cardserver_matches", "matches this server holds, "
                                    "by game and status", labels=["game", "status"])
        counts: dict[tuple[str, str], int] = {
            (g, s): 0 for g in game_names() for s in ("waiting", "active", "finished")}
        for match in list(self.server.lobby.matches.values()):
            key = (match.game, match.status)
            counts[key] = counts.get(key, 0) + 1
        for (game, status), n in sorted(counts.items()):
            matches.add_metric([game, status], n)
        yield matches
        poller = self.server.poller
        if poller is not None:
            yield CounterMetricFamily("cardserver_busy_poll_seconds", "seconds the poller "
                                      "spent polling before sleeping (--busy-poll; other "
                                      "tasks' steps between its polls included)",
                                      value=poller.spin.polled)
            yield CounterMetricFamily("cardserver_busy_poll_caught", "passes whose sockets "
                                      "a poll found ready, without sleeping (--busy-poll)",
                                      value=poller.spin.caught)


def registry_for(server: Observed) -> CollectorRegistry:
    """A registry of everything ``server``'s ``/metrics`` shows: the process-wide
    metrics above, the process's own (CPU seconds, memory, file descriptors) and
    the server's gauges."""
    registry = CollectorRegistry()
    for metric in PROCESS_WIDE:
        registry.register(metric)
    registry.register(PROCESS_COLLECTOR)
    registry.register(PLATFORM_COLLECTOR)
    registry.register(ServerCollector(server))
    return registry
