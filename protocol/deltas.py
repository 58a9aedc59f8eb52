"""Protocol 2: snapshots that do not repeat what has not changed.

In protocol 2 the server sends the first snapshot of a (match, seat) on a
connection in full, and each later one as a *delta* against the previous
snapshot that connection got for the same match and seat (``seat`` nil: a
spectator's). A delta carries ``base`` (the ``seq`` of that previous snapshot),
always ``type``, ``match``, ``seq``, ``seat``, ``status``, ``legal`` and
``events``, every other field only when its value changed, and ``view`` as the
view's changed keys only. The receiver rebuilds the full snapshot: the previous
one, its fields replaced by the delta's, its view's keys by the delta view's.

A snapshot from which a field or a view key has disappeared is sent in full, so
a delta never needs to delete anything. Both ends remember at most
:data:`REMEMBERED` (match, seat) pairs, forget the least recently sent one
beyond that, and forget a pair once its ``finished`` snapshot went out: the next
snapshot of a forgotten pair is full. Both ends apply exactly these rules to
exactly the same sequence of snapshots, so their memories agree.

Sans-IO like the rest of :mod:`protocol`: :class:`~protocol.connection.Connection`
calls :meth:`SnapshotDeltas.encode` when it sends a snapshot to a protocol-2
peer and :meth:`SnapshotDeltas.merge` when it receives one, so the code on
either side only ever sees full snapshots.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocol.errors import RemoteProtocolError

#: (match, seat) pairs each end remembers per connection.
REMEMBERED = 256
#: The version of the protocol that has snapshot deltas.
DELTA_VERSION = 2
#: Fields every delta carries, changed or not.
ALWAYS = ("type", "match", "seq", "seat", "status", "legal", "events")

_Key = tuple[Any, Any]


class SnapshotDeltas:
    """One connection's memory of the last snapshot per (match, seat)."""

    def __init__(self, remembered: int = REMEMBERED) -> None:
        self._last: dict[_Key, dict[str, Any]] = {}
        self._remembered = remembered

    def __len__(self) -> int:
        return len(self._last)

    def encode(self, full: dict[str, Any]) -> tuple[dict[str, Any], Callable[[], None]]:
        """The wire map to send for the snapshot map ``full`` (a delta, or ``full``
        itself), and the function to call once it has really been framed for the
        peer (only then is ``full`` remembered: a snapshot that was not sent must
        not become the base of the next delta)."""
        key = (full["match"], full["seat"])
        previous = self._last.get(key)
        wire = full if previous is None else (_delta(previous, full) or full)
        return wire, lambda: self._remember(key, full)

    def merge(self, wire: dict[str, Any]) -> dict[str, Any]:
        """The full snapshot map for a received one (a delta or a full snapshot);
        remembers it.

        Raises:
            RemoteProtocolError: ``bad_message`` (field ``base``, fatal: only a new
                connection, whose first snapshots are full, can recover) for a delta
                whose base is not the snapshot this end holds for that match and seat.
        """
        key = (wire.get("match"), wire.get("seat"))
        if "base" not in wire:
            full = wire
        else:
            previous = self._last.get(key)
            if previous is None or previous.get("seq") != wire["base"]:
                raise RemoteProtocolError(
                    "bad_message", "a snapshot delta against a snapshot this connection "
                    "does not hold", "base", fatal=True)
            full = {**previous}
            for name, value in wire.items():
                if name != "base" and name != "view":
                    full[name] = value
            changed = wire.get("view")
            if changed:
                full["view"] = {**previous["view"], **changed}
        self._remember(key, full)
        return full

    def _remember(self, key: _Key, full: dict[str, Any]) -> None:
        last = self._last
        last.pop(key, None)
        if full.get("status") == "finished":
            return
        last[key] = full
        if len(last) > self._remembered:
            del last[next(iter(last))]


def _delta(previous: dict[str, Any], full: dict[str, Any]) -> dict[str, Any] | None:
    """``full`` as a delta against ``previous``; None when a field or a view key
    of ``previous`` is missing from ``full`` (then it goes in full)."""
    if not previous.keys() <= full.keys():
        return None
    pview, view = previous.get("view"), full.get("view")
    if type(pview) is not dict or type(view) is not dict or not pview.keys() <= view.keys():
        return None
    out: dict[str, Any] = {"type": full["type"], "base": previous["seq"]}
    for name in ALWAYS:
        if name in full:
            out[name] = full[name]
    for name, value in full.items():
        if name not in out and name != "view" and (name not in previous
                                                   or previous[name] != value):
            out[name] = value
    changed = {k: v for k, v in view.items() if k not in pview or pview[k] != v}
    if changed:
        out["view"] = changed
    return out

