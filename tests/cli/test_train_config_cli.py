"""Every `TrainConfig` field reaches the CLI and a `--config` file: options generated from the
dataclass, file errors with file, line and key, precedence, the saved config.yaml, the report's
config section, `--device`; the real commands (`train`, `evolve`, `demo`), real short runs."""

from __future__ import annotations

import dataclasses
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner, Result

from gymwright.cli import app
from gymwright.cli.config_options import (
    BY_NAME,
    FIELDS,
    KINDS,
    NO_DEFAULT,
    STAGE_FIELDS,
    ConfigError,
    read_config_file,
    read_fields,
)
from gymwright.cli.train import TRAIN_FIELDS
from gymwright.errors import GymwrightError
from gymwright.train import TrainConfig
from gymwright.train import checkpoint as ck
from gymwright.train.config import check_device
from tests.support.paths import ROOT

runner = CliRunner()
TINY = {"total_steps": 128, "num_envs": 8, "rollout_len": 8, "minibatches": 2, "epochs": 1}

# a value other than the default for every kind, as the CLI writes it and as a file holds it
SAMPLE = {
    "int": ("3", 3), "float": ("0.25", 0.25), "str": ("tanh", "tanh"), "str | Path": ("runs/x", "runs/x"),
    "str | Path | None": ("runs/y", "runs/y"), "tuple[int, ...]": ("16,8", [16, 8]),
    "dict[str, str]": ("bargainer[1]=even_split", {"bargainer[1]": "even_split"}),
    "str | Path | dict[str, Any]": (None, "stag_hunt"), "dict[str, Any] | list[dict[str, Any]]": (None, {"rounds": 2}),
    "list[int] | None": (None, [3, 5]),
}
EXPECTED = {"tuple[int, ...]": (16, 8)}


def sample(field: str) -> tuple[str | None, Any, Any]:
    """(CLI text, file value, the field's value) for `field`; bools flip their default."""
    f = BY_NAME[field]
    if f.annotation == "bool":
        return f"--{'no-' if f.default else ''}{f.option[2:]}", not f.default, not f.default
    text, value = SAMPLE[f.annotation]
    return text, value, EXPECTED.get(f.annotation, value)


def invoke(*args: str) -> Result:
    return runner.invoke(app, [str(a) for a in args])


def parsed(command: str, args: list[str]) -> dict[str, Any]:
    """The values the real command's parser gives its generated options (nothing runs)."""
    cmd = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    ctx = cmd.make_context(command, args)
    return {name.removeprefix("cfg_"): v for name, v in ctx.params.items() if name.startswith("cfg_")}


# --------------------------------------------------------------------------- one source of truth
def test_the_option_table_is_the_dataclass() -> None:
    real = dataclasses.fields(TrainConfig)
    assert [f.name for f in FIELDS] == [f.name for f in real]
    for f in real:
        mine = BY_NAME[f.name]
        assert mine.doc, f"TrainConfig.{f.name} has no docstring (its --help would be empty)"
        if f.default is dataclasses.MISSING:
            assert mine.default is NO_DEFAULT
        else:
            assert mine.default == f.default, f.name
    assert BY_NAME["seed"].doc.startswith("seed of torch")  # its docstring is no longer orphaned
    assert BY_NAME["init_from"].doc.startswith("warm start")


def test_a_field_of_a_new_type_fails_loudly() -> None:
    @dataclasses.dataclass
    class Odd:
        x: complex = 1j
        """a new kind of field"""

    with pytest.raises(TypeError, match="no CLI kind for 'complex'; add one to KINDS"):
        read_fields(Odd)
    assert set(KINDS) >= {f.annotation for f in FIELDS}


