"""Issue 13, items 1, 2 and 6: free text reaches generated source only as a literal or an escaped
comment; names cannot break or collide with the generated module; and the audit refuses any
module that is not made of checked parts, even when the writer itself regresses."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
from pettingzoo.test import parallel_api_test
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.compile import audit as audit_mod
from gymwright.compile import compile_spec, writer
from gymwright.compile.audit import AuditError, audit_module, unsafe_builtins
from gymwright.compile.batch_backend import generate_batch
from gymwright.compile.build import check
from gymwright.compile.inline import MARKER
from gymwright.compile.python_backend import generate
from gymwright.compile.writer import docstring_text, one_line
from gymwright.errors import SpecError
from gymwright.spec.loader import read_data
from gymwright.verify.verifier import verify
from tests.support.library_sample import every_spec

runner = CliRunner()


def cake(**changes: object) -> dict:
    data, _ = read_data("cake_negotiation")
    data = copy.deepcopy(data)
    data.update(changes)
    return data


def with_rule_doc(doc: str) -> dict:
    data = cake()
    data["step"][0]["doc"] = doc
    return data


# ---------------------------------------------------------------- the attack of the issue

def attack_doc(marker: Path, sep: str) -> str:
    return f"x{sep}    import os; os.system('touch {marker}'){sep}#"


@pytest.mark.parametrize("sep", ["\n", "\r"])
def test_a_rule_doc_with_code_is_inert_at_validate_verify_export_and_import(tmp_path: Path, sep: str) -> None:
    import yaml

    marker = tmp_path / "pwned"
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(with_rule_doc(attack_doc(marker, sep)), allow_unicode=True))
    result = runner.invoke(app, ["validate", str(spec)])
    assert result.exit_code == 0, result.output
    report = verify(str(spec), episodes=2)
    assert report.passed, report.to_prompt()
    out = tmp_path / "env.py"
    result = runner.invoke(app, ["export", str(spec), "-o", str(out)])
    assert result.exit_code == 0, result.output
    source = out.read_text()
    assert "os.system" in source  # the text is there, escaped in a comment
    assert all("os.system" not in line or line.lstrip().startswith("#") for line in source.splitlines())
    proc = subprocess.run([sys.executable, "-c", "import env; e = env.parallel_env(); e.reset(seed=1)"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()


@pytest.mark.parametrize("sep, indent, why", [
    ("\n", 8, "it imports in the generated part"),  # inside step(): the module would still work
    ("\r", 8, "it imports in the generated part"),
    ("\n", 0, "it does not parse"),
])
def test_the_attack_is_refused_by_the_audit_when_the_writer_regresses(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sep: str, indent: int, why: str) -> None:
    """With comments written raw again (the old bug), the module is refused before it runs."""
    marker = tmp_path / "pwned"
    monkeypatch.setattr(writer, "one_line", lambda text: text)
    doc = f"x{sep}{' ' * indent}import os; os.system('touch {marker}'){sep}#"
    with pytest.raises(AuditError, match=f"generated code failed its audit at line \\d+: {why}"):
        compile_spec(with_rule_doc(doc), {"discount": 0.85})
    assert not marker.exists()


# ---------------------------------------------------------------- writer

@pytest.mark.parametrize("sep", ["\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\x00"])
def test_one_line_escapes_every_line_separator(sep: str) -> None:
    line = one_line(f"a{sep}b")
    assert len(f"# {line}".splitlines()) == 1 and line.isprintable()
    code = ord(sep)
    assert line == "a" + (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}") + "b"


def test_docstring_text_survives_backslashes_quotes_and_nul() -> None:
    import ast

    text = 'C:\\users\\N{x} \\x41 """ end\x00 \\'
    tree = ast.parse(f'"""{docstring_text(text)}"""\n')
    assert len(tree.body) == 1
    assert ast.get_docstring(tree, clean=False) == 'C:\\users\\N{x} \\x41 """ end\\x00 \\'


# ---------------------------------------------------------------- names

@pytest.mark.parametrize("name, message", [
    ("class", "`class` is reserved for Python syntax"),
    ("if", "`if` is reserved for expression syntax"),
    ("a__b", "`a__b` contains `__`"),
    ("tofile", "`tofile` is reserved"),
])
def test_names_that_would_break_the_module_are_refused_with_their_path(name: str, message: str) -> None:
    data = cake()
    data["state"][name] = {"type": "int", "init": 0}
    with pytest.raises(SpecError) as e:
        compile_spec(data)
    assert any(d.path == f"state.{name}" and message in d.message for d in e.value.diagnostics), e.value


def test_a_state_variable_named_like_an_internal_works() -> None:
    """`rng` was the env's random stream (`v.rng`): internals now start with `_`, which no spec
    name can."""
    data = cake()
    data["state"]["rng"] = {"type": "int", "init": 7}
    env = compile_spec(data).parallel_env()
    env.reset(seed=3)
    assert env.v.rng == 7
    parallel_api_test(env, num_cycles=20)


