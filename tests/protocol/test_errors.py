"""Error codes: the one table, kinds, fatality, and the error message built from an exception."""

from __future__ import annotations

import pytest

from protocol.errors import (
    CODES,
    INTERNAL_ERROR_MESSAGE,
    Kind,
    LocalProtocolError,
    ProtocolError,
    Refusal,
    RemoteProtocolError,
    is_fatal,
    kind_of,
)
from protocol.events import Error
from protocol.versions import negotiate

CORE = """bad_frame frame_too_large bad_message unknown_type unsupported_version bad_token
no_such_game bad_option not_in_match no_such_match seat_taken not_your_turn illegal_intent
stale rate_limited""".split()
CATALOGUE = """handshake_required handshake_timeout too_many_connections match_finished
not_seated already_seated not_supported heartbeat_timeout slow_consumer server_shutdown
internal_error""".split()


def test_every_agreed_code_is_listed() -> None:
    assert set(CORE) | set(CATALOGUE) <= set(CODES)
    for code, info in CODES.items():
        assert code.isidentifier() and code == code.lower()
        assert info.meaning


def test_only_stream_and_session_failures_are_fatal() -> None:
    fatal = {c for c, info in CODES.items() if info.fatal}
    assert fatal == {
        "too_many_handshakes",
        "bad_frame",
        "frame_too_large",
        "handshake_required",
        "handshake_timeout",
        "unsupported_version",
        "bad_token",
        "too_many_connections",
        "heartbeat_timeout",
        "slow_consumer",
        "server_shutdown",
        "logged_out",
    }
    assert is_fatal("bad_frame") and not is_fatal("stale") and not is_fatal("no_such_code")


def test_to_message() -> None:
    err = ProtocolError("illegal_intent", "not legal now", "intent", match="m1", id=3)
    assert err.to_message() == {
        "type": "error",
        "id": 3,
        "code": "illegal_intent",
        "message": "not legal now",
        "field": "intent",
        "match": "m1",
    }
    assert err.to_message(id=9)["id"] == 9
    assert ProtocolError("stale", "old").to_message() == {
        "type": "error",
        "code": "stale",
        "message": "old",
    }
    assert "illegal_intent" in str(err) and "intent" in repr(err)


def test_fatal_can_be_overridden_and_unknown_codes_are_refused() -> None:
    assert ProtocolError("bad_message", "x", fatal=True).fatal
    assert isinstance(LocalProtocolError("bad_message", "x"), ProtocolError)
    with pytest.raises(ValueError):
        ProtocolError("oops", "x")


def test_negotiate() -> None:
    assert negotiate([1]) == 1
    assert negotiate([3, 2, 1], server_versions=(1, 2)) == 2
    with pytest.raises(ProtocolError) as info:
        negotiate([7, 8])
    err = info.value
    assert (err.code, err.fatal, err.versions) == ("unsupported_version", True, [1, 2])
    assert err.to_message()["versions"] == [1, 2]


def test_the_base_builds_the_kind_its_code_belongs_to() -> None:
    assert type(ProtocolError("bad_frame", "x")) is RemoteProtocolError
    assert type(ProtocolError("seat_taken", "x")) is Refusal
    assert type(ProtocolError("internal_error", "x")) is LocalProtocolError
    for code, info in CODES.items():
        err = ProtocolError(code, "x")
        assert isinstance(err, ProtocolError) and kind_of(code) is info.kind
        assert type(err) is {Kind.REMOTE: RemoteProtocolError, Kind.REFUSAL: Refusal,
                             Kind.LOCAL: LocalProtocolError}[info.kind]


def test_a_kind_refuses_a_code_of_another_kind() -> None:
    with pytest.raises(ValueError):
        Refusal("bad_frame", "x")
    with pytest.raises(ValueError):
        RemoteProtocolError("stale", "x")
    assert LocalProtocolError("bad_message", "our own bad message").code == "bad_message"


def test_the_peer_hears_only_internal_error_about_our_bugs() -> None:
    err = LocalProtocolError("bad_message", "snapshot view: secret detail", "view", id=4)
    assert err.to_message() == {"type": "error", "code": "internal_error",
                                "message": INTERNAL_ERROR_MESSAGE, "id": 4}
    assert ProtocolError("internal_error", "the reply could not be encoded").to_message(7) == {
        "type": "error", "code": "internal_error",
        "message": "the reply could not be encoded", "id": 7}


def test_errors_become_error_events() -> None:
    event = ProtocolError("unsupported_version", "none", "protocol", versions=[1]).to_event(2)
    assert isinstance(event, Error)
    assert (event.code, event.id, event.field, event.versions) == (
        "unsupported_version", 2, "protocol", [1])


def test_refusals_and_remote_errors_by_kind() -> None:
    refusals = {c for c, info in CODES.items() if info.kind is Kind.REFUSAL}
    assert {"seat_taken", "stale", "not_your_turn", "illegal_intent", "no_such_match",
            "rate_limited"} <= refusals
    remote = {c for c, info in CODES.items() if info.kind is Kind.REMOTE}
    assert {"bad_frame", "frame_too_large", "bad_message", "unknown_type"} <= remote
    assert {c for c, info in CODES.items() if info.kind is Kind.LOCAL} == {"internal_error"}
