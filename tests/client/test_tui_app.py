"""The whole client headless: prompt_toolkit app (pipe input, DummyOutput), trio as a
guest on its asyncio loop, driven by key presses against a real in-process server.

Each test is a plain function running one asyncio loop: the server and the
client's connection share one trio guest run on it, exactly as `cardclient`
hosts its connection.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import trio
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from client.session import Backoff, failover_connector
from client.tui import selection as sel
from client.tui.app import build_app
from client.tui.controller import Controller
from client.tui.layout import block_text
from client.tui.model import Model
from client.tui.runner import TrioBridge, network_main, run_with_trio_guest
from client.tui.screen import render
from server.app import serve
from server.config import ServerConfig
from tests.server.helpers import free_port

KEYS = {"enter": "\r", "down": "\x1b[B", "up": "\x1b[A", "right": "\x1b[C", "left": "\x1b[D",
        "tab": "\t", "escape": "\x1b"}
WAIT = 20.0


class Driver:
    """Types keys into the app and waits for the model to reach a state."""

    def __init__(self, inp: Any, model: Model, app: Any, bridge: TrioBridge,
                 streams: list[trio.SocketStream]) -> None:
        self.inp = inp
        self.model = model
        self.app = app
        self.bridge = bridge
        self.streams = streams

    async def press(self, *keys: str) -> None:
        for key in keys:
            self.inp.send_text(KEYS.get(key, key))
            await asyncio.sleep(0.08 if key == "escape" else 0.02)

    async def until(self, pred: Callable[[], Any], what: str, timeout: float = WAIT) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not pred():
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{self.screen()}")
            await asyncio.sleep(0.01)

    async def cycle(self, key: str, value: Callable[[], Any], want: Any, what: str) -> None:
        """Press ``key`` one at a time (each press seen to take effect) until ``value()``
        is ``want``."""
        for _ in range(12):
            now = value()
            if now == want:
                return
            await self.press(key)
            await self.until(lambda now=now: value() != now, f"{key} to change {what}")
        raise AssertionError(f"{what} never became {want!r}")

    def screen(self, cells: int = 80, rows: int = 24) -> str:
        return block_text(render(self.model, cells, rows))

    @property
    def mv(self) -> Any:
        return self.model.view

    @property
    def view(self) -> dict[str, Any]:
        return ((self.mv.snapshot if self.mv else None) or {}).get("view") or {}

    def my_move(self) -> bool:
        mv = self.mv
        return bool(mv and mv.legal and not mv.pending)


def run_scenario(tmp_path: Path, script: Callable[[Driver], Awaitable[None]],
                 fail_first: int = 0, failover: bool = False, **config: Any) -> None:
    """Start a server and the client in one trio guest run on asyncio, run ``script``.

    ``fail_first``: the client's first N connection attempts fail (server unreachable).
    ``failover``: the client is given two addresses, as ``cardclient connect a,b``
    connects: the first server's and a second one's, where ``d.restart`` starts the
    next server (instead of on a new port, which the client would not know).
    """
    settings: dict[str, Any] = dict(host="127.0.0.1", port=0, db=tmp_path / "tui.db",
                                    turn_timer=0, grace=30.0, shutdown_timeout=0.2,
                                    bot_time_budget=0.01, auto_flip_delay=0.0)
    settings.update(config)
    cfg = ServerConfig(**settings)
    model = Model(name="alice", color=True)
    said: list[str] = []
    plain_say = model.say

    def say(text: str, *, error: bool = False) -> None:
        said.append(text)
        plain_say(text, error=error)

    model.say = say  # type: ignore[method-assign]  # record every notice shown
    bridge = TrioBridge()
    controller = Controller(model, submit=bridge.submit)
    streams: list[trio.SocketStream] = []
    failure: list[BaseException] = []
    attempts: list[str] = []
    ports: list[int] = []
    restarts: list[Callable[[Path], Awaitable[None]]] = []

    async def main() -> None:
        with create_pipe_input() as inp:
            app = build_app(controller, input=inp, output=DummyOutput())

            async def trio_side() -> None:
                async with trio.open_nursery() as nursery:
                    ended: list[trio.Event] = []

                    async def serve_until_closed(config: ServerConfig,
                                                 task_status: Any = trio.TASK_STATUS_IGNORED
                                                 ) -> None:
                        ended.append(trio.Event())
                        done = ended[-1]
                        try:
                            await serve(config, task_status=task_status)
                        finally:
                            done.set()  # the store is closed (and unlocked) by now

                    servers = [await nursery.start(serve_until_closed, cfg)]
                    ports.append(servers[0].port)

                    async def restart(db: Path) -> None:
                        """Stop the server; start another on a new port with store ``db``."""
                        servers[-1].shutdown()
                        await ended[-1].wait()
                        again = replace(cfg, db=db, port=spare if failover else 0)
                        servers.append(await nursery.start(serve_until_closed, again))
                        ports.append(servers[-1].port)

                    restarts.append(restart)

                    spare = free_port()

                    async def connect() -> trio.SocketStream:
                        if len(attempts) < fail_first:
                            attempts.append("refused")
                            raise ConnectionRefusedError("connection refused (test)")
                        attempts.append("ok")
                        stream = await trio.open_tcp_stream("127.0.0.1", ports[-1])
                        streams.append(stream)
                        return stream

                    if failover:
                        connect = failover_connector(  # type: ignore[assignment]
                            [f"127.0.0.1:{ports[0]}", f"127.0.0.1:{spare}"])
                    await network_main(controller, bridge, None, None, "alice", connect=connect,
                                       backoff=Backoff(initial=0.05, maximum=0.2),
                                       ping_interval=0.5)

            async def drive() -> None:
                driver = Driver(inp, model, app, bridge, streams)
                driver.attempts, driver.ports, driver.said = attempts, ports, said
                driver.restart = lambda db: bridge.submit(lambda: restarts[0](db))
                try:
                    await driver.until(lambda: app.is_running, "the app to start")
                    await driver.until(lambda: model.conn.state == "connected" and model.games,
                                       "connected with the game list")
                    await script(driver)
                except BaseException as exc:
                    failure.append(exc)
                finally:
                    app.exit()

            task = asyncio.ensure_future(drive())
            await run_with_trio_guest(app, trio_side)
            await task

    asyncio.run(asyncio.wait_for(main(), 40))
    if failure:
        raise failure[0]


async def create_vs_bot(d: Driver, game: str) -> None:
    """Create a match against the server's random bot through the create form."""
    await d.press("c")
    await d.until(lambda: d.model.overlay == "form", "the create form")
    await d.cycle("right", lambda: d.model.form.fields[0]["value"], game, "the game")
    labels = [f["label"] for f in d.model.form.fields]
    await d.cycle("down", lambda: d.model.form.focus, labels.index("opponent"), "the focus")
    await d.cycle("right", lambda: d.model.form.fields[d.model.form.focus]["value"], "random",
                  "the opponent")
    assert re.search(r"> opponent +< the server.s random bot >", d.screen()), d.screen()
    await d.press("enter")
    await d.until(lambda: d.mv is not None and d.mv.snapshot is not None
                  and d.mv.snapshot.get("status") == "active", "the match to start")


