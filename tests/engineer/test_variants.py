"""The variants library (issue 18, item 2): typed spec transforms with preconditions, each verified,
each shown to work on the built environment, refused where its precondition does not hold; and the
heuristic engineer that picks one when no knob can move the task metric toward its band."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.compile.build import check
from gymwright.engineer import Evidence, HeuristicEngineer, Knob, knobs_of
from gymwright.engineer.evidence import StageEvidence
from gymwright.engineer.mixture import Bucket, Mixture
from gymwright.engineer.variants import (
    VARIANTS,
    Edit,
    VariantRefused,
    applicable,
    apply_variant,
    embed_table,
    same_spaces,
)
from gymwright.errors import GymwrightError
from gymwright.spec.loader import library_names, load_spec, read_data
from tests.compile.test_batch_differential import compare
from tests.support.paths import ROOT
from tests.support.playing import random_legal_actions

OPEN_FIELD = str(ROOT / "tests" / "data" / "variants" / "open_field.yaml")
SPECS = [*library_names(), OPEN_FIELD]


@functools.cache
def verdicts(spec: str) -> dict[str, str | None]:
    return applicable(spec)


CASES = [(s, v) for s in SPECS for v in VARIANTS if verdicts(s)[v] is None]
REFUSED = [(s, v) for s in SPECS for v in VARIANTS if verdicts(s)[v] is not None]


def _id(case: tuple[str, str]) -> str:
    return f"{Path(case[0]).stem}-{case[1]}"


# ---------------------------------------------------------------------------- playing a built env

def random_steps(env: Any, seed: int, steps: int, rng_seed: int = 1,
                 options: dict[str, Any] | None = None) -> list[tuple[dict, dict, dict]]:
    """(actions, rewards, infos) of up to `steps` steps of random legal play from reset(seed)."""
    rng = np.random.default_rng(rng_seed)
    _, infos = env.reset(seed=seed, options=options)
    out = []
    for _ in range(steps):
        if not env.agents:
            break
        actions = random_legal_actions(env, infos, rng)
        _, rewards, _, _, infos = env.step(actions)
        out.append((actions, rewards, infos))
    return out


def action_index(spec: Any, role: str, choice: str, **args: float) -> int:
    r = next(r for r in check(spec).roles if r.name == role)
    c = next(c for c in r.choices if c.name == choice)
    return c.offset + next(i for i, combo in enumerate(c.combos()) if all(np.isclose(combo[k], v) for k, v in args.items()))


# ---------------------------------------------------------------------------- what each variant shows

def show_outside_option(parent: str, edit: Edit) -> None:
    spec = edit.spec
    value = spec["params"]["outside_value"]["default"]
    for seed in range(3):
        env = compile_spec(spec).parallel_env()
        _, infos = env.reset(seed=seed)
        role = next(r for r in check(spec).roles if any(c.name == "take_outside" for c in r.choices))
        take = action_index(spec, role.name, "take_outside")
        takers = [a for a in role.agent_ids if infos[a]["action_mask"][take]]
        assert takers, "the outside option is legal for the agent on the move"
        _, rewards, terms, _, infos = env.step({takers[0]: take})
        assert rewards[takers[0]] == pytest.approx(value)
        assert all(rewards[a] == 0 for a in rewards if a != takers[0])
        assert all(terms.values()) and env.v.opted_out
        assert infos[takers[0]]["reward_terms"]["outside"] == pytest.approx(value)


def show_private_values(parent: str, edit: Edit) -> None:
    """The same play with values v and with values 1: each valued role's task term is v times as large
    (episodes are played until some task reward was paid to compare)."""
    spec = edit.spec
    cs = check(spec)
    n = cs.n_agents
    values = list(np.linspace(0.6, 1.4, n))
    valued = [r for r in cs.roles if any("private_value[me]" in t.expr.source for t in r.terms)]
    assert valued
    seen = 0.0
    for seed in range(20):
        env = compile_spec(spec).parallel_env()
        a = random_steps(env, seed, 40, rng_seed=seed, options={"state": {"private_value": values}})
        assert np.allclose(env.v.private_value, values) or not env.agents
        b = random_steps(compile_spec(spec).parallel_env(), seed, 40, rng_seed=seed,
                         options={"state": {"private_value": [1.0] * n}})
        assert len(a) == len(b) and a
        for (acts_a, _, inf_a), (acts_b, _, inf_b) in zip(a, b, strict=True):
            assert acts_a == acts_b  # values change no mask, so the same draws give the same play
            for r in valued:
                task = next(t.name for t in r.terms if "private_value[me]" in t.expr.source)
                for i, agent in zip(r.indices, r.agent_ids, strict=True):
                    if agent not in inf_a:
                        continue
                    ta, tb = inf_a[agent]["reward_terms"], inf_b[agent]["reward_terms"]
                    assert ta[task] == pytest.approx(values[i] * tb[task], abs=1e-9)
                    assert {k: v for k, v in ta.items() if k != task} == pytest.approx(
                        {k: v for k, v in tb.items() if k != task})
                    seen += abs(tb[task])
        if seen > 0:
            return
    raise AssertionError("no task reward was paid in 20 random episodes: nothing to compare")


def show_observation_noise(parent: str, edit: Edit) -> None:
    """Readings with errors 0.25 are the exact ones + 0.25 at the noised features, equal elsewhere."""
    spec = edit.spec
    cs = check(spec)
    k = spec["agent_state"]["obs_error"]["shape"][0]
    env = compile_spec(spec).parallel_env(obs_noise=0.5)
    off, _ = env.reset(seed=2, options={"state": {"obs_error": [[0.25] * k] * cs.n_agents}})
    exact, _ = env.reset(seed=2, options={"state": {"obs_error": [[0.0] * k] * cs.n_agents}})
    noised = 0
    for r in cs.roles:
        start, mask = 0, np.zeros(r.obs_dim, bool)
        for f in r.features:
            mask[start:start + f.size] = "obs_error[me" in f.expr.source
            start += f.size
        noised += int(mask.sum())
        for agent in r.agent_ids:
            diff = off[agent] - exact[agent]
            np.testing.assert_allclose(diff[mask], 0.25, atol=1e-6)
            np.testing.assert_array_equal(diff[~mask], 0)
    assert noised > 0
    steps = random_steps(env, 2, 1, options={"state": {"obs_error": [[0.25] * k] * cs.n_agents}})
    if steps and env.agents:
        err = np.asarray(env.v.obs_error)
        assert np.all(np.abs(err) <= 0.5) and not np.allclose(err, 0.25), "fresh errors every step"


def show_discount(parent: str, edit: Edit) -> None:
    """The same play as the parent's: every reward term at step t is time_discount ** t of the parent's."""
    a = random_steps(compile_spec(parent).parallel_env(), 5, 25)
    b = random_steps(compile_spec(edit.spec).parallel_env(time_discount=0.9), 5, 25)
    assert len(a) == len(b) and a
    for t, ((acts_a, _, inf_a), (acts_b, _, inf_b)) in enumerate(zip(a, b, strict=True), start=1):
        assert acts_a == acts_b
        for agent, info in inf_a.items():
            if "reward_terms" in info:
                expect = {k: 0.9 ** t * v for k, v in info["reward_terms"].items()}
                assert inf_b[agent]["reward_terms"] == pytest.approx(expect, abs=1e-9)


def show_one_more_agent(parent: str, edit: Edit) -> None:
    (name, count), = edit.params.items()
    before, after = check(parent), check(edit.spec)
    role = next(r.name for r in after.roles if r.count != next(p.count for p in before.roles if p.name == r.name))
    assert after.n_agents == before.n_agents + 1 and f"{role}_{count - 1}" in after.agent_ids
    env = compile_spec(edit.spec).parallel_env()
    steps = random_steps(env, 0, 10)
    assert steps and f"{role}_{count - 1}" in steps[0][1]  # the new agent is paid like the others


def show_obstacles(parent: str, edit: Edit) -> None:
    kinds = list(edit.spec["grid"]["tiles"])
    obstacle = kinds.index("obstacle")
    laid = 0
    for seed in range(4):
        env = compile_spec(edit.spec).parallel_env(obstacle_density=0.3)
        env.reset(seed=seed)
        laid += int((np.asarray(env.v.tiles) == obstacle).sum())
        for _ in random_steps(env, seed, 30, rng_seed=seed):
            pos = np.asarray(env.v.pos)
            assert not np.any(np.asarray(env.v.tiles)[pos[:, 0], pos[:, 1]] == obstacle), "nobody stands on an obstacle"
    assert laid > 0


def show_two_flavours(parent: str, edit: Edit) -> None:
    """With different tastes a deal pays each agent its own mix of the two shares; at taste gap 0 a split
    of (x, x) pays what the offer x pays in the parent."""
    spec = edit.spec
    propose = functools.partial(action_index, spec, "bargainer", "propose")

    def deal(env: Any, share: float, share_b: float) -> dict[str, float]:
        env.reset(seed=0)
        env.step({"bargainer_0": propose(share=share, share_b=share_b)})
        _, rewards, terms, _, _ = env.step({"bargainer_1": action_index(spec, "bargainer", "accept")})
        assert all(terms.values())
        return rewards

    env = compile_spec(spec).parallel_env(taste_gap=0.5)
    assert deal(env, 0.7, 0.2) == pytest.approx({"bargainer_0": 0.75 * 0.7 + 0.25 * 0.2,
                                                 "bargainer_1": 0.25 * 0.3 + 0.75 * 0.8})
    assert np.allclose(env.v.likes_a, [0.75, 0.25]) and env.v.offer_b == pytest.approx(0.2)
    plain = compile_spec(parent).parallel_env()
    plain.reset(seed=0)
    plain.step({"bargainer_0": action_index(parent, "bargainer", "propose", share=0.7)})
    _, expect, _, _, _ = plain.step({"bargainer_1": action_index(parent, "bargainer", "accept")})
    assert deal(compile_spec(spec).parallel_env(taste_gap=0.0), 0.7, 0.7) == pytest.approx(expect)


SHOW: dict[str, Callable[[str, Edit], None]] = {
    "outside_option": show_outside_option, "two_flavours": show_two_flavours, "private_values": show_private_values,
    "observation_noise": show_observation_noise, "discount": show_discount,
    "one_more_agent": show_one_more_agent, "obstacles": show_obstacles,
}


def test_every_variant_has_its_check() -> None:
    assert set(SHOW) == set(VARIANTS)
    assert {v for _, v in CASES} == set(VARIANTS), "every variant applies to some tested spec"


# ---------------------------------------------------------------------------- the fast smoke case

def test_the_outside_option_on_the_cake_verifies_and_pays_when_taken() -> None:
    edit = apply_variant("cake_negotiation", "outside_option")
    assert edit.report is not None and edit.report.passed
    assert edit.changed == ["params.outside_value", "state.opted_out", "actions.bargainer[3]", "step[1]", "terminate",
                            "rewards.bargainer[1]", "metrics.outside_taken", "probes[2]", "doc"]
    assert edit.spec["terminate"] == "(deal or round >= max_rounds) or opted_out"
    assert not edit.spaces and edit.spaces.differences == ["bargainer: actions 13 -> 14"]
    show_outside_option("cake_negotiation", edit)
    # after an offer of 0.5, the responder leaves: it gets the outside value, the proposer nothing
    env = compile_spec(edit.spec).parallel_env(outside_value=0.2)
    env.reset(seed=0)
    env.step({"bargainer_0": action_index(edit.spec, "bargainer", "propose", share=0.5)})
    _, rewards, terms, _, _ = env.step({"bargainer_1": action_index(edit.spec, "bargainer", "take_outside")})
    assert rewards == pytest.approx({"bargainer_0": 0.0, "bargainer_1": 0.2}) and all(terms.values())
    assert "Variant `outside_option`" in edit.spec["doc"]
    assert edit.to_dict()["verified"] is True and edit.to_dict()["space_changes"] == ["bargainer: actions 13 -> 14"]


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_every_variant_verifies_and_works_on_every_spec_it_applies_to(case: tuple[str, str]) -> None:
    """Verified (every probe passes, the new ones too), its new rule shown on the built env, and the
    batch backend the trainer uses agrees with the Python backend on it."""
    spec, name = case
    edit = apply_variant(spec, name)
    assert edit.report is not None and edit.report.passed, edit.report.to_prompt()
    parent_probes = len(load_spec(spec).probes)
    assert len(edit.spec.get("probes", [])) >= parent_probes
    assert not [d for d in edit.report.diagnostics if d.stage == "probes"], "every probe passed, the new ones too"
    assert edit.changed and edit.changed[-1] == "doc"
    SHOW[name](spec, edit)
    compare(edit.spec, {}, 3, 0, 20, 0)  # the trainer's batch backend replays the Python backend on it


# ---------------------------------------------------------------------------- refusals

@pytest.mark.parametrize("case", REFUSED, ids=_id)
def test_a_variant_whose_precondition_fails_is_refused_saying_why(case: tuple[str, str]) -> None:
    spec, name = case
    with pytest.raises(VariantRefused) as e:
        apply_variant(spec, name)
    assert e.value.message == f"variant `{name}` does not apply to {load_spec(spec).name}: {verdicts(spec)[name]}"
    assert e.value.path == f"variants.{name}" and e.value.hint.startswith(f"it needs {VARIANTS[name].requires}; ")


@pytest.mark.parametrize("spec, name, reason", [
    ("mapf_frozenlake", "outside_option", "not a bargaining game with a split action: no role has both a choice with "
     "arguments (the split) and an `accept` choice"),
    ("multi_issue_negotiation", "two_flavours", "its split `propose` has 3 arguments (keep0, keep1, keep2): it "
     "divides several items already"),
    ("mapf_frozenlake", "two_flavours", "not a bargaining game: no role has both a choice with arguments (the split) "
     "and an `accept` choice"),
    ("cake_negotiation", "private_values", "every role's reward has a single term: a private weight on it would only "
     "rescale the reward (the same game); add a second term first (e.g. the outside option)"),
    ("sealed_bid_auction", "private_values", "it already has private information (agent_state `value` is private)"),
    ("cake_negotiation", "one_more_agent", "no role's count is a param below its max (bargainer: 2): a fixed count "
     "means the rules are written for exactly that many agents"),
    ("mapf_frozenlake", "obstacles", "its layouts come from the MAPF solver (`grid.solve`), which knows one blocked "
     "tile kind (the holes) only"),
    ("predator_prey", "obstacles", "it has impassable tiles already (`wall`)"),
    ("stag_hunt", "obstacles", "it has no grid"),
    ("multi_issue_negotiation", "discount", "it is discounted already (param `discount`)"),
])
def test_refusal_reasons(spec: str, name: str, reason: str) -> None:
    assert verdicts(spec)[name] == reason


def test_an_unknown_variant_names_the_known_ones() -> None:
    with pytest.raises(GymwrightError, match=r"no variant named `walls`") as e:
        apply_variant("cake_negotiation", "walls")
    assert e.value.hint == "variants: " + ", ".join(VARIANTS)


def test_a_variant_whose_result_does_not_verify_is_refused_with_the_report() -> None:
    """A cake (that verifies) whose bargainers already have a reward term named `outside`: the
    outside option's own term then appears twice, the checker refuses it, and so the variant is
    refused, with the verification report."""
    from gymwright.verify.verifier import verify

    data, _ = read_data("cake_negotiation")
    data = {**data, "probes": data["probes"][:1],
            "rewards": {"bargainer": [*data["rewards"]["bargainer"], {"name": "outside", "expr": "0.01 * deal"}]}}
    assert verify(data).passed
    with pytest.raises(VariantRefused) as e:
        apply_variant(data, "outside_option")
    assert e.value.message == ("variant `outside_option` applied to cake_negotiation did not verify: "
                               "rewards.bargainer[2].name: reward term `outside` appears twice")
    assert e.value.value.passed is False and e.value.value.stopped_at == "static"


def test_two_flavours_on_the_cake_splits_each_flavour_and_keeps_the_parent_s_probes() -> None:
    edit = apply_variant("cake_negotiation", "two_flavours", verify_it=False)
    assert edit.spec["actions"]["bargainer"][0]["args"] == {"share": "linspace(0, 1, offer_levels)",
                                                            "share_b": "linspace(0, 1, offer_levels)"}
    assert edit.spec["rewards"]["bargainer"][0]["expr"] == (
        "deal * discount ** round * (likes_a[me] * offer + (1 - likes_a[me]) * offer_b if me == proposer "
        "else 1 - (likes_a[me] * offer + (1 - likes_a[me]) * offer_b))")
    assert edit.spec["baselines"]["greedy_agreeable"]["bargainer"][0]["action"] == "propose(share=0.9, share_b=0.9)"
    assert [p.get("params") for p in edit.spec["probes"]] == [{"taste_gap": 0.0}] * 2 + [None]
    assert edit.spec["metrics"]["first_share_b"]["expr"] == "offer_b if round == 0 else 0.0"
    assert edit.spaces.differences == ["bargainer: actions 13 -> 123", "bargainer: observation size 4 -> 6"]
    show_two_flavours("cake_negotiation", edit)


def test_variants_compose_and_do_not_apply_twice() -> None:
    """The outside option gives the cake a second reward term: then private values apply."""
    first = apply_variant("cake_negotiation", "outside_option")
    assert verdicts("cake_negotiation")["private_values"] is not None
    assert applicable(first.spec)["private_values"] is None
    assert applicable(first.spec)["outside_option"] == ("it already declares `opted_out`, `outside_taken`, "
                                                       "`outside_value`, `take_outside` (an outside option was added before)")
    second = apply_variant(first.spec, "private_values")
    assert second.report is not None and second.report.passed
    assert second.spec["rewards"]["bargainer"][0]["expr"].startswith("private_value[me] * (")
    assert second.changed[:2] == ["params.value_spread", "agent_state.private_value"]


# ---------------------------------------------------------------------------- spaces

def test_same_spaces_compares_observation_sizes_and_action_counts_per_role() -> None:
    assert same_spaces("cake_negotiation", "cake_negotiation")
    more = apply_variant("mapf_frozenlake", "one_more_agent", verify_it=False)
    assert more.spaces is not None and more.spaces.same  # egocentric: the walker policy runs for 3
    assert same_spaces("mapf_frozenlake", more.spec, {}, more.params).same
    commons = apply_variant("commons_harvest", "one_more_agent", verify_it=False)
    assert commons.spaces.differences == ["harvester: observation size 7 -> 8"]
    assert commons.spaces.describe().endswith("the policy cannot carry over as it is")


# ---------------------------------------------------------------------------- lineage

def test_an_edit_goes_through_the_curriculum_s_spec_edit_with_lineage(tmp_path: Path) -> None:
    from gymwright.engineer.edits import realize_edit
    from gymwright.store import Store

    edit = apply_variant("cake_negotiation", "outside_option")
    store = Store.open(tmp_path / "store")
    parent, _ = read_data("cake_negotiation")
    outcome = realize_edit(parent, edit.as_spec_edit(), store=store)
    assert outcome.status == "applied" and outcome.spec == edit.spec
    (edge,) = store.lineage(outcome.spec_sha)
    assert edge.parent == outcome.parent_sha and "variant `outside_option`" in edge.reason
    assert "changed params.outside_value, state.opted_out" in edge.reason


# ---------------------------------------------------------------------------- docs

def test_the_variants_table_in_the_docs_is_current() -> None:
    doc = (ROOT / "docs" / "engineer.md").read_text()
    assert embed_table(doc) == doc, "run: python -m gymwright.engineer.variants --write docs/engineer.md"


def test_what_the_docs_say_of_the_variants_left_out() -> None:
    """The library's grid specs observe the smallest window already, and every library spec bounds
    its episodes by a knob (so neither a smaller view nor a deadline is a variant of them)."""
    for name in library_names():
        data, _ = read_data(name)
        if "grid" in data:
            p = data["params"]["view_radius"]
            assert p["default"] == p["min"] == 1
        ends = f"{data.get('terminate', '')} {data.get('truncate', '')}"
        bounds = {"max_rounds", "max_turns", "rounds", "max_steps"} & set(re.findall(r"\w+", ends))
        assert bounds and bounds <= set(data["params"]), name


# ---------------------------------------------------------------------------- the heuristic engineer picks a variant
# when no knob can move the task metric toward its band (the demo's pie game: `agreed` stuck at 1.0
# above the band), and only then, and only with edits on
BAND = (0.4, 0.8)
CAKE = "cake_negotiation"


def flat_knobs() -> list[Knob]:
    """The cake's knobs as measured when every episode agrees: no effect, no noise."""
    return knobs_of(CAKE, {}, {"offer_levels"})


