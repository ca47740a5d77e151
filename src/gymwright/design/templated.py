"""Designs that start from a library spec: template mode (a model picks) and the offline designer.

Both end the same way: the chosen library spec with the chosen params written in as its
defaults, so the designed spec stands on its own, then the verifier. Template mode asks twice,
each reply small and bounded so that even a 0.5B local model can answer: which template (an
enum of the library's names), then its params (exactly that template's params, typed, with
their ranges). The params step repairs like spec mode: a failed verification goes back.
"""

from __future__ import annotations

import time
from dataclasses import asdict, is_dataclass
from typing import Any

from gymwright.design.offline import OfflineChoice, offline_design
from gymwright.design.plans import template_choice_model
from gymwright.design.retrieval import rank_library
from gymwright.design.session import DesignSession, DesignStopped, ReplyUnusable, with_defaults
from gymwright.llm.base import Message
from gymwright.spec.loader import library_names, load_spec, read_data
from gymwright.spec.model import EnvSpec
from gymwright.store import AttemptRecord
from gymwright.verify.report import VerificationReport

Outcome = tuple[dict[str, Any] | None, VerificationReport | None]
PARAMS_REPLY = 'the corrected params as one JSON object, {"params": {NAME: VALUE, ...}}'


def catalog(task: str) -> str:
    """One line per library spec, nearest the task first: name, description, roles."""
    lines = []
    for match in rank_library(task):
        spec = load_spec(match.name)
        roles = ", ".join(f"{r} x {role.count}" for r, role in spec.agents.items())
        lines.append(f"- {match.name}: {spec.description.strip()} ({roles})")
    return "\n".join(lines)


def param_lines(spec: EnvSpec) -> str:
    """One line per param: name, type and range, default, doc."""
    def one(name: str, p: Any) -> str:
        kind = {"int": "int", "float": "number", "bool": "true/false"}[p.type]
        rng = f" in [{p.min:g}, {p.max:g}]" if p.type != "bool" and p.min is not None and p.max is not None else ""
        return f"- {name} ({kind}{rng}, default {p.default}): {p.doc}".rstrip(": ")
    return "\n".join(one(n, p) for n, p in spec.params.items()) or "(none)"


def params_schema(spec: EnvSpec) -> dict[str, Any]:
    """`{"params": {...}}` with exactly the template's params, typed and bounded (a server that
    enforces schemas cannot return an unknown param or a value out of range)."""
    props: dict[str, Any] = {}
    for name, p in spec.params.items():
        prop: dict[str, Any] = {"type": {"int": "integer", "float": "number", "bool": "boolean"}[p.type]}
        if p.type != "bool":
            prop |= {k: (int(v) if p.type == "int" else v)
                     for k, v in (("minimum", p.min), ("maximum", p.max)) if v is not None}
        props[name] = prop
    inner = {"type": "object", "properties": props, "required": list(props),
             "additionalProperties": False}
    return {"type": "object", "properties": {"params": inner}, "required": ["params"],
            "additionalProperties": False}


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


def choose_template(session: DesignSession, task: str) -> str:
    """Call 1: which library spec (an enum of the library's names) and whether it is the same
    kind of game as the task (a forced choice first, then the judgment: small models asked to
    choose among the names *or* `none` picked worse and refused library tasks)."""
    model = template_choice_model(library_names())
    user = session.prompts.render("template", task=task, catalog=catalog(task))
    choice, _ = session.ask_json("template", [session.system(), Message("user", user)],
                                 model.model_json_schema(), model.model_validate)
    if not choice.same_kind:  # type: ignore[attr-defined]  # template_choice_model's fields: made by create_model at run time, unseen by mypy
        raise DesignStopped(
            f"the model found no library template that fits this task: the nearest, {choice.template}, is "  # type: ignore[attr-defined]  # template_choice_model's fields: made by create_model at run time, unseen by mypy
            f"not the same kind of game ({choice.reason or 'no reason given'})",  # type: ignore[attr-defined]  # template_choice_model's fields: made by create_model at run time, unseen by mypy
            hint="use --mode spec (a model writes a new spec), ideally with a stronger model")
    return str(choice.template)  # type: ignore[attr-defined]  # template_choice_model's fields: made by create_model at run time, unseen by mypy


def run_template_mode(session: DesignSession, task: str) -> Outcome:
    """Template mode: pick a library spec, then set its params (two small, bounded replies)."""
    name = choose_template(session, task)
    spec = load_spec(name)
    user = session.prompts.render("params", task=task, template=name,
                                  description=spec.description.strip(), params=param_lines(spec))
    base = [session.system(), Message("user", user)]

    def to_spec(text: str) -> tuple[dict[str, Any] | None, Any, str]:
        params, data, problem = session.parse_reply(text, params_of)
        if params is None:
            return None, data, problem
        try:
            designed = library_spec(name, params)
        except ReplyUnusable as e:
            return None, data, str(e)
        session.derive_from_library(name, params)
        return designed, data, ""

    return session.repair_loop("params", base, params_schema(spec), to_spec, reply=PARAMS_REPLY)


def params_of(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict) or not isinstance(data.get("params"), dict):
        raise ReplyUnusable('expected {"params": {NAME: VALUE, ...}}')
    bad = [k for k, v in data["params"].items() if not isinstance(v, bool | int | float)]
    if bad:
        raise ReplyUnusable(f"params must be numbers or true/false; not: {', '.join(bad)}")
    return dict(data["params"])


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