def test_composite_names_cannot_collide() -> None:
    """Role `a` + choice `b_c` and role `a_b` + choice `c` share the argument `d`: once both
    were `ARGV_a_b_c_d` and one role silently played the other's values."""
    data = {
        "gymwright": 1, "name": "collide",
        "agents": {"a": {"count": 1}, "a_b": {"count": 1}},
        "state": {"x": {"type": "float", "init": 0.0, "min": -10, "max": 10}},
        "actions": {"a": [{"name": "b_c", "args": {"d": "[1, 2]"}}], "a_b": [{"name": "c", "args": {"d": "[5, 6]"}}]},
        "step": [{"set": {"x": "d[0] + d[1]"}}],
        "terminate": "t >= 2",
        "rewards": {"a": [{"name": "r", "expr": "x"}], "a_b": [{"name": "r", "expr": "x"}]},
        "observe": {"a": ["x"], "a_b": ["x"]},
    }
    env = compile_spec(data).parallel_env()
    env.reset(seed=0)
    env.step({"a_0": 1, "a_b_0": 1})
    assert env.v.x == 2 + 6


def test_a_spec_named_like_a_pettingzoo_class_compiles() -> None:
    env = compile_spec(cake(name="parallel")).parallel_env()
    assert type(env).__name__ == "ParallelSpecEnv"
    parallel_api_test(env, num_cycles=20)


# ---------------------------------------------------------------- the audit itself

def _module(tail: str) -> tuple[str, object]:
    """The cake's module with `tail` appended to its generated part."""
    cs = check("cake_negotiation")
    return generate(cs) + "\n" + tail + "\n", cs


HOSTILE = {
    "import os": "it imports in the generated part",
    "from os import system": "it imports in the generated part",
    "x = eval('1')": "it names `eval`",
    "x = getattr(np, 'sum')": "it names `getattr`",
    "x = vars(AGENTS)": "it names `vars`",
    "x = open('/etc/passwd')": "it names `open`",
    "x = __import__('os')": "it names `__import__`",
    "x = __builtins__": "it names `__builtins__`",
    "x = AGENTS.__class__.__mro__": "it uses the attribute `__mro__`",
    "x = ().__class__": "it uses the attribute `__class__`",
    "x = np.save": "it uses the attribute `save`",
    "x = np.frombuffer": "`np.frombuffer` is not used by any generator",
    "x = np": "it uses the module `np` other than as `np.<function>`",
    "y = np.zeros(3)\ny.tofile('/tmp/x')": "it uses the attribute `tofile`",
    "x = '{0.__class__}'.format(1)": "it uses the attribute `format`",
    "try:\n    pass\nexcept Exception:\n    pass": "`Try` statements are never generated",
    "while True:\n    break": "`While` statements are never generated",
    "global AGENTS": "`Global` statements are never generated",
    "del AGENTS": "`Delete` statements are never generated",
    "x = (y := 1)": "`NamedExpr` expressions are never generated",
    "@functools.cache\ndef f():\n    pass": "`f` has a decorator",
    "with open('x') as f:\n    pass": "a `with` block other than `np.errstate(...)`",
    "x = AGENTS.system": "the attribute `system` is neither declared by the spec nor used by any generator",
}


@pytest.mark.parametrize("tail", list(HOSTILE))
def test_the_audit_refuses_code_the_generators_never_write(tail: str) -> None:
    source, cs = _module(tail)
    with pytest.raises(AuditError, match="generated code failed its audit at line") as e:
        audit_module(source, cs)
    assert HOSTILE[tail] in e.value.message


def test_the_audit_refuses_a_changed_runtime_and_names_the_line() -> None:
    cs = check("cake_negotiation")
    source = generate(cs)
    tampered = source.replace("    x &= _MASK\n", "    x &= _MASK\n    __import__('os')\n", 1)
    assert tampered != source
    with pytest.raises(AuditError, match="the runtime part differs"):
        audit_module(tampered, cs)
    with pytest.raises(AuditError, match="it imports `import subprocess`, which the runtime does not"):
        audit_module(source.replace("import math\n", "import math\nimport subprocess\n", 1), cs)
    with pytest.raises(AuditError, match="the line that ends the runtime part is missing"):
        audit_module(source.replace(MARKER, "# gone"), cs)
    lines = source.count("\n")
    with pytest.raises(AuditError, match=f"at line {lines + 2}: it imports in the generated part"):
        audit_module(source + "\nimport os\n", cs)
    with pytest.raises(AuditError, match="it names `os`"):
        audit_module(source + "\nx = os\n", cs)


@pytest.mark.parametrize("name", every_spec())
def test_every_library_module_passes_the_audit(name: str) -> None:
    cs = check(name)  # each generator audits what it writes, and raises AuditError on a finding
    generate(cs)
    generate(cs, instrument=True)
    generate_batch(cs)


def test_no_unsafe_builtin_or_attribute_is_allowed() -> None:
    assert {"eval", "exec", "compile", "open", "getattr", "setattr", "vars", "globals", "locals",
            "breakpoint", "input", "type", "object", "super", "memoryview", "delattr"} <= unsafe_builtins()
    attrs, per_module = audit_mod.templates()
    assert not attrs & {"tofile", "format", "system", "load"}
    assert "save" not in per_module["np"] and "sum" in per_module["np"]
