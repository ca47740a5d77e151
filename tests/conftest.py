import os
from collections.abc import Iterator

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(autouse=True)
def _isolated_store_and_model(tmp_path_factory: pytest.TempPathFactory,
                              monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test writes ./.gymwright or picks up the developer's model or API keys."""
    monkeypatch.setenv("GYMWRIGHT_STORE", str(tmp_path_factory.mktemp("store")))
    for name in ("GYMWRIGHT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield
