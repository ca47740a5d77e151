"""`hf:MODEL`: a chat model run in this process by Hugging Face transformers (the `lm` extra).

`MODEL` is one of

- a local GGUF model gymwright knows (`hf:smollm2-135m`, `hf:qwen2.5-coder-0.5b`): the file
  `local_models.resolve_model_file` verifies, loaded by transformers' GGUF reader (de-quantized
  to float32), or any `hf:PATH.gguf`;
- a saved model folder (`hf:runs/lm/model`, e.g. a `gymwright train-lm` checkpoint);
- a Hugging Face hub name already in the local cache (`hf:Qwen/Qwen3-4B`): nothing is
  downloaded (offline), so fetch it once with `huggingface-cli download` first.

The device is cuda when one is present, else cpu (`GYMWRIGHT_HF_DEVICE=cpu|cuda` overrides); on
cuda the weights are bfloat16, on cpu float32. `complete` answers one request; `complete_many`
answers a list in left-padded batches (one `generate` per group of equal sampling settings), which
an LLM policy uses when several agents or games wait at once. `generate_batch` is the batched
generation itself, on token ids, shared with `gymwright.lmtrain` (its rollouts need the ids and
the sampling log-probabilities). Structured output is not enforced (`supports_schema = False`).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymwright.llm.base import Completion, LLMError, ProviderUnavailable, Request, Usage
from gymwright.llm.local_models import KNOWN, resolve_model_file

DEVICE_ENV = "GYMWRIGHT_HF_DEVICE"
EXTRA_HINT = "pip install 'gymwright[lm]' (transformers, accelerate, gguf, trl)"


def require(module: str) -> Any:
    """Import `module` (torch, transformers, gguf), or a ProviderUnavailable naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ProviderUnavailable(f"hf: models need the `{module}` package, which is not installed",
                                  hint=EXTRA_HINT) from e


def pick_device(device: str = "auto") -> str:
    """`cuda` or `cpu`: `auto` means cuda when torch sees one (or `GYMWRIGHT_HF_DEVICE`)."""
    torch = require("torch")
    choice = (device or "auto").strip().lower()
    if choice == "auto":
        choice = os.environ.get(DEVICE_ENV, "").strip().lower() or ("cuda" if torch.cuda.is_available() else "cpu")
    if choice not in ("cpu", "cuda") and not choice.startswith("cuda:"):
        raise ProviderUnavailable(f"unknown device {device!r}", hint="use auto, cpu or cuda (or cuda:N)")
    if choice.startswith("cuda") and not torch.cuda.is_available():
        raise ProviderUnavailable(f"device {choice} asked for, but torch sees no CUDA GPU here",
                                  hint="use --device cpu, or install a CUDA build of torch on a GPU machine")
    return choice


def model_source(ref: str) -> tuple[str, dict[str, Any]]:
    """(what to pass to `from_pretrained`, extra keyword arguments) for `hf:REF`."""
    path = Path(ref).expanduser()
    if ref.lower() in KNOWN or ref.endswith(".gguf"):
        gguf = resolve_model_file(ref)
        return str(gguf.parent), {"gguf_file": gguf.name}
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ProviderUnavailable(f"hf:{ref}: the folder has no config.json, so it is no saved model",
                                      hint="pass the folder save_pretrained wrote (a train-lm run's model/)")
        return str(path), {}
    if ref.count("/") == 1 and not path.exists():
        return ref, {"local_files_only": True}
    raise ProviderUnavailable(
        f"hf:{ref}: neither a known local model, a .gguf file, a saved model folder nor a hub name ORG/NAME",
        hint=f"known local models: {', '.join(KNOWN)}; or a folder with config.json; or ORG/NAME in the HF cache")


@dataclass
class LoadedModel:
    """A causal LM and its tokenizer (left padding, a pad token), on `device`."""

    ref: str
    model: Any
    tokenizer: Any
    device: str

    @property
    def parameters(self) -> int:
        return int(sum(p.numel() for p in self.model.parameters()))


def load_model(ref: str, device: str = "auto") -> LoadedModel:
    """Load `hf:REF` (see the module doc) for generation and training."""
    torch = require("torch")
    transformers = require("transformers")
    if ref.lower() in KNOWN or ref.endswith(".gguf"):
        require("gguf")
    where = pick_device(device)
    source, kwargs = model_source(ref)
    dtype = torch.bfloat16 if where.startswith("cuda") else torch.float32
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # loading's progress bars: stderr stays clean (--json)
            tokenizer = transformers.AutoTokenizer.from_pretrained(source, **kwargs)
            model = transformers.AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **kwargs)
    except OSError as e:
        hint = ("download it once (huggingface-cli download NAME) or pass a local folder"
                if kwargs.get("local_files_only") else "check that the files are a complete saved model")
        raise ProviderUnavailable(f"hf:{ref}: cannot load the model: {str(e).splitlines()[0]}", hint=hint) from e
    if "gguf_file" in kwargs:
        plain_weights(model)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if getattr(tokenizer, "chat_template", None) is None:
        raise ProviderUnavailable(f"hf:{ref}: the tokenizer has no chat template",
                                  hint="use an instruct/chat model (its tokenizer carries the template)")
    return LoadedModel(ref, model.to(dtype).to(where), tokenizer, where)


