"""The server's folding task (``Server._fold_store``): a fold ``--journal-fold``
seconds after the last one, whatever made that one. MockClock (autojump)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import trio

from server.app import FOLD_SLICE, Server


class _Store:
    """The store's side the task uses: ``unfolded``, ``fold()``, ``on_fold``."""

    def __init__(self, waiting: int = 0) -> None:
        self.unfolded = 0
        self.folds: list[float] = []
        self.on_fold: Any = None
        #: journal rows waiting to be inserted, and the slices asked for
        self.waiting = waiting
        self.slices: list[int] = []

    def insert_deferred(self, most: int) -> bool:
        self.slices.append(min(most, self.waiting))
        self.waiting -= min(most, self.waiting)
        return self.waiting > 0

    def fold(self) -> None:
        self.folds.append(trio.current_time())
        self.unfolded = 0
        if self.on_fold is not None:
            self.on_fold()


@asynccontextmanager
async def _folding(store: _Store) -> AsyncIterator[trio.Nursery]:
    """A nursery running the folding task of a server on ``store`` (every 0.05 s)."""
    server = SimpleNamespace(config=SimpleNamespace(journal_fold=0.05, db="x.db"),
                             store=store)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(Server._fold_store, server)
        yield nursery


async def test_a_fold_made_meanwhile_starts_the_interval_again(autojump_clock: Any) -> None:
    store = _Store()
    async with _folding(store) as nursery:
        await trio.sleep(0.01)
        store.unfolded = 1
        await trio.sleep(0.02)       # t = 0.03: a match finishes, the store folds at once
        store.unfolded = 1
        store.fold()
        store.unfolded = 1           # a write right after it
        await trio.sleep(0.1)        # the timed fold comes 0.05 after that one, not at 0.05
        await trio.sleep(0.2)        # nothing unfolded: no fold
        nursery.cancel_scope.cancel()
    assert [round(t, 3) for t in store.folds] == [0.03, 0.08]
    assert store.on_fold is None


async def test_unfolded_writes_are_folded_every_interval(autojump_clock: Any) -> None:
    store = _Store()
    async with _folding(store) as nursery:
        await trio.sleep(0.01)
        for _ in range(4):
            store.unfolded = 1
            await trio.sleep(0.05)
        nursery.cancel_scope.cancel()
    assert [round(t, 3) for t in store.folds] == [0.05, 0.1, 0.15, 0.2]


async def test_waiting_rows_are_inserted_a_slice_at_a_time_before_the_fold(
        autojump_clock: Any) -> None:
    store = _Store(waiting=2 * FOLD_SLICE + 1)
    store.unfolded = 1
    async with _folding(store) as nursery:
        await trio.sleep(0.06)
        nursery.cancel_scope.cancel()
    assert store.slices == [FOLD_SLICE, FOLD_SLICE, 1] and len(store.folds) == 1