def test_every_field_is_an_option_of_train_and_settable_from_the_cli() -> None:
    train = typer.main.get_command(app).commands["train"]  # type: ignore[attr-defined]
    names = {opt for p in train.params for opt in (*p.opts, *p.secondary_opts)}
    for f in dataclasses.fields(TrainConfig):
        if f.name in ("spec", "params", "copies"):  # the SPEC argument and --param; copies go with a file's params
            continue
        assert BY_NAME[f.name].option in names, f"TrainConfig.{f.name} has no train option"
        text, _, value = sample(f.name)
        args = [text] if BY_NAME[f.name].annotation == "bool" else [BY_NAME[f.name].option, text]
        got = parsed("train", ["cake_negotiation", *args])[f.name]
        assert BY_NAME[f.name].kind.check(got) == value, f.name
    assert set(TRAIN_FIELDS) == {f.name for f in dataclasses.fields(TrainConfig)} - {"spec", "params", "copies"}


def test_every_field_is_settable_from_a_yaml_file(tmp_path: Path) -> None:
    every = tuple(f.name for f in dataclasses.fields(TrainConfig))
    values = {f.name: sample(f.name)[1] for f in dataclasses.fields(TrainConfig)}
    path = tmp_path / "all.yaml"
    path.write_text(yaml.safe_dump(values))
    got = read_config_file(path, every, "train")
    assert got == {f.name: sample(f.name)[2] for f in dataclasses.fields(TrainConfig)}
    TrainConfig(**got)  # a config the dataclass takes


def test_evolve_and_demo_take_the_stage_fields() -> None:
    for command, first in (("evolve", ["cake_negotiation"]), ("demo", [])):
        got = parsed(command, [*first, "--algo", "mappo", "--seed", "4", "--tensorboard", "--hidden", "32,32", "--ent-coef", "0.001"])
        assert (got["algo"], got["seed"], got["tensorboard"], got["hidden"], got["ent_coef"]) == ("mappo", 4, True, "32,32", 0.001)
        assert set(got) == {*STAGE_FIELDS, "file"}
    assert "total_steps" not in STAGE_FIELDS and "out" not in STAGE_FIELDS  # a curriculum sets those per stage


# --------------------------------------------------------------------------- file errors
def test_file_errors_name_the_file_the_line_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text("ent_coef: 0.001\nent_coeff: 0.01\nhidden: [128, big]\nlr: 3e-4\nnum_envs: 1.5\nresume: yes\n")
    with pytest.raises(ConfigError) as e:
        read_config_file(path, TRAIN_FIELDS, "train")
    found = {(d.path, d.message, d.hint) for d in e.value.diagnostics}
    assert (f"{path}:2", "unknown key 'ent_coeff'", "did you mean 'ent_coef'?") in found
    assert any(p == f"{path}:3" and m.startswith("hidden: expected layer sizes") and "[128, 'big']" in m for p, m, _ in found)
    assert any(p == f"{path}:5" and m == "num_envs: expected a whole number, got 1.5 (float)" for p, m, _ in found)
    assert len(found) == 3  # lr: 3e-4 (a string to YAML 1.1) is a number; `yes` is YAML 1.1's true
    path.write_text("lr: [1\n")
    with pytest.raises(ConfigError, match="YAML syntax error") as e:  # as a spec file's
        read_config_file(path, TRAIN_FIELDS, "train")
    assert e.value.path.startswith(f"{path}:")
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="a config file is a mapping of TrainConfig fields, got a list"):
        read_config_file(path, TRAIN_FIELDS, "train")
    path.write_text("total_steps: 1000\n")
    with pytest.raises(ConfigError, match="total_steps: `gymwright evolve` sets this itself"):
        read_config_file(path, STAGE_FIELDS, "evolve")


def test_cli_file_errors_are_clean(tmp_path: Path) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text("gama: 0.9\n")
    result = invoke("train", "cake_negotiation", "--config", path)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"{path}:1: unknown key 'gama'" in result.output and "did you mean 'gamma'?" in result.output
    missing = invoke("train", "cake_negotiation", "--config", tmp_path / "nope.yaml")
    assert missing.exit_code == 1 and "cannot read the config file" in missing.output
    bad = invoke("train", "cake_negotiation", "--hidden", "12,x")
    assert bad.exit_code == 2 and "Invalid value for '--hidden'" in bad.output
    assert invoke("train", "--num-envs", "8").exit_code == 1  # no spec: neither SPEC nor `spec:` in a file


