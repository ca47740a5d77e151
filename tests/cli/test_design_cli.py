"""`gymwright design`, `designs` and `show`: offline, over real HTTP to a fake OpenAI-compatible
server on loopback, and killed half-way (kill -9 and Ctrl-C) with the store checked after."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import yaml
from typer.testing import CliRunner, Result

from gymwright.cli import app
from gymwright.store import Store
from tests.design.test_design import BUTTON, FITS, PLANS, TASK, UNFIT, broken_button
from tests.support.fake_openai_server import FakeOpenAIServer

runner = CliRunner()
PIE = "two robots divide a pie by taking turns making offers, ten rounds at most"


def invoke(*args: str) -> Result:
    return runner.invoke(app, list(args))


def design_json(*args: str) -> tuple[Result, dict]:
    result = invoke("design", *args, "--json")
    return result, json.loads(result.stdout)


# ----------------------------------------------------------------------------- offline
def test_design_offline_json_names_the_template_and_score(tmp_path: Path) -> None:
    out = tmp_path / "pie.yaml"
    result, data = design_json(PIE, "--out", str(out))
    assert result.exit_code == 0, result.output
    assert data["passed"] is True and data["mode"] == "offline" and data["attempts"] == 1
    assert data["template"] == "cake_negotiation" and 0 < data["score"] <= 1
    assert data["spec_path"] == str(out) and isinstance(data["design_id"], int)
    assert "retrieval" in data["explanation"]
    spec = yaml.safe_load(out.read_text())
    assert spec["name"] == "cake_negotiation" and spec["params"]["max_rounds"]["default"] == 10


def test_design_offline_refuses_an_off_library_task(tmp_path: Path) -> None:
    result, data = design_json("a Cournot duopoly where two firms choose quantities")
    assert result.exit_code == 1
    assert data["passed"] is False and data["spec_path"] is None and data["template"] is None
    assert data["best_match"] and data["score"] is not None
    assert "--model" in data["explanation"]


def test_design_refuses_to_overwrite_out(tmp_path: Path) -> None:
    out = tmp_path / "exists.yaml"
    out.write_text("keep me")
    result = invoke("design", PIE, "--out", str(out))
    assert result.exit_code == 1 and "--force" in result.output
    assert out.read_text() == "keep me"


def test_design_spec_mode_without_model_is_a_clear_cli_error() -> None:
    result = invoke("design", PIE, "--mode", "spec")
    assert result.exit_code == 1 and "--mode" in result.output and "--model" in result.output
    assert "Traceback" not in result.output


def test_designs_and_show_list_what_was_designed() -> None:
    _, first = design_json(PIE)
    listing = invoke("designs")
    assert listing.exit_code == 0 and "passed" in listing.stdout and "offline" in listing.stdout
    rows = json.loads(invoke("designs", "--json").stdout)
    assert rows[0]["id"] == first["design_id"] and rows[0]["status"] == "passed"
    shown = invoke("show", str(first["design_id"]))
    assert shown.exit_code == 0, shown.output
    assert "cake_negotiation" in shown.stdout and "final spec" in shown.stdout
    assert "attempt 0: offline" in shown.stdout
    data = json.loads(invoke("show", str(first["design_id"]), "--json").stdout)
    assert data["spec"]["name"] == "cake_negotiation" and len(data["attempts"]) == 1


def test_show_an_unknown_design_is_a_clear_error() -> None:
    result = invoke("show", "999")
    assert result.exit_code == 1 and "999" in result.output and "gymwright designs" in result.output


# ----------------------------------------------------------------------------- over HTTP
def test_template_mode_over_http_with_structured_output_and_a_429() -> None:
    choice = {"template": "stag_hunt", "reason": "hunters choose stag or hare"}
    with FakeOpenAIServer([{"status": 429, "retry_after": 0}, choice, {"params": {}}]) as server:
        result, data = design_json("two hunters choose between a stag and a hare",
                                   "--model", "openai:fake-model", "--base-url", server.base_url,
                                   "--mode", "template")
    assert result.exit_code == 0, result.output
    assert data["passed"] and data["spec_name"] == "stag_hunt" and data["model"] == "openai:fake-model"
    assert data["provider_calls"] == 3 and len(server.requests) == 3
    fmt = server.requests[1]["response_format"]
    assert fmt["type"] == "json_schema" and "stag_hunt" in json.dumps(fmt["json_schema"]["schema"])


def long_doc(spec: dict, chars: int = 6000) -> dict:
    """`spec` with a doc long enough that its JSON is well over 400 tokens (4 chars a token)."""
    sentence = "Both pressers see how often they pressed together and how much time is left. "
    return {**spec, "doc": (sentence * (chars // len(sentence) + 1))[:chars].strip()}


def test_spec_mode_over_http_repairs_and_passes_with_a_server_that_truncates() -> None:
    """Real servers cut a reply at max_tokens: a repair must get a whole spec's budget."""
    big, broken = long_doc(BUTTON), long_doc(broken_button())
    replies = [p["json"] for p in PLANS] + [broken, big, FITS["json"]]
    with FakeOpenAIServer(replies, truncate=True) as server:
        result, data = design_json(TASK, "--model", "openai:fake-model",
                                   "--base-url", server.base_url)
    assert result.exit_code == 0, result.output
    assert data["passed"] and data["verified"] and data["fits_task"] == "yes"
    assert data["attempts"] == 6 and data["spec_name"] == "button_coordination"
    assert data["usage"]["prompt_tokens"] > 0
    spec_req, repair_req = server.requests[3], server.requests[4]
    assert len(json.dumps(big)) > 4 * 400  # the old repair budget would have cut it off
    assert repair_req["max_tokens"] == spec_req["max_tokens"] >= 8192
    assert "togther" in repair_req["messages"][-1]["content"]
    assert "togther" in repair_req["messages"][-2]["content"]  # the previous spec, shown back
    with Store.open(Path(data["store"])) as st:
        rec = st.design(data["design_id"])
    assert [a.stage for a in rec.attempts][-3:] == ["spec", "repair", "review"]


