"""Scripted baselines (`baselines:`): checked with spec paths, compiled alike in both backends,
played through the same `play_episodes` as trained policies."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch
from gymwright.diagnostic import Severity
from gymwright.errors import GymwrightError, SpecError
from gymwright.spec import load_spec
from gymwright.spec.checker import check_spec
from gymwright.spec.loader import read_data
from gymwright.spec.reference import compact_reference, reference_markdown
from gymwright.train import baseline_names, play_episodes, random_legal_policy, scripted_policy
from gymwright.train.baselines import fill_random_legal

IPD = "iterated_prisoners_dilemma"


def with_baselines(name: str, baselines: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(read_data(name)[0])
    data["baselines"] = baselines
    return data


def findings(name: str, baselines: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(severity, path, message) of every diagnostic about `baselines`."""
    try:
        _, diags = check_spec(load_spec(with_baselines(name, baselines)))
    except SpecError as e:
        diags = e.diagnostics
    return [(d.severity.value, d.path, d.message) for d in diags if d.path.startswith("baselines")]


def one_error(name: str, baselines: dict[str, Any]) -> tuple[str, str]:
    (found,) = findings(name, baselines)
    assert found[0] == "error", found
    return found[1], found[2]


# --------------------------------------------------------------------------- loader and checker
def test_an_unknown_role_is_named_with_the_roles() -> None:
    assert one_error(IPD, {"b": {"plyer": [{"action": "defect"}]}}) == (
        "baselines.b.plyer", "baseline `b` scripts unknown role `plyer`")


def test_a_baseline_must_script_some_role() -> None:
    assert one_error(IPD, {"b": {}}) == ("baselines.b", "baseline `b` scripts no role")


def test_an_unknown_choice_is_named_with_the_role() -> None:
    assert one_error(IPD, {"tft": {"player": [{"action": "cooperate"}, {"action": "defct"}]}}) == (
        "baselines.tft.player[1].action", "role `player` has no choice `defct`")


def test_an_action_that_cannot_be_read() -> None:
    assert one_error(IPD, {"b": {"player": [{"action": "co operate"}]}}) == (
        "baselines.b.player[0].action", "cannot read action 'co operate'")


def test_arguments_must_match_the_choice() -> None:
    assert one_error(IPD, {"b": {"player": [{"action": "cooperate(x=1)"}]}}) == (
        "baselines.b.player[0].action", "`cooperate` takes arguments [], got ['x']")
    assert one_error("cake_negotiation", {"b": {"bargainer": [{"action": "propose"}]}}) == (
        "baselines.b.bargainer[0].action", "`propose` takes arguments ['share'], got []")


def test_an_argument_value_is_one_number_per_agent() -> None:
    path, message = one_error("cake_negotiation", {"b": {"bargainer": [{"action": "propose(share=[0.5, 0.2])"}]}})
    assert path == "baselines.b.bargainer[0].action"
    assert message == "argument `share` must be one number per agent, got float array of shape 2"


def test_a_constant_argument_off_the_grid_is_played_as_the_nearest_value_with_a_warning() -> None:
    (found,) = findings("cake_negotiation", {"b": {"bargainer": [{"action": "propose(share=0.53)"}]}})
    assert found == ("warning", "baselines.b.bargainer[0].action",
                     "0.53 is not a value of argument `share`: the baseline plays the nearest, 0.5")


def test_when_must_be_a_bool_per_agent() -> None:
    assert one_error(IPD, {"b": {"player": [{"when": "past[me]", "action": "defect"}]}}) == (
        "baselines.b.player[0].when", "`when` must be a bool per agent, got int array of shape 3")


def test_when_cannot_read_this_steps_actions_or_draw() -> None:
    path, message = one_error(IPD, {"b": {"player": [{"when": "defect[1 - me]", "action": "defect"}]}})
    assert path == "baselines.b.player[0].when" and message.startswith("`defect` is an action: a baseline decides before")
    path, message = one_error(IPD, {"b": {"player": [{"when": "bernoulli(0.5)", "action": "defect"}]}})
    assert (path, message) == ("baselines.b.player[0].when", "random function `bernoulli` is not allowed in baseline `b`")


