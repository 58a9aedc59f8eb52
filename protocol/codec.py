"""MessagePack encoding and decoding of one frame body, with explicit limits.

Decoding decisions (documented in docs/protocol.md, "Errors"):

* a body that is not exactly one MessagePack value -- undecodable, truncated,
  trailing bytes, an ext type, a string/array/map longer than the limits below,
  nesting deeper than ``max_depth`` -- is ``bad_frame`` (fatal: the peer's
  encoder is broken, nothing it sends can be trusted);
* a valid value that is not a map, has a non-string key anywhere, or has no
  string ``type`` is ``bad_message`` (the connection survives).

Only :class:`~protocol.errors.ProtocolError` ever escapes :func:`unpack`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgpack
import msgspec

from protocol.errors import LocalProtocolError, ProtocolError
from protocol.schema import kind_name


@dataclass(frozen=True, slots=True)
class Limits:
    """Decoder limits. Exceeding any of them is ``bad_frame``."""

    max_str_len: int = 16 * 1024
    max_bin_len: int = 1024
    max_array_len: int = 4096
    max_map_len: int = 1024
    max_depth: int = 16
    #: a body no longer than this cannot exceed any length limit above (a string or
    #: binary of n bytes, an array of n values, a map of n pairs need at least n
    #: bytes): :func:`unpack` may decode it without the length checks
    plain_size: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "plain_size", min(
            self.max_str_len, self.max_bin_len, self.max_array_len, self.max_map_len))


#: What a server accepts from clients (frames <= 64 KiB).
SERVER_LIMITS = Limits()
#: What a client accepts from a server (replies such as ``matches`` may be large).
CLIENT_LIMITS = Limits(
    max_str_len=256 * 1024,
    max_bin_len=64 * 1024,
    max_array_len=65536,
    max_map_len=65536,
    max_depth=32,
)


def _refuse_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"ext type {code} is not allowed")


#: msgspec's decoder, for a body that needs no length checks (:func:`unpack`)
_DECODE = msgspec.msgpack.Decoder().decode
#: the types of a decoded value that need no look inside
_SCALARS = frozenset({str, int, float, bool, type(None), bytes})


def unpack(body: bytes, limits: Limits = SERVER_LIMITS) -> dict[str, Any]:
    """Decode one frame body into a message map.

    A body within :attr:`Limits.plain_size` (every request a game sends) is first
    decoded by msgspec (about 3 µs less than msgpack's ``unpackb`` with its limits
    and the shape walk); its value is taken only when it is plainly what msgpack's
    decoding below returns without an error (a map with a string ``type``, string
    keys all the way down, nothing but maps, arrays, strings, binaries, numbers,
    booleans and nil within ``max_depth``). Anything else -- an error, an ext type
    (msgspec decodes a timestamp as a datetime), a non-string key -- goes through
    msgpack's decoding, which says what is wrong as it always did.

    Returns:
        the map; its ``type`` is a str. Fields are not validated here (see messages.py).

    Raises:
        ProtocolError: ``bad_frame`` (fatal) for bodies that are not one msgpack
            value within ``limits``; ``bad_message`` for a value that is not a map
            with string keys and a string ``type``.
    """
    if len(body) <= limits.plain_size:
        try:
            value = _DECODE(body)
        except Exception:   # msgspec's DecodeError, a RecursionError...: msgpack's say
            value = None
        if (type(value) is dict and type(value.get("type")) is str
                and _plain(value, limits.max_depth, 1)):
            return value
    try:
        value = msgpack.unpackb(
            body,
            raw=False,
            use_list=True,
            strict_map_key=False,
            ext_hook=_refuse_ext,
            max_str_len=limits.max_str_len,
            max_bin_len=limits.max_bin_len,
            max_array_len=limits.max_array_len,
            max_map_len=limits.max_map_len,
            max_ext_len=0,
        )
    except msgpack.ExtraData:
        raise ProtocolError("bad_frame", "trailing bytes after the message in the frame") from None
    except Exception as exc:  # msgpack raises ValueError, TypeError, UnpackException, ...
        raise ProtocolError("bad_frame", f"undecodable body: {type(exc).__name__}") from None
    _check_shape(value, limits.max_depth)
    if not isinstance(value, dict):
        raise ProtocolError("bad_message", f"a message must be a map, got {kind_name(value)}")
    mtype = value.get("type")
    if not isinstance(mtype, str):
        raise ProtocolError("bad_message", "the message has no string field 'type'", "type")
    return value


def _plain(value: dict[str, Any] | list[Any], max_depth: int, depth: int) -> bool:
    """``value`` (a map or an array ``depth`` levels down) holds only string keys and
    plain values (:data:`_SCALARS`, maps, arrays) within ``max_depth``: what
    msgpack's decoding gives without an error and :func:`_check_shape` passes."""
    if depth > max_depth:
        return False
    if type(value) is dict:
        for key, sub in value.items():
            if type(key) is not str:
                return False
            kind = type(sub)
            if kind not in _SCALARS and (kind is not dict and kind is not list
                                         or not _plain(sub, max_depth, depth + 1)):
                return False
        return True
    for sub in value:
        kind = type(sub)
        if kind not in _SCALARS and (kind is not dict and kind is not list
                                     or not _plain(sub, max_depth, depth + 1)):
            return False
    return True


def _check_shape(value: Any, max_depth: int, depth: int = 1) -> None:
    """Check nesting depth (bad_frame) and string map keys (bad_message).

    Recursion stops at ``max_depth + 1`` levels, so it is bounded by the limits.
    """
    kind = type(value)
    if kind is dict:
        if depth > max_depth:
            raise ProtocolError("bad_frame", f"nesting deeper than {max_depth}")
        for key, sub in value.items():
            if type(key) is not str:
                raise ProtocolError("bad_message", f"map keys must be strings, got {kind_name(key)}")
            if type(sub) is dict or type(sub) is list:
                _check_shape(sub, max_depth, depth + 1)
    elif kind is list:
        if depth > max_depth:
            raise ProtocolError("bad_frame", f"nesting deeper than {max_depth}")
        for sub in value:
            if type(sub) is dict or type(sub) is list:
                _check_shape(sub, max_depth, depth + 1)


#: One encoder for every message: msgspec writes the bytes ``msgpack.packb(msg,
#: use_bin_type=True)`` writes for every value a message holds (tests/protocol/
#: test_codec.py checks it), without building a packer per call.
_ENCODER = msgspec.msgpack.Encoder()


def pack(msg: dict[str, Any]) -> bytes:
    """Encode one message map as a msgpack body (strings as str, bytes as bin).

    Raises:
        LocalProtocolError: ``bad_message`` when the value cannot be encoded
            (an unsupported type, an integer outside 64 bits).
    """
    try:
        return _ENCODER.encode(msg)
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError) as exc:
        raise LocalProtocolError("bad_message", f"cannot encode message: {exc}") from None
