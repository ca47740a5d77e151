"""Every limit on what a spec may cost, in one place, and the checks that enforce them.

A spec is untrusted input (a model writes it), so what it may make gymwright do is bounded
before anything expensive happens: the file is measured before it is read, YAML aliases and
nesting are counted while the document is composed, counts of sections are checked before the
static checker types anything, and the action count is computed as a product of argument sizes,
never enumerated. Each limit is a module constant registered in `LIMITS` with a one-line doc;
`docs/spec-language.md` shows them as a table generated from `LIMITS`. Every library spec fits
each limit with a wide margin (tests/spec/test_limits.py states the library's maxima).

The reading limits (file size, encoding, nesting, aliases, nodes, text) hold for every YAML or
JSON document gymwright reads, not only specs: a `--config` file and a model's reply are read
by the same functions, given a `Document` that names what is read in the refusals (`SPEC`,
`CONFIG`, `REPLY`, `VALUE` for a value given on the command line, and `RECORD` for a run
folder's JSON records, which `gymwright.report.records` reads).
"""

from __future__ import annotations

import copy
import json
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from gymwright.diagnostic import Diagnostic, error
from gymwright.errors import SpecError


@dataclass(frozen=True)
class Limit:
    name: str
    value: int
    doc: str  # what it bounds, one line


LIMITS: dict[str, Limit] = {}


def _limit(name: str, value: int, doc: str) -> int:
    LIMITS[name] = Limit(name, value, doc)
    return value


# ---------------------------------------------------------------------------- the text
MAX_FILE_BYTES = _limit("MAX_FILE_BYTES", 128 * 1024,
                        "bytes in a spec file or spec text (a file is measured before it is read)")
MAX_TEXT_CHARS = _limit("MAX_TEXT_CHARS", 128 * 1024,
                        "characters in all the strings of a spec together, keys included (a spec given as data)")
MAX_NESTING_DEPTH = _limit("MAX_NESTING_DEPTH", 32,
                           "levels of nested mappings and lists in a spec (YAML or JSON), aliases expanded")
MAX_SPEC_NODES = _limit("MAX_SPEC_NODES", 100_000,
                        "keys, values and list items in a spec, with YAML aliases and merge keys expanded")
# ---------------------------------------------------------------------------- sizes
MAX_AGENTS = _limit("MAX_AGENTS", 256, "agents in all roles together")
MAX_GRID_SIDE = _limit("MAX_GRID_SIDE", 64, "rows or columns of a grid")
MAX_GRID_POOL = _limit("MAX_GRID_POOL", 100_000, "layouts in a grid's `pool`")
MAX_SOLVE_SEED = _limit("MAX_SOLVE_SEED", 2**31 - 1, "the largest `grid.solve.seed` (which family of solved pools)")
MAX_POOL_CELLS = _limit("MAX_POOL_CELLS", 1_048_576,
                        "cells of a pool of generated layouts at the checked params (pool x height x width, all made at the first reset)")
MAX_STATE_SIZE = _limit("MAX_STATE_SIZE", 16_384,
                        "values in all of state and agent_state together (agent axis and grid built-ins included)")
MAX_CONST_SIZE = _limit("MAX_CONST_SIZE", 10_000, "elements of one const (a table), or members of one enum")
MAX_TABLE_SIZE = _limit("MAX_TABLE_SIZE", 100_000,
                        "elements of a table that `compositions`, `combinations` or `product` makes (counted first)")
MAX_ARG_VALUES = _limit("MAX_ARG_VALUES", 4096, "values of one action argument")
MAX_ACTIONS = _limit("MAX_ACTIONS", 4096,
                     "actions of one role: over its choices, the product of each choice's argument sizes")
