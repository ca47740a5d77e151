"""The LLM engineer's buckets in a configuration space are whole levels: two buckets of one
structure at different knob values stay two (each with its own knobs and share), and only rows
naming the same level are merged, which the rationale says (a scripted model)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gymwright.engineer import ConfigSpace, LLMEngineer
from gymwright.engineer.engineers import _most_buckets
from gymwright.engineer.evidence import Evidence, StageEvidence
from gymwright.engineer.mixture import Bucket, Mixture
from gymwright.llm.client import LLM
from gymwright.llm.scripted import ScriptedProvider

FIXED = {"max_steps": 30, "view_radius": 2}
SPACE = ConfigSpace.for_spec("mapf_frozenlake", {"size": [3, 4, 5, 6], "n_agents": [2, 3]},
                             {"wait_ratio": [0.0, 0.25, 0.5, 0.75], "hole_density": [0.2, 0.3]}, FIXED)


def _row(size: int, wait: float, share: float, agents: int = 3, holes: float = 0.2) -> dict:
    return {"size": size, "n_agents": agents, "wait_ratio": wait, "hole_density": holes, "share": share}


def _propose(tmp_path: Path, rows: list[dict]) -> tuple[Mixture, str, ScriptedProvider]:
    script = tmp_path / "engineer.yaml"
    script.write_text(yaml.safe_dump([{"json": {"buckets": rows, "rationale": "spread the wait ratio"}}]))
    provider = ScriptedProvider(script)
    p = {**FIXED, "size": 4, "n_agents": 3, "wait_ratio": 0.25, "hole_density": 0.2}
    ev = StageEvidence("mapf_frozenlake", "valid", (0.3, 0.6),
                       [(Bucket(p, 1.0, "size=4 n_agents=3"), Evidence("mapf_frozenlake", p, "valid", 0.5, (0.3, 0.6)))],
                       stage=1, stages=4, space=SPACE)
    proposal = LLMEngineer(LLM(provider, retries=0)).propose_stage(ev)
    return proposal.mixture, proposal.rationale, provider


def test_two_levels_of_one_structure_are_two_buckets_with_their_own_knobs(tmp_path: Path) -> None:
    mixture, rationale, provider = _propose(tmp_path, [_row(5, 0.5, 0.3), _row(5, 0.75, 0.5), _row(4, 0.25, 0.2)])
    by = {b.label: b for b in mixture.buckets}
    assert set(by) == {"size=5 n_agents=3 wait_ratio=0.5 hole_density=0.2",
                       "size=5 n_agents=3 wait_ratio=0.75 hole_density=0.2", "size=4 n_agents=3"}
    assert by["size=5 n_agents=3 wait_ratio=0.5 hole_density=0.2"].params["wait_ratio"] == 0.5
    assert by["size=5 n_agents=3 wait_ratio=0.75 hole_density=0.2"].params["wait_ratio"] == 0.75
    assert by["size=5 n_agents=3 wait_ratio=0.5 hole_density=0.2"].share == pytest.approx(0.3)
    assert by["size=5 n_agents=3 wait_ratio=0.75 hole_density=0.2"].share == pytest.approx(0.5)
    assert by["size=4 n_agents=3"].share == pytest.approx(0.2), "a structure listed once keeps its short name"
    assert "merged" not in rationale
    request = provider.requests[0]
    assert request.schema["properties"]["buckets"]["maxItems"] == 48, "64 levels, capped at 48"
    prompt = request.messages[0].content
    assert ("any number of buckets per structure: each bucket is one level (a value for every lever); rows with the "
            "same values for every lever are merged") in prompt.lower()
    assert "at most 48" in prompt


def test_two_rows_of_the_same_level_merge_into_one_bucket_and_the_rationale_says_so(tmp_path: Path) -> None:
    mixture, rationale, _ = _propose(tmp_path, [_row(5, 0.5, 0.25), _row(5, 0.5, 0.25), _row(6, 0.0, 0.5)])
    by = {b.label: b for b in mixture.buckets}
    assert set(by) == {"size=5 n_agents=3", "size=6 n_agents=3"}, "the same level twice: one bucket"
    assert by["size=5 n_agents=3"].share == pytest.approx(0.5) and by["size=5 n_agents=3"].params["wait_ratio"] == 0.5
    assert "merged a row repeating the level size=5 n_agents=3 wait_ratio=0.5 hole_density=0.2" in rationale
    assert "shares added" in rationale


def test_a_large_space_caps_the_buckets_a_reply_may_list() -> None:
    big = ConfigSpace.for_spec("mapf_frozenlake", {"size": [3, 4, 5, 6], "n_agents": [2, 3, 4]},
                               {"wait_ratio": [0.0, 0.25, 0.5, 0.75], "hole_density": [0.1, 0.2]}, FIXED)
    assert len(big.levels()) == 96 and _most_buckets(big) == 48
    small = ConfigSpace({"size": [3, 4]}, {"wait_ratio": [0.0, 0.5, 0.75]}, FIXED)
    assert _most_buckets(small) == 6, "a small space: one bucket per level"


def test_a_space_names_a_repeated_structure_by_its_whole_level() -> None:
    a = {**FIXED, "size": 5, "n_agents": 3, "wait_ratio": 0.5, "hole_density": 0.3}
    b = {**a, "wait_ratio": 0.75}
    c = {**a, "size": 6}
    assert SPACE.level_label(a) == "size=5 n_agents=3 wait_ratio=0.5 hole_density=0.3"
    assert SPACE.label(a) == "size=5 n_agents=3"
    assert SPACE.labels([a, b, c]) == ["size=5 n_agents=3 wait_ratio=0.5 hole_density=0.3",
                                       "size=5 n_agents=3 wait_ratio=0.75 hole_density=0.3", "size=6 n_agents=3"]
