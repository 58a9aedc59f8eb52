"""Verifying a finished match from its public record: in Python (server/verify.py) and
in JavaScript (examples/verify_match.js, written from docs/protocol.md alone)."""

from __future__ import annotations

import copy
import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from engine.rng import HMAC_STREAM
from server.replay import new_match_state, public_record
from server.store import JournalEntry, MatchRecord, SeatRecord, Store
from server.verify import verify_record

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
SALT = "00112233445566778899aabbccddeeff"


def finished_match(game: str, seed: int, options: dict[str, Any] | None = None,
                   client_seeds: tuple[str, str] = ("c0ffee", "0123abcd"),
                   ) -> tuple[MatchRecord, list[JournalEntry]]:
    """One whole random match on the documented stream, as the store keeps it."""
    rec = MatchRecord(f"m{game[:2]}{seed}", game, options or {}, seed, SALT, 0, "forfeit", "finished", 0.0,
                      seats=[SeatRecord(i, None, f"p{i}", None, False, client_seeds[i])
                             for i in (0, 1)], stream=HMAC_STREAM)
    state = new_match_state(rec)
    rec.options = state.options
    chooser = random.Random(seed)
    entries = []
    while state.outcome() is None:
        seat = chooser.choice(state.to_move())
        intent = chooser.choice(state.legal(seat))
        state.apply(seat, intent)
        entries.append(JournalEntry(len(entries) + 1, "intent", seat, intent, None, "seat",
                                    0.0, state.digest()))
    outcome = state.outcome()
    assert outcome is not None
    rec.winner, rec.reason = outcome.winner, outcome.reason
    return rec, entries


def finished_record(game: str, seed: int,
                    options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The public record of :func:`finished_match`, as JSON carries it."""
    return json.loads(json.dumps(public_record(*finished_match(game, seed, options))))


@pytest.fixture(scope="module")
def war_record() -> dict[str, Any]:
    return finished_record("war", 5)


@pytest.fixture(scope="module")
def ds_record() -> dict[str, Any]:
    return finished_record("datastructures", 7)


def _first(record: dict[str, Any], pred: Any) -> dict[str, Any]:
    return next(e for m in record["moves"] for e in m["events"] if pred(e))


def test_a_true_record_verifies_and_says_what_was_checked(war_record: dict,
                                                          ds_record: dict) -> None:
    for record in (war_record, ds_record):
        result = verify_record(record)
        assert result.ok, result.failure
        text = "\n".join(result.checked)
        assert "matches the commitment" in text
        assert f"stream {HMAC_STREAM}" in text and "c0ffee, 0123abcd" in text
        assert "shuffles replayed" in text and "cards shown" in text


def _tampered(record: dict, change: Any) -> dict:
    bad = copy.deepcopy(record)
    change(bad)
    return bad


def _flip_card(record: dict) -> None:
    event = _first(record, lambda e: e["type"] == "flip" and e["up"] != "2C")
    event["up"] = "2C"


def _swap_queue(record: dict) -> None:
    event = _first(record, lambda e: e["type"] == "queue" and len(set(e["cards"])) > 1)
    cards = event["cards"]
    i = next(i for i in range(1, len(cards)) if cards[i] != cards[0])
    cards[0], cards[i] = cards[i], cards[0]


@pytest.mark.parametrize(("game", "change", "expected"), [
    ("war", _flip_card, "public events differ"),
    ("war", lambda r: r["client_seeds"].__setitem__(0, "c0fff0"), "public events differ"),
    ("war", lambda r: r["reveal"].__setitem__("salt", "00" * 16), "commitment"),
    ("war", lambda r: r["moves"][3]["view"]["counts"].reverse(), "seq 4"),
    ("war", lambda r: r.__setitem__("result", {"winner": 1 - r["result"]["winner"],
                                               "reason": r["result"]["reason"]}), "result"),
    ("datastructures", _swap_queue, "public events differ"),
    ("datastructures", lambda r: r["start"]["queue"].reverse(), "start"),
])
def test_a_tampered_record_fails(war_record: dict, ds_record: dict, game: str, change: Any,
                                 expected: str) -> None:
    record = war_record if game == "war" else ds_record
    result = verify_record(_tampered(record, change))
    assert not result.ok
    assert expected in (result.failure or ""), result.failure


def test_an_unfinished_record_cannot_be_verified(war_record: dict) -> None:
    record = _tampered(war_record, lambda r: (r.pop("reveal"), r.__setitem__("status",
                                                                              "active")))
    result = verify_record(record)
    assert not result.ok and "not finished" in (result.failure or "")


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
class TestJavaScript:
    def _node(self, record: dict, tmp_path: Path) -> subprocess.CompletedProcess[str]:
        assert NODE is not None
        path = tmp_path / "record.json"
        path.write_text(json.dumps(record))
        return subprocess.run([NODE, str(ROOT / "examples" / "verify_match.js"), "record",
                               str(path)], capture_output=True, text=True, timeout=60,
                              check=False)

    def test_javascript_verifies_every_shuffle_and_card(self, war_record: dict,
                                                        ds_record: dict,
                                                        tmp_path: Path) -> None:
        variants = [finished_record("war", 9, {"return": "played", "short_war": "lose",
                                               "cap": 300}),
                    finished_record("datastructures", 3, {"cap": 40})]
        for record in (war_record, ds_record, *variants):
            assert verify_record(record).ok
            done = self._node(record, tmp_path)
            assert done.returncode == 0, done.stdout + done.stderr
            assert "verified" in done.stdout and "shuffles replayed" in done.stdout

    @pytest.mark.parametrize("game", ["war", "datastructures"])
    def test_javascript_refuses_a_tampered_record(self, war_record: dict, ds_record: dict,
                                                  tmp_path: Path, game: str) -> None:
        record = war_record if game == "war" else ds_record
        done = self._node(_tampered(record, _flip_card if game == "war" else _swap_queue),
                          tmp_path)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "FAILED" in done.stdout


def test_cardserver_replay_verify_on_a_store_and_on_a_saved_record(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from server.cli import main

    db = tmp_path / "store.db"
    store = Store(db)
    rec, entries = finished_match("datastructures", 11)
    store.create_match(rec)
    for entry in entries[:-1]:
        store.append(rec.id, entry)
    store.append(rec.id, entries[-1], (1.0, rec.winner, rec.reason or ""))
    store.close()
    assert main(["replay", rec.id, "--db", str(db), "--verify"]) == 0
    out = capsys.readouterr().out
    assert f"verified: match {rec.id}" in out and "shuffles replayed" in out
    assert main(["replay", rec.id, "--db", str(db), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    saved = tmp_path / "record.json"
    saved.write_text(json.dumps(record))
    assert main(["replay", rec.id, "--verify", "--record", str(saved)]) == 0
    capsys.readouterr()
    saved.write_text(json.dumps(_tampered(record, _swap_queue)))
    assert main(["replay", rec.id, "--verify", "--record", str(saved)]) == 1
    assert "FAILED: seq" in capsys.readouterr().out
    assert main(["replay", "mnone", "--db", str(db), "--verify"]) == 2