MAX_VOCAB = _limit("MAX_VOCAB", 4096, "symbols of a message channel")
MAX_FEATURE_SIZE = _limit("MAX_FEATURE_SIZE", 4096, "values of one observation feature")
MAX_OBS_DIM = _limit("MAX_OBS_DIM", 16_384, "values of one role's observation (all its features)")
# ---------------------------------------------------------------------------- counts
MAX_PARAMS = _limit("MAX_PARAMS", 128, "params")
MAX_CONSTS = _limit("MAX_CONSTS", 256, "consts (an enum counts once)")
MAX_VARIABLES = _limit("MAX_VARIABLES", 256, "state and agent_state variables together")
MAX_CHOICES = _limit("MAX_CHOICES", 256, "choices of one role")
MAX_STEP_RULES = _limit("MAX_STEP_RULES", 256, "step rules")
MAX_REWARD_TERMS = _limit("MAX_REWARD_TERMS", 64, "reward terms of one role")
MAX_METRICS = _limit("MAX_METRICS", 64, "metrics")
MAX_FEATURES = _limit("MAX_FEATURES", 128, "observation features of one role")
MAX_PLACEHOLDERS = _limit("MAX_PLACEHOLDERS", 256, "`{...}` placeholders in one text template")
MAX_PROBES = _limit("MAX_PROBES", 128, "probes")
MAX_PROBE_STEPS = _limit("MAX_PROBE_STEPS", 500, "steps (entries of `actions`) of one probe")
MAX_BASELINES = _limit("MAX_BASELINES", 32, "scripted baselines")
MAX_BASELINE_RULES = _limit("MAX_BASELINE_RULES", 64, "rules of one role in one baseline")

SCHEMA = "schema"  # the stage of refusals made while reading (as the loader's other findings)
STATIC = "static"  # the stage of refusals made on the parsed spec (as the checker's)


def limits_table() -> str:
    """The limits as a markdown table (embedded in docs/spec-language.md by spec.reference)."""
    rows = ["| limit | value | what it bounds |", "| --- | --- | --- |"]
    rows += [f"| `{lim.name}` | {lim.value:,} | {lim.doc} |" for lim in LIMITS.values()]
    return "\n".join(rows)


@dataclass(frozen=True)
class Document:
    """What is read within the reading limits, as their refusals name it and advise on it."""

    noun: str  # "spec": "the spec is nested more than 32 levels deep"
    stage: str  # the stage of the refusals' diagnostics
    size_hint: str  # what to do with a document too large
    depth_hint: str  # ... nested too deep
    nodes_hint: str  # ... expanded past MAX_SPEC_NODES by its aliases
    example: str  # a file name, in the advice on saving it as UTF-8


def _refuse(path: str, message: str, hint: str, doc: Document | None = None) -> SpecError:
    return SpecError([error(doc.stage if doc is not None else SCHEMA, path, message, hint)])


# ---------------------------------------------------------------------------- reading
def read_file(path: Path, doc: Document | None = None) -> str:
    """The text of a spec file (or of another `doc`): a regular file of at most MAX_FILE_BYTES
    (measured before it is read, and read no further than the limit), decoded as UTF-8. Raises
    SpecError."""
    doc = doc or SPEC
    label = str(path)
    try:
        info = path.stat()
        if not path.is_file():
            raise _refuse(label, "not a regular file", f"give the path of a {doc.noun} file (.yaml, .yml or .json)", doc)
        if info.st_size > MAX_FILE_BYTES:
            raise _refuse(label, _too_big(info.st_size, doc), doc.size_hint, doc)
        with path.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)  # a file that grew since stat() is still cut at the limit
    except OSError as e:
        raise _refuse(label, f"cannot read the {doc.noun} file: {e.strerror or e}", "check the path and its permissions",
                      doc) from None
    if len(raw) > MAX_FILE_BYTES:
        raise _refuse(label, _too_big(len(raw), doc, at_least=True), doc.size_hint, doc)
    return decode_utf8(raw, label, doc)


def _too_big(size: int, doc: Document, at_least: bool = False) -> str:
    return f"{doc.noun} file is {'more than ' if at_least else ''}{size:,} bytes; the limit is {MAX_FILE_BYTES:,}"


