"""examples/verify_match.js (JavaScript written from docs/protocol.md) agrees with the vectors."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "verify_match.js"
VECTORS = ROOT / "examples" / "rng_vectors.json"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return subprocess.run([NODE, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=60, check=False)


def test_the_javascript_stream_reproduces_every_vector() -> None:
    done = _run("vectors", str(VECTORS))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified" in done.stdout


@pytest.mark.parametrize("field", ["key", "block1", "words", "randbelow_52", "shuffle_52",
                                   "shuffle_104"])
def test_a_wrong_vector_fails_in_javascript(tmp_path: Path, field: str) -> None:
    doc = json.loads(VECTORS.read_text())
    vector = doc["vectors"][1]
    value = vector[field]
    if isinstance(value, str):
        vector[field] = ("0" if value[0] != "0" else "1") + value[1:]
    else:
        value[0], value[-1] = value[-1], value[0]
        if value[0] == value[-1]:
            value[0] = "2C" if isinstance(value[0], str) else value[0] + 1
    bad = tmp_path / "vectors.json"
    bad.write_text(json.dumps(doc))
    done = _run("vectors", str(bad))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED" in done.stdout
