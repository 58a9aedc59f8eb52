"""--metrics-port over real TCP: /metrics after a played match, /healthz on one server
and on a cluster node (Redis up, Redis down, shutting down)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import trio
from prometheus_client.parser import text_string_to_metric_families

from server.app import serve
from tests.cluster.nodeproc import NodeProcess
from tests.cluster.redis_server import RedisServer
from tests.server.helpers import TestClient, free_port, make_config, play_to_end


async def http_get(port: int, path: str) -> tuple[int, str]:
    """(status, body) of ``GET path`` on loopback ``port``."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    await stream.send_all(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    data = b""
    with trio.fail_after(5):
        while chunk := await stream.receive_some(65536):
            data += chunk
    await stream.aclose()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition: (name, sorted labels) -> value."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str,
          **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_metrics_count_a_played_match(tmp_path: Path, nursery: trio.Nursery) -> None:
    port = free_port()
    server = await nursery.start(partial(serve, make_config(tmp_path, metrics_port=port,
                                                            busy_poll=0.01)))
    assert server.metrics is not None and server.metrics.port == port
    status, text = await http_get(port, "/metrics")
    assert status == 200
    before = samples(text)

    alice = await TestClient.connect(server.port)
    bob = await TestClient.connect(server.port)
    await alice.hello("alice")
    await bob.hello("bob")
    mid = (await alice.expect_ok("create", game="datastructures", options={"cap": 12}))["match"]
    await bob.expect_ok("join", match=mid, seat=1)
    await alice.expect_error("stale", "intent", match=mid, seq=999, intent={"type": "x"})
    final = await play_to_end({0: alice, 1: bob}, mid)
    moves = final[0]["seq"]

    status, text = await http_get(port, "/metrics")
    after = samples(text)
    assert status == 200
    assert value(after, "cardserver_connections") == 2
    # the clients answer within the 10 ms poll: passes are caught without a wake-up
    assert value(after, "cardserver_busy_poll_caught_total") > \
        value(before, "cardserver_busy_poll_caught_total")
    assert value(after, "cardserver_busy_poll_seconds_total") > 0
    assert value(after, "cardserver_matches", game="datastructures", status="finished") == 1
    accepted = (value(after, "cardserver_intents_accepted_total", game="datastructures")
                - value(before, "cardserver_intents_accepted_total", game="datastructures"))
    # every journal row of this match but its start came from an accepted intent
    assert 0 < accepted <= moves
    assert value(after, "cardserver_intents_refused_total", game="datastructures",
                 code="stale") - value(before, "cardserver_intents_refused_total",
                                       game="datastructures", code="stale") == 1
    assert value(after, "cardserver_errors_total", code="stale") >= 1
    assert (value(after, "cardserver_requests_total", type="intent")
            - value(before, "cardserver_requests_total", type="intent")) == accepted + 1
    assert (value(after, "cardserver_intent_seconds_count")
            - value(before, "cardserver_intent_seconds_count")) == accepted + 1
    assert value(after, "cardserver_commit_seconds_count") > value(
        before, "cardserver_commit_seconds_count")
    assert value(after, "process_cpu_seconds_total") > 0

    status, body = await http_get(port, "/healthz")
    assert status == 200
    assert json.loads(body) == {"status": "ok", "node": None, "matches": 1,
                                "connections": 2, "redis": None}
    assert (await http_get(port, "/nothing"))[0] == 404
    await alice.aclose()
    await bob.aclose()
    server.shutdown()


async def test_healthz_is_503_while_shutting_down(tmp_path: Path,
                                                  nursery: trio.Nursery) -> None:
    port = free_port()
    server = await nursery.start(partial(serve, make_config(tmp_path, metrics_port=port,
                                                            shutdown_timeout=2.0)))
    client = await TestClient.connect(server.port)
    await client.hello("alice")
    client.answer_pings = False
    server.shutdown()  # the connection keeps the shutdown waiting for its writer
    status, body = await http_get(port, "/healthz")
    assert status == 503 and json.loads(body)["status"] == "shutting_down"
    await client.aclose()


