"""The client of a served gymwright environment, on openenv-core's `EnvClient` (a WebSocket
session per client; `.sync()` for plain calls).

```python
with GymwrightEnvClient(base_url="http://127.0.0.1:8000").sync() as env:
    result = env.reset(seed=0)             # result.observation.rules, .prompt, .agent
    while not result.done:
        result = env.step(GameAction(reply=my_model(result.observation.prompt)))
    print(result.observation.returns, result.observation.invalid)
```
"""

from __future__ import annotations

from typing import Any

from gymwright.serve.extras import missing_extra
from gymwright.serve.openenv_env import GameAction, GameObservation, GameState

try:
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient
except ImportError as e:  # pragma: no cover - the `openenv` extra is missing
    raise missing_extra("openenv-core", "openenv") from e


class GymwrightEnvClient(EnvClient[GameAction, GameObservation, GameState]):
    """An OpenEnv client for `gymwright serve` (`GameAction` in, `GameObservation` out)."""

    def _step_payload(self, action: GameAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[GameObservation]:
        obs = GameObservation(**payload.get("observation", {}), done=bool(payload.get("done", False)),
                              reward=payload.get("reward"))
        return StepResult(observation=obs, reward=payload.get("reward"), done=bool(payload.get("done", False)))

    def _parse_state(self, payload: dict[str, Any]) -> GameState:
        return GameState(**payload)