def check_text_size(text: str, label: str, doc: Document | None = None) -> None:
    """Spec text given directly (not a file) is bounded as a file is."""
    doc = doc or SPEC
    if len(text) > MAX_FILE_BYTES:
        raise _refuse(label, f"{doc.noun} text is {len(text):,} characters; the limit is {MAX_FILE_BYTES:,}",
                      doc.size_hint, doc)


def decode_utf8(raw: bytes, label: str, doc: Document | None = None) -> str:
    """UTF-8 text (a byte-order mark is dropped); anything else is refused with the byte offset."""
    doc = doc or SPEC
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        offset = e.start + (3 if raw.startswith(b"\xef\xbb\xbf") else 0)
        line = raw.count(b"\n", 0, offset) + 1
        binary = b"\x00" in raw[:8192]
        what = "a binary file, not text" if binary else "not UTF-8 text"
        raise _refuse(f"{label}:{line}",
                      f"the file is {what}: byte 0x{raw[offset]:02x} at byte offset {offset} (line {line}) is not valid UTF-8",
                      f"a {doc.noun} is YAML or JSON text: save it as UTF-8 "
                      f"(e.g. `iconv -f latin1 -t utf-8 old.yaml > {doc.example}`)", doc) from None


# ---------------------------------------------------------------------------- YAML
class BoundedYamlLoader(yaml.SafeLoader):
    """A SafeLoader that refuses, while composing (before any Python value is built), a document
    nested deeper than MAX_NESTING_DEPTH or larger than MAX_SPEC_NODES nodes once its aliases are
    expanded (an 'alias bomb': a few hundred bytes whose aliases expand to millions of values).

    Composition recurses once per level, so the depth is checked on the way down, long before
    Python's recursion limit. An alias counts as the expanded size and height of its anchor."""

    def __init__(self, stream: str, label: str, doc: Document | None = None) -> None:
        super().__init__(stream)
        self.label = label
        self.doc = doc or SPEC
        self.depth = 0  # mappings and lists around the node being composed
        self.deepest = 0  # deepest nesting reached, aliases expanded
        self.total = 0  # nodes composed so far, aliases expanded
        self.measured: dict[str, tuple[int, int]] = {}  # anchor -> (expanded nodes, height)
        self.keys: list[str] = []  # spec path of the node being composed

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self.keys.append(_segment(parent, index))
        try:
            if self.check_event(yaml.AliasEvent):
                self._expand(self.peek_event())
                return super().compose_node(parent, index)
            return self._compose_counted(parent, index)
        finally:
            self.keys.pop()

    def _compose_counted(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()
        self._grow(1, event.start_mark)
        anchor = getattr(event, "anchor", None)
        if not isinstance(event, yaml.CollectionStartEvent):
            if anchor is not None:
                self.measured[anchor] = (1, 0)
            return super().compose_node(parent, index)
        self.depth += 1
        if self.depth > MAX_NESTING_DEPTH:
            raise self._refusal(event.start_mark, f"the {self.doc.noun} is nested more than {MAX_NESTING_DEPTH} "
                                f"levels deep at `{_short_path(self.keys)}`", self.doc.depth_hint)
        before, outer = self.total, self.deepest
        self.deepest = self.depth
        node = super().compose_node(parent, index)
        if anchor is not None:
            self.measured[anchor] = (self.total - before + 1, self.deepest - self.depth + 1)
        self.depth -= 1
        self.deepest = max(outer, self.deepest)
        return node

    def _expand(self, event: yaml.AliasEvent) -> None:
        if event.anchor not in self.measured:
            if event.anchor in self.anchors:  # the anchored node is still being composed
                raise self._refusal(event.start_mark, f"alias `*{event.anchor}` refers to a node that contains it "
                                    f"(at `{_short_path(self.keys)}`): the {self.doc.noun} would be infinite",
                                    "an alias may only repeat a block that ends before it")
            return  # an undefined alias: the composer reports it
        size, height = self.measured[event.anchor]
        reach = self.depth + height
        if reach > MAX_NESTING_DEPTH:
            raise self._refusal(event.start_mark, f"alias `*{event.anchor}` at `{_short_path(self.keys)}` nests the "
                                f"{self.doc.noun} {reach} levels deep; the limit is {MAX_NESTING_DEPTH}", self.doc.depth_hint)
        self.deepest = max(self.deepest, reach)
        self._grow(size, event.start_mark, f" (alias `*{event.anchor}` at `{_short_path(self.keys)}` "
                                           f"repeats {size:,} nodes)")

    def _grow(self, n: int, mark: _Mark | None, why: str = "") -> None:
        self.total += n
        if self.total > MAX_SPEC_NODES:
            raise self._refusal(mark, f"the {self.doc.noun} expands to more than {MAX_SPEC_NODES:,} nodes{why}; "
                                f"the limit is {MAX_SPEC_NODES:,}", self.doc.nodes_hint)

    def _refusal(self, mark: _Mark | None, message: str, hint: str) -> SpecError:
        where = self.label if mark is None else f"{self.label}:{mark.line + 1}:{mark.column + 1}"
        return _refuse(where, message, hint, self.doc)


class _Mark(Protocol):
    """Where an event starts: PyYAML's pure-Python `yaml.Mark` or its C loader's (events' marks are
    typed optional; the parser always sets them)."""

    line: int
    column: int


SPEC = Document(
    "spec", SCHEMA,
    size_hint="a spec is a few kilobytes of data: drop generated tables and long text, or compute them with expressions",
    depth_hint="a spec needs only a few levels (section, entry, key, a table's axes): flatten the structure",
    nodes_hint="YAML aliases are for sharing a small block (one role's actions with another); write tables out, "
               f"keep consts under {MAX_CONST_SIZE:,} elements, or compute values with expressions",
    example="spec.yaml")
CONFIG = Document(
    "config", "config",
    size_hint="a config file is a few lines of `field: value`: give a spec by its path (`spec: my_spec.yaml`) "
              "rather than inline",
    depth_hint="a config file is flat: one `field: value` per line (a list for `hidden`, a mapping for `params` "
               "and `npc`)",
    nodes_hint="a config file is a few lines of `field: value`; YAML aliases are for repeating a small block: "
               "write the values out",
    example="config.yaml")
VALUE = Document(
    "value", "cli",
    size_hint="a value on the command line is a number, a bool or a word",
    depth_hint="a param value is a number or a bool, not nested lists",
    nodes_hint="a param value is a number or a bool",
    example="value.yaml")
REPLY = Document(
    "reply", "reply",
    size_hint="a reply is one JSON object of a few kilobytes",
    depth_hint="a reply is a JSON object a few levels deep (a spec edit: op, path, value)",
    nodes_hint="a reply is a JSON object of a few kilobytes",
    example="reply.json")

RECORD = Document(
    "record", "report",
    size_hint="gymwright writes a run folder's records itself: train or evaluate again to write it afresh",
    depth_hint="gymwright writes its records a few levels deep: this one was changed since; train or evaluate "
               "again to write it afresh",
    nodes_hint="gymwright writes its records without YAML aliases: train or evaluate again to write it afresh",
    example="scorecard.json")


def _segment(parent: yaml.Node | None, index: Any) -> str:
    if isinstance(parent, yaml.SequenceNode):
        return f"[{index}]"
    if isinstance(parent, yaml.MappingNode):
        return f".{index.value}" if isinstance(index, yaml.ScalarNode) else ".<key>"
    return ""


def load_yaml(text: str, label: str, doc: Document | None = None) -> Any:
    """yaml.safe_load within the limits (raises SpecError on a limit, yaml.YAMLError on syntax).

    A text read before within the same limits gives a copy of what it gave then (the bounded
    loader builds every node in Python, so a library spec read again costs a copy, not a parse);
    refusals are never remembered, so each says its own label."""
    key = (text, doc)
    if key in _LOADED:
        return copy.deepcopy(_LOADED[key])
    loader = BoundedYamlLoader(text, label, doc)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    if len(_LOADED) >= _LOADED_MAX:
        _LOADED.pop(next(iter(_LOADED)))
    _LOADED[key] = copy.deepcopy(data)
    return data


_LOADED: dict[tuple[str, Document | None], Any] = {}  # text read within a document's limits -> its data
_LOADED_MAX = 256


# ---------------------------------------------------------------------------- JSON
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def load_json(text: str, label: str, doc: Document | None = None) -> Any:
    """json.loads within the limits: the nesting is measured by a scan of the brackets (no
    recursion) before json.loads, which would overflow Python's stack on deep input."""
    doc = doc or SPEC
    depth = 0
    for m in _JSON_TOKEN.finditer(text):
        token = m.group()
        if token in "[{":
            depth += 1
            if depth > MAX_NESTING_DEPTH:
                line = text.count("\n", 0, m.start()) + 1
                col = m.start() - text.rfind("\n", 0, m.start())
                raise _refuse(f"{label}:{line}:{col}", f"the {doc.noun} is nested more than {MAX_NESTING_DEPTH} "
                              "levels deep", doc.depth_hint, doc)
        elif token in "]}":
            depth -= 1
    try:
        return json.loads(text)
    except RecursionError:  # not reachable after the scan; kept so that no traceback can escape
        raise _refuse(label, f"the {doc.noun} is nested more than {MAX_NESTING_DEPTH} levels deep", doc.depth_hint,
                      doc) from None


# ---------------------------------------------------------------------------- parsed data
def check_data(data: Any, label: str, doc: Document | None = None) -> None:
    """A spec (or another `doc`) given as data, or just parsed, fits MAX_NESTING_DEPTH,
    MAX_SPEC_NODES and MAX_TEXT_CHARS. Walks without recursion and stops at the first limit, so its
    cost is bounded whatever the data (shared lists from YAML aliases count each time they appear)."""
    doc = doc or SPEC
    nodes = chars = 0
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(data, 1, ())]
    while stack:
        value, depth, where = stack.pop()
        if depth > MAX_NESTING_DEPTH and isinstance(value, dict | list | tuple):
            raise _refuse(label, f"the {doc.noun} is nested more than {MAX_NESTING_DEPTH} levels deep at "
                          f"`{_short_path(_path_parts(where))}`", doc.depth_hint, doc)
        if isinstance(value, str):
            chars += len(value)
        elif isinstance(value, dict | list | tuple):
            nodes += len(value) * (2 if isinstance(value, dict) else 1)
            if nodes > MAX_SPEC_NODES:
                raise _refuse(label, f"the {doc.noun} has more than {MAX_SPEC_NODES:,} keys, values and list items "
                              f"(at `{_short_path(_path_parts(where))}`); the limit is {MAX_SPEC_NODES:,}",
                              doc.nodes_hint, doc)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, child in items:
                if isinstance(value, dict) and isinstance(key, str):
                    chars += len(key)
                stack.append((child, depth + 1, (where, key)))
        if chars > MAX_TEXT_CHARS:
            raise _refuse(label, f"the {doc.noun} holds more than {MAX_TEXT_CHARS:,} characters of text "
                          f"(at `{_short_path(_path_parts(where))}`); the limit is {MAX_TEXT_CHARS:,}",
                          doc.size_hint, doc)