# --------------------------------------------------------------------------- real runs
def test_cli_over_file_over_defaults_reaches_the_trainer_and_is_saved(tmp_path: Path) -> None:
    path = tmp_path / "cfg.yaml"
    file_values = {**TINY, "spec": "cake_negotiation", "params": {"discount": 0.8}, "gamma": 1.0,
                   "ent_coef": 0.05, "hidden": [16, 16], "activation": "tanh", "anneal_lr": False}
    path.write_text(yaml.safe_dump(file_values))
    out = tmp_path / "run"
    result = invoke("train", "--config", path, "--ent-coef", "0.001", "-p", "max_rounds=4", "--seed", "2",
                    "--out", out, "--json")
    assert result.exit_code == 0, result.output
    assert "settings:" in result.output and f"gamma=1.0 ({path})" in result.output and "ent_coef=0.001 (--ent-coef)" in result.output
    config = ck.load(out)["config"]
    want = {**file_values, "params": {"discount": 0.8, "max_rounds": 4}, "ent_coef": 0.001, "seed": 2, "out": str(out)}
    assert {k: config[k] for k in want} == want
    assert config["lr"] == TrainConfig.lr and config["clip"] == TrainConfig.clip  # untouched: the defaults
    saved = out / "config.yaml"
    assert json.loads(result.stdout)["config"] == str(saved)
    back = read_config_file(saved, tuple(BY_NAME), "train")
    assert {k: back[k] for k in want} == {**want, "hidden": (16, 16)}
    assert not list(tmp_path.glob("run/.config.yaml.*.tmp"))  # written atomically, nothing left over


def test_the_documented_mapf_settings_are_reachable_from_the_cli(tmp_path: Path) -> None:
    """docs/training.md: MAPF valid 0.933 with 128x128 hidden layers, entropy 0.001, 512 copies, lr 1e-3."""
    doc = (ROOT / "docs" / "training.md").read_text().splitlines()
    line = next(ln for ln in doc if ln.startswith("gymwright train mapf_frozenlake"))  # the command shown there
    args = shlex.split(line)[1:]
    args[args.index("--steps") + 1] = "128"  # the same settings, a short run
    out = tmp_path / "mapf"
    result = invoke(*args, "--num-envs", "8", "--rollout-len", "8", "--minibatches", "2", "--out", out)
    assert result.exit_code == 0, result.output
    assert ck.load(out)["params"][0] == {"size": 4, "n_agents": 2, "slip": 0, "view_radius": 3}
    saved = ck.load(out)
    assert saved["hidden"] == [128, 128] and saved["config"]["ent_coef"] == 0.001
    assert saved["config"]["lr"] == 1e-3
    weights = [v for k, v in saved["model"].items() if k.endswith("weight")]
    assert weights and weights[0].shape[0] == 128


