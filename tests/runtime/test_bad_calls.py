"""The generated environments refuse bad calls clearly (issue 13, item 7).

Actions: a Python int, a numpy integer, or a 0-d or 1-element integer array; None = no action.
Everything else (bools, floats, strings, complex numbers, other arrays, containers) is a
ValueError naming the agent and the value, in the parallel form, the AEC form and the batch
backend. Seeds: ints in [0, 2**63), nothing aliased modulo 2**64.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gymwright.compile import compile_spec
from gymwright.compile.batch import compile_batch
from gymwright.runtime.aec import rt_action
from gymwright.runtime.core import SEED_LIMIT, rt_seed

CAKE = compile_spec("cake_negotiation")  # turn-based, Discrete(13) per agent
STAG = compile_spec("stag_hunt")  # simultaneous, Discrete(2) per agent

BAD_ACTIONS: list[Any] = [
    1.0, 2.5, float("nan"), "1", b"1", 1 + 0j, True, False, np.bool_(True), np.float64(1.0),
    np.array([1.0]), np.array(1.0), np.array([[1]]), np.array([1, 2]), np.array([], dtype=np.int64),
    [], [1], (1,), {"a": 1}, {1}, object(),
]
GOOD_ACTIONS: list[Any] = [
    3, np.int8(3), np.int16(3), np.int32(3), np.int64(3), np.uint8(3), np.uint64(3),
    np.array(3), np.array([3]), np.array([3], dtype=np.uint16),
]


def ident(x: Any) -> str:
    """A test id that is the same in every worker process (no memory addresses)."""
    return re.sub(r" at 0x[0-9a-f]+", "", repr(x))


def start(compiled: Any = CAKE, seed: int = 0) -> Any:
    env = compiled.parallel_env()
    env.reset(seed=seed)
    return env


def outcome(env: Any, actions: dict[str, Any]) -> tuple[Any, ...]:
    obs, rew, term, trunc, _ = env.step(actions)
    return {a: o.tolist() for a, o in obs.items()}, rew, term, trunc, env.state().tolist()


# --------------------------------------------------------------------------- parallel step

@pytest.mark.parametrize("action", BAD_ACTIONS, ids=ident)
def test_parallel_step_refuses_a_non_int_action_naming_agent_and_value(action: Any) -> None:
    env = start()
    with pytest.raises(ValueError) as e:
        env.step({"bargainer_0": action})
    message = str(e.value)
    assert message.startswith("action of bargainer_0 must be an int in 0..12 (Discrete(13)), got ")
    assert repr(action)[:40] in message and type(action).__name__ in message
    assert "or None for no action" in message


@pytest.mark.parametrize("action", GOOD_ACTIONS, ids=ident)
def test_parallel_step_accepts_ints_numpy_ints_and_one_element_int_arrays(action: Any) -> None:
    assert outcome(start(), {"bargainer_0": action}) == outcome(start(), {"bargainer_0": 3})


@pytest.mark.parametrize("action", [13, -1, -14, 2**70, np.int64(-1), np.array([13])], ids=ident)
def test_parallel_step_refuses_an_action_outside_its_space(action: Any) -> None:
    with pytest.raises(ValueError, match=r"action -?\d+ of bargainer_0 is outside Discrete\(13\): give 0\.\.12, "
                                         r"or None for no action"):
        start().step({"bargainer_0": action})


def test_a_refused_step_leaves_the_env_as_it_was() -> None:
    env = start()
    with pytest.raises(ValueError, match="action of bargainer_0"):
        env.step({"bargainer_0": 2.0})
    assert outcome(env, {"bargainer_0": 2}) == outcome(start(), {"bargainer_0": 2})


def test_none_and_a_left_out_agent_are_no_action() -> None:
    assert outcome(start(STAG), {"hunter_0": None, "hunter_1": 1}) == outcome(start(STAG), {"hunter_1": 1})


@pytest.mark.parametrize("actions", [[3, 0], (3,), 3, "bargainer_0", None, np.array([3, 0])], ids=ident)
def test_parallel_step_refuses_actions_that_are_not_a_mapping(actions: Any) -> None:
    with pytest.raises(ValueError, match=r"step\(\) takes a dict \{agent: action\}, got "):
        start().step(actions)


def test_parallel_step_takes_any_mapping() -> None:
    frozen = types.MappingProxyType({"bargainer_0": 3})
    assert outcome(start(), frozen) == outcome(start(), {"bargainer_0": 3})


def test_the_common_int_path_is_one_class_check_in_the_generated_step() -> None:
    """The readable generated code: ints skip the helper; everything else goes through it."""
    assert "if a.__class__ is not int:\n" in CAKE.source
    assert "a = rt_action(agent, a, N_ACTIONS[ROLE_OF[i]])" in CAKE.source


def test_rt_action_refuses_bools_that_gymnasium_discrete_accepts() -> None:
    """Gymnasium's Discrete.contains takes Python's True (bool subclasses int); a flag is not an index."""
    space = CAKE.parallel_env().action_space("bargainer_0")
    assert space.contains(True)
    with pytest.raises(ValueError, match=r"got True \(bool\)"):
        rt_action("bargainer_0", True, 13)
    assert rt_action("bargainer_0", np.array([7], dtype=np.int8), 13) == 7


# --------------------------------------------------------------------------- seeds

BAD_SEEDS: list[Any] = [1.5, 2.0, "3", True, np.bool_(False), np.float64(1), np.array([1]), [1], 1 + 0j]
OUT_OF_RANGE_SEEDS: list[Any] = [-1, 2**63, 2**64, 2**64 + 7, np.uint64(2**63), np.int64(-5)]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=ident)
def test_reset_refuses_a_seed_that_is_not_an_int(seed: Any) -> None:
    with pytest.raises(ValueError, match=r"reset\(seed=\.\.\.\) takes None or an int in \[0, 2\*\*63\), got "):
        CAKE.parallel_env().reset(seed=seed)


@pytest.mark.parametrize("seed", OUT_OF_RANGE_SEEDS, ids=ident)
def test_reset_refuses_a_seed_out_of_range_instead_of_aliasing_it(seed: Any) -> None:
    with pytest.raises(ValueError, match=re.escape(f"reset(seed={int(seed)}) is out of range: a seed is an int in "
                                                   "[0, 2**63)")):
        CAKE.parallel_env().reset(seed=seed)


@pytest.mark.parametrize("seed", [0, 5, np.int64(5), np.uint32(5), np.int8(5), SEED_LIMIT - 1], ids=ident)
def test_reset_accepts_python_and_numpy_ints_in_range(seed: Any) -> None:
    pub = compile_spec("public_goods", {"endowment_spread": 0.5})  # endowments drawn at reset
    a, b = pub.parallel_env(), pub.parallel_env()
    obs_a, _ = a.reset(seed=seed)
    obs_b, _ = b.reset(seed=int(seed))
    assert {k: x.tolist() for k, x in obs_a.items()} == {k: x.tolist() for k, x in obs_b.items()}


def test_rt_seed_returns_plain_ints() -> None:
    assert rt_seed(np.uint64(SEED_LIMIT - 1)) == SEED_LIMIT - 1
    assert type(rt_seed(np.int32(4))) is int


def test_a_refused_reset_keeps_the_episode() -> None:
    env = start()
    with pytest.raises(ValueError):
        env.reset(seed=-1)
    assert outcome(env, {"bargainer_0": 4}) == outcome(start(), {"bargainer_0": 4})


# --------------------------------------------------------------------------- AEC form

@pytest.mark.parametrize("compiled", [CAKE, STAG], ids=["turn-based", "simultaneous"])
@pytest.mark.parametrize("action", [1.0, True, "0", np.array([0.0]), [0]], ids=ident)
def test_aec_step_refuses_a_bad_action_at_its_own_step(compiled: Any, action: Any) -> None:
    env = compiled.aec_env()
    env.reset(seed=0)
    agent = env.agent_selection
    n = env.action_space(agent).n
    with pytest.raises(ValueError, match=re.escape(f"action of {agent} must be an int in 0..{n - 1} (Discrete({n})), got ")):
        env.step(action)
    assert env.agent_selection == agent  # nothing was buffered: the same agent acts again
    env.step(0)


def aec_play(compiled: Any, first: Any, seed: int = 0, steps: int = 6) -> list[Any]:
    """An AEC episode: `first` as the first action, then action 1 for every live agent."""
    env = compiled.aec_env()
    env.reset(seed=seed)
    seen = []
    for k in range(steps):
        agent = env.agent_selection
        done = env.terminations[agent] or env.truncations[agent]
        env.step(None if done else first if k == 0 else 1)
        seen.append((agent, dict(env.rewards), env.observe(agent).tolist()))
    return seen


@pytest.mark.parametrize("compiled", [CAKE, STAG], ids=["turn-based", "simultaneous"])
def test_aec_accepts_numpy_ints_and_one_element_arrays(compiled: Any) -> None:
    plain = aec_play(compiled, 0)
    assert aec_play(compiled, np.int64(0)) == plain
    assert aec_play(compiled, np.array([0], dtype=np.uint8)) == plain


def test_aec_refuses_an_action_outside_its_space_by_name() -> None:
    env = STAG.aec_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action 2 of hunter_0 is outside Discrete\(2\): give 0\.\.1"):
        env.step(2)
    env.step(1)
    with pytest.raises(ValueError, match=r"action -1 of hunter_1 is outside Discrete\(2\)"):
        env.step(-1)


@pytest.mark.parametrize("seed", [1.5, -1, 2**64, True], ids=ident)
def test_aec_reset_refuses_bad_seeds(seed: Any) -> None:
    with pytest.raises(ValueError, match=r"reset\(seed="):
        CAKE.aec_env().reset(seed=seed)


# --------------------------------------------------------------------------- batch backend

B = 4
BATCH = compile_batch("cake_negotiation", {}, batch_size=B)


def fresh_batch() -> Any:
    env = type(BATCH)(B)
    env.reset(seed=0)
    return env


def batch_outcome(env: Any, actions: Any) -> list[Any]:
    obs, rew, term, trunc, _ = env.step(actions)
    return [obs.tolist(), rew.tolist(), term.tolist(), trunc.tolist(), env.state().tolist()]


@pytest.mark.parametrize("actions", [np.zeros((B, 2)), np.zeros((B, 2), dtype=bool), np.full((B, 2), "1"),
                                     [[0.0, 1.0]] * B, np.zeros((B, 2), dtype=np.complex64)], ids=ident)
def test_batch_step_refuses_actions_that_are_not_integers(actions: Any) -> None:
    with pytest.raises(ValueError, match=r"actions must be an integer array of shape \(4, 2\) \(-1 = no action\), got dtype "):
        fresh_batch().step(actions)


@pytest.mark.parametrize("shape", [(B,), (B, 3), (B - 1, 2), (B, 2, 1), ()], ids=ident)
def test_batch_step_refuses_a_wrong_shape(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=re.escape(f"actions must have shape (4, 2) (copies, agents), got {shape}")):
        fresh_batch().step(np.zeros(shape, dtype=np.int64))


@pytest.mark.parametrize(("value", "dtype"), [(13, np.int64), (-2, np.int64), (2**63 + 1, np.uint64), (255, np.uint8)])
def test_batch_step_refuses_out_of_range_values_naming_copy_and_agent(value: int, dtype: Any) -> None:
    actions = np.zeros((B, 2), dtype=dtype)
    actions[2, 1] = value
    with pytest.raises(ValueError, match=re.escape(f"action {value} of copy 2, agent bargainer_1 is outside Discrete(13): "
                                                   "give 0..12, or -1 for no action")):
        fresh_batch().step(actions)


@pytest.mark.parametrize("actions", [np.array([[3, -1]] * B, dtype=np.int32), np.array([[3, -1]] * B, dtype=np.int8),
                                     [[3, -1]] * B], ids=["int32", "int8", "lists"])
def test_batch_step_accepts_integer_arrays_of_any_width_and_lists_of_ints(actions: Any) -> None:
    assert batch_outcome(fresh_batch(), actions) == batch_outcome(fresh_batch(), np.array([[3, -1]] * B))


@pytest.mark.parametrize("seed", [1.5, True, "0", np.zeros(B), np.zeros(B, dtype=bool), np.arange(B - 1), np.zeros((B, 1), dtype=int)],
                         ids=ident)
def test_batch_reset_refuses_seeds_that_are_not_ints(seed: Any) -> None:
    with pytest.raises(ValueError, match=r"reset\(seed=\.\.\.\) takes an int or an integer array of shape \(4,\) "
                                         r"\(one seed per copy\), got "):
        type(BATCH)(B).reset(seed=seed)


@pytest.mark.parametrize("seed", [-1, SEED_LIMIT - B + 1, 2**64, np.int64(SEED_LIMIT - 1)], ids=ident)
def test_batch_reset_refuses_a_seed_whose_copies_leave_the_range(seed: Any) -> None:
    with pytest.raises(ValueError, match=re.escape(f"reset(seed={int(seed)}) is out of range: copy b gets the seed "
                                                   f"{int(seed)} + b and a seed is an int in [0, 2**63), so with 4 "
                                                   "copies pass a seed in [0, 2**63 - 4]")):
        type(BATCH)(B).reset(seed=seed)


def test_batch_reset_names_the_copy_of_a_bad_seed_in_an_array() -> None:
    with pytest.raises(ValueError, match=r"the seed -3 of copy 2 is out of range; a seed is an int in \[0, 2\*\*63\)"):
        type(BATCH)(B).reset(seed=np.array([0, 1, -3, 4]))
    with pytest.raises(ValueError, match=r"the seed 9223372036854775808 of copy 0 is out of range"):
        type(BATCH)(B).reset(seed=np.full(B, 2**63, dtype=np.uint64))


def test_batch_seeds_are_the_python_envs_seeds() -> None:
    """Copy b of a batch reset with s plays the Python env reset with s + b, up to the top seed."""
    top = SEED_LIMIT - B
    spread = {"endowment_spread": 0.5}  # endowments drawn at reset: the seed shows in obs
    pub = compile_spec("public_goods", spread)
    batch = compile_batch("public_goods", spread, batch_size=B)
    obs, _ = batch.reset(seed=top)
    again, _ = type(batch)(B).reset(seed=np.arange(top, top + B, dtype=np.uint64))
    assert obs.tolist() == again.tolist()
    assert obs[0].tolist() != obs[1].tolist()
    for b in range(B):
        py, _ = pub.parallel_env().reset(seed=top + b)
        assert obs[b].tolist() == [x.tolist() for x in py.values()]


def test_an_exported_module_refuses_bad_calls_without_gymwright(tmp_path: Path) -> None:
    """The checks are runtime functions inlined into the module: they work where gymwright is absent."""
    (tmp_path / "stag_env.py").write_text(STAG.source)
    script = textwrap.dedent("""
        import sys
        sys.modules["gymwright"] = None  # importing gymwright now fails
        import stag_env
        for call in (lambda: stag_env.parallel_env().reset(seed=2**64),
                     lambda: stag_env.parallel_env(stag_reward=float("nan")),
                     lambda: (e := stag_env.parallel_env(), e.reset(seed=0), e.step({"hunter_1": 0.5})),
                     lambda: (e := stag_env.env(), e.reset(seed=0), e.step(True))):
            try:
                call()
            except ValueError as e:
                print(e)
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert len(lines) == 4, out
    assert lines[0].startswith("reset(seed=18446744073709551616) is out of range")
    assert lines[1].startswith("param `stag_reward` = nan is not a finite number")
    assert lines[2].startswith("action of hunter_1 must be an int in 0..1 (Discrete(2)), got 0.5 (float)")
    assert lines[3].startswith("action of hunter_0 must be an int in 0..1 (Discrete(2)), got True (bool)")


