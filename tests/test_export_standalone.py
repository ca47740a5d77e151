"""Every library spec exports to a module that runs with gymwright blocked and passes
PettingZoo's parallel API test (issue 15: the CLI says "It needs only numpy, gymnasium and
pettingzoo", and that must be true of every export, MAPF's solved layouts included)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from no_gymwright import BLOCK_GYMWRIGHT
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.compile import compile_spec
from gymwright.spec.loader import library_names

BLOCKED = BLOCK_GYMWRIGHT + textwrap.dedent("""
    import numpy as np
    from pettingzoo.test import parallel_api_test
    from env import env, parallel_env

    parallel_api_test(parallel_env(), num_cycles=50)
    env().reset(seed=1)
    par = parallel_env()
    obs, _ = par.reset(seed=7)
    np.save("obs.npy", np.concatenate([np.ravel(obs[a]) for a in par.possible_agents]))
    assert not [m for m in sys.modules if m.split(".")[0] == "gymwright"]
    print("STANDALONE OK")
""")


@pytest.mark.parametrize("name", library_names())
def test_every_library_export_runs_without_gymwright(tmp_path: Path, name: str) -> None:
    result = CliRunner().invoke(app, ["export", name, "-o", str(tmp_path / "env.py")])
    assert result.exit_code == 0, result.output
    assert "It needs only numpy, gymnasium and pettingzoo (not gymwright)." in result.stdout
    proc = subprocess.run([sys.executable, "-I", "-c", BLOCKED], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "STANDALONE OK" in proc.stdout
    # the export starts where gymwright's own env starts (MAPF: the same solved layout)
    env = compile_spec(name).parallel_env()
    obs, _ = env.reset(seed=7)
    mine = np.concatenate([np.ravel(obs[a]) for a in env.possible_agents])
    np.testing.assert_array_equal(np.load(tmp_path / "obs.npy"), mine)


def test_a_mapf_export_names_the_pools_it_carries_at_other_params(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["export", "mapf_frozenlake", "-o", str(tmp_path / "env.py")])
    assert "It carries the solved layouts of these params" in result.stdout
    script = BLOCK_GYMWRIGHT + textwrap.dedent("""
        from env import parallel_env
        try:
            parallel_env(wait_ratio=0.5).reset(seed=0)
        except ImportError as e:
            print(e)
    """)
    proc = subprocess.run([sys.executable, "-I", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert ("no solved layouts for 4x4 agents=2 holes=0.2 wait=0.5 pool=1000 in this module "
            "(it carries: 4x4 agents=2 holes=0.2 wait=0.25 pool=1000)") in proc.stdout, proc.stdout + proc.stderr
