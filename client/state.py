"""What a client remembers between runs, per server and name.

``cardclient`` and ``cardbot`` keep, for each (server, name) they have played as:

* the resume token of their latest session, so that a client restarted after a
  Ctrl-C, a crash or a closed terminal takes its seats back;
* optionally a remembered login: an API token (never a password);
* the ids of the matches it last sat in, so that it can say which ones it is
  back in.

Where: ``$XDG_STATE_HOME/cardclient/`` (``~/.local/state/cardclient/`` when the
variable is unset or not an absolute path), one JSON file per (server, name)
under ``sessions/``, named by a hash of the two so that no name can reach
outside the directory. The directory is made 0700 and each file 0600; a file
is written to a temporary file beside it, flushed to disk and renamed over the
old one, so a crash leaves either the old or the new contents, never half of
either. A file that cannot be read (damaged, foreign) counts as nothing
remembered; it is replaced at the next save.

One record belongs to one running client: :class:`SessionMemory` holds an
exclusive ``flock`` on a lock file beside the record (``<hash>.lock``) while
the client runs. A second client started with the same server and name on the
same machine finds the lock taken and runs without memory: it opens a session
of its own instead of resuming (and so taking over) the first one's, and saves
nothing. The lock goes with the process, so a client killed with SIGKILL
leaves nothing that blocks the next run.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

APP = "cardclient"
VERSION = 1


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """The client's state directory (see the module docstring); not created here."""
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / APP


@dataclass(frozen=True, slots=True)
class Remembered:
    """What is remembered for one (server, name).

    Attributes:
        resume: the resume token of the latest session, or None.
        api_token: a remembered login (an API token), or None.
        matches: ids of the matches the session sat in when last saved.
    """

    server: str
    name: str
    resume: str | None = None
    api_token: str | None = None
    matches: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "server": self.server, "name": self.name,
                "resume": self.resume, "api_token": self.api_token,
                "matches": list(self.matches)}

    @classmethod
    def from_json(cls, data: Any) -> Remembered:
        """Raises: ValueError: not a file this module wrote."""
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError("not a cardclient state file")
        server, name = data.get("server"), data.get("name")
        resume, api_token = data.get("resume"), data.get("api_token")
        matches = data.get("matches", [])
        if not (isinstance(server, str) and isinstance(name, str)
                and isinstance(resume, str | None) and isinstance(api_token, str | None)
                and isinstance(matches, list) and all(isinstance(m, str) for m in matches)):
            raise ValueError("a field of the state file has the wrong type")
        return cls(server, name, resume, api_token, tuple(matches))


