"""Each server option is declared once: flag, default, bounds, help and the README row."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

import pytest

from server.config import ServerConfig, add_arguments, flag, from_namespace, limits_table

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_table_is_the_declared_one() -> None:
    assert limits_table() in README.read_text(), \
        "README's limits table differs: paste the output of `python -m server.config`"


def test_every_field_is_a_flag_with_its_default() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    ns = parser.parse_args([])
    defaults = ServerConfig()
    for f in fields(ServerConfig):
        assert getattr(ns, f.name) == getattr(defaults, f.name), f.name
        assert flag(f.name) in parser.format_help()


@pytest.mark.parametrize(("args", "message"), [
    (["--port", "70000"], "--port must be in 0..65535"),
    (["--max-frame", "0"], "--max-frame must be > 0"),
    (["--grace", "-1"], "--grace must be >= 0"),
    (["--log-level", "loud"], "--log-level must be debug, info, warning or error"),
])
def test_bounds_come_from_the_declaration(args: list[str], message: str) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    with pytest.raises(ValueError, match=message):
        from_namespace(parser.parse_args(args))
    from_namespace(parser.parse_args([]))
