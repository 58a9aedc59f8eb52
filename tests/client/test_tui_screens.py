"""Each new screen's drawing function against a stored text snapshot, plus the facts
each must show.

The snapshots live in ``tests/client/snapshots/`` as plain text (the screen
without styles). After a deliberate change to a screen, regenerate them with
``CARDCLIENT_UPDATE_SNAPSHOTS=1 python -m pytest tests/client/test_tui_screens.py``
and read the diff before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from client.tui import conn_view, end_view, lobby_view, replay_view, screen
from client.tui import form as form_fns
from client.tui.fair import check
from client.tui.layout import block_text, width
from client.tui.model import Connection, Model, apply_message
from client.tui.replay import Replay
from engine import notation
from engine.fairness import commitment, seed_hex
from engine.registry import get_game
from tests.client.test_tui_render import PLAYERS, snapshot_of

SNAPSHOTS = Path(__file__).parent / "snapshots"
SALT = "5a" * 16


def matches_snapshot(name: str, out: str) -> None:
    """``out`` equals the stored snapshot ``name`` (written when asked to update)."""
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("CARDCLIENT_UPDATE_SNAPSHOTS"):
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(out + "\n", encoding="utf-8")
    assert path.exists(), f"no snapshot {path.name}: run with CARDCLIENT_UPDATE_SNAPSHOTS=1"
    assert out + "\n" == path.read_text(encoding="utf-8"), f"{name} differs from its snapshot"


def connected_model(**kw: Any) -> Model:
    conn = Connection(state="connected", server="localhost:7000", rtt=0.002,
                      connected_once=True)
    return Model(name="alice", conn=conn, **kw)


def finished(game: str, seed: int, options: dict[str, Any], seat: int | None = 0,
             first_seen: bool = True) -> Model:
    """A model that saw a real match of ``game`` from its first snapshot to the end."""
    state = get_game(game).new_state(seed, options)
    model = connected_model()
    first = snapshot_of(state, game, seat, seq=0, status="active")
    first["commitment"] = commitment(seed, SALT)
    if first_seen:
        apply_message(model, first)
    seq = 0
    while state.outcome() is None:
        mover = state.to_move()[0]
        legal = state.legal(mover)
        plays = [i for i in legal if i["type"] == "play"]
        state.apply(mover, plays[0] if plays else legal[-1] if game != "war" else legal[0])
        seq += 1
    last = snapshot_of(state, game, seat, seq=seq)
    last["commitment"] = commitment(seed, SALT)
    last["reveal"] = {"seed": seed_hex(seed), "salt": SALT}
    apply_message(model, last)
    return model


# -------------------------------------------------------------- the end screen


def test_end_screen_data_structures_at_the_cap() -> None:
    model = finished("datastructures", 3, {"cap": 12})
    out = block_text(screen.render(model, 80, 24))
    matches_snapshot("end_datastructures_80x24", out)
    assert "GAME OVER" in out and "the turn cap was reached" in out
    assert "of 3 arrays closed" in out and "cards in open arrays" in out
    assert "verified: sha256(seed + salt) equals the commitment" in out
    assert "verified: the opening position you were shown is the one this seed deals" in out
    assert seed_hex(3) in out and SALT in out and commitment(3, SALT) in out
    assert "r rematch" in out and "p replay" in out and "Tab lobby" in out
    assert "cap" not in out.split("GAME OVER")[1].split("\n")[0].split(":")[0]  # words


def test_end_screen_war_names_the_winner_and_how() -> None:
    model = finished("war", 5, {"cap": 40})
    out = block_text(screen.render(model, 80, 24))
    matches_snapshot("end_war_80x24", out)
    assert "battles (cap 40)" in out and "cards" in out
    assert "all_cards" not in out and "GAME OVER" in out


def test_end_screen_warns_when_the_reveal_does_not_match() -> None:
    model = finished("war", 5, {"cap": 40})
    mv = model.view
    snap = dict(mv.snapshot, reveal={"seed": seed_hex(6), "salt": SALT})
    mv.fair = check(snap, mv.first_view, mv.first_seq)
    out = block_text(end_view.render_end(mv, 80, 21, fair=mv.fair))
    assert "WARNING: sha256(seed + salt) does NOT equal the commitment" in out


def test_end_screen_says_when_the_deal_could_not_be_checked() -> None:
    model = finished("war", 5, {"cap": 40}, first_seen=False)
    out = block_text(screen.render(model, 80, 24))
    assert "deal not re-checked: this client did not see the match's first position" in out


def test_the_deal_check_catches_a_different_opening() -> None:
    model = finished("datastructures", 3, {"cap": 12})
    mv = model.view
    other = get_game("datastructures").new_state(4, {"cap": 12}).view(0)
    result = check(mv.snapshot, other, 0)
    assert result.commitment_ok and result.deal_ok is False
    assert any("NOT the one this seed deals" in line for line in result.lines())


def test_escape_shows_the_board_of_a_finished_match() -> None:
    model = finished("war", 5, {"cap": 40})
    model.view.end_closed = True
    out = block_text(screen.render(model, 80, 24))
    assert "GAME OVER: " in out and "Last battle" in out


# -------------------------------------------------------- the connection screen


def test_connection_screen_says_what_failed_and_counts_down() -> None:
    model = Model(name="alice", conn=Connection(
        state="reconnecting", server="localhost:7001", kind="refused", attempt=3,
        failure="refused: nothing accepts connections on localhost:7001", retry_at=105.0,
        detail="refused"))
    out = block_text(screen.render(model, 80, 24, now=101.2))
    matches_snapshot("connection_refused_80x24", out)
    assert "3 attempts failed" in out and "is the server running" in out
    assert "Next try in 4 s." in out and "q or Ctrl-C quits." in out
    last = out.splitlines()[-1]
    assert "retry 3 in 4 s" in last and "rtt" not in last  # no stale rtt while down


@pytest.mark.parametrize("kind,words", [
    ("unknown_host", "does not resolve"), ("tls", "TLS"), ("timeout", "no answer in time")])
def test_connection_screen_advice_per_failure(kind: str, words: str) -> None:
    model = Model(name="a", conn=Connection(state="reconnecting", server="h:1", kind=kind,
                                            attempt=1, failure="x"))
    assert words in block_text(conn_view.render_connection(model, 80, 20))


def test_status_line_keeps_the_countdown_at_80_cells() -> None:
    model = connected_model()
    model.conn.state, model.conn.detail, model.conn.attempt = "reconnecting", "refused", 12
    model.conn.retry_at = 10.0
    model.name = "a-rather-long-player-name"
    model.conn.server = "a.very.long.host.name.example.org:7000"
    last = block_text([screen.status_line(model, 80, now=2.0)])
    assert "retry 12 in 8 s" in last and last.rstrip().endswith("? help")
    assert width(screen.status_line(model, 80, now=2.0)) <= 80


# ------------------------------------------------------------ the lobby pieces


SUMMARIES = [
    {"match": "mAAAAAAAAAA", "game": "war", "status": "finished", "options": {"cap": 300},
     "seq": 120, "spectators": 0, "created": 1764547200.0, "finished": 1764547500.0,
     "players": [{"seat": 0, "name": "alice", "connected": True, "bot": None},
                 {"seat": 1, "name": "greedy (bot)", "connected": True, "bot": "greedy"}],
     "result": {"winner": 1, "reason": "all_cards"}},
    {"match": "mBBBBBBBBBB", "game": "datastructures", "status": "active",
     "options": {"cap": 500}, "seq": 40, "spectators": 2, "created": 1764547300.0,
     "players": [dict(p) for p in PLAYERS]},
    {"match": "mCCCCCCCCCC", "game": "war", "status": "waiting",
     "options": {"cap": 10000, "return": "played", "short_war": "stand"}, "seq": 0,
     "spectators": 0, "created": 1764547400.0,
     "players": [{"seat": 0, "name": "carol", "connected": True, "bot": None},
                 {"seat": 1, "name": None, "connected": False, "bot": None}]},
]


def test_lobby_lists_whole_ids_open_matches_first_and_who_won() -> None:
    model = connected_model(games=[get_game(g).describe() for g in ("datastructures", "war")])
    model.matches = [dict(s) for s in SUMMARIES]
    out = block_text(screen.render(model, 80, 24))
    matches_snapshot("lobby_80x24", out)
    order = [m for line in out.splitlines() for m in ("mAAAA", "mBBBB", "mCCCC") if m in line]
    assert order == ["mCCCC", "mBBBB", "mAAAA"]  # open, running, finished
    assert "mAAAAAAAAAA" in out and "greedy (bot) won" in out


def test_details_overlay_shows_everything_about_a_match() -> None:
    model = connected_model()
    model.matches = [dict(s) for s in SUMMARIES]
    model.lobby_cursor = 2  # the finished one (listed last)
    model.overlay = "details"
    out = block_text(screen.render(model, 80, 24))
    matches_snapshot("details_80x24", out)
    assert "match       mAAAAAAAAAA" in out and "battle cap: 300" in out
    assert "seat 2      greedy (bot)" in out and "result      greedy (bot) wins: took all" \
        in out


def test_create_form_words_wrap_and_no_rule_codes() -> None:
    games = [get_game(g).describe() for g in ("datastructures", "war")]
    model = connected_model(games=games)
    model.form = form_fns.new_form(games, "war")
    model.form.focus = 1  # won cards go back
    model.overlay = "form"
    out = block_text(screen.render(model, 80, 24))
    matches_snapshot("create_form_war_80x24", out)
    assert "(W3)" not in out and "won cards go back" in out and "< shuffled first >" in out
    body = out.split("Create a match")[1]
    for line in body.splitlines():
        inner = line.strip("│ ").rstrip()
        assert not inner.endswith(("-", "th", "mat")) or inner.endswith("match")


# ---------------------------------------------------------------- rules pages


def test_help_has_a_rules_page_per_game() -> None:
    model = connected_model()
    model.overlay, model.help_section = "help", 1
    ds = block_text(screen.render(model, 80, 24))
    matches_snapshot("help_rules_datastructures_80x24", ds)
    assert "Aces never go on an array" in ds and "An array is a run of 12" in ds
    model.help_section = 2
    war = block_text(screen.render(model, 80, 24))
    assert "Rules: War" in war and "higher" in war
    pages = screen.help_pages(model, 21, 76)
    assert len(pages) >= 1
    model.help_section = 1
    text = "\n".join("\n".join(p) for p in screen.help_pages(model, 21, 76))
    for page in screen.help_pages(model, 21, 76):
        assert len(page) <= 16
    assert "The card you keep is the one that goes on your stack" in " ".join(text.split())


# ---------------------------------------------------------------- replay viewer


def replay_of(game: str, seed: int, options: dict[str, Any], upto: int) -> Replay:
    """A Replay filled as the server's record pages fill it (public projection)."""
    state = get_game(game).new_state(seed, options)
    start = state.view(None)
    moves = []
    seq = 0
    while state.outcome() is None and seq < upto:
        mover = state.to_move()[0]
        legal = state.legal(mover)
        plays = [i for i in legal if i["type"] == "play"]
        intent = plays[0] if plays else legal[0] if game == "war" else legal[-1]
        events = state.apply(mover, intent)
        seq += 1
        moves.append({"seq": seq, "seat": mover, "kind": "intent", "intent": intent,
                      "by": "seat", "reason": None,
                      "events": state.project_events(events, None), "view": state.view(None)})
    replay = Replay("mREPLAY0001")
    replay.take({"match": "mREPLAY0001", "game": game, "options": options,
                 "players": [{"seat": 0, "name": "alice", "bot": None},
                             {"seat": 1, "name": "bob", "bot": None}],
                 "start": start, "total": seq, "moves": moves})
    return replay


