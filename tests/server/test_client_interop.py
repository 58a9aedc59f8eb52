"""The project's own trio client (client/session.py) against the server: a War game
over TCP, with a dropped connection in the middle that the client resumes by itself."""

from __future__ import annotations

import trio

from client.session import open_session


async def test_client_session_plays_and_resumes(start_server) -> None:
    server = await start_server(grace=30.0)
    async with open_session("127.0.0.1", server.port, name="alice", reconnect=True) as alice, \
            open_session("127.0.0.1", server.port, name="bob") as bob:
        mid = (await alice.request({"type": "create", "game": "war",
                                    "options": {"cap": 40}}))["match"]
        await bob.request({"type": "join", "match": mid})
        await bob.request({"type": "auto_flip", "match": mid, "on": True})
        dropped = False
        with trio.fail_after(20):
            while True:
                push = await alice.next_push()
                if push["type"] != "snapshot":
                    continue
                if push["status"] == "finished":
                    break
                if push["seq"] >= 10 and not dropped:
                    dropped = True  # cut alice's connection; she must come back alone
                    [conn] = [c for c in server.clients if c.session
                              and c.session.name == "alice"]
                    await conn.stream.aclose()
                    continue
                if push["legal"]:
                    try:
                        await alice.request({"type": "intent", "match": mid,
                                             "seq": push["seq"], "intent": push["legal"][0]})
                    except Exception as exc:  # stale after a resume, or the drop itself
                        assert type(exc).__name__ in ("ServerError", "ConnectionLost"), exc
        assert dropped and push["result"]["reason"]
        rows = server.store.journal(mid)
        assert {r.by for r in rows if r.seat == 1} == {"auto"}
        assert {r.by for r in rows if r.seat == 0} == {"seat"}