@pytest.mark.slow
def test_evolve_passes_the_config_to_every_stage(tmp_path: Path) -> None:
    path = tmp_path / "stage.yaml"
    path.write_text("hidden: [16, 16]\nrollout_len: 8\nminibatches: 2\nepochs: 1\n")
    out = tmp_path / "evolve"
    result = invoke("evolve", "mapf_frozenlake", "-k", "1", "--steps", "1000", "-e", "fixed", "-p", "size=3",
                    "-p", "n_agents=2", "--algo", "mappo", "--seed", "3", "--tensorboard", "--num-envs", "8",
                    "--config", path, "-o", out, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    stage = ck.load(Path(data["stages"][0]["checkpoint"]))["config"]
    assert (stage["algo"], stage["seed"], stage["tensorboard"], stage["hidden"], stage["num_envs"]) == ("mappo", 3, True, [16, 16], 8)
    assert list((out / "stage0" / "tb").glob("events.out.tfevents.*"))
    saved = yaml.safe_load((out / "config.yaml").read_text())
    assert saved["algo"] == "mappo" and saved["hidden"] == [16, 16] and saved["seed"] == 3
    assert read_config_file(out / "config.yaml", STAGE_FIELDS, "evolve")["num_envs"] == 8  # evolve reads it back


def test_the_report_shows_the_training_config(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert invoke("train", "cake_negotiation", *[f"--{k.replace('_', '-')}={v}" for k, v in TINY.items()],
                  "--ent-coef", "0.002", "--out", out).exit_code == 0
    result = invoke("report", out, "--no-verify", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert "Training config" in data["sections"]
    page = Path(data["report"]).read_text()
    section = page[page.index('id="config"'):page.index('id="evaluation"')]
    assert "<strong><code>0.002</code></strong>" in section and "<td><code>0.01</code></td>" in section  # value, default
    assert "<code>gamma</code></td><td><code>0.99</code>" in section  # a default, not bold


# --------------------------------------------------------------------------- --device
def test_device_is_checked(tmp_path: Path) -> None:
    import torch

    check_device("cpu")
    with pytest.raises(GymwrightError, match="unknown device 'tpu'"):
        check_device("tpu")
    with pytest.raises(GymwrightError, match="unknown device 'cpu:1'"):
        check_device("cpu:1")
    out = tmp_path / "run"
    result = invoke("train", "cake_negotiation", "--device", "cpu", *[f"--{k.replace('_', '-')}={v}" for k, v in TINY.items()],
                    "--out", out)
    assert result.exit_code == 0, result.output
    assert ck.load(out)["config"]["device"] == "cpu"
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the refusal below is for machines without one")
    for command in (["train", "cake_negotiation"], ["evolve", "cake_negotiation"], ["demo"]):
        refused = invoke(*command, "--device", "cuda", "--out", tmp_path / "gpu")
        assert refused.exit_code == 1 and "Traceback" not in refused.output, refused.output
        assert "device 'cuda'" in refused.output and "train on cpu" in refused.output
        assert not (tmp_path / "gpu" / "checkpoint.pt").exists()


@pytest.mark.slow  # two stages with demonstrations and two trials (CI runs it with -m slow)
def test_evolve_takes_designer_levers_and_trials(tmp_path: Path) -> None:
    out = tmp_path / "evolve"
    result = invoke("evolve", "mapf_frozenlake", "-k", "2", "--steps", "4096", "-e", "heuristic", "-p", "size=3",
                    "-p", "n_agents=2", "--num-envs", "16", "--rollout-len", "8", "--lever", "park_cost=0.5",
                    "--lever", "imitation=0.1", "--lever", "end_on:conflicts=1", "--lever", "partners=0.25",
                    "--demo-episodes", "6", "--trials", "2", "--trial-steps", "512", "-o", out, "--json")
    assert result.exit_code == 0, result.output
    first, second = json.loads(result.stdout)["stages"]
    assert first["levers"] == {"park_cost": 0.5, "imitation": 0.1, "end_on:conflicts": 1.0, "partners": 0.25}
    assert first["demo_env_steps"] > 0
    config = ck.load(Path(first["checkpoint"]))["config"]
    trained = config["spec"]
    assert "park_in_way" in {t["name"] for t in trained["rewards"]["walker"]}  # the game it trained on
    assert "count(conflict)" in trained["terminate"] and config["partners"] == 0.25
    assert len(second["trials"]) == 2 and second["trial_env_steps"] > 0  # judged on the goal's validation cells
    assert set(second["validation"]["cells"]) == {"2 ag 4x4 w 0.50", "2 ag 4x4 w 0.75", "2 ag 5x5 w 0.50",
                                                  "2 ag 5x5 w 0.75"}
