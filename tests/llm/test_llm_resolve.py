"""`provider_from_name` (scheme registry) and `choose_model` (where the model comes from)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gymwright.llm import (
    PROVIDERS,
    LLMError,
    ProviderUnavailable,
    ScriptedProvider,
    choose_model,
    provider_from_name,
)
from tests.support.fake_openai_server import LLM_ENV_VARS


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in LLM_ENV_VARS:
        monkeypatch.delenv(var, raising=False)


def test_schemes() -> None:
    assert list(PROVIDERS) == ["openai", "ollama", "anthropic", "scripted", "local", "hf"]
    openai = provider_from_name("openai:gpt-4o", base_url="http://localhost:8000/v1")
    assert (openai.name, openai.model, openai.base_url) == (
        "openai",
        "gpt-4o",
        "http://localhost:8000/v1",
    )
    ollama = provider_from_name("ollama:qwen3:8b")  # the model may contain colons
    assert (ollama.name, ollama.model) == ("ollama", "qwen3:8b")
    claude = provider_from_name("anthropic:claude-x", api_key="sk-ant", timeout=5)
    assert (claude.name, claude.model, claude.timeout) == ("anthropic", "claude-x", 5)


def test_scripted_scheme(tmp_path: Path) -> None:
    path = tmp_path / "cake.yaml"
    path.write_text("- hi\n")
    provider = provider_from_name(f"scripted:{path}")
    assert isinstance(provider, ScriptedProvider) and provider.model == "cake"


def test_missing_keys_surface_at_resolution() -> None:
    with pytest.raises(ProviderUnavailable, match="OPENAI_API_KEY is not set"):
        provider_from_name("openai:gpt-4o")
    with pytest.raises(ProviderUnavailable, match="ANTHROPIC_API_KEY is not set"):
        provider_from_name("anthropic:claude-x")


def test_unknown_scheme_lists_the_known_ones() -> None:
    with pytest.raises(LLMError) as caught:
        provider_from_name("gemini:pro")
    assert caught.value.message == "model 'gemini:pro': unknown provider 'gemini'"
    assert caught.value.hint.startswith(
        "write SCHEME:MODEL with SCHEME one of openai, ollama, anthropic, scripted"
    )


def test_name_without_scheme_or_model() -> None:
    with pytest.raises(LLMError, match="model 'gpt-4o': no provider scheme"):
        provider_from_name("gpt-4o")
    with pytest.raises(LLMError, match="names no model after openai:"):
        provider_from_name("openai:")


def test_a_new_scheme_is_one_dict_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    made = []

    def local(model: str, *, base_url: str | None, api_key: str | None, timeout: float):
        made.append(model)
        return "provider"

    monkeypatch.setitem(PROVIDERS, "local", local)
    assert provider_from_name("local:tiny") == "provider" and made == ["tiny"]


@pytest.mark.parametrize(
    ("cli", "env", "expected"),
    [
        ("openai:gpt-4o", "ollama:qwen3", ("openai:gpt-4o", "--model")),
        (None, "ollama:qwen3", ("ollama:qwen3", "GYMWRIGHT_MODEL")),
        ("", " ollama:qwen3 ", ("ollama:qwen3", "GYMWRIGHT_MODEL")),
        (None, None, (None, "default (offline designer)")),
        ("offline", "ollama:qwen3", (None, "--model")),
        (None, "offline", (None, "GYMWRIGHT_MODEL")),
    ],
)
def test_choose_model_precedence(cli: str | None, env: str | None, expected: tuple) -> None:
    environ: dict[str, str] = {}
    if env is not None:
        environ["GYMWRIGHT_MODEL"] = env
    assert choose_model(cli, environ) == expected


def test_choose_model_reads_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GYMWRIGHT_MODEL", "anthropic:claude-x")
    assert choose_model(None) == ("anthropic:claude-x", "GYMWRIGHT_MODEL")


def test_a_missing_client_package_names_its_extra(monkeypatch) -> None:
    """openai and anthropic are extras: without them a model names the extra to install."""
    import sys

    from gymwright.llm.base import ProviderUnavailable
    from gymwright.llm.resolve import provider_from_name

    for package, name in (("openai", "openai:gpt-x"), ("anthropic", "anthropic:claude-x")):
        monkeypatch.setitem(sys.modules, package, None)  # `import openai` now raises ImportError
        monkeypatch.delitem(sys.modules, f"gymwright.llm.{package}_provider", raising=False)
        with pytest.raises(ProviderUnavailable, match=f"the `{package}` client package is not installed") as e:
            provider_from_name(name)
        assert f"pip install 'gymwright[{package}]'" in e.value.hint


def test_the_offline_path_needs_no_model_client() -> None:
    """The core install has no openai or anthropic package: designing offline must not import them."""
    import subprocess
    import sys

    script = ("import sys; sys.modules['openai'] = None; sys.modules['anthropic'] = None\n"
              "from typer.testing import CliRunner\nfrom gymwright.cli import app\n"
              "r = CliRunner().invoke(app, ['design', 'two agents split a cake by alternating offers'])\n"
              "assert r.exit_code == 0, r.output\nprint('OFFLINE OK')")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert "OFFLINE OK" in proc.stdout, proc.stdout + proc.stderr
