"""Every library spec exports to a module that runs with gymwright blocked and passes
PettingZoo's parallel API test (issue 15: the CLI says "It needs only numpy, gymnasium and
pettingzoo", and that must be true of every export, MAPF's solved layouts included)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.compile import compile_spec
from gymwright.spec.loader import library_names
from tests.support.no_gymwright import BLOCK_GYMWRIGHT

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


# PettingZoo's max_cycles_test assumes that random play never ends an episode before the cap (4
# steps) and that every agent acts in every cycle: true of these round-based specs (at these
# params: commons_harvest without a collapse), not of the event-ended or turn-based ones, where
# the script checks the same cap against the uncapped env itself (cap_holds)
PETTINGZOO_MAX_CYCLES = {"commons_harvest": {"collapse_level": 0.0}, "iterated_prisoners_dilemma": {},
                         "public_goods": {}, "sealed_bid_auction": {}, "stag_hunt": {}}

CONVENTIONS = BLOCK_GYMWRIGHT + textwrap.dedent("""
    import contextlib
    import functools
    import io
    import json
    import types

    import numpy as np
    from pettingzoo.test import api_test, max_cycles_test, parallel_api_test, render_test
    from env import env, parallel_env

    case = json.loads(sys.argv[1])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        render_test(env)  # every render mode of the metadata, `human` included
        human, ansi = env(render_mode="human"), env(render_mode="ansi")
        human.reset(seed=3)
        ansi.reset(seed=3)
        before = printed.tell()
        assert human.render() is None
    assert printed.getvalue()[before:] == ansi.render() + "\\n", "human mode prints the text rendering"

    # the PettingZoo classic convention: observations {"observation", "action_mask"}
    parallel_api_test(parallel_env(action_mask_in_obs=True), num_cycles=50)
    api_test(env(action_mask_in_obs=True), num_cycles=20)
    obs, infos = parallel_env(action_mask_in_obs=True).reset(seed=5)
    plain, _ = parallel_env().reset(seed=5)
    for a, o in obs.items():
        np.testing.assert_array_equal(o["observation"], plain[a])
        np.testing.assert_array_equal(o["action_mask"], infos[a]["action_mask"])

    def play(e, seed, actions=None):
        \"\"\"One seeded episode of `e` with random legal actions (or replaying `actions`): (actions, steps).\"\"\"
        rng = np.random.default_rng(seed)
        _, infos = e.reset(seed=seed)
        played, steps = [], []
        while e.agents:
            acts = actions[len(played)] if actions else {
                a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"])))
                for a in e.agents if infos[a]["action_mask"].any()}
            step = e.step(acts)
            infos = step[4]
            played.append(acts)
            steps.append(step)
        return played, steps

    def same(a, b):
        return all(np.array_equal(a[k][x], b[k][x]) for k in range(4) for x in a[k]) and a[2] == b[2]

    def cap_holds(episodes=12):
        \"\"\"With max_cycles=k an episode is the uncapped one cut at step k, every agent truncated
        there (k: one step short of the uncapped length); its AEC form gives each agent at most k
        actions (k in all when turns alternate).\"\"\"
        cut = 0
        for ep in range(episodes):
            actions, free = play(parallel_env(), ep)
            k = max(1, len(free) - 1)
            _, capped = play(parallel_env(max_cycles=k), ep, actions)
            assert len(capped) == min(k, len(free)), (ep, len(free), k, len(capped))
            assert all(same(a, b) for a, b in zip(capped[:-1], free))
            last, twin = capped[-1], free[len(capped) - 1]
            assert last[1] == twin[1] and last[2] == twin[2] and all(np.array_equal(last[0][x], twin[0][x]) for x in twin[0])
            assert all(last[3].values()) or all(last[2].values()), (ep, k)
            cut += len(capped) < len(free)
            aec, rng = env(max_cycles=4), np.random.default_rng(ep)
            aec.reset(seed=ep)
            acted = dict.fromkeys(aec.possible_agents, 0)
            for a in aec.agent_iter():
                _, _, te, tr, info = aec.last()
                mask = info["action_mask"]
                if te or tr or not mask.any():
                    aec.step(None)
                    continue
                acted[a] += 1
                aec.step(int(rng.choice(np.flatnonzero(mask))))
            assert max(acted.values()) <= 4 and (not case["turns"] or sum(acted.values()) <= 4), acted
        assert cut, "no episode was long enough for the cap to cut it"

    cap_holds()
    if case["pettingzoo_params"] is not None:
        bound = {f: functools.partial(globals()[f], **case["pettingzoo_params"]) for f in ("env", "parallel_env")}
        max_cycles_test(types.SimpleNamespace(**bound))
    print("CONVENTIONS OK")
""")


@pytest.mark.parametrize("name", library_names())
def test_every_library_export_passes_pettingzoo_render_max_cycles_and_mask_conventions(tmp_path: Path, name: str) -> None:
    """render_test (every mode, human included), PettingZoo's API tests with masks in the
    observations, and the max_cycles cap (PettingZoo's own max_cycles_test where its premise
    holds), on the export, with gymwright blocked."""
    result = CliRunner().invoke(app, ["export", name, "-o", str(tmp_path / "env.py")])
    assert result.exit_code == 0, result.output
    case = {"turns": compile_spec(name).checked.active is not None, "pettingzoo_params": PETTINGZOO_MAX_CYCLES.get(name)}
    proc = subprocess.run([sys.executable, "-I", "-c", CONVENTIONS, json.dumps(case)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CONVENTIONS OK" in proc.stdout


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
        for params in ({"wait_ratio": 0.5}, {"layout_seed": 3}):
            try:
                parallel_env(**params).reset(seed=0)
            except ImportError as e:
                print(e)
    """)
    proc = subprocess.run([sys.executable, "-I", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert ("no solved layouts for 4x4 agents=2 holes=0.2 wait=0.5 pool=1000 in this module "
            "(it carries: 4x4 agents=2 holes=0.2 wait=0.25 pool=1000)") in proc.stdout, proc.stdout + proc.stderr
    assert "no solved layouts for 4x4 agents=2 holes=0.2 wait=0.25 pool=1000 seed=3 in this module" in proc.stdout


def test_a_mapf_export_of_another_layout_seed_carries_that_family(tmp_path: Path) -> None:
    """An export made with `layout_seed` carries that family's pool and starts where gymwright's env
    at the same params starts."""
    params = ["-p", "layout_seed=3", "-p", "layout_pool=12"]
    result = CliRunner().invoke(app, ["export", "mapf_frozenlake", "-o", str(tmp_path / "env.py"), *params])
    assert result.exit_code == 0, result.output
    script = BLOCK_GYMWRIGHT + textwrap.dedent("""
        import numpy as np
        from env import parallel_env
        env = parallel_env()
        env.reset(seed=4)
        print(env.unwrapped.solved_config()[-1], env.unwrapped.v.pos.tolist(), int(env.unwrapped.v.tiles.sum()))
    """)
    proc = subprocess.run([sys.executable, "-I", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    mine = compile_spec("mapf_frozenlake", {"layout_seed": 3, "layout_pool": 12}).parallel_env()
    mine.reset(seed=4)
    assert proc.stdout.split()[0] == "3"
    assert proc.stdout.strip() == f"3 {mine.unwrapped.v.pos.tolist()} {int(mine.unwrapped.v.tiles.sum())}"