def test_replay_view_draws_the_position_and_the_moves_in_words() -> None:
    replay = replay_of("datastructures", 3, {"cap": 30}, 40)
    replay.position = 12
    out = block_text(replay_view.render_replay(replay, 80, 21))
    matches_snapshot("replay_datastructures_80x21", out)
    assert "Replay mREPLAY0001  move 12/40  as a spectator saw it" in out
    assert "12. " in out and "(watching: hands are hidden)" not in out
    assert "array 0" not in out  # the project's numbering: arrays from 1
    replay.position = 0
    assert "move 0/40" in block_text(replay_view.render_replay(replay, 80, 21))


def test_replay_view_of_war_uses_the_same_card_notation() -> None:
    replay = replay_of("war", 5, {"cap": 40}, 30)
    replay.position = 30
    out = block_text(replay_view.render_replay(replay, 80, 21, color=True))
    assert "flips" in out and any(g in out for g in notation.SUIT_GLYPHS.values())
    plain_out = block_text(replay_view.render_replay(replay, 80, 21, color=False))
    assert not any(g in plain_out for g in notation.SUIT_GLYPHS.values())


def test_replay_pages_are_fetched_by_position() -> None:
    replay = replay_of("war", 5, {"cap": 400}, 120)
    replay.moves = {k: v for k, v in replay.moves.items() if k <= 50}
    assert replay.missing_page(0) is None and replay.missing_page(50) is None
    assert replay.missing_page(51) == 50 and replay.missing_page(120) == 100
    assert replay.clamp(500) == 120 and replay.clamp(-3) == 0


