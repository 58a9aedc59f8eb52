"""The `cardsim` command: offline simulator and tournaments."""

from __future__ import annotations

import sys

from client.placeholder import not_built_main


def main(argv: list[str] | None = None) -> int:
    """Entry point of `cardsim`; returns the exit status."""
    return not_built_main("cardsim", "cardsim: offline simulator and tournaments", argv)


if __name__ == "__main__":
    sys.exit(main())
