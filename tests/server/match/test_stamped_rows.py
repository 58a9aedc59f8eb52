"""A command's journal row as the match task stores it (``Store.append_stamped``
with ``wall_timer_rows``) is the row ``Store.append`` stores for the entry stamped
with the same time and ``wall_timers``, the text of each column included."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from server.match.effects import journal_entry, wall_timer_rows, wall_timers
from server.store import JournalEntry, MatchRecord, Store, _timers_to_list

_seconds = st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False))
_lefts = st.lists(st.tuples(st.integers(0, 3), _seconds, _seconds, st.integers(0, 9)),
                  max_size=4).map(tuple)
_walls = st.floats(0, 4e9, allow_nan=False)


@given(_lefts, _walls)
def test_deadline_rows_are_the_stored_form_of_wall_timers(left, wall) -> None:
    assert wall_timer_rows(left, wall) == _timers_to_list(wall_timers(left, wall))


def _rows(store: Store) -> list[tuple[object, ...]]:
    store.journal("m1")   # inserts any waiting rows
    return store._db.execute("SELECT * FROM journal ORDER BY rowid").fetchall()


def test_a_stamped_row_is_the_row_of_the_stamped_entry(tmp_path: Path) -> None:
    left = ((0, 119.25, None, 1), (1, None, 30.5, 0))
    wall = 1_796_158_464.943565
    stores = [Store(tmp_path / "a.db", exclusive=True), Store(tmp_path / "b.db")]
    try:
        for store in stores:
            store.create_match(MatchRecord("m1", "war", {}, 1, "ab" * 16, 120, "forfeit",
                                           "active", 1.0))
        for seq in (1, 2):
            e = JournalEntry(seq, "intent", seq % 2, {"type": "flip"}, None, "seat", 0.0,
                             "2:" + "cd" * 32)
            timers = None if seq == 2 else left
            stores[0].append_stamped("m1", e, wall + seq,
                                     None if timers is None else wall_timer_rows(timers,
                                                                                wall + seq))
            stores[1].append("m1", journal_entry(
                e.seq, e.kind, e.seat, e.intent, e.reason, e.by, wall + seq, e.digest,
                None if timers is None else wall_timers(timers, wall + seq)))
        assert _rows(stores[0]) == _rows(stores[1])
    finally:
        for store in stores:
            store.close()