def test_every_new_screen_fits_80x24_and_160x50() -> None:
    models = [finished("datastructures", 3, {"cap": 12}), finished("war", 5, {"cap": 40})]
    lobby = connected_model()
    lobby.matches = [dict(s) for s in SUMMARIES]
    lobby.overlay = "details"
    models.append(lobby)
    replay_model = connected_model()
    replay_model.replay, replay_model.screen = replay_of("datastructures", 3, {"cap": 30}, 20), \
        "replay"
    replay_model.replay.position = 20
    models.append(replay_model)
    for model in models:
        for cells, rows in ((80, 24), (160, 50)):
            lines = screen.render(model, cells, rows)
            assert len(lines) == rows and all(width(line) == cells for line in lines)


def test_lobby_option_words() -> None:
    assert lobby_view.option_words("war", {"return": "played", "cap": 10000}) == \
        "battle cap: 10,000, won cards go back: in the order played"


def test_the_deal_check_uses_the_announced_stream_and_client_seeds() -> None:
    from engine.rng import open_stream

    seeds = ["c0ffee", "7"]
    stream = "hmac-sha256-ctr/1"
    state = get_game("datastructures").new_state(9, {"cap": 5},
                                                 rng=open_stream(stream, 9, seeds))
    model = connected_model()
    first = snapshot_of(state, "datastructures", 0, seq=0)
    first.update(commitment=commitment(9, SALT), stream=stream, client_seeds=seeds)
    apply_message(model, first)
    mv = model.view
    last = dict(first, seq=7, status="finished", result={"winner": 0, "reason": "cap"},
                reveal={"seed": seed_hex(9), "salt": SALT})
    ok = check(last, mv.first_view, mv.first_seq)
    assert ok.deal_ok is True and "this seed and the client seeds deal" in ok.deal_note
    assert "client seeds c0ffee, 7 (hmac-sha256-ctr/1)" in ok.lines()
    wrong = check(dict(last, client_seeds=["c0ffee", "8"]), mv.first_view, mv.first_seq)
    assert wrong.deal_ok is False  # other client seeds deal another opening


def test_end_screen_shows_the_rating_change_of_a_rated_match() -> None:
    model = finished("war", 5, {"cap": 40})
    mv = model.view
    result = dict(mv.snapshot["result"], rated=True, ratings=[
        {"seat": 0, "name": "alice", "rating_before": 1500.0, "rating_after": 1662.31},
        {"seat": 1, "name": "bob", "rating_before": 1500.0, "rating_after": 1337.69}])
    mv.snapshot = dict(mv.snapshot, result=result)
    out = block_text(end_view.render_end(mv, 80, 24, fair=mv.fair))
    assert "Ratings" in out
    assert "1500 -> 1662" in out and "bob: 1500 -> 1338" in out


def test_end_screen_of_an_unrated_match_has_no_ratings_box() -> None:
    model = finished("war", 5, {"cap": 40})
    out = block_text(end_view.render_end(model.view, 80, 24, fair=model.view.fair))
    assert "Ratings" not in out
