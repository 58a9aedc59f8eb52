"""The ratings screens and labels (client/tui/ratings_view.py), as plain text."""

from __future__ import annotations

from client.tui.layout import block_text
from client.tui.ratings_view import (
    change_text,
    player_label,
    rating_change_lines,
    render_leaderboard,
    render_profile,
)


def test_player_label() -> None:
    assert player_label({"name": "alice", "rating": 1623.4}) == "alice [1623]"
    assert player_label({"name": "alice", "rating": 1500.0, "provisional": True}) == \
        "alice [1500?]"
    assert player_label({"name": "robo", "account_bot": True, "rating": 1400}) == \
        "robo (bot) [1400]"
    assert player_label({"name": "guest"}) == "guest"


def test_rating_change_lines() -> None:
    result = {"winner": 0, "reason": "resign", "rated": True, "ratings": [
        {"seat": 0, "name": "alice", "rating_before": 1500.0, "rating_after": 1662.3},
        {"seat": 1, "name": "bob", "rating_before": 1500.0, "rating_after": 1337.7}]}
    assert rating_change_lines(result, 0) == ["You: 1500 -> 1662 (+162.3)",
                                              "bob: 1500 -> 1338 (-162.3)"]
    assert rating_change_lines({"winner": 0, "reason": "x"}, 0) == []
    assert "aborted" in rating_change_lines({"rated": True, "ratings": []}, 0)[0]
    assert change_text(0.01) == "\u00b10.0"


def test_leaderboard_screen() -> None:
    board = {"game": "war", "entries": [
        {"rank": 1, "name": "alice", "rating": 1662.3, "rd": 290.3, "games": 1, "wins": 1,
         "losses": 0, "draws": 0, "provisional": True, "bot": False},
        {"rank": 2, "name": "robo", "rating": 1337.7, "rd": 290.3, "games": 1, "wins": 0,
         "losses": 1, "draws": 0, "provisional": True, "bot": True}]}
    shown = block_text(render_leaderboard(board, 80, 20))
    assert "Leaderboard: war" in shown and "alice" in shown and "1662.3?" in shown
    assert "robo (bot)" in shown
    assert "nobody" in block_text(render_leaderboard({"game": "war", "entries": []}, 80, 20))
    assert "loading" in block_text(render_leaderboard(None, 80, 20))


def test_profile_screen() -> None:
    profile = {"name": "alice", "registered": True, "bot": False,
               "ratings": {"war": {"rating": 1662.3, "rd": 290.3, "volatility": 0.06,
                                   "games": 1, "wins": 1, "losses": 0, "draws": 0,
                                   "provisional": True}},
               "recent": [{"match": "m1", "game": "war", "result": "win", "opponent": "bob",
                           "rated": True, "rating_change": 162.3}],
               "recent_total": 1}
    shown = block_text(render_profile(profile, 80, 20))
    assert "Profile: alice" in shown and "1662.3?" in shown and "+162.3" in shown
    assert "vs bob" in shown
    guest = block_text(render_profile({"name": "x", "registered": False}, 80, 20))
    assert "guest" in guest


def test_the_end_of_a_rated_match_says_the_rating_change() -> None:
    from client.tui.model import Model, apply_message

    model = Model(name="alice")
    snap = {"type": "snapshot", "match": "m1", "game": "war", "seq": 9, "seat": 0,
            "view": {}, "legal": [], "status": "finished", "events": [],
            "players": [{"seat": 0, "name": "alice", "connected": True, "bot": None,
                         "registered": True, "rating": 1500.0, "provisional": True},
                        {"seat": 1, "name": "bob", "connected": True, "bot": None,
                         "registered": True, "rating": 1500.0, "provisional": True}],
            "result": {"winner": 0, "reason": "resign", "rated": True, "ratings": [
                {"seat": 0, "name": "alice", "rating_before": 1500.0, "rating_after": 1662.3},
                {"seat": 1, "name": "bob", "rating_before": 1500.0, "rating_after": 1337.7}]}}
    apply_message(model, snap)
    log = "\n".join(model.views["m1"].log)
    assert "You: 1500 -> 1662 (+162.3)" in log and "bob: 1500 -> 1338 (-162.3)" in log
    assert model.notice == "war rating: 1500 -> 1662 (+162.3)"
    assert "alice (1500?)" in log  # the rating next to the name


def test_bot_accounts_and_ratings_in_the_lobby() -> None:
    from client.tui.lobby_view import match_row

    row = match_row({"match": "m1", "game": "war", "status": "active", "rated": True,
                     "players": [{"seat": 0, "name": "robo", "connected": True, "bot": None,
                                  "account_bot": True, "rating": 1412.0},
                                 {"seat": 1, "name": "alice", "connected": True, "bot": None,
                                  "rating": 1500.0, "provisional": True}]}, 100)
    assert "robo (bot) (1412) vs alice (1500?) [rated]" in row