def test_lobby_then_a_whole_data_structures_turn_by_keys(tmp_path: Path) -> None:
    async def script(d: Driver) -> None:
        assert "Games: datastructures, war" in d.screen()
        assert "connected" in d.screen().splitlines()[-1]
        await create_vs_bot(d, "datastructures")
        await d.until(d.my_move, "my turn")
        out = d.screen()
        assert "YOUR TURN" in out and "phase 1: play" in out
        turn = d.view["turn"]
        me = d.mv.seat
        legal = d.mv.legal
        if any(i["type"] == "mulligan" for i in legal):
            # no play possible: the mulligan is the phase-1 move (D6)
            keep = next(i for i in legal if i["type"] == "mulligan")["keep"]
            await d.press("m", str(keep + 1))
            await d.until(lambda: d.view.get("phase") == "discard", "phase 2 after mulligan")
        else:
            src = sel.sources(legal)[0]
            key = {"hand": lambda s: str(s[1] + 1), "queue": lambda s: "h",
                   "stack": lambda s: "t" if s[1] == me else "o"}[src[0]](src)
            target = sel.targets(legal, src)[0]
            seq = d.mv.snapshot["seq"]
            await d.press(key)
            await d.until(lambda: d.model.selection == src, "the source selected")
            assert f"-> target [{target[1] + 1}" in d.screen()
            await d.press(str(target[1] + 1))
            await d.until(lambda: d.mv.snapshot["seq"] > seq, "the play to be accepted")
            assert any(line.startswith("you took ") and f"onto array {target[1] + 1}" in line
                       for line in d.mv.log), list(d.mv.log)
            await d.until(d.my_move, "my move again")
            await d.press("e")
            await d.until(lambda: d.view.get("phase") == "discard", "phase 2")
        await d.until(d.my_move, "the stack choice")
        assert "phase 2" in d.screen()
        if d.view["stack_owed"]:
            await d.press("1")
            assert ("mystack",) in sel.targets(d.mv.legal, ("hand", 0))
            await d.until(lambda: "stack *s" in d.screen(), "the own stack offered")
            depth = len(d.view["players"][me]["stack"])
            await d.press("s")
            await d.until(lambda: len(d.view["players"][me]["stack"]) == depth + 1,
                          "the stack card")
        await d.until(d.my_move, "enqueue or end turn")
        if any(i["type"] == "enqueue" for i in d.mv.legal):
            qlen = len(d.view["queue"])
            await d.press("1", "q")
            await d.until(lambda: len(d.view["queue"]) == qlen + 1, "the enqueued card")
            await d.until(d.my_move, "end turn")
        await d.press("e")
        await d.until(lambda: d.view.get("turn", 0) >= turn + 1, "the turn to end")
        assert any("ends the turn" in line or "end the turn" in line for line in d.mv.log)
        # the bot plays its turn and it is ours again
        await d.until(lambda: d.view.get("turn", 0) >= turn + 2 and d.my_move(),
                      "the bot's turn to pass")
        # the numbered list plays any legal intent too
        await d.press("l")
        await d.until(lambda: "Legal moves" in d.screen(), "the numbered list")
        n = len(d.mv.legal)
        end = next(i for i, x in enumerate(d.mv.legal, 1) if x["type"] == "end_phase")
        await d.press(*str(end), "enter")
        await d.until(lambda: d.view.get("phase") == "discard", "end_phase from the list")
        assert re.search(r"timer \d+s", d.screen())  # the turn timer runs (turn_timer=120)
        assert n > 0
        # the stacks overlay and the help overlay open and close
        await d.press("v")
        await d.until(lambda: "stack, bottom to top" in d.screen(), "the stacks overlay")
        await d.press("escape")
        await d.until(lambda: d.model.overlay is None, "the overlay to close")
        await d.press("?")
        await d.until(lambda: "Keys" in d.screen() and "Ctrl-C" in d.screen(), "the help")
        await d.press("x")  # any key closes the help
        await d.until(lambda: d.model.overlay is None, "the help to close")
        # back to the lobby with the seat kept, and a server error in words
        await d.press("tab")
        await d.until(lambda: d.model.screen == "lobby" and d.model.matches, "the lobby")
        assert "running" in d.screen() and "bot" in d.screen()
        await d.press("j")
        await d.until(lambda: "[already_seated]" in d.model.notice
                      or "[seat_taken]" in d.model.notice, "the server's error in words")
        assert "Traceback" not in d.screen()
        await d.press("tab")
        await d.until(lambda: d.model.screen == "match", "back in the match")
        # leave the running match: x twice resigns it
        await d.press("x")
        await d.until(lambda: "press x again" in d.model.notice, "the confirmation")
        await d.press("x")
        await d.until(lambda: d.model.screen == "lobby" and not d.model.views, "left the match")

    run_scenario(tmp_path, script, turn_timer=120)


