"""Types shared by every game: errors, outcomes, option specs, and the State interface.

A game is a :class:`Game` (static facts: name, seats, options, and the observer
that projects a state for one seat) that makes :class:`State` objects (one
play-through). States are mutable and touched by one
owner at a time; ``clone()`` gives an independent copy. Nothing here does I/O.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from engine.rng import HmacStream, Stream

Intent = dict[str, Any]
Event = dict[str, Any]
View = dict[str, Any]


#: The match generator's type (:mod:`engine.rng`). A state draws from it only
#: through ``state.rng`` and only with ``shuffle(list)`` and ``randbelow(n)``.
MatchRng = Stream


def new_rng(seed: int) -> MatchRng:
    """The match generator for ``seed`` when the caller gives none (R0.1): the
    documented stream (:data:`engine.rng.HMAC_STREAM`) keyed by the seed alone, with
    no client seeds (offline games, bots' imagined worlds). The server passes each
    match its own stream, client seeds included (:func:`engine.rng.open_stream`).

    Raises:
        ValueError: ``seed`` is not an int in ``[0, 2**256)``.
    """
    return HmacStream.for_match(seed, ())


def copy_rng(rng: MatchRng) -> MatchRng:
    """An independent generator in the same state as ``rng`` (clones of a state)."""
    return rng.copy()


#: The prefix of a version-2 state digest (:meth:`State.journal_digest`); a version-1
#: digest (:meth:`State.digest`) is 64 hex digits and nothing else.
DIGEST_V2 = "2:"


def rng_fingerprint(rng: MatchRng) -> bytes:
    """The generator's full state as bytes, for digests: the same on every platform."""
    return rng.fingerprint()


class RuleError(Exception):
    """Something the rules refuse. ``code`` is the protocol error code to send,
    ``rule`` the ruling that decides it (e.g. ``"D3"``), or None."""

    code: ClassVar[str] = "illegal_intent"

    def __init__(self, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule

    def __str__(self) -> str:
        return f"{self.message} [{self.rule}]" if self.rule else self.message


class IllegalIntent(RuleError):
    """The intent is not legal for this seat now."""

    code = "illegal_intent"


class NotYourTurn(RuleError):
    """The seat has nothing to do now (the other seat is to move)."""

    code = "not_your_turn"


class GameOver(IllegalIntent):
    """The game has ended; no intent is accepted any more."""


class BadOption(RuleError):
    """An option name or value the game does not know."""

    code = "bad_option"


class UnknownGame(RuleError):
    """No game is registered under that name."""

    code = "no_such_game"


class Reason(StrEnum):
    """Why a game ended; the values are the wire strings (docs/rules.md)."""

    ALL_CARDS = "all_cards"        # War W5: one seat holds all 52 cards
    CAP = "cap"                    # War W5, Data Structures D12: the cap was reached
    EXHAUSTED = "exhausted"        # War W4 (stand): both seats out of cards in a tied war
    SHORT_WAR = "short_war"        # War W4 (variant lose): too few cards for a war
    THREE_ARRAYS = "three_arrays"  # Data Structures D4: a third array closed
    STUCK = "stuck"                # Data Structures D13: 20 idle turns
    RESIGN = "resign"              # R0.4
    TIMEOUT = "timeout"            # a forfeit: the turn timer ran out
    ABANDONED = "abandoned"        # a forfeit: the seat left and did not come back
    FORFEIT = "forfeit"            # a forfeit journaled without its reason


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: ``winner`` is a seat, or None for a draw."""

    winner: int | None
    reason: Reason

    def to_dict(self) -> dict[str, Any]:
        """The outcome on the wire: the reason as a plain string."""
        return {"winner": self.winner, "reason": self.reason.value}


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One match option. ``kind`` is ``"int"``, ``"choice"`` or ``"bool"``."""

    name: str
    kind: str
    default: Any
    doc: str
    choices: tuple[str, ...] = ()
    min: int | None = None
    max: int | None = None

    def check(self, value: Any) -> Any:
        """Return ``value`` if it is valid for this option; raise BadOption otherwise."""
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise BadOption(f"option {self.name!r} takes an integer, got {value!r}")
            if self.min is not None and value < self.min:
                raise BadOption(f"option {self.name!r} must be >= {self.min}, got {value}")
            if self.max is not None and value > self.max:
                raise BadOption(f"option {self.name!r} must be <= {self.max}, got {value}")
            return value
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise BadOption(f"option {self.name!r} takes true or false, got {value!r}")
            return value
        if self.kind == "choice":
            if value not in self.choices:
                raise BadOption(
                    f"option {self.name!r} must be one of {', '.join(self.choices)}, got {value!r}"
                )
            return value
        raise AssertionError(f"unknown option kind {self.kind!r}")

    def to_dict(self) -> dict[str, Any]:
        """The option as sent in the protocol's ``games`` listing."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "default": self.default,
                               "doc": self.doc}
        if self.choices:
            out["choices"] = list(self.choices)
        if self.min is not None:
            out["min"] = self.min
        if self.max is not None:
            out["max"] = self.max
        return out


class State(ABC):
    """One play-through of a game. See docs/architecture.md for the contract."""

    game: Game
    seed: int
    options: dict[str, Any]

    @abstractmethod
    def legal(self, seat: int) -> list[Intent]:
        """Every intent ``apply(seat, ...)`` accepts right now (empty if none)."""

    @abstractmethod
    def apply(self, seat: int, intent: Mapping[str, Any]) -> list[Event]:
        """Apply one intent; return the raw events it caused (never sent as they are).

        Raises:
            NotYourTurn: the seat has no legal intent now.
            IllegalIntent: the intent is not in ``legal(seat)`` (GameOver once ended).
        """

    @abstractmethod
    def legal_moves(self, seat: int) -> list[Any]:
        """:meth:`legal` as the game's intent values (``engine/<game>/intents.py``), in
        the same order: ``legal(seat)[i] == legal_moves(seat)[i].to_wire()``."""

    @abstractmethod
    def apply_move(self, seat: int, move: Any) -> list[Event]:
        """:meth:`apply` for one of the game's intent values (bots skip the wire form).

        Raises:
            NotYourTurn, IllegalIntent: as :meth:`apply`.
        """

    @abstractmethod
    def to_move(self) -> tuple[int, ...]:
        """Seats that have at least one legal intent now."""

    @abstractmethod
    def outcome(self) -> Outcome | None:
        """The result once the game has ended, else None."""

    @abstractmethod
    def default_intent(self, seat: int) -> Intent | None:
        """The action the server plays for a seat whose turn timer ran out."""

    @abstractmethod
    def resign(self, seat: int) -> list[Event]:
        """End the game at once: ``seat`` resigns and the other seat wins (R0.4)."""

    @abstractmethod
    def forfeit(self, seat: int, reason: str) -> list[Event]:
        """End the game at once: ``seat`` loses for ``reason`` (timeouts, abandonment)."""

    def view(self, seat: int | None) -> View:
        """What ``seat`` (None: a spectator) may see: ``self.game.view(self, seat)``.

        Raises:
            ValueError: ``seat`` is not a seat of this game nor None.
        """
        return self.game.view(self, seat)

    def views(self, seats: Sequence[int | None]) -> list[View]:
        """:meth:`view` for each of ``seats``: ``self.game.views(self, seats)``.

        Raises:
            ValueError: a seat is not a seat of this game nor None.
        """
        return self.game.views(self, seats)

    def project_events(self, events: list[Event], seat: int | None) -> list[Event]:
        """The events as ``seat`` (None: a spectator) may see them: the game's observer.

        Raises:
            ValueError: ``seat`` is not a seat of this game nor None.
        """
        return self.game.project_events(self, events, seat)

    @abstractmethod
    def digest(self) -> str:
        """SHA-256 hex of the full state, generator included; equal states, equal digests."""

    def journal_digest(self) -> str:
        """The digest a server journals with each row: :meth:`digest`, or a game's
        cheaper later version of it, whose text names its version (``"2:..."``).
        Equal states, equal digests, in every version."""
        return self.digest()

    def _digest_head_hash(self) -> Any:
        """The version-2 digests' start: a SHA-256 of the seed and the options (which
        never change), made once per state and kept in its ``_digest_head`` slot;
        callers ``copy()`` it before adding the state's changing parts."""
        head = self._digest_head
        if head is None:
            head = self._digest_head = hashlib.sha256(
                repr((self.seed, sorted(self.options.items()))).encode())
        return head

    def digest_as(self, stored: str) -> str:
        """This state's digest in the version of ``stored`` (a digest journaled by
        this or an earlier build), so that every stored row stays checkable:
        ``state.digest_as(row.digest) == row.digest``. A version this game does not
        know gives :meth:`digest` (which then differs from ``stored``)."""
        # a game without a version 2 journals digest() itself: journal_digest() is it
        return self.journal_digest() if stored.startswith(DIGEST_V2) else self.digest()

    @abstractmethod
    def clone(self) -> State:
        """An independent deep copy."""


class Game(ABC):
    """Static facts about one game, and the factory of its states."""

    name: ClassVar[str]
    seats: ClassVar[int] = 2
    options: ClassVar[tuple[OptionSpec, ...]]
    #: Capability: a seat may ask the server to play its moves for it on a short
    #: timer (War's auto-flip, W6). The server asks this, never the game's name.
    auto_play: ClassVar[bool] = False
    #: Capability: both seats may hold legal intents at the same moment (War's flips).
    simultaneous: ClassVar[bool] = False
    #: Capability: nothing is private to a seat: every seat's view is the spectator's
    #: with its own ``seat`` field, and events project the same for everyone (War),
    #: so a caller may build them once per change for all.
    public_view: ClassVar[bool] = False

    def normalize_options(self, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """Validate ``options`` and fill in defaults.

        Raises:
            BadOption: an unknown option name or an invalid value.
        """
        given = dict(options or {})
        specs = {spec.name: spec for spec in self.options}
        unknown = sorted(set(given) - set(specs))
        if unknown:
            raise BadOption(
                f"unknown option {unknown[0]!r} for {self.name}; known: {', '.join(specs) or 'none'}"
            )
        return {name: spec.check(given.get(name, spec.default)) for name, spec in specs.items()}

    @abstractmethod
    def new_state(self, seed: int, options: Mapping[str, Any] | None = None,
                  rng: MatchRng | None = None) -> State:
        """A fresh match from ``seed`` (0 <= seed < 2**256) and options (normalized here).

        ``rng`` is the match's random stream, fresh (the deal is its first draw);
        None: :func:`new_rng` of ``seed``.

        Raises:
            BadOption: see :meth:`normalize_options`.
        """

    @abstractmethod
    def view(self, state: State, seat: int | None) -> View:
        """The game's one projection: what ``seat`` (None: a spectator) may see of ``state``.

        Raises:
            ValueError: ``seat`` is not a seat of this game nor None.
        """

    def views(self, state: State, seats: Sequence[int | None]) -> list[View]:
        """``view(state, seat)`` for each of ``seats``, in order, through the same
        projection; a game may build what is public once and share it among the
        views (then the maps share their public parts: treat them as frozen).

        Raises:
            ValueError: a seat is not a seat of this game nor None.
        """
        return [self.view(state, seat) for seat in seats]

    @abstractmethod
    def project_events(self, state: State, events: list[Event], seat: int | None) -> list[Event]:
        """Raw ``events`` of ``state`` as ``seat`` (None: a spectator) may see them.

        Raises:
            ValueError: ``seat`` is not a seat of this game nor None.
        """

    def describe(self) -> dict[str, Any]:
        """The game as sent in the protocol's ``games`` listing."""
        return {"name": self.name, "seats": self.seats,
                "options": [spec.to_dict() for spec in self.options]}
