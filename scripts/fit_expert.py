"""Fit ``engine.bots.ismcts_expert``'s policy to a stronger search's choices.

Expert iteration (Anthony, Tian and Barber, 2017). ``label`` plays Data
Structures games of ``--match`` (two registered strategies joined by ``-``,
seats swapped every game, each given ``--iterations`` per decision) and, at a
``--share`` of the decisions of either seat that have more than one distinct
move, asks a fresh ``ismcts`` (no subtree reuse) with ``--expert`` iterations
which move it would make; it writes one JSON line a decision: the game, every
distinct move's :func:`engine.bots.ismcts_expert.features`, the expert's key
and each root move's mean reward. ``fit`` reads such files, fits a softmax over
a linear score of the features by Newton's method with a ridge (the last
``--holdout`` of the games of each file held out, whole), and prints the
held-out log-loss and the share of decisions where the policy's favourite is
the expert's, beside greedy's (its favourite, and a softmax on ``greedy_best``
alone) and a uniform choice; then the ``WEIGHTS`` line for the module.

    python scripts/fit_expert.py label --match ismcts-greedy --games 40 \
        --expert 500 --seed 1 --out /tmp/expert1.jsonl
    python scripts/fit_expert.py fit /tmp/expert*.jsonl

Pure Python, as ``scripts/fit_evaluation.py`` (whose linear solver it shares):
the weights go into the engine as a constant.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from typing import Any

from engine.bots import Budget, get_strategy
from engine.bots.greedy import board_from_view
from engine.bots.ismcts import ISMCTSStrategy
from engine.bots.ismcts_expert import FEATURES, features
from engine.bots.ismcts_tree import distinct_moves, move_key
from engine.datastructures.intents import from_wire
from engine.playout import play_out
from engine.registry import get_game

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from fit_evaluation import _solve  # noqa: E402


def label(match: str, games: int, seed: int, iterations: int, expert: int,
          share: float, out: Any, reseed: int = 0) -> int:
    """Play ``games`` games of ``match`` and write the expert's labels to ``out``;
    returns the decisions labelled. ``reseed`` is added to every expert's seed
    only: the same games and decisions, labelled by other expert runs (to measure
    how often the expert agrees with itself).

    Raises:
        ValueError: ``match`` is not two strategy names joined by ``-``.
    """
    names = match.split("-")
    if len(names) != 2:
        raise ValueError(f"a match is two strategy names joined by '-', got {match!r}")
    game = get_game("datastructures")
    rng = random.Random(seed)
    written = 0
    for g in range(games):
        seats = names if g % 2 == 0 else names[::-1]
        deal = seed * 100003 + g // 2
        bots = [get_strategy(name, deal * 2 + i) for i, name in enumerate(seats)]
        state = game.new_state(deal, {})

        def choose(state: Any, mover: int, legal: list[Any], g: int = g,
                   bots: list[Any] = bots, seats: list[str] = seats) -> Any:
            nonlocal written
            if len(legal) == 1:
                return legal[0]
            view = state.view(mover)
            board = board_from_view(view, mover)
            moves = distinct_moves([from_wire(i) for i in legal], board.hand)
            if len(moves) > 1 and rng.random() < share:
                strong = ISMCTSStrategy(rng.randrange(1 << 30) + reseed, reuse=False)
                pick = strong.choose("datastructures", mover, view, legal,
                                     Budget.iterations(expert))
                key = move_key(from_wire(pick), board.hand)
                means = {k: s[1] / s[0] for k, s in strong._race_stats.items() if s[0]}
                f = features(board, moves)
                out.write(json.dumps({"match": match, "game": g, "seat": mover,
                                      "seat_bot": seats[mover], "keys": list(f),
                                      "features": list(f.values()), "expert": key,
                                      "means": [means.get(k) for k in f]}) + "\n")
                out.flush()
                written += 1
            return bots[mover].choose("datastructures", mover, view, legal,
                                      Budget.iterations(iterations))

        play_out(state, choose, max_moves=5000)
        print(f"game {g}: {written} labels so far", file=sys.stderr)
    return written


Decision = tuple[list[list[float]], int]


def load(paths: list[str], holdout: float) -> tuple[list[Decision], list[Decision]]:
    """(fitted, held out) decisions from label files: each (features of every move,
    index of the expert's move); the last ``holdout`` of each file's games held out."""
    train: list[Decision] = []
    test: list[Decision] = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        if not rows:
            continue
        last = max(r["game"] for r in rows) + 1
        cut = last - max(1, int(last * holdout))
        for r in rows:
            y = r["keys"].index(r["expert"])
            (train if r["game"] < cut else test).append((r["features"], y))
    return train, test


def _probs(x: list[list[float]], w: list[float]) -> list[float]:
    s = [sum(a * b for a, b in zip(w, f, strict=True)) for f in x]
    hi = max(s)
    e = [math.exp(v - hi) for v in s]
    t = sum(e)
    return [v / t for v in e]


def fit(data: list[Decision], ridge: float, steps: int = 15) -> list[float]:
    """Softmax weights of maximum likelihood with the penalty ``ridge |w|^2 / 2``
    (Newton's method; the features are sparse, so only non-zero entries are summed)."""
    n = len(data[0][0][0])
    w = [0.0] * n
    sparse = [([[(i, v) for i, v in enumerate(f) if v] for f in x], y) for x, y in data]
    for _ in range(steps):
        grad = [-ridge * v for v in w]
        hess = [[ridge if i == j else 0.0 for j in range(n)] for i in range(n)]
        for (x, y), (sx, _) in zip(data, sparse, strict=True):
            p = _probs(x, w)
            mean = [0.0] * n
            for pk, f in zip(p, sx, strict=True):
                for i, v in f:
                    mean[i] += pk * v
                    row = hess[i]
                    for j, u in f:
                        row[j] += pk * v * u
            for i, v in sx[y]:
                grad[i] += v
            nz = [(i, m) for i, m in enumerate(mean) if m]
            for i, m in nz:
                grad[i] -= m
                row = hess[i]
                for j, u in nz:
                    row[j] -= m * u
        step = _solve(hess, grad)
        w = [a + b for a, b in zip(w, step, strict=True)]
        if max(abs(v) for v in step) < 1e-6:
            break
    return w


def score(data: list[Decision], w: list[float]) -> tuple[float, float]:
    """(mean log-loss, share of decisions whose favourite is the expert's move)."""
    loss = 0.0
    hits = 0
    for x, y in data:
        p = _probs(x, w)
        loss -= math.log(max(p[y], 1e-12))
        hits += int(max(range(len(p)), key=p.__getitem__) == y)
    return loss / len(data), hits / len(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    lab = sub.add_parser("label", help="play games and write the expert's labels")
    lab.add_argument("--match", default="ismcts-greedy")
    lab.add_argument("--games", type=int, default=40)
    lab.add_argument("--seed", type=int, default=1)
    lab.add_argument("--iterations", type=int, default=12,
                     help="iterations per decision of the bots playing the games")
    lab.add_argument("--expert", type=int, default=500, help="the expert's iterations")
    lab.add_argument("--share", type=float, default=0.25,
                     help="share of the decisions (with a choice) labelled")
    lab.add_argument("--out", required=True)
    lab.add_argument("--reseed", type=int, default=0,
                     help="added to the experts' seeds only (the same decisions, other labels)")
    fitp = sub.add_parser("fit", help="fit the policy to label files")
    fitp.add_argument("files", nargs="+")
    fitp.add_argument("--holdout", type=float, default=0.25)
    fitp.add_argument("--ridge", type=float, default=1.0)
    args = parser.parse_args(argv)
    if args.command == "label":
        with open(args.out, "w", encoding="utf-8") as out:
            n = label(args.match, args.games, args.seed, args.iterations, args.expert,
                      args.share, out, args.reseed)
        print(f"{n} decisions labelled", file=sys.stderr)
        return 0
    train, test = load(args.files, args.holdout)
    w = fit(train, args.ridge)
    greedy_only = [0.0] * len(FEATURES)
    greedy_only[0] = fit([([f[:1] for f in x], y) for x, y in train], args.ridge)[0]
    print(f"{len(train)} decisions fitted, {len(test)} held out, ridge {args.ridge:g}")
    for name, x in zip(FEATURES, w, strict=True):
        print(f"  {name:>18} {x:+.4f}")
    uniform = sum(math.log(len(x)) for x, _ in test) / len(test)
    greedy_hits = sum(x[y][0] / sum(f[0] for f in x) for x, y in test) / len(test)
    print(f"{'held out':>24} {'log-loss':>8} {'top-1':>6}")
    for name, ww in (("fitted", w), ("greedy_best alone", greedy_only)):
        loss, hits = score(test, ww)
        print(f"{name:>24} {loss:8.4f} {hits:6.3f}")
    print(f"{'greedy (ties split)':>24} {'':>8} {greedy_hits:6.3f}")
    print(f"{'uniform':>24} {uniform:8.4f}")
    print("WEIGHTS = (" + ", ".join(f"{x:.4f}" for x in w) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
