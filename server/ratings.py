"""Glicko-2 ratings: one rated match is one rating period.

The algorithm is Mark Glickman's "Example of the Glicko-2 system" (2013),
steps 1-8, with these choices (the same as lichess makes):

* every rated match is its own rating period, and both players are updated from
  their ratings as they were before the match;
* a win scores 1, a draw 0.5, a loss 0 (resignations and forfeits count like any
  other result; an aborted match does not count at all, see :func:`counts`);
* tau (the volatility constraint) is 0.5 and the volatility iteration stops when
  the bracket is narrower than 1e-6;
* a new account starts at rating 1500, RD 350, volatility 0.06;
* the RD does not grow between matches: a player who stops playing keeps the RD
  of their last match (Glickman's step 6 for an idle period is not applied).

A rating is *provisional* while its RD is above :data:`PROVISIONAL_RD`.

Pure: no I/O, no clock; every function here is a plain computation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

#: Glickman's scale factor between the Glicko and Glicko-2 scales (400 / ln 10).
SCALE = 173.7178
INITIAL_RATING = 1500.0
INITIAL_RD = 350.0
INITIAL_VOLATILITY = 0.06
TAU = 0.5
TOLERANCE = 1e-6
#: A rating whose RD is above this is provisional.
PROVISIONAL_RD = 110.0
#: Who may have played an intent that makes a seat count as having played: the
#: seat's own player, directly or through the auto-flip they switched on.
PLAYED_BY = frozenset({"seat", "auto"})


@dataclass(frozen=True, slots=True)
class Rating:
    """One player's Glicko-2 rating on the Glicko scale (1500 / 350 / 0.06 at first).

    Raises:
        ValueError: ``rd`` or ``volatility`` is not positive, or a value is not finite.
    """

    rating: float = INITIAL_RATING
    rd: float = INITIAL_RD
    volatility: float = INITIAL_VOLATILITY

    def __post_init__(self) -> None:
        if not all(math.isfinite(v) for v in (self.rating, self.rd, self.volatility)):
            raise ValueError(f"rating values must be finite: {self}")
        if self.rd <= 0 or self.volatility <= 0:
            raise ValueError(f"rd and volatility must be > 0: {self}")

    @property
    def provisional(self) -> bool:
        """True while the RD is above :data:`PROVISIONAL_RD`."""
        return self.rd > PROVISIONAL_RD


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, g_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-g_j * (mu - mu_j)))


def _new_volatility(delta: float, phi: float, v: float, sigma: float, tau: float,
                    tolerance: float) -> float:
    """Step 5: the Illinois-algorithm root of Glickman's f(x)."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return (ex * (delta * delta - phi * phi - v - ex)
                / (2.0 * (phi * phi + v + ex) ** 2)) - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > tolerance:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def update(player: Rating, results: Sequence[tuple[Rating, float]], tau: float = TAU,
           tolerance: float = TOLERANCE) -> Rating:
    """The player's rating after one rating period (Glickman's steps 2-8).

    Args:
        player: the rating before the period.
        results: (opponent's rating before the period, score) per game; score 1, 0.5, 0.
        tau: the volatility constraint.
        tolerance: the volatility iteration's convergence tolerance.

    Returns:
        The new rating. With no results the rating is returned unchanged (no RD
        growth between matches).

    Raises:
        ValueError: a score is not 0, 0.5 or 1.
    """
    if not results:
        return player
    for _, score in results:
        if score not in (0.0, 0.5, 1.0):
            raise ValueError(f"a score is 0, 0.5 or 1, not {score!r}")
    mu = (player.rating - INITIAL_RATING) / SCALE
    phi = player.rd / SCALE
    inv_v = 0.0
    gain = 0.0
    for opponent, score in results:
        mu_j = (opponent.rating - INITIAL_RATING) / SCALE
        g_j = _g(opponent.rd / SCALE)
        e_j = _expected(mu, mu_j, g_j)
        inv_v += g_j * g_j * e_j * (1.0 - e_j)
        gain += g_j * (score - e_j)
    v = 1.0 / inv_v
    delta = v * gain
    sigma = _new_volatility(delta, phi, v, player.volatility, tau, tolerance)
    phi_star = math.sqrt(phi * phi + sigma * sigma)
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu_new = mu + phi_new * phi_new * gain
    return Rating(SCALE * mu_new + INITIAL_RATING, SCALE * phi_new, sigma)


