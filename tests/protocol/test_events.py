"""Events: one frozen, validated type per message; precise bad_message errors naming the
field, unknown types, extras, and the wire form."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from protocol.codec import pack
from protocol.errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from protocol.events import (
    EVENTS,
    REQUEST_TYPES,
    SCHEMAS,
    TO_CLIENT,
    TO_SERVER,
    Chat,
    ChatRequest,
    Error,
    Hello,
    Intent,
    Join,
    Ok,
    Presence,
    Snapshot,
    describe,
    from_wire,
    validate,
)
from protocol.framing import encode_frame
from protocol.registry import Event
from tests.protocol.helpers import TO_CLIENT_EXAMPLES, TO_SERVER_EXAMPLES


def test_examples_cover_every_schema() -> None:
    assert set(TO_SERVER_EXAMPLES) == set(SCHEMAS[TO_SERVER])
    assert set(TO_CLIENT_EXAMPLES) == set(SCHEMAS[TO_CLIENT])


def refused(msg: dict[str, Any], direction: str = TO_SERVER) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        validate(msg, direction)
    return info.value


def with_(mtype: str, direction: str = TO_SERVER, **changes: Any) -> dict[str, Any]:
    examples = TO_SERVER_EXAMPLES if direction == TO_SERVER else TO_CLIENT_EXAMPLES
    msg = copy.deepcopy(examples[mtype])
    for key, value in changes.items():
        if value is ...:
            del msg[key]
        else:
            msg[key] = value
    return msg


@pytest.mark.parametrize(
    ("mtype", "changes", "field"),
    [
        ("hello", {"protocol": ...}, "protocol"),
        ("hello", {"protocol": []}, "protocol"),
        ("hello", {"protocol": ["1"]}, "protocol[0]"),
        ("hello", {"name": ""}, "name"),
        ("hello", {"name": "x" * 33}, "name"),
        ("hello", {"name": "bad\nname"}, "name"),
        ("hello", {"client": "c" * 65}, "client"),
        ("hello", {"resume": 5}, "resume"),
        ("ping", {"id": ...}, "id"),
        ("ping", {"id": -1}, "id"),
        ("ping", {"id": True}, "id"),
        ("matches", {"status": "paused"}, "status"),
        ("create", {"game": ...}, "game"),
        ("create", {"seat": 2}, "seat"),
        ("create", {"turn_timer": -1}, "turn_timer"),
        ("create", {"abandon": "pray"}, "abandon"),
        ("create", {"options": {"deep": {"x": 1}}}, "options.deep"),
        ("create", {"options": [1]}, "options"),
        ("join", {"match": 5}, "match"),
        ("join", {"match": ""}, "match"),
        ("intent", {"seq": "17"}, "seq"),
        ("intent", {"intent": ...}, "intent"),
        ("intent", {"intent": [{"type": "flip"}]}, "intent"),
        ("intent", {"intent": {"a": {"b": {"c": {"d": {}}}}}}, "intent.a.b.c.d"),
        ("intent", {"intent": {"k": b"\x00"}}, "intent.k"),
        ("intent", {"intent": {"f": float("nan")}}, "intent.f"),
        ("intent", {"intent": {str(i): i for i in range(65)}}, "intent"),
        ("auto_flip", {"on": 1}, "on"),
        ("chat", {"text": ""}, "text"),
        ("chat", {"text": "x" * 201}, "text"),
        ("chat", {"text": "bell\x07"}, "text"),
    ],
)
def test_bad_client_fields_are_named(mtype: str, changes: dict[str, Any], field: str) -> None:
    err = refused(with_(mtype, **changes))
    assert (err.code, err.field, err.fatal) == ("bad_message", field, False)
    assert field in err.message


@pytest.mark.parametrize(
    ("mtype", "changes", "field"),
    [
        ("welcome", {"limits": {"max_frame": 65536}}, "limits.rate"),
        ("welcome", {"resumed": "no"}, "resumed"),
        ("snapshot", {"seat": 2}, "seat"),
        ("snapshot", {"status": "paused"}, "status"),
        ("snapshot", {"legal": [{"type": "flip"}, "flip"]}, "legal[1]"),
        ("snapshot", {"players": [{"seat": 0}]}, "players[0].name"),
        ("snapshot", {"result": {"winner": 3, "reason": "x"}}, "result.winner"),
        ("snapshot", {"deadline": -1.0}, "deadline"),
        ("ok", {"matches": [{"match": "m"}]}, "matches[0].game"),
        ("error", {"code": ...}, "code"),
        ("presence", {"connected": None}, "connected"),
        ("bye", {"reason": ""}, "reason"),
    ],
)
def test_bad_server_fields_are_named(mtype: str, changes: dict[str, Any], field: str) -> None:
    err = refused(with_(mtype, TO_CLIENT, **changes), TO_CLIENT)
    assert (err.code, err.field) == ("bad_message", field)


def test_unknown_type_echoes_the_id() -> None:
    err = refused({"type": "teleport", "id": 44})
    assert (err.code, err.field, err.id, err.fatal) == ("unknown_type", "type", 44, False)
    assert err.to_message()["id"] == 44


def test_direction_matters() -> None:
    refused(TO_CLIENT_EXAMPLES["welcome"], TO_SERVER)
    refused(TO_SERVER_EXAMPLES["hello"], TO_CLIENT)
    # chat exists both ways with different fields
    assert refused({"type": "chat", "match": "m", "text": "hi"}, TO_CLIENT).field == "seat"
    assert (
        refused({"type": "chat", "seat": 0, "name": "n", "text": "hi"}, TO_SERVER).field == "match"
    )


def test_extra_fields_are_ignored_and_kept() -> None:
    msg = with_("join", v2_field={"anything": [1, 2]})
    assert validate(msg, TO_SERVER) is msg


def test_optional_fields_may_be_absent() -> None:
    assert validate({"type": "games"}, TO_SERVER) == {"type": "games"}
    assert validate({"type": "create", "game": "war"}, TO_SERVER)
    snap = with_("snapshot", TO_CLIENT, result=..., reveal=..., seat=None, deadline=None)
    assert validate(snap, TO_CLIENT) is snap


def test_not_a_map_and_no_type() -> None:
    assert refused([1]).code == "bad_message"  # type: ignore[arg-type]
    assert refused({"id": 3}).id == 3


def test_bad_direction_is_a_caller_bug() -> None:
    with pytest.raises(ValueError):
        validate({"type": "ping", "id": 1}, "sideways")


def test_describe_lists_fields() -> None:
    rows = describe(TO_SERVER, "hello")
    assert ("resume", False, "str 1..256") in rows
    assert rows[0][0] == "protocol" and rows[0][1] is True


def test_tuples_are_arrays_when_sending() -> None:
    """msgpack packs tuples as arrays; a server may build views with them."""
    snap = with_("snapshot", TO_CLIENT, legal=({"type": "flip"},), view={"counts": (26, 26)})
    assert validate(snap, TO_CLIENT) is snap


# ---------------------------------------------------------------------------- typed events

ALL_EXAMPLES = [(TO_SERVER, t, m) for t, m in TO_SERVER_EXAMPLES.items()] + [
    (TO_CLIENT, t, m) for t, m in TO_CLIENT_EXAMPLES.items()
]


@pytest.mark.parametrize(("direction", "mtype", "msg"), ALL_EXAMPLES)
def test_every_example_round_trips_through_its_event(
    direction: str, mtype: str, msg: dict[str, Any]
) -> None:
    event = from_wire(msg, direction)
    assert type(event) is EVENTS[direction][mtype] and event.TYPE == mtype
    wire = event.to_wire()
    assert wire == msg and next(iter(wire)) == "type"
    assert type(event)(**{k: v for k, v in msg.items() if k != "type"}) == event
    assert type(event).from_wire(msg) == event


@pytest.mark.parametrize(
    ("mtype", "changes", "field"),
    [
        ("hello", {"name": ""}, "name"),
        ("intent", {"seq": "17"}, "seq"),
        ("intent", {"intent": {"a": {"b": {"c": {"d": {}}}}}}, "intent.a.b.c.d"),
        ("chat", {"text": "bell\x07"}, "text"),
    ],
)
def test_a_wrong_field_raises_at_construction(
    mtype: str, changes: dict[str, Any], field: str
) -> None:
    fields = {k: v for k, v in with_(mtype, **changes).items() if k != "type"}
    with pytest.raises(LocalProtocolError) as info:
        EVENTS[TO_SERVER][mtype](**fields)
    err = info.value
    assert (err.code, err.field) == ("bad_message", field)
    assert mtype in err.message and field in err.message


def test_construction_checks_server_messages_too() -> None:
    with pytest.raises(LocalProtocolError) as info:
        Presence(match="m1", seat=2, name=None, connected=True, grace=None)
    assert info.value.field == "seat"
    with pytest.raises(TypeError, match="grace"):
        Presence(match="m1", seat=0, name=None, connected=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Join("m1")  # type: ignore[misc]  # keyword-only


def test_events_are_frozen() -> None:
    join = Join(match="m1")
    with pytest.raises(AttributeError):
        join.match = "m2"  # type: ignore[misc]


def test_from_wire_errors_are_the_peers_and_echo_the_id() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        from_wire({"type": "teleport", "id": 5}, TO_SERVER)
    assert (info.value.code, info.value.id) == ("unknown_type", 5)
    with pytest.raises(RemoteProtocolError) as info:
        from_wire({"type": "join", "id": 6, "match": 7}, TO_SERVER)
    assert (info.value.code, info.value.field, info.value.id) == ("bad_message", "match", 6)
    with pytest.raises(RemoteProtocolError):
        Join.from_wire({"type": "watch", "match": "m1"})
    with pytest.raises(RemoteProtocolError):
        from_wire([1], TO_CLIENT)
    with pytest.raises(ValueError):
        from_wire({"type": "ping", "id": 1}, "sideways")


def test_from_wire_ignores_extra_fields() -> None:
    assert from_wire(with_("join", v2_field=1), TO_SERVER) == Join(id=6, match="m1", seat=0)


def test_optional_fields_left_unset_are_absent_and_ok_ends_with_its_id() -> None:
    assert Join(match="m1").to_wire() == {"type": "join", "match": "m1"}
    assert list(Ok(match="m1", seat=1, id=3).to_wire()) == ["type", "match", "seat", "id"]
    assert list(Error(code="stale", message="old", id=2, match="m").to_wire()) == [
        "type", "code", "message", "id", "match"]
    # a required field that may be nil is present as nil
    assert Presence(match="m", seat=0, name=None, connected=True, grace=None).to_wire()[
        "grace"] is None


def test_the_documented_hello_frame_from_an_event() -> None:
    hello = Hello(protocol=[1], name="alice", client="mybot/0.1")
    assert encode_frame(pack(hello.to_wire())).hex().startswith("0000003384a474797065a5")
    assert len(encode_frame(pack(hello.to_wire()))) == 55


def test_registry_covers_every_type_and_requests() -> None:
    assert set(EVENTS[TO_SERVER]) == set(SCHEMAS[TO_SERVER])
    assert EVENTS[TO_SERVER]["chat"] is ChatRequest and EVENTS[TO_CLIENT]["chat"] is Chat
    assert EVENTS[TO_SERVER]["ping"] is EVENTS[TO_CLIENT]["ping"]
    assert REQUEST_TYPES == set(TO_SERVER_EXAMPLES) - {"hello", "pong"}
    assert Snapshot.IS_REQUEST is False and Intent.IS_REQUEST is True


@pytest.mark.parametrize("cls", sorted({c for d in EVENTS.values() for c in d.values()},
                                       key=lambda c: c.TYPE), ids=lambda c: c.TYPE)
def test_generated_to_wire_is_the_generic_one(cls: type[Event]) -> None:
    """Each event's generated ``to_wire`` gives the map, and the key order, of the
    generic loop over its fields, with every field set and with the optional ones
    left at None; and a new map each call."""
    for leave_out in (False, True):
        event = object.__new__(cls)
        for i, spec in enumerate(cls.FIELDS):
            value = None if leave_out and not spec.required else f"v{i}"
            object.__setattr__(event, spec.name, value)
        made = cls.to_wire(event)
        generic = Event.to_wire(event)
        assert made == generic and list(made) == list(generic)
        assert cls.to_wire is not Event.to_wire and made is not cls.to_wire(event)
