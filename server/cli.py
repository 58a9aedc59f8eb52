"""The `cardserver` command: the authoritative card-game server."""

from __future__ import annotations

import sys

from client.placeholder import not_built_main


def main(argv: list[str] | None = None) -> int:
    """Entry point of `cardserver`; returns the exit status."""
    return not_built_main("cardserver", "cardserver: the authoritative card-game server", argv)


if __name__ == "__main__":
    sys.exit(main())
