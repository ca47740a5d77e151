"""A verifiers (`MultiTurnEnv`) environment for any gymwright spec: the model plays one agent of
the text game, a fixed policy the others; one dataset row is one seed.

```python
import verifiers as vf
from openai import AsyncOpenAI
from gymwright.serve.verifiers_env import load_environment

env = load_environment(spec="stag_hunt", role="hunter_0", opponent="scripted:always_stag", num_examples=8)
client = vf.OpenAIChatCompletionsClient(AsyncOpenAI(base_url="http://127.0.0.1:8000/v1", api_key="-"))
results = env.evaluate_sync(client, model="my-model", num_examples=8)
[o["reward"] for o in results["outputs"]]        # each: the role's episode return
```

A rollout: the prompt is the role's rules card (system) and its first turn (user); each model
reply is the role's move (`Session.act`: the opponent answers, the game runs on to the role's next
decision) and the next user message its next turn, until the episode ends (`final_env_response`).
The rubric's reward is the role's episode return (`episode_return`, weight 1); `valid_rate` (the
share of the model's replies that named a legal action) and `invalid` are metrics (weight 0).
"""

from __future__ import annotations

from typing import Any

from gymwright.serve.extras import missing_extra
from gymwright.serve.session import Session

try:
    import verifiers as vf
    from datasets import Dataset
except ImportError as e:  # pragma: no cover - the `verifiers` extra is missing
    raise missing_extra("verifiers", "verifiers") from e


def first_messages(session: Session, seed: int) -> list[dict[str, str]]:
    """The role's rules card and first turn in an episode of `seed`."""
    turn = session.reset(seed)
    role = str(session.role)
    first = turn.prompts.get(role, "The episode ended before you were asked to act.")
    return [{"role": "system", "content": session.system(role)}, {"role": "user", "content": first}]


class GymwrightRubric(vf.Rubric):
    """Reward: the role's episode return; metrics: the valid-reply rate and the invalid replies."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_reward_func(self.episode_return, weight=1.0)
        self.add_metric(self.valid_rate)
        self.add_metric(self.invalid)

    async def episode_return(self, state: Any) -> float:
        return float(state.get("gw_return", 0.0))

    async def valid_rate(self, state: Any) -> float:
        return float(state.get("gw_valid_rate", 1.0))

    async def invalid(self, state: Any) -> float:
        return float(state.get("gw_invalid", 0))


class GymwrightEnv(vf.MultiTurnEnv):
    """`spec`'s text game for one model playing `role` (see the module docstring)."""

    def __init__(self, spec: Any = "stag_hunt", params: dict[str, Any] | None = None, *, role: str | None = None,
                 opponent: str = "random", invalid: str = "random", num_examples: int = 100,
                 num_eval_examples: int = 0, seed: int = 0, **kwargs: Any) -> None:
        probe = Session(spec, params, role=role, opponent=opponent, invalid=invalid)
        self.game_args: dict[str, Any] = {"spec": spec, "params": params, "role": role or probe.agents[0],
                                          "opponent": opponent, "invalid": invalid}
        self.role: str = self.game_args["role"]
        seeds = list(range(seed, seed + num_examples + num_eval_examples))
        train, held = seeds[:num_examples], seeds[num_examples:]
        super().__init__(dataset=lambda: self.seed_rows(train),
                         eval_dataset=(lambda: self.seed_rows(held)) if held else None,
                         rubric=GymwrightRubric(), message_type="chat", **kwargs)

    def new_session(self) -> Session:
        return Session(**self.game_args)

    def seed_rows(self, seeds: list[int]) -> Dataset:
        """One row per seed: the role's first messages (the prompt) and the seed (`info`)."""
        session = self.new_session()
        rows = [{"prompt": first_messages(session, s), "info": {"seed": s}, "answer": ""} for s in seeds]
        return Dataset.from_list(rows)

    async def setup_state(self, state: Any, **kwargs: Any) -> Any:
        session = self.new_session()
        state["gw_session"] = session
        first_messages(session, int(state["info"]["seed"]))
        self._record(session, state)
        if session.done:  # the episode ended before the role was asked
            state["final_env_response"] = [vf.UserMessage(content="The episode is over.")]
        return state

    async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
        session: Session = state["gw_session"]
        reply = self.parser.parse_answer(messages) or ""
        turn = session.act({self.role: str(reply)})
        self._record(session, state)
        if turn.done:
            response = [vf.UserMessage(content=f"The episode is over. Your return: {state['gw_return']:g}.")]
            state["final_env_response"] = response
            return response
        return [vf.UserMessage(content=turn.prompts[self.role])]

    def _record(self, session: Session, state: Any) -> None:
        state["gw_return"] = session.returns.get(self.role, 0.0)
        state["gw_valid_rate"] = session.valid_rate
        state["gw_invalid"] = session.decisions["invalid"]
        state["gw_done"] = session.done

    @vf.cleanup
    async def drop_session(self, state: Any) -> None:
        state.pop("gw_session", None)


def load_environment(spec: Any = "stag_hunt", role: str | None = None, opponent: str = "random",
                     params: dict[str, Any] | None = None, **kwargs: Any) -> GymwrightEnv:
    """verifiers' entry point: `spec`'s text game for a model playing `role` (default: the first
    agent) against `opponent` (`random` or `scripted:NAME`). Further keywords: `invalid` (the rule
    for a reply that names no legal action: `random` or `first`), `num_examples` (seeds in the
    dataset, from `seed`), `num_eval_examples`, `seed`, and any of `vf.MultiTurnEnv`'s
    (`max_turns`, ...)."""
    return GymwrightEnv(spec, params, role=role, opponent=opponent, **kwargs)
