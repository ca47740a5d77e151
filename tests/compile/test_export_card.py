"""Exports read like a PettingZoo env module (issue 40, item 6): a card on top, checked
constructor params, each repeated literal table written once, a versioned name from the spec's
content hash."""

from __future__ import annotations

import ast
import copy
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.compile import compile_spec, export_source
from gymwright.compile.build import check
from gymwright.compile.common import spec_sha, versioned_name
from gymwright.compile.hoist import write_tables_once
from gymwright.compile.inline import MARKER
from gymwright.compile.writer import docstring_text
from gymwright.runtime.core import rt_param
from gymwright.spec.checker import check_spec
from gymwright.spec.loader import load_spec, read_data
from gymwright.store import spec_hash as store_spec_hash
from tests.support.library_sample import every_spec

GRID, CHANNEL, MAPF = "predator_prey", "speaker_listener", "mapf_frozenlake"


def _doc(source: str) -> str:
    doc = ast.get_docstring(ast.parse(source), clean=False)
    assert doc is not None
    return doc


def _rows(doc: str) -> list[list[str]]:
    """The cells of every Markdown table row of the card."""
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in doc.splitlines()
            if line.startswith("| ") and not line.startswith("|---")]


# ----------------------------------------------------------------------------- the card
@pytest.mark.parametrize("name", [GRID, CHANNEL, MAPF])
def test_the_card_says_what_the_checked_spec_says(name: str) -> None:
    cs = check(name)
    doc = _doc(export_source(name))
    rows = _rows(doc)
    assert doc.startswith(f"# {name} ({versioned_name(cs)})\n")
    assert ["Name", f"`{versioned_name(cs)}` (`metadata['name']`)"] in rows
    assert ["Agents", f"{cs.n_agents}: " + ", ".join(f"`{a}`" for a in cs.agent_ids)] in rows
    assert "env = parallel_env(" not in doc and "par = parallel_env(render_mode='ansi'" in doc
    for role in cs.roles:
        assert f"### {role.name}: Discrete({role.n_actions})" in doc
        assert f"### {role.name}: Box(float32, ({role.obs_dim},))" in doc
        assert [role.name, str(role.count), ", ".join(role.agent_ids)] == next(r[:3] for r in rows if r[0] == role.name)
        for choice in role.choices:  # every choice with its flat indices
            first, last = choice.offset, choice.offset + choice.n - 1
            index = str(first) if first == last else f"{first}-{last}"
            assert any(r[:2] == [index, choice.name] for r in rows), (role.name, choice.name)
        start = 0
        for f in role.features:  # the layout: slice, size and bounds of every feature
            row = [f"{start}:{start + f.size}", f.name, str(f.size)]
            match = [r for r in rows if r[:3] == row]
            assert match, row
            low, high = float(f.low.min()), float(f.high.max())
            assert match[0][3].split(" to ")[0] == f"{low:g}" and match[0][4].split(" to ")[-1] == f"{high:g}"
            start += f.size
        assert start == role.obs_dim
        for term in role.terms:
            assert any(r[:3] == [role.name, term.name, f"{term.weight:g}"] for r in rows), term.name
    for pname, p in cs.spec.params.items():
        row = next(r for r in rows if r[0] == pname)
        assert row[1] == (p.type or "float") and row[2] == repr(cs.params[pname])
        if p.type != "bool":
            assert row[3] == f"[{p.min:g}, {p.max:g}]"
        assert row[4] == ("fixed" if pname in cs.structural else "")
    for m in cs.metrics:
        assert any(r[:2] == [m.name, m.reduce] for r in rows), m.name
    assert f"- terminated when `{cs.terminate.source}`" in doc
    assert f"- truncated when `{cs.truncate.source}`" in doc


def test_the_cards_of_grid_channel_and_mapf_name_their_mechanics() -> None:
    grid, channel, mapf = (_doc(export_source(n)) for n in (GRID, CHANNEL, MAPF))
    assert "| Grid | 7 x 7, tiles empty, wall, collision `block` |" in grid
    assert "| Channel | 3 symbols |" in channel and "| Grid |" not in channel
    assert "| 0-2 | say | word (int) in {0, 1, 2} (3 values) | send a symbol; sends `word[me]` |" in channel
    assert "| 4 | wait |  | move [0, 0] |" in mapf
    assert "carries their solved layouts" in " ".join(mapf.split()) and "solved layouts" not in " ".join(grid.split())


