"""The offline designer: retrieval plus rules, no language model and no network.

It retrieves the library spec nearest the task text (`retrieval.best_fit`), fills params from
the numbers and words of the text (`params_from_text.extract_params`) and says plainly what it
did: which template, how similar, which words matched, where each param came from, what it
could not use. When no template fits it says so, with the best match and its score, and that a
language model is needed, rather than pass off a wrong environment: no template fits when none
is similar enough, or when the nearest leaves out a mechanic the task asks for
(`gymwright.design.demands`: coverage, cards, a board, ...). Verification and the store
are the caller's (`gymwright.design.templated.run_offline_mode`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gymwright.design.demands import Demand, describe, missing
from gymwright.design.params_from_text import ParamEvidence, Value, extract_params
from gymwright.design.retrieval import FIT_THRESHOLD, Match, best_fit, is_near_tie
from gymwright.spec.loader import load_spec

LABEL = "offline designer (retrieval + rules, no language model)"
MODEL_HINT = ("The offline designer only picks and tunes library templates; a language model is "
              "needed to write a new environment: pass --model (e.g. --model openai:gpt-4o-mini "
              "or --model ollama:qwen2.5-coder)")


@dataclass(frozen=True)
class OfflineChoice:
    """What the offline designer chose, and why, in plain words (`explanation`)."""

    fits: bool  # a library template fits the task
    template: str | None  # the chosen template (None when none fits)
    score: float  # the best match's similarity, 0..1
    best: Match  # the best match, even when it does not fit
    alternatives: list[Match]  # the next two matches
    params: dict[str, Value]  # params set from the text; the others keep the template defaults
    evidence: list[ParamEvidence]  # where each param (and each fixed count) came from
    ignored: list[str]  # numbers in the text that set nothing, and why
    conflicts: list[str]  # what the text asks that the template cannot do
    explanation: str  # for the terminal and the store
    left_out: tuple[str, ...] = ()  # mechanics the task asks for that the nearest template lacks


def offline_design(task: str) -> OfflineChoice:
    """Pick and tune the library template nearest `task`, or say that none fits."""
    fit, ranking = best_fit(task)
    best, alternatives = ranking[0], ranking[1:3]
    if fit is None:
        return OfflineChoice(False, None, best.score, best, alternatives, {}, [], [], [],
                             _no_fit(best, alternatives))
    lacking = missing(task, fit.name)
    if lacking:
        return OfflineChoice(False, None, best.score, best, alternatives, {}, [], [], [],
                             _left_out(best, lacking), tuple(d.name for d in lacking))
    fill = extract_params(task, load_spec(fit.name))
    choice = OfflineChoice(True, fit.name, fit.score, fit, alternatives, dict(fill.values),
                           list(fill.evidence), list(fill.ignored), list(fill.conflicts), "")
    return _with_explanation(choice)


# ----------------------------------------------------------------------------- explanation
def _with_explanation(c: OfflineChoice) -> OfflineChoice:
    parts = [f"{LABEL}: chose template {c.template} ({_similarity(c.best)})",
             f"next: {_listing(c.alternatives)}" if c.alternatives else "",
             _params_text(c), _counts_text(c.evidence),
             f"not used: {'; '.join(c.ignored)}" if c.ignored else "",
             f"warning: {'; '.join(c.conflicts)}" if c.conflicts else ""]
    text = ". ".join(p for p in parts if p) + "."
    return OfflineChoice(c.fits, c.template, c.score, c.best, c.alternatives, c.params,
                         c.evidence, c.ignored, c.conflicts, text)


def _similarity(m: Match) -> str:
    matched = ", ".join(m.matched[:6]) or "nothing"
    return f"similarity {m.score:.2f}, threshold {FIT_THRESHOLD:.2f}; matched: {matched}"


def _listing(matches: list[Match]) -> str:
    return ", ".join(f"{m.name} {m.score:.2f}" for m in matches)


def _params_text(c: OfflineChoice) -> str:
    placed = [e for e in c.evidence if e.param in c.params]
    if not placed:
        return "params: none set from the text; all keep the template's defaults"
    items = [f"{e.param}={_value(e.value)} from '{e.phrase}'" + (f" ({e.note})" if e.note else "")
             for e in placed]
    return f"params: {', '.join(items)}; the others keep the template's defaults"


def _counts_text(evidence: list[ParamEvidence]) -> str:
    fixed = [f"'{e.phrase}' {e.note}" for e in evidence if e.param.startswith("agents")]
    return f"agents: {'; '.join(fixed)}" if fixed else ""


def _value(v: Value) -> str:
    return str(v).lower() if isinstance(v, bool) else f"{v:g}"


def _left_out(best: Match, lacking: list[Demand]) -> str:
    why = (f"no library template fits this task: the nearest, {best.name} ({_similarity(best)}), "
           f"leaves out what the task asks for: {describe(lacking)}")
    return f"{LABEL}: {why}. {MODEL_HINT}."


def _no_fit(best: Match, alternatives: list[Match]) -> str:
    second = alternatives[0] if alternatives else None
    if best.score >= FIT_THRESHOLD and is_near_tie(best, second):
        assert second is not None
        why = (f"no library template fits this task clearly: the best matches are {best.name} "
               f"(similarity {best.score:.2f}) and {second.name} ({second.score:.2f}), a near tie "
               f"with no word of the task that tells them apart (describing the task in more "
               f"detail may settle it)")
    else:
        matched = f"; matched: {', '.join(best.matched[:6])}" if best.matched else ""
        why = (f"no library template fits this task: the best match is {best.name} with "
               f"similarity {best.score:.2f} (below the {FIT_THRESHOLD:.2f} threshold{matched})")
    return f"{LABEL}: {why}. {MODEL_HINT}."
