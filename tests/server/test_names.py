"""Name rules (server/names.py)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.names import BadName, check_name, name_key


@pytest.mark.parametrize("name", [
    "alice", "Bob the Builder", "zoë", "Łukasz", "Мария", "Σωκράτης", "山田太郎", "やまだ",
    "kimチーム", "김민준", "bot-42", "x_y.z", "🃏 joker", "a", "R2-D2", "robot", "bot",
    "e\u0301tienne",  # NFC turns it into é
])
def test_good_names(name: str) -> None:
    assert check_name(name) == unicodedata.normalize("NFC", name)


@pytest.mark.parametrize("name, why", [
    ("", "blank"), ("   ", "blank"), ("\u3000", "blank"),
    ("\u200b", "invisible"), ("\u2800", "invisible"), ("\u3164", "invisible"),
    ("ali\u200dce", "invisible"), ("al\u00adice", "invisible"), ("bob\ufe0f", "invisible"),
    ("a\u2028b", "line"), ("a\u2029b", "line"), ("a\nb", "line"),
    ("a\u202eb", "bidirectional"), ("x\u2067y", "bidirectional"), ("a\u200fb", "bidirectional"),
    ("a\x07b", "control"), (" alice", "space"), ("alice ", "space"), ("a  b", "two spaces"),
    ("a\u00a0b", "plain one"), ("a\ue000", "private-use"),
    ("\uff41lice", "compatibility"), ("\ufb01sh", "compatibility"), ("x\u00b2", "compatibility"),
    ("p\u0430ypal", "scripts"), ("\u0391lpha", "scripts"),
    ("alice (bot)", "(bot)"), ("alice(BOT)", "(bot)"), ("alice (greedy bot)", "(bot)"),
    ("alice (b0t)", "(bot)"),
    ("a\u0301\u0301\u0301\u0301", "combining"), ("\u0301a", "combining"),
    ("x" * 33, "at most"), ("_-.", "other than"),
])
def test_bad_names(name: str, why: str) -> None:
    with pytest.raises(BadName, match=why.replace("(", r"\(").replace(")", r"\)")):
        check_name(name)


def test_look_alikes_share_a_key() -> None:
    same = ["alice", "Alice", "ALICE", "аlice", "a_lice", "al1ce", "aIice", "alicé", "a.lice"]
    assert {name_key(n) for n in same} == {name_key("alice")}
    assert name_key("rnary") == name_key("mary")
    assert name_key("bob") != name_key("rob")


@given(st.text(max_size=40))
def test_check_name_either_accepts_or_says_why(text: str) -> None:
    """Never anything but a name or BadName; an accepted name passes again unchanged."""
    try:
        name = check_name(text)
    except BadName as exc:
        assert str(exc)
        return
    assert check_name(name) == name and name_key(name)
    assert not any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in name)
