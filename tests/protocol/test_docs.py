"""docs/protocol.md documents every message type and every error code (it is the bot author's manual)."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.errors import CODES, markdown_table
from protocol.events import SCHEMAS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_error_code_is_in_the_table(code: str) -> None:
    info = CODES[code]
    fatal = "yes" if info.fatal else "no"
    assert f"| `{code}` | {info.kind.value} | {fatal} | {info.doc} |" in DOC


def test_the_error_table_is_the_generated_one() -> None:
    """The docs' table is exactly protocol.errors.CODES (`python -m protocol.errors`)."""
    assert markdown_table() in DOC


@pytest.mark.parametrize(("direction", "mtype"), [(d, t) for d in SCHEMAS for t in SCHEMAS[d]])
def test_every_message_has_a_section(direction: str, mtype: str) -> None:
    assert f"`{mtype}`" in DOC and f'"type": "{mtype}"' in DOC


@pytest.mark.parametrize(("direction", "mtype"), [(d, t) for d in SCHEMAS for t in SCHEMAS[d]])
def test_every_field_is_mentioned(direction: str, mtype: str) -> None:
    for name in SCHEMAS[direction][mtype].fields:
        assert f"`{name}`" in DOC or f'"{name}":' in DOC, f"{mtype}.{name} is not documented"
