"""The recipes of docs/interop.md's "Language-model agents: OpenEnv and verifiers" run as written
(each code block after a `<!-- lm-recipe: NAME -->` line, and its `gymwright serve` line) against
a stand-in OpenAI-compatible model server on 127.0.0.1, and give what the same game played
directly through `TextGame` gives."""

from __future__ import annotations

import contextlib
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from gymwright.textgame import TextGame
from tests.support.fake_openai_server import FakeOpenAIServer
from tests.support.paths import ROOT

with contextlib.suppress(ImportError):  # their imports take seconds: paid at collection, not in a test
    import openenv.core.env_server  # noqa: F401
    import verifiers.legacy.envs.multiturn_env  # noqa: F401

DOC = ROOT / "docs" / "interop.md"
REPLIES = ["stag", "nonsense", "hare", "[0]", "stag"]  # valid by name, invalid, valid, by index, valid


def recipes() -> dict[str, str]:
    """name -> source of every `lm-recipe` block of the page."""
    found = re.findall(r"^<!-- lm-recipe: ([\w-]+) -->\n```python\n(.*?)^```$", DOC.read_text(), flags=re.M | re.S)
    return dict(found)


def serve_line() -> list[str]:
    """The `gymwright serve ...` command of the page's bash block, as argv."""
    line = re.search(r"^```bash\n(gymwright serve .*?)(?:\s+#.*)?$", DOC.read_text(), flags=re.M)
    assert line is not None, "docs/interop.md lost its `gymwright serve` line"
    return shlex.split(line.group(1))


def run(name: str, tmp_path, monkeypatch, server: FakeOpenAIServer) -> dict:
    """Execute recipe `name` in `tmp_path` with the model endpoint at `server`; its globals."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "fake")
    namespace: dict = {"__name__": f"recipe_{name}"}
    exec(compile(recipes()[name], f"{DOC.name}:{name}", "exec"), namespace)  # noqa: S102 - our own docs
    return namespace


def direct(seed: int, rounds: int = 5) -> TextGame:
    """stag_hunt played directly: hunter_0 replies REPLIES in turn, hunter_1 always hunts the stag."""
    game = TextGame("stag_hunt", {"rounds": rounds})
    prompts, turn = game.reset(seed=seed), 0
    while not game.done:
        prompts = game.step({a: REPLIES[turn % 5] if a == "hunter_0" else "stag" for a in prompts})[0]
        turn += 1
    return game


def test_the_section_has_the_recipes_this_file_runs():
    assert set(recipes()) == {"openenv", "verifiers"}
    assert serve_line()[:3] == ["gymwright", "serve", "stag_hunt"]


def test_openenv_recipe(tmp_path, monkeypatch, capsys):
    pytest.importorskip("openenv")
    with FakeOpenAIServer(REPLIES) as server:
        ns = run("openenv", tmp_path, monkeypatch, server)
    obs, game = ns["result"].observation, direct(0)
    assert ns["result"].done and obs.returns == game.returns and obs.invalid == game.stats["invalid"] == 1
    assert [m["role"] for m in server.requests[-1]["messages"]][:3] == ["system", "user", "assistant"]
    assert "80% valid replies" in capsys.readouterr().out


def test_verifiers_recipe(tmp_path, monkeypatch):
    pytest.importorskip("verifiers")
    with FakeOpenAIServer(REPLIES * 2) as server:
        ns = run("verifiers", tmp_path, monkeypatch, server)
    outputs = sorted(ns["results"]["outputs"], key=lambda o: o["info"]["seed"])
    assert [o["reward"] for o in outputs] == [direct(0).returns["hunter_0"], direct(1).returns["hunter_0"]]
    assert [o["metrics"]["valid_rate"] for o in outputs] == pytest.approx([0.8, 0.8])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"gymwright serve exited with {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"gymwright serve did not answer on {url} in {timeout:.0f} s")


@pytest.mark.slow
def test_the_serve_command_of_the_page_serves_the_game_to_openenvs_client():
    pytest.importorskip("openenv")
    from gymwright.serve.openenv_client import GymwrightEnvClient
    from gymwright.serve.openenv_env import GameAction

    port = free_port()
    argv = [sys.executable, "-m", "gymwright.cli", *serve_line()[1:], "--port", str(port), "--param", "rounds=5"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc)
        with GymwrightEnvClient(base_url=url).sync() as env:
            result, turn = env.reset(seed=0), 0
            while not result.done:
                result = env.step(GameAction(reply=REPLIES[turn % 5]))
                turn += 1
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert result.observation.returns == direct(0).returns and result.observation.invalid == 1
