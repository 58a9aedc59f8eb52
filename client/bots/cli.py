"""The ``cardbot`` command: a headless bot that plays over the protocol.

    cardbot connect HOST:PORT --game datastructures --strategy search --matches 5
    cardbot connect HOST:PORT --game war --create            # prints the match id
    cardbot connect HOST:PORT --game war --match ID          # joins that match
    cardbot connect HOST:7000,HOST:7001 --game war           # a cluster: fails over
    cardbot strategies                                       # or --strategy list

It plays through the SDK (:mod:`client.bots.sdk`): matchmaking, reconnection
with the resume token, acting on the newest snapshot. At the end (or on
Ctrl-C) it prints a summary: wins, losses, draws and the mean match length.

It remembers its resume token per server and name (:mod:`client.state`): run
again after a Ctrl-C or a crash, it resumes its session, says which matches it
is back in and plays them to their end first. ``--forget`` starts afresh. An
account's bot logs in with ``--api-token`` (or ``CARDBOT_API_TOKEN``);
``--remember-login`` keeps the token for later runs; ``--rated`` plays rated.
Exit status: 0 done, 1 connection or server error, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import trio

from client.address import parse_addresses
from client.bots.sdk import GAMES, BotError, Summary, play
from client.session import SessionError
from client.sim.tournament import parse_options
from client.state import ClientState, SessionMemory
from engine.bots import DEFAULT_TIME_BUDGET, describe, get_strategy, strategy_names, timed
from protocol.version import __version__


def _strategy_list() -> str:
    lines = ["strategies (in War every strategy just flips):"]
    lines += [f"  {name:<8} {doc}" for name, doc in describe().items()]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The ``cardbot`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="cardbot", description="cardbot: headless bots that play over the protocol",
        epilog=_strategy_list(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"cardbot {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    conn = sub.add_parser("connect", help="connect to a server and play matches",
                          usage="cardbot connect HOST:PORT --game {war,datastructures} "
                                "[options]",
                          epilog=_strategy_list(),
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    needed = conn.add_argument_group("required")
    needed.add_argument("address", metavar="HOST:PORT", nargs="+",
                        help="the server, e.g. 127.0.0.1:7000; tls://HOST:PORT speaks TLS; "
                             "several (a:7000,b:7001 or repeated): the nodes of one server, "
                             "tried in order, resuming on the next after a lost connection")
    # checked in run_connect, so that `--strategy list` works without a game
    needed.add_argument("--game", choices=GAMES, help="war or datastructures (required)")
    conn.add_argument("--ca", metavar="FILE",
                      help="with tls://: trust this PEM CA file instead of the system's roots")
    conn.add_argument("--strategy", default="greedy", metavar="NAME",
                      help=f"one of {', '.join(strategy_names())}; 'list' lists them "
                           "(default: %(default)s)")
    conn.add_argument("--matches", type=int, default=1, metavar="N",
                      help="matches to play (default %(default)s)")
    conn.add_argument("--name", default=None, help="display name (default: bot-STRATEGY)")
    how = conn.add_mutually_exclusive_group()
    how.add_argument("--match", metavar="ID", help="join this match instead of queueing")
    how.add_argument("--create", action="store_true",
                     help="create a match, print its id and wait for an opponent")
    conn.add_argument("--vs-bot", metavar="STRATEGY",
                      help="with --create: a server-side bot takes the other seat")
    conn.add_argument("--seat", type=int, choices=(0, 1), help="seat to take (create/join)")
    conn.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                      help="match option for queue/create, e.g. --option cap=200")
    conn.add_argument("--think", type=float, default=0.0, metavar="SECONDS",
                      help="pause before each move (default %(default)s)")
    conn.add_argument("--time-budget", type=float, default=DEFAULT_TIME_BUDGET,
                      metavar="SECONDS", help="search time per move (default %(default)s)")
    conn.add_argument("--seed", type=int, default=None, help="seed the strategy's generator")
    conn.add_argument("--api-token", default=os.environ.get("CARDBOT_API_TOKEN"),
                      metavar="TOKEN", help="log in as the account NAME with this API token "
                      "(default: $CARDBOT_API_TOKEN, else one remembered)")
    conn.add_argument("--remember-login", action="store_true",
                      help="remember --api-token for later runs with this server and name")
    conn.add_argument("--rated", action="store_true",
                      help="rated matches (queue or create; needs an account)")
    conn.add_argument("--forget", action="store_true",
                      help="forget the remembered session (and login) first: start afresh")
    conn.add_argument("--client-seed", metavar="HEX", default=None,
                      help="1..64 hex digits mixed into every deal (default: the server's)")
    conn.add_argument("--json", action="store_true", help="print the summary as JSON")
    conn.add_argument("--quiet", action="store_true", help="print only the summary")
    sub.add_parser("strategies", help="list the strategies")
    return parser


def _fail(message: str, status: int) -> int:
    print(f"cardbot: {message}", file=sys.stderr)
    return status


def run_connect(args: argparse.Namespace) -> int:
    """``cardbot connect``; returns the exit status."""
    if args.strategy == "list":
        print(_strategy_list())
        return 0
    if args.game is None:
        return _fail("--game is required (war or datastructures)", 2)
    if args.matches < 1:
        return _fail("--matches must be at least 1", 2)
    if args.think < 0:
        return _fail("--think must be >= 0", 2)
    if args.vs_bot is not None and not args.create:
        return _fail("--vs-bot needs --create", 2)
    try:
        addresses = parse_addresses(args.address)
        address = addresses[0]
        host, port = address
        if args.ca is not None and not any(a.tls for a in addresses):
            raise ValueError("--ca is for tls:// addresses only")
        options = parse_options(args.option)
        strategy = timed(get_strategy(args.strategy, seed=args.seed), args.time_budget,
                         clock=time.perf_counter)
        if args.vs_bot is not None:
            get_strategy(args.vs_bot)
    except ValueError as exc:
        return _fail(str(exc), 2)
    mode = "join" if args.match else "create" if args.create else "queue"
    name = args.name or f"bot-{args.strategy}"
    summary = Summary()

    def say(text: str) -> None:
        if not args.quiet or text.startswith("created match"):
            print(text, flush=True)

    memory = SessionMemory(ClientState(), f"{host}:{port}", name, forget=args.forget,
                           warn=lambda text: print(f"cardbot: {text}", file=sys.stderr))
    session_options: dict[str, Any] = {}
    if args.api_token:
        session_options["auth"] = {"api_token": args.api_token}
        if args.remember_login:
            memory.remember_login(args.api_token)
    kwargs: dict[str, Any] = dict(game=args.game, name=name, matches=args.matches, mode=mode,
                                  match=args.match, seat=args.seat, server_bot=args.vs_bot,
                                  options=options, think=args.think, on_event=say,
                                  summary=summary, rated=args.rated, memory=memory,
                                  session_options=session_options,
                                  client_seed=args.client_seed, tls=address.tls, ca=args.ca,
                                  addresses=addresses if len(addresses) > 1 else None)
    status = 0
    try:
        trio.run(lambda: play(strategy, host, port, **kwargs))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        status = 130
    except OSError as exc:
        status = _fail(f"cannot connect to {','.join(map(str, addresses))}: {exc}", 1)
    except (SessionError, BotError) as exc:
        status = _fail(str(exc), 1)
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2))
    else:
        print(summary.format())
    return status


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``cardbot``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "strategies":
        print(_strategy_list())
        return 0
    if args.command == "connect":
        return run_connect(args)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
