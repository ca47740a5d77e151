"""docs/extending.md's recipes stay true: the function table and the backends' emitter tables
agree, every file the recipes name exists, and a new mechanics module is one folder and one
registry entry (a toy module added so alone checks, generates with both backends and runs)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from gymwright.compile.agent_axis import CALLS as AXIS
from gymwright.compile.npexpr import CALLS as BATCH
from gymwright.compile.pyexpr import CALLS as PYTHON
from gymwright.mechanics.emit import axis_calls, batch_calls, python_calls
from gymwright.spec.expr.functions import FUNCTIONS
from tests.support.paths import ROOT


def test_every_function_has_a_lowering_in_both_backends() -> None:
    python, batch = set(PYTHON) | set(python_calls()), set(BATCH) | set(batch_calls())
    assert set(PYTHON).isdisjoint(python_calls()) and set(BATCH).isdisjoint(batch_calls())
    assert python == set(FUNCTIONS), python ^ set(FUNCTIONS)
    assert batch == set(FUNCTIONS), batch ^ set(FUNCTIONS)
    assert set(AXIS) | set(axis_calls()) <= set(FUNCTIONS), set(AXIS) | set(axis_calls()) - set(FUNCTIONS)


def test_every_file_the_recipes_name_exists() -> None:
    doc = (ROOT / "docs" / "extending.md").read_text()
    paths = set(re.findall(r"`((?:src|tests|docs)/[\w/.]+\.(?:py|md))`", doc)) | {"pyproject.toml", "constraints.txt"}
    assert len(paths) > 20
    missing = [p for p in sorted(paths) if "<" not in p and not (ROOT / p).exists()]
    assert not missing, missing


# --------------------------------------------------------------------------- a new mechanics module

# `clock`: a counter every step advances modulo `period` (a state variable `tick`), a choice key
# `chime` whose choices ring it (`rang`, per agent), a constant (`period`), an expression function
# (`phase(k)`: the tick k steps on) whose lowering calls a runtime helper of its own. Every hook of
# the protocol is written, as the recipe in docs/extending.md says.
TOY = {
    "__init__.py": '''
        """The `clock` mechanics module (a test of docs/extending.md's recipe)."""
    ''',
    "schema.py": '''
        """The `clock` section and the key it adds to a choice."""

        from __future__ import annotations

        from pydantic import Field

        from gymwright.spec.fields import _Strict


        class Clock(_Strict):
            """A clock that advances every step, modulo `period`; choices with `chime` ring it."""

            period: int | str = Field(description="Ticks per cycle (int or param expression).")


        CHOICE_FIELDS = {"chime": (bool, Field(False, description="clock specs: this choice rings the clock."))}
    ''',
    "checks.py": '''
        """The `clock` section's checks."""

        from __future__ import annotations

        from typing import Any

        from gymwright.mechanics.clock.schema import Clock
        from gymwright.spec.checked import CChoice, CheckedSpec, CRole, CVar
        from gymwright.spec.checks.context import CheckContext
        from gymwright.spec.expr.check import Checked


        class ClockChecks:
            def declare(self, ctx: CheckContext, section: Any) -> None:
                if section is None:
                    return
                assert isinstance(section, Clock)
                period = section.period if isinstance(section.period, int) else ctx.const_int(
                    section.period, "clock.period", "period", 1, 1000)
                if period is None or period < 1:
                    ctx.error("clock.period", "period must be an int >= 1", value=period)
                    return
                ctx.mechanics["clock"] = period
                ctx.builtin("period", period, "ticks per cycle", "clock.period")
                ctx.builtin_var(CVar("tick", "int", (), None, 0.0, period - 1.0, False, doc="ticks, modulo period",
                                     builtin=True), "clock")
                ctx.builtin_var(CVar("rang", "bool", (), None, 0.0, 1.0, True, doc="rang the clock this step",
                                     builtin=True), "clock")

            def choice(self, ctx: CheckContext, role: CRole, cc: CChoice, choice: Any) -> None:
                if not choice.chime:
                    return
                if "clock" not in ctx.mechanics:
                    ctx.error(f"{cc.path}.chime", "`chime` needs a `clock:` section", "declare `clock: {period: N}`")
                    return
                cc.fields["chime"] = True

            def after_actions(self, ctx: CheckContext) -> bool:
                return True

            def expressions(self, cs: CheckedSpec) -> list[Checked | None]:
                return []
    ''',
    "functions.py": '''
        """`phase(k)`: the clock's tick k steps on."""

        from __future__ import annotations

        from gymwright.spec.expr.functions import ArgError, CallInfo, Func, const_int
        from gymwright.spec.expr.types import Info


        def _phase(c: CallInfo) -> Info:
            period = c.mechanics.get("clock")
            if period is None:
                raise ArgError("is a clock helper; declare a `clock:` section to use it")
            const_int(c, 0, "k")
            return Info("int", (), 0.0, float(period - 1), False)


        FUNCTIONS = (Func("phase", "phase(k)", "the clock's tick k steps on (k a constant int)", "clock", _phase, (1, 1)),)
    ''',
    "runtime.py": '''
        """The clock's runtime (standalone: inlined into generated modules)."""


        def clock_phase(tick, k, period):
            """(tick + k) modulo period, of one env's int or a batch's array of ticks."""
            return (tick + k) % period
    ''',
    "python.py": '''
        """The clock's part of the Python backend."""

        from __future__ import annotations

        from gymwright.mechanics.emit import PyGen, PythonPart


        class PyClock(PythonPart):
            calls = {"phase": lambda e, n: f"clock_phase(v.tick, {e.emit(n.args[0])}, p.period)"}
            axis_calls: dict = {}

            def constants(self, gen: PyGen) -> None:
                chimes = [c.name for r in gen.cs.roles for c in r.choices if c.fields.get("chime")]
                gen.w(f"CLOCK_CHIMES = {chimes!r}")

            def methods(self, gen: PyGen) -> None:
                with gen.w.block("def clock_tick(self):"):
                    gen.w("return int(self.v.tick)")
                gen.w("")

            def reset(self, gen: PyGen) -> None:
                gen.w("v.tick = 0")
                gen.w(f"v.rang = np.zeros({gen.n}, dtype=bool)")

            def step(self, gen: PyGen) -> None:
                gen.w("v.tick = (v.tick + 1) % p.period", comment="clock")
                gen.w(f"v.rang = np.zeros({gen.n}, dtype=bool)")
                for name in {c.name for r in gen.cs.roles for c in r.choices if c.fields.get("chime")}:
                    gen.w(f"v.rang = v.rang | np.asarray(v.{name}, dtype=bool)")
                gen.replaced(["tick", "rang"])

            def text(self, gen: PyGen) -> str | None:
                return "'tick=' + str(v.tick)"


        PYTHON = PyClock()
    ''',
    "batch.py": '''
        """The clock's part of the batch backend."""

        from __future__ import annotations

        from gymwright.mechanics.emit import BatchGen, BatchPart


        class BatchClock(BatchPart):
            calls = {"phase": lambda e, n: (f"clock_phase(v.tick, {e.emit(n.args[0]).code}, p.period)", 1)}

            def reset(self, gen: BatchGen) -> None:
                gen.w("v.tick = np.zeros(K, dtype=np.int64)")
                gen.w(f"v.rang = np.zeros((K, {gen.n}), dtype=bool)")

            def step(self, gen: BatchGen) -> None:
                gen.w("v.tick = (v.tick + 1) % p.period", comment="clock")
                gen.w(f"v.rang = np.zeros((K, {gen.n}), dtype=bool)")
                for name in {c.name for r in gen.cs.roles for c in r.choices if c.fields.get("chime")}:
                    gen.w(f"v.rang = v.rang | v.{name}")


        BATCH = BatchClock()
    ''',
    "module.py": '''
        """The clock's entry in the registry."""

        from gymwright.mechanics.base import Mechanics
        from gymwright.mechanics.clock.checks import ClockChecks
        from gymwright.mechanics.clock.functions import FUNCTIONS
        from gymwright.mechanics.clock.schema import CHOICE_FIELDS, Clock

        CLOCK = Mechanics(
            name="clock",
            section=Clock,
            doc="A clock (docs/extending.md's recipe, tested).",
            checks=ClockChecks(),
            choice_fields=CHOICE_FIELDS,
            maintained=frozenset({"tick", "rang"}),
            functions=FUNCTIONS,
            function_doc="Clock helpers (need a `clock:` section)",
            python="gymwright.mechanics.clock.python",
            batch="gymwright.mechanics.clock.batch",
            runtime=("mechanics/clock/runtime.py",),
        )
    ''',
}

SPEC = {
    "name": "chimes", "agents": {"bell": {"count": 2}},
    "clock": {"period": "cycle"},
    "params": {"cycle": {"type": "int", "default": 3, "min": 2, "max": 5},
               "max_steps": {"type": "int", "default": 10, "min": 1, "max": 40}},
    "agent_state": {"score": {"type": "int", "init": 0, "min": 0, "max": 40}},
    "actions": {"bell": [{"name": "ring", "chime": True}, {"name": "rest"}]},
    "step": [{"when": "rang[me] and phase(0) == 0", "set": {"score": "score[me] + 1"}}],
    "rewards": {"bell": [{"name": "on_time", "expr": "1.0 if rang[me] and phase(0) == 0 else 0.0"}]},
    "observe": {"bell": ["tick", "phase(1)", "rang[me]", "score[me]"]},
    "truncate": "t >= max_steps",
}

CHECK = '''
import numpy as np
from tests.compile.test_batch_differential import compare

from gymwright.compile import compile_spec, export_source
from gymwright.compile.batch_backend import generate_batch
from gymwright.spec import check_spec, load_spec
from gymwright.spec.reference import reference_markdown
from gymwright.verify.verifier import verify

SPEC = {spec!r}
spec = load_spec(SPEC)
cs, diags = check_spec(spec)
assert cs is not None, diags
assert cs.section("clock") == 3 and cs.builtin_values["period"] == 3
assert [v.name for v in cs.state] == ["tick"] and [v.name for v in cs.agent_state] == ["rang", "score"]

env = compile_spec(SPEC).parallel_env()
obs, _ = env.reset(seed=0)
assert env.clock_tick() == 0 and obs["bell_0"].tolist() == [0, 1, 0, 0]
for t in range(1, 7):
    obs, rewards, *_ = env.step({{"bell_0": 0, "bell_1": 1}})  # bell_0 rings, bell_1 rests
    on_time = t % 3 == 0
    assert env.clock_tick() == t % 3 and rewards == {{"bell_0": float(on_time), "bell_1": 0.0}}, (t, rewards)
    assert obs["bell_0"].tolist() == [t % 3, (t + 1) % 3, 1, t // 3], (t, obs)
assert "tick=0" in env.render_text()

for params in ({{}}, {{"max_steps": 7}}):
    compare(SPEC, params, size=3, seed=5, steps=25, policy_seed=1)  # the batch backend replays the Python one
assert "def clock_phase" in export_source(SPEC) and "def clock_phase" in generate_batch(cs)

report = verify(SPEC)
assert not [d for d in report.diagnostics if d.severity.value == "error"], report.diagnostics
assert "### `Clock`" in reference_markdown() and "phase(k)" in reference_markdown()

ruled = dict(SPEC, step=[{{"set": {{"tick": "0"}}}}])
assert any(d.path == "step[0].set.tick" and "maintained by a mechanics module" in d.message
           for d in check_spec(load_spec(ruled))[1])
unclocked = {{k: v for k, v in SPEC.items() if k not in ("clock", "step", "rewards", "observe")}}
unclocked["observe"] = {{"bell": ["t"]}}
assert [(d.path, d.message) for d in check_spec(load_spec(unclocked))[1] if d.severity.value == "error"] == [
    ("actions.bell[0].chime", "`chime` needs a `clock:` section")]
print("ok")
'''


def test_a_new_mechanics_module_is_one_folder_and_one_registry_entry(tmp_path: Path) -> None:
    """Follow the recipe in a copy of the package: write `mechanics/clock/`, add its entry to the
    registry, touch nothing else; a spec with a `clock:` then checks, generates with both backends
    (which replay each other exactly), runs, verifies, and shows in the language reference."""
    package = tmp_path / "src" / "gymwright"
    shutil.copytree(ROOT / "src" / "gymwright", package, ignore=shutil.ignore_patterns("__pycache__"))
    folder = package / "mechanics" / "clock"
    folder.mkdir()
    for name, text in TOY.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip())
    registry = package / "mechanics" / "registry.py"
    text = registry.read_text()
    assert text.count("(GRID, CHANNEL)") == 1
    registry.write_text(text.replace("from gymwright.mechanics.grid.module import GRID\n",
                                     "from gymwright.mechanics.grid.module import GRID\n"
                                     "from gymwright.mechanics.clock.module import CLOCK\n")
                        .replace("(GRID, CHANNEL)", "(GRID, CHANNEL, CLOCK)"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "src"), str(ROOT)])}
    out = subprocess.run([sys.executable, "-c", CHECK.format(spec=SPEC)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stdout[-3000:] + out.stderr[-6000:]
