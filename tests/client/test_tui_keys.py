"""The presenter under any key sequence: it never raises, and every intent it sends is
an element of the newest snapshot's ``legal`` list (the client never computes rules)."""

from __future__ import annotations

from typing import Any

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from client.tui import form as form_fns
from client.tui import screen
from client.tui.controller import Controller
from client.tui.layout import block_text, width
from client.tui.model import Model, apply_message
from client.tui.screen import render
from engine import notation
from engine.registry import get_game
from tests.client.test_tui_render import play_ds_until, snapshot_of, to_move

KEYS = ["1", "2", "3", "4", "5", "6", "9", "h", "t", "o", "s", "q", "k", "e", "m", "l", "v",
        "x", "a", "f", " ", "c", "j", "w", "r", "u", "?", "enter", "escape", "left", "right",
        "up", "down", "tab", "backspace", "pageup", "pagedown", "f1", "0", "i", "p", "F",
        "+", "-", "g", "home", "end", "G"]


class Recorder:
    """A stand-in for the connection: records requests and answers ``ok``."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def __call__(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(msg)
        return {"type": "ok", "match": msg.get("match", "m1"), "seat": 0}


def drive(model: Model, keys: list[str]) -> tuple[Controller, Recorder, list[list[dict]]]:
    """Press ``keys``; run submitted jobs after each key. Returns the legal list each
    intent was sent against."""
    jobs: list[Any] = []
    ctl = Controller(model, submit=jobs.append)
    rec = Recorder()
    ctl.request = rec
    legal_at: list[list[dict]] = []
    for key in keys:
        ctl.handle_key(key)
        legal = model.view.legal if model.view else []
        while jobs:
            job = jobs.pop(0)
            before = len(rec.sent)
            trio.run(job)
            for msg in rec.sent[before:]:
                if msg["type"] == "intent":
                    legal_at.append(legal)
        lines = render(model, 80, 24)
        assert len(lines) == 24 and all(width(line) == 80 for line in lines)
    return ctl, rec, legal_at


DS_STATE, _ = play_ds_until(lambda s: s.view(0)["turn"] >= 5 and s.view(0)["phase"] == "play")
P2_STATE, _ = play_ds_until(lambda s: s.view(0)["phase"] == "discard" and s.view(0)["stack_owed"])
WAR_STATE = get_game("war").new_state(9, {})


def fresh(state: Any, game: str) -> Model:
    model = Model(name="alice", games=[get_game(g).describe() for g in ("datastructures",
                                                                         "war")])
    seat = to_move(state) if game == "datastructures" else 0
    apply_message(model, snapshot_of(state, game, seat))
    return model


@settings(deadline=None, max_examples=60)
@given(st.sampled_from(["ds", "p2", "war"]), st.lists(st.sampled_from(KEYS), max_size=25))
def test_any_keys_never_raise_and_send_only_legal_intents(which: str, keys: list[str]) -> None:
    state, game = {"ds": (DS_STATE, "datastructures"), "p2": (P2_STATE, "datastructures"),
                   "war": (WAR_STATE, "war")}[which]
    model = fresh(state, game)
    _, rec, legal_at = drive(model, keys)
    intents = [m for m in rec.sent if m["type"] == "intent"]
    assert len(intents) == len(legal_at)
    for msg, legal in zip(intents, legal_at, strict=True):
        assert msg["intent"] in legal
        assert msg["seq"] == 1


def test_source_then_target_keys_send_that_legal_intent() -> None:
    model = fresh(DS_STATE, "datastructures")
    legal = model.view.legal
    play = next(i for i in legal if i["type"] == "play" and i["src"] == "hand")
    _, rec, _ = drive(model, [str(play["index"] + 1), str(play["array"] + 1)])
    assert [m["intent"] for m in rec.sent if m["type"] == "intent"] == [play]


def test_phase_two_stack_key_and_end_turn() -> None:
    model = fresh(P2_STATE, "datastructures")
    _, rec, _ = drive(model, ["2", "s"])
    assert rec.sent[-1]["intent"] == {"type": "stack", "index": 1}
    model = fresh(P2_STATE, "datastructures")
    _, rec, _ = drive(model, ["e"])
    assert rec.sent == []  # end_turn is not legal before the stack card (D7)
    assert model.notice == "first put a hand card on your stack (pick it, then s)"


def test_illegal_choices_are_refused_in_words_without_a_request() -> None:
    model = fresh(DS_STATE, "datastructures")
    legal = model.view.legal
    hand = model.view.snapshot["view"]["hand"]
    bad = next((i for i in range(len(hand))
                if not any(x.get("index") == i and x["type"] == "play" for x in legal)), None)
    if bad is not None:
        _, rec, _ = drive(model, [str(bad + 1)])
        card = notation.card(hand[bad])
        # the reason is read off the view: the card and what each array needs
        assert rec.sent == [] and model.notice.startswith(f"{card} ")
        assert "does not fit: array 1" in model.notice or "aces never go on arrays" in \
            model.notice
    _, rec, _ = drive(model, ["9"])
    assert rec.sent == [] and model.notice == "there is no hand card 9"


def test_create_form_builds_the_create_request_with_a_bot() -> None:
    model = fresh(WAR_STATE, "war")
    model.screen = "lobby"
    ctl, rec, _ = drive(model, ["c"])
    assert model.overlay == "form"

    def focus_on(name: str) -> None:
        for _ in range(len(model.form.fields)):
            if model.form.fields[model.form.focus]["name"] == name:
                return
            ctl.handle_key("down")
        raise AssertionError(name)

    ctl.handle_key("right")  # game: datastructures -> war (the form is rebuilt)
    assert model.form.game == "war"
    focus_on("cap")
    for key in "500":
        ctl.handle_key(key)
    focus_on("short_war")
    ctl.handle_key("right")
    focus_on("bot")
    ctl.handle_key("right")  # none -> the first strategy
    focus_on("turn_timer")
    for key in "45":
        ctl.handle_key(key)
    assert form_fns.to_request(model.form) == {
        "type": "create", "game": "war", "seat": 0, "bot": "random", "turn_timer": 45,
        "options": {"return": "shuffled", "short_war": "lose", "cap": 500}}
    jobs: list[Any] = []
    ctl.submit = jobs.append
    ctl.handle_key("enter")
    assert model.overlay is None and len(jobs) == 1
    trio.run(jobs[0])
    assert rec.sent[0]["type"] == "create" and rec.sent[0]["bot"] == "random"
    assert model.screen == "match"
    # the next form starts from the choices just sent, in words
    model.screen, model.overlay = "lobby", None
    ctl.handle_key("c")
    assert model.form.game == "war"
    values = {f["name"]: f["value"] for f in model.form.fields}
    assert (values["cap"], values["short_war"], values["bot"], values["turn_timer"]) == \
        (500, "lose", "random", 45)
    out = block_text(screen.render(model, 80, 24))
    assert "won cards go back" in out and "< shuffled first >" in out
    assert "short of cards in a war" in out and "that player loses at once" in out
    assert "short_war" not in out and "(W3)" not in out


def test_queue_picker_and_unqueue_requests() -> None:
    model = fresh(WAR_STATE, "war")
    model.screen = "lobby"
    _, rec, _ = drive(model, ["m", "down", "enter", "u"])
    kinds = [(m["type"], m.get("game")) for m in rec.sent if m["type"] in ("queue", "unqueue")]
    assert kinds == [("queue", "war"), ("unqueue", "war")]
    assert model.queued is None


def test_a_failing_job_becomes_a_message_not_a_crash() -> None:
    from client.tui.runner import _guarded

    model = Model(name="alice")

    async def broken() -> None:
        raise RuntimeError("boom")

    trio.run(_guarded, broken, model)
    assert model.notice_error and "RuntimeError: boom" in model.notice


def test_turn_timer_field_server_default_off_and_steps() -> None:
    games = [get_game(g).describe() for g in ("datastructures", "war")]
    form = form_fns.new_form(games)
    assert "turn_timer" not in form_fns.to_request(form)  # the server's default applies
    form.focus = [f["name"] for f in form.fields].index("turn_timer")
    assert form_fns.show_value(form, form.focus) == "the server's default"
    form = form_fns.change(form, 1, games)
    assert form_fns.show_value(form, form.focus) == "off"
    assert form_fns.to_request(form)["turn_timer"] == 0
    form = form_fns.change(form, 1, games)
    assert form_fns.to_request(form)["turn_timer"] == 15
    form_fns.type_digit(form, "9")
    form_fns.type_digit(form, "9")
    form_fns.type_digit(form, "9")
    form_fns.type_digit(form, "9")
    assert form_fns.to_request(form)["turn_timer"] == 3600  # clamped to the maximum


def test_chat_line_is_typed_and_sent() -> None:
    model = fresh(WAR_STATE, "war")
    _, rec, _ = drive(model, ["c", "h", "i", "?", "x", "backspace", "enter"])
    assert rec.sent[-1] == {"type": "chat", "match": "m1", "text": "hi?"}
    assert model.overlay is None
    _, rec, _ = drive(model, ["c", "a", "escape"])
    assert rec.sent == []


def test_lobby_cursor_follows_its_match_when_the_list_changes() -> None:
    model = fresh(WAR_STATE, "war")
    model.screen = "lobby"
    old = [{"match": "a", "game": "war", "status": "waiting", "created": 1.0, "players": []},
           {"match": "b", "game": "war", "status": "active", "created": 2.0, "players": []}]
    model.matches = old
    model.lobby_cursor = 1  # on "b"
    ctl = Controller(model)
    newer = {"match": "c", "game": "war", "status": "waiting", "created": 3.0, "players": []}

    async def listing(msg: dict[str, Any]) -> dict[str, Any]:
        return {"type": "ok", "matches": [*old, newer], "queues": {"war": 0}}

    ctl.request = listing
    trio.run(ctl.refresh)
    assert model.lobby_rows()[model.lobby_cursor]["match"] == "b"


def test_a_chat_line_over_200_characters_is_refused_with_a_notice() -> None:
    model = fresh(DS_STATE, "datastructures")
    ctl, rec, _ = drive(model, ["c"])
    for _ in range(205):
        ctl.handle_key("x")
    assert len(model.chat_input) == 200
    assert "at most 200 characters" in model.notice and model.notice_error


def test_pgup_stops_at_the_oldest_kept_log_line() -> None:
    model = fresh(DS_STATE, "datastructures")
    for i in range(30):
        model.view.log.append(f"line {i}")
    ctl, _, _ = drive(model, ["pageup"] * 20)
    out = block_text(screen.render(model, 80, 24))
    assert "line 0" in out  # the first page of the log, never a blank pane
    assert "oldest kept log line" in model.notice


def test_hint_asks_a_local_bot_and_highlights_a_legal_move(monkeypatch: Any) -> None:
    from client.tui import hint as hint_fns

    monkeypatch.setattr(hint_fns, "HINT_SECONDS", 0.05)
    model = fresh(DS_STATE, "datastructures")
    ctl, rec, _ = drive(model, ["H"])
    assert rec.sent == []  # the server is never asked
    assert model.hint is not None and model.hint["intent"] in model.view.legal
    out = block_text(screen.render(model, 100, 40))
    assert "Hint (search): " in out
    model.overlay = "legal"
    listed = block_text(screen.render(model, 100, 40))
    assert listed.count("*") >= 1 and "  *" in listed or "*  " in listed
    # a new position drops the hint
    apply_message(model, dict(model.view.snapshot, seq=model.view.snapshot["seq"] + 1))
    assert model.hint is None


def test_hint_suggestion_is_always_legal_and_uses_only_the_seat_view() -> None:
    from client.tui.hint import suggest

    for seat in (0, 1):
        state, _ = play_ds_until(lambda s, seat=seat: to_move(s) == seat and
                                 s.view(0)["turn"] >= 3)
        legal = state.legal(seat)
        intent = suggest("datastructures", seat, state.view(seat), legal, seconds=0.05, seed=1)
        assert intent in legal


def test_a_turn_timer_at_10_seconds_warns_once() -> None:
    from client.tui.runner import warn_if_late

    model = Model(name="alice")
    snap = snapshot_of(DS_STATE, "datastructures", to_move(DS_STATE))
    me = snap["seat"]
    snap.update(deadline=30.0, timers=[None, None], timeouts=[0, 0], timeout_limit=3)
    snap["timers"][me] = 30.0
    apply_message(model, snap, now=100.0)
    warn_if_late(model, 110.0)
    assert model.notice == ""  # 20 s left: no warning yet
    warn_if_late(model, 121.0)
    assert model.notice == "9 s left for your move: then the server moves for you"
    model.notice = ""
    warn_if_late(model, 125.0)
    assert model.notice == ""  # once per turn
    out = block_text(screen.render(model, 80, 24, now=125.0))
    assert "your timer 5s" in out
    # one timeout short of the limit: the warning says what is at stake
    again = dict(snap, seq=snap["seq"] + 1, timeouts=[2, 2], deadline=30.0)
    apply_message(model, again, now=200.0)
    warn_if_late(model, 221.0)
    assert "you forfeit" in model.notice
    assert any("timed out (2 in a row; one more forfeits)" in line
               for line in model.view.log)


def test_the_auto_flip_pace_is_a_setting_kept_for_later_matches() -> None:
    model = fresh(WAR_STATE, "war")
    _, rec, _ = drive(model, ["-"])
    assert rec.sent[-1] == {"type": "auto_flip", "match": "m1", "on": True, "delay": 0.75}
    assert model.flip_pace == 0.75
    model.views["m1"].snapshot["auto_flip"] = False  # a later match, auto-flip off
    _, rec, _ = drive(model, ["a"])
    assert rec.sent[-1] == {"type": "auto_flip", "match": "m1", "on": True, "delay": 0.75}


def test_the_opponent_choices_are_the_servers_bots_or_the_old_catalogue() -> None:
    games = [{"name": "war", "seats": 2, "options": []}]

    def opponent(form: form_fns.CreateForm) -> list[str]:
        return next(f for f in form.fields if f["name"] == "bot")["choices"]

    assert opponent(form_fns.new_form(games, bots=["greedy", "ismcts"])) == [
        "none", "greedy", "ismcts"]
    # a server from before games listed its bots: the names every such server had
    assert opponent(form_fns.new_form(games)) == list(form_fns.BOT_CHOICES)