def scores(winner: int | None) -> tuple[float, float]:
    """Seat 0's and seat 1's scores for a result (``winner`` None is a draw).

    Raises:
        ValueError: ``winner`` is not 0, 1 or None.
    """
    if winner is None:
        return 0.5, 0.5
    if winner not in (0, 1):
        raise ValueError(f"winner must be 0, 1 or None, not {winner!r}")
    return (1.0, 0.0) if winner == 0 else (0.0, 1.0)


def rate_match(seat0: Rating, seat1: Rating, winner: int | None) -> tuple[Rating, Rating]:
    """Both seats' new ratings after one rated match, each from the pre-match ratings.

    Raises:
        ValueError: ``winner`` is not 0, 1 or None.
    """
    s0, s1 = scores(winner)
    return update(seat0, [(seat1, s0)]), update(seat1, [(seat0, s1)])


class JournalRow(Protocol):
    """What :func:`counts` reads of a journal entry (``server.store.JournalEntry``)."""

    @property
    def kind(self) -> str: ...

    @property
    def seat(self) -> int: ...

    @property
    def by(self) -> str: ...


def played(kind: str, by: str) -> bool:
    """Whether a journal row of ``kind`` made ``by`` is the seat's own intent (``by`` in
    :data:`PLAYED_BY`): intents the turn timer or a bot played for a seat, and
    resignations and forfeits, are not."""
    return kind == "intent" and by in PLAYED_BY


def played_seats(journal: Iterable[JournalRow]) -> set[int]:
    """The seats that made at least one intent themselves (:func:`played`)."""
    return {row.seat for row in journal if played(row.kind, row.by)}


def counts(journal: Iterable[JournalRow], seats: int = 2) -> bool:
    """True when a finished match counts for the ratings; False when it was aborted
    (it ended before every seat had made an intent of its own: :func:`played_seats`)."""
    return played_seats(journal) >= set(range(seats))


# -- rated matchmaking ------------------------------------------------------

#: The rating window of a rated queue: a seeker who has waited ``t`` seconds accepts
#: opponents within ``WINDOW_BASE + WINDOW_GROWTH * t`` rating points of their own.
WINDOW_BASE = 100.0
WINDOW_GROWTH = 20.0
#: How many neighbours in rating order each seeker is compared with (bounds the work
#: of one pairing pass to O(n log n) however long the queue).
NEIGHBOURS = 8


@dataclass(frozen=True, slots=True)
class Seeker:
    """One entry of a rated queue.

    Attributes:
        ref: the caller's handle (a session), returned in the pairs.
        account: the account id; two seekers of one account are never paired.
        rating: the account's rating in the queue's game.
        since: when it started waiting (the caller's clock).
        options: the game options asked for, as a hashable value (equal ones pair).
    """

    ref: object
    account: int
    rating: float
    since: float
    options: object = None


def pairing_window(waited: float) -> float:
    """The rating window (points either side) of a seeker who waited ``waited`` s."""
    return WINDOW_BASE + WINDOW_GROWTH * max(waited, 0.0)


def pair_seekers(seekers: Sequence[Seeker], now: float) -> list[tuple[Seeker, Seeker]]:
    """Pairs to start now: the closest ratings first, each within both seekers' windows.

    Two seekers pair when they asked for equal options, belong to different
    accounts, and their rating gap is within the window of each of them
    (:func:`pairing_window`). Among such pairs the smallest gap goes first (ties:
    the one who waited longest); each seeker is in at most one pair. Seekers left
    over wait on; their windows widen, so a later call may pair them.

    Returns:
        The pairs, the longer-waiting seeker of each first.
    """
    groups: dict[object, list[Seeker]] = {}
    for seeker in seekers:
        groups.setdefault(seeker.options, []).append(seeker)
    candidates: list[tuple[float, float, int, int, Seeker, Seeker]] = []
    for group in groups.values():
        group.sort(key=lambda s: s.rating)
        for i, a in enumerate(group):
            for b in group[i + 1:i + 1 + NEIGHBOURS]:
                gap = b.rating - a.rating
                if a.account == b.account:
                    continue
                if gap > min(pairing_window(now - a.since), pairing_window(now - b.since)):
                    continue
                first, second = (a, b) if a.since <= b.since else (b, a)
                candidates.append((gap, first.since, id(first), id(second), first, second))
    candidates.sort(key=lambda c: c[:2])
    taken: set[int] = set()
    pairs = []
    for _, _, ia, ib, first, second in candidates:
        if ia in taken or ib in taken:
            continue
        taken.update((ia, ib))
        pairs.append((first, second))
    return pairs
