"""`cardserver replay ID`: readable text by default, ``--json`` for machines, ``--html
FILE`` for a page; and the page itself in headless Chromium, stepped by key presses.

The stored match is played over real TCP against a real in-process server (a
player and a server bot), then replayed from the store by the command line.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio

from client.session import open_session
from engine import notation
from engine.fairness import commitment
from server.app import serve
from server.cli import main as cli_main
from server.config import ServerConfig
from server.replay import new_match_state, public_record
from server.replay_html import render_page
from server.replay_text import format_record
from server.store import JournalEntry, MatchRecord, SeatRecord
from tests.modules import load_module

ROOT = Path(__file__).resolve().parents[2]


def load_script() -> Any:
    return load_module(ROOT / "scripts" / "screenshot_replay.py")


def memory_record(game: str, seed: int, options: dict[str, Any],
                  salt: str = "ab" * 16) -> dict[str, Any]:
    """A finished match's public record, journaled and replayed like a stored one."""
    rec = MatchRecord("mPAGE000001", game, dict(options), seed, salt, 0, "forfeit",
                      "finished", 1764547200.0, 1764547500.0,
                      seats=[SeatRecord(0, None, "alice"),
                             SeatRecord(1, None, "greedy (bot)", "greedy")])
    state = new_match_state(rec)  # dealt as the server deals a stored match
    rec = replace(rec, options=dict(state.options))
    rng = random.Random(seed)
    entries = []
    while state.outcome() is None:
        seat = state.to_move()[0]
        legal = state.legal(seat)
        plays = [i for i in legal if i["type"] == "play"]
        intent = rng.choice(plays) if plays and rng.random() < .9 else rng.choice(legal)
        state.apply(seat, intent)
        entries.append(JournalEntry(len(entries) + 1, "intent", seat, intent, None, "seat", 0.0,
                                    state.digest()))
    out = state.outcome()
    return public_record(replace(rec, winner=out.winner, reason=out.reason), entries)


async def stored_war_match(tmp_path: Path) -> tuple[Path, str]:
    """Play a short War match over TCP against the server's bot; returns (db, match)."""
    db = tmp_path / "replay.db"
    cfg = ServerConfig(host="127.0.0.1", port=0, db=db, turn_timer=0, grace=5.0,
                       shutdown_timeout=0.2, bot_time_budget=0.01, auto_flip_delay=0.0)
    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve, cfg)
        async with open_session("127.0.0.1", server.port, name="alice") as session:
            reply = await session.request({"type": "create", "game": "war", "bot": "random",
                                           "options": {"cap": 6}})
            match = reply["match"]
            with trio.fail_after(20):
                async for push in session.pushes:
                    if push.get("type") != "snapshot":
                        continue
                    if push["status"] == "finished":
                        break
                    if push["legal"]:
                        try:
                            await session.request({"type": "intent", "match": match,
                                                   "seq": push["seq"],
                                                   "intent": push["legal"][0]})
                        except Exception:  # stale: the next snapshot comes
                            pass
        server.shutdown()
    return db, match