def test_an_undefined_name_gets_did_you_mean() -> None:
    _, diags = check_spec(load_spec(with_baselines(IPD, {"b": {"player": [{"when": "pats[me, 0] == D", "action": "defect"}]}})))
    (d,) = [d for d in diags if d.severity is Severity.error]
    assert d.path == "baselines.b.player[0].when" and "`pats`" in d.message and "past" in d.hint


def test_schema_errors_name_the_path() -> None:
    assert one_error(IPD, {"b": {"player": []}}) == (
        "baselines.b.player", "List should have at least 1 item after validation, not 0")
    assert one_error(IPD, {"b": {"player": [{"when": "t > 0"}]}}) == (
        "baselines.b.player[0].action", "missing required key `action`")
    assert one_error(IPD, {"b": {"player": [{"action": "defect", "wen": "t > 0"}]}}) == (
        "baselines.b.player[0].wen", "unknown key `wen`")


def test_the_generated_reference_documents_the_section() -> None:
    ref = reference_markdown()
    assert "### `BaselineRule`" in ref and "| `baselines` |" in ref
    assert "first rule of its role whose `when` holds" in ref
    assert "BaselineRule: when?: expr, action: str" in compact_reference()


# --------------------------------------------------------------------------- both backends
@pytest.mark.parametrize(("spec", "name"), [
    (IPD, "tit_for_tat"),
    ("cake_negotiation", "even_split"),
    ("sealed_bid_auction", "equilibrium"),  # an argument computed per agent
    ("speaker_listener", "naming"),  # two roles
    ("predator_prey", "greedy_chase"),  # the prey are left out: random legal actions
])
def test_both_backends_choose_the_same_actions(spec: str, name: str) -> None:
    env = compile_spec(spec).parallel_env()
    benv = compile_batch(spec, batch_size=1)
    for seed in range(2):
        env.reset(seed=seed)
        benv.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(12):
            if not env.agents:
                break
            py = [env.scripted_action(name, a, with_rule=True) for a in env.possible_agents]
            acts, rules = benv.scripted_actions(name, with_rule=True)
            assert [-1 if a is None else a for a, _ in py] == acts[0].tolist()
            assert [k for _, k in py] == rules[0].tolist()
            acts = fill_random_legal(acts, benv.masks, rng)  # where no rule applies (the prey)
            env.step({agent: int(a) for agent, a in zip(env.possible_agents, acts[0], strict=True) if a >= 0})
            benv.step(acts)


def test_agents_with_no_legal_action_play_none() -> None:
    benv = compile_batch("cake_negotiation", batch_size=4)
    benv.reset(seed=0)
    acts, rules = benv.scripted_actions("even_split", with_rule=True)
    assert acts[:, 1].tolist() == [-1] * 4 and rules[:, 0].tolist() == [0] * 4  # bargainer_0 proposes
    env = compile_spec("cake_negotiation").parallel_env()
    env.reset(seed=0)
    assert env.scripted_action("even_split", "bargainer_1") is None
    with pytest.raises(ValueError, match="no scripted baseline 'nope'; this spec declares: even_split"):
        env.scripted_action("nope", "bargainer_0")


def test_where_no_rule_applies_the_policy_draws_a_random_legal_action() -> None:
    masks = np.array([[[1, 1, 0], [0, 0, 0], [0, 1, 1], [1, 0, 0]]])
    acts = np.array([[-1, -1, 2, -1]])
    filled = np.stack([fill_random_legal(acts, masks, np.random.default_rng(s))[0] for s in range(50)])
    assert set(filled[:, 0]) == {0, 1} and set(filled[:, 1]) == {-1}  # random legal; none legal
    assert set(filled[:, 2]) == {2} and set(filled[:, 3]) == {0}  # a rule's action is kept
    benv = compile_batch("predator_prey", batch_size=8)
    benv.reset(seed=0)
    policy = scripted_policy("greedy_chase")
    policy.bind(benv)
    acts = policy.act(None, benv.masks)
    prey = slice(benv.ROLES[1][1], benv.ROLES[1][1] + benv.ROLES[1][2])
    assert (benv.scripted_actions("greedy_chase")[:, prey] == -1).all()  # the prey are not scripted
    picked = np.take_along_axis(benv.masks[:, prey], acts[:, prey, None], 2)
    assert (picked == 1).all()  # ... and play legal actions


