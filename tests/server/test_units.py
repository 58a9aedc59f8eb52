"""Unit tests: store, tokens, rate limiter, config and CLI, replay."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.registry import get_game
from server import tokens
from server.config import ServerConfig, add_arguments, default_db_path, from_namespace
from server.ratelimit import TokenBucket
from server.replay import ReplayError, public_record, rebuild
from server.store import JournalEntry, MatchRecord, SeatRecord, Store, StoreError


def _war_record(seed: int = 12345) -> MatchRecord:
    return MatchRecord("m1", "war", get_game("war").normalize_options({"cap": 40}), seed,
                       tokens.new_salt(), 0, "forfeit", "active", 1.0,
                       seats=[SeatRecord(0, "s1", "alice"), SeatRecord(1, None, "bot", "random")])


def test_store_round_trip_and_wal(tmp_path: Path) -> None:
    store = Store(tmp_path / "a" / "x.db")
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rec = _war_record()
    store.create_match(rec)
    state = get_game("war").new_state(rec.seed, rec.options)
    for seq in (1, 2):
        state.apply(seq - 1, {"type": "flip"})
        store.append("m1", JournalEntry(seq, "intent", seq - 1, {"type": "flip"},
                                        digest=state.digest()))
    with pytest.raises(StoreError):
        store.append("m1", JournalEntry(2, "intent", 0, {"type": "flip"}))
    store.close()
    store = Store(tmp_path / "a" / "x.db")
    loaded = store.load_match("m1")
    assert loaded is not None and loaded.seed == rec.seed and loaded.seats == rec.seats
    assert [m.id for m in store.unfinished_matches()] == ["m1"]
    journal = store.journal("m1")
    assert [e.seq for e in journal] == [1, 2]
    assert rebuild(loaded, journal).digest() == state.digest()
    store.append("m1", JournalEntry(3, "resign", 0), finished=(2.0, 1, "resign"))
    assert store.unfinished_matches() == []
    record = public_record(store.load_match("m1"), store.journal("m1"))
    assert record["result"] == {"winner": 1, "reason": "resign"} and record["verified"]


def test_replay_detects_a_changed_engine(tmp_path: Path) -> None:
    rec = _war_record()
    with pytest.raises(ReplayError):
        rebuild(rec, [JournalEntry(1, "intent", 0, {"type": "flip"}, digest="0" * 64)])
    with pytest.raises(ReplayError):
        rebuild(rec, [JournalEntry(1, "intent", 0, {"type": "flip"}, digest="2:" + "0" * 64)])
    with pytest.raises(ReplayError):
        rebuild(rec, [JournalEntry(2, "intent", 0, {"type": "flip"})])


def test_a_journal_of_both_digest_versions_replays_every_row_checked() -> None:
    """Rows journaled before War's version-2 digest (version 1) and after it, in one
    match's journal (a match that was running across the upgrade)."""
    rec = _war_record()
    state = get_game("war").new_state(rec.seed, rec.options)
    journal = []
    for seq in range(1, 7):
        state.apply((seq - 1) % 2, {"type": "flip"})
        digest = state.digest() if seq <= 3 else state.journal_digest()
        journal.append(JournalEntry(seq, "intent", (seq - 1) % 2, {"type": "flip"},
                                    digest=digest))
    assert journal[-1].digest.startswith("2:") and not journal[0].digest.startswith("2:")
    assert rebuild(rec, journal).digest() == state.digest()
    journal[-1] = JournalEntry(6, "intent", 1, {"type": "flip"}, digest=journal[-2].digest)
    with pytest.raises(ReplayError, match="digest differs after seq 6"):
        rebuild(rec, journal)


def test_unfinished_replay_keeps_the_seed_secret(tmp_path: Path) -> None:
    record = public_record(_war_record(), [])
    assert "reveal" not in record and "result" not in record


def test_sessions_store_only_token_hashes(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    token = tokens.new_token()
    assert len(token) >= 32
    store.create_session("s1", tokens.hash_token(token), "alice", 5.0)
    assert store.find_session(tokens.hash_token(token)).name == "alice"
    assert store.find_session(token) is None
    dump = "\n".join(store._db.iterdump())
    assert token not in dump


def test_tokens_are_random() -> None:
    assert len({tokens.new_token() for _ in range(100)}) == 100
    assert 0 <= tokens.new_seed() < 2**256
    assert len(tokens.new_salt()) == 32


def test_token_bucket() -> None:
    bucket = TokenBucket(rate=10, burst=3, now=0.0, abuse_limit=2, abuse_window=10)
    assert [bucket.allow(0.0) for _ in range(4)] == [True, True, True, False]
    assert bucket.allow(0.1)  # one token refilled
    assert not bucket.allow(0.1) and not bucket.abusive()
    assert not bucket.allow(0.1) and bucket.abusive()
    # 500 requests per second spread evenly always pass with the defaults
    config = ServerConfig()
    bucket = TokenBucket(config.rate, config.burst, 0.0)
    assert all(bucket.allow(i / 500) for i in range(5000))


def test_config_defaults_and_validation(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_db_path() == tmp_path / "cardserver" / "cardserver.db"
    monkeypatch.setenv("XDG_STATE_HOME", "")
    assert default_db_path() == Path.home() / ".local/state/cardserver/cardserver.db"
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    config = from_namespace(parser.parse_args(["--port", "7001", "--rate", "600"]))
    assert config.port == 7001 and config.rate == 600 and config.host is None
    with pytest.raises(ValueError, match="--burst"):
        from_namespace(parser.parse_args(["--burst", "0"]))


def test_help_lists_every_limit() -> None:
    done = subprocess.run([sys.executable, "-m", "server.cli", "--help"], capture_output=True,
                          text=True, timeout=30, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0
    for option in ("--max-connections", "--max-frame", "--rate", "--burst", "--abuse-limit",
                   "--handshake-timeout", "--ping-interval", "--ping-timeout", "--outbox-size",
                   "--grace", "--turn-timer", "--timeout-forfeit", "--auto-flip-delay",
                   "--db", "--host", "--port", "--log-level"):
        assert option in done.stdout, option


def test_one_server_per_store(tmp_path: Path) -> None:
    first = Store(tmp_path / "x.db", exclusive=True)
    with pytest.raises(StoreError, match="another cardserver"):
        Store(tmp_path / "x.db", exclusive=True)
    reader = Store(tmp_path / "x.db")  # `cardserver replay` reads without the lock
    reader.close()
    first.close()
    Store(tmp_path / "x.db", exclusive=True).close()


def test_a_token_bucket_says_how_long_until_a_token() -> None:
    from server.ratelimit import TokenBucket

    bucket = TokenBucket(rate=2.0, burst=2, now=0.0)
    assert bucket.wait(0.0) == 0.0
    assert bucket.allow(0.0) and bucket.allow(0.0) and not bucket.allow(0.0)
    assert bucket.wait(0.0) == pytest.approx(0.5)
    assert bucket.wait(0.3) == pytest.approx(0.2)
    assert bucket.wait(0.0, cost=5) == pytest.approx(1.0)   # a cost above burst: a full bucket
    assert bucket.wait(0.5) == 0.0 and bucket.allow(0.5)
