"""A minimal bot: plays the first legal intent. See README.md, "Writing a bot".

Usage: python examples/minimal_bot.py [HOST:PORT] [war|datastructures]
"""

import sys

from client.bots.sdk import run_bot


def first_legal(view, legal):
    return legal[0]  # the server lists every legal intent: no rules needed


if __name__ == "__main__":
    address = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:7000"
    game = sys.argv[2] if len(sys.argv) > 2 else "datastructures"
    print(run_bot(first_legal, address, game=game, name="minimal").format())
