"""client/address.py: the one parser of server addresses (TUI, bots, SDK)."""

from __future__ import annotations

import copy
import pickle

import pytest

from client.address import DEFAULT_PORT, Address, parse_address


@pytest.mark.parametrize(("text", "expected", "tls"), [
    ("example.org:7001", ("example.org", 7001), False),
    ("example.org", ("example.org", DEFAULT_PORT), False),
    ("  127.0.0.1:1 ", ("127.0.0.1", 1), False),
    ("[::1]:9", ("::1", 9), False),
    ("[::1]", ("::1", DEFAULT_PORT), False),
    ("::1", ("::1", DEFAULT_PORT), False),
    ("tls://example.org", ("example.org", DEFAULT_PORT), True),
    ("TLS://[::1]:443", ("::1", 443), True),
])
def test_accepted_forms(text: str, expected: tuple[str, int], tls: bool) -> None:
    address = parse_address(text)
    assert address == expected and address.tls is tls
    host, port = address
    assert (host, port) == (address.host, address.port) == expected


@pytest.mark.parametrize(("text", "words"), [
    ("", "empty address"),
    ("   ", "empty address"),
    (":7000", "expected HOST:PORT or HOST"),
    ("tls://", "expected HOST:PORT or HOST"),
    ("http://example.org", "only tls:// is accepted"),
    ("a b:7000", "expected HOST:PORT or HOST"),
    ("[::1", "expected HOST:PORT or HOST"),
    ("[::1]7000", "expected HOST:PORT or HOST"),
    ("host:", "the port must be a number"),
    ("host:http", "the port must be a number"),
    ("host:0", "must be 1..65535"),
    ("host:65536", "must be 1..65535"),
])
def test_refused_forms_say_why(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_address(text)


def test_default_port_and_round_trips() -> None:
    assert parse_address("h", default_port=9) == ("h", 9)
    address = parse_address("tls://[::1]:8")
    assert str(address) == "tls://[::1]:8" and parse_address(str(address)).tls
    for clone in (copy.copy(address), pickle.loads(pickle.dumps(address))):
        assert clone == address and clone.tls and isinstance(clone, Address)
    assert "tls=True" in repr(address)


def test_every_client_command_line_uses_this_parser() -> None:
    import client.bots.sdk
    import client.tui.cli

    assert client.bots.sdk.parse_address is parse_address
    assert client.tui.cli.parse_address is parse_address
