"""What a spec may cost is bounded before any code is generated (issue 13, item 4).

Every attack case is refused with a diagnostic that names where, the size and the limit, never
a traceback; one subprocess runs them all and checks the peak memory. Every library spec fits
every limit with a wide margin: the library's maxima are stated below and checked.
"""

from __future__ import annotations

import copy
import json
import math
import string
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from gymwright.diagnostic import Diagnostic, Severity
from gymwright.errors import SpecError
from gymwright.spec import checker, limits
from gymwright.spec.checker import check_spec
from gymwright.spec.limits import LIMITS
from gymwright.spec.loader import LIBRARY_DIR, library_names, load_spec, read_data
from gymwright.spec.model import EnvSpec
from gymwright.spec.reference import reference_markdown
from gymwright.verify.validate import validate

BASE: dict[str, Any] = {
    "gymwright": 1, "name": "attack",
    "agents": {"player": {"count": 2}},
    "state": {"score": {"type": "int", "init": 0, "min": 0, "max": 100}},
    "actions": {"player": [{"name": "wait"}, {"name": "bump"}]},
    "step": [{"when": "any(bump)", "set": {"score": "min(score + 1, 100)"}}],
    "rewards": {"player": [{"name": "points", "expr": "score / 100"}]},
    "metrics": {"final": {"expr": "score"}},
    "truncate": "t >= 10",
    "observe": {"player": ["score"]},
}


