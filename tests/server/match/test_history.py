"""The bounded history of a match's recent events (server/event_history.py)."""

from __future__ import annotations

from server.match.history import EventHistory


def _event(seq: int) -> dict:
    return {"type": "e", "seq": seq}


def test_events_after_the_last_seen_seq_in_order() -> None:
    history = EventHistory()
    for seq in range(1, 6):
        history.add(seq, [_event(seq)])
    events, cut = history.since(2)
    assert [e["seq"] for e in events] == [3, 4, 5] and not cut
    assert history.since(5) == ([], False)


def test_forgotten_changes_are_reported_as_a_cut() -> None:
    history = EventHistory(keep=3)
    for seq in range(1, 8):
        history.add(seq, [_event(seq)])
    events, cut = history.since(2)
    assert [e["seq"] for e in events] == [5, 6, 7] and cut
    events, cut = history.since(4)
    assert [e["seq"] for e in events] == [5, 6, 7] and not cut


def test_too_many_events_keep_the_newest_and_say_so() -> None:
    history = EventHistory()
    history.add(1, [_event(i) for i in range(10)])
    events, cut = history.since(0, limit=4)
    assert [e["seq"] for e in events] == [6, 7, 8, 9] and cut


def test_a_restored_match_does_not_know_what_happened_before_the_restart() -> None:
    history = EventHistory(first_seq=40)
    history.add(41, [_event(41)])
    assert history.since(39) == ([_event(41)], True)
    assert history.since(40) == ([_event(41)], False)
    assert history.since(None) == ([], True)
