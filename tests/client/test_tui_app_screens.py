"""The whole client headless through its new screens: the connection screen (and the
exit for a host that does not resolve), the rules pages, and the end screen of a
real match against a real in-process server."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import trio
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from client.session import Backoff
from client.tui.cli import run_client
from client.tui.layout import block_text
from client.tui.model import Model
from client.tui.screen import render
from tests.client.test_tui_app import KEYS, Driver, run_scenario


def test_connection_screen_counts_down_then_q_quits(tmp_path: Path,
                                                   monkeypatch: Any) -> None:
    """A server that refuses: the screen says so, counts down, and q quits."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    attempts: list[int] = []
    seen: list[str] = []

    async def refuse() -> trio.SocketStream:
        attempts.append(1)
        raise ConnectionRefusedError(111, "Connection refused")

    async def main() -> str | None:
        with create_pipe_input() as inp:
            async def keys() -> None:
                model = holder[0]
                for _ in range(400):
                    if model.conn.attempt >= 2 and model.conn.retry_at is not None:
                        break
                    await asyncio.sleep(0.01)
                seen.append(block_text(render(model, 80, 24, model.clock())))
                inp.send_text("q")

            holder: list[Model] = []
            task: asyncio.Task[Any] | None = None

            def started(model: Model) -> None:
                nonlocal task
                holder.append(model)
                task = asyncio.ensure_future(keys())

            error = await run_client(None, None, "alice", input=inp, output=DummyOutput(),
                                     connect=refuse,
                                     backoff=Backoff(initial=0.2, maximum=0.3, jitter=0.0),
                                     on_model=started)
            if task is not None:
                await task
            return error

    error = asyncio.run(asyncio.wait_for(main(), 20))
    assert error is None  # the player quit: no error to print
    assert len(attempts) >= 2
    screen = seen[0]
    assert "attempts failed" in screen and "refused: nothing accepts connections" in screen
    assert "Next try in 0 s." in screen or "Trying again now" in screen
    assert "q or Ctrl-C quits." in screen
    assert "Games:" not in screen  # not an empty-looking lobby


def test_a_host_that_does_not_resolve_ends_the_client_with_an_error(
        tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))

    async def unknown() -> trio.SocketStream:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    async def main() -> str | None:
        with create_pipe_input() as inp:
            return await run_client("nohost.invalid", 7000, "alice", input=inp,
                                    output=DummyOutput(), connect=unknown,
                                    backoff=Backoff(initial=0.05, maximum=0.1))

    error = asyncio.run(asyncio.wait_for(main(), 20))
    assert error is not None and "unknown host: nohost.invalid does not resolve" in error


def test_a_passing_dns_failure_is_retried() -> None:
    from client.tui.runner import describe_failure

    kind, words, final = describe_failure(socket.gaierror(socket.EAI_AGAIN, "try again"),
                                          "h:1")
    assert kind == "unknown_host" and not final
    kind, _, final = describe_failure(socket.gaierror(socket.EAI_NONAME, "no"), "h:1")
    assert final
    refused = OSError("all attempts to connect to h:1 failed")
    refused.__cause__ = ExceptionGroup("x", [ConnectionRefusedError(111, "refused")])
    assert describe_failure(refused, "h:1")[0] == "refused"
    import ssl
    assert describe_failure(ssl.SSLError(1, "WRONG_VERSION_NUMBER"), "h:1")[0] == "tls"


def test_rules_pages_from_the_help_by_keys(tmp_path: Path) -> None:
    async def script(d: Driver) -> None:
        await d.press("?")
        await d.until(lambda: d.model.overlay == "help", "the help")
        assert "Keys" in d.screen()
        await d.press("right")
        await d.until(lambda: "Rules: Data Structures" in d.screen(), "the DS rules")
        assert "Aces never go on an array" in d.screen()
        await d.press(" ")
        await d.until(lambda: d.model.help_page == 1, "the second page")
        await d.press("right")
        await d.until(lambda: "War: the rules" in d.screen(), "the War rules")
        await d.press("escape")
        await d.until(lambda: d.model.overlay is None, "the help closed")

    run_scenario(tmp_path, script)


async def create_war(d: Driver, cap: str, bot: str | None = None) -> None:
    """Create a War match with the battle cap ``cap`` (typed) through the form."""
    await d.press("c")
    await d.until(lambda: d.model.overlay == "form", "the create form")
    await d.cycle("right", lambda: d.model.form.fields[0]["value"], "war", "the game")
    names = [f["name"] for f in d.model.form.fields]
    await d.cycle("down", lambda: d.model.form.focus, names.index("cap"), "the cap")
    await d.press(*cap)
    if bot is not None:
        await d.cycle("down", lambda: d.model.form.focus, names.index("bot"), "the opponent")
        await d.cycle("right", lambda: d.model.form.fields[d.model.form.focus]["value"], bot,
                      "the bot")
    await d.press("enter")


