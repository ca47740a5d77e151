"""The Python backend's step reads per-agent state from lists where a list means the same as the
numpy value (`flags_from_lists`, `rows_from_lists`), each list once until its variable is
replaced (`read_lists`); it computes a reward term that is the same for every agent once, and
the windows over the agents around the same centres with one `rt_agents_windows_rows` call.
The generated source says so, and the env plays exactly as the batch backend does on a spec
that reads its state in each of those ways; in every library spec's step no list is used past
an assignment to its variable without being read again (checked on the source's syntax tree,
and seen to fail when a rule's `replaced` call is removed)."""

from __future__ import annotations

import ast
import copy
import re
import textwrap

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gymwright.compile import compile_spec
from gymwright.spec.loader import LIBRARY_DIR
from tests.compile.test_batch_differential import compare

BASE = yaml.safe_load((LIBRARY_DIR / "mapf_frozenlake.yaml").read_text())


def reading_spec(size: int = 5, n_agents: int = 3) -> dict:
    """MAPF (random layouts, no solver) with state read as rows, flags replaced and read again,
    a legal flag reading a tile, and a reward term the same for every agent; `size` and
    `n_agents` (structural: they size the arrays) as its defaults."""
    spec = copy.deepcopy(BASE)
    spec["params"]["size"]["default"] = size
    spec["params"]["n_agents"]["default"] = n_agents
    spec["grid"].pop("solve")
    spec["metrics"] = {k: m for k, m in spec["metrics"].items() if "optimal_cost" not in m["expr"]}
    spec["probes"] = []
    spec["agent_state"]["gap"] = {"type": "int", "init": 0, "min": 0, "max": 100}
    spec["agent_state"]["off_goal"] = {"type": "bool", "init": True}
    spec["step"] += [
        {"set": {"gap": "min(manhattan(pos[me], goal[me]), 50)",
                 "off_goal": "any(pos[me] != goal[me]) and (off_goal[me] or not reached[me])"}},
        {"when": "off_goal[me] and not fell[me]", "set": {"gap": "gap[me] + 1"}},
    ]
    spec["actions"]["walker"][0]["legal"] = "not (reached[me] or fell[me]) and tile(pos[me]) != hole"
    spec["rewards"]["walker"] += [
        {"name": "away", "expr": "0.01 * off_goal[me]", "weight": -1.0},
        {"name": "crowd", "expr": "0.1 * count(reached)"},
    ]
    return spec


def step_source(source: str) -> str:
    return source[source.index("    def step(self, actions):"):source.index("    def episode_metrics(self):")]


def test_rows_flags_and_shared_terms_are_read_as_the_source_says() -> None:
    step = step_source(compile_spec(reading_spec()).source)
    assert "(pos_[me] == goal_[me])" in step  # all(pos[me] == goal[me])
    assert "(pos_[me] != goal_[me])" in step  # any(pos[me] != goal[me])
    assert "rt_tile1(v.tiles, pos_[me])" in step and "rt_manhattan1(pos_[me], goal_[me])" in step
    # reached and fell: read for can_move, kept through the rules that do not replace them,
    # read again after the rule that does (for the rewards)
    assert step.count("reached_ = v.reached.tolist()") == 2 and step.count("fell_ = v.fell.tolist()") == 2
    assert step.count("off_goal_ = v.off_goal.tolist()") == 2  # read by a rule that replaces it, and by the next
    assert step.count("pos_ = v.pos.tolist()") == 1  # after the grid moved the agents
    crowd = len(BASE["rewards"]["walker"]) + 1
    assert f"x0_{crowd} = " in step and f"x1_{crowd} = " not in step  # the same for every agent
    assert re.search(rf"r2 = .*\bx0_{crowd}\b", step)


def test_windows_around_the_same_centres_are_one_call() -> None:
    source = compile_spec("mapf_frozenlake", {"size": 8, "n_agents": 4}).source
    rows = source[source.index("    def _observe_all__walker(self):"):source.index("    def state(self):")]
    assert rows.count("rt_agents_windows_rows(") == 1
    assert "rt_agents_view_of_rows(" not in rows and "rt_agents_view_rows(" not in rows


def test_python_env_reading_lists_plays_as_the_batch_backend() -> None:
    compare(reading_spec(), {}, size=4, seed=7, steps=80, policy_seed=1)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**40), policy_seed=st.integers(0, 1000), n=st.integers(1, 5),
       slip=st.sampled_from([0.0, 0.3]))
def test_python_env_reading_lists_plays_as_the_batch_backend_at_random(seed: int, policy_seed: int, n: int,
                                                                        slip: float) -> None:
    compare(reading_spec(4, n), {"slip": slip}, size=3, seed=seed, steps=50, policy_seed=policy_seed)


def stale_list_reads(step: str) -> list[str]:
    """Uses of a per-agent list `x_` in a generated `step` that no `x_ = v.x.tolist()` before it
    reads since the last assignment to `v.x` (statements in source order)."""
    fn = ast.parse(textwrap.dedent(step)).body[0]
    events: list[tuple[int, int, str, str]] = []  # (line, column, kind, name)
    for node in ast.walk(fn):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "v":
                    events.append((node.lineno, -1, "assigned", sub.attr))
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.endswith("_") and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "tolist"):
            events.append((node.end_lineno or node.lineno, 10**6, "read", node.targets[0].id[:-1]))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id.endswith("_") and node.id[:-1]:
            events.append((node.lineno, node.col_offset, "used", node.id[:-1]))
    fresh: set[str] = set()
    stale = []
    for line, _, kind, name in sorted(events):
        if kind == "assigned":
            fresh.discard(name)
        elif kind == "read":
            fresh.add(name)
        elif name not in fresh:
            stale.append(f"line {line}: {name}_")
    return stale


def specs_with_lists() -> list[tuple[str, object, dict]]:
    from gymwright.spec import library_names
    cases: list[tuple[str, object, dict]] = [(name, name, {}) for name in library_names()]
    cases += [("mapf 5 agents", "mapf_frozenlake", {"size": 6, "n_agents": 5}), ("reading spec", reading_spec(), {})]
    return cases


def test_no_generated_step_reads_a_list_past_its_variables_replacement() -> None:
    """The guard on `read_lists` / `replaced`: in every library spec's step (and the reading spec's),
    each per-agent list is used only after a read that follows the variable's last assignment."""
    checked = 0
    for label, spec, params in specs_with_lists():
        step = step_source(compile_spec(spec, params).source)
        assert not stale_list_reads(step), (label, stale_list_reads(step))
        checked += "_ = v." in step
    assert checked >= 3  # specs that read lists at all
    broken = step_source(compile_spec(reading_spec()).source).replace("        off_goal_ = v.off_goal.tolist()\n", "", 1)
    assert stale_list_reads(broken)  # the guard sees a list used without its read
