"""The `cardsim` command: offline simulator and tournaments (engine only, no server).

    cardsim war --games 1000 --seed 1 [--return played] [--short-war lose] [--cap N] [--json]
    cardsim datastructures --games 100 --seed 1 [--cap N] [--json]
    cardsim tournament war|datastructures [--bots random,greedy,search] ...

Each subcommand lives in its own module under ``client/sim/`` with two
functions, ``add_arguments(parser)`` and ``run(args) -> int``. A module that is
not there yet still gets a subcommand, which says plainly that it is not built
and exits with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType

from protocol.version import __version__

PROG = "cardsim"
#: subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "war": ("client.sim.war", "play War games and report their statistics"),
    "datastructures": ("client.sim.datastructures",
                       "play random Data Structures games and report their statistics"),
    "tournament": ("client.sim.tournament", "play strategies against each other"),
}
NOT_BUILT = 2


def _load(module: str) -> tuple[ModuleType | None, str | None]:
    """Import a subcommand module: ``(module, None)``, or ``(None, why)`` if it cannot be."""
    try:
        return importlib.import_module(module), None
    except ModuleNotFoundError as exc:
        if exc.name == module:
            return None, "not built yet in this version"
        return None, f"cannot be loaded ({exc})"
    except Exception as exc:  # a broken module must not take --help down with it
        return None, f"cannot be loaded ({type(exc).__name__}: {exc})"


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, one subparser per subcommand."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="cardsim: offline simulator and tournaments for the card games")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, summary) in SUBCOMMANDS.items():
        module, why = _load(module_name)
        if module is None:
            p = sub.add_parser(name, help=f"{summary} ({why})", prog=f"{PROG} {name}")
            p.set_defaults(handler=_not_built(name, why or ""), any_arguments=True)
            continue
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


def _not_built(name: str, why: str):
    def handler(args: argparse.Namespace) -> int:
        print(f"{PROG} {name}: {why}.", file=sys.stderr)
        return NOT_BUILT
    return handler


def main(argv: list[str] | None = None) -> int:
    """Entry point of `cardsim`; returns the exit status (2: bad usage or not built)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "any_arguments", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return NOT_BUILT
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
