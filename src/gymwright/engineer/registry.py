"""The engineers a curriculum can use, by name (`ENGINEERS`, what `gymwright evolve --engineer`
takes). A new engineer is a class with `propose` (the `engineers.Engineer` protocol) and one entry
here: its name and a factory from the command line's model and `--edits`.

The LLM engineer's model may be the trainee itself (`--model trainee` or `trainee-base`,
`gymwright.engineer.trainee`): then `make_engineer` is given the trainee's models, and refuses the
name without them.

This module imports no engineer until one is made, so the CLI reads the names cheaply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gymwright.errors import GymwrightError

if TYPE_CHECKING:
    from gymwright.engineer.engineers import Engineer
    from gymwright.engineer.trainee import TraineeModels


def _heuristic(model: str | None, edits: bool) -> Engineer:
    from gymwright.engineer.engineers import HeuristicEngineer

    return HeuristicEngineer(edits=edits)


def _fixed(model: str | None, edits: bool) -> Engineer:
    from gymwright.engineer.engineers import FixedEngineer

    return FixedEngineer()


def _llm(model: str | None, edits: bool) -> Engineer:
    from gymwright.engineer.engineers import LLMEngineer
    from gymwright.llm import LLM, choose_model, provider_from_name

    chosen, _ = choose_model(model)
    if chosen is None:
        raise GymwrightError("--engineer llm needs a model", path="--model",
                             hint="pass --model (e.g. openai:gpt-4o-mini or local:qwen2.5-coder-0.5b) or set GYMWRIGHT_MODEL")
    return LLMEngineer(LLM(provider_from_name(chosen)), edits=edits)


ENGINEERS: dict[str, Callable[[str | None, bool], Engineer]] = {
    "heuristic": _heuristic,  # the default: moves the knobs the evidence says move the task metric
    "fixed": _fixed,  # the first stage's environment throughout (the baseline)
    "llm": _llm,  # a model reads the evidence and proposes
}


def make_engineer(name: str, model: str | None = None, edits: bool = False,
                  trainee: TraineeModels | None = None) -> Engineer:
    """The engineer `name` (GymwrightError naming the choices for an unknown one); a `model` that
    names the trainee (`trainee`, `trainee-base`) is answered by `trainee`'s models."""
    from gymwright.engineer.trainee import is_trainee_model, trainee_engineer

    factory = ENGINEERS.get(name)
    if factory is None:
        raise GymwrightError(f"unknown engineer {name!r}", path="--engineer", hint=f"one of {', '.join(ENGINEERS)}")
    if is_trainee_model(model):
        engineer: Engineer = trainee_engineer(name, str(model), trainee, edits)
        return engineer
    return factory(model, edits)
