"""``scripts/ismcts_variant.py``: cardsim with every ``ismcts`` built with given arguments."""

from __future__ import annotations

import json

import pytest

from engine.bots import describe, get_strategy, strategy_names
from engine.bots.ismcts import ISMCTSStrategy
from tests.modules import ROOT, load_module


def _variant_script():
    return load_module(ROOT / "scripts" / "ismcts_variant.py")


def test_the_variant_plays_with_its_arguments_and_the_registry_is_put_back(capsys) -> None:
    doc = describe()["ismcts"]
    script = _variant_script()
    assert script.main(["exploration=0.5", "evaluation=cards", "--", "tournament",
                        "datastructures", "--bots", "ismcts,ismcts0", "--games", "2",
                        "--seed", "3", "--time-budget", "0.002", "--clock", "cpu",
                        "--jobs", "1", "--json", "--no-progress"]) == 0
    out = capsys.readouterr()
    table = json.loads(out.out)
    assert table  # the tournament ran
    assert "kwargs={'exploration': 0.5, 'evaluation': 'cards'}" in out.err
    assert "ismcts-bot searched=" in out.err
    assert strategy_names() == ["random", "greedy", "search", "ismcts"]
    assert describe()["ismcts"] == doc
    default = get_strategy("ismcts", seed=1)
    assert isinstance(default, ISMCTSStrategy) and default.exploration != 0.5


def test_the_variant_needs_the_separator() -> None:
    with pytest.raises(SystemExit, match="usage"):
        _variant_script().main(["exploration=0.5"])
