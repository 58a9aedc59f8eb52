"""A real ``redis-server`` for the cluster tests, on a free loopback port.

Started with the setting the cluster requires (``appendonly yes``,
``appendfsync always``) in its own directory, so it can be killed and started
again on the same data (:meth:`RedisServer.restart`).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.server.helpers import free_port

#: set by .ci/run: a missing redis-server fails the cluster tests instead of skipping them
REQUIRE_ENV = "CARDSERVER_REQUIRE_REDIS"


def redis_binary() -> str:
    """The path of ``redis-server``; skips the test (fails it under CI) without one."""
    found = shutil.which("redis-server")
    if found is None:
        if os.environ.get(REQUIRE_ENV):
            pytest.fail("redis-server is not installed (.ci/run installs it)")
        pytest.skip("redis-server is not installed")
    return found


def command_calls(port: int) -> dict[str, int]:
    """Calls per command (``INFO commandstats``: ``get``, ``evalsha``, ...) of the
    redis-server on 127.0.0.1:``port`` since it started or its last ``CONFIG
    RESETSTAT``; the INFO asking for them counts once it has run."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"INFO commandstats\r\n")
        data = b""
        while b"\r\n" not in data:
            data += s.recv(65536)
        head, _, body = data.partition(b"\r\n")
        size = int(head[1:])
        while len(body) < size:
            body += s.recv(65536)
    calls: dict[str, int] = {}
    for line in body[:size].decode(errors="replace").splitlines():
        if line.startswith("cmdstat_"):
            name, _, rest = line[len("cmdstat_"):].partition(":")
            fields = dict(f.split("=", 1) for f in rest.split(","))
            calls[name] = int(fields["calls"])
    return calls


class RedisServer:
    """One redis-server process; ``url`` is its ``redis://`` URL."""

    def __init__(self, directory: Path, *, fsync: str = "always") -> None:
        self.directory = directory
        self.port = free_port()
        self.fsync = fsync
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start it and wait until it answers PING (5 s at most)."""
        self.process = subprocess.Popen(
            [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(self.directory), "--appendonly", "yes",
             "--appendfsync", self.fsync, "--save", "", "--protected-mode", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def kill(self) -> None:
        """SIGKILL it (its AOF holds every acknowledged write)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def restart(self) -> None:
        """Kill it and start it again on the same port and data."""
        self.kill()
        self.start()

    def stop(self) -> None:
        self.kill()
