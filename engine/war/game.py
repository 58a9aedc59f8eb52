"""The War game: its options and the factory of its states."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from engine.core import Event, Game, MatchRng, OptionSpec, State, View
from engine.war import observer
from engine.war.rules import WarState


class WarGame(Game):
    """War (seed ``war.txt``, rulings W1-W6): two seats, flipping is the only decision."""

    name: ClassVar[str] = "war"
    seats: ClassVar[int] = 2
    auto_play: ClassVar[bool] = True
    simultaneous: ClassVar[bool] = True
    public_view: ClassVar[bool] = True
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("return", "choice", "shuffled",
                   "How a won pile goes under the winner's deck (W3): shuffled with the "
                   "match's generator, or in the order played (winner's card first).",
                   choices=("shuffled", "played")),
        OptionSpec("short_war", "choice", "stand",
                   "A seat without enough cards for a war (W4): its last face-up card "
                   "stands, or it loses at once.",
                   choices=("stand", "lose")),
        OptionSpec("cap", "int", 10000,
                   "Battles before the game ends early; more cards wins, equal is a draw (W5).",
                   min=1, max=1_000_000),
    )

    def new_state(self, seed: int, options: Mapping[str, Any] | None = None,
                  rng: MatchRng | None = None) -> WarState:
        """A fresh War match: deck shuffled with ``rng`` (None: the stream of ``seed``),
        26 cards each.

        Raises:
            BadOption: an unknown option or a bad value.
            ValueError: ``seed`` is not an int in ``[0, 2**256)``.
        """
        return WarState(self, seed, self.normalize_options(options), rng)

    def view(self, state: State, seat: int | None) -> View:
        """What ``seat`` (None: a spectator) may see; see :func:`engine.war.observer.view`."""
        assert isinstance(state, WarState)
        return observer.view(state, seat)

    def project_events(self, state: State, events: list[Event], seat: int | None) -> list[Event]:
        """The events as ``seat`` may see them; see :func:`engine.war.observer.project_events`."""
        return observer.project_events(events, seat)


WAR = WarGame()
