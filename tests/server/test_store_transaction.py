"""``Store.transaction``: the writes of a ``with`` block commit together at its end,
all or nothing; a block inside another is part of the outer one."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.store import JournalEntry, MatchRecord, Store, StoreError


def _row(seq: int) -> JournalEntry:
    return JournalEntry(seq, "intent", seq % 2, {"type": "flip"}, None, "seat", float(seq),
                        "ab" * 32)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "t.db", exclusive=True, hold_file=True)
    store.create_match(MatchRecord("m1", "war", {}, 1, "ab" * 16, 0, "forfeit", "active", 1.0))
    return store


def _seqs(store: Store) -> list[int]:
    return [e.seq for e in store.journal("m1")]


def test_the_writes_of_a_block_commit_at_its_end(store: Store) -> None:
    with store.transaction():
        store.append("m1", _row(1))
        with store.transaction():   # part of the outer one
            store.append("m1", _row(2))
        assert _seqs(store) == []   # nothing yet
    assert _seqs(store) == [1, 2]


def test_a_block_that_raises_stores_nothing(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        store.append("m1", _row(1))
        with store.transaction():
            store.append("m1", _row(2))
        raise RuntimeError("the caller failed")
    assert _seqs(store) == []
    store.append("m1", _row(1))   # the store goes on
    assert _seqs(store) == [1]


def test_a_refused_row_rolls_the_whole_transaction_back(store: Store) -> None:
    store.append("m1", _row(1))
    with pytest.raises(StoreError), store.transaction():
        store.append("m1", _row(2))
        store.append("m1", _row(1))   # a duplicate seq
    assert _seqs(store) == [1]
    with store.transaction():
        store.append("m1", _row(2))
    assert _seqs(store) == [1, 2]
