"""The one place that knows the package's version and the protocol versions spoken."""

from importlib import metadata

try:
    __version__ = metadata.version("cardserver")
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

#: Protocol versions this code speaks, lowest first.
PROTOCOL_VERSIONS: tuple[int, ...] = (1, 2)
