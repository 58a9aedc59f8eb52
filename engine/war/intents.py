"""War's one intent (W6), as a small hashable value and as its wire map.

``{"type": "flip"}`` is the only War intent; :data:`FLIP_MOVE` is its value and
:func:`from_wire` the one parser, like the Data Structures intents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from engine.core import IllegalIntent, Intent

#: The wire form; ``apply`` compares against this private copy.
FLIP: dict[str, str] = {"type": "flip"}


@dataclass(frozen=True, slots=True)
class Flip:
    """Place this step's card(s): the only War decision (W6)."""

    TYPE: ClassVar[str] = "flip"

    def to_wire(self) -> Intent:
        """``{"type": "flip"}``, a fresh map."""
        return {"type": "flip"}


FLIP_MOVE = Flip()


def from_wire(wire: Mapping[str, Any]) -> Flip:
    """The value of a wire intent.

    Raises:
        IllegalIntent: anything but exactly ``{"type": "flip"}`` (rule W6).
    """
    if isinstance(wire, Mapping) and wire == FLIP:
        return FLIP_MOVE
    raise IllegalIntent(f"the only War intent is {{'type': 'flip'}}, got {wire!r}", rule="W6")
