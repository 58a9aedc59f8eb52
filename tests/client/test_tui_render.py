"""The TUI's drawing functions against snapshots made by the real engine.

Snapshots here are built exactly as the server builds them: ``state.view(seat)``
and ``state.legal(seat)`` of a real game, played forward with a seeded RNG to
reach the position a test needs.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from client.tui import ds_view, screen, war_view
from client.tui import selection as sel
from client.tui.layout import block_text, plain, width
from client.tui.model import Connection, MatchView, Model, apply_message
from engine import notation
from engine.core import State
from engine.registry import get_game

PLAYERS = [{"seat": 0, "name": "alice", "connected": True, "bot": None},
           {"seat": 1, "name": "bob", "connected": True, "bot": None}]


def snapshot_of(state: State, game: str, seat: int | None, seq: int = 1,
                events: list[dict[str, Any]] | None = None, status: str = "active",
                match: str = "m1") -> dict[str, Any]:
    """A snapshot message as the server sends it, from a real engine state."""
    outcome = state.outcome()
    msg: dict[str, Any] = {
        "type": "snapshot", "match": match, "game": game, "seq": seq, "seat": seat,
        "view": state.view(seat), "legal": state.legal(seat) if seat is not None else [],
        "status": "finished" if outcome else status, "events": events or [],
        "players": [dict(p) for p in PLAYERS], "options": dict(state.options),
        "commitment": "00" * 32, "deadline": None, "auto_flip": False,
    }
    if outcome:
        msg["result"] = outcome.to_dict()
    return msg


def play_ds_until(pred: Callable[[State], bool], seed: int = 7,
                  max_steps: int = 4000) -> tuple[State, list[dict[str, Any]]]:
    """Play a real Data Structures game with a seeded random policy (plays preferred)
    until ``pred(state)``; returns the state and the raw events of the last intent.

    Raises:
        AssertionError: the position was not reached within ``max_steps`` intents.
    """
    rng = random.Random(seed)
    state = get_game("datastructures").new_state(seed, {})
    events: list[dict[str, Any]] = []
    for _ in range(max_steps):
        if pred(state):
            return state, events
        if state.outcome() is not None:
            break
        seat = state.to_move()[0]
        legal = state.legal(seat)
        plays = [i for i in legal if i["type"] == "play"]
        intent = rng.choice(plays) if plays and rng.random() < 0.85 else rng.choice(legal)
        events = state.apply(seat, intent)
    raise AssertionError("position not reached")


def to_move(state: State) -> int:
    return state.to_move()[0]


def ds_mv(state: State, seat: int | None, events: list[dict[str, Any]] | None = None
          ) -> MatchView:
    model = Model(name="alice")
    projected = state.project_events(events or [], seat)
    apply_message(model, snapshot_of(state, "datastructures", seat, events=projected))
    return model.views["m1"]


def text_of(block: list) -> str:
    return block_text(block)


# ---------------------------------------------------------------- Data Structures


def test_ds_board_shows_every_public_part_of_the_view() -> None:
    state, _ = play_ds_until(lambda s: s.view(0)["turn"] >= 6 and s.view(0)["phase"] == "play")
    me = to_move(state)
    mv = ds_mv(state, me)
    view = state.view(me)
    out = text_of(ds_view.render_ds(mv, 100, 40, color=False))
    for card in view["hand"]:
        assert f"[{card}]" in out
    for card in view["queue"]:
        assert f"[{card}]" in out
    assert f"h head> [{view['queue'][0]}]" in out
    for p in view["players"]:
        if p["stack"]:
            assert re.search(rf"\[{p['stack'][-1]}\]\s+depth {len(p['stack'])}", out)
        assert f"closed {p['closed']}/3" in out
        assert f"hand {p['hand_count']}" in out
        for arr in p["arrays"]:
            if arr["cards"] and not arr["closed"]:
                assert f"needs {arr['next']}" in out
                assert f"[{arr['cards'][-1]}]" in out
    assert f"deck {view['deck']}" in out
    assert f"discard {len(view['discard'])}" in out
    assert "YOUR TURN" in out and "phase 1: play" in out
    assert f"turn {view['turn']}/" in out


def test_ds_opponent_view_says_whose_turn_and_hides_nothing_it_should_not() -> None:
    state, _ = play_ds_until(lambda s: s.view(0)["turn"] >= 3)
    other = 1 - to_move(state)
    mv = ds_mv(state, other)
    out = text_of(ds_view.render_ds(mv, 80, 22, color=False))
    name = "alice" if to_move(state) == 0 else "bob"
    assert f"{name}'s turn" in out
    assert "to move..." in out
    # the other seat's hand never appears: only its own hand is in the view
    assert state.view(other)["hand"] is not None


def test_ds_spectator_sees_no_hand() -> None:
    state, _ = play_ds_until(lambda s: s.view(0)["turn"] >= 2)
    mv = ds_mv(state, None)
    out = text_of(ds_view.render_ds(mv, 80, 22, color=False))
    assert "hands are hidden" in out
    assert "Watching." in out


def test_selectable_sources_come_only_from_legal() -> None:
    state, _ = play_ds_until(lambda s: s.view(0)["phase"] == "play"
                             and any(i["src"] != "hand" for i in s.legal(to_move(s))
                                     if i["type"] == "play"))
    me = to_move(state)
    mv = ds_mv(state, me)
    legal = state.legal(me)
    srcs = sel.sources(legal)
    out = text_of(ds_view.render_ds(mv, 80, 24, color=False))
    hand = state.view(me)["hand"]
    for i, card in enumerate(hand):
        marked = f"*{i + 1}[{card}]" in out
        assert marked == (("hand", i) in srcs), (i, card, out)
    assert ("*h head>" in out) == (("queue",) in srcs)


def test_targets_after_choosing_a_source_are_exactly_the_legal_arrays() -> None:
    state, _ = play_ds_until(lambda s: s.view(0)["phase"] == "play" and s.view(0)["turn"] > 4
                             and any(i["type"] == "play" for i in s.legal(to_move(s))))
    me = to_move(state)
    mv = ds_mv(state, me)
    legal = state.legal(me)
    src = sel.sources(legal)[0]
    tgts = sel.targets(legal, src)
    out = text_of(ds_view.render_ds(mv, 80, 24, color=False, selected=src))
    own_arrays = out.split("(you)")[1]
    for a in range(3):
        assert (f"*{a + 1}: " in own_arrays) == (("array", a) in tgts)
    for t in tgts:
        assert sel.intent_for(legal, src, t) in legal


def test_phase_two_offers_the_stack_then_the_queue_tail() -> None:
    state, _ = play_ds_until(lambda s: s.view(0)["phase"] == "discard"
                             and s.view(0)["stack_owed"])
    me = to_move(state)
    mv = ds_mv(state, me)
    legal = state.legal(me)
    assert {i["type"] for i in legal} == {"stack"}
    out = text_of(ds_view.render_ds(mv, 80, 24, color=False, selected=("hand", 0)))
    assert "*s" in out
    assert "phase 2" in out
    # after the stack card, enqueue and end_turn become the legal intents
    state.apply(me, {"type": "stack", "index": 0})
    if len(state.view(me)["queue"]) < 5:
        mv = ds_mv(state, me)
        out = text_of(ds_view.render_ds(mv, 80, 24, color=False, selected=("hand", 0)))
        assert "<tail *q" in out
    out = text_of(ds_view.render_ds(ds_mv(state, me), 80, 24, color=False))
    assert "e end turn" in out


def test_mulligan_prompt_when_no_play_is_possible() -> None:
    state, _ = play_ds_until(lambda s: any(i["type"] == "mulligan" for i in s.legal(to_move(s))),
                             seed=11)
    me = to_move(state)
    mv = ds_mv(state, me)
    out = text_of(ds_view.render_ds(mv, 80, 24, color=False))
    assert "m mulligan" in out
    out = text_of(ds_view.render_ds(mv, 80, 24, color=False, mulligan_mode=True))
    assert "which card to keep?" in out
    out = text_of(ds_view.render_ds(mv, 80, 24, color=False, selected=("hand", 0)))
    assert "keep this one (mulligan)" in out


def test_event_log_reads_like_a_sentence() -> None:
    state = get_game("datastructures").new_state(3, {})
    rng = random.Random(5)
    found = None
    for _ in range(3000):
        seat = to_move(state)
        legal = state.legal(seat)
        queue_plays = [i for i in legal if i["type"] == "play" and i["src"] == "queue"]
        plays = [i for i in legal if i["type"] == "play"]
        intent = queue_plays[0] if queue_plays else (
            rng.choice(plays) if plays and rng.random() < 0.85 else rng.choice(legal))
        events = state.apply(seat, intent)
        if queue_plays:
            found = (seat, events)
            break
    assert found is not None
    seat, events = found
    model = Model(name="x")
    watcher = 1 - seat
    apply_message(model, snapshot_of(state, "datastructures", watcher,
                                     events=state.project_events(events, watcher)))
    log = "\n".join(model.views["m1"].log)
    name = PLAYERS[seat]["name"]
    card = notation.card(state.project_events(events, watcher)[0]["card"])
    assert f"{name} took {card} from the queue head onto array {events[0]['array'] + 1}" in log


def test_stack_overlay_lists_every_card_bottom_to_top() -> None:
    state, _ = play_ds_until(lambda s: len(s.view(0)["players"][0]["stack"]) >= 3)
    view = state.view(0)
    out = text_of(ds_view.render_stacks(view, {0: "alice", 1: "bob"}, 60, color=False))
    stack = view["players"][0]["stack"]
    assert f"alice's stack, bottom to top ({len(stack)} cards)" in out
    found = [tok.strip("[]") for tok in out.split("bob's stack")[0].split() if tok.startswith("[")]
    assert found == stack


# ------------------------------------------------------------------------ War


def war_after(flips: int, seed: int = 5, extra: tuple[int, ...] = ()) -> State:
    state = get_game("war").new_state(seed, {})
    for _ in range(flips):
        for seat in state.to_move():
            state.apply(seat, {"type": "flip"})
    for seat in extra:
        state.apply(seat, {"type": "flip"})
    return state


def test_war_screen_shows_cards_counts_and_whose_flip() -> None:
    state = war_after(10, extra=(0,))
    mv = MatchView("m1", snapshot_of(state, "war", 1))
    out = text_of(war_view.render_war(mv, 80, 22, color=False))
    view = state.view(1)
    assert f"deck: {view['counts'][0]} cards" in out
    assert f"deck: {view['counts'][1]} cards" in out
    assert f"[{view['up'][0]}]" in out
    assert "your flip: press f" in out
    assert f"Last battle #{view['last']['battle']}" in out
    assert "Auto-flip: off" in out


def test_war_pile_shows_face_down_cards_as_backs() -> None:
    found = None
    for seed in range(100):
        state = get_game("war").new_state(seed, {})
        for _ in range(200):
            if state.outcome() is not None:
                break
            state.apply(state.to_move()[0], {"type": "flip"})
            if "back" in state.view(0)["table"][0]:
                found = state
                break
        if found:
            break
    assert found is not None, "no war with a face-down card in 100 seeds"
    mv = MatchView("m1", snapshot_of(found, "war", 0))
    plain_out = text_of(war_view.render_war(mv, 80, 22, color=False))
    colour_out = text_of(war_view.render_war(mv, 80, 22, color=True))
    assert "[##]" in plain_out
    assert "[\u2592\u2592]" in colour_out
    assert "WAR! step" in plain_out
    up = found.view(0)["up"][0]
    assert f"[{up}]" in plain_out


def test_war_colours_red_suits() -> None:
    from client.tui.cards import card_glyph
    assert card_glyph("10H") == ("class:card.red", "[10\u2665] ")
    assert card_glyph("QS")[0] == "class:card.black"
    assert card_glyph("QS", color=False) == ("", "[QS]  ")


# ----------------------------------------------------------------- whole screen


@pytest.mark.parametrize("cells,rows", [(80, 24), (120, 40), (200, 60), (60, 20)])
def test_screen_is_exactly_the_terminal_size(cells: int, rows: int) -> None:
    state, _ = play_ds_until(lambda s: s.view(0)["turn"] >= 8)
    model = Model(name="alice", conn=Connection(state="connected", server="h:1", rtt=0.012))
    apply_message(model, snapshot_of(state, "datastructures", to_move(state)))
    for overlay in (None, "help", "legal", "stacks"):
        model.overlay = overlay
        lines = screen.render(model, cells, rows)
        assert len(lines) == rows
        assert all(width(line) == cells for line in lines), overlay
    model.overlay = None
    last = plain(screen.render(model, cells, rows)[-1])
    assert "connected" in last and "rtt 12 ms" in last


def test_screen_uses_more_room_when_larger() -> None:
    state, _ = play_ds_until(lambda s: s.view(0)["turn"] >= 8)
    model = Model(name="alice")
    apply_message(model, snapshot_of(state, "datastructures", to_move(state)))
    mv = model.views["m1"]
    for i in range(40):
        mv.log.append(f"line {i}")
    small = block_text(screen.render(model, 80, 24))
    big = block_text(screen.render(model, 140, 50))
    assert sum(f"line {i}" in small for i in range(40)) < sum(f"line {i}" in big
                                                              for i in range(40))


def test_help_overlay_lists_every_key_of_the_screen() -> None:
    from client.tui.keys import KEYMAP
    state = war_after(2)
    model = Model(name="alice")
    apply_message(model, snapshot_of(state, "war", 0))
    model.overlay = "help"
    out = block_text(screen.render(model, 100, 50))
    for where, keys, _what in KEYMAP:
        if where in ("any", "match", "war"):
            assert keys in out


def test_no_color_output_has_no_styles_on_cards() -> None:
    state = war_after(3)
    model = Model(name="alice", color=False)
    apply_message(model, snapshot_of(state, "war", 0))
    lines = screen.render(model, 80, 24)
    assert not any("card." in style for line in lines for style, _ in line)
    model.color = True
    lines = screen.render(model, 80, 24)
    assert any("card." in style for line in lines for style, _ in line)


def test_readme_lists_every_key() -> None:
    from pathlib import Path

    from client.tui.keys import markdown_table
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert markdown_table() in readme


def test_turn_timer_counts_down_from_when_the_snapshot_arrived() -> None:
    state = war_after(1)
    model = Model(name="alice")
    snap = snapshot_of(state, "war", 0)
    snap["deadline"] = 30.0
    apply_message(model, snap, now=100.0)
    assert "turn timer: 30 s" in block_text(screen.render(model, 80, 24, now=100.0))
    assert "turn timer: 18 s" in block_text(screen.render(model, 80, 24, now=112.0))
    assert "turn timer: 0 s" in block_text(screen.render(model, 80, 24, now=200.0))


def test_big_card_glyphs() -> None:
    from client.tui.cards import BIG_HEIGHT, BIG_WIDTH, big_card
    card = big_card("10H")
    assert len(card) == BIG_HEIGHT and all(width(line) == BIG_WIDTH for line in card)
    assert [plain(line) for line in card][1:4] == ["\u250210   \u2502", "\u2502  \u2665  \u2502",
                                                  "\u2502   10\u2502"]
    assert all(style == "class:card.red" for line in card for style, _ in line)
    assert plain(big_card("QS", color=False)[2]) == "\u2502  S  \u2502"
    assert big_card("QS", color=False)[0][0][0] == ""
    assert plain(big_card("back", color=False)[2]) == "\u2502#####\u2502"
    assert plain(big_card(None)[2]) == "\u2502     \u2502"


def test_war_face_up_cards_are_drawn_large_when_there_is_room() -> None:
    state = war_after(10, extra=(0,))
    mv = MatchView("m1", snapshot_of(state, "war", 1))
    up = state.view(1)["up"][0]
    rank, suit = up[:-1], up[-1]
    out = text_of(war_view.render_war(mv, 80, 22, color=False))
    assert f"\u2502{rank.ljust(5)}\u2502" in out and f"\u2502  {suit}  \u2502" in out
    small = text_of(war_view.render_war(mv, 80, 12, color=False))
    assert f"face up: [{up}]" in small


def finished_war(seed: int = 5) -> State:
    state = get_game("war").new_state(seed, {"cap": 3})
    while state.outcome() is None:
        state.apply(state.to_move()[0], {"type": "flip"})
    return state


def test_finished_match_checks_the_fair_shuffle_itself() -> None:
    from engine.fairness import commitment, seed_hex
    state = finished_war()
    salt = "ab" * 16
    snap = snapshot_of(state, "war", 0)
    snap["commitment"] = commitment(state.seed, salt)
    snap["reveal"] = {"seed": seed_hex(state.seed), "salt": salt}
    model = Model(name="alice")
    apply_message(model, snap)
    log = list(model.views["m1"].log)
    assert any(line.startswith("game over:") for line in log)
    assert any(line.startswith("fair shuffle checked") for line in log)
    assert not any("client seeds" in line for line in log)   # a match of the old stream
    assert "GAME OVER" in block_text(screen.render(model, 80, 24))
    seeded = dict(snap, match="m3", stream="hmac-sha256-ctr/1", client_seeds=["c0ffee", "7"])
    apply_message(model, seeded)
    line = next(x for x in model.views["m3"].log if x.startswith("fair shuffle checked"))
    assert "client seeds c0ffee, 7" in line and "cardserver replay m3 --verify" in line
    tampered = dict(snap, match="m2", reveal={"seed": seed_hex(state.seed + 1), "salt": salt})
    apply_message(model, tampered)
    assert any(line.startswith("WARNING: the revealed seed does NOT match")
               for line in model.views["m2"].log)


def test_a_disconnected_player_is_marked_away() -> None:
    state = war_after(2)
    snap = snapshot_of(state, "war", 0)
    model = Model(name="alice")
    apply_message(model, snap)
    apply_message(model, {"type": "presence", "match": "m1", "seat": 1, "name": "bob",
                          "connected": False, "grace": 60.0})
    out = block_text(screen.render(model, 80, 24))
    assert "bob (away)" in out
    assert "bob lost the connection (60 s to come back)" in out
    apply_message(model, {"type": "presence", "match": "m1", "seat": 1, "name": "bob",
                          "connected": True, "grace": None})
    assert "bob (away)" not in block_text(screen.render(model, 80, 24))


def test_chat_push_goes_to_the_match_log() -> None:
    model = Model(name="alice")
    apply_message(model, snapshot_of(war_after(1), "war", 0))
    apply_message(model, {"type": "chat", "match": "m1", "seat": 1, "name": "bob",
                          "text": "good luck"})
    assert "<bob> good luck" in block_text(screen.render(model, 80, 24))


@pytest.mark.parametrize("seat", [0, 1, None])
def test_ds_turn_timer_counts_down_for_players_and_spectators(seat: int | None) -> None:
    state, _ = play_ds_until(lambda s: s.view(0)["turn"] >= 3)
    model = Model(name="alice")
    snap = snapshot_of(state, "datastructures", seat)
    snap["deadline"] = 90.0
    apply_message(model, snap, now=10.0)
    assert "timer 80s" in block_text(screen.render(model, 80, 24, now=20.0))
    assert "timer 80s" in block_text(screen.render(model, 130, 40, now=20.0))


def test_a_mulligan_is_revealed_to_the_opponent() -> None:
    state, _ = play_ds_until(lambda s: any(i["type"] == "mulligan" for i in s.legal(to_move(s))),
                             seed=11)
    seat = to_move(state)
    hand = state.view(seat)["hand"]
    events = state.apply(seat, {"type": "mulligan", "keep": 0})
    other = 1 - seat
    model = Model(name="x")
    apply_message(model, snapshot_of(state, "datastructures", other,
                                     events=state.project_events(events, other)))
    out = block_text(screen.render(model, 100, 40))
    name = PLAYERS[seat]["name"]
    shown, kept = notation.cards(hand), notation.card(hand[0])
    assert f"{name} mulliganed: showed {shown}, kept {kept}" in out  # the board
    assert f"{name} mulligans: showed {shown}, kept {kept}" in out  # the log: one notation