class ClientState:
    """The remembered state of every (server, name) under one directory.

    Raises (the writing methods):
        OSError: the directory or file cannot be written.
    """

    def __init__(self, root: Path | None = None) -> None:
        """Args: root: the state directory (default :func:`state_dir`)."""
        self.root = state_dir() if root is None else Path(root)

    def path(self, server: str, name: str) -> Path:
        """The file that holds (server, name)."""
        digest = hashlib.sha256(json.dumps([server, name]).encode("utf-8")).hexdigest()
        return self.root / "sessions" / f"{digest[:32]}.json"

    def _made_path(self, server: str, name: str) -> Path:
        """:meth:`path`, its private directories made first.

        Raises:
            OSError: they cannot be made.
        """
        path = self.path(server, name)
        _private_dir(self.root)
        _private_dir(path.parent)
        return path

    def claim(self, server: str, name: str) -> int | None:
        """Take the lock of (server, name)'s record for this process.

        Returns:
            The lock's file descriptor (close it to let go), or None when another
            client holds the lock.

        Raises:
            OSError: the lock file cannot be made (a read-only home).
        """
        lock = self._made_path(server, name).with_suffix(".lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        return fd

    def load(self, server: str, name: str) -> Remembered:
        """What is remembered for (server, name); an empty record when nothing is."""
        try:
            with open(self.path(server, name), encoding="utf-8") as handle:
                found = Remembered.from_json(json.load(handle))
        except (OSError, ValueError):
            return Remembered(server, name)
        if (found.server, found.name) != (server, name):
            return Remembered(server, name)
        return found

    def save(self, remembered: Remembered) -> None:
        """Replace what is remembered for ``remembered``'s (server, name), atomically."""
        target = self._made_path(remembered.server, remembered.name)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=target.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(remembered.to_json(), handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _fsync_dir(target.parent)

    def update(self, server: str, name: str, **changes: Any) -> Remembered:
        """Load, change the given fields (``resume``, ``api_token``, ``matches``), save.

        Returns:
            The record as saved.
        """
        if "matches" in changes:
            changes["matches"] = tuple(changes["matches"])
        new = replace(self.load(server, name), **changes)
        self.save(new)
        return new

    def forget(self, server: str, name: str) -> bool:
        """Forget everything about (server, name); True if something was remembered."""
        try:
            os.unlink(self.path(server, name))
        except FileNotFoundError:
            return False
        return True


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o700)


def _fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (best effort: not every system allows it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class SessionMemory:
    """Keeps one (server, name)'s record up to date while a client runs.

    ``remembered`` is what was there at start (the resume token to send, the
    matches to look for); :meth:`welcomed` and :meth:`seated` save as things
    change. A write that fails (a read-only home) is reported once through
    ``warn`` and the client goes on without memory.

    The record is claimed for as long as this object is open (:meth:`close`,
    or use it as a context manager; see the module docstring). When another
    running client holds it, ``warn`` says so, ``remembered`` is empty and
    nothing is saved or forgotten: this client plays a session of its own.
    """

    def __init__(self, state: ClientState, server: str, name: str, forget: bool = False,
                 warn: Callable[[str], None] | None = None) -> None:
        """Args: forget: drop what was remembered first (``--forget``)."""
        self.state = state
        self.server = server
        self.name = name
        self.warn = warn or (lambda text: None)
        self._warned = False
        self._release: Callable[[], None] = lambda: None
        self.shared = False
        try:
            lock = state.claim(server, name)
        except OSError:
            pass   # no lock without a writable home; the first save reports it
        else:
            if lock is not None:
                # let go when closed, or when this object is dropped unclosed
                self._release = weakref.finalize(self, os.close, lock)
            else:
                self.shared = True
                self._warned = True   # nothing is saved: no write can fail
                self.warn(f"another client plays as {name!r} on {server} from this "
                          "machine: this one opens a session of its own and remembers "
                          "nothing (give it another --name to keep its own)")
                self.remembered = Remembered(server, name)
                return
        if forget:
            self._try(lambda: state.forget(server, name))
        self.remembered = state.load(server, name)

    def close(self) -> None:
        """Let go of the record's lock (another client may claim it); idempotent."""
        self._release()

    def __enter__(self) -> SessionMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _try(self, action: Callable[[], Any]) -> None:
        try:
            action()
        except OSError as exc:
            if not self._warned:
                self._warned = True
                self.warn(f"cannot save the client's state in {self.state.root}: {exc}")

    def _update(self, **changes: Any) -> None:
        if self.shared:
            return

        def save() -> None:
            self.remembered = self.state.update(self.server, self.name, **changes)

        self._try(save)

    def welcomed(self, token: str | None) -> None:
        """Remember the resume token of the session just opened (None: forget it)."""
        if token != self.remembered.resume:
            self._update(resume=token)

    def seated(self, matches: Iterable[str]) -> None:
        """Remember the matches the session sits in now."""
        matches = tuple(sorted(set(matches)))
        if matches != self.remembered.matches:
            self._update(matches=matches)

    def remember_login(self, api_token: str | None) -> None:
        """Remember (or, with None, forget) an API token to log in with next time."""
        self._update(api_token=api_token)