def test_the_card_shows_params_given_at_export_as_its_defaults() -> None:
    doc = _doc(export_source("cake_negotiation", {"discount": 0.75, "offer_levels": 21}))
    rows = _rows(doc)
    assert next(r for r in rows if r[0] == "discount")[2] == "0.75"
    assert next(r for r in rows if r[0] == "offer_levels")[2:5] == ["21", "[2, 101]", "fixed"]
    assert "| 0-20 | propose | share (float) in {0, 0.05, 0.1, 0.15, ..., 0.85, 0.9, 0.95, 1} (21 values) |" in doc


HOSTILE = 'ends here """\nimport os; os.system("echo pwned")\n""" \\ \\N{BULLET} \\x41 \x00 \x1b[31m \u2028 | \\'


def test_hostile_text_in_the_card_stays_text_and_the_audit_accepts_the_module() -> None:
    data, _ = read_data("cake_negotiation")
    data = copy.deepcopy(data)
    data["description"] = HOSTILE + " (the task)"
    data["doc"] = HOSTILE
    data["params"]["discount"]["doc"] = HOSTILE
    data["agents"]["bargainer"]["doc"] = HOSTILE
    data["metrics"]["agreed"]["doc"] = HOSTILE
    compiled = compile_spec(data)  # generate() audits the module before it loads
    source = compiled.source
    tree = ast.parse(source)
    assert isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[1], ast.Import | ast.ImportFrom)
    literals = [n.value for n in ast.walk(ast.Module(tree.body[1:], [])) if isinstance(n, ast.Constant)
                and isinstance(n.value, str) and "pwned" in n.value]
    assert set(literals) == {HOSTILE, HOSTILE + " (the task)"}  # the text view's TEXT_LAYOUT: the spec's text, as literals
    assert compiled.parallel_env().TEXT_LAYOUT["description"] == HOSTILE + " (the task)"
    assert "\x00" not in source and "\x1b" not in source and "\u2028" not in source
    doc = compiled.module.__doc__
    assert 'ends here """' in doc and 'os.system("echo pwned")' in doc  # the text, read back as text
    assert "\\N{BULLET}" in doc and "\\x41" in doc and "\\x00" in doc and "\\x1b[31m" in doc
    assert doc.count("ends here") == 5
    code = [n for n in tree.body[1:] if "pwned" in ast.unparse(_without_strings(n))]
    assert not code  # after the docstring, the text is never code: only string literals hold it


def _without_strings(node: ast.AST) -> ast.AST:
    """`node` with every string literal emptied."""
    node = copy.deepcopy(node)
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            n.value = ""
    return node


# ----------------------------------------------------------------------------- constructor params
def test_the_constructor_refuses_a_bad_param_with_what_to_give_instead() -> None:
    module = compile_spec("cake_negotiation").module
    for factory in (module.parallel_env, module.env, module.raw_env):
        with pytest.raises(ValueError, match=r"param `discount` = 2.0 is out of its range \[0.5, 1.0\]; "
                                             r"give a float in \[0.5, 1.0\]"):
            factory(discount=2.0)
        with pytest.raises(ValueError, match=r"unknown param\(s\) \['dicount'\].*did you mean `discount`"):
            factory(dicount=0.5)
        with pytest.raises(ValueError, match=r"param `max_rounds` must be an int, got '3' \(str\); "
                                             r"give an int in \[1.0, 50.0\]"):
            factory(max_rounds="3")
        with pytest.raises(ValueError, match=r"param `max_rounds` must be an int, got 2.5; give a whole number"):
            factory(max_rounds=2.5)
        with pytest.raises(ValueError, match=r"param `offer_levels` fixes shapes or agent counts; this module "
                                             r"was generated for offer_levels=11"):
            factory(offer_levels=21)
    assert module.parallel_env(discount=0.5, max_rounds=50.0).p.max_rounds == 50  # the bounds are inclusive


def test_a_bool_param_takes_only_a_bool() -> None:
    with pytest.raises(ValueError, match=r"param `flag` must be a bool, got 1 \(int\); give True or False"):
        rt_param("flag", "bool", 1)
    assert rt_param("flag", "bool", np.True_) is True


