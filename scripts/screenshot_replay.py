#!/usr/bin/env python3
"""Screenshots of a match's replay page in headless Chromium, and the small browser
driver the page's test uses.

    scripts/screenshot_replay.py MATCH_ID --db PATH --out DIR [--steps 0,10,end]
    scripts/screenshot_replay.py --page FILE.html --out DIR [--steps ...]

It writes the page with ``cardserver replay ID --html`` (or takes one), opens
it in Debian's ``chromium`` (headless, no sandbox, no network services, a fresh
profile), presses keys as a reader would (Right, End, ...), and saves one PNG
per requested position. The browser is driven over the DevTools protocol on a
pipe (``--remote-debugging-pipe``: JSON messages ending in a NUL byte on file
descriptors 3 and 4), so nothing but the standard library is needed.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

#: Flags for a quiet, local, throwaway browser.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--disable-breakpad", "--disable-crash-reporter",
         "--remote-debugging-pipe")
#: DevTools key descriptions for the keys the page knows.
KEY_CODES = {"ArrowRight": 39, "ArrowLeft": 37, "Home": 36, "End": 35, " ": 32}


class BrowserError(Exception):
    """The browser could not be started or answered with an error."""


def find_chromium() -> str | None:
    """The Chromium binary on PATH (``chromium``, ``chromium-browser``), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium with one page, driven over ``--remote-debugging-pipe``.

    Raises:
        BrowserError: no Chromium, or it did not start.
    """

    def __init__(self, width: int = 1100, height: int = 900, binary: str | None = None,
                 timeout: float = 30.0) -> None:
        self.binary = binary or find_chromium()
        if self.binary is None:
            raise BrowserError("chromium is not installed")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="replay-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        def child_pipes() -> None:  # in the child: our pipe ends become fds 3 and 4
            read_end, write_end = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        # fds 3 and 4 are open here (the pipes above took the lowest free numbers), so
        # they can be kept for the child, where child_pipes puts the pipe ends on them
        self.proc = subprocess.Popen(
            [self.binary, *FLAGS, f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            pass_fds=(3, 4), preexec_fn=child_pipes, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # everything the browser writes stays in the throwaway profile
            env={**os.environ, "XDG_CONFIG_HOME": self.profile, "XDG_CACHE_HOME": self.profile})
        os.close(to_child_r)
        os.close(from_child_w)
        self._next_id = 0
        self._buffer = b""
        self.events: list[dict[str, Any]] = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next((t for t in targets if t.get("type") == "page"), None)
        target = page["targetId"] if page else \
            self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width,
                  height=height, deviceScaleFactor=1, mobile=False)

    # -- the protocol -----------------------------------------------------------

    def _read_message(self) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_child], [], [], self.timeout)
            if not ready:
                raise BrowserError("the browser did not answer in time")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise BrowserError("the browser closed its pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one command and return its result (events that arrive meanwhile are kept
        in :attr:`events`).

        Raises:
            BrowserError: the browser answered with an error or stopped answering.
        """
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read_message()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result") or {}
            self.events.append(reply)

    def wait_event(self, method: str) -> dict[str, Any]:
        """Wait for the next event ``method`` (or take it if it already came)."""
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(i)
        while True:
            event = self._read_message()
            if event.get("method") == method:
                return event
            self.events.append(event)

    # -- what a test or a script does ----------------------------------------------

    def open(self, path: Path) -> None:
        """Load a local file and wait until it has loaded."""
        self.events.clear()
        self.call("Page.navigate", session=True, url=path.resolve().as_uri())
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page.

        Raises:
            BrowserError: the expression threw.
        """
        result = self.call("Runtime.evaluate", session=True, expression=expression,
                           returnByValue=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result.get("result", {}).get("value")

    def press(self, key: str) -> None:
        """Press and release one key, as a person would (keyDown, keyUp)."""
        code = KEY_CODES.get(key, 0)
        name = "Space" if key == " " else key
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", session=True, type=kind, key=key, code=name,
                      windowsVirtualKeyCode=code, nativeVirtualKeyCode=code)

    def screenshot(self, path: Path) -> None:
        """Save the page as a PNG."""
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        """Stop the browser and remove its profile."""
        try:
            self.call("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def shoot(page: Path, out: Path, steps: list[str]) -> list[Path]:
    """One screenshot per step (a move number or ``end``), reached by key presses."""
    out.mkdir(parents=True, exist_ok=True)
    shots = []
    with Browser() as browser:
        browser.open(page)
        for step in steps:
            if step == "end":
                browser.press("End")
            else:
                browser.press("Home")
                for _ in range(int(step)):
                    browser.press("ArrowRight")
            where = browser.evaluate("document.body.dataset.position")
            path = out / f"replay-{where}.png"
            browser.screenshot(path)
            shots.append(path)
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("match", nargs="?", help="a stored match id (with --db)")
    parser.add_argument("--db", help="the server's store")
    parser.add_argument("--page", help="an existing replay page instead of a match id")
    parser.add_argument("--out", default="replay-shots", help="directory for the PNG files")
    parser.add_argument("--steps", default="0,10,end",
                        help="positions to capture, comma separated (a number or end)")
    ns = parser.parse_args()
    if ns.page:
        page = Path(ns.page)
    elif ns.match and ns.db:
        page = Path(tempfile.mkdtemp(prefix="replay-page-")) / f"{ns.match}.html"
        cardserver = Path(sys.executable).parent / "cardserver"
        done = subprocess.run([str(cardserver), "replay", ns.match, "--db", ns.db,
                               "--html", str(page)], capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stderr.strip(), file=sys.stderr)
            return 1
    else:
        parser.error("give MATCH_ID --db PATH, or --page FILE")
    try:
        shots = shoot(page, Path(ns.out), [s.strip() for s in ns.steps.split(",") if s.strip()])
    except BrowserError as exc:
        print(f"screenshot_replay: {exc}", file=sys.stderr)
        return 1
    for shot in shots:
        print(shot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
