"""Code mode: the model writes the environment class itself; it runs only in a sandbox.

Stages 1-3 are spec mode's plans (`staged.plan_stages`); stage 4 asks for one JSON object
`{"name", "class", "code", "scenarios"}` whose `code` is a module defining a PettingZoo
`ParallelEnv` and whose `scenarios` are worked cases by action index (`codemode/scenarios.py`).
Each candidate is checked by `gymwright.codemode.checks.check_code` (vetting with `ast`,
then PettingZoo's tests, random legal play, determinism and the scenarios in a sandbox worker);
on errors the findings, each with its `code:LINE` or `scenarios[i]`, go back to the model with
its previous reply, up to `max_repairs` times. A module that passes is reviewed against the task
(`code_review.review_code`), its failed checks sent back the same way. The stored design's
"spec" is that JSON object: the module, its class, its name and its scenarios, content-addressed
like every spec. The file written (`write_code_file`) is a sandboxed PettingZoo module with
`parallel_env()` and `env()` (`codemode.export.proxy_module`); `check_out_path` refuses an
`--out` whose extension is not the mode's. Nothing of the code is imported here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from gymwright.atomic import write_atomic
from gymwright.codemode.checks import check_code
from gymwright.codemode.export import proxy_module
from gymwright.codemode.scenarios import SCENARIOS_SCHEMA, ScenarioError, validate_scenarios
from gymwright.codemode.vet import ALLOWED_IMPORTS, MAX_CODE_CHARS, vet_source
from gymwright.design.code_review import review_code
from gymwright.design.session import DesignSession, DesignStopped, ReplyUnusable
from gymwright.design.staged import plan_stages
from gymwright.diagnostic import info, warning
from gymwright.errors import GymwrightError
from gymwright.llm.base import Message
from gymwright.verify.report import VerificationReport

CODE_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["name", "code"],
    "properties": {"name": {"type": "string", "maxLength": 40},
                   "class": {"type": "string", "maxLength": 60},
                   "code": {"type": "string", "maxLength": MAX_CODE_CHARS},
                   "scenarios": SCENARIOS_SCHEMA}}
CODE_REPLY = ('the whole corrected module as one JSON object {"name", "class", "code", "scenarios"} '
              '(not a diff)')
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
    try:
        scenarios = validate_scenarios(data.get("scenarios"))
    except ScenarioError as e:
        raise ReplyUnusable(str(e)) from None
    out: dict[str, Any] = {"name": name, "class": cls, "code": data["code"]} if cls else {"name": name, "code": data["code"]}
    if scenarios:
        out["scenarios"] = scenarios
    return out


def check_candidate(candidate: dict[str, Any], episodes: int) -> VerificationReport:
    """The checks of one candidate, with the sandbox layers that were armed as an info finding."""
    report, layers = check_code(candidate["code"], candidate.get("class"), name=candidate["name"],
                                episodes=episodes, scenarios=candidate.get("scenarios"))
    if report.passed and not candidate.get("scenarios"):
        report.diagnostics.append(warning(
            "scenarios", "scenarios", "the reply has no scenarios: no worked case checks the module's rules",
            'add 2-4 "scenarios" (actions by index from reset(seed), the rewards, returns and ends expected)'))
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
    session.reviewer, session.review_repair = review_code, "code_review_repair"
    found, report = session.repair_loop("code", base, CODE_SCHEMA,
                                        lambda text: session.parse_reply(text, as_code_dict),
                                        reply=CODE_REPLY, repair_template="code_repair")
    if found is None and report is None:
        raise DesignStopped(f"the model gave no module that parses in {session.max_repairs + 1} tries",
                            hint="try a stronger model (--model), or raise --max-repairs")
    return found, report


def check_out_path(mode: str, out: Path | None) -> None:
    """Refuse an --out whose extension says another kind of file than the mode writes (before
    any model call): code mode writes a Python module (.py), the other modes a YAML spec."""
    if out is None:
        return
    suffix = out.suffix.lower()
    if mode == "code" and suffix != ".py":
        raise GymwrightError(
            f"--mode code writes a Python module, but --out {out} ends in {suffix or 'no extension'}",
            path="--out", hint=f"name it {out.with_suffix('.py').name} (the module runs your environment "
                               "in gymwright's sandbox; `gymwright train` and `gymwright export` read it)")
    if mode != "code" and suffix == ".py":
        raise GymwrightError(
            f"--mode {mode} writes a YAML spec, but --out {out} ends in .py",
            path="--out", hint=f"name it {out.with_suffix('.yaml').name}, or use --mode code for a Python module "
                               "(`gymwright export SPEC -o env.py` turns a spec into a PettingZoo module)")


def write_code_file(candidate: dict[str, Any], path: Path, header: str) -> Path:
    """The design as a sandboxed PettingZoo module (atomic), under a comment header: its
    `parallel_env()` and `env()` run the model's code (a string literal pinned by its sha256)
    in a sandbox worker, so importing the file runs nothing a model wrote; `gymwright train`,
    `play`, `evaluate` and `export` read the model's code out of it (`source.read_code`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    comment = "".join("# " + line.replace("\r", " ") + "\n" for line in header.splitlines())
    code = candidate["code"].rstrip() + "\n"
    env_class = candidate.get("class") or vet_source(code).env_class or ""
    write_atomic(path, comment + proxy_module(code, env_class, candidate["name"]))
    return path


__all__ = ["CODE_SCHEMA", "as_code_dict", "check_candidate", "check_out_path", "run_code_mode", "write_code_file"]