def stage(success: float, knobs: list[Knob], spec: str = CAKE, rejected: list[Mixture] | None = None) -> StageEvidence:
    e = Evidence(spec, {}, "agreed", success, BAND, knobs=knobs)
    return StageEvidence(spec, "agreed", BAND, [(Bucket({}, 1.0, "config"), e)], rejected=rejected or [])


def test_a_stuck_pie_game_gets_the_outside_option_and_says_why() -> None:
    p = HeuristicEngineer(edits=True).propose_stage(stage(1.0, flat_knobs()))
    assert p.variant is not None and p.variant.variant == "outside_option"
    assert p.variant.report is not None and p.variant.report.passed
    assert p.edit is not None and p.edit.spec == p.variant.spec and p.edit.reason == p.variant.reason
    assert p.rationale.startswith("[config] agreed 1.000 is above the band, but no knob had a measurable effect in "
                                  "the needed direction; so the game changes instead of a knob: variant `outside_option`")
    assert "(it writes params.outside_value, state.opted_out, actions.bargainer[3]" in p.rationale
    assert p.rationale.endswith("the spaces differ (bargainer: actions 13 -> 14): the policy cannot carry over as it is")
    assert p.mixture.to_list() == [{"label": "config", "params": {}, "share": 1.0}]


def test_without_edits_the_stuck_game_keeps_its_spec() -> None:
    for engineer in (HeuristicEngineer(), HeuristicEngineer(edits=False)):
        p = engineer.propose_stage(stage(1.0, flat_knobs()))
        assert p.edit is None and p.variant is None
        assert p.rationale == ("[config] agreed 1.000 is above the band, but no knob had a measurable effect in the "
                               "needed direction: no change")


