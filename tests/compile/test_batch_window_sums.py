"""The batch backend adds an `agents_view` / `agents_view_of` feature straight into the observation
buffer (`window_sums_obs`) when the emitter lowered it to `window_sums_batch` (it records the call,
nothing parses emitted code), and writes it plainly when the feature reads a window that other
features share; both ways equal the Python backend."""

from __future__ import annotations

import copy
import re

import yaml

from gymwright.compile.batch import batch_source
from gymwright.spec.loader import LIBRARY_DIR
from tests.compile.test_batch_differential import compare

BASE = yaml.safe_load((LIBRARY_DIR / "mapf_frozenlake.yaml").read_text())


def observe_source(spec: dict | str, params: dict | None = None) -> str:
    source = batch_source(spec, params)
    return source[source.index("    def _observe(self"):source.index("    def state(self")]


def shared_window_spec() -> dict:
    """MAPF (random layouts) whose `parked_near` window is read by a second feature too."""
    spec = copy.deepcopy(BASE)
    spec["grid"].pop("solve")
    spec["metrics"] = {k: m for k, m in spec["metrics"].items() if "optimal_cost" not in m["expr"]}
    spec["probes"] = []
    spec["params"]["n_agents"]["default"] = 3
    spec["observe"]["walker"].append(
        {"name": "parked_twice", "expr": "min(agents_view_of(pos[me], view_radius, reached or fell), 1)"})
    return spec


def test_mapf_window_features_are_added_into_the_buffer() -> None:
    source = observe_source("mapf_frozenlake", {"size": 8, "n_agents": 4})
    added = re.findall(r"window_sums_obs\(parts, (\d+), (\d+), ", source)
    assert added == [("27", "36"), ("36", "45"), ("45", "54")]  # the three agents_view_of features


def test_a_window_that_features_share_is_written_plainly_and_equals_the_python_backend() -> None:
    source = observe_source(shared_window_spec())
    assert [a for a, _ in re.findall(r"window_sums_obs\(parts, (\d+), (\d+), ", source)] == ["27", "36"]
    assert re.search(r"parts\.add\(45, 54, .*\bc\d+\b", source)  # parked_near: the shared local, written
    compare(shared_window_spec(), {}, size=4, seed=5, steps=60, policy_seed=2)
