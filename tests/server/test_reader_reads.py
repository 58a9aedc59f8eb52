"""The reader's system calls over a real TCP connection: after a read that emptied
the socket it waits for readiness before it reads again, so a client that sends
one request and waits for its answer costs one ``read`` per request, not a
second one that fails with EAGAIN; and a request read after such a wait costs no
checkpoint of the reader (the wait let every other task run), where requests
already buffered make one every ``READER_SLICE``."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
import trio

import server.connection as connection
from protocol.codec import pack
from protocol.framing import encode_frame

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


def count_reader_checkpoints(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the checkpoints the reader loop itself makes (``[n]``)."""
    made = [0]
    real_checkpoint = connection.trio.lowlevel.checkpoint

    async def counting_checkpoint() -> None:
        if sys._getframe(1).f_code.co_name == "_reader":
            made[0] += 1
        await real_checkpoint()

    monkeypatch.setattr(connection.trio.lowlevel, "checkpoint", counting_checkpoint)
    return made


async def test_a_reader_that_waited_for_its_request_makes_no_checkpoint(
        start_server: Any, connect: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await start_server()
    client = await connect(server, "alice")
    made = count_reader_checkpoints(monkeypatch)
    for _ in range(REQUESTS):
        await trio.sleep(0.01)   # longer than a slice between requests
        await client.expect_ok("games")
    assert made == [0]   # its wait for the bytes let every other task run


async def test_a_pipelining_reader_lets_other_tasks_run_every_slice(
        start_server: Any, connect: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await start_server(rate=1e9, burst=10**9)
    client = await connect(server, "alice")
    made = count_reader_checkpoints(monkeypatch)
    monkeypatch.setattr(connection, "READER_SLICE", 0.0)   # every request a slice
    n = 400
    frames = b"".join(encode_frame(pack({"type": "games", "id": i})) for i in range(n))
    await client.stream.send_all(frames)   # in one go: most are read without a wait
    answered = 0
    with trio.fail_after(20):
        while answered < n:
            answered += (await client.next_message())["type"] == "ok"
    assert made[0] >= n // 2, made   # it let the others run, not one run over the buffer