async def flip_until(d: Driver, done: Callable[[], bool], what: str) -> None:
    """Press f whenever it is our flip until ``done()`` (a war takes several flips)."""
    for _ in range(30):
        if done():
            return
        await d.until(lambda: d.my_move() or done(), f"my flip ({what})")
        if not done():
            seq = d.mv.snapshot["seq"]
            await d.press("f")
            await d.until(lambda seq=seq: d.mv.snapshot["seq"] > seq or done(),
                          "the flip to be taken")
    raise AssertionError(f"{what}: not reached after 30 flips")


def test_war_battle_flip_auto_flip_and_reconnect(tmp_path: Path) -> None:
    async def script(d: Driver) -> None:
        await create_vs_bot(d, "war")
        await d.until(d.my_move, "my flip")
        assert "your flip: press f" in d.screen()
        await flip_until(d, lambda: d.view.get("battles", 0) >= 1, "the first battle")
        out = d.screen()
        assert "Last battle #1:" in out
        assert any(line.startswith("battle 1:") for line in d.mv.log)
        counts = d.view["counts"]
        assert sum(counts) + sum(len(t) for t in d.view["table"]) == 52
        assert f"deck: {counts[0]} cards" in out and f"deck: {counts[1]} cards" in out
        # the connection drops: the client says so, resumes with its token, and goes on
        battles = d.view["battles"]
        d.bridge.submit(d.streams[-1].aclose)
        await d.until(lambda: "reconnected" in d.model.notice, "the reconnection")
        assert "connection lost: reconnecting by itself..." in d.said
        assert len(d.streams) >= 2
        assert d.model.conn.state == "connected"
        await flip_until(d, lambda: d.view.get("battles", 0) > battles,
                         "a battle after reconnecting")
        # auto-flip: the server flips for us
        await d.press("a")
        await d.until(lambda: d.mv.snapshot.get("auto_flip"), "auto-flip on")
        await d.until(lambda: "Auto-flip: on" in d.screen(), "auto-flip on, on screen")
        done = d.view["battles"]
        await d.until(lambda: d.view.get("battles", 0) >= done + 3, "auto-flipped battles")
        await d.press("a")
        await d.until(lambda: not d.mv.snapshot.get("auto_flip"), "auto-flip off")
        await d.until(lambda: d.model.conn.rtt is not None, "a round-trip time")
        assert " ms" in d.screen().splitlines()[-1]

    run_scenario(tmp_path, script)


