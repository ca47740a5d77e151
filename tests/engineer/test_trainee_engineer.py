"""The trainee as its own engineer (`gymwright.engineer.trainee`): which model answers the engineer,
the errors for a trainee model without a trainee, and the comparison's shared budget
(benchmarks/trainee_engineer.py). No model is loaded here; tests/curriculum/test_trainee_engineer_slow.py
runs the whole comparison."""

from __future__ import annotations

from types import ModuleType

import pytest
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.curriculum.lmcurriculum import chain_key, start_for
from gymwright.curriculum.lmstage import PRESETS, plan_updates, preset
from gymwright.engineer import DomainRandomization, FixedEngineer, HeuristicEngineer, LLMEngineer
from gymwright.engineer.mixture import Bucket, Mixture
from gymwright.engineer.registry import make_engineer
from gymwright.engineer.trainee import TraineeModels, TraineeProvider
from gymwright.errors import GymwrightError
from tests.support.benchmark_module import benchmark_module


def bench() -> ModuleType:
    return benchmark_module("trainee_engineer")


def provider(engineer: object) -> TraineeProvider:
    assert isinstance(engineer, LLMEngineer)
    p = engineer.llm.provider
    assert isinstance(p, TraineeProvider)
    return p


def test_trainee_answers_with_its_current_checkpoint_and_trainee_base_with_its_base() -> None:
    models = TraineeModels("hf:smollm2-135m")
    current = make_engineer("llm", "trainee", trainee=models)
    base = make_engineer("llm", "trainee-base", trainee=models)
    assert (current.name, base.name) == ("llm-trainee", "llm-trainee-base")
    assert provider(current).model == provider(base).model == "hf:smollm2-135m"  # before any stage: the same model
    models.move_to("hf:runs/x/stages/0-abc/run0-config/model")
    assert provider(current).model == "hf:runs/x/stages/0-abc/run0-config/model"
    assert provider(base).model == "hf:smollm2-135m"
    models.move_to("hf:runs/x/stages/1-def/run0-config/model")
    assert provider(current).model.startswith("hf:runs/x/stages/1-def")


def test_a_trainee_model_without_a_trainee_or_for_another_engineer_is_a_clear_error() -> None:
    with pytest.raises(GymwrightError) as e:
        make_engineer("llm", "trainee")
    assert e.value.path == "--model" and "no trainee is given" in e.value.message and "--trainee" in (e.value.hint or "")
    with pytest.raises(GymwrightError) as e:
        make_engineer("heuristic", "trainee-base", trainee=TraineeModels("hf:smollm2-135m"))
    assert "answers the llm engineer" in e.value.message
    with pytest.raises(GymwrightError) as e:
        TraineeModels("openai:gpt-4o-mini")
    assert e.value.path == "--trainee"


def test_evolve_refuses_model_trainee_without_a_trainee_before_training() -> None:
    result = CliRunner().invoke(app, ["evolve", "mapf_frozenlake", "--engineer", "llm", "--model", "trainee"])
    assert result.exit_code != 0
    assert "no trainee is given" in result.output and "--trainee" in result.output


def test_a_stages_updates_go_to_its_buckets_by_share_and_add_up_to_the_budget() -> None:
    one = Mixture([Bucket({"size": 3}, 1.0, "size=3")])
    assert plan_updates(one, 5, seed=0) == [(0, 5)]
    many = Mixture([Bucket({"size": s}, 1.0, f"size={s}") for s in range(3, 10)])
    for steps in (1, 2, 7, 40):
        plan = plan_updates(many, steps, seed=3)
        assert sum(n for _, n in plan) == steps and plan == plan_updates(many, steps, seed=3)
        assert [i for i, _ in plan] == sorted(i for i, _ in plan)  # in the mixture's order
    skewed = Mixture([Bucket({"size": 3}, 0.9, "a"), Bucket({"size": 4}, 0.1, "b")])
    assert dict(plan_updates(skewed, 200, seed=0))[0] > 150


def test_arms_that_train_the_same_mixtures_share_a_stage_key_and_others_do_not() -> None:
    a = Mixture([Bucket({"size": 3}, 1.0, "size=3")])
    b = Mixture([Bucket({"size": 4}, 1.0, "size=4")])
    assert chain_key(0, [a]) == chain_key(0, [Mixture([Bucket({"size": 3}, 1.0, "size=3")])])
    assert chain_key(0, [a, a]) != chain_key(0, [a, b]) and chain_key(0, [a]) != chain_key(1, [a])


def test_every_arm_of_the_comparison_gets_one_trainee_setting_and_its_engineer() -> None:
    m = bench()
    args = m.parse(["--steps-per-stage", "3", "--episodes", "2", "--stages", "2"])
    opts = m.options(args)
    assert (opts.steps_per_stage, opts.held_out_episodes, opts.model) == (3, 2, "hf:smollm2-135m")
    goal = m.goal_of("toy")
    made = {arm: m.arm_engineer(arm, goal, TraineeModels(opts.model), 0, opts.engineer_tokens) for arm in m.ARMS}
    assert isinstance(made["fixed"], FixedEngineer) and isinstance(made["heuristic"], HeuristicEngineer)
    assert isinstance(made["dr"], DomainRandomization)
    assert provider(made["llm-base"]).which == "base" and provider(made["llm-trained"]).which == "current"
    starts = {arm: start_for(e, goal) for arm, e in made.items()}
    assert all(starts[a].same_as(starts["fixed"]) for a in ("heuristic", "llm-base", "llm-trained"))
    assert len(starts["dr"].buckets) == len(goal.space.levels()) > 1  # uniform over the space


def test_the_paper_scale_says_what_it_needs_and_refuses_a_machine_without_a_gpu() -> None:
    torch = pytest.importorskip("torch")
    m = bench()
    paper = preset("paper")
    assert paper.model == "hf:Qwen/Qwen3-4B" and paper.train_layers == 0 and paper.rules
    needs = m.paper_needs(5, 3, paper)
    assert "estimate, not measured" in needs and "80 GB" in needs and "GPU hours" in needs
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the refusal is for one without")
    with pytest.raises(SystemExit) as e:
        m.check_device(paper, 5, 3)
    assert m.NO_GPU in str(e.value) and "--scale toy" in str(e.value)
    assert set(PRESETS) == {"toy", "paper"}