def _path_parts(where: tuple[Any, ...]) -> list[str]:
    parts: list[str] = []
    while where:
        where, key = where
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return parts[::-1]


def _short_path(parts: list[str]) -> str:
    """`consts.x[0][0]`; a long path keeps its first six parts."""
    shown = parts if len(parts) <= 8 else parts[:6] + ["..."]
    return "".join(shown).lstrip(".") or "<top>"


# ---------------------------------------------------------------------------- counts of a parsed spec
def count_diagnostics(spec: Any) -> list[Diagnostic]:
    """Refusals of a schema-valid spec (an EnvSpec) whose sections hold more than the limits
    allow. Cheap: it counts, and it stops counting at the limit."""
    found: list[Diagnostic] = []

    def over(path: str, n: int, limit: int, what: str, hint: str) -> None:
        if n > limit:
            found.append(error(STATIC, path, f"{n:,} {what}; the limit is {limit:,}", hint, value=n))

    over("params", len(spec.params), MAX_PARAMS, "params", "keep the knobs the engineer needs; fix the rest as consts")
    over("consts", len(spec.consts), MAX_CONSTS, "consts", "merge related constants into one table")
    over("state", len(spec.state) + len(spec.agent_state), MAX_VARIABLES, "state and agent_state variables",
         "merge related variables into one array (give it a shape)")
    for name, c in spec.consts.items():
        over(f"consts.{name}", _const_elements(c), MAX_CONST_SIZE, "elements in one const", "a const is a small table (payoffs, item values): compute larger "
             "arrays with expressions (arange, linspace, ...)")
    for role, choices in spec.actions.items():
        over(f"actions.{role}", len(choices), MAX_CHOICES, f"choices for role `{role}`",
             "give one choice arguments instead of many similar choices")
    over("step", sum(len(getattr(r, "first", [r])) for r in spec.step), MAX_STEP_RULES, "step rules",
         "merge rules with the same condition into one `set`")
    for role, terms in spec.rewards.items():
        over(f"rewards.{role}", len(terms), MAX_REWARD_TERMS, f"reward terms for role `{role}`",
             "merge terms: one term's expression may add several quantities")
    over("metrics", len(spec.metrics), MAX_METRICS, "metrics", "keep the measures that judge the task")
    for role, feats in spec.observe.items():
        over(f"observe.{role}", len(feats), MAX_FEATURES, f"observation features for role `{role}`",
             "observe arrays as one feature (a feature may have a shape) instead of one feature per value")
    over("probes", len(spec.probes), MAX_PROBES, "probes", "keep the scenarios that test distinct behaviour")
    for i, probe in enumerate(spec.probes):
        over(f"probes[{i}].actions", len(probe.actions), MAX_PROBE_STEPS, "steps in one probe",
             "a probe is a short scenario: test long-run behaviour with metrics instead")
    over("baselines", len(spec.baselines), MAX_BASELINES, "baselines", "keep the strategies worth comparing with")
    for name, roles in spec.baselines.items():
        for role, rules in roles.items():
            over(f"baselines.{name}.{role}", len(rules), MAX_BASELINE_RULES, "rules in one baseline role",
                 "merge rules with the same action (combine their conditions with `or`)")
    for path, template in _templates(spec):
        over(path, count_placeholders(template), MAX_PLACEHOLDERS, "placeholders in one text template", "show arrays whole (`{x}`) rather than one "
             "placeholder per element, and keep the text short")
    return found


def _templates(spec: Any) -> Iterator[tuple[str, str]]:
    if spec.text is None:
        return
    if spec.text.render is not None:
        yield "text.render", spec.text.render
    for role, template in spec.text.observe.items():
        yield f"text.observe.{role}", template


def count_placeholders(template: str) -> int:
    """Placeholders of a `{expr}` template (a malformed one counts up to its error, which the
    checker reports)."""
    n = 0
    try:
        for _, field, _, _ in string.Formatter().parse(template):
            n += field is not None
    except ValueError:
        pass
    return n


def _const_elements(c: Any) -> int:
    """Leaves of a const's value, or members of an enum (counted without recursion)."""
    members = getattr(c, "enum", None)
    if members is not None:
        return len(members)
    stack, n = [getattr(c, "value", c)], 0
    while stack:
        value = stack.pop()
        if isinstance(value, list | tuple):
            stack.extend(value)
        else:
            n += 1
    return n


def state_values(shape: tuple[int, ...], agents: int) -> int:
    """Values a variable holds: its shape, times the agents for an agent_state variable."""
    n = agents
    for d in shape:
        n *= d
    return n