def spec(**changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(BASE)
    out.update(changes)
    return out


def errors(source: Any) -> list[Diagnostic]:
    return [d for d in validate(source, probes=False) if d.severity is Severity.error]


def refused(source: Any, path: str, *fragments: str) -> Diagnostic:
    """The one diagnostic at `path` whose message holds every fragment (and no sign of a bug)."""
    found = errors(source)
    shown = "\n".join(d.format() for d in found) or "(no errors)"
    assert "gymwright bug" not in shown and "Traceback" not in shown, shown
    match = [d for d in found if d.path == path and all(f in d.message for f in fragments)]
    assert match, f"want {path}: {fragments}; got\n{shown}"
    assert match[0].hint, f"{path}: a refusal says how to fix it"
    return match[0]


def nested(depth: int) -> Any:
    """`depth` levels of nested lists around a 0, built without recursion."""
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


# ---------------------------------------------------------------------------- the attack cases
ALIAS_BOMB = textwrap.dedent("""\
    gymwright: 1
    name: bomb
    consts:
      a: &a [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
      b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
      c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
      d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
      e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
      f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
      g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
      big: *g
    agents: {player: {count: 1}}
    actions: {player: [{name: wait}]}
    observe: {player: [t]}
    """)


def attack_files(folder: Path) -> dict[str, Path]:
    """The issue's attack cases, as files (the 200 MB one is sparse)."""
    files: dict[str, str | bytes] = {
        "actions_1e9.json": json.dumps(spec(actions={"player": [
            {"name": "wait"}, {"name": "bump", "args": {"a": "arange(1000)", "b": "arange(1000)", "c": "arange(1000)"}}]})),
        "agent_var.json": json.dumps(spec(agents={"player": {"count": 32}},
                                          agent_state={"x": {"type": "int", "shape": [1_000_000]}})),
        "state_arrays.json": json.dumps(spec(state={"score": BASE["state"]["score"], **{
            f"a{i}": {"type": "float", "shape": [1_000_000]} for i in range(50)}})),
        "reward_terms.json": json.dumps(spec(rewards={"player": [{"name": f"r{i}", "expr": "score"}
                                                                 for i in range(5000)]})),
        "placeholders.json": json.dumps(spec(text={"render": "{score}" * 200_000})),
        "alias_bomb.yaml": ALIAS_BOMB,
        "deep.yaml": "gymwright: 1\nname: deep\nconsts: {x: " + "[" * 1000 + "0" + "]" * 1000 + "}\n",
        "deep.json": '{"gymwright": 1, "name": "deep", "consts": {"x": ' + "[" * 1000 + "0" + "]" * 1000 + "}}",
        "latin1.yaml": "gymwright: 1\nname: caf\xe9\n".encode("latin-1"),
        "binary.yaml": bytes(range(256)) * 4,
    }
    out = {}
    for name, body in files.items():
        out[name] = folder / name
        out[name].write_bytes(body if isinstance(body, bytes) else body.encode())
    out["big.yaml"] = folder / "big.yaml"
    with out["big.yaml"].open("wb") as f:
        f.truncate(200 * 1024 * 1024)
    return out


@pytest.fixture
def attacks(tmp_path: Path) -> dict[str, Path]:
    return attack_files(tmp_path)


def test_a_billion_actions_are_counted_not_enumerated(attacks: dict[str, Path]) -> None:
    assert len(errors(str(attacks["actions_1e9.json"]))) == 1  # the refused choice stays declared: no cascade
    d = refused(str(attacks["actions_1e9.json"]), "actions.player[1].args",
                "role `player` would have 1,000,000,001 actions", "`bump` alone has 1,000 x 1,000 x 1,000 = 1,000,000,000",
                f"the limit is {limits.MAX_ACTIONS:,} actions per role")
    assert "fewer values" in d.hint


def test_an_agent_variable_of_a_million_values_times_32_agents(attacks: dict[str, Path]) -> None:
    refused(str(attacks["agent_var.json"]), "agent_state.x.shape",
            "`x` alone holds 32 agents x 1,000,000 = 32,000,000 values", f"{limits.MAX_STATE_SIZE:,}")


def test_fifty_state_arrays_of_a_million_each_name_every_array(attacks: dict[str, Path]) -> None:
    found = errors(str(attacks["state_arrays.json"]))
    assert [d.path for d in found] == [f"state.a{i}.shape" for i in range(50)]
    assert all("alone holds 1,000,000 values" in d.message for d in found)


def test_state_that_fits_only_array_by_array_is_refused_in_total() -> None:
    arrays = {f"a{i}": {"type": "float", "shape": [500]} for i in range(40)}  # 20,001 values with score
    d = refused(spec(state={"score": BASE["state"]["score"], **arrays}), "state.a32.shape",
                "state and agent_state would hold 16,501 values with `a32` (500)",
                f"the limit for all state and agent_state together is {limits.MAX_STATE_SIZE:,}")
    assert d.value == 500


def test_the_state_total_counts_the_agent_axis_and_grid_builtins() -> None:
    grid = {"height": 64, "width": 64, "tiles": {"floor": {"char": "."}}, "goals": "none"}
    over = spec(grid=grid, agent_state={"x": {"type": "int", "shape": [6200]}})  # 4,096 tiles, 8 in pos, moved, conflict
    refused(over, "agent_state.x.shape", "would hold 16,505 values with `x` (2 agents x 6,200 = 12,400)")
    fits = spec(grid=grid, agent_state={"x": {"type": "int", "shape": [6000]}})
    assert check_spec(EnvSpec.model_validate(fits))[0] is not None


def test_five_thousand_reward_terms(attacks: dict[str, Path]) -> None:
    path = str(attacks["reward_terms.json"])
    refused(path, path, "spec file is 179,", f"the limit is {limits.MAX_FILE_BYTES:,}")  # as a file: too big
    refused(json.loads(Path(path).read_text()), "rewards.player",  # as data: too many terms
            f"5,000 reward terms for role `player`; the limit is {limits.MAX_REWARD_TERMS}")


def test_two_hundred_thousand_placeholders() -> None:
    data = spec(text={"render": "{score}" * 200_000})
    refused(data, "<dict>", "characters of text")  # as data: too much text
    refused(EnvSpec.model_validate(data), "text.render",  # as a model built in Python: too many placeholders
            f"200,000 placeholders in one text template; the limit is {limits.MAX_PLACEHOLDERS}")


def test_a_template_file_of_two_hundred_thousand_placeholders_is_too_big(attacks: dict[str, Path]) -> None:
    path = str(attacks["placeholders.json"])
    refused(path, path, "spec file is 1,400,", f"the limit is {limits.MAX_FILE_BYTES:,}")


def test_the_alias_bomb(attacks: dict[str, Path]) -> None:
    path = attacks["alias_bomb.yaml"]
    assert path.stat().st_size < 500  # a few hundred bytes that would expand to 10^7 values
    d = refused(str(path), f"{path}:8:38", f"the spec expands to more than {limits.MAX_SPEC_NODES:,} nodes",
                "alias `*d` at `consts.e[7]` repeats 11,111 nodes")
    assert "aliases" in d.hint


@pytest.mark.parametrize("name", ["deep.yaml", "deep.json"])
def test_brackets_nested_a_thousand_deep(attacks: dict[str, Path], name: str) -> None:
    path = attacks[name]
    found = errors(str(path))
    assert len(found) == 1 and found[0].path.startswith(f"{path}:1:" if name.endswith("json") else f"{path}:3:")
    assert f"nested more than {limits.MAX_NESTING_DEPTH} levels deep" in found[0].message


def test_a_file_of_200_mb_is_refused_before_it_is_read(attacks: dict[str, Path]) -> None:
    path = str(attacks["big.yaml"])
    refused(path, path, f"spec file is 209,715,200 bytes; the limit is {limits.MAX_FILE_BYTES:,}")


def test_a_latin1_file_names_the_byte_and_its_offset(attacks: dict[str, Path]) -> None:
    path = attacks["latin1.yaml"]
    d = refused(str(path), f"{path}:2", "not UTF-8 text: byte 0xe9 at byte offset 22 (line 2)")
    assert "save it as UTF-8" in d.hint


def test_a_binary_file(attacks: dict[str, Path]) -> None:
    path = attacks["binary.yaml"]
    refused(str(path), f"{path}:2", "a binary file, not text: byte 0x80 at byte offset 128")


ATTACK_RUNNER = """
import re, sys, time
from pathlib import Path
from gymwright.verify.validate import validate
rows = []
for path in sorted(Path(sys.argv[1]).iterdir()):
    start = time.perf_counter()
    found = [d for d in validate(str(path), probes=False) if d.severity == "error"]
    assert found and not any("gymwright bug" in d.message for d in found), (path, found)
    rows.append(f"{path.name} {time.perf_counter() - start:.3f}")
status = Path("/proc/self/status")  # VmHWM: this process's peak RSS (ru_maxrss would include the parent's)
print(int(re.search(r"VmHWM:\\s+(\\d+)", status.read_text()).group(1)) // 1024 if status.exists() else 0)
print("\\n".join(rows))
"""


def test_every_attack_is_refused_within_300_mb(tmp_path: Path) -> None:
    attack_files(tmp_path)
    out = subprocess.run([sys.executable, "-c", ATTACK_RUNNER, str(tmp_path)], capture_output=True, text=True,
                         timeout=120, check=True).stdout.splitlines()
    assert len(out) == 1 + 11, out
    assert int(out[0]) < 300, f"peak RSS {out[0]} MB (the interpreter and gymwright's imports included)"


# ---------------------------------------------------------------------------- reading
@pytest.mark.parametrize("reader", ["yaml", "json", "dict"])
def test_nesting_is_measured_alike_in_yaml_json_and_data(tmp_path: Path, reader: str) -> None:
    def load(depth: int) -> list[Diagnostic]:
        data = {"gymwright": 1, "name": "deep", "consts": {"x": nested(depth - 2)}}  # the two mappings count
        if reader == "dict":
            return errors(data)
        path = tmp_path / f"d{depth}.{reader}"
        path.write_text(json.dumps(data) if reader == "json" else yaml.safe_dump(data, default_flow_style=True))
        return errors(str(path))

    assert not any("nested" in d.message for d in load(limits.MAX_NESTING_DEPTH))
    over = load(limits.MAX_NESTING_DEPTH + 1)
    assert [d.message for d in over if "nested" in d.message][0].startswith(
        f"the spec is nested more than {limits.MAX_NESTING_DEPTH} levels deep")


@pytest.mark.parametrize("text", [
    "a:\n" + "".join("  " * i + "a:\n" for i in range(1, 200)) + "  " * 200 + "x: 1\n",  # block mappings
    "- " * 1000 + "0\n",  # compact block sequences
    "gymwright: 1\n" + "".join(f"x{i}: &x{i} [[[[[[[[[[*x{i - 1}]]]]]]]]]]\n" if i else "x0: &x0 0\n"
                               for i in range(10)),  # depth that only aliases reach
], ids=["block", "compact", "aliases"])
def test_deep_yaml_of_every_style(tmp_path: Path, text: str) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    found = errors(str(path))
    assert len(found) == 1 and "levels deep" in found[0].message, found


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("gymwright: 1\nname: loop\nconsts: {x: &a [1, *a]}\n")
    refused(str(path), f"{path}:3:20", "alias `*a` refers to a node that contains it", "consts.x[1]")


def test_small_aliases_as_in_the_library_are_fine() -> None:
    text = (LIBRARY_DIR / "predator_prey.yaml").read_text()
    assert "*moves" in text and load_spec(text).actions["prey"] == load_spec(text).actions["predator"]


def test_data_with_too_many_values_is_refused_without_walking_them_all() -> None:
    refused(spec(consts={"x": [0] * 200_000}), "<dict>", "more than 100,000 keys, values and list items",
            "at `consts.x`")
    row = [0] * 1000
    refused(spec(consts={"x": [row] * 1000}), "<dict>", "more than 100,000")  # shared lists count each time


def test_spec_text_given_directly_is_bounded() -> None:
    text = "gymwright: 1\nname: big\ndoc: " + "x" * limits.MAX_FILE_BYTES + "\n"
    refused(text, "<text>", f"characters; the limit is {limits.MAX_FILE_BYTES:,}")


def test_a_directory_is_not_a_spec(tmp_path: Path) -> None:
    refused(str(tmp_path), str(tmp_path), "not a regular file")


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_a_number_python_cannot_read_is_a_diagnostic(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"n.{suffix}"
    path.write_text(json.dumps({"gymwright": 1, "name": "n"})[:-1] + ', "consts": {"x": ' + "7" * 5000 + "}}")
    refused(str(path), str(path), "a value cannot be read")


def test_a_control_character_is_a_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "nul.yaml"
    path.write_text("gymwright: 1\nname: n\x00\n")
    refused(str(path), str(path), "control character #x0000")


def test_a_utf8_file_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(BASE).encode())
    assert read_data(path)[0] == BASE


def test_a_long_missing_name_is_shortened() -> None:
    with pytest.raises(SpecError) as e:
        read_data("x" * 5000)
    assert len(e.value.diagnostics[0].path) < 300


# ---------------------------------------------------------------------------- counts and sizes
def _entries(n: int, make: Any) -> list[Any]:
    return [make(i) for i in range(n)]


COUNTED = {  # limit -> (spec path, a spec with `n` entries of that kind)
    "MAX_PARAMS": ("params", lambda n: spec(params={f"p{i}": {"default": 1} for i in range(n)})),
    "MAX_CONSTS": ("consts", lambda n: spec(consts={f"c{i}": i for i in range(n)})),
    "MAX_VARIABLES": ("state", lambda n: spec(state={f"v{i}": {"init": 0} for i in range(n)})),
    "MAX_CHOICES": ("actions.player", lambda n: spec(actions={"player": _entries(n, lambda i: {"name": f"c{i}"})})),
    "MAX_STEP_RULES": ("step", lambda n: spec(step=_entries(n, lambda i: {"set": {"score": 1}}))),
    "MAX_REWARD_TERMS": ("rewards.player", lambda n: spec(rewards={"player": _entries(
        n, lambda i: {"name": f"r{i}", "expr": 1})})),
    "MAX_METRICS": ("metrics", lambda n: spec(metrics={f"m{i}": {"expr": "score"} for i in range(n)})),
    "MAX_FEATURES": ("observe.player", lambda n: spec(observe={"player": ["score"] * n})),
    "MAX_PROBES": ("probes", lambda n: spec(probes=_entries(n, lambda i: {"name": "p", "expect": ["True"]}))),
    "MAX_PROBE_STEPS": ("probes[0].actions", lambda n: spec(probes=[
        {"name": "long", "actions": [{"player_0": "wait"}] * n, "expect": ["True"]}])),
    "MAX_BASELINES": ("baselines", lambda n: spec(baselines={f"b{i}": {"player": [{"action": "wait"}]}
                                                             for i in range(n)})),
    "MAX_BASELINE_RULES": ("baselines.b.player", lambda n: spec(baselines={"b": {"player": [{"action": "wait"}] * n}})),
    "MAX_PLACEHOLDERS": ("text.observe.player", lambda n: spec(text={"observe": {"player": "{score}" * n}})),
    "MAX_CONST_SIZE": ("consts.table", lambda n: spec(consts={"table": [[1] * 10] * (n // 10) + [[1] * (n % 10)]
                                                              if n % 10 else [[1] * 10] * (n // 10)})),
}


@pytest.mark.parametrize("name", sorted(COUNTED))
def test_each_count_is_refused_past_its_limit_and_only_past_it(name: str) -> None:
    path, make = COUNTED[name]
    limit = LIMITS[name].value
    assert limits.count_diagnostics(EnvSpec.model_validate(make(limit))) == []
    found = limits.count_diagnostics(EnvSpec.model_validate(make(limit + 1)))
    assert [(d.path, d.message) for d in found] == [(path, found[0].message)]
    assert found[0].message.startswith(f"{limit + 1:,} ") and found[0].message.endswith(f"; the limit is {limit:,}")
    assert found[0].hint


def test_the_checker_stops_at_a_count_before_typing_anything() -> None:
    many = spec(rewards={"player": [{"name": f"r{i}", "expr": "undefined_name"} for i in range(65)]})
    cs, diags = check_spec(EnvSpec.model_validate(many))
    assert cs is None and [d.path for d in diags] == ["rewards.player"]


def test_a_const_table_past_the_limit_through_validate() -> None:
    refused(spec(consts={"payoff": [[0] * 101] * 100}), "consts.payoff",
            f"10,100 elements in one const; the limit is {limits.MAX_CONST_SIZE:,}")


def test_an_argument_and_a_role_at_the_action_limit() -> None:
    arg = {"name": "pick", "args": {"k": f"arange({limits.MAX_ARG_VALUES})"}}
    assert check_spec(EnvSpec.model_validate(spec(actions={"player": [arg]}, step=[])))[0] is not None
    refused(spec(actions={"player": [arg, {"name": "wait"}]}), "actions.player[1].args",
            f"role `player` would have {limits.MAX_ACTIONS + 1:,} actions (`wait` has 1)")
    refused(spec(actions={"player": [{"name": "pick", "args": {"k": f"arange({limits.MAX_ARG_VALUES + 1})"}}]}),
            "actions.player[0].args.k", f"1-D list of 1..{limits.MAX_ARG_VALUES} numbers")


def test_a_pool_of_generated_layouts_is_bounded_by_its_cells() -> None:
    grid = {"height": 64, "width": 64, "tiles": {"floor": {"char": "."}}, "goals": "none", "pool": "layouts"}
    params = {"layouts": {"default": 257, "min": 1, "max": 1000, "type": "int"}}
    refused(spec(grid=grid, params=params), "grid.pool",
            f"a pool of 257 layouts of 64x64 cells holds 1,052,672 cells, all generated at the first reset; "
            f"the limit is {limits.MAX_POOL_CELLS:,}")
    params["layouts"]["default"] = 256
    assert check_spec(EnvSpec.model_validate(spec(grid=grid, params=params)))[0] is not None


def test_a_channel_vocabulary_past_the_limit() -> None:
    refused(spec(channel={"vocab": limits.MAX_VOCAB + 1}), "channel.vocab", f"vocab must be an int in 1..{limits.MAX_VOCAB}")


# ---------------------------------------------------------------------------- one source of truth
def test_every_limit_is_a_named_constant_with_a_one_line_doc() -> None:
    assert len(LIMITS) >= 20
    for name, lim in LIMITS.items():
        assert getattr(limits, name) == lim.value and lim.value > 0
        assert lim.doc and "\n" not in lim.doc


def test_the_checker_reads_its_limits_from_the_limits_module() -> None:
    """Every part of the checker (`spec/checks/`, the spec-stage files of each mechanics module's
    folder) takes its limits from `limits`."""
    import importlib
    import pkgutil
    from pathlib import Path

    from gymwright import mechanics
    from gymwright.mechanics.base import stage_of
    from gymwright.spec import checks

    parts = [checker] + [importlib.import_module(f"{checks.__name__}.{m.name}") for m in pkgutil.iter_modules(checks.__path__)]
    parts += [importlib.import_module(m.name) for m in pkgutil.walk_packages(mechanics.__path__, "gymwright.mechanics.")
              if not m.ispkg and stage_of(Path(m.name.replace(".", "/") + ".py")) == "spec"]
    seen = set()
    for module in parts:
        for name in (n for n in vars(module) if n.startswith("MAX_")):
            assert getattr(module, name) is getattr(limits, name), (module.__name__, name)
            seen.add(name)
    assert {"MAX_AGENTS", "MAX_GRID_SIDE", "MAX_FEATURE_SIZE", "MAX_OBS_DIM", "MAX_STATE_SIZE", "MAX_ACTIONS"} <= seen
    assert "MAX_VAR_SIZE" not in seen  # replaced by MAX_STATE_SIZE


def test_the_reference_lists_every_limit() -> None:
    ref = reference_markdown()
    for lim in LIMITS.values():
        assert f"| `{lim.name}` | {lim.value:,} | {lim.doc} |" in ref


# ---------------------------------------------------------------------------- the library fits
# The largest value in the library, each spec at its defaults and at the max of every structural
# param (measured; a new library spec may raise these, and then the margins below still hold).
# MAX_GRID_POOL is measured at the defaults: mapf_frozenlake's `layout_pool` (1,000) declares the
# limit itself as its max (its solved pools are filled lazily, a layout when first drawn).
LIBRARY_MAXIMA = {
    "MAX_FILE_BYTES": 9_693, "MAX_NESTING_DEPTH": 6, "MAX_SPEC_NODES": 665, "MAX_TEXT_CHARS": 8_458,
    "MAX_AGENTS": 64, "MAX_GRID_SIDE": 15, "MAX_GRID_POOL": 1_000, "MAX_SOLVE_SEED": 1_000_000, "MAX_POOL_CELLS": 0, "MAX_STATE_SIZE": 285, "MAX_CONST_SIZE": 4, "MAX_TABLE_SIZE": 0, "MAX_ARG_VALUES": 201,
    "MAX_ACTIONS": 201, "MAX_VOCAB": 16, "MAX_FEATURE_SIZE": 64, "MAX_OBS_DIM": 299,
    "MAX_PARAMS": 12, "MAX_CONSTS": 2, "MAX_VARIABLES": 10, "MAX_CHOICES": 5, "MAX_STEP_RULES": 5,
    "MAX_REWARD_TERMS": 5, "MAX_METRICS": 8, "MAX_FEATURES": 9, "MAX_PLACEHOLDERS": 12, "MAX_PROBES": 8,
    "MAX_PROBE_STEPS": 10, "MAX_BASELINES": 3, "MAX_BASELINE_RULES": 5,
}
MARGIN = 4  # every limit is at least this many times the library's largest value (most are 20x or more)


def _depth_nodes_chars(data: Any) -> tuple[int, int, int]:
    depth = nodes = chars = 0
    stack = [(data, 0)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            nodes += 2 * len(value)
            chars += sum(len(k) for k in value)
            stack += [(v, level + 1) for v in value.values()]
        elif isinstance(value, list):
            nodes += len(value)
            stack += [(v, level + 1) for v in value]
        elif isinstance(value, str):
            chars += len(value)
        depth = max(depth, level + isinstance(value, dict | list))
    return depth, nodes, chars


def _measure(path: Path) -> dict[str, int]:
    data, _ = read_data(path)
    loaded = EnvSpec.model_validate(data)
    depth, nodes, chars = _depth_nodes_chars(data)
    cs, _ = check_spec(loaded)
    assert cs is not None, path.stem
    top = {k: int(loaded.params[k].max) for k in cs.structural if loaded.params[k].max is not None}
    at_max, _ = check_spec(loaded, top)
    assert at_max is not None, path.stem
    both = (cs, at_max)
    grids = [g for c in both if (g := c.section("grid")) is not None]
    templates = [t for _, t in limits._templates(loaded)]
    return {
        "MAX_FILE_BYTES": path.stat().st_size, "MAX_NESTING_DEPTH": depth, "MAX_SPEC_NODES": nodes,
        "MAX_TEXT_CHARS": chars, "MAX_AGENTS": max(c.n_agents for c in both),
        "MAX_GRID_SIDE": max([max(g.height, g.width) for g in grids] or [0]),
        "MAX_GRID_POOL": max([int(g.pool.info.value) for g in grids if g.pool is not None] or [0]),
        "MAX_SOLVE_SEED": max([int(g.solve_seed.info.hi) for g in grids if g.solve_seed is not None] or [0]),
        "MAX_POOL_CELLS": max([int(g.pool.info.value) * g.height * g.width for g in grids
                               if g.pool is not None and g.wait_ratio is None] or [0]),
        "MAX_STATE_SIZE": max(sum(math.prod(v.shape) * (c.n_agents if v.per_agent else 1)
                                  for v in c.state + c.agent_state) for c in both),
        "MAX_CONST_SIZE": max([limits._const_elements(c) for c in loaded.consts.values()] or [0]),
        "MAX_TABLE_SIZE": max([int(getattr(c.consts[k], "size", 1)) for c in both for k, v in loaded.consts.items()
                               if isinstance(getattr(v, "value", v), str)] or [0]),  # computed consts
        "MAX_ARG_VALUES": max([len(a.values) for c in both for r in c.roles for ch in r.choices for a in ch.args] or [0]),
        "MAX_ACTIONS": max(r.n_actions for c in both for r in c.roles),
        "MAX_VOCAB": max(c.section("channel") or 0 for c in both),
        "MAX_FEATURE_SIZE": max(f.size for c in both for r in c.roles for f in r.features),
        "MAX_OBS_DIM": max(r.obs_dim for c in both for r in c.roles),
        "MAX_PARAMS": len(loaded.params), "MAX_CONSTS": len(loaded.consts),
        "MAX_VARIABLES": len(loaded.state) + len(loaded.agent_state),
        "MAX_CHOICES": max(len(v) for v in loaded.actions.values()), "MAX_STEP_RULES": sum(len(getattr(r, "first", [r])) for r in loaded.step),
        "MAX_REWARD_TERMS": max([len(v) for v in loaded.rewards.values()] or [0]),
        "MAX_METRICS": len(loaded.metrics), "MAX_FEATURES": max(len(v) for v in loaded.observe.values()),
        "MAX_PLACEHOLDERS": max([sum(f is not None for _, f, _, _ in string.Formatter().parse(t)) for t in templates] or [0]),
        "MAX_PROBES": len(loaded.probes), "MAX_PROBE_STEPS": max([len(p.actions) for p in loaded.probes] or [0]),
        "MAX_BASELINES": len(loaded.baselines),
        "MAX_BASELINE_RULES": max([len(r) for b in loaded.baselines.values() for r in b.values()] or [0]),
    }


def test_every_library_spec_fits_every_limit_with_a_wide_margin() -> None:
    assert set(LIBRARY_MAXIMA) == set(LIMITS)
    measured = [_measure(LIBRARY_DIR / f"{name}.yaml") for name in library_names()]
    for name, stated in LIBRARY_MAXIMA.items():
        largest = max(m[name] for m in measured)
        assert largest <= stated, f"{name}: the library now reaches {largest}; update LIBRARY_MAXIMA"
        assert stated * MARGIN <= LIMITS[name].value, f"{name}: {stated} x {MARGIN} > {LIMITS[name].value}"
