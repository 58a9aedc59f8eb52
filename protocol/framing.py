"""Length-prefixed framing: a 4-byte big-endian unsigned length N, then N body bytes.

:class:`FrameDecoder` accepts bytes in any chunking and yields whole bodies. It
checks each announced length against ``max_frame`` as soon as the 4 header bytes
are in, before any of the body is kept, so a peer announcing 4 GiB costs nothing.
It keeps at most ``4 + max_frame`` bytes of an incomplete frame; complete frames
wait in a queue until :meth:`FrameDecoder.next_frame` takes them, so a caller
that drains after every read holds at most one read's worth of frames.
"""

from __future__ import annotations

import struct
from collections import deque

from protocol.errors import LocalProtocolError, ProtocolError

HEADER = struct.Struct(">I")
HEADER_SIZE = HEADER.size  # 4
#: The default largest body in bytes (PROTOCOL-CORE: welcome.limits.max_frame).
DEFAULT_MAX_FRAME = 65536
#: The largest length a 4-byte header can express.
MAX_REPRESENTABLE = 2**32 - 1


def encode_frame(body: bytes, max_frame: int | None = None) -> bytes:
    """Prefix ``body`` with its length, as one buffer.

    Args:
        body: the msgpack body.
        max_frame: if given, the largest body the receiver accepts.

    Raises:
        LocalProtocolError: ``frame_too_large`` when the body exceeds ``max_frame``
            (or what 4 bytes can express).
    """
    limit = MAX_REPRESENTABLE if max_frame is None else min(max_frame, MAX_REPRESENTABLE)
    if len(body) > limit:
        raise LocalProtocolError(
            "frame_too_large", f"body of {len(body)} bytes exceeds the peer's max_frame {limit}"
        )
    return HEADER.pack(len(body)) + body


class FrameDecoder:
    """Splits a byte stream into frame bodies.

    After a ``frame_too_large`` the stream is unusable: the decoder drops every
    byte it has and everything fed later; :meth:`next_frame` first returns the
    frames that were complete before the bad header, then raises.
    """

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        if not 0 < max_frame <= MAX_REPRESENTABLE:
            raise ValueError(f"max_frame must be in 1..{MAX_REPRESENTABLE}, got {max_frame}")
        self.max_frame = max_frame
        self._buf = bytearray()
        self._frames: deque[bytes] = deque()
        self._error: ProtocolError | None = None

    @property
    def buffered(self) -> int:
        """Bytes held: the incomplete tail plus the complete frames not yet taken."""
        return len(self._buf) + sum(len(f) for f in self._frames)

    @property
    def partial(self) -> int:
        """Bytes of the incomplete frame held (always <= 4 + max_frame)."""
        return len(self._buf)

    def feed(self, data: bytes) -> None:
        """Add bytes from the stream; never raises (errors surface in next_frame)."""
        if self._error is not None or not data:
            return
        buf = self._buf
        buf += data
        start = 0
        size = len(buf)
        while size - start >= HEADER_SIZE:
            (n,) = HEADER.unpack_from(buf, start)
            if n > self.max_frame:
                self._error = ProtocolError(
                    "frame_too_large",
                    f"frame of {n} bytes announced; max_frame is {self.max_frame}",
                )
                buf.clear()
                return
            end = start + HEADER_SIZE + n
            if end > size:
                break
            self._frames.append(bytes(buf[start + HEADER_SIZE : end]))
            start = end
        if start:
            del buf[:start]

    def next_frame(self) -> bytes | None:
        """The next complete body, or None when more bytes are needed.

        Raises:
            ProtocolError: ``frame_too_large`` (fatal) once the complete frames
                before the oversized header have been returned.
        """
        if self._frames:
            return self._frames.popleft()
        if self._error is not None:
            raise self._error
        return None
