"""The trainee as its own engineer: an LLM engineer answered by the language model being trained.

In a curriculum whose learner is a language model (`gymwright.curriculum.lmcurriculum`), the
engineer's `--model` may name the trainee itself instead of a provider:

- `trainee`: the trainee's current checkpoint (`hf:` of the folder the last stage saved), so the
  model that was just trained reads the evidence of its own stage and proposes the next one;
- `trainee-base`: the model the trainee started from (its `hf:` base, never trained).

`TraineeModels` is what the curriculum and the engineer share: the base and the current
checkpoint (the curriculum moves `current` after every stage); `TraineeProvider` is the provider
the `LLMEngineer` asks, answering each request with the model it names at that moment (loaded in
this process by transformers, as `hf:` is) and keeping a line per answer saying which checkpoint
answered (`answered`), so a run shows that the trained model, not its base, engineered.

"From Trainee to Trainer" makes the same comparison (its RL checkpoint engineers better than its
base model); docs/engineer.md, "The trainee as its own engineer", says what runs here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gymwright.errors import GymwrightError
from gymwright.llm.base import Completion, Request, Usage

TRAINEE_MODELS = {"trainee": "current", "trainee-base": "base"}
"""engineer model names answered by the trainee -> which of its models answers"""
ENGINEER_TOKENS = 256
"""the most tokens an engineer's reply from the trainee may have (the engineer asks for 1,200 to
3,000: a small model rarely closes its JSON, and on a CPU every token costs)"""


def is_trainee_model(model: str | None) -> bool:
    return (model or "").strip() in TRAINEE_MODELS


@dataclass
class TraineeModels:
    """The trainee's base model and its current checkpoint, as `hf:` names (`base`, `current`),
    and the models loaded to answer the engineer (at most the base and the current one)."""

    base: str
    current: str = ""
    device: str = "auto"
    answered: list[dict[str, Any]] = field(default_factory=list)
    _loaded: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.base.startswith("hf:"):
            raise GymwrightError(f"trainee {self.base!r}: the trainee is a model trained here, an hf: model",
                                 path="--trainee", hint="hf:smollm2-135m, hf:PATH (a saved model) or hf:ORG/NAME")
        self.current = self.current or self.base

    def ref(self, which: str) -> str:
        """The `hf:` name of the trainee's `which` model (`base` or `current`)."""
        return self.base if which == "base" else self.current

    def move_to(self, checkpoint: str) -> None:
        """The trainee's current checkpoint is now `checkpoint` (an `hf:` saved model folder)."""
        self.current = checkpoint
        for ref in [r for r in self._loaded if r not in (self.base, self.current)]:
            del self._loaded[ref]  # keep memory to the base and the current checkpoint

    def lend(self, ref: str, lm: Any) -> None:
        """An already loaded model for `ref` (the curriculum's copy of the base): used instead of loading it again."""
        self._loaded[ref] = lm

    def model(self, which: str) -> tuple[str, Any]:
        """(the `hf:` name, the loaded model) of the trainee's `which` model."""
        from gymwright.llm.transformers_provider import load_model

        ref = self.ref(which)
        if ref not in self._loaded:
            self._loaded[ref] = load_model(ref.removeprefix("hf:"), self.device)
        return ref, self._loaded[ref]


def fingerprint(lm: Any) -> float:
    """A number that differs between two models whose top decoder block differs (what training moves first)."""
    layers = getattr(getattr(lm.model, "model", None), "layers", None)
    params = list(layers[-1].parameters()) if layers is not None else list(lm.model.parameters())[-2:]
    return float(sum(p.detach().double().abs().sum().item() for p in params))


class TraineeProvider:
    """A provider answering with the trainee's `which` model (`current` or `base`) as it is when asked."""

    name = "trainee"
    supports_schema = False

    def __init__(self, models: TraineeModels, which: str, max_tokens: int = ENGINEER_TOKENS) -> None:
        self.models, self.which, self.max_tokens = models, which, max_tokens

    @property
    def model(self) -> str:
        return self.models.ref(self.which)

    @model.setter
    def model(self, value: str) -> None:
        raise AttributeError("the trainee's model moves with its curriculum (TraineeModels.move_to), not here")

    def complete(self, request: Request) -> Completion:
        from gymwright.llm.transformers_provider import chat_ids, generate_batch

        ref, lm = self.models.model(self.which)
        prompt = chat_ids(lm, [m.to_dict() for m in request.messages])
        made = generate_batch(lm, [prompt], max_new_tokens=min(request.max_tokens, self.max_tokens),
                              temperature=request.temperature, seed=request.seed)[0]
        text = lm.tokenizer.decode(made.ids, skip_special_tokens=True).strip()
        self.models.answered.append({"which": self.which, "model": ref, "fingerprint": fingerprint(lm),
                                     "prompt_tokens": len(prompt), "reply_tokens": len(made.ids), "reply": text[:400]})
        return Completion(text=text, usage=Usage(len(prompt), len(made.ids)), provider=self.name, model=ref,
                          truncated=not made.finished)


def trainee_engineer(engineer: str, model: str, models: TraineeModels | None, edits: bool = False,
                     max_tokens: int = ENGINEER_TOKENS) -> Any:
    """The LLM engineer answered by the trainee's model `model` (`trainee` or `trainee-base`)."""
    from gymwright.engineer.engineers import LLMEngineer
    from gymwright.llm.client import LLM

    if engineer != "llm":
        raise GymwrightError(f"--model {model} answers the llm engineer; the {engineer} engineer asks no model",
                             path="--model", hint="pass --engineer llm, or drop --model")
    if models is None:
        raise GymwrightError(f"--model {model} means the trainee answers the engineer, but no trainee is given: "
                             "this curriculum trains a policy (PPO), not a language model", path="--model",
                             hint="add --trainee hf:smollm2-135m (a language model trained with GRPO each stage), "
                                  "or name a model provider, e.g. --model openai:gpt-4o-mini")
    which = TRAINEE_MODELS[model.strip()]
    engineer_ = LLMEngineer(LLM(TraineeProvider(models, which, max_tokens), retries=0), edits=edits)
    engineer_.name = f"llm-{model.strip()}"  # llm-trainee, llm-trainee-base: the records say who engineered
    return engineer_
