"""TLS for the server's port (``--tls-cert FILE --tls-key FILE``).

With a certificate the port speaks TLS only: every accepted connection must
complete a TLS handshake within ``handshake_timeout`` before the protocol
starts inside it (:class:`trio.SSLStream`); a plain-TCP client fails the
handshake, is closed and the server serves on. Protocol, limits and messages
are the same as over plain TCP.
"""

from __future__ import annotations

import logging
import ssl
from pathlib import Path

import trio

log = logging.getLogger("cardserver")


class TLSFileError(Exception):
    """The certificate or key cannot be used (unreadable, not PEM, not a pair)."""


def server_context(cert: Path | str, key: Path | str | None) -> ssl.SSLContext:
    """A server-side context for ``cert`` (PEM, the chain after the leaf) and ``key``:
    TLS 1.2 or newer, the standard library's default ciphers.

    Raises:
        TLSFileError: a file cannot be read, is not valid PEM, or key and
            certificate do not match (the message names the files).
    """
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(str(cert), None if key is None else str(key))
    except (OSError, ssl.SSLError) as exc:
        raise TLSFileError(f"cannot use --tls-cert {cert} / --tls-key {key}: {exc}") from exc
    return context


async def accept_tls(stream: trio.abc.Stream, context: ssl.SSLContext, timeout: float,
                     name: str) -> trio.SSLStream | None:
    """``stream`` inside TLS once the client's handshake is done; None (the stream
    closed, logged at INFO) when it fails or takes longer than ``timeout``."""
    tls = trio.SSLStream(stream, context, server_side=True)
    reason = "timed out"
    with trio.move_on_after(timeout):
        try:
            await tls.do_handshake()
            return tls
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            cause = exc.__cause__
            reason = f"{type(cause or exc).__name__}: {cause or exc}"
    log.info("connection %s: no TLS handshake (%s); closed", name, reason)
    with trio.CancelScope(shield=True), trio.move_on_after(1):
        try:
            await stream.aclose()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
    return None