async def test_a_server_bot_counts_its_moves(tmp_path: Path, nursery: trio.Nursery) -> None:
    port = free_port()
    server = await nursery.start(partial(serve, make_config(tmp_path, metrics_port=port)))
    before = samples((await http_get(port, "/metrics"))[1])
    alice = await TestClient.connect(server.port)
    await alice.hello("alice")
    mid = (await alice.expect_ok("create", game="datastructures", options={"cap": 12},
                                 bot="random"))["match"]
    snap = await alice.snapshot(mid, lambda s: s["status"] != "waiting")
    while snap["status"] != "finished":
        if snap["legal"]:
            reply = await alice.request("intent", match=mid, seq=snap["seq"],
                                        intent=snap["legal"][0])
            assert reply["type"] in ("ok", "error"), reply
        snap = await alice.snapshot(mid, lambda s, n=snap["seq"]: s["seq"] > n
                                    or s["status"] == "finished")
    after = samples((await http_get(port, "/metrics"))[1])
    moves = sum(value(after, "cardserver_bot_moves_total", how=h)
                - value(before, "cardserver_bot_moves_total", how=h)
                for h in ("thought", "default"))
    assert moves >= 1
    assert value(after, "cardserver_bot_think_seconds_count") > value(
        before, "cardserver_bot_think_seconds_count")
    await alice.aclose()
    server.shutdown()


async def test_a_cluster_node_reports_redis(own_redis: RedisServer, tmp_path: Path) -> None:
    metrics_port = free_port()
    node = await NodeProcess(own_redis.url, "a", tmp_path, "--metrics-port",
                             str(metrics_port), "--node-lease", "1").start()
    try:
        client = await TestClient.connect(node.port)
        await client.hello("alice")
        status, body = await http_get(metrics_port, "/healthz")
        assert status == 200
        assert json.loads(body) == {"status": "ok", "node": "a", "matches": 0,
                                    "connections": 1, "redis": "ok"}
        text = (await http_get(metrics_port, "/metrics"))[1]
        found = samples(text)
        # the lease renewals and the node list refreshes are round trips
        trips = sum(v for (name, _), v in found.items()
                    if name == "cardserver_redis_round_trips_total")
        assert trips >= 3
        assert value(found, "cardserver_redis_seconds_count") >= trips

        own_redis.kill()
        status, body = await http_get(metrics_port, "/healthz")
        assert status == 503
        assert json.loads(body)["redis"] == "down"
        assert json.loads(body)["status"] == "redis_down"
        await client.aclose()
    finally:
        node.kill()


async def test_relayed_messages_are_counted_on_both_nodes(redis_url: str,
                                                          tmp_path: Path) -> None:
    ports = {"a": free_port(), "b": free_port()}
    a = await NodeProcess(redis_url, "a", tmp_path, "--metrics-port", str(ports["a"])).start()
    b = await NodeProcess(redis_url, "b", tmp_path, "--metrics-port", str(ports["b"])).start()
    try:
        alice = await TestClient.connect(a.port)
        bob = await TestClient.connect(b.port)
        await alice.hello("alice")
        await bob.hello("bob")
        mid = (await alice.expect_ok("create", game="datastructures",
                                     options={"cap": 12}))["match"]
        await bob.expect_ok("join", match=mid, seat=1)  # relayed to a, the owner
        await play_to_end({0: alice, 1: bob}, mid)
        on = {name: samples((await http_get(port, "/metrics"))[1])
              for name, port in ports.items()}
        # bob's requests went b -> a, their answers and every snapshot a -> b
        assert value(on["b"], "cardserver_relayed_total", direction="out") > 10
        assert value(on["a"], "cardserver_relayed_total", direction="in") > 10
        assert value(on["a"], "cardserver_relayed_total", direction="out") > value(
            on["b"], "cardserver_relayed_total", direction="out")
        # only a, the owner, ran intents and committed them to Redis
        assert value(on["a"], "cardserver_intents_accepted_total", game="datastructures") > 0
        assert value(on["b"], "cardserver_intents_accepted_total", game="datastructures") == 0
        assert value(on["a"], "cardserver_redis_round_trips_total", command="pipeline") > 0
        assert value(on["a"], "cardserver_matches", game="datastructures",
                     status="finished") == 1
        await alice.aclose()
        await bob.aclose()
    finally:
        a.kill()
        b.kill()