async def other_player(d: Driver, name: str, first: dict[str, Any],
                       ready: list[dict[str, Any]], flips: bool = False) -> None:
    """A second player over client.session (in the same trio run): sends ``first`` and
    stays connected; its reply goes to ``ready``. With ``flips`` it plays the first
    legal intent of every snapshot (a War opponent that flips)."""
    from client.session import ServerError, open_session

    async with open_session("127.0.0.1", d.ports[0], name=name) as session:
        ready.append(await session.request(first))
        if not flips:
            await trio.sleep_forever()
        async for push in session.pushes:
            if push.get("type") == "snapshot" and push.get("legal"):
                try:
                    await session.request({"type": "intent", "match": push["match"],
                                           "seq": push["seq"], "intent": push["legal"][0]})
                except ServerError:
                    pass  # stale or finished: the next snapshot says


def test_unreachable_server_then_watch_and_matchmaking(tmp_path: Path) -> None:
    async def script(d: Driver) -> None:
        assert d.attempts[:2] == ["refused", "refused"]
        assert "cannot reach" not in d.model.notice  # the error is gone once connected
        assert any(x.startswith("cannot reach the server (refused: nothing accepts "
                                "connections on in-process)")
                   for x in d.said), d.said
        # a match someone else plays against a bot: watch it from the lobby
        made: list[dict[str, Any]] = []
        d.bridge.submit(lambda: other_player(
            d, "carol", {"type": "create", "game": "war", "bot": "random"}, made))
        await d.until(lambda: made, "carol's match")
        await d.press("r")
        await d.until(lambda: any(m.get("status") == "active" for m in d.model.matches),
                      "the running match in the lobby")
        assert re.search(r">  \S+\s+War\s+running\s+carol", d.screen())
        await d.press("enter")  # a running match opens as a spectator
        await d.until(lambda: d.mv is not None and d.mv.snapshot is not None, "the match")
        assert d.mv.seat is None
        out = d.screen()
        assert "Watching" in out and "(watching)" in out.splitlines()[-1]
        await d.press("f")
        await d.until(lambda: "spectators cannot flip" in d.model.notice, "the refusal")
        await d.press("x")  # a spectator leaves at once
        await d.until(lambda: d.model.screen == "lobby" and not d.model.views, "stop watching")
        # matchmaking: queue for Data Structures; dave queues too and we are paired
        await d.press("m")
        await d.until(lambda: "Queue for matchmaking" in d.screen(), "the queue picker")
        await d.cycle("down", lambda: d.model.games[d.model.queue_pick]["name"],
                      "datastructures", "the game to queue for")
        await d.press("enter")
        await d.until(lambda: d.model.queued == "datastructures", "the queue")
        await d.until(lambda: d.model.queues.get("datastructures") == 1, "the queue count")
        assert "You are queued for datastructures" in d.screen()
        assert "datastructures: 1 waiting" in d.screen()
        paired: list[dict[str, Any]] = []
        d.bridge.submit(lambda: other_player(
            d, "dave", {"type": "queue", "game": "datastructures"}, paired))
        await d.until(lambda: d.model.screen == "match" and d.mv is not None
                      and d.mv.snapshot is not None, "the paired match")
        assert d.model.queued is None
        assert d.mv.game == "datastructures" and d.mv.seat in (0, 1)
        assert "dave" in d.screen()

    run_scenario(tmp_path, script, fail_first=2)


