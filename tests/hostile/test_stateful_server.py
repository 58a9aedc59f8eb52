"""Hypothesis stateful test: random valid and invalid requests from several clients.

Each example starts a fresh server in its own thread (its own ``trio.run``, real
loopback TCP, a fresh store); the state machine drives three blocking-socket
clients with random sequences of lobby requests, legal and random intents,
resigns, chats and malformed messages. After every step a ping barrier makes
sure every push caused so far has arrived, then the invariants are checked:

* no crash: the server thread is alive and logged no error (``log.exception``
  is how the server reports a failed handler);
* every request is answered: exactly one ``ok`` or ``error`` carrying its id
  (and malformed messages without a usable id get an ``error`` without one);
* no seat acts for another: an accepted intent is journaled for the requester's
  own seat, and intents from non-seated clients are refused;
* no snapshot leaks a hidden card: compared with the engine's full state (read
  in the server's thread), a snapshot to seat ``s`` of a Data Structures match
  names no card face that exists only in the other hand, the deck or the
  recycle pile (faces also visible in public piles or the seat's own hand are
  allowed, since the game uses two decks).
"""

from __future__ import annotations

import logging
import re
import shutil
import socket
import struct
import threading
from functools import partial
from pathlib import Path
from typing import Any

import msgpack
import trio
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from protocol.framing import FrameDecoder
from server.app import Server, serve
from tests.server.helpers import make_config

CARD = re.compile(r"^(10|[2-9JQKA])[CDHS]$")
N_CLIENTS = 3
TIMEOUT = 2.0


class ServerThread:
    """A cardserver running ``trio.run`` in a daemon thread, on 127.0.0.1:0."""

    def __init__(self, tmp: Path) -> None:
        # random walks create many matches and chat at will from one address: the
        # quotas and the chat limit have tests of their own (test_quotas.py)
        self.config = make_config(
            tmp, rate=100000.0, burst=100000, max_waiting_per_session=10000,
            max_active_per_session=10000, max_waiting_per_address=10000,
            max_active_per_address=10000, creates_per_minute=100000,
            creates_per_minute_per_address=100000, chat_burst=100000,
            handshake_burst=100000, max_watches_per_session=10000)
        self.server: Server | None = None
        self.token: trio.lowlevel.TrioToken | None = None
        self.ready = threading.Event()
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError(f"server thread did not start: {self.failure!r}")

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # reported by the invariant
            self.failure = exc
            self.ready.set()

    async def _main(self) -> None:
        self.token = trio.lowlevel.current_trio_token()
        async with trio.open_nursery() as nursery:
            self.server = await nursery.start(partial(serve, self.config))
            self.ready.set()

    def call(self, fn: Any) -> Any:
        """Run ``fn()`` in the server's trio thread (so it sees a quiescent state)."""
        return trio.from_thread.run_sync(fn, trio_token=self.token)

    def stop(self) -> None:
        if self.server is not None and self.thread.is_alive():
            self.call(self.server.shutdown)
        self.thread.join(10)


