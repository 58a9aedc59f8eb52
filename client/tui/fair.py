"""The fair-shuffle check (R0.2) the client does itself once a match is over.

Two things are checked, with the engine's own code and nothing from the server
but what it published:

1. the commitment: ``engine.fairness.verify(seed, salt, commitment)``, i.e. the
   revealed seed and salt hash to the commitment every snapshot carried from the
   start (so the seed was fixed before the first card was dealt);
2. the deal, when this client saw the match's opening position (the first
   snapshot of the running match, seq 0): the engine rebuilds it from the
   revealed seed, the match's options and the random stream the snapshots
   named (with the client seeds, when the server announces them), and its view
   for this seat must equal the view the client was shown then (queue, stacks
   and own hand in Data Structures; deck sizes in War, whose decks are never
   shown).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.fairness import verify


@dataclass(frozen=True, slots=True)
class FairCheck:
    """What was checked and how it came out (None: not checked, with ``why``)."""

    commitment: str
    seed: str
    salt: str
    commitment_ok: bool | None
    deal_ok: bool | None
    deal_note: str
    client_seeds: tuple[str, ...] = ()
    stream: str = ""

    def lines(self) -> list[str]:
        """The check in words, one fact a line (for the end screen)."""
        out = [f"commitment  {self.commitment or '-'}",
               f"seed        {self.seed or '-'}",
               f"salt        {self.salt or '-'}"]
        if self.client_seeds:
            out.append(f"client seeds {', '.join(self.client_seeds)} ({self.stream})")
        if self.commitment_ok is None:
            out.append("not checked: the match has not revealed its seed")
        elif self.commitment_ok:
            out.append("verified: sha256(seed + salt) equals the commitment published at "
                       "the start, so the seed was fixed before the deal")
        else:
            out.append("WARNING: sha256(seed + salt) does NOT equal the commitment: "
                       "the shuffle is unproven")
        if self.deal_ok is True:
            out.append(f"verified: {self.deal_note}")
        elif self.deal_ok is False:
            out.append(f"WARNING: {self.deal_note}")
        elif self.deal_note:
            out.append(f"deal not re-checked: {self.deal_note}")
        return out


def check(snapshot: Mapping[str, Any], first_view: Mapping[str, Any] | None = None,
          first_seq: int | None = None) -> FairCheck:
    """Check a finished match's reveal against its commitment and, given the view
    this client saw at seq 0, against the opening deal. Never raises."""
    commitment = snapshot.get("commitment")
    reveal = snapshot.get("reveal")
    commitment = commitment if isinstance(commitment, str) else ""
    if not isinstance(reveal, Mapping):
        return FairCheck(commitment, "", "", None, None, "")  # nothing revealed yet
    seed, salt = str(reveal.get("seed") or ""), str(reveal.get("salt") or "")
    ok = verify(seed, salt, commitment) if commitment else False
    seeds = tuple(str(x) for x in snapshot.get("client_seeds") or [])
    stream = str(snapshot.get("stream") or "")
    deal_ok: bool | None = None
    if not ok:
        note = "the commitment does not match"
    elif first_view is None or first_seq != 0:
        note = "this client did not see the match's first position"
    else:
        deal_ok, note = _check_deal(snapshot, seed, first_view)
    return FairCheck(commitment, seed, salt, ok, deal_ok, note, seeds, stream)


def _stream(snapshot: Mapping[str, Any], seed: int) -> Any:
    """The random stream the snapshot says the match used (None: the engine's default).

    Raises:
        LookupError: a stream this client's engine does not know.
    """
    name = snapshot.get("stream")
    if not name:
        return None
    try:
        from engine.rng import open_stream
    except ImportError:
        raise LookupError(f"this client does not know the stream {name!r}") from None
    return open_stream(str(name), seed, [str(s) for s in snapshot.get("client_seeds") or []])


def _check_deal(snapshot: Mapping[str, Any], seed: str,
                first_view: Mapping[str, Any]) -> tuple[bool | None, str]:
    try:
        from engine.registry import get_game

        game = get_game(str(snapshot.get("game")))
        number = int(seed, 16)
        options = dict(snapshot.get("options") or {})
        stream = _stream(snapshot, number)
        state = game.new_state(number, options) if stream is None else \
            game.new_state(number, options, rng=stream)
        rebuilt = state.view(snapshot.get("seat"))
    except Exception as exc:  # an engine that cannot deal it this way: say so, no alarm
        return None, f"the engine could not rebuild it ({type(exc).__name__}: {exc})"
    dealer = "this seed and the client seeds deal" if snapshot.get("client_seeds") else \
        "this seed deals"
    if _plain(rebuilt) == _plain(first_view):
        return True, f"the opening position you were shown is the one {dealer}"
    return False, f"the opening position you were shown is NOT the one {dealer}"


def _plain(value: Any) -> Any:
    """Tuples as lists, maps as dicts: a view as it looks after the wire."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def shuffle_line(snapshot: Mapping[str, Any]) -> str | None:
    """The log line saying what of the match's fairness was checked here, or None."""
    result = check(snapshot)
    if result.commitment_ok is None:
        return None
    if not result.commitment_ok:
        return "WARNING: the revealed seed does NOT match the commitment: the shuffle is unproven"
    line = ("fair shuffle checked: the revealed seed matches the commitment made before "
            "the deal")
    seeds = snapshot.get("client_seeds")
    if isinstance(seeds, list) and seeds:
        line += (f"; the deal came from it and the client seeds {', '.join(map(str, seeds))} "
                 f"({snapshot.get('stream')}): `cardserver replay {snapshot.get('match')} "
                 "--verify` replays every shuffle and card")
    return line