async def test_replay_command_prints_words_json_and_writes_a_page(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, match = await stored_war_match(tmp_path)
    capsys.readouterr()
    assert cli_main(["replay", match, "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"War match {match}: alice (seat 1)  vs  random (bot) (seat 2)")
    assert re.search(r"^1\. (alice|random \(bot\)): flip", text, re.MULTILINE)
    assert re.search(r"^      (alice|random \(bot\)) flips (10|[2-9JQKA])[\u2660-\u2666]", text,
                     re.MULTILINE)
    assert "result: " in text and "the battle cap was reached" in text or "all 52" in text
    assert "verified: sha256(seed + salt) matches the commitment" in text
    assert "{" not in text  # no raw JSON in the readable form
    assert cli_main(["replay", match, "--db", str(db), "--ascii"]) == 0
    plain = capsys.readouterr().out
    assert not re.search("[\u2660-\u2666]", plain) and re.search(r"flips (10|[2-9JQKA])[CDHS]",
                                                                 plain)
    assert cli_main(["replay", match, "--db", str(db), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["match"] == match and record["verified"] is True
    page = tmp_path / "page.html"
    assert cli_main(["replay", match, "--db", str(db), "--html", str(page), "--json"]) == 0
    html = page.read_text(encoding="utf-8")
    assert f"War match {match}" in html and "</html>" in html
    assert cli_main(["replay", "nope", "--db", str(db)]) == 1
    assert cli_main(["replay", match, "--db", str(db), "--html",
                     str(tmp_path / "no" / "such" / "dir.html")]) == 1


def test_text_numbers_arrays_from_one_and_uses_the_notation() -> None:
    record = memory_record("datastructures", 3, {"cap": 30})
    text = format_record(record)
    assert "onto array 0" not in text and "onto array 1" in text
    first = next(m for m in record["moves"] if m["events"][0]["type"] == "play")
    card = notation.card(first["events"][0]["card"])
    who = ["alice", "greedy (bot)"][first["seat"]]
    assert f"{who} took {card} from " in text
    assert "result: " in text and "wins: " in text or "a draw: " in text
    assert "every state digest matched" in text


def test_page_is_self_contained() -> None:
    html = render_page(memory_record("datastructures", 3, {"cap": 30}))
    for needle in ("http://", "https://", "<link", "src=", "@import", "url("):
        assert needle not in html
    assert html.count("<script") == 2  # the data and the code, both inline


def test_a_page_cannot_be_broken_by_a_name() -> None:
    record = memory_record("war", 5, {"cap": 5})
    record["players"][0]["name"] = "</script><b>x"
    html = render_page(record)
    assert "</script><b>" not in html


@pytest.fixture(scope="module")
def browser() -> Any:
    script = load_script()
    if script.find_chromium() is None:
        pytest.skip("chromium is not installed")
    try:
        with script.Browser(width=1000, height=800) as b:
            yield b
    except script.BrowserError as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"chromium does not start here: {exc}")


@pytest.mark.parametrize("game,seed,cap", [("datastructures", 3, 30), ("war", 5, 40)])
def test_page_steps_by_keys_in_headless_chromium(browser: Any, tmp_path: Path, game: str,
                                                 seed: int, cap: int) -> None:
    record = memory_record(game, seed, {"cap": cap})
    page = tmp_path / "replay.html"
    page.write_text(render_page(record), encoding="utf-8")
    browser.open(page)
    state = "document.body.dataset"
    total = len(record["moves"])
    assert browser.evaluate(f"{state}.position") == "0"
    assert browser.evaluate(f"{state}.total") == str(total)
    # the page computed sha256(seed + salt) itself and it matches the commitment
    assert record["commitment"] == commitment(seed, "ab" * 16)
    assert browser.evaluate(f"{state}.fair") == "ok"
    assert "equals the commitment" in browser.evaluate(
        "document.getElementById('fair-check').textContent")
    for _ in range(3):
        browser.press("ArrowRight")
    assert browser.evaluate(f"{state}.position") == "3"
    assert browser.evaluate("document.getElementById('move').textContent") == \
        format_record(record).split("\n3. ")[1].split("\n")[0].join(["3. ", ""])
    browser.press("ArrowLeft")
    assert browser.evaluate(f"{state}.position") == "2"
    browser.press("End")
    assert browser.evaluate(f"{state}.position") == str(total)
    assert browser.evaluate("document.getElementById('result').textContent").startswith(
        "Result: ")
    cards = browser.evaluate("document.querySelectorAll('#board .card').length")
    assert cards > 0
    browser.press("Home")
    assert browser.evaluate(f"{state}.position") == "0"
    browser.press("ArrowLeft")  # no step before the opening
    assert browser.evaluate(f"{state}.position") == "0"


def test_page_says_when_the_reveal_does_not_match(browser: Any, tmp_path: Path) -> None:
    record = memory_record("war", 5, {"cap": 5})
    record["reveal"] = dict(record["reveal"], salt="cd" * 16)
    page = tmp_path / "bad.html"
    page.write_text(render_page(record), encoding="utf-8")
    browser.open(page)
    assert browser.evaluate("document.body.dataset.fair") == "mismatch"


def test_screenshot_script_writes_pngs(browser: Any, tmp_path: Path) -> None:
    script = load_script()
    page = tmp_path / "shot.html"
    page.write_text(render_page(memory_record("war", 5, {"cap": 20})), encoding="utf-8")
    shots = script.shoot(page, tmp_path / "shots", ["0", "4", "end"])
    assert [p.name for p in shots][:2] == ["replay-0.png", "replay-4.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in shots)
