"""Random walks through the match core: whatever the commands and their timing,
every request gets exactly one answer, journal rows follow each other, every
snapshot is its recipient's own projection of the current state, nothing goes to
a disconnected session, and the journal replays to the core's state."""

from __future__ import annotations

import random

import pytest

from server.match import commands as c
from server.match.core import MatchCore
from server.match.effects import SPECTATORS, Effects
from server.match.snapshots import face_down
from server.replay import rebuild
from tests.server.match.helpers import RULES, record

PEOPLE = ("sa", "sb", "se", "sx")


def _command(core: MatchCore, rng: random.Random) -> c.Command:
    who = rng.choice(PEOPLE)
    seat = core.seat_of(who)
    roll = rng.random()
    if roll < 0.45 and seat is not None:
        legal = core.state.legal(seat) if core.status == "active" else []
        intent = rng.choice(legal) if legal and rng.random() < 0.9 else {"type": "bogus"}
        seq = core.seq if rng.random() < 0.9 else core.seq + rng.choice((-1, 1))
        return c.PlayIntent(who, rng.randrange(100), seq=seq, intent=intent)
    choices: list[c.Command] = [
        c.Join(who, 1, name=who, seat=rng.choice((None, 0, 1, 2))), c.Watch(who, 2),
        c.Leave(who, 3), c.Chat(who, 4, name=who, text="hi"), c.Detach(who),
        c.Attach(who, live=rng.random() < 0.8), c.SetAutoFlip(who, 5, on=rng.random() < 0.5),
        c.Tick(), c.Tick(),
    ]
    if rng.random() < 0.03:
        choices.append(c.Resign(who, 6))
    return rng.choice(choices)


def _check(core: MatchCore, command: c.Command, fx: Effects, seq_before: int) -> None:
    rows = fx.journal
    assert [r.seq for r in rows] == list(range(seq_before + 1, seq_before + 1 + len(rows)))
    assert core.seq == seq_before + len(rows)
    if isinstance(command, c.Request) and not isinstance(command, c.Attach):
        answers = [m for m in fx.to(command.session) if m["type"] in ("ok", "error")
                   and m.get("id") == command.rid]
        assert len(answers) == 1, (command, fx.messages)
    rest = fx.later() if fx.later is not None else None
    if rest is not None:   # the rest of a broadcast arms no timer: the command's deadline
        assert rest.deadline == fx.deadline == core.next_deadline()
    everything = fx.messages + (rest.messages if rest is not None else [])
    last: dict[str, dict] = {}
    for to, event in everything:
        msg = event.to_wire()
        if to == SPECTATORS:
            assert any(s in core.connected for s in core.spectators)
        elif msg["type"] not in ("ok", "error"):
            assert to in core.connected, (to, msg)
        if msg["type"] != "snapshot":
            continue
        # one command may make several changes (a tick firing two timers): each
        # recipient's snapshots go forward, and its last one is the current state
        assert msg["seq"] >= last.get(to, {}).get("seq", 0)
        last[to] = msg
        if to == SPECTATORS or to in core.spectators:
            assert msg["seat"] is None and msg["legal"] == []
        else:
            assert msg["seat"] == core.seat_of(to)
    for msg in last.values():
        assert msg["seq"] == core.seq
        view = core.state.view(msg["seat"])   # a waiting match shows its cards face down
        assert msg["view"] == (face_down(view) if msg["status"] == "waiting" else view)


@pytest.mark.parametrize("game", ["war", "datastructures"])
@pytest.mark.parametrize("seed", range(10))
def test_random_walk(game: str, seed: int) -> None:
    rng = random.Random(seed)
    options = {"cap": 60} if game == "war" else {"cap": 40}
    core = MatchCore.create(record(game, turn_timer=rng.choice((0, 3)), options=options,
                                   abandon=rng.choice(("forfeit", "bot")), seed=seed), RULES)
    core.seat(0, "sa", "sa")
    journal = []
    now = 0.0
    fx = core.handle(c.Start(), now)
    for _ in range(400):
        command = _command(core, rng)
        if isinstance(command, c.Tick):
            now = max(now, min(core.next_deadline(), now + rng.uniform(0, 12)))
        seq_before = core.seq
        fx = core.handle(command, now)
        _check(core, command, fx, seq_before)
        journal += fx.journal
        if fx.close:
            break
        for turn in fx.bots:  # a bot answers at once, sometimes on an old seq
            if turn.legal and rng.random() < 0.7:
                seq_before = core.seq
                bot_fx = core.handle(c.BotIntent(turn.seat, turn.seq, rng.choice(turn.legal)),
                                     now)
                _check(core, c.BotIntent(turn.seat, turn.seq, {}), bot_fx, seq_before)
                journal += bot_fx.journal
    assert [r.seq for r in journal] == list(range(1, core.seq + 1))
    if journal:
        assert journal[-1].digest == core.state.journal_digest()
        assert rebuild(core.record(), journal).digest() == core.state.digest()
