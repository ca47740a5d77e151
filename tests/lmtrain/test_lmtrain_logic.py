"""train-lm's pure logic: GRPO groups and advantages, the config's checks, the run folder, the
opponents and the learner's agent on real text games (no model needed)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from gymwright.errors import GymwrightError
from gymwright.lmtrain import groups
from gymwright.lmtrain.config import EVAL_SEED_OFFSET, LMTrainConfig
from gymwright.lmtrain.opponents import RandomOpponent, ScriptedOpponent, make_opponent
from gymwright.lmtrain.rollout import learner_agent
from gymwright.lmtrain.run import RunFolder
from gymwright.textgame import TextGame


def test_the_seed_travels_in_the_prompt_and_back() -> None:
    assert groups.seed_of(groups.seed_prompt(42)) == 42
    with pytest.raises(GymwrightError, match="not a train-lm episode prompt"):
        groups.seed_of([{"role": "user", "content": "hello"}])


def test_groups_are_consecutive_runs_of_one_seed() -> None:
    assert groups.groups([3, 3, 3, 7, 7, 7], 3) == [[3, 3, 3], [7, 7, 7]]
    with pytest.raises(GymwrightError, match="mixes seeds"):
        groups.groups([3, 3, 7, 7], 4)
    with pytest.raises(GymwrightError, match="do not split"):
        groups.groups([3, 3, 3], 2)


def test_advantages_are_normalized_within_each_group() -> None:
    adv = groups.advantages([1.0, 3.0, 5.0, 5.0], 2)
    sd = math.sqrt(2.0)  # the sample std of (1, 3): Bessel-corrected, as TRL's nanstd
    assert adv[:2] == pytest.approx([-1 / (sd + 1e-4), 1 / (sd + 1e-4)])
    assert adv[2:] == [0.0, 0.0]  # a group that scored the same everywhere carries no signal
    assert groups.dead_share([1.0, 3.0, 5.0, 5.0], 2) == 0.5


def test_config_checks_name_the_setting() -> None:
    with pytest.raises(GymwrightError, match="at least 2") as e:
        LMTrainConfig("stag_hunt", episodes_per_step=1).check()
    assert e.value.path == "episodes_per_step"
    with pytest.raises(GymwrightError, match="only hf: models"):
        LMTrainConfig("stag_hunt", model="openai:gpt-4o").check()
    with pytest.raises(GymwrightError, match="temperature"):
        LMTrainConfig("stag_hunt", temperature=0.0).check()
    config = LMTrainConfig("stag_hunt", seed=5)
    config.check()
    assert config.train_seed(3) == 8 and config.eval_seed == 5 + EVAL_SEED_OFFSET


def test_run_folder_writes_rows_and_refuses_a_second_run(tmp_path: Path) -> None:
    run = RunFolder(tmp_path / "run")
    run.start({"spec": "stag_hunt"})
    run.log({"step": 1, "loss": float("nan"), "valid_rate": 0.5})
    run.finish({"steps": 1})
    assert run.rows() == [{"step": 1, "loss": None, "valid_rate": 0.5}]
    assert json.loads((tmp_path / "run" / "config.json").read_text()) == {"spec": "stag_hunt"}
    assert run.result() == {"steps": 1}
    with pytest.raises(GymwrightError, match="already holds a train-lm run"):
        RunFolder(tmp_path / "run").start({})


def test_opponents_reply_with_legal_action_names() -> None:
    game = TextGame("stag_hunt", {"rounds": 2})
    game.reset(seed=3)
    asks = [(game, "hunter_1")]
    assert ScriptedOpponent("always_hare").replies(asks) == ["hare"]
    draws = RandomOpponent(0).replies(asks)
    assert draws == RandomOpponent(0).replies(asks) and draws[0] in ("stag", "hare")  # seeded by game and turn
    _, _, _, _, infos = game.step({"hunter_0": "stag", "hunter_1": ScriptedOpponent("always_stag").replies(asks)[0]})
    assert infos["hunter_1"]["text"]["valid"] and game.returns["hunter_0"] == 4.0


def test_unknown_opponents_and_baselines_are_refused() -> None:
    game = TextGame("stag_hunt")
    with pytest.raises(GymwrightError, match="no scripted baseline `nope`") as e:
        ScriptedOpponent("nope").check(game)
    assert "always_stag" in e.value.hint
    with pytest.raises(GymwrightError, match="unknown opponent"):
        make_opponent("nobody", None, max_new_tokens=4)  # type: ignore[arg-type]


def test_the_learner_is_the_roles_first_agent_or_the_named_one() -> None:
    game = TextGame("stag_hunt")
    assert learner_agent(game, "hunter") == "hunter_0"
    assert learner_agent(game, "hunter_1") == "hunter_1"
    assert learner_agent(game, "") == "hunter_0"
    with pytest.raises(GymwrightError, match="no role or agent 'wolf'") as e:
        learner_agent(game, "wolf")
    assert "hunter" in e.value.hint


def test_train_lm_refuses_a_model_it_cannot_train_before_loading_anything(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gymwright.cli import app

    result = CliRunner().invoke(app, ["train-lm", "stag_hunt", "--model", "openai:gpt-4o", "-o", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert "only hf: models are trained here" in result.output
    assert not (tmp_path / "r").exists()