@pytest.mark.parametrize("value", [0.49, 0.5, 0.75, 1.0, 1.01, 1, 2, float("nan"), float("inf"), True, None, [0.5]])
def test_the_env_and_the_checker_apply_one_rule_to_a_param(value: object) -> None:
    """A value the checker accepts for a param is one the generated env accepts, and the other
    way round (Python values; the checker also reads the command line's text)."""
    spec = load_spec("cake_negotiation")
    p = spec.params["discount"]
    checker_ok = check_spec(spec, {"discount": value})[0] is not None and not [
        d for d in check_spec(spec, {"discount": value})[1] if d.severity.value == "error"]
    try:
        rt_param("discount", p.type or "float", value, p.min, p.max)
        env_ok = True
    except ValueError:
        env_ok = False
    assert env_ok == checker_ok


# ----------------------------------------------------------------------------- tables once
def _generated(name: str) -> str:
    return export_source(name).split(MARKER, 1)[1]


def test_observation_bounds_shared_by_roles_are_written_once() -> None:
    cs = check(GRID)
    low = np.concatenate([f.low for f in cs.roles[0].features]).tolist()
    assert all(np.concatenate([f.low for f in r.features]).tolist() == low for r in cs.roles)  # the premise
    body = _generated(GRID)
    tree = ast.parse(body)
    tables = [n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id.endswith("_TABLE")]  # type: ignore[attr-defined]
    assert "LOW_TABLE" in {t.targets[0].id for t in tables}  # type: ignore[attr-defined]
    assert list(ast.literal_eval(next(t.value for t in tables if t.targets[0].id == "LOW_TABLE"))) == low  # type: ignore[attr-defined]
    assert body.count("np.array(LOW_TABLE, dtype=np.float32)") == len(cs.roles)


def test_an_argument_table_is_read_from_its_constant() -> None:
    body = _generated("cake_negotiation")
    assert "SCRIPT_VALUES_bargainer__propose__share = np.array(ARGV_bargainer__propose__share, dtype=np.float64)" in body
    assert "p._argv_bargainer__propose__share = np.array(ARGV_bargainer__propose__share, dtype=np.float64)" in body
    assert body.count("0.30000000000000004") == 2  # DECODE's row of the action, and ARGV's table


@pytest.mark.parametrize("name", every_spec())
def test_no_export_repeats_a_table_that_could_be_written_once(name: str) -> None:
    body = _generated(name)
    assert write_tables_once(body) == body


HOIST_CASE = '''
ROWS = [1, 2, 3, 4]
early = np.array([5, 6, 7, 8.5])


class Env:
    fixed = [5, 6, 7, 8.5]

    def f(self):
        a = np.array([1, 2, 3, 4], dtype=float)
        c = [(0, 1), (1, 2)]
        d = ((0, 1), (1, 2))
        e = [[9, 9], [9, 9]]
        g = [{'x': 1}, {'x': 1}, 3, 4]
        return a, c, d, e, g, np.array([5, 6, 7, 8.5])

    def h(self):
        c = [(0, 1), (1, 2)]
        c.append(1)
        d = ((0, 1), (1, 2))
        e = [[9, 9], [9, 9]]
        g = [{'x': 1}, {'x': 1}, 3, 4]
        return c, d, e, g, np.array([1, 2, 3, 4]), [1, 2, 3, 4]
'''


def test_writing_a_table_once_keeps_every_value_and_every_fresh_object() -> None:
    out = write_tables_once(HOIST_CASE)
    assert "np.array(ROWS, dtype=float)" in out and "np.array(ROWS)" in out
    assert "return c, d, e, g, np.array(ROWS), list(ROWS)" in out  # a fresh list, equal to the literal
    assert out.count("c = list(C_TABLE)") == 2  # one table, named where it is first used
    assert out.count("d = C_TABLE") == 2 and "C_TABLE = ((0, 1), (1, 2))" in out
    assert "e = [[9, 9], [9, 9]]" in out  # its rows are lists: shared, they could be changed in place
    assert out.count("{'x': 1}") == 4  # a dict is no table
    assert out.count("[5, 6, 7, 8.5]") == 0 and "early = np.array(EARLY_TABLE)" in out and "fixed = list(EARLY_TABLE)" in out
    assert out.index("EARLY_TABLE = ") < out.index("early = ")
    run: dict = {"np": np}
    exec(compile(out, "<out>", "exec"), run)  # noqa: S102 - the test's own code
    ref: dict = {"np": np}
    exec(compile(HOIST_CASE, "<in>", "exec"), ref)  # noqa: S102 - the test's own code
    got, want = run["Env"]().f(), ref["Env"]().f()
    for x, y in zip(got, want, strict=True):
        assert type(x) is type(y) and np.array_equal(np.asarray(x, dtype=object), np.asarray(y, dtype=object))
    assert run["Env"]().f()[1] is not run["Env"]().f()[1]  # a fresh list at every call, as before
    assert run["Env"].fixed == [5, 6, 7, 8.5]


def test_a_table_constant_changed_in_place_is_not_shared() -> None:
    source = "ROWS = [1, 2, 3, 4]\nROWS.sort()\n\n\ndef f():\n    return np.array([1, 2, 3, 4])\n"
    assert write_tables_once(source) == source


# ----------------------------------------------------------------------------- the versioned name
def test_the_versioned_name_is_the_spec_name_and_its_content_hash() -> None:
    cs = check(GRID)
    name = versioned_name(cs)
    assert re.fullmatch(r"predator_prey_v[0-9a-f]{8}", name)
    assert spec_sha(cs) == store_spec_hash(cs.spec.model_dump(mode="json", by_alias=True))  # the store's function
    assert name == f"predator_prey_v{spec_sha(cs)[:8]}"
    module = compile_spec(GRID).module
    assert module.parallel_env().metadata["name"] == name == module.raw_env().metadata["name"]
    assert f"# predator_prey ({name})" in module.__doc__
    assert module.SPEC_HASH == spec_sha(cs)[:16]


def test_the_versioned_name_follows_the_content_not_the_writing() -> None:
    data, _ = read_data(GRID)
    name = versioned_name(check(GRID))
    reordered = dict(reversed(list(copy.deepcopy(data).items())))
    assert versioned_name(check(reordered)) == name
    spelled_out = copy.deepcopy(data)
    spelled_out["turns"] = "simultaneous"  # a default, written out
    assert versioned_name(check(spelled_out)) == name
    changed = copy.deepcopy(data)
    changed["params"]["max_steps"]["default"] = 60
    assert versioned_name(check(changed)) != name
    assert versioned_name(check(GRID, {"max_steps": 60})) == name  # params given at export are not the spec


def test_the_versioned_name_is_the_same_in_another_process() -> None:
    names = {n: versioned_name(check(n)) for n in (GRID, CHANNEL, MAPF)}
    code = ("import json; from gymwright.compile.build import check; from gymwright.compile.common import "
            "versioned_name; print(json.dumps({n: versioned_name(check(n)) for n in %r}))" % [GRID, CHANNEL, MAPF])
    for seed in ("0", "12345"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={"PYTHONHASHSEED": seed, "PATH": "", **_pythonpath()})
        assert json.loads(out.stdout) == names


def _pythonpath() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "HOME", "OMP_NUM_THREADS")}


def test_the_export_command_says_the_env_name(tmp_path: Path) -> None:
    target = tmp_path / "env.py"
    result = CliRunner().invoke(app, ["export", "cake_negotiation", "-o", str(target), "--json"])
    assert result.exit_code == 0, result.output
    name = versioned_name(check("cake_negotiation"))
    assert json.loads(result.stdout)["name"] == name
    loaded = importlib.util.spec_from_file_location("exported_env", target)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    assert module.parallel_env().metadata["name"] == module.env().metadata["name"] == name


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(['"', "\\", "a", "'", "\n", "N", "{", "x"]), max_size=24))
def test_a_docstring_reads_back_as_its_text_and_a_lone_quote_as_itself(text: str) -> None:
    escaped = docstring_text(text)
    tree = ast.parse(f'"""{escaped}"""\n')
    assert len(tree.body) == 1
    assert ast.get_docstring(tree, clean=False) == "\n".join(text.splitlines())
    assert '""' not in escaped.replace('\\"', "")  # escaped only where quotes meet, or at the end
