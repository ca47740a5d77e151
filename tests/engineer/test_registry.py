"""The engineers by name (`gymwright.engineer.registry`): what `evolve --engineer` makes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gymwright.engineer import FixedEngineer, HeuristicEngineer
from gymwright.engineer.registry import ENGINEERS, make_engineer
from gymwright.errors import GymwrightError


def test_each_name_makes_its_engineer_and_edits_reach_the_heuristic() -> None:
    assert list(ENGINEERS) == ["heuristic", "fixed", "llm"]  # the first is evolve's default
    assert isinstance(make_engineer("fixed"), FixedEngineer)
    heuristic = make_engineer("heuristic", edits=True)
    assert isinstance(heuristic, HeuristicEngineer) and heuristic.edits


def test_an_unknown_name_and_an_llm_without_a_model_are_clear_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(GymwrightError) as e:
        make_engineer("random")
    assert e.value.path == "--engineer" and "heuristic, fixed, llm" in str(e.value)
    monkeypatch.delenv("GYMWRIGHT_MODEL", raising=False)
    with pytest.raises(GymwrightError) as e:
        make_engineer("llm", model=None)
    assert e.value.path == "--model" and "needs a model" in e.value.message


def test_the_registry_and_the_cli_read_the_names_without_importing_an_engineer() -> None:
    code = ("import sys, gymwright.cli.evolve; "
            "print(sorted(m for m in sys.modules if m.startswith('gymwright.engineer.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "['gymwright.engineer.registry']"
