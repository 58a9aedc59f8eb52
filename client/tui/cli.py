"""The `cardclient` command: the terminal client for players."""

from __future__ import annotations

import sys

from client.placeholder import not_built_main


def main(argv: list[str] | None = None) -> int:
    """Entry point of `cardclient`; returns the exit status."""
    return not_built_main("cardclient", "cardclient: the terminal client for players", argv)


if __name__ == "__main__":
    sys.exit(main())
