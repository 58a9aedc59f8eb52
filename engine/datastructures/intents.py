"""Data Structures intents as small hashable values, and their wire form.

On the wire an intent is a map (docs/architecture.md, "Data Structures
intents"); inside the engine and the bots it is one of the frozen values
below, like python-chess's ``Move``. :func:`from_wire` is the one parser:
it checks the shape (type, fields, field types) and nothing that depends on
the state (whether a hand index exists, whether a card fits); the rules check
that. ``to_wire()`` gives the map back, so ``from_wire(m.to_wire()) == m``.

| value | wire |
|---|---|
| ``Play(HAND, array=a, index=i)`` | ``{"type": "play", "src": "hand", "index": i, "array": a}`` |
| ``Play(QUEUE, array=a)`` | ``{"type": "play", "src": "queue", "array": a}`` |
| ``Play(STACK, array=a, stack=s)`` | ``{"type": "play", "src": "stack", "stack": s, "array": a}`` |
| ``Mulligan(keep=i)`` | ``{"type": "mulligan", "keep": i}`` |
| ``EndPhase()`` | ``{"type": "end_phase"}`` |
| ``StackCard(index=i)`` | ``{"type": "stack", "index": i}`` |
| ``Enqueue(index=i)`` | ``{"type": "enqueue", "index": i}`` |
| ``EndTurn()`` | ``{"type": "end_turn"}`` |
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from engine.core import IllegalIntent, Intent

HAND = "hand"
QUEUE = "queue"
STACK = "stack"
#: Arrays per player (D2).
N_ARRAYS = 3


class _Wired:
    """Keeps each value's wire map, built once (values are immutable): ``to_wire``
    is then a dict copy, as cheap as the literal the rules used to build."""

    __slots__ = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "_wire", self._build())

    def _build(self) -> Intent:
        """The wire map: ``type`` first, then the fields in declaration order."""
        return {"type": self.TYPE,  # type: ignore[attr-defined]
                **{f.name: getattr(self, f.name) for f in fields(self) if f.init}}  # type: ignore[arg-type]

    def to_wire(self) -> Intent:
        """The intent as a fresh map, keys in the documented order."""
        return self._wire.copy()  # type: ignore[attr-defined]


def _count(value: Any) -> int | None:
    """``value`` if it is a (non-bool) int >= 0, else None."""
    return value if type(value) is int and value >= 0 else None


@dataclass(frozen=True, slots=True)
class Play(_Wired):
    """Phase 1: one card from ``src`` onto the mover's array ``array`` (D2, D3).

    ``index`` is the hand index (``src`` hand), ``stack`` the seat whose stack
    top is played (``src`` stack); the other is None.
    """

    TYPE: ClassVar[str] = "play"
    src: str
    array: int
    index: int | None = None
    stack: int | None = None
    _wire: Intent = field(init=False, repr=False, compare=False)

    def _build(self) -> Intent:
        if self.src == HAND:
            return {"type": "play", "src": HAND, "index": self.index, "array": self.array}
        if self.src == QUEUE:
            return {"type": "play", "src": QUEUE, "array": self.array}
        return {"type": "play", "src": STACK, "stack": self.stack, "array": self.array}


@dataclass(frozen=True, slots=True)
class Mulligan(_Wired):
    """Phase 1, before any play, with no play possible: keep hand card ``keep`` (D6)."""

    TYPE: ClassVar[str] = "mulligan"
    keep: int
    _wire: Intent = field(init=False, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class EndPhase(_Wired):
    """Phase 1 -> phase 2 (D7)."""

    TYPE: ClassVar[str] = "end_phase"
    _wire: Intent = field(init=False, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class StackCard(_Wired):
    """Phase 2: hand card ``index`` onto the mover's own stack (D7)."""

    TYPE: ClassVar[str] = "stack"
    index: int
    _wire: Intent = field(init=False, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Enqueue(_Wired):
    """Phase 2, after the stack card, queue not full: hand card ``index`` to the queue."""

    TYPE: ClassVar[str] = "enqueue"
    index: int
    _wire: Intent = field(init=False, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class EndTurn(_Wired):
    """Phase 2 ends; phase 3 and the next turn follow (D8, D9)."""

    TYPE: ClassVar[str] = "end_turn"
    _wire: Intent = field(init=False, repr=False, compare=False)


DSIntent = Play | Mulligan | EndPhase | StackCard | Enqueue | EndTurn
END_PHASE = EndPhase()
END_TURN = EndTurn()

#: Hand indexes with a prebuilt value (a hand holds at most 5 cards; larger
#: indexes are built on demand). Values are immutable, so sharing them is safe
#: and saves the engine's hot loops from building them again.
_PREBUILT = 8
PLAY_HAND: tuple[tuple[Play, ...], ...] = tuple(
    tuple(Play(HAND, a, index=i) for a in range(N_ARRAYS)) for i in range(_PREBUILT))
PLAY_QUEUE: tuple[Play, ...] = tuple(Play(QUEUE, a) for a in range(N_ARRAYS))
PLAY_STACK: tuple[tuple[Play, ...], ...] = tuple(
    tuple(Play(STACK, a, stack=s) for a in range(N_ARRAYS)) for s in (0, 1))
MULLIGANS: tuple[Mulligan, ...] = tuple(Mulligan(i) for i in range(_PREBUILT))
STACK_CARDS: tuple[StackCard, ...] = tuple(StackCard(i) for i in range(_PREBUILT))
ENQUEUES: tuple[Enqueue, ...] = tuple(Enqueue(i) for i in range(_PREBUILT))


def play_hand(index: int, array: int) -> Play:
    """``Play(HAND, array, index=index)``, prebuilt when the index is small."""
    return PLAY_HAND[index][array] if index < _PREBUILT else Play(HAND, array, index=index)


def mulligans(n: int) -> list[Mulligan]:
    """``Mulligan(i)`` for every ``i`` in ``range(n)``."""
    return list(MULLIGANS[:n]) if n <= _PREBUILT else [Mulligan(i) for i in range(n)]


def stack_cards(n: int) -> list[StackCard]:
    """``StackCard(i)`` for every ``i`` in ``range(n)``."""
    return list(STACK_CARDS[:n]) if n <= _PREBUILT else [StackCard(i) for i in range(n)]


def enqueues(n: int) -> list[Enqueue]:
    """``Enqueue(i)`` for every ``i`` in ``range(n)``."""
    return list(ENQUEUES[:n]) if n <= _PREBUILT else [Enqueue(i) for i in range(n)]
#: Wire ``type`` -> the phase that takes it (``"play"``: phase 1, ``"discard"``: phase 2).
PHASE_OF: dict[str, str] = {"play": "play", "mulligan": "play", "end_phase": "play",
                            "stack": "discard", "enqueue": "discard", "end_turn": "discard"}


def from_wire(wire: Mapping[str, Any]) -> DSIntent:
    """The value of a wire intent, its shape checked (not its legality now).

    Raises:
        IllegalIntent: not a map, an unknown type, missing or extra fields, or a
            field of the wrong type or range; ``rule`` names the ruling.
    """
    if type(wire) is not dict and not isinstance(wire, Mapping):   # the ABC check: 0.2 µs
        raise IllegalIntent(f"an intent is a map, got {type(wire).__name__}")
    kind = wire.get("type")
    if kind == "play":
        return _play(wire)
    if kind in ("stack", "enqueue"):
        index = _count(wire.get("index"))
        if len(wire) != 2 or index is None:
            raise IllegalIntent(f"no card at hand index {wire.get('index')!r}", rule="D7")
        if index < _PREBUILT:
            return STACK_CARDS[index] if kind == "stack" else ENQUEUES[index]
        return StackCard(index) if kind == "stack" else Enqueue(index)
    if kind == "mulligan":
        keep = _count(wire.get("keep"))
        if len(wire) != 2 or keep is None:
            raise IllegalIntent(f"not a mulligan intent: {dict(wire)!r}", rule="D6")
        return MULLIGANS[keep] if keep < _PREBUILT else Mulligan(keep)
    if kind == "end_phase" and len(wire) == 1:
        return END_PHASE
    if kind == "end_turn" and len(wire) == 1:
        return END_TURN
    raise IllegalIntent(f"not a datastructures intent: {dict(wire)!r}")


def _play(wire: Mapping[str, Any]) -> Play:
    array = wire.get("array")
    if type(array) is not int or not 0 <= array < N_ARRAYS:
        raise IllegalIntent(f"'array' must be 0, 1 or 2, got {array!r}", rule="D2")
    src = wire.get("src")
    if src == HAND and len(wire) == 4:
        index = _count(wire.get("index"))
        if index is None:
            raise IllegalIntent(f"no card at hand index {wire.get('index')!r}", rule="D3")
        return play_hand(index, array)
    if src == QUEUE and len(wire) == 3:
        return PLAY_QUEUE[array]
    if src == STACK and len(wire) == 4:
        stack = wire.get("stack")
        if type(stack) is not int or stack not in (0, 1):
            raise IllegalIntent(f"'stack' must be 0 or 1, got {stack!r}", rule="D3")
        return PLAY_STACK[stack][array]
    raise IllegalIntent(f"not a play intent: {dict(wire)!r}", rule="D3")