def plain_weights(model: Any) -> None:
    """A GGUF model's weights are de-quantized on loading (float tensors): drop the GGUF quantizer
    mark it keeps, so that it trains and saves as the plain model it now is."""
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


@dataclass(frozen=True)
class Generated:
    """One generated reply: its token ids, each token's sampling log-probability, and whether it
    ended with the end-of-sequence token (False: cut off at `max_new_tokens`)."""

    ids: list[int]
    logprobs: list[float]
    finished: bool


def generate_batch(
    lm: LoadedModel, prompts: Sequence[Sequence[int]], *, max_new_tokens: int,
    temperature: float = 0.0, seed: int | None = None,
) -> list[Generated]:
    """Generate a reply for each prompt (token ids) in one left-padded `generate`; greedy at
    temperature 0, else sampled (seeded when `seed` is given)."""
    torch = require("torch")
    if not prompts:
        return []
    pad = lm.tokenizer.pad_token_id
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in prompts], device=lm.device)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=lm.device)
    sample = temperature > 0
    if sample and seed is not None:
        torch.manual_seed(seed)
    with torch.no_grad():
        out = lm.model.generate(
            input_ids=ids, attention_mask=mask, max_new_tokens=max_new_tokens, do_sample=sample,
            temperature=temperature if sample else None, top_p=1.0 if sample else None, top_k=0 if sample else None,
            pad_token_id=pad, output_scores=True, return_dict_in_generate=True)
    scores = lm.model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
    return [_one(row[width:].tolist(), scores[i].tolist(), eos_ids(lm)) for i, row in enumerate(out.sequences)]


def eos_ids(lm: LoadedModel) -> set[int]:
    """The token ids that end a reply (the generation config's and the tokenizer's)."""
    found = lm.model.generation_config.eos_token_id
    ids = set(found if isinstance(found, list) else [found] if found is not None else [])
    if lm.tokenizer.eos_token_id is not None:
        ids.add(lm.tokenizer.eos_token_id)
    return ids


def _one(ids: list[int], logprobs: list[float], eos: set[int]) -> Generated:
    """A generated row cut after its first end-of-sequence token (the rest is padding)."""
    for i, token in enumerate(ids):
        if token in eos:
            return Generated(ids[: i + 1], logprobs[: i + 1], True)
    return Generated(ids, logprobs, False)


def chat_ids(lm: LoadedModel, messages: Sequence[dict[str, str]]) -> list[int]:
    """The token ids of a chat, rendered by the model's template with the assistant turn opened."""
    text = lm.tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
    return list(lm.tokenizer(text, add_special_tokens=False)["input_ids"])


class TransformersProvider:
    """`hf:MODEL` (see the module doc). The model loads on the first request."""

    name = "hf"
    supports_schema = False

    def __init__(self, model: str, *, device: str = "auto") -> None:
        self.model = model
        self.device = device
        self._lm: LoadedModel | None = None

    @property
    def lm(self) -> LoadedModel:
        if self._lm is None:
            self._lm = load_model(self.model, self.device)
        return self._lm

    def complete(self, request: Request) -> Completion:
        return self.complete_many([request])[0]

    def complete_many(self, requests: Sequence[Request]) -> list[Completion]:
        """Answer every request; requests with equal sampling settings share one batch."""
        out: list[Completion | None] = [None] * len(requests)
        groups: dict[tuple[float, int, int | None], list[int]] = {}
        for i, r in enumerate(requests):
            groups.setdefault((r.temperature, r.max_tokens, r.seed), []).append(i)
        for (temperature, max_tokens, seed), members in groups.items():
            prompts = [chat_ids(self.lm, [m.to_dict() for m in requests[i].messages]) for i in members]
            try:
                made = generate_batch(self.lm, prompts, max_new_tokens=max_tokens, temperature=temperature, seed=seed)
            except RuntimeError as e:  # out of memory, a bad input: final, not worth a retry
                raise LLMError(f"hf:{self.model}: generation failed: {str(e).splitlines()[0]}",
                               hint="lower max tokens or the batch, or use a smaller model") from e
            for i, prompt, g in zip(members, prompts, made, strict=True):
                out[i] = self._completion(prompt, g)
        return [c for c in out if c is not None]

    def _completion(self, prompt: list[int], g: Generated) -> Completion:
        text = self.lm.tokenizer.decode(g.ids, skip_special_tokens=True)
        return Completion(text=text.strip(), usage=Usage(len(prompt), len(g.ids)), provider=self.name,
                          model=self.model, truncated=not g.finished)