def test_a_knob_that_moves_the_metric_is_used_before_any_variant() -> None:
    knobs = flat_knobs()
    knobs[1].effect, knobs[1].ci95 = 0.08, 0.02  # more rounds: more agreement, beyond noise
    p = HeuristicEngineer(edits=True).propose_stage(stage(1.0, knobs))
    assert p.edit is None and p.mixture.buckets[0].params == {"max_rounds": 5}
    assert "max_rounds 10 -> 5 to make the task harder" in p.rationale


def test_inside_the_band_nothing_changes() -> None:
    p = HeuristicEngineer(edits=True).propose_stage(stage(0.6, flat_knobs()))
    assert p.edit is None and p.rationale.startswith("[config] agreed 0.600 is inside the band")


def test_below_the_band_no_variant_is_proposed() -> None:
    p = HeuristicEngineer(edits=True).propose_stage(stage(0.1, flat_knobs()))
    assert p.edit is None and p.variant is None
    assert p.rationale.endswith("every variant of the library makes a task harder, none easier: no change")


def test_a_knob_move_the_guardrail_undid_counts_as_stuck() -> None:
    knobs = flat_knobs()
    knobs[1].effect, knobs[1].ci95 = 0.08, 0.02
    undone = Mixture([Bucket({"max_rounds": 5}, 1.0, "config")])
    p = HeuristicEngineer(edits=True).propose_stage(stage(1.0, knobs, rejected=[undone]))
    assert p.variant is not None and p.variant.variant == "outside_option"
    assert "max_rounds 10 -> 5 to make the task harder; but the guardrail undid this knob move before; so the game " \
           "changes" in p.rationale


