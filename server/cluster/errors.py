"""The Redis failures that code outside the cluster's own modules catches, named
without importing coredis.

Importing coredis (and the typing libraries under it) takes most of a second, and
a single server (no ``--cluster``) never calls Redis: :mod:`server.app` and
:mod:`server.lobby` load the cluster code only when a cluster is asked for. A
coredis exception can only have been raised by coredis, which is loaded by then;
while it is not, there is no Redis failure to catch.
"""

from __future__ import annotations

import sys


def redis_errors() -> tuple[type[Exception], ...]:
    """``(coredis.exceptions.RedisError,)`` once coredis is loaded, else ``()``: for
    ``except (*redis_errors(), OSError)``, which then catches exactly what
    ``except (coredis.exceptions.RedisError, OSError)`` would. Never raises."""
    coredis = sys.modules.get("coredis")
    exceptions = getattr(coredis, "exceptions", None)
    if exceptions is None:
        return ()
    return (exceptions.RedisError,)
