"""Standard playing cards as small integers, and their wire strings.

A card is an ``int`` id in ``range(52)``: ``id = (rank - 2) * 4 + suit``, where
``rank`` is 2..14 (J=11, Q=12, K=13, A=14) and ``suit`` is 0..3 for clubs,
diamonds, hearts, spades. So ``rank(id)`` is ``id // 4 + 2`` and ordering ids
orders ranks. On the wire a card is a string (docs/architecture.md): rank
``2``..``10``, ``J``, ``Q``, ``K``, ``A``, then suit ``C``, ``D``, ``H``, ``S``,
e.g. ``"10H"``, ``"QS"``, ``"AC"``. A face-down card is never a card string;
views say :data:`BACK` where its position matters.

Games with several decks (Data Structures uses two) keep their own physical
ids and map each to one of these 52 faces (e.g. ``physical % 52``).
"""

from __future__ import annotations

#: Cards in one standard deck (no jokers).
DECK_SIZE = 52
#: Suit letters in id order.
SUITS = "CDHS"
#: Rank names by rank value 2..14.
RANK_NAMES: dict[int, str] = {
    **{r: str(r) for r in range(2, 11)}, 11: "J", 12: "Q", 13: "K", 14: "A",
}
#: What a view shows in place of a face-down card.
BACK = "back"

_RANK_VALUES = {name: value for value, name in RANK_NAMES.items()}
_STRINGS: tuple[str, ...] = tuple(
    RANK_NAMES[c // 4 + 2] + SUITS[c % 4] for c in range(DECK_SIZE)
)
_IDS: dict[str, int] = {s: c for c, s in enumerate(_STRINGS)}
#: ``STRINGS[card]`` is the wire string of a card id (:func:`to_str` without the
#: check, for an engine's hot loops over ids it made itself).
STRINGS = _STRINGS
#: ``RANKS[card]`` is the rank (2..14) of a card id: a tuple lookup for hot loops.
RANKS: tuple[int, ...] = tuple(c // 4 + 2 for c in range(DECK_SIZE))


def deck() -> list[int]:
    """A new, ordered 52-card deck: ``[0, 1, ..., 51]`` (2C, 2D, 2H, 2S, 3C, ...)."""
    return list(range(DECK_SIZE))


def rank(card: int) -> int:
    """The rank of a card id: 2..10, J=11, Q=12, K=13, A=14.

    Raises:
        ValueError: ``card`` is not in ``range(52)``.
    """
    _check(card)
    return RANKS[card]


def suit(card: int) -> str:
    """The suit letter of a card id: ``"C"``, ``"D"``, ``"H"`` or ``"S"``.

    Raises:
        ValueError: ``card`` is not in ``range(52)``.
    """
    _check(card)
    return SUITS[card % 4]


def make(rank_value: int, suit_letter: str) -> int:
    """The card id of a rank (2..14) and suit letter (``C``/``D``/``H``/``S``).

    Raises:
        ValueError: the rank or suit does not exist.
    """
    if rank_value not in RANK_NAMES or suit_letter not in SUITS or len(suit_letter) != 1:
        raise ValueError(f"no card of rank {rank_value!r} and suit {suit_letter!r}")
    return (rank_value - 2) * 4 + SUITS.index(suit_letter)


def to_str(card: int) -> str:
    """The wire string of a card id, e.g. ``to_str(34) == "10H"``.

    Raises:
        ValueError: ``card`` is not in ``range(52)``.
    """
    _check(card)
    return _STRINGS[card]


def from_str(text: str) -> int:
    """The card id of a wire string such as ``"10H"`` or ``"QS"`` (exact, upper case).

    Raises:
        ValueError: ``text`` is not a card string (``"back"`` included).
    """
    try:
        return _IDS[text]
    except (KeyError, TypeError):
        raise ValueError(f"not a card: {text!r}") from None


def _check(card: int) -> None:
    if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < DECK_SIZE:
        raise ValueError(f"not a card id: {card!r}")
