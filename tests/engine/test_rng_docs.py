"""docs/protocol.md's "random stream" section: its vectors and its reference code are true."""

from __future__ import annotations

import json
import re
from pathlib import Path

from engine import cards
from engine.rng import KEY_LABEL, HmacStream

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
VECTORS = json.loads((ROOT / "examples" / "rng_vectors.json").read_text())["vectors"]
SECTION = DOC[DOC.index("## The random stream"):DOC.index("## Writing a bot in another language")]


def _squash(text: str) -> str:
    return " ".join(text.split())


def test_the_section_states_every_vector_of_the_json_file() -> None:
    text = _squash(SECTION)
    for vector in VECTORS:
        assert vector["server_seed"] in text
        assert all(seed in text for seed in vector["client_seeds"])
        assert f"key {vector['key']}" in text
        assert f"block 0 {vector['block0']}" in text
        assert ("randbelow(52) ten times from the start: "
                + " ".join(map(str, vector["randbelow_52"]))) in text
    first = VECTORS[0]
    assert f"block 1 {first['block1']}" in text
    assert "words " + " ".join(map(str, first["words"])) in text
    assert " ".join(first["shuffle_52"]) in text
    assert " ".join(map(str, first["shuffle_104"])) in text
    assert f"seat 0's first card is `{first['shuffle_52'][0]}`" in text
    assert f"seat 1's is `{first['shuffle_52'][1]}`" in text


def test_the_label_in_the_document_is_the_engine_label() -> None:
    assert f'"{KEY_LABEL.decode()}"' in SECTION


def test_the_reference_implementation_reproduces_the_vectors() -> None:
    code = re.search(r"```python\n(.*?)```", SECTION, re.S)
    assert code is not None, "the section has no Python reference implementation"
    namespace: dict = {}
    exec(compile(code.group(1), "docs/protocol.md", "exec"), namespace)  # noqa: S102
    stream_class = namespace["Stream"]
    for vector in VECTORS:
        ref = stream_class(vector["server_seed"], vector["client_seeds"])
        assert ref.key.hex() == vector["key"]
        assert [ref.word() for _ in vector["words"]] == vector["words"]
        ref = stream_class(vector["server_seed"], vector["client_seeds"])
        deck = list(range(52))
        ref.shuffle(deck)
        assert [cards.to_str(c) for c in deck] == vector["shuffle_52"]
        ref = stream_class(vector["server_seed"], vector["client_seeds"])
        double = list(range(104))
        ref.shuffle(double)
        assert double == vector["shuffle_104"]
        # and it walks in step with the engine's stream over many mixed draws
        ref = stream_class(vector["server_seed"], vector["client_seeds"])
        ours = HmacStream.for_match(int(vector["server_seed"], 16), vector["client_seeds"])
        for n in (2, 3, 104, 1, 52, 2, 7, 1 << 32, 5) * 30:
            assert ref.randbelow(n) == ours.randbelow(n)
