"""Verify a finished match from its public record and the reveal (``cardserver replay --verify``).

The public record (:func:`server.replay.public_record`, or what a spectator
kept) says what everyone saw: the public view before the first intent and, per
accepted intent, the public events and view. The reveal gives the server seed.
:func:`verify_record` checks the seed against the commitment made at the start,
rebuilds the match's random stream from the seed and the client seeds, replays
every move through the engine, and requires every public event (each card
shown) and every public view (the deal included) to be exactly what the replay
produces. A record changed anywhere (a card, a count, a seed) fails, naming the
first move that differs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, MutableSequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from engine import cards
from engine.fairness import verify as commitment_matches
from engine.registry import get_game
from engine.rng import LEGACY_STREAM, Stream, open_stream
from server.replay import apply_entry, stored_record
from server.store import JournalEntry


class CountingStream:
    """A match stream that counts what it is asked: shuffles and the items shuffled."""

    def __init__(self, inner: Stream) -> None:
        self.inner = inner
        self.name = inner.name
        self.shuffles = 0
        self.shuffled = 0
        self.integers = 0

    def randbelow(self, n: int) -> int:
        """The inner stream's draw, counted."""
        self.integers += 1
        return self.inner.randbelow(n)

    def shuffle(self, items: MutableSequence[Any]) -> None:
        """The inner stream's shuffle, counted."""
        self.shuffles += 1
        self.shuffled += len(items)
        self.inner.shuffle(items)

    def fingerprint(self) -> bytes:
        """The inner stream's fingerprint."""
        return self.inner.fingerprint()

    def copy(self) -> Stream:
        """A copy of the inner stream (copies are not counted)."""
        return self.inner.copy()


@dataclass
class Verification:
    """What :func:`verify_record` checked: ``checked`` lines, and the first failure."""

    checked: list[str] = field(default_factory=list)
    failure: str | None = None

    @property
    def ok(self) -> bool:
        """Every check passed."""
        return self.failure is None


def _plain(value: Any) -> Any:
    """``value`` as JSON would carry it (tuples become lists), for comparisons."""
    return json.loads(json.dumps(value))


def _count_cards(value: Any) -> int:
    """How many card strings (``"10H"``) a public event holds."""
    if isinstance(value, str):
        try:
            cards.from_str(value)
        except ValueError:
            return 0
        return 1
    if isinstance(value, Mapping):
        return sum(_count_cards(v) for k, v in value.items() if k != "type")
    if isinstance(value, list):
        return sum(_count_cards(v) for v in value)
    return 0


def _entry(move: Mapping[str, Any]) -> JournalEntry:
    return JournalEntry(move["seq"], move["kind"], move["seat"], move.get("intent"),
                        move.get("reason"), move.get("by") or "seat", move.get("ts") or 0.0, "")


def verify_record(record: Mapping[str, Any]) -> Verification:
    """Check a finished match's public record against its reveal; never raises.

    Args:
        record: a public record as :func:`server.replay.public_record` builds it
            (``game``, ``options``, ``stream``, ``client_seeds``, ``commitment``,
            ``start``, ``moves``, ``result``, ``reveal``), e.g. parsed JSON.

    Returns:
        A :class:`Verification`: ``checked`` says what was verified, ``failure``
        the first thing that does not match (None when all did).
    """
    out = Verification()
    try:
        _verify(record, out)
    except _Mismatch as exc:
        out.failure = str(exc)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        out.failure = f"the record cannot be read: {type(exc).__name__}: {exc}"
    return out


class _Mismatch(Exception):
    """The first difference between the record and the replay."""


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise _Mismatch(message)


def _verify(record: Mapping[str, Any], out: Verification) -> None:
    reveal = record.get("reveal")
    _require(record.get("status") == "finished" and isinstance(reveal, Mapping),
             "the match is not finished: the seed is still secret")
    assert isinstance(reveal, Mapping)
    seed_hex, salt = reveal["seed"], reveal["salt"]
    _require(commitment_matches(seed_hex, salt, record["commitment"]),
             "the revealed seed and salt do not match the commitment")
    out.checked.append("the revealed seed matches the commitment published at the start")
    stream_name = record.get("stream") or LEGACY_STREAM
    client_seeds = list(record.get("client_seeds") or [])
    stream = CountingStream(open_stream(stream_name, int(seed_hex, 16), client_seeds))
    game = get_game(record["game"])
    state = game.new_state(int(seed_hex, 16), record["options"], rng=stream)
    _require(_plain(state.view(None)) == _plain(record["start"]),
             "start: the public view of the deal differs from the replay")
    shown = 0
    for number, move in enumerate(record["moves"], start=1):
        at = f"seq {move.get('seq')}"
        _require(move.get("seq") == number, f"{at}: expected seq {number}")
        try:
            events = apply_entry(state, _entry(move))
        except Exception as exc:  # the engine refuses the move: the record is not a game
            raise _Mismatch(f"{at}: the replay refuses this move: {exc}") from exc
        public = _plain(state.project_events(events, None))
        _require(public == _plain(move["events"]),
                 f"{at}: the public events differ from the replay: recorded "
                 f"{move['events']}, replayed {public}")
        shown += _count_cards(public)
        _require(_plain(state.view(None)) == _plain(move["view"]),
                 f"{at}: the public view differs from the replay")
    outcome = state.outcome()
    _require(outcome is not None and _plain(outcome.to_dict()) == _plain(record.get("result")),
             f"the result {record.get('result')} is not the replay's "
             f"{None if outcome is None else outcome.to_dict()}")
    seeds = ", ".join(client_seeds) if client_seeds else "none"
    out.checked += [
        f"stream {stream_name} rebuilt from the server seed and the client seeds ({seeds})",
        f"{stream.shuffles} shuffles replayed ({stream.shuffled} cards shuffled, "
        f"{stream.integers} other draws)",
        f"{len(record['moves']) + 1} public views agree with the replay, the deal included",
        f"{shown} cards shown in the public events are the replay's cards",
        f"the result matches: {outcome.to_dict()}",
    ]


def verify_command(match_id: str, db: str, record_file: str | None = None,
                   out: TextIO | None = None) -> int:
    """Run ``cardserver replay MATCH_ID --verify [--record FILE]``; the exit status.

    Verifies the stored match's public record, or the one in ``record_file``
    (JSON as ``cardserver replay --json`` prints it; ``-`` is stdin), which must
    be of match ``match_id``. Prints each check, then ``verified`` (status 0) or
    ``FAILED: ...`` (status 1); status 2 when there is nothing to verify (no such
    match, an unreadable file, a journal that does not replay).
    """
    out = out or sys.stdout
    if record_file is not None:
        try:
            text = sys.stdin.read() if record_file == "-" else Path(record_file).read_text()
            record = json.loads(text)
        except (OSError, ValueError) as exc:
            print(f"cardserver replay: cannot read a record from {record_file}: {exc}",
                  file=sys.stderr)
            return 2
        if not isinstance(record, dict) or record.get("match") != match_id:
            print(f"cardserver replay: {record_file} is not a record of match {match_id}",
                  file=sys.stderr)
            return 2
    else:
        stored = stored_record(match_id, db)
        if stored is None:
            return 2
        record = _plain(stored)
    result = verify_record(record)
    for line in result.checked:
        print(f"ok: {line}", file=out)
    if result.ok:
        print(f"verified: match {match_id}", file=out)
        return 0
    print(f"FAILED: {result.failure}", file=out)
    return 1
