"""Sans-IO wire format: framing, msgpack codec, events, errors, versions.

Importing the package imports :mod:`protocol.events`, which gives
:meth:`protocol.errors.ProtocolError.to_event` its event class.
"""

from protocol import events as _events  # noqa: F401
