#!/usr/bin/env python3
"""`cardclient` remembers its seat: a closed terminal, then the client started again.

What it does, checking each screen with ``tmux capture-pane`` (the server and
pane helpers are those of ``scripts/tmux_e2e.py``):

1. starts ``cardserver`` on a free loopback port with a fresh store, and points
   ``XDG_STATE_HOME`` at a fresh directory (where the client remembers);
2. alice opens ``cardclient``, creates a War match against the server's bot and
   flips a few battles;
3. her terminal is closed (the tmux session killed: the client gets SIGHUP);
4. ``cardclient`` started again with the same name says which match it is back
   in, shows that War match where it was, and flips on;
5. ``q`` asks first (she still sits in a running match), ``q`` again quits with
   status 0; ``--forget`` then starts afresh in the lobby;
6. bob registers with ``--register --remember-login`` (the password typed twice at
   the prompt) and quits; with his session forgotten, ``cardclient`` logs him in
   again with the remembered API token.

Usage: ``scripts/tmux_resume.py [--keep]``. Exits 0 when every check passed, 1 with
the failing screen otherwise, 77 when tmux is not installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "tmux_e2e", Path(__file__).resolve().parent / "tmux_e2e.py")
assert _spec is not None and _spec.loader is not None
e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(e2e)


class Client(e2e.Pane):
    """``cardclient`` in its own tmux session, with extra command-line flags."""

    def __init__(self, session: str, name: str, port: int, *flags: str) -> None:
        self.session, self.name = session, name
        command = (f"{e2e.BIN / 'cardclient'} connect 127.0.0.1:{port} --name {name} "
                   f"{' '.join(flags)} 2>{session}.err; echo CLIENT-EXITED-$?; sleep 30")
        e2e.tmux("new-session", "-d", "-s", session, "-x", "80", "-y", "24",
                 "-c", str(tempfile.gettempdir()), command)


def _client_state():
    sys.path.insert(0, str(e2e.ROOT))
    import client.state

    return client.state


def flip_battles(pane: e2e.Pane, count: int, timeout: float = 30.0) -> int:
    """Flip until ``count`` more battles are resolved; the battle number reached.

    ``f`` is pressed only while the seat's panel asks for it (``your flip: press
    f``): when the bot has not flipped yet, waiting costs nothing, whereas a
    fixed number of presses runs out on a slow machine (each press made while
    the client waits for the bot is refused, rightly, by the client itself).

    Raises:
        e2e.Failed: ``count`` battles were not resolved within ``timeout`` seconds.
    """
    start = int(pane.wait(r"battle (\d+)", "the battle number").group(1))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = pane.screen()
        found = re.search(r"battle (\d+)", screen)
        if found and int(found.group(1)) >= start + count:
            return int(found.group(1))
        if "your flip: press f" in screen:
            pane.keys("f", pause=0.3)
        else:
            time.sleep(0.1)
    raise e2e.Failed(f"{pane.name}: flipping did not get {count} battles on in "
                     f"{timeout:.0f} s:\n{pane.screen()}")


def run(keep: bool) -> None:
    if shutil.which("tmux") is None:
        print("tmux_resume: tmux is not installed; skipped", file=sys.stderr)
        sys.exit(77)
    work = Path(tempfile.mkdtemp(prefix="cardclient-resume-"))
    os.environ["XDG_STATE_HOME"] = str(work / "state")  # the tmux server inherits it
    os.environ["XDG_CONFIG_HOME"] = str(work / "config")  # the create form's memory too
    port = e2e.free_port()
    server = e2e.Server(port, work / "resume.db", work / "server.log")
    tag = f"resume{os.getpid()}"
    panes: list[e2e.Pane] = []
    started = time.monotonic()
    try:
        server.start()
        alice = Client(f"{tag}a", "alice", port)
        panes.append(alice)
        alice.wait(r"Games: datastructures, war", "the lobby")
        alice.keys("c")
        alice.wait(r"> game\s+< Data Structures >", "the form")
        alice.keys("Right")
        alice.wait(r"> game\s+< War >", "war chosen")
        for _ in range(10):
            if alice.has(r"> opponent"):
                break
            alice.keys("Down")
        alice.keys("Right")
        alice.wait(r"> opponent\s+< the server's random bot >", "the bot opponent")
        alice.keys("Enter")
        alice.wait(r"War\s+battle 1", "the War screen")
        match = alice.wait(r"  war (m[0-9a-f]{6,})  ", "the match id on the status line").group(1)
        battle = flip_battles(alice, 2)
        print(f"play: ok (match {match}, battle {battle})")

        alice.close()  # the terminal is closed under the running client
        time.sleep(0.5)
        again = Client(f"{tag}b", "alice", port)
        panes.append(again)
        again.wait(rf"back in match {match}", "the client saying where it is back")
        again.wait(rf"war {match}", "the same match on screen")
        again.wait(r"War\s+battle (\d+)", "the War screen again")
        now = int(again.wait(r"battle (\d+)", "the battle number").group(1))
        if now < battle:
            raise e2e.Failed(f"back at battle {now}, before {battle}:\n{again.screen()}")
        flip_battles(again, 1)
        print("resume: ok")

        again.keys("Tab")
        again.wait(r"Games: datastructures, war", "the lobby")
        again.keys("q")
        again.wait(r"q again quits", "the question before quitting while seated")
        again.keys("q")
        again.wait(r"CLIENT-EXITED-0", "a clean exit")
        print("ask: ok")

        fresh = Client(f"{tag}c", "alice", port, "--forget")
        panes.append(fresh)
        fresh.wait(r"Games: datastructures, war", "the lobby")
        time.sleep(1.0)
        if fresh.has(r"back in match"):
            raise e2e.Failed(f"--forget still resumed:\n{fresh.screen()}")
        fresh.keys("q")
        fresh.wait(r"CLIENT-EXITED-0", "a clean exit without asking")
        print("forget: ok")

        # bob registers at the prompt and has the login remembered (an API token)
        bob = Client(f"{tag}d", "bob", port, "--register", "--remember-login")
        panes.append(bob)
        bob.wait(r"new password for bob:", "the password prompt")
        bob.keys("s3cret horse", "Enter")
        bob.wait(r"the same password again:", "the second prompt")
        bob.keys("s3cret horse", "Enter")
        bob.wait(r"this login is remembered", "the remembered login")
        bob.keys("q")
        bob.wait(r"CLIENT-EXITED-0", "a clean exit")
        store = _client_state().ClientState(work / "state" / "cardclient")
        remembered = store.load(f"127.0.0.1:{port}", "bob")
        if not (remembered.api_token or "").startswith("cst_"):
            raise e2e.Failed(f"no API token remembered for bob: {remembered}")
        for path in (work / "state").rglob("*"):
            if path.is_file() and "s3cret" in path.read_text():
                raise e2e.Failed(f"the password is in {path}")
        store.update(f"127.0.0.1:{port}", "bob", resume=None)  # as if the session expired
        again = Client(f"{tag}e", "bob", port)
        panes.append(again)
        again.wait(r"logged in as bob", "the login with the remembered token")
        again.keys("q")
        again.wait(r"CLIENT-EXITED-0", "a clean exit")
        print(f"login: ok\ntmux_resume: all checks passed in {time.monotonic() - started:.1f} s")
    finally:
        if not keep:
            for pane in panes:
                pane.close()
        server.stop()
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true", help="leave the tmux sessions open")
    ns = parser.parse_args()
    try:
        run(ns.keep)
    except e2e.Failed as exc:
        print(f"tmux_resume: FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        e2e.tmux("kill-server", check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
