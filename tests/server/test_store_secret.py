"""The store holds secrets (the seeds of running matches): owner-only files, and
one lock per file whatever name it is opened by."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from server.store import Store, StoreError, lock_path
from tests.server.test_units import _war_record


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_database_wal_shm_and_lock_are_owner_only(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual umask: without care, files come out 0644
    try:
        db = tmp_path / "x.db"
        store = Store(db, exclusive=True)
        store.create_match(_war_record())  # a write: the WAL and SHM exist now
        files = [db, Path(f"{db}-wal"), Path(f"{db}-shm"), lock_path(db)]
        for path in files:
            assert path.exists(), path
            assert _mode(path) == 0o600, (path, oct(_mode(path)))
        store.close()
    finally:
        os.umask(old)


def test_an_existing_readable_store_is_tightened(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    Store(db).close()
    os.chmod(db, 0o644)
    Store(db).close()
    assert _mode(db) == 0o600


def test_a_symlink_to_a_locked_store_is_locked_too(tmp_path: Path) -> None:
    db = tmp_path / "real" / "x.db"
    first = Store(db, exclusive=True)
    (tmp_path / "link.db").symlink_to(db)
    (tmp_path / "dir").symlink_to(tmp_path / "real")
    for other in (tmp_path / "link.db", tmp_path / "dir" / "x.db",
                  tmp_path / "real" / ".." / "real" / "x.db"):
        with pytest.raises(StoreError, match="another cardserver"):
            Store(other, exclusive=True)
    first.close()
    Store(tmp_path / "link.db", exclusive=True).close()
