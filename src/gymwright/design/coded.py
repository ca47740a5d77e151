"""Code mode: the model writes the environment class itself; it runs only in a sandbox.

Stages 1-3 are spec mode's plans (`staged.plan_stages`); stage 4 asks for one JSON object
`{"name", "class", "code"}` whose `code` is a module defining a PettingZoo `ParallelEnv`.
Each candidate is checked by `gymwright.codemode.checks.check_code` (vetting with `ast`,
then PettingZoo's tests, random legal play and determinism in a sandbox worker); on errors
the findings, each with its `code:LINE`, go back to the model with its previous reply, up to
`max_repairs` times. The stored design's "spec" is that JSON object: the module, its class and
its name, content-addressed like every spec. Nothing of the code is imported here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from gymwright.atomic import write_atomic
from gymwright.codemode.checks import check_code
from gymwright.codemode.vet import ALLOWED_IMPORTS, MAX_CODE_CHARS
from gymwright.design.session import DesignSession, DesignStopped, ReplyUnusable
from gymwright.design.staged import plan_stages
from gymwright.diagnostic import info
from gymwright.llm.base import Message
from gymwright.verify.report import VerificationReport

CODE_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["name", "code"],
    "properties": {"name": {"type": "string", "maxLength": 40},
                   "class": {"type": "string", "maxLength": 60},
                   "code": {"type": "string", "maxLength": MAX_CODE_CHARS}}}
CODE_REPLY = 'the whole corrected module as one JSON object {"name", "class", "code"} (not a diff)'
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
CLASS = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,59}$")


def as_code_dict(data: Any) -> dict[str, Any]:
    """The reply as {name, class, code}; ReplyUnusable says what is missing."""
    if not isinstance(data, dict) or not isinstance(data.get("code"), str) or not data["code"].strip():
        raise ReplyUnusable('expected a JSON object with a "code" string holding the module')
    name = str(data.get("name") or "code_env")
    if not NAME.match(name):
        raise ReplyUnusable(f'"name" must be snake_case (a-z, 0-9, _; at most 40), got {name[:60]!r}')
    cls = data.get("class")
    if cls is not None and not (isinstance(cls, str) and CLASS.match(cls)):
        raise ReplyUnusable(f'"class" must be a Python class name, got {str(cls)[:60]!r}')
    return {"name": name, "class": cls, "code": data["code"]} if cls else {"name": name, "code": data["code"]}


def check_candidate(candidate: dict[str, Any], episodes: int) -> VerificationReport:
    """The checks of one candidate, with the sandbox layers that were armed as an info finding."""
    report, layers = check_code(candidate["code"], candidate.get("class"), name=candidate["name"],
                                episodes=episodes)
    if layers:
        report.diagnostics.append(info("load", "", "sandbox layers: " + describe_layers(layers)))
    return report


def describe_layers(layers: dict[str, Any]) -> str:
    limits = layers.get("limits", {})
    landlock, seccomp = layers.get("landlock"), layers.get("seccomp")
    parts = ["UNCONFINED on the user's opt-in (GYMWRIGHT_UNCONFINED_MODEL_CODE)"] if layers.get("unconfined") else []
    parts += ["own namespaces (bubblewrap)" if layers.get("namespaces") else "no namespaces",
              f"Landlock ABI {landlock.get('abi')}" if isinstance(landlock, dict) and landlock.get("armed") else "NO Landlock",
              "seccomp filter" if isinstance(seccomp, dict) and seccomp.get("armed") else "NO seccomp filter",
              f"user {layers.get('user', '?')}",
             "chroot into an empty folder" if layers.get("chroot") else "no chroot",
             "audit hook" if layers.get("audit_hook") else "NO audit hook",
             "restricted builtins" if layers.get("restricted_builtins") else "full builtins",
             "own network namespace" if layers.get("own_network_namespace") else "shared network (no namespace)",
             f"wall clock {layers.get('wall_clock_s')} s per call"]
    if layers.get("rlimits"):
        parts.append("limits " + ", ".join(f"{k} {v[0]}" for k, v in limits.items()))
    return "; ".join(parts)


def run_code_mode(session: DesignSession, task: str) -> tuple[dict[str, Any] | None, VerificationReport | None]:
    plans = plan_stages(session, task)
    allowed = ", ".join(sorted(ALLOWED_IMPORTS - {"__future__"}))
    base = [Message("system", session.prompts.render("code_system")),
            Message("user", session.prompts.render("code", task=task, allowed=allowed, **plans))]
    session.checker = lambda candidate: check_candidate(candidate, session.verify_episodes)
    found, report = session.repair_loop("code", base, CODE_SCHEMA,
                                        lambda text: session.parse_reply(text, as_code_dict),
                                        reply=CODE_REPLY, repair_template="code_repair")
    if found is None and report is None:
        raise DesignStopped(f"the model gave no module that parses in {session.max_repairs + 1} tries",
                            hint="try a stronger model (--model), or raise --max-repairs")
    return found, report


def write_code_file(candidate: dict[str, Any], path: Path, header: str) -> Path:
    """The module as a .py file (atomic), under a comment header."""
    path.parent.mkdir(parents=True, exist_ok=True)
    comment = "".join("# " + line.replace("\r", " ") + "\n" for line in header.splitlines())
    write_atomic(path, comment + candidate["code"].rstrip() + "\n")
    return path


__all__ = ["CODE_SCHEMA", "as_code_dict", "check_candidate", "run_code_mode", "write_code_file"]