class SyncClient:
    """A blocking-socket client: raw frames out, msgpack frames in, no validation."""

    def __init__(self, port: int, name: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.decoder = FrameDecoder(1 << 20)
        self.name = name
        self.pushes: list[dict[str, Any]] = []
        self.replies: dict[int, list[dict[str, Any]]] = {}
        self.idless_errors: list[dict[str, Any]] = []
        self.latest: dict[str, dict[str, Any]] = {}  # match -> newest snapshot
        self.closed = False
        self._ids = 0
        welcome = self.request({"type": "hello", "protocol": [1], "name": name,
                                "client": "stateful"}, expect_id=False)
        assert welcome["type"] == "welcome", welcome

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def send_body(self, body: bytes) -> None:
        self.sock.sendall(struct.pack(">I", len(body)) + body)

    def send(self, msg: dict[str, Any]) -> None:
        self.send_body(msgpack.packb(msg, use_bin_type=True))

    def _read(self) -> dict[str, Any]:
        while True:
            body = self.decoder.next_frame()
            if body is not None:
                msg = msgpack.unpackb(body)
                if msg["type"] == "ping":
                    self.send({"type": "pong", "id": msg["id"]})
                    continue
                self._file(msg)
                return msg
            data = self.sock.recv(65536)
            if not data:
                self.closed = True
                raise ConnectionError(f"{self.name}: closed by the server")
            self.decoder.feed(data)

    def _file(self, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        if kind in ("ok", "error", "pong") and "id" in msg:
            self.replies.setdefault(msg["id"], []).append(msg)
        elif kind == "error":
            self.idless_errors.append(msg)
        else:
            self.pushes.append(msg)
            if kind == "snapshot":
                self.latest[msg["match"]] = msg

    def request(self, msg: dict[str, Any], expect_id: bool = True) -> dict[str, Any]:
        """Send ``msg`` (with a fresh id unless ``expect_id`` is False) and return its
        reply (the first message, for a hello)."""
        if not expect_id:
            self.send(msg)
            return self._read()
        rid = msg["id"] = self.next_id()
        self.send(msg)
        while rid not in self.replies:
            self._read()
        assert len(self.replies[rid]) == 1, self.replies[rid]
        return self.replies[rid][0]

    def barrier(self) -> None:
        """Read until the answer to a fresh ping: every push queued before is in."""
        rid = self.next_id()
        self.send({"type": "ping", "id": rid})
        while rid not in self.replies:
            self._read()
        assert [m["type"] for m in self.replies.pop(rid)] == ["pong"]

    def close(self) -> None:
        self.sock.close()


class _ErrorLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self.format(record))


MALFORMED: list[tuple[bytes, str, bool]] = [
    (msgpack.packb([1, 2]), "bad_message", False),
    (msgpack.packb({"id": 1}), "bad_message", False),
    (msgpack.packb({"type": "warp", "id": 1}), "unknown_type", True),
    (msgpack.packb({"type": "create", "id": 1, "game": 3}), "bad_message", True),
    (msgpack.packb({"type": "intent", "id": 1, "match": "m", "seq": -1, "intent": {}}),
     "bad_message", True),
    (msgpack.packb({"type": "join", "id": 1, "match": 5}), "bad_message", True),
    # a second hello is not a request: its error carries no id even when it had one
    (msgpack.packb({"type": "hello", "protocol": [1], "name": "x", "client": ""}),
     "bad_message", False),
]

intents = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["flip", "end_phase", "end_turn"])}),
    st.fixed_dictionaries({"type": st.just("play"), "src": st.sampled_from(["hand", "queue"]),
                           "index": st.integers(-1, 6), "array": st.integers(-1, 3)}),
    st.fixed_dictionaries({"type": st.sampled_from(["stack", "enqueue"]),
                           "index": st.integers(-1, 6)}),
    st.dictionaries(st.text(max_size=5), st.integers(-(2**63), 2**64 - 1), max_size=3),
)


