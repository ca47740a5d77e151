"""`gymwright export MODULE.py`: a code-mode design as a file to hand on (and the file
`gymwright design --mode code` writes: `proxy_module`).

The module is read as text (never imported), vetted with `ast` and run through the sandboxed
checks (`checks.check_code`); only a module that passes both is written. By default what is
written is a thin PettingZoo module (`proxy_module`): the model's code is a string literal in
it, run only in gymwright's sandbox worker whenever `parallel_env()` or `env()` is called, so
importing the file runs nothing a model wrote. `raw=True` writes the model's module itself
under a header that says it runs unsandboxed when imported: vetting is a static filter, not a
guarantee of what code does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from gymwright.codemode.checks import check_code
from gymwright.codemode.source import read_code
from gymwright.codemode.vet import vet_source
from gymwright.errors import GymwrightError

RAW_HEADER = """\
# WARNING: a language model wrote this module. gymwright checked it only inside its sandbox, and
# its static vetting is a filter, not a guarantee of what the code does. Imported, this module
# runs UNSANDBOXED, with all the rights of whoever imports it. To run it confined, export it
# without --raw (the default module runs this code in gymwright's sandbox worker).
"""


def checked_module(path: Path, episodes: int = 5) -> tuple[str, str]:
    """The text of the module at `path` and its class, once it passed vetting and the sandboxed checks."""
    source = read_code(path)
    report, _ = check_code(source, name=path.stem, episodes=episodes)
    if not report.passed:
        raise GymwrightError(f"the module did not pass the code-mode checks:\n{report.to_prompt(8)}",
                             path=str(path), hint="fix the findings (code:LINE is the line in the module)")
    env_class = vet_source(source).env_class
    assert env_class is not None  # the checks passed, so vetting found the class
    return source, env_class


def proxy_module(source: str, env_class: str, name: str) -> str:
    """A PettingZoo module whose environments run `source` in gymwright's sandbox worker. Every
    value from the model or the user reaches it as a `repr()` literal."""
    sha = hashlib.sha256(source.encode("utf-8")).hexdigest()
    return f'''"""A code-mode environment a language model wrote, written by gymwright (design or export).

Nothing a model wrote runs in the process that imports this file: the model's module is the
string MODEL_CODE, and it runs only in gymwright's sandbox worker (kernel namespaces or Landlock,
a seccomp filter, resource limits; where the kernel gives none of them, creating an environment
is refused). `parallel_env()` and `env()` give PettingZoo environments (parallel and AEC) whose
every call goes over a pipe to that worker; close them to stop it. Needs gymwright installed.
"""

from gymwright.codemode.exported import aec_env, sandboxed_env

NAME = {name!r}
CLASS = {env_class!r}
SHA256 = {sha!r}
MODEL_CODE = {source!r}


def parallel_env(**params):
    """A sandboxed instance (PettingZoo ParallelEnv); `close()` stops its worker. `params`: the
    keyword arguments of the class's __init__ (numbers or bools), checked before it is made."""
    return sandboxed_env(MODEL_CODE, CLASS, SHA256, NAME, params)


def env(**params):
    """The same as a PettingZoo AEC env."""
    return aec_env(parallel_env(**params))
'''


def exported_module(path: Path, raw: bool = False, episodes: int = 5) -> str:
    """What `gymwright export` writes for the code-mode module at `path`."""
    source, env_class = checked_module(path, episodes)
    return RAW_HEADER + source if raw else proxy_module(source, env_class, path.stem)


__all__ = ["RAW_HEADER", "checked_module", "exported_module", "proxy_module"]
