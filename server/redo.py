"""The store's redo log: every write's statements, appended to a file before the
write returns, so that SQLite needs to commit only now and then.

A write of :class:`server.store.Store` runs its statements inside one long SQLite
transaction and then appends them here as one record with one ``os.write``:
once that returns, the record is in the kernel's page cache, and a process crash
(SIGKILL) cannot lose it, as it could not lose a SQLite commit in WAL mode with
``synchronous=NORMAL`` (which does not survive an OS crash either). The store
commits its transaction now and then ("folds" the log), with the position of
the last record it holds, and then empties the log. Opening the store replays
every record after the folded position.

The file (``PATH-redo`` beside the database) is a sequence of records::

    length  u32 little-endian   the payload's length in bytes
    crc     u32 little-endian   zlib.crc32 of the payload
    payload msgpack             [position, [[sql, [arg, ...]], ...]]

Positions are 1, 2, 3, ... with no gaps, so that a reader sees where the file
stops being a prefix of what was written: a record whose length runs past the
end of the file or whose CRC does not match is a torn tail (a crash inside a
write), and everything from it on is dropped. The SQL is stored as text (not an
index into a table of this code's statements), so that a newer version of the
code replays an older one's log exactly.
"""

from __future__ import annotations

import logging
import os
import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack

log = logging.getLogger("cardserver.store")

#: A record's header: the payload's length and its CRC-32.
HEADER = struct.Struct("<II")

#: A record larger than this is refused when read back (a damaged length field):
#: no write of the store comes near it.
MAX_RECORD = 64 * 1024 * 1024

#: One statement as the store runs it: SQL text and its arguments.
Statement = tuple[str, Sequence[Any]]

_PACK = msgpack.Packer(use_bin_type=True).pack


def redo_path(db: Path | str) -> Path:
    """The redo log of the store at ``db``: beside the *resolved* file (as its lock
    is), so that every name of one database has the same log."""
    real = Path(os.path.realpath(db))
    return real.with_name(real.name + "-redo")


def encode(position: int, statements: Sequence[Statement]) -> bytes:
    """One record's bytes (header and payload).

    Raises:
        TypeError: an argument msgpack has no form for (the store passes only
            None, int, float, str and bytes).
        OverflowError, ValueError: an integer beyond 64 bits, a value too large.
    """
    payload = _PACK([position, statements])
    return HEADER.pack(len(payload), zlib.crc32(payload)) + payload


@dataclass(frozen=True, slots=True)
class Record:
    """One record read back: its position and statements."""

    position: int
    statements: list[tuple[str, list[Any]]]


@dataclass(frozen=True, slots=True)
class Contents:
    """What :func:`read` found: the whole records, and where they stop."""

    records: list[Record]
    #: the bytes of the whole records (the file's length when nothing is torn)
    valid: int
    #: the file's length
    size: int

    @property
    def torn(self) -> bool:
        """The file ends in bytes that are not a whole, intact record."""
        return self.valid != self.size


def read(path: Path) -> Contents:
    """Every whole record of the log at ``path`` in file order, up to the first
    torn or damaged one (a missing file: none).

    Raises:
        OSError: the file exists but cannot be read.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Contents([], 0, 0)
    records, valid = [], 0
    for end, record in _scan(data):
        records.append(record)
        valid = end
    return Contents(records, valid, len(data))


def _scan(data: bytes) -> Iterator[tuple[int, Record]]:
    """(end offset, record) for each intact record; a damaged one ends the scan."""
    offset = 0
    while offset + HEADER.size <= len(data):
        length, crc = HEADER.unpack_from(data, offset)
        start, end = offset + HEADER.size, offset + HEADER.size + length
        if length > MAX_RECORD or end > len(data):
            return
        payload = data[start:end]
        if zlib.crc32(payload) != crc:
            return
        try:
            position, statements = msgpack.unpackb(payload, raw=False)
            record = Record(int(position), [(str(sql), list(args)) for sql, args in statements])
        except (ValueError, TypeError, msgpack.UnpackException) as exc:
            log.error("redo log: a record with a good CRC does not decode (%s)", exc)
            return
        yield end, record
        offset = end


class RedoLog:
    """The append side of a store's redo log (one writer: the process that holds
    the store's lock)."""

    def __init__(self, path: Path, mode: int = 0o600) -> None:
        """Open (creating) the log at ``path`` for appending.

        Raises:
            OSError: it cannot be opened.
        """
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
        self._size = os.fstat(self._fd).st_size

    @property
    def size(self) -> int:
        """Bytes in the log (written by this process since it was last emptied)."""
        return self._size

    def append(self, position: int, statements: Sequence[Statement]) -> None:
        """Append one record with one ``os.write``; when this returns, the record is
        in the kernel's page cache (it survives the process, not the OS).

        Raises:
            OSError: it could not be written whole (disk full, I/O error); the log is
                cut back to what it held before, so that no torn record sits in front
                of later ones.
            TypeError, OverflowError, ValueError: an argument msgpack has no form
                for (:func:`encode`; nothing is written).
        """
        data = encode(position, statements)
        try:
            written = os.write(self._fd, data)
        except OSError:
            self._cut_back()
            raise
        if written != len(data):
            self._cut_back()
            raise OSError(f"redo log {self.path}: wrote {written} of {len(data)} bytes")
        self._size += written

    def _cut_back(self) -> None:
        try:
            os.ftruncate(self._fd, self._size)
        except OSError as exc:   # the reader stops at the torn record: nothing after it counts
            log.error("redo log %s: cannot cut a failed write back off (%s)", self.path, exc)

    def clear(self) -> None:
        """Empty the log (every record in it is folded into the database).

        Raises:
            OSError: it cannot be truncated (its records are then skipped when
                replayed: their positions are folded).
        """
        if self._size:
            os.ftruncate(self._fd, 0)
            self._size = 0

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