def test_end_screen_of_a_real_war_then_rematch_and_lobby(tmp_path: Path) -> None:
    async def script(d: Driver) -> None:
        await create_war(d, "3")  # cap 3 battles, an open seat
        await d.until(lambda: d.mv is not None and d.mv.snapshot is not None, "the match")
        assert d.mv.snapshot["status"] == "waiting"
        # a second player joins; then flip until the cap ends it
        done: list[dict[str, Any]] = []
        from tests.client.test_tui_app import other_player
        d.bridge.submit(lambda: other_player(
            d, "bob", {"type": "join", "match": d.mv.match}, done, flips=True))
        await d.until(lambda: d.mv.snapshot.get("status") == "active", "the start")
        for _ in range(60):
            if d.mv.finished:
                break
            if d.my_move():
                await d.press("f")
            await asyncio.sleep(0.05)
        await d.until(lambda: d.mv.finished, "the end of the match")
        out = d.screen()
        assert "GAME OVER" in out and "battles (cap 3)" in out, out
        assert "verified: sha256(seed + salt) equals the commitment" in out
        assert "verified: the opening position you were shown" in out
        old = d.mv.match
        await d.press("escape")
        await d.until(lambda: "Last battle" in d.screen(), "the board")
        await d.press("escape")
        await d.until(lambda: "GAME OVER" in d.screen(), "the end screen again")
        await d.press("r")
        await d.until(lambda: d.model.current not in (None, old), "the rematch")
        assert d.mv.snapshot is None or d.mv.snapshot.get("options", {}).get("cap") == 3
        await d.press(KEYS["tab"])
        await d.until(lambda: d.model.screen == "lobby", "the lobby")
        await d.until(lambda: any(m.get("match") == d.model.current for m in d.model.matches),
                      "the rematch listed")
        rows = d.model.lobby_rows()
        assert rows[d.model.lobby_cursor].get("match") == d.model.current  # cursor follows

    run_scenario(tmp_path, script)


def test_replay_viewer_from_the_end_screen_by_keys(tmp_path: Path) -> None:
    """A War match against the server's bot, fast-forwarded (F: the bot agrees), then
    its replay: step, go to a move, the end, play, as the own seat saw it, back."""
    async def script(d: Driver) -> None:
        await create_war(d, "60", bot="random")
        await d.until(lambda: d.mv is not None and d.mv.snapshot is not None
                      and d.mv.snapshot.get("status") == "active", "the match")
        await d.press("F")
        await d.until(lambda: d.mv.finished, "the fast-forwarded end")
        assert any(line.startswith("fast-forward: battles") for line in d.mv.log)
        total = d.mv.snapshot["seq"]
        await d.press("p")
        await d.until(lambda: d.model.screen == "replay" and d.model.replay.total == total,
                      "the replay viewer")
        assert f"move 0/{total}" in d.screen()
        assert d.model.replay.seat == d.mv.seat  # a seat's own match: as that seat saw it
        await d.press("right", "right", "right")
        await d.until(lambda: d.model.replay.position == 3, "three moves on")
        assert "3. " in d.screen()
        await d.press("g", "5", "5", "enter")
        await d.until(lambda: d.model.replay.position == 55, "move 55 (a second page)")
        await d.press("left")
        await d.until(lambda: d.model.replay.position == 54, "one back")
        await d.press("+", "+", "+", "+", " ")
        await d.until(lambda: d.model.replay.position > 56, "playing")
        await d.press(" ")
        await d.press("\x1b[F")  # End
        await d.until(lambda: d.model.replay.position == total, "the end")
        assert "the end: " in d.screen()
        await d.press("v")
        await d.until(lambda: d.model.replay.seat is None, "as a spectator saw it")
        assert "as a spectator saw it" in d.screen()
        await d.press("escape")
        await d.until(lambda: d.model.screen == "match", "back to the end screen")
        assert "GAME OVER" in d.screen()
        # the lobby's history lists every stored finished match; Enter replays it
        match = d.mv.match
        await d.press("tab")
        await d.until(lambda: d.model.screen == "lobby", "the lobby")
        await d.press("h")
        await d.until(lambda: d.model.overlay == "history", "the history")
        assert match in d.screen() and "Finished matches" in d.screen()
        assert "random (bot) won" in d.screen() or "alice won" in d.screen() or \
            "draw" in d.screen()
        await d.press("enter")
        await d.until(lambda: d.model.screen == "replay" and d.model.replay.match == match,
                      "its replay from the lobby")
        assert d.model.replay.seat is not None  # one of ours: as our seat saw it
        await d.press("escape")
        await d.until(lambda: d.model.screen == "lobby", "back in the lobby")

    run_scenario(tmp_path, script)


def test_create_form_choices_are_kept_between_runs(tmp_path: Path, monkeypatch: Any) -> None:
    from client.tui import form as form_fns
    from client.tui import prefs
    from engine.registry import get_game

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert prefs.load() == {}
    games = [get_game(g).describe() for g in ("datastructures", "war")]
    memory: dict[str, Any] = {}
    form = form_fns.new_form(games, "war")
    form.fields[[f["name"] for f in form.fields].index("short_war")]["value"] = "lose"
    form_fns.remember(form, memory)
    prefs.save(memory)
    assert (tmp_path / "cardclient" / "create.json").exists()
    again = form_fns.new_form(games, "war", prefs.load())
    assert {f["name"]: f["value"] for f in again.fields}["short_war"] == "lose"
    (tmp_path / "cardclient" / "create.json").write_text("not json")
    assert prefs.load() == {}  # an unreadable file is an empty memory
