"""Rematch between two people over real TCP: two client controllers, each with its own
connection (``network_main``, as ``cardclient`` runs it, without the screen), end one
War match and ask for a rematch; they must end up in one new match together."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from client.session import Backoff
from client.tui.controller import Controller
from client.tui.model import Model
from client.tui.rematch import keeps_own, offer_text, opponent_offer
from client.tui.runner import TrioBridge, network_main
from server.app import Server, serve
from tests.server.helpers import make_config


async def _until(pred: Callable[[], Any], what: str, timeout: float = 10.0) -> None:
    with trio.move_on_after(timeout):
        while not pred():
            await trio.sleep(0.01)
        return
    raise AssertionError(f"timed out waiting for {what}")


async def _client(nursery: trio.Nursery, port: int, name: str) -> Controller:
    model = Model(name=name)
    bridge = TrioBridge()
    controller = Controller(model, submit=bridge.submit)
    nursery.start_soon(partial(network_main, controller, bridge, "127.0.0.1", port, name,
                               backoff=Backoff(initial=0.05, maximum=0.2)))
    await _until(lambda: model.conn.state == "connected" and controller.request is not None,
                 f"{name} connected")
    return controller


def _finished(c: Controller, match: str) -> bool:
    mv = c.model.views.get(match)
    return bool(mv and mv.snapshot and mv.snapshot.get("status") == "finished")


async def _one_battle_match(alice: Controller, bob: Controller) -> str:
    """A War match capped at one battle (a tie's war goes on until it is decided),
    played to its end by both flipping whenever they may."""
    await alice.create({"type": "create", "game": "war", "options": {"cap": 1}})
    match = alice.model.current
    assert match is not None
    await bob.join(match)
    sent = {alice: -1, bob: -1}   # the seq each last flipped on: act only on a newer one
    with trio.fail_after(10):
        while not (_finished(alice, match) and _finished(bob, match)):
            for c in (alice, bob):
                snap = c.model.views[match].snapshot or {}
                if snap.get("legal") and snap.get("status") == "active" \
                        and snap["seq"] > sent[c]:
                    sent[c] = snap["seq"]
                    reply = await c.call({"type": "intent", "match": match,
                                          "intent": {"type": "flip"}, "seq": snap["seq"]})
                    assert reply is not None, (c.model.name, c.model.notice)
            await trio.sleep(0.01)
    return match


def _active_matches(server: Server) -> list[str]:
    return [m.id for m in server.lobby.matches.values() if m.status == "active"]


@pytest.mark.parametrize("at_once", [False, True], ids=["one-after-the-other", "at-once"])
async def test_two_players_asking_for_a_rematch_meet_in_one_match(tmp_path: Path,
                                                                  at_once: bool) -> None:
    async with trio.open_nursery() as nursery:
        server: Server = await nursery.start(serve, make_config(tmp_path))
        assert server.port is not None
        alice = await _client(nursery, server.port, "alice")
        bob = await _client(nursery, server.port, "bob")
        old = await _one_battle_match(alice, bob)
        if at_once:   # both press r before either has seen the other's offer
            async with trio.open_nursery() as both:
                both.start_soon(alice.rematch, alice.model.views[old])
                both.start_soon(bob.rematch, bob.model.views[old])
        else:
            await alice.rematch(alice.model.views[old])
            await _until(lambda: bob.model.views[old].rematch_offer is not None, "the offer")
            await bob.rematch(bob.model.views[old])

        def together() -> bool:
            a, b = alice.model.current, bob.model.current
            return (a is not None and a == b and a != old
                    and all((c.model.views[a].snapshot or {}).get("status") == "active"
                            for c in (alice, bob)))

        await _until(together, "both in one rematch")
        new = alice.model.current
        assert _active_matches(server) == [new]
        # no other rematch left waiting with one of them in it
        waiting = [m for m in server.lobby.matches.values() if m.status == "waiting"
                   and any(seat.session is not None for seat in m.seats)]
        assert waiting == []
        seats = {c.model.views[new].seat for c in (alice, bob)}
        assert seats == {0, 1}
        nursery.cancel_scope.cancel()


def test_only_the_opponent_in_the_other_seat_can_offer_a_rematch() -> None:
    line = {"type": "chat", "match": "m1", "role": "player", "seat": 1, "name": "bob",
            "text": offer_text("m9")}
    assert opponent_offer(line, own_seat=0) == "m9"
    assert opponent_offer(line, own_seat=1) is None            # our own offer
    assert opponent_offer(line, own_seat=None) is None         # a spectator's view
    assert opponent_offer({**line, "role": "spectator", "seat": None}, own_seat=0) is None
    assert opponent_offer({**line, "text": "rematch? join match m9 now"}, own_seat=0) is None
    assert keeps_own("m1", "m2") and not keeps_own("m2", "m1")
