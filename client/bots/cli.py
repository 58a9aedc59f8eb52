"""The `cardbot` command: headless bots that play over the protocol."""

from __future__ import annotations

import sys

from client.placeholder import not_built_main


def main(argv: list[str] | None = None) -> int:
    """Entry point of `cardbot`; returns the exit status."""
    return not_built_main("cardbot", "cardbot: headless bots that play over the protocol", argv)


if __name__ == "__main__":
    sys.exit(main())
