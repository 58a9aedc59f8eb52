"""The `cardclient` command: the full-screen terminal client for players.

    cardclient connect HOST:PORT [--name NAME] [--no-color]

Keys: press ``?`` in the client, or see README.md ("cardclient"). Log records go to
the file named by the ``CARDCLIENT_LOG`` environment variable (nowhere by default).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import logging
import os
import signal
import sys
from functools import partial

from client.address import parse_address
from protocol.version import __version__


def _default_name() -> str:
    try:
        name = getpass.getuser()
    except Exception:  # no user database entry (containers): any name will do
        name = ""
    return (name or "player")[:32]


def build_parser() -> argparse.ArgumentParser:
    """The command line of `cardclient`."""
    parser = argparse.ArgumentParser(
        prog="cardclient",
        description="cardclient: the terminal client for players. Connect to a cardserver, "
                    "see the lobby, create, join, watch or queue for matches, and play War "
                    "and Data Structures with the keyboard (press ? in the client for keys).")
    parser.add_argument("--version", action="version", version=f"cardclient {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="connect")
    connect = sub.add_parser("connect", help="connect to a server and open the lobby",
                             description="Connect to a server and open the lobby.")
    connect.add_argument("address", metavar="HOST:PORT", help="the server, e.g. localhost:7000")
    connect.add_argument("--name", default=_default_name(),
                         help="your display name, 1..32 characters [default: your login name]")
    connect.add_argument("--no-color", action="store_true",
                         help="draw without colour (also when the NO_COLOR variable is set)")
    return parser


def _quiet_logging() -> None:
    """Keep log records off the full-screen terminal: to the file named by the
    ``CARDCLIENT_LOG`` variable, else nowhere."""
    path = os.environ.get("CARDCLIENT_LOG")
    handler: logging.Handler = logging.FileHandler(path) if path else logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.INFO if path else logging.WARNING, handlers=[handler],
                        force=True)


def main(argv: list[str] | None = None) -> int:
    """Entry point of `cardclient`; returns the exit status."""
    parser = build_parser()
    ns = parser.parse_args(argv)
    if ns.command != "connect":
        parser.print_help()
        return 2
    try:
        host, port = parse_address(ns.address)
    except ValueError as exc:
        parser.error(str(exc))
    name = ns.name.strip()
    if not 1 <= len(name) <= 32:
        parser.error("--name must be 1..32 characters")
    color = not ns.no_color and not os.environ.get("NO_COLOR")
    _quiet_logging()
    try:
        asyncio.run(run_client(host, port, name, color=color))
    except KeyboardInterrupt:
        pass
    except Exception as exc:  # never a traceback for the player
        if os.environ.get("CARDCLIENT_DEBUG"):
            raise
        print(f"cardclient: stopped by an unexpected error: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return 1
    return 0


async def run_client(host: str | None, port: int | None, name: str, *, color: bool = True,
                     input: object = None, output: object = None, connect: object = None,
                     backoff: object = None) -> None:
    """Run the client until the player quits (the trio side as a guest of asyncio).

    Args:
        host, port: the server.
        name: the display name sent in hello.
        color: False for plain text.
        input, output, connect, backoff: for tests (pipe input, DummyOutput, a stream
            factory, a short backoff).
    """
    from client.tui.app import build_app
    from client.tui.controller import Controller
    from client.tui.model import Model
    from client.tui.runner import TrioBridge, network_main, run_with_trio_guest

    model = Model(name=name, color=color)
    bridge = TrioBridge()
    controller = Controller(model, submit=bridge.submit)
    app = build_app(controller, color=color, input=input, output=output)
    loop = asyncio.get_running_loop()
    try:  # SIGTERM quits as cleanly as Ctrl-C (the terminal is restored)
        loop.add_signal_handler(signal.SIGTERM, controller.quit)
    except (NotImplementedError, RuntimeError, ValueError):
        pass  # no signal support here (not the main thread, or not Unix)
    await run_with_trio_guest(app, partial(network_main, controller, bridge, host, port, name,
                                           connect=connect, backoff=backoff))


if __name__ == "__main__":
    sys.exit(main())
