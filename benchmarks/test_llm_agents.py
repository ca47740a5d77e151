"""The LLM-agents benchmark's harness: every row it promises, with a stand-in model (an
OpenAI-compatible server on loopback that plays the first legal action) so the test needs no
weights. The figures in benchmarks/README.md come from the real local models."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import llm_agents  # noqa: E402

from tests.support.fake_openai_server import LLM_ENV_VARS  # noqa: E402
from tests.support.text_player_server import PlayerServer, first_legal  # noqa: E402


def test_the_benchmark_writes_every_row_with_its_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LLM_ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    with PlayerServer(first_legal) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        llm_agents.main(["--games", "cake_negotiation,stag_hunt", "--models", "openai:fake", "--episodes", "3",
                         "--ppo-steps", "2048", "--out", str(tmp_path)])
    results = json.loads((tmp_path / "llm_agents.json").read_text())
    assert [g["game"] for g in results] == ["cake_negotiation", "stag_hunt"]
    rows = {r["policy"]: r for r in results[1]["rows"]}
    assert list(rows) == ["random", "scripted always_stag", "scripted always_hare", "ppo", "openai:fake",
                          "openai:fake vs ppo"]
    model = rows["openai:fake"]
    assert model["valid_rate"] == 1.0 and model["decisions"] == 3 * 2 * 5  # 3 episodes, 2 hunters, 5 rounds
    assert model["metric"][0] == rows["scripted always_stag"]["metric"][0] == 1.0  # stag is listed first
    assert rows["openai:fake vs ppo"]["decisions"] == 3 * 5  # only the first hunter asked
    table = (tmp_path / "llm_agents.md").read_text()
    assert model["first_listed"] == 1.0  # the stand-in always names the first legal action
    assert "| openai:fake | 1.000 (30) | 1.00 | 1 (every episode) | 20 (every episode) |" in table
