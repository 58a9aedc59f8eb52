"""Card glyphs: pure string functions, no terminal needed.

A card on the wire is a string: rank ``2``..``10``, ``J``, ``Q``, ``K``, ``A``,
then suit ``C``, ``D``, ``H``, ``S`` (``"10H"``, ``"QS"``); a face-down card is
the string ``"back"``. This module turns those strings into short, fixed-width
glyphs plus a prompt_toolkit style class, so a screen can colour hearts and
diamonds red and clubs and spades black, or print plain text when colour is off.

Every function here returns a ``(style, text)`` fragment or a plain ``str``;
none of them touches the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import notation

RANKS = notation.RANKS
SUITS = notation.SUIT_GLYPHS
RED_SUITS = notation.RED_SUITS
BACK = notation.BACK
#: Cells every card glyph takes: the widest, ``[10♥]``, plus one space.
GLYPH_WIDTH = 6

Fragment = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Card:
    """A parsed face-up card."""

    rank: str
    suit: str

    @property
    def red(self) -> bool:
        """True for hearts and diamonds."""
        return self.suit in RED_SUITS


def parse_card(text: str) -> Card:
    """Parse a wire card string such as ``"10H"`` or ``"qs"``.

    Raises:
        ValueError: ``text`` is not a card (``"back"`` is not a card either).
    """
    if not isinstance(text, str) or len(text) < 2:
        raise ValueError(f"not a card: {text!r}")
    rank, suit = text[:-1].upper(), text[-1].upper()
    if rank not in RANKS or suit not in SUITS:
        raise ValueError(f"not a card: {text!r}")
    return Card(rank, suit)


def card_label(text: str, *, color: bool = True) -> str:
    """The card's short label without brackets: ``"10♥"`` (``"10H"`` when colour is off).

    A face-down card (``"back"``) is ``"▒▒"`` (``"##"``); anything unparseable is shown
    as ``"??"`` rather than raising, so a surprising value never crashes a screen.
    The notation is :func:`engine.notation.card`, the same as the log's.
    """
    return notation.card(text, glyphs=color)


def card_style(text: str, *, color: bool = True) -> str:
    """The prompt_toolkit style class for a card: ``class:card.red``, ``class:card.black``,
    ``class:card.back``; the empty string when colour is off."""
    if not color:
        return ""
    if text == BACK:
        return "class:card.back"
    try:
        return "class:card.red" if parse_card(text).red else "class:card.black"
    except ValueError:
        return "class:card.unknown"


def card_glyph(text: str, *, color: bool = True, extra: str = "", pad: bool = True) -> Fragment:
    """One card as a fixed-width (``GLYPH_WIDTH``) fragment: ``"[10♥] "``, ``"[Q♠]  "``.

    Args:
        text: a wire card string or ``"back"``.
        color: False gives plain text (no style, ASCII suit letters).
        extra: more style classes to add (e.g. ``"class:selectable"``).
        pad: False leaves out the padding (for a card inside a sentence).
    """
    label = f"[{card_label(text, color=color)}]"
    if pad:
        label = label.ljust(GLYPH_WIDTH)
    style = " ".join(s for s in (card_style(text, color=color), extra) if s)
    return (style, label)


def empty_slot(*, color: bool = True, extra: str = "") -> Fragment:
    """A place where a card could be but is not: ``[  ]`` padded to the glyph width."""
    style = " ".join(s for s in ("class:card.empty" if color else "", extra) if s)
    return (style, "[  ]".ljust(GLYPH_WIDTH))


def value_label(value: object) -> str:
    """A rank value as shown to people: 11..14 become J, Q, K, A; strings pass through."""
    names = {11: "J", 12: "Q", 13: "K", 14: "A", 1: "A"}
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return names.get(value, str(value))
    if value is None:
        return "-"
    return str(value)


#: Size of a big card in cells and lines.
BIG_WIDTH, BIG_HEIGHT = 7, 5


def big_card(text: str | None, *, color: bool = True) -> list[list[Fragment]]:
    """A card drawn large (``BIG_HEIGHT`` lines of ``BIG_WIDTH`` cells), rank in two corners
    and the suit in the middle; a face-down card is hatched; None is an empty place.

    Returns a block: a list of lines, each a list of ``(style, text)`` fragments.
    """
    if text is None:
        style = "class:card.empty" if color else ""
        return [[(style, "\u250c" + "\u2500" * 5 + "\u2510")],
                *[[(style, "\u2502" + " " * 5 + "\u2502")] for _ in range(3)],
                [(style, "\u2514" + "\u2500" * 5 + "\u2518")]]
    style = card_style(text, color=color)
    if text == BACK:
        fill = "\u2592" * 5 if color else "#" * 5
        middle = [[(style, "\u2502" + fill + "\u2502")] for _ in range(3)]
    else:
        try:
            card = parse_card(text)
        except ValueError:
            card = Card("?", "?")
        suit = SUITS.get(card.suit, "?") if color else card.suit
        middle = [[(style, "\u2502" + card.rank.ljust(5) + "\u2502")],
                  [(style, "\u2502  " + suit + "  \u2502")],
                  [(style, "\u2502" + card.rank.rjust(5) + "\u2502")]]
    return [[(style, "\u250c" + "\u2500" * 5 + "\u2510")], *middle,
            [(style, "\u2514" + "\u2500" * 5 + "\u2518")]]
