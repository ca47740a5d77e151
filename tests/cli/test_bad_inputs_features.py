"""Bad inputs to the features added since the spec's audit, each answered clearly (issue 39, items 10-11).

Each class of bad input has a test: a `--config` file, a training value on the command line or in
Python, a seed, a `--param` value, a `--npc` role, an evolve option, an engineer's reply (a spec
edit's JSON Patch, a whole spec, a repair, a proposal) and a grid the spec cannot fill. Each must
end in an error that names where (the file and line, the option, the spec path, the patch
operation) and what, with exit code 1 (2 for a usage error typer reports) and no traceback; a bad
engineer reply keeps the stage, and the record says why.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from gymwright.compile import compile_spec
from gymwright.engineer import LLMEngineer
from gymwright.engineer.edits import SpecEdit, apply_patch, edit_from_reply, realize_edit
from gymwright.engineer.evidence import Evidence, Knob, StageEvidence
from gymwright.engineer.mixture import Bucket
from gymwright.errors import GymwrightError, SpecError
from gymwright.llm.client import LLM
from gymwright.llm.scripted import ScriptedProvider
from gymwright.spec import limits
from gymwright.spec.loader import LIBRARY_DIR, read_data
from gymwright.store import Store
from gymwright.train.config import ConfigValueError, TrainConfig
from gymwright.verify.validate import validate
from tests.support.cli_clean import assert_clean, invoke
from tests.support.paths import ROOT

CAKE, _ = read_data("cake_negotiation")
BROKEN = {"op": "add", "path": "/metrics/long_game", "value": {"expr": "roundz >= 2", "reduce": "last"}}
QUICK = ["--total-steps", "64", "--num-envs", "4", "--rollout-len", "4"]  # were anything to train, it would be short


def config(tmp_path: Path, text: str | bytes, name: str = "cfg.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def train_with(path: Path, *more: Any) -> Result:
    return invoke("train", "cake_negotiation", "--config", path, "-o", path.parent / "run", *more)


# =========================================================================== config files: reading
def test_a_latin1_config_file_names_the_line_and_the_byte(tmp_path: Path) -> None:
    path = config(tmp_path, b"lr: 0.001\n# caf\xe9\n")
    assert_clean(train_with(path), f"{path}:2", "not UTF-8 text: byte 0xe9", "save it as UTF-8")


def test_a_binary_config_file(tmp_path: Path) -> None:
    path = config(tmp_path, bytes(range(256)))
    assert_clean(train_with(path), f"{path}:2", "a binary file, not text")


def test_a_config_file_past_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = config(tmp_path, "seed: " + "[" * 100_000 + "]" * 100_000 + "\n")  # the audit's 100,000-deep nesting
    assert_clean(train_with(path), str(path), f"config file is 200,007 bytes; the limit is {limits.MAX_FILE_BYTES:,}")


@pytest.mark.parametrize("text", ["seed: " + "[" * 40 + "]" * 40, "seed: " + "{a: " * 40 + "1" + "}" * 40,
                                  "[" * 40 + "]" * 40])
def test_a_config_file_nested_too_deep(tmp_path: Path, text: str) -> None:
    path = config(tmp_path, text + "\n")
    assert_clean(train_with(path), f"{path}:1:", f"the config is nested more than {limits.MAX_NESTING_DEPTH} levels deep",
                 "a config file is flat")


def test_a_one_kilobyte_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    lines, previous = ["a: &a [x, x, x, x, x, x, x, x, x]"], "a"
    for name in "bcdefghijkl":  # each level repeats the one before nine times: 9^12 values in all
        lines.append(f"{name}: &{name} [{', '.join(['*' + previous] * 9)}]")
        previous = name
    path = config(tmp_path, "\n".join([*lines, f"seed: *{previous}"]) + "\n")
    assert path.stat().st_size < 1024
    start = time.perf_counter()
    assert_clean(train_with(path), f"{path}:", f"the config expands to more than {limits.MAX_SPEC_NODES:,} nodes",
                 "YAML aliases")
    assert time.perf_counter() - start < 10  # the audit saw 49 s and 3.5 GB before a MemoryError


@pytest.mark.parametrize(("text", "said"), [
    ("lr: [1\n", "YAML syntax error"),
    ("lr: 0.1\x07\n", "the control character #x0007"),
    ("lr: !!python/object:os.system ls\n", "could not determine a constructor"),
    ("lr: *nowhere\n", "found undefined alias"),
    ("seed: " + "9" * 5000 + "\n", "a value cannot be read"),
])
def test_a_config_file_that_is_not_yaml_data(tmp_path: Path, text: str, said: str) -> None:
    path = config(tmp_path, text)
    flat = assert_clean(train_with(path), str(path), said)
    assert "set_int_max_str_digits" not in flat  # not Python's advice to raise its own limit


def test_a_config_file_that_is_not_a_mapping_or_not_a_file(tmp_path: Path) -> None:
    assert_clean(train_with(config(tmp_path, "- 1\n- 2\n")), "a config file is a mapping of TrainConfig fields, got a list")
    assert_clean(train_with(tmp_path / "nope.yaml"), "cannot read the config file: No such file or directory")
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    assert_clean(train_with(folder), f"{folder}: not a regular file")


def test_config_file_errors_under_json_are_one_object(tmp_path: Path) -> None:
    path = config(tmp_path, b"lr: 0.001\n# caf\xe9\n")
    result = invoke("train", "cake_negotiation", "--config", path, "--json")
    assert_clean(result)
    reply = json.loads(result.output)
    assert reply["ok"] is False and reply["path"] == f"{path}:2" and "not UTF-8" in reply["message"]


# =========================================================================== config files and options: values
OUT_OF_RANGE = [  # (field, value in the file, the range said)
    ("num_envs", "0", "num_envs: must be a whole number from 1 to 65,536, got 0"),
    ("rollout_len", "0", "rollout_len: must be a whole number from 1 to 65,536, got 0"),
    ("lr", "-0.5", "lr: must be a finite number from 0 to 1, got -0.5"),
    ("lr", "1.5", "lr: must be a finite number from 0 to 1, got 1.5"),
    ("gamma", "1.5", "gamma: must be a finite number from 0 to 1, got 1.5"),
    ("gae_lambda", "-1", "gae_lambda: must be a finite number from 0 to 1"),
    ("clip", "0", "clip: must be a finite number above 0"),
    ("max_grad_norm", "0", "max_grad_norm: must be a finite number above 0"),
    ("ent_coef", "-1", "ent_coef: must be a finite number of at least 0"),
    ("epochs", "0", "epochs: must be a whole number from 1 to 1,000"),
    ("total_steps", "0", "total_steps: must be a whole number from 1"),
    ("threads", str(2**40), "threads: must be a whole number from 1 to 256"),
    ("hidden", "[1000000000]", "hidden: each layer size must be a whole number from 1 to 4,096, got 1000000000"),
    ("seed", str(2**70), f"seed: must be a whole number from 0 to {2**63 - 1:,}, got {2**70}"),
    ("seed", "-1", "seed: must be a whole number from 0"),
    ("num_envs", "1.5", "num_envs: expected a whole number, got 1.5 (float)"),
    ("lr", ".nan", "lr: expected a finite number, got nan"),
    ("out", '"a\\0b"', "out: expected a path"),
]


@pytest.mark.parametrize(("key", "value", "said"), OUT_OF_RANGE, ids=lambda x: str(x)[:20])
def test_a_config_file_value_out_of_its_range_names_file_line_key_and_range(tmp_path: Path, key: str, value: str,
                                                                          said: str) -> None:
    path = config(tmp_path, f"total_steps: 64\n{key}: {value}\n")
    line = 1 if key == "total_steps" else 2
    assert_clean(train_with(path), f"{path}:{line}: {said}", f"hint: {key} is ")


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--num-envs", "0", "num_envs: must be a whole number from 1 to 65,536, got 0"),
    ("--rollout-len", "0", "rollout_len: must be a whole number from 1"),
    ("--lr", "-0.5", "lr: must be a finite number from 0 to 1"),
    ("--lr", "nan", "expected a finite number, got nan"),
    ("--hidden", "99999999999", "hidden: each layer size must be a whole number from 1 to 4,096"),
    ("--hidden", "²", "expected layer sizes"),
    ("--threads", str(2**40), "threads: must be a whole number from 1 to 256"),
    ("--seed", str(2**70), "seed: must be a whole number from 0"),
    ("--seed", str(2**128), "seed: must be a whole number from 0"),
])
def test_a_training_option_out_of_its_range_is_a_usage_error(option: str, value: str, said: str) -> None:
    result = invoke("train", "cake_negotiation", option, value)
    assert_clean(result, f"Invalid value for '{option}'", said, code=2)
    as_json = json.loads(invoke("train", "cake_negotiation", option, value, "--json").output)
    assert as_json["ok"] is False and as_json["path"].startswith(option) and said in as_json["message"]


@pytest.mark.parametrize(("given", "where", "said"), [
    ({"minibatches": 100_000}, "--minibatches", "minibatches: 100,000 minibatches of a rollout of 16 env steps"),
    ({"seed": 2**63 // 4}, "--seed", "seed x 4 + b, past the envs' largest seed"),
    ({"num_envs": 65_536, "rollout_len": 65_536}, "--num-envs", "env steps per update; the limit is 4,194,304"),
])
def test_settings_in_range_that_cannot_train_together(given: dict[str, int], where: str, said: str) -> None:
    options = {"num_envs": 4, "rollout_len": 4, **given}
    args = [a for k, v in options.items() for a in ("--" + k.replace("_", "-"), str(v))]
    flat = assert_clean(invoke("train", "cake_negotiation", *args, "-o", "unused"), said)
    assert where in flat or "rollout_len" in flat


def test_the_curriculum_reads_its_config_file_the_same_way(tmp_path: Path) -> None:
    path = config(tmp_path, "num_envs: 0\n")
    assert_clean(invoke("evolve", "cake_negotiation", "--config", path, "-o", tmp_path / "run"),
                 f"{path}:1: num_envs: must be a whole number from 1")


@pytest.mark.parametrize(("given", "said"), [
    ({"num_envs": 0}, "num_envs: must be a whole number from 1"),
    ({"rollout_len": 0}, "rollout_len: must be a whole number from 1"),
    ({"lr": -0.5}, "lr: must be a finite number from 0 to 1"),
    ({"lr": math.nan}, "lr: must be a finite number from 0 to 1"),
    ({"seed": 2**70}, "seed: must be a whole number from 0"),
    ({"hidden": (10**9,)}, "hidden: each layer size must be"),
    ({"num_envs": "4"}, "num_envs: must be a whole number from 1 to 65,536, got '4'"),
    ({"seed": 2**62, "num_envs": 128}, "seed: seed 4,611,686,018,427,387,904 with 128 copies"),
])
def test_a_train_config_made_in_python_is_checked_too(given: dict[str, Any], said: str) -> None:
    with pytest.raises(ConfigValueError) as e:
        TrainConfig(**given)
    assert said in e.value.message and e.value.path.startswith("TrainConfig.")
    assert TrainConfig(num_envs=4, rollout_len=4, seed=2**63 // 4 - 1).batch_steps == 16  # the largest seed that fits


# =========================================================================== other values on the command line
@pytest.mark.parametrize("command", [["run", "cake_negotiation"], ["verify", "cake_negotiation"],
                                     ["play", "cake_negotiation", "--policy", "scripted:even_split"]])
@pytest.mark.parametrize("seed", [str(2**70), str(2**128), "-1"])
def test_a_seed_outside_the_envs_range_is_a_usage_error(command: list[str], seed: str) -> None:
    assert_clean(invoke(*command, "--seed", seed), "Invalid value for '--seed'", code=2)


@pytest.mark.parametrize("command", [["run", "cake_negotiation"], ["play", "cake_negotiation", "--policy", "scripted:even_split"]])
def test_episodes_whose_seeds_run_past_the_range(command: list[str]) -> None:
    assert_clean(invoke(*command, "--seed", str(2**63 - 2), "-n", "3"),
                 "3 episodes from seed 9,223,372,036,854,775,806 would use seeds up to 9,223,372,036,854,775,808",
                 "give a seed of at most 9,223,372,036,854,775,805", code=2)


@pytest.mark.parametrize(("value", "said"), [
    ("9" * 5000, "a number this long cannot be read"),
    ("[" * 50_000, f"the value is nested more than {limits.MAX_NESTING_DEPTH} levels deep"),
    ("[1]", "a param value is a number or a bool, got '[1]'"),
])
def test_a_param_value_is_read_within_the_limits(value: str, said: str) -> None:
    flat = assert_clean(invoke("run", "cake_negotiation", "-p", f"discount={value}"),
                        "Invalid value for '--param'", "discount", said, code=2)
    assert len(flat) < 2000  # a long value is not quoted whole


@pytest.mark.parametrize("device", ["cuda:²", "cuda:" + "9" * 5000, "tpu"])
def test_a_device_that_is_no_device(device: str) -> None:
    flat = assert_clean(invoke("train", "cake_negotiation", "--device", device, *QUICK, "-o", "unused"),
                        "unknown device", "use cpu (the default), cuda, or cuda:N")
    assert len(flat) < 2000


@pytest.mark.parametrize(("args", "said"), [
    (["--band", "nan", "nan"], "band: nan nan is not a band: give two finite numbers, the lower first"),
    (["--band", "0.9", "0.1"], "band: 0.9 0.1 is not a band"),
    (["--knob", "nosuch"], "knobs: knob 'nosuch' is not a param of cake_negotiation"),
    (["--metric", "nosuch"], "task_metric: task metric 'nosuch' is not a metric of cake_negotiation"),
    (["--mix", "discount=²"], "params.discount"),
    (["--lever", "park_cost"], "levers: lever 'park_cost' is not available for spec 'cake_negotiation'"),
    (["--lever", "weight:pay=x"], "--lever: --lever 'weight:pay=x': 'x' is not a number"),
    (["--lever", "imitation=0.1"], "levers.imitation: the imitation lever needs a demonstrator"),
    (["--lever", "partners"], "levers: lever 'partners' is not available for spec 'cake_negotiation'"),
])
def test_an_evolve_option_that_names_nothing_of_the_spec(tmp_path: Path, args: list[str], said: str) -> None:
    assert_clean(invoke("evolve", "cake_negotiation", *args, "-k", "2", "--steps", "1000", "--num-envs", "4",
                        "-o", tmp_path / "run"), said)
    assert not (tmp_path / "run" / "stage0").exists()  # refused before any training


# =========================================================================== NPC roles
@pytest.mark.parametrize(("npc", "said"), [
    ("nobody=random", "the spec has no role 'nobody'"),
    ("bargainer=nosuch", "`nosuch` is no scripted baseline of the spec"),
    ("bargainer[99]=random", "role bargainer has 2 agents"),
    ("bargainer[²]=random", "is not an agent index"),
    ("bargainer[1:0]=random", "selects none of role bargainer's 2 agents"),
    ("bargainer=/nonexistent/run", "no run folder or checkpoint"),
    ("x", "expected NAME=VALUE pairs"),
])
def test_a_bad_npc_role_names_the_option(npc: str, said: str) -> None:
    result = invoke("train", "cake_negotiation", "--npc", npc, *QUICK, "-o", "unused")
    assert_clean(result, "--npc", said, code=2 if npc == "x" else 1)


def test_a_bad_npc_in_a_config_file_names_the_file(tmp_path: Path) -> None:
    path = config(tmp_path, "total_steps: 64\nnum_envs: 4\nnpc: {nobody: random}\n")
    assert_clean(train_with(path), str(path), "the spec has no role 'nobody'")


# =========================================================================== the engineer's replies
def test_a_patch_index_of_five_thousand_digits_or_a_superscript_fails_the_edit(tmp_path: Path) -> None:
    for index in ("9" * 5000, "²", "01", "3", "-1"):
        with Store.open(tmp_path / "store.db") as store:
            out = realize_edit(CAKE, SpecEdit("r", [{"op": "remove", "path": f"/actions/bargainer/{index}"}]), store=store)
        assert out.status == "failed" and out.spec == CAKE and out.spec_sha == out.parent_sha, index
        (finding,) = out.findings
        assert finding.startswith("edit.patch[0]: /actions/bargainer/") and "of 3 (0 to 2)" in finding, finding
        assert ("outside the list" if index == "3" else "is not a list index") in finding
        assert len(finding) < 500  # a 5,000-digit index is not quoted whole
    added = apply_patch(CAKE, [{"op": "add", "path": "/actions/bargainer/3", "value": {"name": "walk_away"}}])
    assert added["actions"]["bargainer"][-1]["name"] == "walk_away"  # the end of a list is an index `add` takes


@pytest.mark.parametrize(("edit", "said"), [
    ({"reason": "r", "patch": "add a rule"}, "a patch is a list of 1 to 20 operations"),
    ({"reason": "r", "patch": [{"op": "remove", "path": "/metrics/agreed"}] * 21}, "a patch is a list of 1 to 20"),
    ({"reason": 5, "patch": []}, "not an object with a `reason`"),
    ({"reason": "r", "spec": "[" * 5000}, f"the reply is nested more than {limits.MAX_NESTING_DEPTH} levels deep"),
    ({"reason": "r", "spec": '{"name": ' + "9" * 5000 + "}"}, "a value cannot be read"),
    ({"reason": "r", "spec": [1, 2]}, "a whole spec is a mapping, got [1, 2]"),
    ({"reason": "r", "patch": [{"op": "remove", "path": "/x" * 100_000}]}, "characters of text"),
    ({"reason": "r"}, "an edit has either a `patch` or a whole `spec`"),
    ({"reason": "r", "patch": [BROKEN], "spec": CAKE}, "not both and not neither"),
])
def test_a_malformed_edit_in_a_reply_is_refused_naming_it(edit: dict[str, Any], said: str) -> None:
    with pytest.raises(GymwrightError) as e:
        edit_from_reply(edit, "the reply's edit")
    assert said in str(e.value) and e.value.path.startswith("the reply's edit"), (e.value.path, str(e.value))


@pytest.mark.parametrize(("patch", "said"), [
    ([5], "edit.patch[0]: an operation is a JSON object, got 5"),
    ([{"op": "move", "path": "/metrics"}], "edit.patch[0]: op 'move' is not one of add, remove, replace"),
    ([{"op": "remove", "path": "metrics"}], "edit.patch[0]: path 'metrics' is not a JSON pointer"),
    ([{"op": "remove", "path": "/name/x"}], "edit.patch[0]: /name/x: its parent is a value"),
])
def test_a_patch_that_does_not_apply_keeps_the_spec(tmp_path: Path, patch: list[Any], said: str) -> None:
    with Store.open(tmp_path / "store.db") as store:
        out = realize_edit(CAKE, SpecEdit("r", patch), store=store)
    assert out.status == "failed" and out.spec == CAKE and out.findings[0].startswith(said), out.findings


def test_a_whole_spec_that_is_no_mapping_keeps_the_spec(tmp_path: Path) -> None:
    with Store.open(tmp_path / "store.db") as store:
        out = realize_edit(CAKE, SpecEdit("r", spec=[1, 2]), store=store)  # type: ignore[arg-type]  # a model's reply
    assert out.status == "failed" and out.findings == [
        "edit.spec: a whole spec is a mapping (`gymwright: 1`, `name`, `agents`, ...), got a list"]


def scripted(tmp_path: Path, replies: list[dict[str, Any]], name: str = "replies.yaml") -> tuple[LLM, ScriptedProvider]:
    script = tmp_path / name
    script.write_text(yaml.safe_dump(replies))
    provider = ScriptedProvider(script)
    return LLM(provider, retries=0), provider


@pytest.mark.parametrize(("replies", "said"), [
    ([{"json": [1, 2]}, {"json": {"a": 1}}], "no usable spec: the reply is not a whole spec (a JSON object with "
                                             "`agents`, `actions`, ...): got a JSON object with the keys ['a']"),
    ([{"json": [1, 2]}, {"text": "I cannot do that."}], "no usable spec: no JSON found in the reply"),
    ([{"error": "connection"}], "the repair stopped: TransientLLMError: scripted connection error"),
    ([], "the repair stopped: LLMError: scripted replies exhausted"),
])
def test_a_repair_reply_that_is_no_spec_keeps_the_spec_and_is_recorded(tmp_path: Path, replies: list[dict[str, Any]],
                                                                        said: str) -> None:
    llm, _ = scripted(tmp_path, replies)
    with Store.open(tmp_path / "store.db") as store:
        out = realize_edit(CAKE, SpecEdit("count long games", [BROKEN]), store=store, llm=llm, max_repairs=2)
        assert out.status == "failed" and out.spec == CAKE and out.spec_sha == out.parent_sha
        assert out.findings[0].startswith("metrics.long_game.expr: undefined name `roundz`")
        assert any(said in f for f in out.findings), out.findings
        assert out.findings[-1].startswith("still failing after") and "the stage keeps its spec" in out.findings[-1]
        assert store.design(out.design_id).status == "failed"  # the repair conversation is on record


def stage_evidence(buckets: int = 1) -> StageEvidence:
    discount = Knob("discount", 0.9, 0.5, 1.0, False, 0.3, 0.05)
    params = [{"max_rounds": 10, "discount": 0.9}, {"max_rounds": 4, "discount": 0.9}][:buckets]
    rows = [(Bucket(p, 1 / buckets, f"b{i}"), Evidence("cake_negotiation", p, "agreed", 0.99, (0.4, 0.8), knobs=[discount]))
            for i, p in enumerate(params)]
    return StageEvidence("cake_negotiation", "agreed", (0.4, 0.8), rows)


def test_a_proposal_with_values_that_are_not_finite_numbers_keeps_those_params(tmp_path: Path) -> None:
    llm, _ = scripted(tmp_path, [{"text": '{"params": {"discount": NaN}, "rationale": "r"}'},
                                 {"text": '{"params": {"discount": Infinity}, "rationale": "r"}'},
                                 {"text": '{"buckets": {"b0": {"params": {}, "share": Infinity}, "b1": {"params": {}, '
                                          '"share": NaN}}, "rationale": "r"}'}])
    eng = LLMEngineer(llm)
    for _ in range(2):
        p = eng.propose_stage(stage_evidence())
        assert p.mixture.buckets[0].params["discount"] == 0.9 and "(not a finite number)" in p.rationale
    two = eng.propose_stage(stage_evidence(2))
    assert [b.share for b in two.mixture.buckets] == [0.5, 0.5]  # the shares stay as they were


@pytest.mark.parametrize(("text", "said"), [
    ('{"params": {"discount": ' + "9" * 5000 + '}, "rationale": "r"}', "the engineer's reply holds a number too long"),
    ('{"params": {"discount": 0.9}, "rationale": "' + "x" * 200_000 + '"}', "characters of text"),
])
def test_a_proposal_too_large_to_read_is_an_error_the_curriculum_records(tmp_path: Path, text: str, said: str) -> None:
    llm, _ = scripted(tmp_path, [{"text": text}])
    with pytest.raises(GymwrightError, match=said):
        LLMEngineer(llm).propose_stage(stage_evidence())


def test_an_edit_not_usable_in_a_proposal_leaves_the_proposal(tmp_path: Path) -> None:
    edit = {"reason": "r", "spec": "[" * 5000}
    llm, _ = scripted(tmp_path, [{"json": {"params": {"discount": 0.8}, "rationale": "harder", "edit": edit}}])
    p = LLMEngineer(llm, edits=True).propose_stage(stage_evidence())
    assert p.edit is None and p.mixture.buckets[0].params["discount"] == 0.8
    assert "the edit was not usable" in p.rationale and "nested more than" in p.rationale


@pytest.mark.slow  # two short stages (about 5 s on 2 shared cores)
def test_evolve_with_a_bad_engineer_reply_keeps_the_stage_and_records_it(tmp_path: Path) -> None:
    index = {"reason": "fewer actions", "patch": [{"op": "remove", "path": "/actions/bargainer/" + "9" * 5000}]}
    script = tmp_path / "replies.yaml"
    script.write_text(yaml.safe_dump([{"json": {"params": {"discount": 0.9}, "rationale": "r", "edit": index}}]))
    run = tmp_path / "run"
    result = invoke("evolve", "cake_negotiation", "-e", "llm", "-m", f"scripted:{script}", "--edits", "-k", "2",
                    "--steps", "1024", "--num-envs", "16", "-p", "max_rounds=10", "--knob", "discount", "-o", run, "--json")
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    first, second = (json.loads(x) for x in (run / "curriculum.jsonl").read_text().splitlines())
    assert second["edit"]["status"] == "failed" and second["spec_sha"] == first["spec_sha"]
    assert "is not a list index of 3" in second["edit"]["summary"] and "keeps its spec" in second["edit"]["summary"]


# =========================================================================== a grid the spec cannot fill
PREDATOR_PREY = (LIBRARY_DIR / "predator_prey.yaml").read_text()
WALL = '    wall:  {char: "#", color: [70, 60, 50], density: wall_density, blocked: true, passable: false}'
SIZE = "  size:          {default: 7, min: 4, max: 15, type: int, doc: side of the square arena}"
PREDATORS = "  num_predators: {default: 2, min: 1, max: 6, type: int, doc: number of predators}"


@pytest.mark.parametrize(("old", "new", "path", "said"), [
    (WALL, WALL.replace("density: wall_density", "density: 1.5"), "grid.tiles.wall.density",
     "density is 1.5; it is the share of the cells of this kind, 0..1"),
    ("  wall_density:  {default: 0.1, min: 0.0, max: 0.2,", "  wall_density:  {default: 0.1, min: 0.0, max: 1.5,",
     "grid.tiles.wall.density", "density may be 0..1.5"),
    (WALL, WALL + '\n    pit:   {char: "o", density: 0.9, blocked: true}', "grid.tiles",
     "the densities of wall, pit may reach 1.1 together"),
    (PREDATORS, PREDATORS.replace("default: 2, min: 1, max: 6", "default: 10, min: 1, max: 10"), "grid", None),
])
def test_a_grid_the_spec_cannot_fill_is_refused_by_validate(tmp_path: Path, old: str, new: str, path: str,
                                                            said: str | None) -> None:
    text = PREDATOR_PREY.replace(old, new)
    if said is None:  # 10 predators and the prey on a 2x2 grid
        text = text.replace(SIZE, SIZE.replace("default: 7, min: 4", "default: 2, min: 2"))
        said = "a 2x2 grid has 4 cells but the spec has 11 agents"
    assert text != PREDATOR_PREY
    spec = tmp_path / "grid.yaml"
    spec.write_text(text)
    found = [d for d in validate(str(spec)) if d.severity.value == "error"]
    assert [(d.stage, d.path) for d in found] == [("static", path)] and said in found[0].message, found
    assert_clean(invoke("validate", spec), path, said)
    with pytest.raises(SpecError, match=said):  # and compile says the same, not "this is a gymwright bug"
        compile_spec(str(spec))


def test_a_grid_instance_too_small_for_its_agents_is_refused_at_its_params(tmp_path: Path) -> None:
    spec = tmp_path / "grid.yaml"
    spec.write_text(PREDATOR_PREY.replace(SIZE, SIZE.replace("min: 4", "min: 2")))
    assert_clean(invoke("run", spec, "-p", "size=2", "-p", "num_predators=6"), "grid: a 2x2 grid has 4 cells but the "
                 "spec has 7 agents")


# =========================================================================== docs
def test_the_spec_language_doc_knows_code_mode() -> None:
    doc = (ROOT / "docs" / "spec-language.md").read_text()
    assert "no code mode yet" not in doc and "--mode code" in doc
