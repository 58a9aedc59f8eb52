"""Bots given one node's address of a two-node cluster: that node is SIGKILLed
mid-match; they resume, with their tokens, on the node welcome.nodes told them of,
which has adopted the match, and play it to its end.

Their first reconnection comes after the adoption. (A resume that reaches the
other node before it has adopted the match is re-attached at the adoption by the
relay's ``adopted`` handling, not yet on main when this was written.)"""

from __future__ import annotations

from pathlib import Path

import trio

from client.bots.sdk import Summary, play
from client.session import Backoff
from tests.cluster.nodeproc import NodeProcess
from tests.cluster.test_metrics import http_get, samples, value
from tests.server.helpers import TestClient, free_port

#: the first reconnection comes after the adoption (lease 1 s, seen within 0.2 s more)
AFTER_ADOPTION = Backoff(initial=2.0, maximum=2.0, jitter=0.0)


async def a_knows(a: NodeProcess, b: NodeProcess) -> None:
    """Until ``a``'s welcome lists ``b`` (a refreshes its node list every lease / 5)."""
    with trio.fail_after(10):
        while True:
            probe = await TestClient.connect(a.port)
            nodes = (await probe.hello("probe"))["nodes"]
            await probe.aclose()
            if b.address in nodes:
                return
            await trio.sleep(0.05)


async def test_bots_resume_on_the_node_that_adopted_their_match(redis_url: str,
                                                                tmp_path: Path) -> None:
    metrics_a = free_port()
    a = await NodeProcess(redis_url, "a", tmp_path, "--node-lease", "1",
                          "--metrics-port", str(metrics_a)).start()
    metrics_b = free_port()
    b = await NodeProcess(redis_url, "b", tmp_path, "--node-lease", "1",
                          "--metrics-port", str(metrics_b)).start()
    await a_knows(a, b)
    summaries = {"one": Summary(), "two": Summary()}
    events: dict[str, list[str]] = {"one": [], "two": []}
    try:
        async def bot(name: str) -> None:
            # only a's address: b is learned from welcome.nodes
            await play(lambda view, legal: legal[0], game="datastructures", name=name,
                       mode="queue", options={"cap": 20}, think=0.05,
                       addresses=[a.address], summary=summaries[name],
                       session_options={"backoff": AFTER_ADOPTION}, on_event=events[name].append)

        with trio.fail_after(40):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(bot, "one")
                nursery.start_soon(bot, "two")
                while True:  # some intents accepted on a, then a dies
                    found = samples((await http_get(metrics_a, "/metrics"))[1])
                    if value(found, "cardserver_intents_accepted_total",
                             game="datastructures") >= 6:
                        break
                    await trio.sleep(0.05)
                a.kill()
        found = samples((await http_get(metrics_b, "/metrics"))[1])
        assert value(found, "cardserver_adoptions_total") == 1
    finally:
        a.kill()
        b.kill()
    for name, summary in summaries.items():
        assert len(summary.results) == 1, (name, events[name])
        result = summary.results[0]
        assert result.reconnects >= 1 and result.reason != "?", (name, result)
        assert "reconnected" in events[name], events[name]
    one, two = summaries["one"].results[0], summaries["two"].results[0]
    assert one.match == two.match and {one.seat, two.seat} == {0, 1}
    assert one.winner == two.winner and one.moves == two.moves
