"""Carrying a policy over to an edited spec (`gymwright.train.carryover`), on the prisoner's dilemma:
an edit that adds an action and a feature and removes one keeps what persists, bit for bit."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch

from gymwright.spec.loader import read_data
from gymwright.train import TrainConfig, load_policy, train
from gymwright.train.carryover import NEW_ACTION_LOGIT, carry_over

PARENT, _ = read_data("iterated_prisoners_dilemma")


def edited() -> dict:
    """A new action (`abstain`: plays C, flagged), a new feature (`abstained`), `first_round` removed."""
    spec = copy.deepcopy(PARENT)
    spec["name"] = "ipd_abstain"
    spec["actions"]["player"].append({"name": "abstain", "doc": "sit the round out (counts as C)"})
    spec["agent_state"]["sat_out"] = {"type": "bool", "init": False, "doc": "abstained this round"}
    spec["step"].append({"doc": "remember who abstained", "set": {"sat_out": "abstain[me]"}})
    obs = [f for f in spec["observe"]["player"] if f["name"] != "first_round"]
    spec["observe"]["player"] = [*obs, {"name": "abstained", "expr": "sat_out[1 - me]", "doc": "the opponent sat out"}]
    spec.pop("text", None)
    return spec


@pytest.fixture(scope="module")
def parent_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("parent")
    train(TrainConfig(spec=PARENT, params={"rounds": 5}, total_steps=2 * 16 * 8, num_envs=8, out=out, seed=3))
    return out


def test_kept_inputs_and_actions_compute_what_the_parent_did(parent_run: Path, tmp_path: Path) -> None:
    child = edited()
    res = carry_over(parent_run, PARENT, child, {"rounds": 5}, tmp_path / "carried.pt")
    assert res.restart is None and res.checkpoint
    (rc,) = res.roles
    assert rc.new_actions == ["abstain"] and rc.kept_actions == ["cooperate", "defect"]
    assert rc.dropped_inputs == ["first_round#1"] and rc.new_inputs == ["abstained#1"]
    parent, kid = load_policy(parent_run), load_policy(res.checkpoint)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(32, 2, 14)).astype(np.float32)  # my_moves 6, their_moves 6, first_round, progress
    x[..., 12] = 0.0  # the removed input at 0: its weights no longer count
    y = np.concatenate([x[..., :12], x[..., 13:14], rng.integers(0, 2, size=(32, 2, 1))], axis=-1).astype(np.float32)
    with torch.no_grad():
        (pn,), (kn,) = parent.model.nets, kid.model.nets
        lp = pn.actor(torch.as_tensor(x))
        lk = kn.actor(torch.as_tensor(y))
        vp, vk = pn.critic(torch.as_tensor(x)), kn.critic(torch.as_tensor(y))
    torch.testing.assert_close(lk[..., :2], lp, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(vk, vp, rtol=1e-5, atol=1e-6)
    bias = pn.actor[-1].bias
    assert float(kn.actor[-1].bias[2].detach()) == pytest.approx(float(bias.min().detach()) - NEW_ACTION_LOGIT)
    assert torch.all(lk[..., 2] < lk[..., :2].min(-1).values)  # the new action starts unlikely


def test_a_carried_policy_warm_starts_training_on_the_edited_spec(parent_run: Path, tmp_path: Path) -> None:
    child = edited()
    res = carry_over(parent_run, PARENT, child, {"rounds": 5}, tmp_path / "carried.pt")
    run = train(TrainConfig(spec=child, params={"rounds": 5}, total_steps=16 * 8, num_envs=8, out=tmp_path / "kid",
                            init_from=res.checkpoint))
    assert run.updates == 1 and Path(run.checkpoint).exists()


def test_a_feature_whose_size_changed_is_a_new_input(parent_run: Path, tmp_path: Path) -> None:
    res = carry_over(parent_run, PARENT, PARENT, {"rounds": 5, "memory": 2}, tmp_path / "carried.pt")
    (rc,) = res.roles
    assert "my_moves#6[0]" in rc.dropped_inputs and "my_moves#4[0]" in rc.new_inputs
    assert rc.kept_inputs == ["first_round#1", "progress#1"]
    assert "kept 2 inputs" in res.summary()


def test_nothing_in_common_means_a_restart_and_no_checkpoint(parent_run: Path, tmp_path: Path) -> None:
    other = copy.deepcopy(PARENT)
    other["agents"] = {"prisoner": other["agents"].pop("player")}
    for key in ("actions", "observe", "rewards"):
        other[key] = {"prisoner": other[key].pop("player")}
    for key in ("text", "probes", "baselines"):
        other.pop(key, None)
    res = carry_over(parent_run, PARENT, other, {"rounds": 5}, tmp_path / "carried.pt")
    assert res.restart == "no role of the parent spec is in the edited spec"
    assert res.new_roles == ["prisoner"] and res.dropped_roles == ["player"]
    assert res.checkpoint is None and not (tmp_path / "carried.pt").exists()
    assert res.summary().startswith("policy restarts from scratch")


def test_the_wrong_parent_spec_is_refused(parent_run: Path, tmp_path: Path) -> None:
    from gymwright.train.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="not trained on the parent spec"):
        carry_over(parent_run, "cake_negotiation", PARENT, {}, tmp_path / "x.pt")


def test_a_centralized_critic_restarts_and_the_actors_carry_over(tmp_path: Path) -> None:
    run = tmp_path / "mappo"
    train(TrainConfig(spec=PARENT, params={"rounds": 5}, algo="mappo", total_steps=16 * 8, num_envs=8, out=run))
    res = carry_over(run, PARENT, edited(), {"rounds": 5}, tmp_path / "carried.pt")
    (rc,) = res.roles
    assert res.restart is None and rc.critic.startswith("a centralized critic reads the global state")
    assert rc.kept_actions == ["cooperate", "defect"] and "critic restarts" in res.summary()


def test_a_choice_that_gains_an_argument_starts_from_the_parent_s_action(tmp_path: Path) -> None:
    """The cake's split gains a second flavour (`two_flavours`): every (share, share_b) starts from the
    parent's `propose(share)`, so each share is drawn as often as before and share_b uniformly."""
    from gymwright.engineer.variants import apply_variant

    params = {"discount": 0.5, "max_rounds": 4, "offer_levels": 5}
    parent = train(TrainConfig(spec="cake_negotiation", params=params, total_steps=2 * 16 * 8, num_envs=8,
                               out=tmp_path / "parent", seed=1))
    child = apply_variant("cake_negotiation", "two_flavours", params, verify_it=False).spec
    res = carry_over(parent.checkpoint, "cake_negotiation", child, params, tmp_path / "carried.pt")
    (rc,) = res.roles
    assert rc.kept_actions == ["accept", "reject"] and rc.new_actions == [] and rc.dropped_actions == []
    assert len(rc.extended_actions) == 25 and rc.extended_actions[1] == "propose(share=0.0, share_b=0.25)"
    assert "25 actions extend the parent's by a new argument" in res.summary()
    x = np.random.default_rng(0).random((64, 4)).astype(np.float32)  # phase, proposer, offer, progress
    y = np.concatenate([x, np.random.default_rng(1).random((64, 2))], axis=-1).astype(np.float32)  # + offer_b, likes_a
    with torch.no_grad():
        p = torch.softmax(load_policy(parent.checkpoint).model.nets[0].actor(torch.as_tensor(x)), -1)
        k = torch.softmax(load_policy(res.checkpoint).model.nets[0].actor(torch.as_tensor(y)), -1)
    by_share = k[:, :25].reshape(64, 5, 5)  # propose: share major, share_b minor
    torch.testing.assert_close(by_share.sum(-1), p[:, :5], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(by_share, by_share[..., :1].expand(-1, -1, 5), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(k[:, 25:], p[:, 5:], rtol=1e-5, atol=1e-6)
