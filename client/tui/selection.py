"""Which Data Structures choices are selectable, derived only from the snapshot's ``legal``.

The client never computes rules: a source (a hand card, the queue head, a stack
top) is selectable exactly when some element of ``legal`` starts from it, and a
target (an own array, the own stack, the queue tail, "keep this card" for a
mulligan) exactly when ``legal`` holds an intent joining that source to it. The
intent sent is always that element of ``legal``, verbatim.

Sources and targets are small tuples so they can be compared and hashed:

========================  =========================================
``("hand", i)``           card ``i`` of the own hand (0-based)
``("queue",)``            the head of the queue
``("stack", s)``          the top of seat ``s``'s stack
``("array", a)``          own array ``a`` (0-based)
``("mystack",)``          own stack (phase 2: put a hand card on it)
``("qtail",)``            the tail of the queue (phase 2: enqueue)
``("keep",)``             mulligan: keep this card, discard the rest
========================  =========================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.notation import Speaker

Source = tuple[Any, ...]
Target = tuple[Any, ...]
Intent = Mapping[str, Any]

#: Intents that need no source: they are bound to a key of their own.
ACTIONS = ("end_phase", "end_turn")


def split_intent(intent: Intent) -> tuple[Source, Target] | None:
    """The (source, target) pair an intent joins, or None for actions and unknown shapes."""
    kind = intent.get("type")
    if kind == "play":
        src = intent.get("src")
        array = intent.get("array")
        if not isinstance(array, int):
            return None
        if src == "hand" and isinstance(intent.get("index"), int):
            return ("hand", intent["index"]), ("array", array)
        if src == "queue":
            return ("queue",), ("array", array)
        if src == "stack" and isinstance(intent.get("stack"), int):
            return ("stack", intent["stack"]), ("array", array)
        return None
    if kind == "mulligan" and isinstance(intent.get("keep"), int):
        return ("hand", intent["keep"]), ("keep",)
    if kind == "stack" and isinstance(intent.get("index"), int):
        return ("hand", intent["index"]), ("mystack",)
    if kind == "enqueue" and isinstance(intent.get("index"), int):
        return ("hand", intent["index"]), ("qtail",)
    return None


def sources(legal: Sequence[Intent]) -> list[Source]:
    """Every source some legal intent starts from, in first-seen order."""
    out: list[Source] = []
    for intent in legal:
        pair = split_intent(intent)
        if pair is not None and pair[0] not in out:
            out.append(pair[0])
    return out


def targets(legal: Sequence[Intent], source: Source) -> list[Target]:
    """Every target a legal intent joins ``source`` to, in first-seen order."""
    out: list[Target] = []
    for intent in legal:
        pair = split_intent(intent)
        if pair is not None and pair[0] == source and pair[1] not in out:
            out.append(pair[1])
    return out


def intent_for(legal: Sequence[Intent], source: Source, target: Target) -> Intent | None:
    """The element of ``legal`` joining ``source`` to ``target``; None if there is none."""
    for intent in legal:
        if split_intent(intent) == (source, target):
            return intent
    return None


def action(legal: Sequence[Intent], *kinds: str) -> Intent | None:
    """The first legal intent whose type is one of ``kinds`` (e.g. end_phase, end_turn)."""
    for intent in legal:
        if intent.get("type") in kinds:
            return intent
    return None


def describe_intent(intent: Intent, hand: Sequence[str] | None = None,
                    seat: int | None = None, glyphs: bool = True) -> str:
    """A short description of an intent in the project's notation
    (:meth:`engine.notation.Speaker.intent`): hand cards and arrays from 1.

    Args:
        intent: an element of ``legal``.
        hand: the own hand's card strings, to name the card; optional.
        seat: the own seat, to say "your stack" / "the opponent's stack"; optional.
        glyphs: suit glyphs, or letters when colour is off.
    """
    names = {} if seat is None else {1 - seat: "the opponent"}
    words = Speaker(seat, names, glyphs=glyphs).intent(intent, hand)
    return words.replace("on their stack", "on your stack") if seat is not None else words
