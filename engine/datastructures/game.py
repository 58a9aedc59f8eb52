"""The Data Structures game: its static facts, options and state factory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from engine.core import Event, Game, MatchRng, OptionSpec, State, View
from engine.datastructures.observer import build_view, build_views, filter_events
from engine.datastructures.rules import DSState

#: Default and bounds of the turn cap (D12).
DEFAULT_CAP = 500
MAX_CAP = 100_000


class DataStructures(Game):
    """Data Structures: The Card Game, for two seats (D1..D13).

    The rulings name no variant for this game, so its only option is ``cap``.
    """

    name: ClassVar[str] = "datastructures"
    seats: ClassVar[int] = 2
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec(
            name="cap",
            kind="int",
            default=DEFAULT_CAP,
            doc="Turns before the game ends: more closed arrays wins, then more "
                "cards in open arrays, else a draw (D12).",
            min=1,
            max=MAX_CAP,
        ),
    )

    def new_state(self, seed: int, options: Mapping[str, Any] | None = None,
                  rng: MatchRng | None = None) -> DSState:
        """A fresh match: 104 cards shuffled by ``rng`` (None: the stream of ``seed``),
        dealt, first player drawn by the same stream (R0.1, D11).

        Raises:
            BadOption: an unknown option or a bad value.
            ValueError: a seed outside [0, 2**256).
        """
        opts = self.normalize_options(options)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 256:
            raise ValueError(f"seed must be an integer in [0, 2**256), got {seed!r}")
        return DSState.setup(self, seed, opts, rng)

    def view(self, state: State, seat: int | None) -> View:
        """What ``seat`` (None: spectator) may see; see :mod:`engine.datastructures.observer`."""
        assert isinstance(state, DSState)
        return build_view(state, seat)

    def views(self, state: State, seats: Sequence[int | None]) -> list[View]:
        """The views of ``seats`` at once, their public parts shared (same observer)."""
        assert isinstance(state, DSState)
        return build_views(state, seats)

    def project_events(self, state: State, events: list[Event], seat: int | None) -> list[Event]:
        """The events as ``seat`` (None: spectator) may see them (same observer)."""
        return filter_events(events, seat)


GAME = DataStructures()
