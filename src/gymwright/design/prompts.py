"""The designer's prompt templates: files in `prompts/`, versioned, hashed, filled with `$names`.

The templates are plain text with `string.Template` placeholders (`$task`, `$reference`, ...),
so JSON braces in them need no escaping. `PROMPTS_VERSION` is bumped by hand when their meaning
changes; `PromptSet.hash` (sha256 over every file's name and text) is recorded with each design,
so a stored design says exactly which prompts produced it.

The spec-language reference in the prompts is generated from the code
(`gymwright.spec.reference`), never written here by hand.
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from gymwright.errors import GymwrightError
from gymwright.spec import model as m
from gymwright.spec.loader import read_data
from gymwright.spec.model import EnvSpec
from gymwright.spec.reference import MECHANICS, compact_line, compact_reference, prompt_reference

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
PROMPTS_VERSION = "7"
# The examples of a full spec prompt share this many characters (the nearest first; a second
# one only when it fits): with the reference of a non-grid task, the prompt stays under 25 KB.
EXAMPLES_BUDGET = 9_000


@dataclass(frozen=True)
class PromptSet:
    """Every template by name (file stem), the version, and the hash of the set."""

    templates: dict[str, str]
    version: str
    hash: str

    def render(self, name: str, **values: Any) -> str:
        """Fill template `name`; a missing value is a gymwright bug, reported as such."""
        try:
            text = self.templates[name]
        except KeyError:
            raise GymwrightError(f"no prompt template `{name}` in {PROMPT_DIR}",
                                 hint=f"templates: {', '.join(sorted(self.templates))}") from None
        try:
            return string.Template(text).substitute({k: str(v) for k, v in values.items()}).strip()
        except (KeyError, ValueError) as e:
            raise GymwrightError(f"prompt template `{name}` needs a value for {e}",
                                 path=str(PROMPT_DIR / f"{name}.md")) from None


@cache
def load_prompts(folder: Path = PROMPT_DIR) -> PromptSet:
    files = sorted(folder.glob("*.md"))
    if not files:
        raise GymwrightError(f"no prompt templates found in {folder}",
                             hint="reinstall gymwright; the package data is missing")
    digest = hashlib.sha256(PROMPTS_VERSION.encode())
    templates = {}
    for f in files:
        text = f.read_text()
        templates[f.stem] = text
        digest.update(f"\0{f.name}\0{text}".encode())
    return PromptSet(templates, PROMPTS_VERSION, digest.hexdigest())


@cache
def spec_reference(compact: bool = False, mechanics: frozenset[str] = frozenset()) -> str:
    """The spec-language reference, generated from the pydantic models and function table
    (`compact`: one line per section, for models with a short context; else the tables, with
    the `mechanics` modules' sections only when asked for)."""
    return compact_reference() if compact else prompt_reference(sorted(mechanics))


PLANNING_SECTIONS = (m.Param, m.Const, m.Var, m.Choice, m.Turns, m.Feature, m.RewardTerm, m.Metric,
                     m.BaselineRule)


@cache
def planning_shapes() -> str:
    """The shapes a plan must fit, one line per section (generated from the spec models)."""
    return "\n".join(compact_line(model) for model in PLANNING_SECTIONS)


def compact_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def readable(data: Any) -> str:
    """A spec (or any JSON value) as block YAML: what the examples and repairs show a model."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100).rstrip()


def spec_keys() -> str:
    """The top-level keys of a spec, in the schema's order (generated from `EnvSpec`)."""
    return ", ".join(EnvSpec.model_fields)


def mechanics_of(name: str) -> frozenset[str]:
    """The mechanics modules (`grid`, `channel`) library spec `name` uses."""
    data, _ = read_data(name)
    return frozenset(m for m in MECHANICS if data.get(m))


def trimmed(data: dict[str, Any]) -> dict[str, Any]:
    """An example without its prose doc and with at most two probes (to fit a budget)."""
    out = {k: v for k, v in data.items() if k != "doc"}
    if out.get("probes"):
        out["probes"] = out["probes"][:2]
    return out


def without_prose(data: Any, top: bool = True) -> Any:
    """`data` without its prose (every `doc` string, the top-level `description` and `tags`): a
    short context keeps the example's structure, which is what it shows of the language."""
    if isinstance(data, dict):
        drop = ("description", "tags") if top else ()
        return {k: without_prose(v, False) for k, v in data.items()
                if k not in drop and not (k == "doc" and isinstance(v, str))}
    if isinstance(data, list):
        return [without_prose(v, False) for v in data]
    return data


def example_block(names: Iterable[str], compact: bool = False,
                  budget: int = EXAMPLES_BUDGET) -> str:
    """Library specs as readable YAML, one per block, nearest first: the few-shot examples.
    The first is always shown (trimmed if it alone is over `budget`); each further one only if
    it fits the budget whole or trimmed. `compact` (a short context): without prose (`without_prose`),
    text templates and scripted baselines, and with one probe, as compact JSON."""
    blocks: list[str] = []
    used = 0
    for name in names:
        data, _ = read_data(name)
        if compact:
            data = {k: v for k, v in data.items() if k not in ("text", "baselines")}
            data["probes"] = data.get("probes", [])[:1]
            blocks.append(f"## {name}\n{compact_json(without_prose(data))}")
            continue
        text = readable(data)
        if used + len(text) > budget:
            text = readable(trimmed(data))
        if blocks and used + len(text) > budget:
            continue
        blocks.append(f"## {name}\n{text}")
        used += len(text)
    return "\n\n".join(blocks) or "(none)"
