import os
from collections.abc import Iterator

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")


def _seconds(item: pytest.Item) -> float:
    mark = item.get_closest_marker("long")
    return float(mark.args[0]) if mark is not None else 0.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The `long(seconds)` tests first, longest first: with `--dist worksteal` (pyproject's addopts)
    one worker takes each while the others run, and steal, the rest; last in the queue, one would
    run alone at the end of the suite."""
    items.sort(key=lambda item: -_seconds(item))  # a stable sort: the rest stay as collected


@pytest.fixture(autouse=True)
def _isolated_store_and_model(tmp_path_factory: pytest.TempPathFactory,
                              monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test writes ./.gymwright or picks up the developer's model or API keys."""
    monkeypatch.setenv("GYMWRIGHT_STORE", str(tmp_path_factory.mktemp("store")))
    for name in ("GYMWRIGHT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield
