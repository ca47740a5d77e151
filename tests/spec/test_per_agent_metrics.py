"""Per-agent metrics (issue 42, point 8): `per_agent: true` reports one value per agent,
`NAME.AGENT_ID`, through both backends, probes, evaluation and the card."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch
from gymwright.errors import GymwrightError
from gymwright.spec import load_spec
from gymwright.verify.verifier import verify

SPEC = """
gymwright: 1
name: chips_game
params: {rounds: {default: 3, min: 1, max: 10, type: int}}
agents: {player: {count: 2}}
agent_state: {chips: {type: int, init: "2 + me", min: 0, max: 40}}
actions: {player: [{name: bet}, {name: fold}]}
step:
  - {set: {chips: "chips[me] + 2 * bet[me] - fold[me] if chips[me] > 0 else chips[me]"}}
rewards: {player: [{name: r, expr: "chips[me] / 10"}]}
metrics:
  chips: {expr: "chips[me]", per_agent: true}
  bets: {expr: "count(bet)", reduce: sum, per_agent: false}
terminate: "t >= rounds"
observe: {player: ["chips[me]"]}
probes:
  - name: each player's chips are reported apart
    actions: [{player_0: bet, player_1: fold}]
    expect: ["metric.chips.player_0 == 4", "metric.chips.player_1 == 2", "metric.bets == 1"]
"""


def spec(text: str = SPEC):
    return load_spec(yaml.safe_load(text))


def test_the_python_backend_reports_one_metric_per_agent() -> None:
    env = compile_spec(spec()).parallel_env()
    env.reset(seed=0)
    env.step({"player_0": 0, "player_1": 1})
    assert env.episode_metrics() == {"chips.player_0": 4.0, "chips.player_1": 2.0, "bets": 1.0}


def test_the_batch_backend_reports_the_same_metrics_at_the_episode_end() -> None:
    benv = compile_batch(spec(), {"rounds": 1}, batch_size=2)
    benv.reset(seed=0)
    _, _, term, _, infos = benv.step(np.array([[0, 1], [1, 0]]))
    assert term.all()
    m = infos["metrics"]
    assert sorted(m) == ["bets", "chips.player_0", "chips.player_1"]
    np.testing.assert_array_equal(m["chips.player_0"], [4, 1])
    np.testing.assert_array_equal(m["chips.player_1"], [2, 5])


def test_probes_read_a_per_agent_metric_and_evaluation_plays_it() -> None:
    assert verify(spec(), episodes=3).passed
    bad = SPEC.replace("metric.chips.player_1 == 2", "metric.chips.player_1 == 7")
    report = verify(spec(bad), episodes=3)
    assert not report.passed and "metric.chips.player_1 == 7" in report.to_prompt()


def test_evaluation_plays_a_per_agent_metric() -> None:
    pytest.importorskip("torch")
    from gymwright.evaluate.scorecard import task_metric_of
    from gymwright.train.baselines import random_legal_policy
    from gymwright.train.episodes import play_episodes

    result = play_episodes(spec(), {}, random_legal_policy(0), episodes=4)
    assert {"chips.player_0", "chips.player_1", "bets"} <= set(result.episode_metrics)
    assert task_metric_of(spec()) == "bets"  # the first metric reported as one number


def test_the_card_lists_each_agent_metric() -> None:
    source = compile_spec(spec()).source
    assert "chips.player_0" in source and "chips.player_1" in source


@pytest.mark.parametrize("change, message", [
    (("per_agent: true}", "per_agent: true, kind: task}"), "a per-agent metric is a `stat`"),
    (('"chips[me]", per_agent', '"chips", per_agent'), "must be one number per agent"),
    (('"count(bet)", reduce: sum, per_agent: false', '"chips[me]", reduce: sum'), "`me` is only defined"),
])
def test_per_agent_metrics_refuse_what_they_cannot_report(change: tuple[str, str], message: str) -> None:
    with pytest.raises(GymwrightError, match=message):
        compile_spec(spec(SPEC.replace(*change)))


def test_a_frozen_per_agent_metric_is_one_warning_not_one_per_agent() -> None:
    """Review of issue 42: a per-agent metric that never varies gave one identical warning per
    agent at the same path; now one warning per metric, naming each agent's value."""
    frozen = SPEC.replace('chips: {expr: "chips[me]", per_agent: true}',
                          'chips: {expr: "chips[me]", per_agent: true}\n  seat: {expr: "me", per_agent: true}')
    report = verify(spec(frozen), episodes=6)
    said = [d for d in report.diagnostics if d.path == "metrics.seat"]
    assert len(said) == 1, [d.message for d in said]
    assert "per-agent metric `seat` never varied for every agent" in said[0].message
    assert "player_0 = 0" in said[0].message and "player_1 = 1" in said[0].message
    assert not [d for d in report.diagnostics if d.path == "metrics.chips"]
