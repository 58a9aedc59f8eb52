"""Each game's rules for the help overlay, in the project's own words.

The text follows docs/rules.md (the rulings R0.x, W1-W6, D1-D13): what a new
player needs to know to play, with arrays, hand cards and seats counted from 1
as the screens count them. :func:`rules_lines` wraps it to a width.
"""

from __future__ import annotations

import textwrap

#: game -> (title, paragraphs). A paragraph starting with "- " is a bullet.
RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "datastructures": ("Data Structures: the rules", (
        "Goal: be the first to close three arrays. An array is a run of 12 consecutive "
        "values, 2 3 4 5 6 7 8 9 10 J Q K, that may start at any value and wraps round "
        "after K back to 2 (start on 9: 9 10 J Q K 2 3 ... 8). Suits never matter.",
        "- You play only onto your own three arrays (1, 2, 3); each shows the value it "
        "needs next.",
        "- Aces never go on an array. They can go on a stack, into the queue, or be "
        "thrown away in a mulligan.",
        "- An empty array can only be started from your hand, with any value but an ace.",
        "- The 12th card closes the array at once: it is turned face down and its slot "
        "stays closed. Closing your third array wins at once.",
        "Each turn has three phases.",
        "Phase 1, play: put cards on your arrays, as many as you can and want. A card may "
        "come from your hand, from the head of the queue (the card at its left end), or "
        "from the top of either stack, yours or your opponent's. An emptied hand draws 5 "
        "at once; an emptied queue refills to 5 at once. Then end the phase (e).",
        "Mulligan: at the start of phase 1, before any play, a player who has no play at "
        "all may show the whole hand to everyone and throw away all but one card. The "
        "card you keep is the one that goes on your stack in phase 2; the mulligan ends "
        "phase 1.",
        "Phase 2, stack and queue: the queue head goes to the discard pile by itself. "
        "Then you must put one hand card on top of your own stack. Then, while the queue "
        "holds fewer than 5 cards, you may put hand cards at its tail (its right end), "
        "one at a time. Then end the turn (e).",
        "Phase 3 happens by itself: if you closed an array this turn, its cards and the "
        "discard pile are shuffled back into the deck; the queue refills to 5, your hand "
        "to 5, and the other player's turn begins.",
        "Everyone sees the queue, both stacks (every card in them), all arrays, the "
        "discard pile and how many cards are in the deck and in each hand. Only you see "
        "your hand. Nobody sees the order of the deck.",
        "The end: closing a third array wins. At the turn cap (500 by default) or when "
        "the game is stuck (deck and discard pile empty and 20 turns in a row without a "
        "play or a mulligan), more closed arrays wins, then more cards in open arrays; "
        "otherwise it is a draw. Resigning, or running out the turn timer too many times "
        "in a row, loses.",
    )),
    "war": ("War: the rules", (
        "Goal: win all 52 cards. Each player has a face-down deck of 26; nobody, not even "
        "its owner, knows the order of a deck.",
        "A battle: both players flip their top card face up, in either order. The higher "
        "rank takes both cards: 2 is lowest, then 3 ... 10, J, Q, K, and A is highest. "
        "Suits never matter.",
        "A war: on equal ranks each player places one card face down, then one face up; "
        "the new face-up cards decide, and on another tie the war goes on. The winner "
        "takes the whole pile.",
        "The won pile goes to the bottom of the winner's deck, shuffled first (the match "
        "option 'won cards go back' can keep them in the order played instead).",
        "Short of cards in a war: a player with one card left plays it face up; a player "
        "with none left lets the last face-up card stand for the rest of that war. If "
        "both run out at once it is a draw. (Match option: being short loses at once.)",
        "The end: one player has all 52 cards. The battle cap (10,000 by default) ends "
        "it early: more cards wins, equal is a draw. Resigning loses.",
        "Flipping is the only decision, so turn on auto-flip (a) to let the server flip "
        "for you, and set its pace; if both players agree, fast-forward plays the rest "
        "of the game out at once.",
    )),
    "fair": ("Fair shuffles (both games)", (
        "Before the first card is dealt the server publishes a commitment: the SHA-256 "
        "of the match's secret seed and a salt. Every shuffle of the match comes from "
        "that seed. When the match ends the seed and salt are revealed, and this client "
        "checks that they hash to the commitment and that the seed deals the opening "
        "position you were shown: the deck could not have been chosen afterwards.",
    )),
}


def rules_lines(game: str, cells: int) -> list[str]:
    """The rules of ``game`` wrapped to ``cells`` (bullets hang-indented).

    Raises:
        KeyError: no rules for ``game``.
    """
    title, paragraphs = RULES[game]
    out = [title, ""]
    width = max(cells, 20)
    for para in paragraphs:
        if para.startswith("- "):
            out += textwrap.wrap(para, width, subsequent_indent="  ")
        else:
            out += textwrap.wrap(para, width)
            out.append("")
    while out and not out[-1]:
        out.pop()
    return out
