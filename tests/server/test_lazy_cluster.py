"""A single server does not load the cluster code: coredis (and the typing
libraries under it) cost most of a second at every ``cardserver`` start."""

from __future__ import annotations

import subprocess
import sys

import pytest

from server.cluster.errors import redis_errors

CHECK = """
import sys
import server.app, server.cli, server.lobby, server.match.task
loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('coredis', 'beartype'))
print(' '.join(loaded[:5]))
"""


def test_a_single_server_imports_no_coredis() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "", f"loaded without --cluster: {done.stdout.strip()}"


def test_redis_errors_are_coredis_own_once_loaded() -> None:
    coredis = pytest.importorskip("coredis")
    assert redis_errors() == (coredis.exceptions.RedisError,)
    try:
        raise coredis.exceptions.ConnectionError("down")
    except (*redis_errors(), OSError) as exc:
        assert isinstance(exc, coredis.exceptions.RedisError)


def test_redis_errors_are_none_before_coredis_is_loaded() -> None:
    code = ("from server.cluster.errors import redis_errors\n"
            "assert redis_errors() == (), redis_errors()\n"
            "import coredis\n"
            "assert redis_errors() == (coredis.exceptions.RedisError,)\n")
    subprocess.run([sys.executable, "-c", code], timeout=60, check=True)