def test_one_config_proposal_carries_the_edit_too() -> None:
    p = HeuristicEngineer(edits=True).propose(Evidence(CAKE, {}, "agreed", 1.0, BAND, knobs=flat_knobs()))
    assert p.variant is not None and p.variant.variant == "outside_option"
    assert HeuristicEngineer().propose(Evidence(CAKE, {}, "agreed", 1.0, BAND, knobs=flat_knobs())).edit is None


@pytest.mark.slow
def test_the_next_stuck_stage_takes_the_next_variant(tmp_path: Path) -> None:
    """On the cake with its outside option, still stuck: two flavours, the seed's next harder version (and
    the library's next variant that applies)."""
    first = HeuristicEngineer(edits=True).propose_stage(stage(1.0, flat_knobs())).variant
    assert first is not None
    path = tmp_path / "cake_outside.yaml"
    path.write_text(first.to_yaml())
    knobs = knobs_of(str(path), {}, {"offer_levels"})
    p = HeuristicEngineer(edits=True).propose_stage(stage(1.0, knobs, spec=str(path)))
    assert p.variant is not None and p.variant.variant == "two_flavours" and p.variant.parent == "cake_negotiation"


def test_when_no_variant_applies_the_engineer_says_which_and_why() -> None:
    p = HeuristicEngineer(edits=True, variants=("obstacles", "one_more_agent")).propose_stage(stage(1.0, flat_knobs()))
    assert p.edit is None and p.variant is None
    assert p.rationale.endswith("no variant of the library applies (obstacles: it has no grid; one_more_agent: no "
                                "role's count is a param below its max (bargainer: 2): a fixed count means the rules "
                                "are written for exactly that many agents): no change")


def test_a_variant_that_adds_an_agent_moves_every_bucket_to_the_new_count() -> None:
    buckets = [Bucket({"n_hunters": 2, "rounds": r}, 0.5, label) for r, label in ((5, "a"), (9, "b"))]
    two = StageEvidence("stag_hunt", "stag_success_rate", BAND,
                        [(b, Evidence("stag_hunt", b.params, "stag_success_rate", 1.0, BAND)) for b in buckets])
    p = HeuristicEngineer(edits=True, variants=("one_more_agent",)).propose_stage(two)
    assert p.variant is not None and p.variant.params == {"n_hunters": 3}
    assert [b.params for b in p.mixture.buckets] == [{"n_hunters": 3, "rounds": 5}, {"n_hunters": 3, "rounds": 9}]
