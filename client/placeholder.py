"""A shared stand-in for console scripts whose feature has not landed yet.

It answers ``--help`` and ``--version`` honestly and exits non-zero for anything
else, saying plainly that the command is not built yet.
"""

from __future__ import annotations

import argparse
import sys

from protocol.version import __version__


def not_built_main(prog: str, description: str, argv: list[str] | None = None) -> int:
    """Run a placeholder command line; returns the process exit status (2: not built)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--version", action="version", version=f"{prog} {__version__}")
    parser.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.parse_args(argv)
    print(f"{prog}: not built yet in this version ({__version__}).", file=sys.stderr)
    return 2