def test_a_mixed_batch_refuses_float_actions_and_seeds() -> None:
    env = compile_batch("mapf_frozenlake", [{"size": 4}, {"size": 5}], batch_size=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="actions must be an integer array of shape"):
        env.step(np.zeros((2, env.N_AGENTS), dtype=np.float64))
    with pytest.raises(ValueError, match=r"reset\(seed=...\) takes an int or an integer array of shape \(2,\)"):
        env.reset(seed=1.5)


def test_a_model_reply_nested_past_the_recursion_limit_is_a_clear_error() -> None:
    from gymwright.llm.jsonreply import JSONReplyError, extract_json

    with pytest.raises(JSONReplyError, match="nests brackets too deeply"):
        extract_json("[" * 100_000 + "]" * 100_000)


def test_the_cli_refuses_a_negative_seed() -> None:
    from typer.testing import CliRunner

    from gymwright.cli import app

    result = CliRunner().invoke(app, ["run", "cake_negotiation", "--seed", "-1"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "Invalid value for '--seed'" in result.output and "greater than or equal to" in result.output


def test_an_unknown_param_gets_did_you_mean_everywhere() -> None:
    from gymwright.errors import SpecError

    with pytest.raises(SpecError) as e:
        compile_spec("cake_negotiation", {"discont": 0.5})
    assert e.value.diagnostics[0].hint.startswith("did you mean `discount`?")
    env_module = compile_spec("cake_negotiation").module
    with pytest.raises(ValueError, match=r"\(did you mean `discount` for `discont`\?\)"):
        env_module.parallel_env(discont=0.5)
    with pytest.raises(SpecError, match="did you mean `discount`"):
        compile_batch("cake_negotiation", {"discont": 0.5}, batch_size=2)
