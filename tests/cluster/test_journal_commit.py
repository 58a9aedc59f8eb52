"""AwaitedCommit (cluster mode's group commit) without Redis: one journal call per pass
for every match, nothing carried out before it answers, refused items rolled back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import trio
import trio.testing

from server.match.commit import AwaitedCommit, Pending
from server.match.effects import Effects, SaveTimers


@dataclass
class FakeBatch:
    match_id: str
    outcome: str = ""


@dataclass
class FakeJournal:
    """Answers each batch from ``answers`` (match id -> outcome) after ``delay``."""

    answers: dict[str, str]
    delay: float = 0.01
    calls: list[list[str]] = field(default_factory=list)

    async def commit(self, batches: list[FakeBatch]) -> None:
        self.calls.append([b.match_id for b in batches])
        await trio.sleep(self.delay)
        for b in batches:
            b.outcome = self.answers.get(b.match_id, "ok")


@dataclass
class FakeMatch:
    id: str
    uncommitted: bool = False
    #: when its core began the latest command (the commit reads it for its metrics)
    began: float = 0.0
    carried: list[Effects] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    done: list[Effects] = field(default_factory=list)

    def journal_batch(self, fx: Effects) -> FakeBatch:
        return FakeBatch(self.id)

    def committed(self, fx: Effects) -> None:
        self.done.append(fx)

    def commit_refused(self, item: Pending) -> bool:
        self.refused.append(item.outcome)
        return False

    def carry_out(self, fx: Effects) -> None:
        self.deliver(fx)
        self.settle(fx)

    def deliver(self, fx: Effects) -> None:
        self.carried.append(fx)

    def settle(self, fx: Effects) -> None:
        pass

    def store_write(self, store: Any, write: Any) -> None:
        raise AssertionError("cluster mode writes nothing to the store")

    def commit_writes(self, writes: Any, session: Any, command: Any) -> bool:
        raise AssertionError("cluster mode writes nothing to the store")


def effects() -> Effects:
    return Effects(writes=[SaveTimers(0, ())])


async def test_one_pass_of_every_match_is_one_journal_call(nursery: trio.Nursery) -> None:
    journal = FakeJournal({"b": "fenced", "c": "unavailable"})
    commits = AwaitedCommit(None, journal)  # type: ignore[arg-type]
    nursery.start_soon(commits.run)
    await trio.testing.wait_all_tasks_blocked()
    matches = [FakeMatch(m) for m in "abc"]
    for match in matches:
        commits.submit(match, None, None, effects())  # type: ignore[arg-type]
        assert match.uncommitted and not match.carried
    await trio.testing.wait_all_tasks_blocked()
    assert journal.calls == [["a", "b", "c"]]
    assert not any(m.carried for m in matches)  # Redis has not answered yet
    await commits.settle(matches[0])  # type: ignore[arg-type]
    a, b, c = matches
    assert len(a.carried) == 1 and len(a.done) == 1 and not a.refused
    assert not b.carried and b.refused == ["fenced"]
    assert not c.carried and c.refused == ["unavailable"]
    assert not any(m.uncommitted for m in matches)
    assert commits.batches == 1 and commits.commands == 3


async def test_what_arrives_during_a_round_trip_is_the_next_batch(nursery: trio.Nursery) -> None:
    journal = FakeJournal({}, delay=0.05)
    commits = AwaitedCommit(None, journal)  # type: ignore[arg-type]
    nursery.start_soon(commits.run)
    await trio.testing.wait_all_tasks_blocked()
    first, second, third = FakeMatch("a"), FakeMatch("b"), FakeMatch("c")
    commits.submit(first, None, None, effects())  # type: ignore[arg-type]
    await trio.sleep(0.01)
    commits.submit(second, None, None, effects())  # type: ignore[arg-type]
    commits.submit(third, None, None, Effects())  # type: ignore[arg-type]
    await commits.settle(first)  # type: ignore[arg-type]
    assert journal.calls == [["a"], ["b"]]  # c wrote nothing: it needs no script
    assert len(first.carried) == 1 and not second.carried
    ok = await commits.commit(first, None, None, effects())  # type: ignore[arg-type]
    assert ok and journal.calls == [["a"], ["b"], ["a"]]
    assert len(third.carried) == 1 and len(second.carried) == 1 and len(first.carried) == 2
