"""The `cardclient` command line: addresses, names, and errors in words."""

from __future__ import annotations

import pytest

from client.tui.cli import build_parser, main, parse_address


@pytest.mark.parametrize("text,expected", [
    ("localhost:7000", ("localhost", 7000)),
    ("127.0.0.1:1", ("127.0.0.1", 1)),
    ("[::1]:7000", ("::1", 7000)),
    ("localhost", ("localhost", 7000)),  # a bare host means the default port
])
def test_parse_address(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize("text,words", [
    ("", "expected HOST:PORT"),
    (":7000", "expected HOST:PORT"),
    ("host:http", "the port must be a number"),
    ("host:0", "must be 1..65535"),
    ("host:70000", "must be 1..65535"),
])
def test_bad_addresses_are_refused_in_words(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_address(text)


def test_command_line_errors_exit_2_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["connect", ":7000"])
    assert exc.value.code == 2
    assert "expected HOST:PORT" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["connect", "h:7000", "--name", "x" * 33])
    assert "--name must be 1..32 characters" in capsys.readouterr().err
    assert main([]) == 2  # no command: the help


def test_options() -> None:
    ns = build_parser().parse_args(["connect", "h:1", "--name", "bob", "--no-color"])
    assert (ns.address, ns.name, ns.no_color) == (["h:1"], "bob", True)
    several = build_parser().parse_args(["connect", "h:1,h:2", "h:3"])
    assert several.address == ["h:1,h:2", "h:3"]


def test_scripts_serve_says_the_port_it_was_given() -> None:
    import subprocess
    from pathlib import Path

    serve = Path(__file__).resolve().parents[2] / "scripts" / "serve"
    for args, port in ((["--port", "7391"], "7391"), (["--port=7392"], "7392"), ([], "7000")):
        done = subprocess.run([str(serve), *args, "--help"], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert f"starting on port {port}" in done.stderr
        assert f"connect localhost:{port} --name alice" in done.stderr
        assert "7000" not in done.stderr or port == "7000"


def test_cardbot_connect_help_shows_game_as_required(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    from client.bots.cli import main as cardbot

    with pytest.raises(SystemExit):
        cardbot(["connect", "--help"])
    out = capsys.readouterr().out
    assert "usage: cardbot connect HOST:PORT --game {war,datastructures}" in out
    import re
    assert re.search(r"\nrequired:\n\s+HOST:PORT[^\n]*\n(?:\s{10,}[^\n]*\n)*\s+--game", out), out
