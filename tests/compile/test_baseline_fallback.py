"""A scripted baseline whose rules all miss, or that leaves a role out, plays a random legal
action on both backends when given a generator (issue 42, point 5): never None, never -1 for an
agent with a legal action, and the same draw as `fill_random_legal`."""

from __future__ import annotations

from typing import Any

import numpy as np
import yaml

from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch

RPSLS: dict[str, Any] = yaml.safe_load("""
gymwright: 1
name: rpsls_repeated
description: Two players repeatedly play rock-paper-scissors-lizard-spock.
params:
  rounds: {default: 6, min: 1, max: 100, type: int, doc: rounds}
consts:
  beats:
    value: [[0,-1,1,1,-1],[1,0,-1,-1,1],[-1,1,0,1,-1],[-1,1,-1,0,1],[1,-1,1,-1,0]]
agents:
  player: {count: 2}
  judge: {count: 1}
agent_state:
  last: {type: int, init: -1, min: -1, max: 4}
actions:
  player:
    - {name: play, args: {m: "[0, 1, 2, 3, 4]"}}
  judge:
    - {name: watch}
    - {name: nod}
step:
  - set: {last: "where(me < 2, m[me], -1)"}
terminate: "t >= rounds"
rewards:
  player:
    - {name: win, expr: "1.0 * beats[m[me], m[1 - me]]"}
observe:
  player: ["last[1 - me]"]
  judge: ["t"]
baselines:
  beat_last:
    player:
      - {when: "last[1 - me] == 5", action: "play(m=0)", doc: "never holds, so every rule misses"}
  rock:
    player:
      - {action: "play(m=0)"}
""")


def test_a_baseline_whose_rules_all_miss_plays_random_legal_on_the_python_backend() -> None:
    env = compile_spec(RPSLS).parallel_env()
    seen = set()
    for seed in range(4):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while env.agents:
            acts = {a: env.scripted_action("beat_last", a, rng=rng) for a in env.agents}
            assert all(isinstance(x, int) for x in acts.values()), acts
            seen |= {x for a, x in acts.items() if a.startswith("player")}
            judge = env.scripted_action("rock", "judge_0", rng=rng)  # the role rock leaves out
            assert judge in (0, 1)
            env.step(acts)
    assert len(seen) > 1  # random, not a fixed fallback
    env.reset(seed=0)
    assert env.scripted_action("beat_last", "player_0") is None  # without a generator: the caller draws


def test_a_baseline_whose_rules_all_miss_plays_random_legal_on_the_batch_backend() -> None:
    benv = compile_batch(RPSLS, batch_size=5)
    benv.reset(seed=0)
    rng = np.random.default_rng(3)
    for _ in range(4):
        acts = benv.scripted_actions("beat_last", rng=rng)
        assert (acts >= 0).all() and (np.take_along_axis(benv.masks, acts[..., None], 2) == 1).all()
        benv.step(acts)
    rock = benv.scripted_actions("rock", rng=np.random.default_rng(0))
    assert (rock[:, :2] == 0).all() and np.isin(rock[:, 2], (0, 1)).all()
    assert (benv.scripted_actions("beat_last") == -1).all()  # without a generator: -1, the caller draws


def test_both_backends_draw_the_same_fallback_given_the_same_generator() -> None:
    benv = compile_batch(RPSLS, batch_size=1)
    env = compile_spec(RPSLS).parallel_env()
    benv.reset(seed=1)
    env.reset(seed=1)
    rng_b, rng_p = np.random.default_rng(7), np.random.default_rng(7)
    while env.agents:
        acts = benv.scripted_actions("beat_last", rng=rng_b)
        one = [env.scripted_action("beat_last", a, rng=rng_p) for a in env.possible_agents]
        assert one == acts[0].tolist()
        env.step(dict(zip(env.possible_agents, one, strict=True)))
        benv.step(acts)
