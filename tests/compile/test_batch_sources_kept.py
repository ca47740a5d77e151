"""A process generates (and audits) a batch module once per spec content and params: evaluations
and curricula build the same configs every stage."""

from __future__ import annotations

from typing import Any

import pytest

from gymwright.compile import batch
from gymwright.compile.batch import compile_batch
from gymwright.spec.loader import load_spec


@pytest.fixture
def generated(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    calls: list[Any] = []
    real = batch.generate_batch

    def counting(cs: Any) -> str:
        calls.append(cs)
        return real(cs)

    monkeypatch.setattr(batch, "generate_batch", counting)
    monkeypatch.setattr(batch, "_SOURCES", type(batch._SOURCES)())
    return calls


def test_the_same_spec_and_params_are_generated_once(generated: list[Any]) -> None:
    a = compile_batch("mapf_frozenlake", {"size": 4, "n_agents": 2, "hole_density": 0.3}, batch_size=4)
    b = compile_batch("mapf_frozenlake", {"size": 4, "n_agents": 2, "hole_density": 0.3}, batch_size=8)
    assert len(generated) == 1 and type(a) is type(b)
    assert b.p.hole_density.tolist() == [0.3] * 8
    compile_batch("mapf_frozenlake", {"size": 4, "n_agents": 2, "hole_density": 0.1}, batch_size=4)
    assert len(generated) == 2  # other params: generated for them (their values are the module's defaults)


def test_a_changed_spec_is_generated_again(generated: list[Any]) -> None:
    spec = load_spec("mapf_frozenlake")
    first = compile_batch(spec, {"size": 4, "n_agents": 2}, batch_size=2)
    changed = spec.model_copy(deep=True)
    changed.params["max_steps"].default = 7
    second = compile_batch(changed, {"size": 4, "n_agents": 2}, batch_size=2)
    assert len(generated) == 2
    assert first.p.max_steps.tolist() != second.p.max_steps.tolist()


def test_a_mixed_batch_generates_each_structure_once(generated: list[Any]) -> None:
    params = [{"size": 4, "n_agents": 2}, {"size": 5, "n_agents": 2}] * 2
    compile_batch("mapf_frozenlake", params, batch_size=4)
    compile_batch("mapf_frozenlake", params, batch_size=4)
    assert len(generated) == 2


def test_only_the_most_recent_sources_are_kept(generated: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "MAX_KEPT_SOURCES", 2)
    for size in (3, 4, 5, 3):
        compile_batch("mapf_frozenlake", {"size": size, "n_agents": 1}, batch_size=1)
    assert len(batch._SOURCES) == 2 and len(generated) == 4  # size 3 had been let go
