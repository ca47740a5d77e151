"""Designs that start from a library spec: template mode (a model picks) and the offline designer.

Both end the same way: the chosen library spec with the chosen params written in as its
defaults, so the designed spec stands on its own, then the verifier. Template mode repairs like
spec mode: an unknown param or a failed verification goes back to the model.
"""

from __future__ import annotations

import time
from dataclasses import asdict, is_dataclass
from typing import Any

from gymwright.design.offline import OfflineChoice, offline_design
from gymwright.design.plans import template_choice_model
from gymwright.design.session import DesignSession, ReplyUnusable, with_defaults
from gymwright.llm.base import Message
from gymwright.spec.loader import library_names, load_spec, read_data
from gymwright.store import AttemptRecord
from gymwright.verify.report import VerificationReport

Outcome = tuple[dict[str, Any] | None, VerificationReport | None]


def catalog() -> str:
    """One line per library spec: name, description, roles, params with defaults and ranges."""
    lines = []
    for name in library_names():
        spec = load_spec(name)
        roles = ", ".join(f"{r} x {role.count}" for r, role in spec.agents.items())
        params = "; ".join(
            f"{p}={v.default} [{v.min:g}, {v.max:g}] {v.doc}".rstrip()
            if v.min is not None and v.max is not None else f"{p}={v.default} {v.doc}".rstrip()
            for p, v in spec.params.items())
        lines.append(f"- {name}: {spec.description.strip()} Agents: {roles}. Params: {params or 'none'}")
    return "\n".join(lines)


def library_spec(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """The library spec `name` with `params` as its defaults; unknown params are refused."""
    data, _ = read_data(name)
    known = data.get("params") or {}
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ReplyUnusable(
            f"template {name} has no param {', '.join(unknown)}; its params are: "
            f"{', '.join(known) or 'none'}")
    return with_defaults(data, params)


def run_template_mode(session: DesignSession, task: str) -> Outcome:
    choice_model = template_choice_model(library_names())
    base = [session.system(),
            Message("user", session.prompts.render("template", task=task, catalog=catalog()))]

    def to_spec(text: str) -> tuple[dict[str, Any] | None, Any, str]:
        choice, data, problem = session.parse_reply(text, choice_model.model_validate)
        if choice is None:
            return None, data, problem
        try:
            spec = library_spec(choice.template, choice.params)  # type: ignore[attr-defined]
        except ReplyUnusable as e:
            return None, data, str(e)
        session.derive_from_library(choice.template, choice.params)  # type: ignore[attr-defined]
        return spec, data, ""

    return session.repair_loop("template", base, choice_model.model_json_schema(), to_spec)


def choice_dict(choice: OfflineChoice) -> dict[str, Any]:
    return asdict(choice) if is_dataclass(choice) else dict(vars(choice))


def run_offline_mode(session: DesignSession, task: str) -> tuple[Outcome, OfflineChoice]:
    """Retrieval plus rules: the nearest library spec, params from the task text, verified."""
    start = time.perf_counter()
    choice = offline_design(task)
    session.note("offline", f"nearest library spec: {choice.best.name} "
                            f"(similarity {choice.best.score:.2f}{'' if choice.fits else ', no fit'})")
    if not choice.fits or choice.template is None:
        session.record(AttemptRecord(index=0, stage="offline", prompt=[], parsed=choice_dict(choice),
                                     passed=False, parse_error=choice.explanation,
                                     wall_s=time.perf_counter() - start))
        return (None, None), choice
    spec = library_spec(choice.template, choice.params)
    session.derive_from_library(choice.template, choice.params)
    report = session.verify("offline", spec)
    sha = session.store.put_spec(spec, name=str(spec.get("name", "")))
    session.link(sha)
    session.record(AttemptRecord(index=0, stage="offline", prompt=[], parsed=choice_dict(choice),
                                 report=report.to_dict(), passed=report.passed, spec_sha=sha,
                                 wall_s=time.perf_counter() - start))
    return (spec if report.passed else None, report), choice