# --------------------------------------------------------------------------- evaluate
def test_always_defect_defects_every_round() -> None:
    res = play_episodes(IPD, {"rounds": 10}, scripted_policy("always_defect"), episodes=8)
    assert res.metrics["cooperation_rate"] == 0.0 and res.metrics["mutual_defection"] == 1.0
    assert res.returns == {"player": 10.0}


def test_tit_for_tat_against_itself_cooperates_throughout() -> None:
    benv = compile_batch(IPD, {"rounds": 10}, batch_size=4)
    benv.reset(seed=0)
    policy = scripted_policy("tit_for_tat")
    policy.bind(benv)
    for _ in range(10):
        acts = policy.act(None, benv.masks)
        assert (acts == 0).all()  # cooperate, every agent of every copy, every round
        benv.step(acts)
    res = play_episodes(IPD, {"rounds": 10}, scripted_policy("tit_for_tat"), episodes=8)
    assert res.metrics["mutual_cooperation"] == 1.0 and res.returns == {"player": 30.0}


def test_evaluate_gives_the_returns_computed_by_hand() -> None:
    # player_1 always defects; player_0 plays tit-for-tat: C then D. Over 5 rounds player_0 gets
    # S + 4P = 0 + 4 = 4 and player_1 T + 4P = 5 + 4 = 9: the role's mean return is 6.5.
    spec = with_baselines(IPD, {"tft_vs_defector": {"player": [
        {"when": "me == 1", "action": "defect"},
        {"when": "past[1 - me, memory - 1] == D", "action": "defect"},
        {"action": "cooperate"}]}})
    res = play_episodes(spec, {"rounds": 5}, scripted_policy("tft_vs_defector"), episodes=3)
    assert res.returns == {"player": 6.5} and res.ci95 == {"player": 0.0}
    assert res.episode_returns.tolist() == [[4.0, 9.0]] * 3
    assert res.metrics["cooperation_rate"] == pytest.approx(0.1)  # 1 of 10 moves
    cake = play_episodes("cake_negotiation", {}, scripted_policy("even_split"), episodes=3)
    assert cake.returns == {"bargainer": 0.5} and cake.length == 2.0 and cake.metrics["agreed"] == 1.0


def test_an_unknown_baseline_lists_the_specs_baselines() -> None:
    with pytest.raises(GymwrightError, match="no scripted baseline `nope`") as e:
        play_episodes(IPD, {}, scripted_policy("nope"), episodes=2)
    assert e.value.hint == "its baselines: tit_for_tat, always_defect, always_cooperate"
    with pytest.raises(GymwrightError) as e:
        play_episodes("commons_harvest", {}, scripted_policy("greedy"), episodes=2)
    assert "none (add a `baselines:` section" in e.value.hint
    with pytest.raises(GymwrightError, match="not bound"):
        scripted_policy("tit_for_tat").act(None, np.ones((1, 2, 2)))
    assert baseline_names(IPD) == ["tit_for_tat", "always_defect", "always_cooperate"]


def test_a_scorecard_reports_each_scripted_baseline() -> None:
    from gymwright.evaluate import assess

    card = assess(IPD, {"rounds": 4}, random_legal_policy(0), episodes=10, record_episodes=2)
    assert set(card.scripted) == {"tit_for_tat", "always_defect", "always_cooperate"}
    assert card.scripted["always_defect"].returns == {"player": 4.0}
    assert card.to_dict()["scripted"]["tit_for_tat"]["returns"] == {"player": 12.0}


def test_play_runs_a_scripted_baseline() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["play", "cake_negotiation", "--policy", "scripted:even_split", "-n", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert '"bargainer_0": 0.5' in result.output
    result = runner.invoke(app, ["play", "cake_negotiation", "--policy", "scripted:nope", "-n", "1"])
    assert result.exit_code == 1 and "its baselines: even_split, greedy_agreeable" in result.output
