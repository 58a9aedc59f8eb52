"""The leaderboard and profile screens' keys and requests, and asking before quitting
while seated (client/tui/ratings_screen.py, controller)."""

from __future__ import annotations

from typing import Any

from client.tui.controller import Controller
from client.tui.layout import block_text
from client.tui.model import MatchView, Model
from client.tui.screen import render

BOARD = {"type": "ok", "game": "war", "entries": [
    {"rank": 1, "name": "alice", "rating": 1662.3, "rd": 290.3, "games": 1, "wins": 1,
     "losses": 0, "draws": 0, "provisional": True, "bot": False},
    {"rank": 2, "name": "bob", "rating": 1337.7, "rd": 290.3, "games": 1, "wins": 0,
     "losses": 1, "draws": 0, "provisional": True, "bot": False}]}


def _controller() -> tuple[Controller, list[dict[str, Any]], list[Any]]:
    model = Model(name="alice", games=[{"name": "war"}, {"name": "datastructures"}])
    jobs: list[Any] = []
    sent: list[dict[str, Any]] = []
    controller = Controller(model, submit=jobs.append)

    async def request(msg: dict[str, Any]) -> dict[str, Any]:
        sent.append(msg)
        if msg["type"] == "leaderboard":
            return BOARD
        return {"type": "ok", "profile": {"name": msg["name"], "registered": True,
                                          "bot": False, "ratings": {}, "recent": [],
                                          "recent_total": 0}}

    controller.request = request
    return controller, sent, jobs


async def _run(jobs: list[Any]) -> None:
    while jobs:
        await jobs.pop(0)()


async def test_leaderboard_then_a_profile_and_back() -> None:
    controller, sent, jobs = _controller()
    controller.handle_key("L")
    await _run(jobs)
    assert sent[-1] == {"type": "leaderboard", "game": "war", "limit": 15, "offset": 0}
    screen = block_text(render(controller.model, 80, 24))
    assert "Leaderboard: war" in screen and "1662.3?" in screen
    controller.handle_key("right")
    await _run(jobs)
    assert sent[-1]["game"] == "datastructures"
    controller.handle_key("left")
    await _run(jobs)
    controller.handle_key("down")
    controller.handle_key("enter")
    await _run(jobs)
    assert sent[-1] == {"type": "profile", "name": "bob", "limit": 8, "offset": 0}
    assert "Profile: bob" in block_text(render(controller.model, 80, 24))
    controller.handle_key("escape")  # back to the leaderboard
    assert "Leaderboard: war" in block_text(render(controller.model, 80, 24))
    controller.handle_key("escape")
    assert controller.model.overlay is None


async def test_own_profile() -> None:
    controller, sent, jobs = _controller()
    controller.handle_key("P")
    await _run(jobs)
    assert sent[-1]["type"] == "profile" and sent[-1]["name"] == "alice"


def test_quitting_while_seated_asks_first() -> None:
    quits: list[bool] = []
    model = Model(name="alice")
    controller = Controller(model, on_quit=lambda: quits.append(True))
    controller.handle_key("q")
    assert quits == [True]  # not seated: at once
    model.quitting, quits[:] = False, []
    model.views["m1"] = MatchView("m1", snapshot={"seat": 0, "status": "active"})
    controller.handle_key("q")
    assert quits == [] and "q again quits" in model.notice
    controller.handle_key("r")  # any other key stays
    assert quits == [] and not model.confirm_quit
    controller.handle_key("q")
    controller.handle_key("q")
    assert quits == [True]
    controller.quit()  # SIGTERM does not ask
    assert quits == [True, True]
