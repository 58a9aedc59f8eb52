"""``--metrics-port``: the Prometheus metrics and the health check over HTTP.

Two resources, both ``GET`` only, each answered and the connection closed
(HTTP/1.0 style, which is what Prometheus, load balancers' health checks and
``curl`` need; no keep-alive, no chunking):

``/metrics``
    the server's registry (:func:`server.metrics.registry_for`) in the text
    exposition format, rendered by prometheus-client's ``generate_latest``;
``/healthz``
    ``200`` and ``{"status": "ok", "node", "matches", "connections",
    "redis": "ok" | "down" | null}`` while the server serves; ``503`` and
    ``"status": "shutting_down"`` once it is shutting down, or
    ``"status": "redis_down"`` when, in cluster mode, Redis does not answer a
    ``PING`` within :data:`REDIS_TIMEOUT` seconds (a load balancer then sends new
    clients elsewhere).

Anything else is ``404``, another method ``405``, a request that is not one
line of HTTP within :data:`MAX_REQUEST` bytes and :data:`READ_TIMEOUT` seconds
``400`` (or dropped). The responder is a trio task of the server: a
misbehaving scraper costs one small task, never the game connections.

A tiny responder rather than a web framework: two fixed resources, and the
HTTP servers that run under trio (hypercorn, for one) would bring an ASGI stack
for what is a request line and a body.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol

import trio
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from server.metrics import registry_for

log = logging.getLogger("cardserver.metrics")

#: Largest request head read (request line and headers), bytes.
MAX_REQUEST = 8192
#: Seconds a scraper has to send its request.
READ_TIMEOUT = 5.0
#: Seconds /healthz waits for Redis's PING in cluster mode.
REDIS_TIMEOUT = 1.0


class Served(Protocol):
    """What the endpoint reads of a server (:class:`server.app.Server`)."""

    clients: Any
    lobby: Any
    cluster: Any

    @property
    def stopping(self) -> bool: ...


class MetricsEndpoint:
    """The HTTP endpoint of one server."""

    def __init__(self, server: Served, registry: CollectorRegistry | None = None) -> None:
        self.server = server
        self.registry = registry if registry is not None else registry_for(server)
        #: the bound port (``--metrics-port``), once :meth:`run` listens
        self.port: int | None = None

    @staticmethod
    async def listen(port: int, host: str | None = None) -> list[trio.SocketListener]:
        """Bind ``host:port`` (the server does it with its own port, before serving).

        Raises:
            OSError: the port cannot be bound.
        """
        return await trio.open_tcp_listeners(port, host=host)

    async def run(self, listeners: list[trio.SocketListener], *,
                  task_status: trio.TaskStatus[MetricsEndpoint] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        """Answer on ``listeners`` (from :meth:`listen`) until cancelled."""
        self.port = listeners[0].socket.getsockname()[1]
        log.info("metrics and /healthz on port %d", self.port)
        task_status.started(self)
        await trio.serve_listeners(self._answer, listeners)

    async def _answer(self, stream: trio.SocketStream) -> None:
        """One request, one response; never raises (a broken peer is only dropped)."""
        try:
            with trio.move_on_after(READ_TIMEOUT):
                status, ctype, body = await self.respond(await _read_head(stream))
                await stream.send_all(_response(status, ctype, body))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        except Exception:
            log.exception("metrics endpoint failed")
        finally:
            with trio.move_on_after(1):
                await stream.aclose()

    async def respond(self, head: bytes | None) -> tuple[int, str, bytes]:
        """(status, content type, body) for a request head (None: malformed)."""
        if head is None:
            return 400, "text/plain", b"bad request\n"
        parts = head.split(b"\r\n", 1)[0].split()
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/"):
            return 400, "text/plain", b"bad request\n"
        method, target = parts[0], parts[1].split(b"?", 1)[0]
        if target not in (b"/metrics", b"/healthz"):
            return 404, "text/plain", b"not found: try /metrics or /healthz\n"
        if method != b"GET":
            return 405, "text/plain", b"only GET\n"
        if target == b"/metrics":
            return 200, CONTENT_TYPE_LATEST, generate_latest(self.registry)
        status, health = await self.health()
        return status, "application/json", json.dumps(health).encode() + b"\n"

    async def health(self) -> tuple[int, dict[str, Any]]:
        """The /healthz answer: (HTTP status, body)."""
        server = self.server
        cluster = server.cluster
        redis = None if cluster is None else await _redis_state(cluster.redis)
        status = ("shutting_down" if server.stopping else
                  "redis_down" if redis == "down" else "ok")
        return (200 if status == "ok" else 503), {
            "status": status,
            "node": None if cluster is None else cluster.name,
            "matches": len(server.lobby.matches),
            "connections": len(server.clients),
            "redis": redis,
        }


async def _redis_state(redis: Any) -> str:
    """``"ok"`` when Redis answers PING within :data:`REDIS_TIMEOUT`, else ``"down"``."""
    with trio.move_on_after(REDIS_TIMEOUT):
        try:
            await redis.ping()
            return "ok"
        except Exception:
            return "down"
    return "down"


async def _read_head(stream: trio.abc.ReceiveStream) -> bytes | None:
    """The request head up to its blank line; None past :data:`MAX_REQUEST` bytes or
    when the peer closes first."""
    data = b""
    while b"\r\n\r\n" not in data and b"\n\n" not in data:
        if len(data) > MAX_REQUEST:
            return None
        chunk = await stream.receive_some(4096)
        if not chunk:
            return data if data.count(b"\n") >= 1 else None
        data += chunk
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
            503: "Service Unavailable"}


def _response(status: int, ctype: str, body: bytes) -> bytes:
    head = (f"HTTP/1.0 {status} {_REASONS[status]}\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    return head.encode() + body
