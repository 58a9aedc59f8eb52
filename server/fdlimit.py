"""The one place that raises this process's open-file limit (the server, the load
scripts and the hostile-input tests each hold thousands of sockets)."""

from __future__ import annotations

import resource

#: What "as high as allowed" means when the hard limit is unlimited.
UNLIMITED_TARGET = 1 << 20


def raise_fd_limit() -> int:
    """Raise the soft limit on open files to the hard limit (each client connection
    is one descriptor; the usual soft limit of 1024 is below the default
    ``--max-connections``). Returns the soft limit now in force, -1 when it cannot
    be read; never raises."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY or soft < hard:
            target = hard if hard != resource.RLIM_INFINITY else UNLIMITED_TARGET
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            except (OSError, ValueError):
                pass
        return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (OSError, ValueError):
        return -1
