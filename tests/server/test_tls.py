"""TLS on the server's port: the same protocol inside TLS, TLS only (a plain-TCP
client is closed and the server serves on); cardclient, cardbot and the SDK speak
it with ``tls://`` and ``--ca`` for a private CA. The certificates come from
``trustme`` (a throwaway CA made for tests)."""

from __future__ import annotations

import ssl
import sys
from pathlib import Path

import pytest
import trio
import trustme

from client.bots.sdk import play
from client.session import tls_connector
from server.tls import TLSFileError, server_context
from tests.server.helpers import TestClient, play_to_end


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def tls_files(ca: trustme.CA, tmp_path: Path) -> dict[str, Path]:
    cert = ca.issue_cert("127.0.0.1", "localhost")
    files = {"cert": tmp_path / "cert.pem", "key": tmp_path / "key.pem",
             "ca": tmp_path / "ca.pem"}
    cert.private_key_and_cert_chain_pem.write_to_path(str(files["cert"]))
    cert.private_key_pem.write_to_path(str(files["key"]))
    ca.cert_pem.write_to_path(str(files["ca"]))
    return files


@pytest.fixture
async def tls_server(start_server, tls_files):
    return await start_server(tls_cert=tls_files["cert"], tls_key=tls_files["key"])


async def _tls_client(port: int, ca: Path, name: str) -> TestClient:
    client = TestClient(await tls_connector("127.0.0.1", port, str(ca))())
    assert (await client.hello(name))["type"] == "welcome"
    return client


async def test_a_match_over_tls_finishes_while_plain_clients_are_closed(
        tls_server, tls_files) -> None:
    port = tls_server.port
    alice = await _tls_client(port, tls_files["ca"], "alice")
    bob = await _tls_client(port, tls_files["ca"], "bob")
    mid = (await alice.expect_ok("create", game="war", options={"cap": 40}))["match"]
    await bob.expect_ok("join", match=mid)
    closed = 0

    async def plain_clients() -> None:
        nonlocal closed
        for _ in range(20):  # plain TCP: a hello where TLS expects its ClientHello
            plain = await TestClient.connect(port)
            await plain.send({"type": "hello", "protocol": [1], "name": "plain",
                              "client": "test"})
            with trio.fail_after(5):
                try:
                    while True:
                        await plain.next_message()
                except Exception:  # noqa: BLE001 - closed (or garbage from TLS): either way
                    closed += 1
            await plain.aclose()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(plain_clients)
        final = await play_to_end({0: alice, 1: bob}, mid)
    assert closed == 20
    assert final[0]["status"] == "finished" and final[0]["result"]["reason"]
    late = await _tls_client(port, tls_files["ca"], "carol")  # and it serves on
    await late.expect_ok("games")


async def test_an_untrusted_certificate_is_refused(tls_server, tmp_path: Path) -> None:
    other = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other))
    with pytest.raises(ssl.SSLError):
        await tls_connector("127.0.0.1", tls_server.port, str(other))()


async def test_the_sdk_plays_over_tls(tls_server, tls_files) -> None:
    summary = await play(lambda view, legal: legal[0], "127.0.0.1", tls_server.port,
                         game="war", mode="create", server_bot="random",
                         options={"cap": 20}, tls=True, ca=str(tls_files["ca"]))
    assert len(summary.results) == 1 and summary.results[0].reason


async def test_cardbot_connects_with_tls_and_a_private_ca(tls_server, tls_files) -> None:
    done = await trio.run_process(
        [sys.executable, "-m", "client.bots.cli", "connect",
         f"tls://127.0.0.1:{tls_server.port}", "--ca", str(tls_files["ca"]), "--game", "war",
         "--create", "--vs-bot", "random", "--option", "cap=10", "--quiet"],
        capture_stdout=True, capture_stderr=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip().splitlines()[-1].startswith("1 match:"), done.stdout


def test_cardclient_builds_a_tls_connection(monkeypatch, tls_files) -> None:
    from client.tui import cli

    seen = {}

    async def fake_run_client(host, port, name, *, color, connect, **_):
        seen.update(host=host, port=port, connect=connect)

    monkeypatch.setattr(cli, "run_client", fake_run_client)
    assert cli.main(["connect", "tls://127.0.0.1:7443", "--ca", str(tls_files["ca"])]) == 0
    assert seen["host"] == "127.0.0.1" and seen["port"] == 7443 and seen["connect"] is not None
    assert cli.main(["connect", "127.0.0.1:7443"]) == 0 and seen["connect"] is None
    with pytest.raises(SystemExit):
        cli.main(["connect", "127.0.0.1:7443", "--ca", str(tls_files["ca"])])


def test_bad_tls_files_are_refused_with_their_names(tmp_path: Path, tls_files) -> None:
    with pytest.raises(TLSFileError, match="nothing.pem"):
        server_context(tmp_path / "nothing.pem", tmp_path / "nothing.pem")
    with pytest.raises(TLSFileError):
        server_context(tls_files["ca"], tls_files["ca"])  # a certificate without its key


async def test_connections_in_their_tls_handshake_count_and_time_out(
        start_server, tls_files) -> None:
    server = await start_server(tls_cert=tls_files["cert"], tls_key=tls_files["key"],
                                max_connections=2, handshake_timeout=0.5)
    silent = [await trio.open_tcp_stream("127.0.0.1", server.port) for _ in range(2)]
    await trio.sleep(0.1)
    with pytest.raises(OSError):  # refused before its handshake: the port is full
        await tls_connector("127.0.0.1", server.port, str(tls_files["ca"]))()
    for stream in silent:  # each silent one is closed at the handshake timeout
        with trio.fail_after(3):
            assert await stream.receive_some(100) == b""
        await stream.aclose()
    late = await _tls_client(server.port, tls_files["ca"], "late")
    await late.expect_ok("games")
