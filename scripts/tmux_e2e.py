#!/usr/bin/env python3
"""End-to-end run of `cardclient` in real terminals: a server and two clients in tmux.

What it does, checking each screen with ``tmux capture-pane``:

1. starts ``cardserver`` on a free loopback port with a fresh store;
2. opens two 80x24 tmux sessions running ``cardclient connect`` as alice and bob;
3. alice creates a Data Structures match capped at 4 turns; bob sees it first in
   the lobby and joins it; alice reads the rules page and chats;
4. the two play whole turns by key presses (a play when there is one, end the
   phase, a stack card, end the turn), each screen showing whose turn it is;
5. the server is stopped and started again on the same port and store: both
   clients say they lost the connection, resume with their tokens, and the
   game goes on where it was, to the cap and both end screens (fair shuffle
   verified); the lobby says who won;
6. a whole War game between the two, played out by a fast-forward both ask
   for, then its replay stepped through in the replay viewer;
7. alice plays War against the server's bot, bob watches it, auto-flip and its
   pace change, and the window is resized to 160x50 and redrawn;
8. both clients quit with Ctrl-C (twice where still seated: it asks first) and exit
   with status 0.

Usage: ``scripts/tmux_e2e.py [--keep]`` (``--keep`` leaves the tmux sessions
open for a look). Exits 0 when every check passed, 1 with the failing screen
otherwise, 77 when tmux is not installed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from load import free_port  # the scripts' one copy

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
WAIT = 15.0


class Failed(Exception):
    """A check failed; the message holds the screen."""


#: A tmux server of this run's own (``tmux -L``), so nothing else shares or stops it.
SOCKET = f"cardclient-e2e-{os.getpid()}"


def tmux(*args: str, check: bool = True) -> str:
    done = subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True,
                          timeout=10)
    if check and done.returncode != 0:
        raise Failed(f"tmux {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


class Pane:
    """One client in its own tmux session."""

    def __init__(self, session: str, name: str, port: int, cells: int = 80, rows: int = 24,
                 color: bool = True, config: Path | None = None):
        self.session = session
        self.name = name
        flag = "" if color else " --no-color"
        # a fresh config directory: the create form's remembered choices are this run's
        home = f"XDG_CONFIG_HOME={config} " if config is not None else ""
        command = (f"{home}{BIN / 'cardclient'} connect 127.0.0.1:{port} --name {name}{flag} "
                   f"2>{session}.err; echo CLIENT-EXITED-$?; sleep 30")
        tmux("new-session", "-d", "-s", session, "-x", str(cells), "-y", str(rows),
             "-c", str(tempfile.gettempdir()), command)

    def keys(self, *keys: str, pause: float = 0.15) -> None:
        for key in keys:
            tmux("send-keys", "-t", self.session, key)
            time.sleep(pause)

    def screen(self) -> str:
        return tmux("capture-pane", "-p", "-t", self.session)

    def escapes(self) -> str:
        """The screen with its colour escape sequences."""
        return tmux("capture-pane", "-e", "-p", "-t", self.session)

    def wait(self, pattern: str, what: str, timeout: float = WAIT) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.screen(), re.MULTILINE)
            if found:
                return found
            if time.monotonic() > deadline:
                raise Failed(f"{self.name}: timed out waiting for {what} (/{pattern}/); "
                             f"screen:\n{self.screen()}")
            time.sleep(0.1)

    def has(self, pattern: str) -> bool:
        return re.search(pattern, self.screen(), re.MULTILINE) is not None

    def close(self) -> None:
        tmux("kill-session", "-t", self.session, check=False)


class Server:
    """A cardserver subprocess on a fixed port and store."""

    def __init__(self, port: int, db: Path, log: Path) -> None:
        self.port, self.db, self.log = port, db, log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        out = self.log.open("ab")
        self.proc = subprocess.Popen(
            [str(BIN / "cardserver"), "--host", "127.0.0.1", "--port", str(self.port),
             "--db", str(self.db), "--turn-timer", "300", "--grace", "60",
             "--auto-flip-delay", "0.1", "--bot-time-budget", "0.05"],
            stdout=out, stderr=out)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise Failed(f"cardserver exited: {self.log.read_text()[-2000:]}") from None
                time.sleep(0.1)
        raise Failed("cardserver did not listen in time")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def play_turn(me: Pane, other: Pane, last: bool = False) -> None:
    """One whole Data Structures turn for ``me`` by keys; ``other`` waits (``last``: the
    turn cap ends the game with this turn, so both see the end screen instead)."""
    me.wait(r"YOUR TURN\s+phase 1", "my turn")
    other.wait(rf"{me.name}'s turn", "the other screen to say whose turn")
    if me.has(r"Your move: source \["):
        me.keys("Enter", "Enter")  # the first selectable source, then its first target
        me.wait(r"you took \S+ from .* onto array \d", "my play in the log")
    if me.has(r"^Your move:.*  m mulligan"):  # the prompt line, not the key hints
        me.keys("m")
        me.wait(r"which card to keep", "the mulligan prompt")
        me.keys("1")
        me.wait(r"you mulligan: showed", "the mulligan in the log")
    else:
        me.wait(r"e end phase", "end phase offered")
        me.keys("e")
    me.wait(r"phase 2: stack & queue", "phase 2")
    if me.has(r"a hand card for your stack \["):
        me.keys("1")
        me.wait(r"stack \*s", "my stack offered as the target")
        me.keys("s")
        me.wait(r"you put \S+ on your stack", "my stack card in the log")
    me.wait(r"e end turn", "end turn offered")
    me.keys("e")
    if last:
        for pane in (me, other):
            pane.wait(r"GAME OVER", "the end screen")
        return
    me.wait(r"you end the turn", "the end of my turn in the log")
    other.wait(r"YOUR TURN", "the other player's turn")


def select(pane: Pane, row: str, what: str) -> None:
    """In the lobby: move the cursor (Up, then Down) onto the row matching ``row``."""
    pane.wait(row, what)
    for key in ("Up",) * 6 + ("Down",) * 12:
        if pane.has(rf"^.>. \S+\s+{row}"):
            return
        pane.keys(key)
    pane.wait(rf"^.>. \S+\s+{row}", f"the cursor on {what}")


def choose(pane: Pane, field: str, value: str) -> None:
    """In the create form: move to ``field`` and step its value to ``value``."""
    for _ in range(12):
        if pane.has(rf"> {field}\s"):
            break
        pane.keys("Down")
    for _ in range(12):
        if pane.has(rf"> {field}\s+< {value} >"):
            return
        pane.keys("Right")
    pane.wait(rf"> {field}\s+< {value} >", f"{field}: {value}")


def run(keep: bool) -> None:
    if shutil.which("tmux") is None:
        print("tmux_e2e: tmux is not installed; skipped", file=sys.stderr)
        sys.exit(77)
    work = Path(tempfile.mkdtemp(prefix="cardclient-e2e-"))
    port = free_port()
    server = Server(port, work / "e2e.db", work / "server.log")
    tag = f"e2e{os.getpid()}"
    panes: list[Pane] = []
    started = time.monotonic()
    try:
        server.start()
        alice = Pane(f"{tag}a", "alice", port, config=work / "alice")
        bob = Pane(f"{tag}b", "bob", port, color=False, config=work / "bob")
        panes += [alice, bob]
        for pane in panes:
            pane.wait(r"Games: datastructures, war", "the lobby")
            pane.wait(r"^ connected ", "the connected status line")
        print("lobby: ok")

        # alice creates a Data Structures match for two humans, capped at 4 turns
        alice.keys("c")
        alice.wait(r"Create a match", "the create form")
        alice.wait(r"> game\s+< Data Structures >", "Data Structures chosen")
        alice.keys("Down")
        alice.wait(r"> turn cap\s+< 500 >", "the turn cap field")
        alice.keys("4", "Enter")
        alice.wait(r"Waiting for an opponent", "the waiting match")
        bob.keys("r")
        bob.wait(r"^.>  \S+\s+Data Structures\s+open\s+alice vs \(open seat\)",
                 "the open match, first and under the cursor")
        bob.keys("Enter")
        for pane in panes:
            pane.wait(r"Data Structures\s+turn 1/4", "the board")
        # colour: red hearts and diamonds for alice; plain text cards for bob (--no-color)
        if not re.search(r"\x1b\[[0-9;]*31m\[(10|[2-9JQKA])[\u2665\u2666]\]", alice.escapes()):
            raise Failed("alice: no red heart or diamond:\n" + alice.escapes())
        if not re.search(r"\[(10|[2-9JQKA])[CDHS]\]", bob.screen()) or \
                re.search("[\u2660\u2663\u2665\u2666]", bob.screen()):
            raise Failed("bob (--no-color): cards are not plain text:\n" + bob.screen())
        print("colour: ok")
        alice.keys("?")
        alice.wait(r"\[Keys\]", "the help")
        alice.keys("Right")
        alice.wait(r"Aces never go on an array", "the rules page")
        alice.keys("Escape")
        alice.keys("c")
        alice.wait(r"Say \(Enter sends", "the chat line")
        alice.keys("good luck bob", "Enter")
        bob.wait(r"<alice> good luck bob", "alice's chat message")
        print("chat: ok")
        first, second = (alice, bob) if alice.has("YOUR TURN") else (bob, alice)
        print(f"match: ok ({first.name} starts)")

        play_turn(first, second)
        play_turn(second, first)
        turn = int(first.wait(r"turn (\d+)/", "the turn number").group(1))
        print(f"turns: ok (turn {turn})")

        # restart the server: both clients reconnect with their tokens and go on
        server.stop()
        for pane in panes:
            pane.wait(r"reconnecting|connection lost", "the dropped connection")
        server.start()
        for pane in panes:
            pane.wait(r"^ connected ", "the reconnection", timeout=30)
            pane.wait(rf"turn {turn}/", "the same game after the reconnection")
        print("reconnect: ok")
        play_turn(first, second)
        play_turn(second, first, last=True)
        for pane in panes:
            pane.wait(r"Fair shuffle", "the fair-shuffle check")
            pane.wait(r"verified: sha256\(seed \+ salt\) equals the commitment", "verified")
            pane.wait(r"r rematch.*p replay.*Tab lobby", "the end screen's keys")
        print("end screen: ok")
        for pane in panes:
            pane.keys("Tab")
            pane.keys("r")
        alice.wait(r"Data Structures\s+(alice|bob) won|Data Structures\s+draw",
                   "the finished match's winner in the lobby")
        print("lobby result: ok")

        # a whole War game between the two, played out by fast-forward
        alice.keys("c")
        alice.wait(r"> game\s+< Data Structures >", "the form")
        alice.keys("Right")
        alice.wait(r"> game\s+< War >", "war chosen")
        alice.keys("Enter")
        alice.wait(r"War\s+battle 1", "the War screen")
        bob.keys("r")
        select(bob, r"War\s+open\s+alice vs \(open seat\)", "the open War match")
        bob.keys("Enter")
        for pane in panes:
            pane.wait(r"Auto-flip: off\s+running", "the War match running")
        for _ in range(12):  # a war may need several flips
            if alice.has(r"Last battle #1"):
                break
            alice.wait(r"your flip: press f|Last battle #1", "my flip")
            alice.keys("f")
            bob.keys("f", pause=0.3)
        alice.wait(r"Last battle #1: \[.*\] vs \[.*\] +-> .+ takes \d+ cards", "a battle")
        alice.keys("F")
        bob.wait(r"alice asks to fast-forward: F agrees", "the request to fast-forward")
        bob.keys("F")
        for pane in panes:
            pane.wait(r"GAME OVER", "the end of the War game", timeout=60)
        print("war fast-forward: ok")
        alice.keys("p")
        alice.wait(r"Replay \S+\s+move 0/\d+", "the replay viewer")
        alice.keys("Right", "Right", "Right")
        alice.wait(r"move 3/\d+", "three moves on")
        alice.keys("End")
        alice.wait(r"the end: ", "the end of the replay")
        alice.keys("Escape")
        alice.wait(r"GAME OVER", "back at the end screen")
        print("replay: ok")

        # alice plays the server bot; bob watches from the lobby
        for pane in panes:
            pane.keys("x")
            pane.wait(r"Games: datastructures, war", "the lobby")
        alice.keys("c")
        alice.wait(r"> game\s+< War >", "the form remembers War")
        choose(alice, "opponent", "the server's random bot")
        alice.keys("Enter")
        alice.wait(r"War\s+battle 1", "the War screen")
        for _ in range(12):
            if alice.has(r"Last battle #2"):
                break
            alice.wait(r"your flip: press f|Last battle #2", "my flip")
            alice.keys("f", pause=0.3)
        alice.wait(r"deck: \d+ cards.*deck: \d+ cards", "both counts")
        bob.keys("r")
        select(bob, r"War\s+running\s+alice vs random", "the running War match")
        bob.keys("Enter")
        bob.wait(r"Watching\s+running", "bob watching")
        bob.wait(r"\(watching\)", "the status line saying so")
        print("watch: ok")
        alice.keys("a")
        alice.wait(r"Auto-flip: on", "auto-flip on")
        battles = int(alice.wait(r"resolved (\d+)", "battle count").group(1))
        alice.wait(rf"resolved ({battles + 2}|{battles + 3}|{battles + 4}|\d\d+)",
                   "auto-flipped battles")
        alice.keys("-")
        alice.wait(r"a flip every 0\.2 s", "a slower pace")
        alice.keys("a")
        alice.wait(r"Auto-flip: off", "auto-flip off")
        print("war: ok")

        # resize: the layout uses the room and the status line moves to the new bottom
        tmux("resize-window", "-t", alice.session, "-x", "160", "-y", "50")
        deadline = time.monotonic() + WAIT
        while True:  # the client redraws at the new size on SIGWINCH
            lines = alice.screen().rstrip("\n").split("\n")
            if len(lines) == 50 and re.match(r" connected ", lines[-1]):
                break
            if time.monotonic() > deadline:
                raise Failed("after resize the status line is not on row 50:\n"
                             + "\n".join(lines))
            time.sleep(0.1)
        if not any(len(line.rstrip()) > 80 for line in lines):
            raise Failed("after resize nothing uses the wider screen:\n" + "\n".join(lines))
        print("resize: ok")

        alice.keys("?")
        alice.wait(r"\[Keys\]", "the help overlay")
        alice.wait(r"Ctrl-C\s+quit", "Ctrl-C in the help")
        alice.keys("Escape")
        for pane in panes:
            pane.keys("C-c")
            if pane.wait(r"CLIENT-EXITED-0|q again quits", "a clean exit or the question"
                         ).group(0) != "CLIENT-EXITED-0":
                pane.keys("C-c")  # still seated in a running match: it asked first
            pane.wait(r"CLIENT-EXITED-0", "a clean exit")
        for pane in panes:
            err = Path(tempfile.gettempdir(), f"{pane.session}.err")
            text = err.read_text() if err.exists() else ""
            if "Traceback" in text:
                raise Failed(f"{pane.name} printed a traceback:\n{text}")
        print(f"quit: ok\ntmux_e2e: all checks passed in {time.monotonic() - started:.1f} s")
    finally:
        if not keep:
            for pane in panes:
                pane.close()
                Path(tempfile.gettempdir(), f"{pane.session}.err").unlink(missing_ok=True)
            tmux("kill-server", check=False)  # this run's own tmux server only
        else:
            print(f"tmux sessions kept: tmux -L {SOCKET} attach -t {panes[0].session}")
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="leave the tmux sessions open")
    ns = parser.parse_args()
    try:
        run(ns.keep)
    except Failed as exc:
        print(f"tmux_e2e: FAILED: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
