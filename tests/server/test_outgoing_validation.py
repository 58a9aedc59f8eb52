"""Every message the server writes is validated, snapshots included (the match core's
own are built with ``protocol.events.trusted``, walked in every test): an invalid one
is our bug, logged at ERROR and not sent; an ``ok`` becomes ``internal_error`` so the
request is still answered. Over real TCP."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from protocol.events import Ok, Presence
from server.app import Server
from tests.server.helpers import TestClient


async def test_invalid_outgoing_messages_are_logged_and_not_sent(
    start_server: Callable[..., Awaitable[Server]],
    connect: Callable[..., Awaitable[TestClient]],
    caplog: pytest.LogCaptureFixture,
    allow_error_logs: None,
) -> None:
    server = await start_server()
    alice = await connect(server, "alice")
    created = await alice.expect_ok("create", game="war")
    snap = await alice.snapshot(created["match"])
    session = next(s for s in server.lobby.sessions.values() if s.name == "alice")

    bad_snapshot: dict[str, Any] = {**snap, "seat": 5}
    session.push(bad_snapshot)  # a map: turned into its event, so checked
    session.push({**snap, "secret_deck": ["AS"]})  # a field the protocol does not know
    session.push({"type": "ok", "id": 77, "seat": "zero"})
    session.push(Ok(id=78, match=created["match"]))
    session.push(Presence(match=created["match"], seat=1, name=None, connected=False,
                          grace=None))

    presence = await alice.wait_push(lambda m: m["type"] == "presence")
    assert presence["seat"] == 1
    assert alice.replies[77] == {"type": "error", "id": 77, "code": "internal_error",
                                 "message": "the reply could not be encoded"}
    assert alice.replies[78] == {"type": "ok", "match": created["match"], "id": 78}
    assert not [m for m in alice.seen if m.get("seat") == 5 or "secret_deck" in m]
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any("invalid snapshot" in e and "seat" in e for e in errors), errors
    assert any("secret_deck" in e for e in errors), errors
    assert any("invalid ok" in e for e in errors), errors
    await alice.expect_ok("games")  # the connection is still usable
