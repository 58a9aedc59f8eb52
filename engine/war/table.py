"""The War table's layout, shared by the rules and the observer.

The table during a battle is a flat list of *steps*, four slots each:
``[down0, down1, up0, up1]`` (card ids, ``None`` where a seat placed no such
card). Step 0 is the battle's flip; every tie adds a war step (W2).
"""

from __future__ import annotations

#: The seats of a War match.
SEATS = (0, 1)
#: Slots per step on the table: down0, down1, up0, up1.
STEP = 4


def steps_of(table: list[int | None]) -> list[list[int | None]]:
    """The flat table cut into steps ``[down0, down1, up0, up1]``, first step first."""
    return [table[i:i + STEP] for i in range(0, len(table), STEP)]
