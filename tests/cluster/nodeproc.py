"""``cardserver --cluster`` node processes for the cluster tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import trio

from tests.server.helpers import free_port

ROOT = Path(__file__).resolve().parents[2]


class NodeProcess:
    """One node: ``name``, ``port``, its log file and its process."""

    def __init__(self, redis_url: str, name: str, directory: Path, *extra: str) -> None:
        self.redis_url = redis_url
        self.name = name
        self.port = free_port()
        self.directory = directory
        self.log = directory / f"{name}.log"
        self.extra = extra
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def args(self) -> list[str]:
        return [sys.executable, "-m", "server.cli", "--host", "127.0.0.1", "--port",
                str(self.port), "--db", str(self.directory / f"{self.name}.db"),
                "--cluster", self.redis_url, "--node-name", self.name,
                "--log-level", "debug", *self.extra]

    async def start(self, timeout: float = 15) -> NodeProcess:
        """Start the node and wait until it accepts connections.

        Raises:
            AssertionError: the process exited first (its log is the message).
        """
        self.process = subprocess.Popen(self.args(), cwd=ROOT, stdout=subprocess.DEVNULL,
                                        stderr=open(self.log, "a"))  # noqa: SIM115
        with trio.fail_after(timeout):
            while True:
                try:
                    stream = await trio.open_tcp_stream("127.0.0.1", self.port)
                except OSError:
                    assert self.process.poll() is None, self.log.read_text()
                    await trio.sleep(0.05)
                    continue
                await stream.aclose()
                return self

    def run_to_exit(self, timeout: float = 15) -> subprocess.CompletedProcess[str]:
        """Run the node in the foreground (for start-up failures) and return its result."""
        return subprocess.run(self.args(), cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout, check=False)

    def kill(self) -> None:
        """SIGKILL the node."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def terminate(self, timeout: float = 10) -> int:
        """SIGTERM the node and wait; its exit status."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.terminate()
        return self.process.wait(timeout)
