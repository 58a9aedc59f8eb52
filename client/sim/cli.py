"""The `cardsim` command: offline simulator and tournaments (engine only, no server).

    cardsim war --games 1000 --seed 1 [--return played] [--short-war lose] [--cap N] [--json]
    cardsim datastructures --games 100 --seed 1 [--cap N] [--json]
    cardsim tournament war|datastructures [--bots random,greedy,search] ...
    cardsim ladder datastructures [--games N] [--time-budget S] [--markdown] ...

Each subcommand lives in its own module under ``client/sim/`` with two
functions, ``add_arguments(parser)`` and ``run(args) -> int``; :data:`SUBCOMMANDS`
lists them, one row each.
"""

from __future__ import annotations

import argparse
import sys
from types import ModuleType

from client.sim import datastructures, ladder, tournament, war
from protocol.version import __version__

PROG = "cardsim"
#: subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[ModuleType, str]] = {
    "war": (war, "play War games and report their statistics"),
    "datastructures": (datastructures,
                       "play random Data Structures games and report their statistics"),
    "tournament": (tournament, "play strategies against each other"),
    "ladder": (ladder, "every strategy against every other: an Elo ladder with intervals"),
}
#: Exit status for bad usage.
USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, one subparser per subcommand."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="cardsim: offline simulator and tournaments for the card games")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, summary) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=summary, description=_user_doc(module.__doc__),
                           prog=f"{PROG} {name}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(p)
        p.set_defaults(handler=module.run)
    return parser


def _user_doc(doc: str | None) -> str | None:
    """A module docstring for ``--help``: without the paragraphs written for programmers
    (those naming ``:func:`` or ``:class:`` targets), and without reST double backquotes."""
    if not doc:
        return None
    keep = [p for p in doc.strip().split("\n\n") if ":func:" not in p and ":class:" not in p]
    return "\n\n".join(keep).replace("``", "")


def main(argv: list[str] | None = None) -> int:
    """Entry point of `cardsim`; returns the exit status (2: bad usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return USAGE
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