def test_a_reply_cut_off_at_max_tokens_is_named_as_such_and_asked_again() -> None:
    rambling = '{"roles": [{"name": "presser", "count": 2, "goal": "' + "press " * 2000
    replies = [rambling, *[p["json"] for p in PLANS], BUTTON, FITS["json"]]
    with FakeOpenAIServer(replies, truncate=True) as server:
        result, data = design_json(TASK, "--model", "openai:fake-model",
                                   "--base-url", server.base_url)
    assert result.exit_code == 0, result.output
    again = server.requests[1]["messages"][-1]["content"]
    assert "cut off at max_tokens=900" in again and "shorter reply" in again


def test_an_unfit_design_exits_1_and_says_verified_yes_fits_no() -> None:
    replies = [p["json"] for p in PLANS] + [BUTTON, UNFIT["json"]]
    with FakeOpenAIServer(replies) as server:
        result, data = design_json(TASK, "--model", "openai:fake-model",
                                   "--base-url", server.base_url, "--max-repairs", "0")
    assert result.exit_code == 1, result.output
    assert data["status"] == "unfit" and not data["passed"]
    assert data["verified"] is True and data["fits_task"] == "no"
    assert any("pay only when sum(press) == 2" in f for f in data["findings"])
    assert data["spec_path"].endswith(".unfit.yaml")
    rows = json.loads(invoke("designs", "--store", data["store"], "--json").stdout)
    assert rows[0]["status"] == "unfit" and rows[0]["fits_task"] == "no" and rows[0]["verified"]
    shown = invoke("show", str(data["design_id"]), "--store", data["store"])
    assert "fits the task: no" in shown.stdout and "verified: yes" in shown.stdout
    plain = invoke("designs", "--store", data["store"])
    assert "unfit" in plain.stdout


# ----------------------------------------------------------------------------- interrupted
def start_slow_design(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    """A design whose spec reply takes a minute: the stage plans are stored before it."""
    script = tmp_path / "slow.yaml"
    script.write_text(yaml.safe_dump([*PLANS, {"delay": 60, "json": BUTTON}]))
    store = tmp_path / "store"
    env = {**os.environ, "GYMWRIGHT_STORE": str(store), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gymwright.cli", "design", TASK, "--model", f"scripted:{script}",
         "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # a shell's background job (`.ci/run &`) starts with SIGINT ignored, and Python then
        # leaves it ignored: give the child the default, so Ctrl-C reaches it as KeyboardInterrupt
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_for_attempts(store / "gymwright.db", 3, proc)
    return proc, store


def wait_for_attempts(db: Path, n: int, proc: subprocess.Popen[str], limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if db.exists():
            with sqlite3.connect(db) as conn:
                try:
                    if conn.execute("select count(*) from attempts").fetchone()[0] >= n:
                        return
                except sqlite3.OperationalError:
                    pass
        time.sleep(0.1)
    raise AssertionError(f"no {n} attempts in {db} after {limit} s")


def check_store_after(store: Path, status: str) -> None:
    with sqlite3.connect(store / "gymwright.db") as conn:
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    with Store.open(store) as st:
        (summary,) = st.designs()
        assert summary.status == status
        rec = st.design(summary.id)
    assert [a.stage for a in rec.attempts] == ["roles", "dynamics", "rewards"]
    assert all(a.parsed and a.reply for a in rec.attempts)


def test_kill_9_mid_design_leaves_finished_attempts_readable(tmp_path: Path) -> None:
    proc, store = start_slow_design(tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    check_store_after(store, "interrupted")


def test_ctrl_c_mid_design_marks_it_interrupted(tmp_path: Path) -> None:
    proc, store = start_slow_design(tmp_path)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=90)  # generous: CI machines can be loaded
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    check_store_after(store, "interrupted")
