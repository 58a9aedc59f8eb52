"""The replay viewer's screen: the board at the current position, drawn by the same
views as a live match, a header saying where we are, and the moves so far in words."""

from __future__ import annotations

from typing import Any

from client.tui import ds_view, war_view
from client.tui.layout import Block, text
from client.tui.model import MatchView
from client.tui.replay import Replay
from engine import notation


def _players(header: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"seat": p.get("seat"), "name": p.get("name"), "bot": p.get("bot"),
             "connected": True} for p in header.get("players") or []]


def log_lines(replay: Replay, glyphs: bool, rows: int) -> list[str]:
    """The last moves up to the position, each with its events in words."""
    header = replay.header
    names = {p.get("seat"): p.get("name") or (f"bot:{p['bot']}" if p.get("bot") else
                                                f"seat {notation.number(p.get('seat'))}")
             for p in header.get("players") or [] if isinstance(p.get("seat"), int)}
    speaker = notation.Speaker(replay.seat, names, glyphs=glyphs, game=replay.game)
    out: list[str] = []
    seq = replay.position
    while seq >= 1 and len(out) < rows * 2:
        move = replay.move(seq)
        if move is None:
            break
        lines = [speaker.move(move)]
        lines += [f"   {x}" for x in speaker.events(move.get("events") or [])]
        out[:0] = lines
        seq -= 1
    return out


def render_replay(replay: Replay, cells: int, rows: int, *, color: bool = True,
                  now: float | None = None) -> Block:
    """The replay screen body, ``cells`` wide, at most ``rows`` lines."""
    header = replay.header
    who = "as a spectator saw it" if replay.seat is None else \
        f"as seat {replay.seat + 1} saw it"
    state = "playing" if replay.playing else "paused"
    top = (f"Replay {replay.match}  move {replay.position}/{replay.total}  {who}  "
           f"{state} at {replay.speed:g} moves/s")
    out: Block = [text(top, "class:title")]
    if replay.goto_input is not None:
        out.append(text(f"go to move: {replay.goto_input}_  (Enter goes, Esc cancels)",
                        "class:cursor"))
    elif replay.error:
        out.append(text(replay.error, "class:error"))
    elif replay.position >= replay.total and header.get("result"):
        result = notation.result_words(replay.game, header.get("result"), replay.seat,
                                       {p.get("seat"): p.get("name") or "?"
                                        for p in header.get("players") or []})
        out.append(text(f"the end: {result}", "class:turn"))
    else:
        out.append(text(""))
    view = replay.view_at(replay.position)
    if view is None:
        out.append(text("loading..." if replay.loading else "this position is not loaded",
                        "class:dim"))
        return out[:rows]
    snap = {"type": "snapshot", "match": replay.match, "game": replay.game,
            "seq": replay.position, "seat": replay.seat, "view": view, "legal": [],
            "status": "finished" if replay.position >= replay.total else "active",
            "players": _players(header)}
    mv = MatchView(replay.match, snapshot=snap)
    log = log_lines(replay, color, rows)
    room = rows - len(out)
    if replay.game == "war":
        out.extend(war_view.render_war(mv, cells, room, color=color, log=log, replay=True))
    elif replay.game == "datastructures":
        out.extend(ds_view.render_ds(mv, cells, room, color=color, log=log, replay=True))
    else:
        out.append(text(f"{replay.game}: this client cannot draw that game"))
    return out[:rows]
