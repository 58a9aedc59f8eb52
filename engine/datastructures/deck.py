"""The 104 physical cards of Data Structures (two standard decks, D1).

A physical card is an ``int`` in ``range(104)``; its face is the
:mod:`engine.cards` id ``physical % 52``, so ids ``c`` and ``c + 52`` are the
two copies of the same face. Suits never matter (D1); only the *array value*
does: ``2``..``10``, ``J``, ``Q``, ``K`` are values 0..11 in cycle order (D2),
and an ace has no array value (:data:`ACE`).
"""

from __future__ import annotations

from engine import cards

#: Physical cards in the game: two standard decks.
N_CARDS = 2 * cards.DECK_SIZE
#: Array values in one cycle: 2..K (D1, D2).
N_VALUES = 12
#: The array value of an ace: it never fits an array (D1).
ACE = -1

#: ``VALUE[card]`` is 0..11 for 2..K, or :data:`ACE`.
VALUE: tuple[int, ...] = tuple(
    ACE if cards.RANKS[c % cards.DECK_SIZE] == 14 else cards.RANKS[c % cards.DECK_SIZE] - 2
    for c in range(N_CARDS)
)
#: ``NAME[card]`` is the wire string of a physical card, e.g. ``"10H"``.
NAME: tuple[str, ...] = tuple(cards.to_str(c % cards.DECK_SIZE) for c in range(N_CARDS))
#: ``VALUE_NAME[v]`` is the rank string of array value ``v``: ``"2"``..``"K"``.
VALUE_NAME: tuple[str, ...] = tuple(cards.RANK_NAMES[v + 2] for v in range(N_VALUES))


def value_of(text: str) -> int:
    """The array value of a wire card string: 0..11 for ``2``..``K``, :data:`ACE` for aces.

    Raises:
        ValueError: ``text`` is not a card string (``"back"`` included).
    """
    return VALUE[cards.from_str(text)]


def names(pile: list[int]) -> list[str]:
    """Wire strings of a list of physical cards, in the same order."""
    return [NAME[c] for c in pile]


def copies(text: str) -> tuple[int, int]:
    """The two physical ids of a wire string, e.g. ``copies("2C") == (0, 52)``.

    Raises:
        ValueError: ``text`` is not a card string.
    """
    face = cards.from_str(text)
    return face, face + cards.DECK_SIZE
