"""The `cardserver` command: serve (the default), or replay a stored match.

    cardserver [--port 7000] [--host H] [--db PATH] [limits...]   serve until SIGINT/SIGTERM
    cardserver serve [...]                                          the same
    cardserver replay MATCH_ID [--db PATH] [--json] [--html FILE]   a match as the public saw it
    cardserver replay MATCH_ID --verify [--record FILE]             check its shuffles and cards
    cardserver leaderboard GAME [--db PATH] [--limit N] [--json]    print a game's ratings table
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from functools import partial
from typing import Any

from protocol.version import __version__
from server.config import add_arguments, default_db_path, from_namespace
from server.fdlimit import raise_fd_limit


def _serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cardserver",
        description="cardserver: the authoritative card-game server (War, Data Structures). "
                    "Serves until SIGINT or SIGTERM, then shuts down cleanly. "
                    "Also: `cardserver replay MATCH_ID --db PATH [--json] [--html FILE]` prints "
                    "a stored match move by move as a spectator saw it, then the reveal; "
                    "`cardserver leaderboard GAME --db PATH` prints a game's ratings.",
    )
    parser.add_argument("--version", action="version", version=f"cardserver {__version__}")
    add_arguments(parser)
    return parser


def _replay_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cardserver replay",
        description="Print a stored match move by move as the public (a spectator) saw it, "
                    "then the result and the fair-shuffle reveal (finished matches only).")
    parser.add_argument("match", help="the match id")
    parser.add_argument("--db", default=default_db_path(),
                        help="the store [default: %(default)s]")
    parser.add_argument("--json", action="store_true", help="one JSON document instead of text")
    parser.add_argument("--verify", action="store_true",
                        help="replay the finished match from its public record and the reveal "
                             "and check every shuffle and every card shown (exit 1 if one fails)")
    parser.add_argument("--record", metavar="FILE",
                        help="with --verify: check this public record (JSON, as --json prints "
                             "it; - for stdin) instead of the stored one")
    parser.add_argument("--html", metavar="FILE",
                        help="also write the match as one self-contained web page to FILE "
                             "(step through it with the arrow keys)")
    parser.add_argument("--ascii", action="store_true",
                        help="suit letters (7C) instead of glyphs (7\u2663) in the text")
    return parser


def _leaderboard_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cardserver leaderboard",
        description="Print a game's leaderboard from the store: every account with a rated "
                    "match of it, best Glicko-2 rating first (? marks a provisional rating).")
    parser.add_argument("game", help="war or datastructures")
    parser.add_argument("--db", default=default_db_path(),
                        help="the store [default: %(default)s]")
    parser.add_argument("--limit", type=int, default=20, help="lines [default: %(default)s]")
    parser.add_argument("--json", action="store_true", help="one JSON document instead of text")
    return parser


#: Garbage-collector thresholds for the server process (CPython's default is 700, 10,
#: 10). A server with 2,000 connections holds ~300,000 long-lived tracked objects
#: (tasks, cancel scopes, coroutines, match states); with the defaults a full
#: collection ran every few seconds and paused every match for up to 250 ms
#: (docs/performance.md). Young collections every 50,000 allocations let short-lived
#: messages die first; a full collection can still come after 20 x 10 young ones (a few
#: minutes at 1,000 intents/s), so cycles among long-lived objects (a
#: finished match, a closed session) are still reclaimed.
GC_THRESHOLDS = (50_000, 20, 10)


def tune_gc() -> None:
    """Move everything allocated at start-up (modules, tables) out of the collector's
    sight and set :data:`GC_THRESHOLDS`. Reference cycles are still collected."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def main(argv: list[str] | None = None) -> int:
    """Entry point of `cardserver`; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "replay":
        from server.replay import replay_command

        ns = _replay_parser().parse_args(args[1:])
        if ns.verify:
            from server.verify import verify_command

            return verify_command(ns.match, str(ns.db), ns.record)
        try:
            return replay_command(ns.match, str(ns.db), ns.json, html=ns.html,
                                  glyphs=not ns.ascii)
        except BrokenPipeError:  # `cardserver replay ... | head`
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the exit flush
            return 0
    if args and args[0] == "leaderboard":
        from server.profiles import leaderboard_command

        parser = _leaderboard_parser()
        ns = parser.parse_args(args[1:])
        if ns.limit < 1:
            parser.error("--limit must be at least 1")
        return leaderboard_command(ns.game, str(ns.db), ns.limit, ns.json)
    if args and args[0] == "serve":
        args = args[1:]
    parser = _serve_parser()
    ns = parser.parse_args(args)
    try:
        config = from_namespace(ns)
    except ValueError as exc:
        parser.error(str(exc))
    logging.basicConfig(level=config.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    import trio

    from server.app import serve

    log = logging.getLogger("cardserver")
    log.info("cardserver %s starting", __version__)
    files = raise_fd_limit()
    tune_gc()
    if 0 <= files < config.max_connections + 64:
        log.warning("open-file limit %d is below --max-connections %d; raise `ulimit -n`",
                    files, config.max_connections)
    try:
        trio.run(partial(serve, config, signals=True))
    except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - reported, then exit 1
        message = _startup_error(exc, config)
        if message is None:
            raise
        log.error("%s", message)
        return 1
    return 0


def _startup_error(exc: BaseException, config: Any) -> str | None:
    """What to print for an error that stops the server at start (None: a bug, re-raised).

    Errors raised inside a nursery (the cluster's Redis client runs one) come
    wrapped in exception groups; the first known one inside decides.
    """
    from server.cluster.errors import redis_errors
    from server.store import StoreError
    from server.tls import TLSFileError

    known: tuple[type[Exception], ...] = (StoreError, TLSFileError)
    if config.cluster is not None:  # only then is the cluster code (and coredis) loaded
        from server.cluster.redis import PersistenceError
        known += (PersistenceError,)
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _startup_error(inner, config)
            if found is not None:
                return found
        return None
    if isinstance(exc, known):
        return str(exc)
    if isinstance(exc, redis_errors()):
        return f"cannot use the cluster's Redis at {config.cluster}: {exc}"
    if isinstance(exc, RuntimeError) and "already in the cluster" in str(exc):
        return str(exc)
    if isinstance(exc, OSError):
        return (f"cannot listen on {config.host or 'all interfaces'} port {config.port}: "
                f"{exc}")
    return None


if __name__ == "__main__":
    sys.exit(main())
