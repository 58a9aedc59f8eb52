"""The client's remembered state (client/state.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from client.state import ClientState, Remembered, SessionMemory, state_dir


def test_state_dir_follows_xdg() -> None:
    assert state_dir({"XDG_STATE_HOME": "/tmp/x"}) == Path("/tmp/x/cardclient")
    home = Path.home() / ".local" / "state" / "cardclient"
    assert state_dir({}) == home
    assert state_dir({"XDG_STATE_HOME": "relative/dir"}) == home


def test_round_trip_per_server_and_name(tmp_path: Path) -> None:
    state = ClientState(tmp_path / "st")
    assert state.load("a:1", "alice") == Remembered("a:1", "alice")
    state.update("a:1", "alice", resume="tok", matches=["m1", "m2"])
    state.update("a:1", "bob", resume="tok2")
    state.update("b:1", "alice", api_token="cst_x")
    assert state.load("a:1", "alice") == Remembered("a:1", "alice", "tok", None, ("m1", "m2"))
    assert state.load("a:1", "bob").resume == "tok2"
    assert state.load("b:1", "alice") == Remembered("b:1", "alice", None, "cst_x")
    state.update("a:1", "alice", matches=[])
    assert state.load("a:1", "alice").resume == "tok"
    assert state.forget("a:1", "alice") and not state.forget("a:1", "alice")
    assert state.load("a:1", "alice").resume is None
    assert state.load("a:1", "bob").resume == "tok2"


def test_files_are_private_and_writes_leave_no_litter(tmp_path: Path) -> None:
    state = ClientState(tmp_path / "st")
    for i in range(3):
        state.update("h:1", "../../etc/passwd", resume=f"t{i}")
    path = state.path("h:1", "../../etc/passwd")
    assert path.parent.parent == tmp_path / "st"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "st").stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert os.listdir(path.parent) == [path.name]


def test_a_damaged_file_counts_as_nothing(tmp_path: Path) -> None:
    state = ClientState(tmp_path)
    state.update("h:1", "alice", resume="t")
    path = state.path("h:1", "alice")
    for junk in ("{", "[]", '{"version": 1, "server": "h:1", "name": "alice", "resume": 5}',
                 '{"version": 1, "server": "other", "name": "alice"}'):
        path.write_text(junk)
        assert state.load("h:1", "alice") == Remembered("h:1", "alice")
    state.update("h:1", "alice", resume="t2")
    assert state.load("h:1", "alice").resume == "t2"


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = ClientState(tmp_path)
    state.update("h:1", "alice", resume="old")

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        state.update("h:1", "alice", resume="new")
    monkeypatch.undo()
    assert state.load("h:1", "alice").resume == "old"
    assert os.listdir(state.path("h:1", "alice").parent) == [state.path("h:1", "alice").name]


def test_one_running_client_claims_a_record(tmp_path: Path) -> None:
    state = ClientState(tmp_path / "st")
    state.update("h:1", "robo", resume="tok", matches=["m1"])
    warnings: list[str] = []
    first = SessionMemory(state, "h:1", "robo", warn=warnings.append)
    assert first.remembered.resume == "tok" and not first.shared and not warnings
    # a second client with the same server and name: no memory, no saves, no forget
    with SessionMemory(state, "h:1", "robo", forget=True, warn=warnings.append) as second:
        assert second.shared and second.remembered == Remembered("h:1", "robo")
        assert len(warnings) == 1 and "another client plays as 'robo'" in warnings[0]
        second.welcomed("other-token")
        second.seated(["m2"])
        second.remember_login("cst_x")
        assert state.load("h:1", "robo") == Remembered("h:1", "robo", "tok", None, ("m1",))
        # another name, or another server, is a record of its own
        with SessionMemory(state, "h:1", "rob", warn=warnings.append) as other:
            assert not other.shared
    first.welcomed("tok2")
    assert state.load("h:1", "robo").resume == "tok2"
    first.close()
    first.close()   # idempotent
    with SessionMemory(state, "h:1", "robo") as third:
        assert not third.shared and third.remembered.resume == "tok2"


def test_a_dropped_memory_lets_go_of_its_claim(tmp_path: Path) -> None:
    state = ClientState(tmp_path / "st")
    SessionMemory(state, "h:1", "robo")   # never closed, dropped at once
    assert not SessionMemory(state, "h:1", "robo").shared


def test_a_claim_without_a_writable_home_is_no_claim(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("a file where the state directory would go")  # even root cannot mkdir
    warnings: list[str] = []
    memory = SessionMemory(ClientState(home / "st"), "h:1", "robo", warn=warnings.append)
    assert not memory.shared and memory.remembered.resume is None and not warnings
    memory.welcomed("tok")
    assert len(warnings) == 1 and "cannot save" in warnings[0]
    memory.welcomed("tok2")
    assert len(warnings) == 1   # reported once
