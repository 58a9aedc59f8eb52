"""The reader's system calls over a real TCP connection: after a read that emptied
the socket it waits for readiness before it reads again, so a client that sends
one request and waits for its answer costs one ``read`` per request, not a
second one that fails with EAGAIN."""

from __future__ import annotations

import os
from typing import Any

import pytest

import server.connection as connection

REQUESTS = 30


async def test_a_request_at_a_time_costs_no_failed_read(
        start_server: Any, connect: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await start_server()
    client = await connect(server, "alice")
    await client.expect_ok("games")
    reads = {"data": 0, "eagain": 0}
    real_read = os.read

    def counting_read(fd: int, size: int) -> bytes:
        try:
            data = real_read(fd, size)
        except BlockingIOError:
            reads["eagain"] += 1
            raise
        reads["data"] += 1
        return data

    monkeypatch.setattr(connection.os, "read", counting_read)
    for _ in range(REQUESTS):
        await client.expect_ok("games")
    assert reads["data"] >= REQUESTS
    # a wake-up without bytes (rare, spurious) may still cost one: never one per request
    assert reads["eagain"] <= 2, reads