def test_a_view_that_cannot_be_drawn_is_reported_not_raised() -> None:
    from client.tui.model import apply_message

    model = Model(name="alice")
    apply_message(model, {"type": "snapshot", "match": "m1", "game": "datastructures",
                          "seq": 1, "seat": 0, "view": {"players": 5, "queue": 3},
                          "legal": [], "status": "active", "events": [], "players": []})
    with create_pipe_input() as inp:
        app = build_app(Controller(model), input=inp, output=DummyOutput())
        control = app.layout.container.content
        out = "".join(text for _, text in control.text())
    assert "cannot draw this screen" in out


def test_server_restart_resumes_or_drops_back_to_the_lobby(tmp_path: Path) -> None:
    async def script(d: Driver) -> None:
        await create_vs_bot(d, "war")
        await flip_until(d, lambda: d.view.get("battles", 0) >= 1, "a battle")
        battles = d.view["battles"]
        match = d.mv.match
        # the same store: the session resumes and the match goes on where it was
        d.restart(tmp_path / "tui.db")
        await d.until(lambda: len(d.ports) == 2, "the restarted server")
        await d.until(lambda: d.model.conn.state == "connected" and "reconnected" in d.model.notice,
                      "the resumed session")
        assert "connection lost: reconnecting by itself..." in d.said
        assert d.mv.match == match and d.view["battles"] >= battles
        await flip_until(d, lambda: d.view.get("battles", 0) > battles, "a battle after resume")
        # a fresh store: the token is unknown, a new session starts in the lobby
        d.restart(tmp_path / "fresh.db")
        await d.until(lambda: len(d.ports) == 3, "the fresh server")
        await d.until(lambda: d.model.screen == "lobby" and not d.model.views
                      and d.model.conn.state == "connected", "a new session in the lobby")
        assert any("no longer knew this session" in x for x in d.said), d.said
        await d.press("r")
        await d.until(lambda: d.model.matches == [], "the fresh server's empty lobby")

    run_scenario(tmp_path, script)


def test_failover_names_the_node_the_session_resumed_on(tmp_path: Path) -> None:
    """Given two addresses, the client resumes on the second when the first is gone, and
    the status line and the notice name the second (it kept naming the first)."""
    async def script(d: Driver) -> None:
        first = f"127.0.0.1:{d.ports[0]}"
        assert d.model.conn.server == first and first in d.screen()
        await create_vs_bot(d, "war")
        await flip_until(d, lambda: d.view.get("battles", 0) >= 1, "a battle")
        match = d.mv.match
        d.restart(tmp_path / "tui.db")   # the same store, on the other address
        await d.until(lambda: len(d.ports) == 2, "the server on the second address")
        second = f"127.0.0.1:{d.ports[1]}"
        await d.until(lambda: d.model.conn.state == "connected" and "reconnected" in d.model.notice,
                      "the resumed session")
        assert d.model.conn.server == second, d.model.conn.server
        assert f"reconnected to {second}" in d.model.notice
        assert second in d.screen() and first not in d.screen(), d.screen()
        assert d.mv.match == match
        battles = d.view["battles"]
        await flip_until(d, lambda: d.view.get("battles", 0) > battles, "a battle after failover")

    run_scenario(tmp_path, script, failover=True)


def test_the_create_form_offers_the_bots_the_server_lists(tmp_path: Path) -> None:
    async def script(d: Driver) -> None:
        assert d.model.bots == ["random", "greedy", "search", "ismcts"]
        await d.press("c")
        await d.until(lambda: d.model.overlay == "form", "the create form")
        labels = [f["label"] for f in d.model.form.fields]
        opponent = d.model.form.fields[labels.index("opponent")]
        assert opponent["choices"] == ["none", "random", "greedy", "search", "ismcts"]
        await d.cycle("down", lambda: d.model.form.focus, labels.index("opponent"), "the focus")
        await d.cycle("right", lambda: d.model.form.fields[d.model.form.focus]["value"],
                      "ismcts", "the opponent")
        await d.press("enter")
        await d.until(lambda: d.mv is not None and d.mv.snapshot is not None
                      and d.mv.snapshot.get("status") == "active", "the match to start")
        players = d.mv.snapshot["players"]
        assert [p.get("bot") for p in players] == [None, "ismcts"], players

    run_scenario(tmp_path, script)
