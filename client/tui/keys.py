"""Every key of the client, as data: the help overlay and the README are made from it."""

from __future__ import annotations

#: (screen, keys, what they do). Screens: "any", "lobby", "match", "datastructures", "war".
KEYMAP: tuple[tuple[str, str, str], ...] = (
    ("any", "?  F1", "help: keys, then (Left/Right) each game's rules and the fair shuffle"),
    ("any", "Esc", "close an overlay, cancel a selection"),
    ("any", "Ctrl-C", "quit (asks first while you sit in a running match; started again, "
                      "cardclient takes its seats back)"),
    ("lobby", "Up/Down", "move through the matches"),
    ("lobby", "Enter", "open the match: back to your own, join an open seat, replay a "
                       "finished one, else watch"),
    ("lobby", "i", "details of the selected match (players, options, result)"),
    ("lobby", "p", "replay the selected finished match"),
    ("lobby", "h", "history: every stored finished match, newest first; Enter replays"),
    ("lobby", "c", "create a match (game, options, server bot opponent, seat, timer)"),
    ("lobby", "j", "join the selected match"),
    ("lobby", "w", "watch the selected match"),
    ("lobby", "m", "queue for matchmaking (choose the game)"),
    ("lobby", "u", "leave the matchmaking queue"),
    ("lobby", "r", "refresh the lobby"),
    ("lobby", "L", "leaderboard (Left/Right game, PgUp/PgDn page, Enter a player's profile)"),
    ("lobby", "P", "your profile: ratings per game, recent matches (PgUp/PgDn)"),
    ("lobby", "Tab", "back to the match you are in"),
    ("lobby", "q", "quit (asks first while you sit in a running match)"),
    ("match", "Tab", "back to the lobby (you keep your seat)"),
    ("match", "x", "leave the match (press twice: resigns a running match)"),
    ("match", "l", "numbered list of every legal move; type its number, Enter"),
    ("match", "c", "chat: type a line to the players and spectators, Enter sends"),
    ("match", "PgUp/PgDn", "scroll the log"),
    ("match", "r  p", "(match over) rematch, replay it"),
    ("match", "Esc", "(match over) between the end screen and the board"),
    ("datastructures", "1-9", "choose hand card N as the source (then a target)"),
    ("datastructures", "h", "choose the queue head as the source"),
    ("datastructures", "t / o", "choose the top of your / the opponent's stack"),
    ("datastructures", "Left/Right", "move between the selectable choices"),
    ("datastructures", "1-3", "(after a source) target your array N"),
    ("datastructures", "s", "(after a hand card) put it on your stack (phase 2)"),
    ("datastructures", "q", "(after a hand card) enqueue it at the queue tail (phase 2)"),
    ("datastructures", "k", "(after a hand card) mulligan, keeping that card"),
    ("datastructures", "Enter", "take the highlighted choice"),
    ("datastructures", "m", "mulligan: then the number of the card to keep"),
    ("datastructures", "e", "end phase 1, or end the turn in phase 2"),
    ("datastructures", "v", "view both stacks in full"),
    ("datastructures", "H", "hint: a local bot suggests a move from your own view"),
    ("war", "f  Space", "flip"),
    ("war", "a", "turn auto-flip on or off"),
    ("war", "+  -", "auto-flip pace: faster, slower (turns it on)"),
    ("war", "F", "fast-forward: ask (or agree) to play the rest out at once"),
    ("replay", "Left/Right", "one move back, forward (Up/Down: 10, PgUp/PgDn: 50)"),
    ("replay", "Home/End", "the opening position, the end"),
    ("replay", "g", "go to a move: type its number, Enter"),
    ("replay", "Space", "play or pause"),
    ("replay", "+  -", "playback speed"),
    ("replay", "v", "see it as a spectator did, or as your seat did (your own matches)"),
    ("replay", "Esc", "back"),
)

TITLES = {"any": "Everywhere", "lobby": "Lobby", "match": "In a match",
          "datastructures": "Data Structures", "war": "War", "replay": "Replay viewer"}


def help_lines(screens: tuple[str, ...] | None = None) -> list[str]:
    """The help text, one key per line, grouped by screen (all screens by default)."""
    out: list[str] = []
    for screen, title in TITLES.items():
        if screens is not None and screen not in screens:
            continue
        out.append(f"{title}:")
        out.extend(f"  {keys:<11} {what}" for s, keys, what in KEYMAP if s == screen)
    return out


def markdown_table() -> str:
    """The key list as a Markdown table (for the README)."""
    rows = ["| where | keys | what |", "|---|---|---|"]
    rows += [f"| {TITLES[s]} | `{k}` | {w} |" for s, k, w in KEYMAP]
    return "\n".join(rows)
