"""Units of #13: peer addresses, idle-session deletion, errors cut to their limits,
request costs."""

from __future__ import annotations

from pathlib import Path

from protocol.errors import MAX_FIELD, MAX_MESSAGE, ProtocolError
from protocol.events import Error
from server.quotas import address_of
from server.ratelimit import TokenBucket, request_cost
from server.store import Store


def test_the_address_of_a_peer_is_its_host() -> None:
    assert address_of("203.0.113.7:51234") == "203.0.113.7"
    assert address_of("[2001:db8::1]:7000") == "2001:db8::1"
    assert address_of("stream") == "stream"
    assert address_of("?") == "?"


def test_idle_sessions_are_deleted_unless_kept(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    for sid, seen in (("old", 10.0), ("kept", 10.0), ("recent", 100.0)):
        store.create_session(sid, f"hash-{sid}", sid, seen)
    store.set_watcher("m1", "old", True)
    assert store.delete_idle_sessions(50.0, keep={"kept"}) == 1
    assert store.find_session("hash-old") is None
    assert store.find_session("hash-kept") is not None
    assert store.find_session("hash-recent") is not None
    assert store._db.execute("SELECT count(*) FROM watchers").fetchone()[0] == 0
    store.close()


def test_an_error_too_long_for_the_wire_is_cut_not_dropped() -> None:
    exc = ProtocolError("illegal_intent", "no such card: " + "x" * 5000,
                        "intent." + "k" * 300)
    event = exc.to_event(7)
    assert isinstance(event, Error)  # built, so validated: it can be sent
    assert len(event.message) == MAX_MESSAGE and event.message.endswith("…")
    assert len(event.field) == MAX_FIELD and event.field.startswith("intent.kkk")
    short = ProtocolError("stale", "seq 3 is not 4", "seq").to_event(1)
    assert (short.message, short.field) == ("seq 3 is not 4", "seq")


def test_a_page_of_matches_costs_by_its_size() -> None:
    assert request_cost("games", None, 50) == 1.0
    assert request_cost("matches", None, 50) == 11.0
    assert request_cost("matches", 100, 50) == 21.0
    bucket = TokenBucket(rate=1.0, burst=30, now=0.0)
    assert bucket.allow(0.0, 21.0) and not bucket.allow(0.0, 21.0)
    assert bucket.allow(0.0, 9.0) and not bucket.allow(0.0, 1.0)
    big = TokenBucket(rate=1.0, burst=10, now=0.0)
    assert big.allow(0.0, 21.0)  # a cost above the burst takes a full bucket


def test_the_listing_pages_a_sorted_cache_and_follows_changes() -> None:
    from dataclasses import dataclass

    from server.listing import MAX_AGE, Listing

    @dataclass
    class M:
        id: str
        game: str
        status: str
        created: float

        def summary(self) -> dict:
            return {"match": self.id}

    matches = {f"m{i}": M(f"m{i}", "war", "waiting" if i % 2 else "active", float(i))
               for i in range(7)}
    listing = Listing()
    seen, cursor = [], None
    while True:
        page, cursor = listing.page(matches.values(), None, None, 2, cursor, 0.0)
        seen += [m.id for m in page]
        if cursor is None:
            break
    assert seen == ["m5", "m3", "m1", "m6", "m4", "m2", "m0"]  # waiting first, newest first
    matches["m5"].status = "active"  # within MAX_AGE the order stands, the filter does not
    page, _ = listing.page(matches.values(), None, "waiting", 10, None, 0.5)
    assert [m.id for m in page] == ["m3", "m1"]
    matches["m9"] = M("m9", "war", "waiting", 9.0)
    listing.changed()  # a new match is listed at once
    page, _ = listing.page(matches.values(), None, "waiting", 10, None, 0.6)
    assert [m.id for m in page] == ["m9", "m3", "m1"]
    page, _ = listing.page(matches.values(), None, None, 3, None, 0.6 + MAX_AGE)
    assert [m.id for m in page] == ["m9", "m3", "m1"]
