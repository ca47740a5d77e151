"""Fixed-policy agents (NPCs, `TrainConfig.npc`, `--npc ROLE=PLAYER`): their actions are the fixed
policy's on every step and legal, they stay out of training, the log and the evaluation tell them
apart from the trained agents, on the batch backend (training, `play_episodes`) and the Python
backend (`gymwright play`), and bad input is an error naming the option and the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import yaml
from typer.testing import CliRunner

from gymwright.cli import app
from gymwright.compile import compile_spec
from gymwright.errors import GymwrightError
from gymwright.evaluate.play import act_parallel
from gymwright.train import (
    Team,
    TrainConfig,
    load_policy,
    play_episodes,
    ppo,
    random_legal_policy,
    train,
)
from gymwright.train import checkpoint as ck
from gymwright.train.npc import check_npc, team_from
from gymwright.train.rollout import make_env

torch.set_num_threads(1)
runner = CliRunner()
RESPONDER = {"bargainer[1]": "even_split"}  # bargainer_0 always opens the cake game


def small(tmp_path: Path, name: str = "run", **kw: Any) -> TrainConfig:
    base: dict[str, Any] = dict(spec="cake_negotiation", num_envs=32, rollout_len=8, total_steps=32 * 8 * 3,
                                checkpoint_every=1, out=tmp_path / name)
    return TrainConfig(**{**base, **kw})


def spy_on_steps(monkeypatch: pytest.MonkeyPatch, baseline: str) -> list[tuple[np.ndarray, ...]]:
    """Record, for every step the trainer takes: its actions, the masks, and what `baseline` plays there."""
    seen: list[tuple[np.ndarray, ...]] = []

    def spying_make_env(*args: Any, **kw: Any) -> Any:
        benv = make_env(*args, **kw)
        step = benv.step

        def spy(actions: np.ndarray) -> Any:
            seen.append((np.array(actions), benv.masks.copy(), benv.scripted_actions(baseline)))
            return step(actions)

        benv.step = spy
        return benv

    monkeypatch.setattr(ppo, "make_env", spying_make_env)
    return seen


# --------------------------------------------------------------------------- training, batch backend
def test_an_npc_plays_its_baseline_on_every_step_and_is_logged_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy_on_steps(monkeypatch, "even_split")
    result = train(small(tmp_path, npc=RESPONDER))
    assert len(seen) == 3 * 8
    npc_moves = 0
    for actions, masks, scripted in seen:
        acting = masks[:, 1].any(-1)
        assert np.array_equal(actions[acting, 1], scripted[acting, 1])  # even_split has a rule for every turn
        assert (actions[~masks.any(-1)] == -1).all()
        chosen = np.take_along_axis(masks, np.maximum(actions, 0)[..., None], -1)[..., 0]
        assert (chosen[masks.any(-1)] == 1).all()  # every action legal, trained or fixed
        npc_moves += int(acting.sum())
    assert npc_moves > 0
    assert result.npc == {"bargainer_1": "scripted:even_split"}
    rows = [json.loads(line) for line in (tmp_path / "run" / "train.jsonl").read_text().splitlines()]
    for row in rows:
        if row["charts/episodes"]:  # one agent on each side: the role's mean is their mean
            assert row["charts/return/bargainer"] == pytest.approx((row["trained/return/bargainer"] + row["npc/return/bargainer"]) / 2)
    described = json.loads((tmp_path / "run" / "npc.json").read_text())["npc"]
    assert described == [{"key": "bargainer[1]", "player": "even_split", "kind": "scripted", "role": "bargainer",
                          "agents": ["bargainer_1"], "agent_index": [1], "source": "even_split"}]
    saved = ck.load(result.checkpoint)
    assert saved["npc"] == described and saved["config"]["npc"] == RESPONDER


def test_a_whole_npc_role_gets_no_gradient_and_the_other_role_trains(tmp_path: Path) -> None:
    first = train(small(tmp_path, "a", spec="speaker_listener", npc={"speaker": "naming"}, total_steps=32 * 8))
    before = {k: v.clone() for k, v in ck.load(first.checkpoint)["model"].items()}
    later = train(small(tmp_path, "b", spec="speaker_listener", npc={"speaker": "naming"}, total_steps=32 * 8 * 3,
                        init_from=first.checkpoint))
    after = ck.load(later.checkpoint)["model"]
    speaker = [k for k in after if k.startswith("nets.0.")]
    listener = [k for k in after if k.startswith("nets.1.")]
    assert speaker and listener
    assert all(torch.equal(before[k], after[k]) for k in speaker)  # the NPC role's networks never moved
    assert not all(torch.equal(before[k], after[k]) for k in listener)
    row = later.history[-1]
    assert "npc/return/speaker" in row and "trained/return/listener" in row
    assert "trained/return/speaker" not in row and "npc/return/listener" not in row


@pytest.mark.slow
def test_the_trained_proposer_exploits_an_accept_all_npc_but_not_a_learning_responder(tmp_path: Path) -> None:
    params = {"discount": 0.5}
    runs = {npc: train(TrainConfig(spec="cake_negotiation", params=params, gamma=1.0, total_steps=2048 * 15,
                                   npc={"bargainer[1]": npc} if npc else {}, out=tmp_path / (npc or "learning")))
            for npc in ("greedy_agreeable", "")}
    exploit = play_episodes("cake_negotiation", params, load_policy(runs["greedy_agreeable"].checkpoint),
                            episodes=500, seed=10**6, deterministic=True)
    assert exploit.metrics["first_share"] == pytest.approx(1.0) and exploit.metrics["agreed"] == 1.0
    assert exploit.sides == {"trained": {"bargainer": 1.0}, "npc": {"bargainer": 0.0}}
    pair = play_episodes("cake_negotiation", params, load_policy(runs[""].checkpoint), episodes=500, seed=10**6,
                         deterministic=True)
    # with discount 0.5, rejecting an offer of the whole cake and proposing next round pays more: a learning
    # responder does not let the proposer take it all
    assert not (pair.metrics["first_share"] == pytest.approx(1.0) and pair.metrics["agreed"] == 1.0)
    assert pair.npc == {} and pair.sides == {}


def test_a_frozen_earlier_policy_plays_a_role(tmp_path: Path) -> None:
    earlier = train(small(tmp_path, "earlier"))
    frozen_run = tmp_path / "earlier"
    result = train(small(tmp_path, "later", npc={"bargainer[1]": str(frozen_run)}))
    assert result.npc == {"bargainer_1": f"frozen:{frozen_run}"}
    team = load_policy(result.checkpoint)
    assert isinstance(team, Team) and team.npc_agents.tolist() == [False, True]
    benv = make_env("cake_negotiation", [{}], 64)
    obs, masks = benv.reset(seed=3)
    for _ in range(4):  # greedy: the NPC's column is the earlier policy's own choice
        acts = team.act(obs, masks, deterministic=True)
        assert np.array_equal(acts[:, 1], load_policy(earlier.checkpoint).act(obs, masks, True)[:, 1])
        obs, *_ = benv.step(acts)
        masks = benv.masks


def test_resume_with_npcs_continues_bit_for_bit(tmp_path: Path) -> None:
    npc = {"bargainer[1]": "random"}  # draws from its generator every turn
    full = train(small(tmp_path, "full", npc=npc, total_steps=32 * 8 * 4, checkpoint_every=2))

    def stop_at_3(row: dict[str, Any]) -> None:
        if row["update"] == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # stopped after update 3, checkpoint at 2
        train(small(tmp_path, "part", npc=npc, total_steps=32 * 8 * 4, checkpoint_every=2), progress=stop_at_3)
    resumed = train(small(tmp_path, "part", npc=npc, total_steps=32 * 8 * 4, checkpoint_every=2, resume=True))
    strip = [{k: v for k, v in row.items() if k not in ppo.TIME_KEYS} for row in (*full.history, *resumed.history)]
    assert strip[:4] == strip[4:] and "npc/return/bargainer" in strip[-1]


def test_resume_refuses_other_npcs(tmp_path: Path) -> None:
    train(small(tmp_path, npc=RESPONDER))
    with pytest.raises(ck.CheckpointError, match="npc"):
        train(small(tmp_path, npc={"bargainer[1]": "greedy_agreeable"}, total_steps=32 * 8 * 4, resume=True))


# --------------------------------------------------------------------------- evaluation, both backends
def test_play_episodes_takes_npcs_and_splits_the_returns() -> None:
    ev = play_episodes("cake_negotiation", {}, random_legal_policy(0), episodes=300, seed=0,
                       npc={"bargainer[1]": "greedy_agreeable"})
    assert ev.metrics["agreed"] == 1.0  # the NPC accepts the first offer, whatever it is
    assert ev.npc == {"bargainer_1": "scripted:greedy_agreeable"}
    proposer, responder = ev.episode_returns.mean(axis=0)
    assert ev.sides == {"trained": {"bargainer": pytest.approx(proposer)}, "npc": {"bargainer": pytest.approx(responder)}}
    assert ev.to_dict()["sides"] == ev.sides
    assert "npc" not in play_episodes("cake_negotiation", {}, random_legal_policy(0), episodes=5).to_dict()


def test_on_the_python_backend_the_npc_plays_the_baseline(tmp_path: Path) -> None:
    result = train(small(tmp_path, npc=RESPONDER))
    team = team_from(ck.load(result.checkpoint))
    env = compile_spec("cake_negotiation", {}).parallel_env()
    npc_turns = 0
    for seed in range(5):
        obs, infos = env.reset(seed=seed)
        team.bind(env)
        while env.agents:
            wanted = env.scripted_action("even_split", "bargainer_1")
            acts = act_parallel(env, team, obs, infos)
            if infos["bargainer_1"]["action_mask"].any():
                assert acts["bargainer_1"] == wanted
                npc_turns += 1
            obs, _, _, _, infos = env.step(acts)
    assert npc_turns >= 5
    shown = runner.invoke(app, ["play", "cake_negotiation", "--policy", str(tmp_path / "run"), "--episodes", "2"])
    assert shown.exit_code == 0, shown.output
    assert "fixed: bargainer_1 by scripted:even_split" in shown.output


def test_the_padded_batch_plays_scripted_baselines_per_group() -> None:
    two, three = {"size": 3, "n_agents": 2, "max_steps": 12}, {"size": 4, "n_agents": 3, "max_steps": 12}
    padded = make_env("mapf_frozenlake", [two, three], 4)
    padded.reset(seed=1)
    acts = padded.scripted_actions(padded.BASELINES[0])
    for c, n, env in zip(padded.copies, padded.counts, padded.groups, strict=True):
        assert np.array_equal(acts[c, :n], env.scripted_actions(padded.BASELINES[0]))
        assert (acts[c, n:] == -1).all()


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(("npc", "message", "hint"), [
    ({"seller": "even_split"}, "the spec has no role 'seller'", "its roles: bargainer (2 agents)"),
    ({"bargainer[1]": "tough"}, "`tough` is no scripted baseline of the spec", "even_split, greedy_agreeable"),
    ({"bargainer[1]": "scripted:tough"}, "no scripted baseline `tough`", "even_split, greedy_agreeable"),
    ({"bargainer[2]": "random"}, "role bargainer has 2 agents", "within the role"),
    ({"bargainer[x]": "random"}, "is not an agent index", "ROLE[I]"),
    ({"bargainer[5:]": "random"}, "selects none", "within the role"),
    ({"bargainer": "random"}, "nothing is left to train", "ROLE[1]=PLAYER"),
    ({"bargainer[0]": "random", "bargainer[:1]": "even_split"}, "already given to bargainer[0]=random", "one fixed policy"),
])
def test_bad_npcs_are_errors_that_say_the_fix(npc: dict[str, str], message: str, hint: str) -> None:
    with pytest.raises(GymwrightError) as e:
        check_npc("cake_negotiation", {}, npc, where="--npc")
    assert e.value.path == "--npc" and message in e.value.message and hint in e.value.hint


def test_a_run_that_does_not_fit_the_role_is_refused(tmp_path: Path) -> None:
    train(small(tmp_path, "hunt", spec="stag_hunt", total_steps=32 * 8))
    with pytest.raises(GymwrightError, match="has no role 'bargainer'"):
        check_npc("cake_negotiation", {}, {"bargainer[1]": str(tmp_path / "hunt")})
    train(small(tmp_path, "cake21", params={"offer_levels": 21}, total_steps=32 * 8))
    with pytest.raises(GymwrightError) as e:
        check_npc("cake_negotiation", {}, {"bargainer[1]": str(tmp_path / "cake21")})
    assert "chooses among 23 actions; here the role has 4 and 13" in e.value.message
    assert "same observation and action params" in e.value.hint


def test_the_cli_names_the_option_and_refuses_before_training(tmp_path: Path) -> None:
    got = runner.invoke(app, ["train", "cake_negotiation", "--npc", "bargainer[1]=tough", "--out", str(tmp_path / "x")])
    assert got.exit_code == 1
    assert "--npc: bargainer[1]=tough: `tough` is no scripted baseline" in got.output
    assert not (tmp_path / "x" / "train.jsonl").exists()
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("npc:\n  bargainer: random\n")
    got = runner.invoke(app, ["train", "cake_negotiation", "--config", str(cfg), "--out", str(tmp_path / "y")])
    assert got.exit_code == 1 and f"{cfg}: every agent" in got.output
    got = runner.invoke(app, ["train", "cake_negotiation", "--npc", "bargainer[1]", "--out", str(tmp_path / "z")])
    assert got.exit_code == 2 and "--npc" in got.output  # not ROLE=PLAYER
    got = runner.invoke(app, ["train", "cake_negotiation", "--backend", "rllib", "--npc", "bargainer[1]=random"])
    assert got.exit_code == 1 and "does not take --npc" in got.output


def test_the_cli_trains_with_npcs_and_saves_them(tmp_path: Path) -> None:
    got = runner.invoke(app, ["train", "cake_negotiation", "--npc", "bargainer[1]=even_split", "--steps", "256",
                              "--num-envs", "32", "--rollout-len", "8", "--out", str(tmp_path / "run")])
    assert got.exit_code == 0, got.output
    assert "fixed    bargainer_1=scripted:even_split" in got.output
    saved = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert saved["npc"] == {"bargainer[1]": "even_split"}
    again = runner.invoke(app, ["train", "--config", str(tmp_path / "run" / "config.yaml"), "--out", str(tmp_path / "again")])
    assert again.exit_code == 0, again.output  # config.yaml reads back, npc included
    assert json.loads((tmp_path / "again" / "npc.json").read_text())["npc"][0]["agents"] == ["bargainer_1"]


@pytest.mark.slow
def test_evolve_takes_npc_for_every_stage(tmp_path: Path) -> None:
    out = tmp_path / "evolve"
    got = runner.invoke(app, ["evolve", "cake_negotiation", "-k", "1", "--steps", "1000", "-e", "fixed", "--num-envs", "16",
                              "--rollout-len", "8", "--npc", "bargainer[1]=random", "-o", str(out), "--json"])
    assert got.exit_code == 0, got.output
    stage = json.loads(got.stdout)["stages"][0]
    assert ck.load(Path(stage["checkpoint"]))["npc"][0]["agents"] == ["bargainer_1"]
    assert yaml.safe_load((out / "config.yaml").read_text())["npc"] == {"bargainer[1]": "random"}
