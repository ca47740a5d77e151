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
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gymwright.errors import GymwrightError
from gymwright.spec.loader import read_data
from gymwright.spec.reference import compact_reference, reference_markdown

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
PROMPTS_VERSION = "4"


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
def spec_reference(compact: bool = False) -> str:
    """The spec-language reference, generated from the pydantic models and function table
    (`compact`: one line per section, for models with a short context)."""
    return compact_reference() if compact else reference_markdown()


def compact_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def example_block(names: list[str], compact: bool = False) -> str:
    """Library specs as compact JSON, one per block: the few-shot examples (`compact`: without
    their prose docs, text templates and scripted baselines, and with one probe)."""
    blocks = []
    for name in names:
        data, _ = read_data(name)
        if compact:
            data = {k: v for k, v in data.items() if k not in ("doc", "text", "baselines")}
            data["probes"] = data.get("probes", [])[:1]
        blocks.append(f"## {name}\n{compact_json(data)}")
    return "\n\n".join(blocks) or "(none)"
