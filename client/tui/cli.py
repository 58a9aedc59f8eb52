"""The `cardclient` command: the full-screen terminal client for players.

    cardclient connect HOST:PORT [--name NAME] [--no-color]
                                 [--login | --register] [--remember-login] [--forget]
    cardclient connect HOST:7000,HOST:7001      # a cluster's nodes: fails over

It remembers its session per server and name (client/state.py): started again
after Ctrl-C, a crash or a closed terminal, it takes its seats back and says
which matches it is back in. ``--login`` asks for the account's password,
``--register`` registers the name (asking for a new password twice), and
``--remember-login`` keeps the login (as an API token, never the password) for
later runs; ``--forget`` drops everything remembered for this server and name.

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
from typing import Any

from client.address import parse_address, parse_addresses  # noqa: F401 (tests import it here)
from client.session import connector, failover_connector
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
    connect.add_argument("address", metavar="HOST:PORT", nargs="+",
                         help="the server, e.g. localhost:7000; tls://HOST:PORT speaks TLS; "
                              "several (a:7000,b:7001 or repeated): the nodes of one "
                              "server, tried in order, resuming on the next after a lost "
                              "connection")
    connect.add_argument("--ca", metavar="FILE",
                         help="with tls://: trust this PEM CA file instead of the system's "
                              "roots")
    connect.add_argument("--name", default=_default_name(),
                         help="your display name, 1..32 characters [default: your login name]")
    connect.add_argument("--no-color", action="store_true",
                         help="draw without colour (also when the NO_COLOR variable is set)")
    how = connect.add_mutually_exclusive_group()
    how.add_argument("--login", action="store_true",
                     help="log in to the account NAME (asks for its password)")
    how.add_argument("--register", action="store_true",
                     help="register NAME as an account (asks for a new password)")
    connect.add_argument("--remember-login", action="store_true",
                         help="remember the login for later runs (an API token, never the "
                              "password)")
    connect.add_argument("--forget", action="store_true",
                         help="forget the remembered session and login for this server and "
                              "name: start afresh")
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
        addresses = parse_addresses(ns.address)
        address = addresses[0]
        host, port = address
        stream_factory: Any = None
        if len(addresses) > 1:
            stream_factory = failover_connector(addresses, ns.ca)
        elif address.tls:
            stream_factory = connector(host, port, address.tls, ns.ca)
    except ValueError as exc:
        parser.error(str(exc))
    except OSError as exc:  # ssl.SSLError included: the --ca file cannot be used
        parser.error(f"--ca {ns.ca}: {exc}")
    if ns.ca is not None and not any(a.tls for a in addresses):
        parser.error("--ca is for tls:// addresses only")
    name = ns.name.strip()
    if not 1 <= len(name) <= 32:
        parser.error("--name must be 1..32 characters")
    color = not ns.no_color and not os.environ.get("NO_COLOR")
    from client.state import ClientState, SessionMemory

    memory = SessionMemory(ClientState(), f"{host}:{port}", name, forget=ns.forget,
                           warn=lambda text: print(f"cardclient: {text}", file=sys.stderr))
    try:
        login = _ask_login(ns, name, bool(memory.remembered.api_token))
    except (EOFError, KeyboardInterrupt):
        return 1
    except ValueError as exc:
        print(f"cardclient: {exc}", file=sys.stderr)
        return 2
    _quiet_logging()
    try:
        error = asyncio.run(run_client(host, port, name, color=color, memory=memory,
                                       login=login, connect=stream_factory))
    except KeyboardInterrupt:
        error = None
    except Exception as exc:  # never a traceback for the player
        if os.environ.get("CARDCLIENT_DEBUG"):
            raise
        print(f"cardclient: stopped by an unexpected error: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return 1
    if error:
        print(f"cardclient: {error}", file=sys.stderr)
        return 1
    return 0


def _ask_login(ns: argparse.Namespace, name: str, remembered: bool) -> Any:
    """The login the command line asks for, with the password typed at a prompt
    (never echoed, never stored).

    Raises:
        ValueError: the two new passwords differ, or one is empty.
    """
    from client.tui.runner import Login

    if ns.login and not remembered:
        return Login(password=getpass.getpass(f"password for {name}: "),
                     remember=ns.remember_login)
    if ns.register:
        first = getpass.getpass(f"new password for {name}: ")
        if not first:
            raise ValueError("the password may not be empty")
        if getpass.getpass("the same password again: ") != first:
            raise ValueError("the two passwords differ")
        return Login(register=first, remember=ns.remember_login)
    return Login(remember=ns.remember_login)


async def run_client(host: str | None, port: int | None, name: str, *, color: bool = True,
                     input: object = None, output: object = None, connect: object = None,
                     backoff: object = None, memory: object = None,
                     login: object = None, on_model: object = None) -> str | None:
    """Run the client until the player quits (the trio side as a guest of asyncio).

    Returns why the client stopped on its own (e.g. a host name that does not
    resolve), or None when the player quit.

    Args:
        host, port: the server.
        name: the display name sent in hello.
        color: False for plain text.
        input, output, connect, backoff: for tests (pipe input, DummyOutput, a stream
            factory, a short backoff).
        memory: what to remember across runs (a :class:`client.state.SessionMemory`).
        login: a :class:`client.tui.runner.Login` (password, registration).
        on_model: for tests: called with the model once it exists.
    """
    from client.tui import prefs
    from client.tui.app import build_app
    from client.tui.controller import Controller
    from client.tui.model import Model
    from client.tui.runner import TrioBridge, network_main, run_with_trio_guest

    model = Model(name=name, color=color, form_memory=prefs.load())
    if model.form_memory:
        model.last_game = list(model.form_memory)[-1]  # the game created last
    if callable(on_model):
        on_model(model)
    bridge = TrioBridge()
    controller = Controller(model, submit=bridge.submit)
    controller.on_remember = prefs.save
    app = build_app(controller, color=color, input=input, output=output)
    loop = asyncio.get_running_loop()
    try:  # SIGTERM quits as cleanly as Ctrl-C (the terminal is restored)
        loop.add_signal_handler(signal.SIGTERM, controller.quit)
    except (NotImplementedError, RuntimeError, ValueError):
        pass  # no signal support here (not the main thread, or not Unix)
    await run_with_trio_guest(app, partial(network_main, controller, bridge, host, port, name,
                                           connect=connect, backoff=backoff, memory=memory,
                                           login=login))
    return model.exit_error


if __name__ == "__main__":
    sys.exit(main())