class ServerMachine(RuleBasedStateMachine):
    """See the module docstring."""

    tmp_root: Path = Path("/tmp")

    def __init__(self) -> None:
        super().__init__()
        self.errors = _ErrorLog()
        logging.getLogger("cardserver").addHandler(self.errors)
        self.workdir = Path(self._tmpdir())
        self.srv = ServerThread(self.workdir)
        assert self.srv.server is not None and self.srv.server.port is not None
        self.port = self.srv.server.port
        self.clients = [SyncClient(self.port, f"c{i}") for i in range(N_CLIENTS)]
        self.matches: list[str] = []
        self.games: dict[str, str] = {}
        #: (match, seat) -> client index, as the model knows it
        self.seats: dict[tuple[str, int], int] = {}

    def _tmpdir(self) -> str:
        import tempfile

        return tempfile.mkdtemp(prefix="stateful-", dir=str(self.tmp_root))

    # -- helpers ------------------------------------------------------------------

    def _seat_of(self, client: int, match: str) -> int | None:
        for (m, seat), c in self.seats.items():
            if m == match and c == client:
                return seat
        return None

    def _journal_seat(self, match: str, seq: int) -> int:
        entries = self.srv.call(lambda: self.srv.server.store.journal(match))
        return next(e.seat for e in entries if e.seq == seq)

    # -- rules ------------------------------------------------------------------

    @rule(c=st.integers(0, N_CLIENTS - 1), game=st.sampled_from(["war", "datastructures"]),
          seat=st.sampled_from([0, 1]))
    def create(self, c: int, game: str, seat: int) -> None:
        reply = self.clients[c].request({"type": "create", "game": game, "seat": seat,
                                         "turn_timer": 0,
                                         "options": {"cap": 15}})
        assert reply["type"] == "ok", reply
        self.matches.append(reply["match"])
        self.games[reply["match"]] = game
        self.seats[(reply["match"], seat)] = c

    @rule(c=st.integers(0, N_CLIENTS - 1), d=st.integers(1, N_CLIENTS - 1),
          game=st.sampled_from(["war", "datastructures"]))
    def create_and_join(self, c: int, d: int, game: str) -> None:
        """Two clients start a match (so that plenty of examples reach play)."""
        self.create(c, game, 0)
        self.join((c + d) % N_CLIENTS, len(self.matches) - 1)

    @precondition(lambda self: self.matches)
    @rule(steps=st.integers(1, 25), pick=st.integers(0, 100))
    def play_a_while(self, steps: int, pick: int) -> None:
        """Every client acts on its newest snapshots, ``steps`` times over."""
        for step in range(steps):
            for c, client in enumerate(self.clients):
                for i, match in enumerate(self.matches):
                    snap = client.latest.get(match)
                    if snap is not None and snap["legal"]:
                        self.legal_intent(c, i, pick + step)
                client.barrier()

    @precondition(lambda self: self.matches)
    @rule(c=st.integers(0, N_CLIENTS - 1), i=st.integers(0, 50))
    def join(self, c: int, i: int) -> None:
        match = self.matches[i % len(self.matches)]
        reply = self.clients[c].request({"type": "join", "match": match})
        if reply["type"] == "ok":
            assert self._seat_of(c, match) is None
            assert (match, reply["seat"]) not in self.seats
            self.seats[(match, reply["seat"])] = c
        else:
            assert reply["code"] in ("already_seated", "seat_taken", "match_finished",
                                     "no_such_match"), reply

    @precondition(lambda self: self.matches)
    @rule(c=st.integers(0, N_CLIENTS - 1), i=st.integers(0, 50))
    def watch(self, c: int, i: int) -> None:
        match = self.matches[i % len(self.matches)]
        reply = self.clients[c].request({"type": "watch", "match": match})
        assert reply["type"] == "ok" or reply["code"] in ("already_seated", "no_such_match"), \
            reply

    @precondition(lambda self: self.matches)
    @rule(c=st.integers(0, N_CLIENTS - 1), i=st.integers(0, 50), pick=st.integers(0, 100))
    def legal_intent(self, c: int, i: int, pick: int) -> None:
        """Act on the newest snapshot if it offers something (like a real bot)."""
        match = self.matches[i % len(self.matches)]
        snap = self.clients[c].latest.get(match)
        if snap is None or not snap["legal"]:
            return
        intent = snap["legal"][pick % len(snap["legal"])]
        reply = self.clients[c].request({"type": "intent", "match": match, "seq": snap["seq"],
                                         "intent": intent})
        seat = self._seat_of(c, match)
        event(f"legal intent: {reply['type']}")
        if reply["type"] == "ok":
            assert seat is not None and snap["seat"] == seat
            assert self._journal_seat(match, reply["seq"]) == seat
        else:
            assert reply["code"] in ("stale", "match_finished", "no_such_match",
                                     "not_your_turn"), reply

    @precondition(lambda self: self.matches)
    @rule(c=st.integers(0, N_CLIENTS - 1), i=st.integers(0, 50), seq=st.integers(0, 40),
          intent=intents)
    def random_intent(self, c: int, i: int, seq: int, intent: dict[str, Any]) -> None:
        match = self.matches[i % len(self.matches)]
        reply = self.clients[c].request({"type": "intent", "match": match, "seq": seq,
                                         "intent": intent})
        seat = self._seat_of(c, match)
        if reply["type"] == "ok":
            assert seat is not None, "an intent from a client without a seat was accepted"
            assert self._journal_seat(match, reply["seq"]) == seat
        elif seat is None:
            assert reply["code"] in ("not_in_match", "not_seated", "no_such_match"), reply
        else:
            assert reply["code"] in ("stale", "not_your_turn", "illegal_intent",
                                     "match_finished", "no_such_match", "bad_message"), reply

    @precondition(lambda self: self.matches)
    @rule(c=st.integers(0, N_CLIENTS - 1), i=st.integers(0, 50),
          kind=st.sampled_from(["resign", "leave", "chat"]))
    def other_request(self, c: int, i: int, kind: str) -> None:
        match = self.matches[i % len(self.matches)]
        msg: dict[str, Any] = {"type": kind, "match": match}
        if kind == "chat":
            msg["text"] = "gl"
        reply = self.clients[c].request(msg)
        if reply["type"] == "error":
            assert reply["code"] in ("not_in_match", "not_seated", "match_finished",
                                     "no_such_match"), reply
        elif kind == "leave":
            for key in [k for k, v in self.seats.items() if k[0] == match and v == c]:
                # a waiting match frees the seat; an active one is resigned (seat kept)
                snap = self.clients[c].latest.get(match)
                if snap is None or snap["status"] == "waiting":
                    del self.seats[key]

    @rule(c=st.integers(0, N_CLIENTS - 1), case=st.sampled_from(range(len(MALFORMED))),
          with_id=st.booleans())
    def malformed(self, c: int, case: int, with_id: bool) -> None:
        body, code, has_id = MALFORMED[case]
        client = self.clients[c]
        if has_id and with_id:
            msg = msgpack.unpackb(body)
            rid = msg["id"] = client.next_id()
            client.send(msg)
            while rid not in client.replies:
                client._read()
            (reply,) = client.replies[rid]
        else:
            before = len(client.idless_errors)
            if has_id:
                msg = msgpack.unpackb(body)
                del msg["id"]
                body = msgpack.packb(msg)
            client.send_body(body)
            client.barrier()
            assert len(client.idless_errors) == before + 1, client.idless_errors[before:]
            reply = client.idless_errors[-1]
        assert reply["type"] == "error" and reply["code"] == code, (body, reply)

    @rule(c=st.integers(0, N_CLIENTS - 1))
    def games(self, c: int) -> None:
        assert self.clients[c].request({"type": "games"})["type"] == "ok"

    # -- invariants -------------------------------------------------------------

    @invariant()
    def server_alive_and_quiet(self) -> None:
        assert self.srv.thread.is_alive(), self.srv.failure
        assert not self.errors.records, self.errors.records
        for client in self.clients:
            assert not client.closed
            client.barrier()
            doubles = {rid: r for rid, r in client.replies.items() if len(r) != 1}
            assert not doubles, f"answered more than once: {doubles}"

    @invariant()
    def no_hidden_card_in_any_snapshot(self) -> None:
        for match in self.matches:
            if self.games[match] != "datastructures":
                continue
            facts = self.srv.call(partial(_hidden_facts, self.srv.server, match))
            if facts is None:
                continue
            seq, hidden_by_seat = facts
            for client in self.clients:
                snap = client.latest.get(match)
                if snap is None or snap["seq"] != seq:
                    continue
                seat = snap["seat"]
                hidden = hidden_by_seat[seat]
                shown = set(_card_strings(snap["view"])) | set(_card_strings(snap["legal"])) \
                    | set(_card_strings(snap["events"]))
                assert not (shown & hidden), (seat, shown & hidden)
                if hidden and snap["status"] == "active":
                    event("leak check on an active match")

    def teardown(self) -> None:
        for client in self.clients:
            client.close()
        self.srv.stop()
        logging.getLogger("cardserver").removeHandler(self.errors)
        shutil.rmtree(self.workdir, ignore_errors=True)


def _hidden_facts(server: Server, match_id: str) -> tuple[int, dict[Any, set[str]]] | None:
    """In the server thread: the match's seq and, for each seat (and None), the card
    faces it must not see: faces present only in the other hand, the deck or recycle."""
    from engine.datastructures.deck import NAME

    match = server.lobby.matches.get(match_id)
    if match is None:
        return None
    state = match.state
    public = set(_card_strings(state.view(None)))
    secret = {NAME[c] for c in state.deck} | {NAME[c] for c in state.recycle}
    out: dict[Any, set[str]] = {}
    for seat in (0, 1, None):
        own = {NAME[c] for c in state.hands[seat]} if seat is not None else set()
        others = set()
        for s in (0, 1):
            if s != seat:
                others |= {NAME[c] for c in state.hands[s]}
        out[seat] = (others | secret) - public - own
    return match.seq, out


def _card_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if CARD.match(value) else []
    if isinstance(value, dict):
        return [c for v in value.values() for c in _card_strings(v)]
    if isinstance(value, list):
        return [c for v in value for c in _card_strings(v)]
    return []


ServerMachine.TestCase.settings = settings(
    max_examples=25, stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
TestServerMachine = ServerMachine.TestCase
