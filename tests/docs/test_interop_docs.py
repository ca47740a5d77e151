"""Every recipe of docs/interop.md runs as written (the code block after each
`<!-- recipe: NAME -->` line) and does what the page says of it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from pettingzoo import AECEnv, ParallelEnv
from typer.testing import CliRunner

from tests.support.paths import ROOT

DOC = ROOT / "docs" / "interop.md"


def recipes() -> dict[str, str]:
    """name -> source of every recipe block of the page."""
    found = re.findall(r"^<!-- recipe: ([\w-]+) -->\n```python\n(.*?)^```$", DOC.read_text(), flags=re.M | re.S)
    return dict(found)


def run(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Execute recipe `name` in `tmp_path`; its globals."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"recipe_{name}"}
    exec(compile(recipes()[name], f"{DOC.name}:{name}", "exec"), namespace)  # noqa: S102 - our own docs
    return namespace


def test_the_page_has_the_recipes_this_file_runs():
    assert set(recipes()) == {"make", "sb3", "sb3-exported", "maskable", "rllib", "cleanrl", "torchrl"}


def test_make_recipe(tmp_path, monkeypatch, capsys):
    ns = run("make", tmp_path, monkeypatch)
    assert isinstance(ns["env"], ParallelEnv) and ns["env"].max_cycles == 20
    assert isinstance(ns["aec"], AECEnv) and ns["aec"].render_mode == "human"


def test_sb3_recipe(tmp_path, monkeypatch):
    pytest.importorskip("stable_baselines3")
    ns = run("sb3", tmp_path, monkeypatch)
    assert ns["model"].num_timesteps >= 2048
    assert ns["venv"].illegal_actions == 0  # every stag-hunt action is legal


def test_sb3_recipe_on_an_exported_module(tmp_path, monkeypatch):
    pytest.importorskip("stable_baselines3")
    from gymwright.cli import app

    result = CliRunner().invoke(app, ["export", "stag_hunt", "-o", str(tmp_path / "stag_hunt_env.py")])
    assert result.exit_code == 0, result.output
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        ns = run("sb3-exported", tmp_path, monkeypatch)
    finally:
        sys.modules.pop("stag_hunt_env", None)
    assert ns["model"].num_timesteps >= 2048
    assert ns["parallel_env"].__module__ == "stag_hunt_env"


def test_maskable_ppo_recipe_makes_no_illegal_action(tmp_path, monkeypatch):
    pytest.importorskip("sb3_contrib")
    ns = run("maskable", tmp_path, monkeypatch)
    assert ns["model"].num_timesteps >= 3072
    assert ns["venv"].illegal_actions == 0


def test_cleanrl_recipe_trains_with_masks(tmp_path, monkeypatch):
    pytest.importorskip("supersuit")
    ns = run("cleanrl", tmp_path, monkeypatch)
    assert ns["illegal"] == 0
    assert (~ns["mask_b"]).any()  # some actions were illegal: the masks were in play
    assert len(ns["returns"]) > 0 and np.isfinite(ns["loss"].item())


@pytest.mark.slow  # over 5 s; the suite's time budget (CI runs it with -m slow)
def test_torchrl_recipe_keeps_to_legal_actions(tmp_path, monkeypatch):
    pytest.importorskip("torchrl")
    ns = run("torchrl", tmp_path, monkeypatch)
    rollout = ns["rollout"]
    mask, action = rollout["walker", "action_mask"], rollout["walker", "action"]
    assert mask.shape[:2] == (30, 2) and not mask.all()  # some actions were illegal
    assert mask.gather(-1, action.unsqueeze(-1)).all()  # none was taken


@pytest.mark.slow
def test_torchrl_fails_on_the_agent_without_a_legal_action_as_the_page_says():
    pytest.importorskip("torchrl")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    import gymwright

    env = PettingZooWrapper(env=gymwright.make("cake_negotiation"), use_mask=True, categorical_actions=True, seed=0)
    with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
        env.rollout(4)


@pytest.mark.slow
def test_rllib_recipe(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    ns = run("rllib", tmp_path, monkeypatch)
    assert (tmp_path / "runs" / "rllib_cake" / "rllib_checkpoint").is_dir()
    assert set(ns["result"]["final_return"]) <= {"bargainer"} and ns["result"]["env_steps"] >= 512
