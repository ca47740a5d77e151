"""Params from a task text, by rules: numbers and words placed on a template's params.

1. Find the numbers: digits and decimals, number words ("twenty-five", "a dozen", "a pair of"),
   percents ("5%"), grid sizes ("8x8", "8 by 8", "8×8") and multiplier words ("tripled").
2. Read the words next to each number (up to 3 after, 4 before, not across punctuation, "per"
   or another number) through the retrieval's stemmer and concept table, and score every param
   by how well those words match its name (weight 1), its doc (0.5, less when several params
   share the word) and, for a param that sets a role's count, the role's name and agent nouns
   (robots, players, ...), which only the noun phrase right after the number can name ("8
   objects to a guesser" counts objects). The nearest word counts most. Best pairs are taken
   first; each param gets one value; a tie between two params is reported, not guessed.
3. Respect the param: its type (no 0.95 for an int), fractions for percents, and its range
   (out-of-range values are clamped and the note says so, never silently). "Shrinks by 10%"
   on a discount becomes 0.9.
4. Counts fixed by the template ("two robots" when the template has exactly 2 agents) are
   evidence that it fits; a different count is a conflict, reported for the designer to warn.
5. Switches without numbers: "slippery", "noisy", "shuffled", "no overbidding" set a bool, or
   a probability-like param that is off by default (to the middle of its range; "no X" to 0).

Numbers that find no param are listed in `ignored`, in plain words.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from gymwright.design.retrieval import Term, analyze, concept_of, stem
from gymwright.mechanics.registry import MECHANICS
from gymwright.spec.model import EnvSpec, Param

Value = int | float | bool

UNITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
         "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
         "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
         "nineteen": 19}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
        "eighty": 80, "ninety": 90}
SCALES = {"hundred": 100, "thousand": 1000}
GROUPS = {"dozen": 12, "pair": 2, "couple": 2, "trio": 3, "quartet": 4}  # "a pair of ..."
MULTIPLIERS = {"double": 2, "doubled": 2, "doubles": 2, "triple": 3, "tripled": 3, "triples": 3,
               "quadruple": 4, "quadrupled": 4}
WEAK = {"one", "single"}  # often "one of them", not a count
NOT_A_COUNT_BEFORE = {"no", "each", "any", "every", "the", "this", "that", "which", "some"}
NOT_A_COUNT_AFTER = {"of", "another", "by", "at", "after", "more"}
OTHERS = {"other", "others", "another", "second", "rest"}
GRID_JOINERS = {"x", "\u00d7", "by"}
BOUNDARY = set(".,;:!?()[]")
RATE_WORDS = {"per", "each", "every"}  # "3 fish per fisherman": what follows is not counted
# The counted noun comes before these: "8 objects to a guesser" counts objects, not guessers.
NOUN_PHRASE_ENDS = {"to", "for", "with", "from", "in", "on", "at", "of", "into", "onto", "over",
                    "under", "against", "by", "among", "between", "through", "toward",
                    "towards", "while", "who", "that", "which", "and", "or", "than"}
NEGATIONS = {"no", "not", "without", "non", "never", "zero"}
SHRINK_STEMS = {stem(w) for w in ("shrink", "shrinks", "smaller", "decay", "decays", "melt",
                                  "melts", "lose", "loses", "drop", "drops", "spoil", "reduce",
                                  "less", "fall", "falls", "decline", "declines")}
GENERIC_NAME_WORDS = {"n", "num", "number", "max", "min", "of"}
SWITCH_GENERIC = GENERIC_NAME_WORDS | {"allow", "level", "levels"}

AFTER_WEIGHTS = (1.0, 0.8, 0.5)
BEFORE_WEIGHTS = (0.9, 0.6, 0.4, 0.3)
NAME_WEIGHT, DOC_WEIGHT, AGENT_WEIGHT = 1.0, 0.5, 0.8
RELATED = {"#round": {"#step": 0.5, "#horizon": 0.5}, "#step": {"#round": 0.5, "#horizon": 0.5},
           "#horizon": {"#round": 0.7, "#step": 0.7}}
MIN_SCORE = 0.5
OUT_OF_RANGE_FACTOR = 0.6
STRUCTURAL = "agents"


@dataclass(frozen=True)
class ParamEvidence:
    """One param set from the text: the value, the phrase it came from, and any note."""

    param: str
    value: Value
    phrase: str
    note: str = ""


@dataclass
class ParamFill:
    """What the text says about a template's params; `values` are the params set from it."""

    values: dict[str, Value] = field(default_factory=dict)
    evidence: list[ParamEvidence] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- numbers
@dataclass(frozen=True)
class _Tok:
    text: str
    start: int
    end: int


@dataclass
class _Mention:
    value: float
    start: int
    end: int
    first: int  # token index range [first, last)
    last: int
    integer: bool = True
    percent: bool = False
    weak: bool = False
    implied: str | None = None  # a concept the number word itself carries ("tripled")
    grid: tuple[float, float] | None = None
    before: list[Term] = field(default_factory=list)  # nearest first
    after: list[Term] = field(default_factory=list)
    head: int = 0  # how many of `after` come before a preposition: the counted noun phrase
    stems: set[str] = field(default_factory=set)  # every stem around it, for "shrinks by 10%"


_TOKEN = re.compile(r"\d+(?:\.\d+)?|(?<![\w.])\.\d+|[a-z]+|[%\u00d7]|[.,;:!?()\[\]]")


def _lower(text: str) -> str:
    """Lower case without changing the length, so spans index the original text."""
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def _tokens(text: str) -> list[_Tok]:
    return [_Tok(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _word_number(toks: list[_Tok], i: int) -> tuple[float, int] | None:
    """A number written in words at token i: its value and how many tokens it takes."""
    t = toks[i].text
    nxt = toks[i + 1].text if i + 1 < len(toks) else ""
    if t == "a" and nxt in SCALES:
        return SCALES[nxt], 2
    if t in GROUPS and (t == "dozen" or nxt == "of"):
        return GROUPS[t], 2 if nxt == "of" else 1  # "a pair of": the count noun follows "of"
    if t == "single":
        return 1, 1
    if t in TENS:
        value, n = TENS[t], 1
        if nxt in UNITS and 0 < UNITS[nxt] < 10:
            value, n = value + UNITS[nxt], 2
    elif t in UNITS:
        value, n = UNITS[t], 1
    else:
        return None
    if i + n < len(toks) and toks[i + n].text in SCALES:
        value, n = value * SCALES[toks[i + n].text], n + 1
    return value, n


def _mention_at(toks: list[_Tok], i: int) -> _Mention | None:
    t = toks[i].text
    if t[0].isdigit() or (t[0] == "." and len(t) > 1):
        m = _Mention(float(t), toks[i].start, toks[i].end, i, i + 1, integer="." not in t)
    elif t in MULTIPLIERS:
        return _Mention(MULTIPLIERS[t], toks[i].start, toks[i].end, i, i + 1,
                        implied=concept_of(t))
    else:
        found = _word_number(toks, i)
        if found is None:
            return None
        value, n = found
        m = _Mention(value, toks[i].start, toks[i + n - 1].end, i, i + n, weak=t in WEAK)
        if m.weak and _not_a_count(toks, i):
            return None
    nxt = toks[m.last].text if m.last < len(toks) else ""
    if nxt == "way":  # "a three-way split": three parties
        m.implied, m.end, m.last = "#agent", toks[m.last].end, m.last + 1
    elif nxt in ("%", "percent"):
        m.percent, m.end, m.last = True, toks[m.last].end, m.last + 1
    return m


def _not_a_count(toks: list[_Tok], i: int) -> bool:
    before = toks[i - 1].text if i > 0 else ""
    after = toks[i + 1].text if i + 1 < len(toks) else ""
    return before in NOT_A_COUNT_BEFORE or after in NOT_A_COUNT_AFTER


def _mentions(toks: list[_Tok]) -> list[_Mention]:
    found: list[_Mention] = []
    i = 0
    while i < len(toks):
        m = _mention_at(toks, i)
        if m is None:
            i += 1
            continue
        found.append(m)
        i = m.last
    return _join_grids(found, toks)


def _join_grids(found: list[_Mention], toks: list[_Tok]) -> list[_Mention]:
    """"8 x 8", "8x8", "8 by 8", "8×8": one grid mention."""
    out: list[_Mention] = []
    i = 0
    while i < len(found):
        a = found[i]
        b = found[i + 1] if i + 1 < len(found) else None
        if (b is not None and not a.percent and b.first == a.last + 1
                and toks[a.last].text in GRID_JOINERS):
            out.append(_Mention(max(a.value, b.value), a.start, b.end, a.first, b.last,
                                grid=(a.value, b.value)))
            i += 2
        else:
            out.append(a)
            i += 1
    return out


def _add_context(mentions: list[_Mention], toks: list[_Tok], text: str) -> None:
    for k, m in enumerate(mentions):
        lo = mentions[k - 1].last if k > 0 else 0
        hi = mentions[k + 1].first if k + 1 < len(mentions) else len(toks)
        first = next((j + 1 for j in range(m.first - 1, lo - 1, -1)
                      if toks[j].text in BOUNDARY), lo)
        last = next((j for j in range(m.last, hi)
                     if toks[j].text in BOUNDARY or toks[j].text in RATE_WORDS), hi)
        left = toks[first].start if first < m.first else m.start
        right = toks[last - 1].end if last > m.last else m.end
        m.before = list(reversed(_shift(analyze(text[left:m.start]), left)))[:4]
        m.after = _shift(analyze(text[m.end:right]), m.end)[:3]
        ends = [toks[j].start for j in range(m.last, last) if toks[j].text in NOUN_PHRASE_ENDS]
        m.head = sum(1 for t in m.after if not ends or t.start < ends[0])
        m.stems = {stem(t.text) for t in toks[first:last]}


def _shift(terms: list[Term], offset: int) -> list[Term]:
    return [Term(t.key, t.surface, t.start + offset, t.end + offset) for t in terms]


# ----------------------------------------------------------------------------- vocabularies
@dataclass(frozen=True)
class _Key:
    weight: float
    counted_only: bool = False  # matches only the noun counted by the number ("three robots")


Vocab = dict[str, _Key]


def _add(vocab: Vocab, key: str, weight: float, counted_only: bool = False) -> None:
    if key not in vocab or vocab[key].weight < weight:
        vocab[key] = _Key(weight, counted_only)


def _doc_terms(doc: str, spec: EnvSpec) -> list[Term]:
    """A param's doc without the names of other params ("below n_targets")."""
    words = [w for w in doc.split() if w.strip(",.;:()") not in spec.params]
    return analyze(" ".join(words).replace("-", " "))


def _count_roles(spec: EnvSpec) -> dict[str, list[str]]:
    """param name -> the roles whose count it is."""
    out: dict[str, list[str]] = {}
    for role, r in spec.agents.items():
        if isinstance(r.count, str) and r.count in spec.params:
            out.setdefault(r.count, []).append(role)
    return out


def _param_vocabs(spec: EnvSpec) -> dict[str, Vocab]:
    """Each param's words: its name, its doc (a doc word shared by k params weighs 1/sqrt(k):
    it says little about which one is meant) and, for a count, its roles and agent nouns."""
    docs = {name: {t.key for t in _doc_terms(p.doc, spec)} for name, p in spec.params.items()}
    spread = Counter(key for keys in docs.values() for key in keys)
    roles = _count_roles(spec)
    vocabs: dict[str, Vocab] = {}
    for name in spec.params:
        vocab: Vocab = {}
        for w in name.split("_"):
            if w not in GENERIC_NAME_WORDS:
                _add(vocab, concept_of(w), NAME_WEIGHT, counted_only=name in roles)
        for key in sorted(docs[name]):
            _add(vocab, key, DOC_WEIGHT / math.sqrt(spread[key]))
        if name in roles:
            _add(vocab, "#agent", AGENT_WEIGHT, counted_only=True)  # a tie if several roles count
            for role in roles[name]:
                _add(vocab, concept_of(role), NAME_WEIGHT, counted_only=True)
        vocabs[name] = vocab
    return vocabs


def _structural_vocabs(spec: EnvSpec) -> dict[str, Vocab]:
    """Fixed-count roles: 'agents' (all of them, when every role is fixed) and each role."""
    fixed = {role: r for role, r in spec.agents.items() if isinstance(r.count, int)}
    vocabs: dict[str, Vocab] = {}
    for role, r in fixed.items():
        vocab: Vocab = {}
        _add(vocab, concept_of(role), NAME_WEIGHT, counted_only=True)
        for t in analyze(r.doc):
            _add(vocab, t.key, DOC_WEIGHT, counted_only=True)
        vocabs[f"{STRUCTURAL}.{role}"] = vocab
    if fixed and len(fixed) == len(spec.agents):
        vocabs[STRUCTURAL] = {"#agent": _Key(AGENT_WEIGHT, True)}
        if len(fixed) == 1:  # one role: its words also name all the agents
            vocabs[STRUCTURAL].update(vocabs.pop(f"{STRUCTURAL}.{next(iter(fixed))}"))
    return vocabs


def _match(m: _Mention, vocab: Vocab) -> tuple[float, list[Term]]:
    """The best context word's weight, plus a tenth of the others; and the words that matched."""
    hits: list[tuple[float, Term]] = []
    implied = [Term(m.implied, "", m.start, m.end)] if m.implied else []
    sides = ((implied, (1.0,), 1), (m.after, AFTER_WEIGHTS, m.head),
             (m.before, BEFORE_WEIGHTS, 0))
    seen: set[str] = set()
    for terms, weights, counted in sides:
        for i, (term, pos_weight) in enumerate(zip(terms, weights, strict=False)):
            w = _key_weight(term.key, vocab, counted=i < counted)
            if w > 0 and term.key not in seen:
                seen.add(term.key)
                hits.append((w * pos_weight, term))
    if not hits:
        return 0.0, []
    hits.sort(key=lambda h: -h[0])
    score = hits[0][0] + 0.1 * sum(h for h, _ in hits[1:])
    return score, [t for _, t in hits]


def _key_weight(key: str, vocab: Vocab, counted: bool) -> float:
    """`counted`: the word is in the noun phrase right after the number (may name a count)."""
    k = vocab.get(key)
    if k is not None and (counted or not k.counted_only):
        return k.weight
    related = [vocab[r].weight * f for r, f in RELATED.get(key, {}).items()
               if r in vocab and (counted or not vocab[r].counted_only)]
    return max(related, default=0.0)


# ----------------------------------------------------------------------------- values
@dataclass(frozen=True)
class _Converted:
    value: Value
    note: str
    clamped: bool


def _convert(m: _Mention, name: str, p: Param) -> _Converted | str:
    """The mention's value for param p (clamped, with a note), or why it cannot be one."""
    if p.type == "bool":
        return f"{name} is a switch (on/off), not a number"
    fraction = p.type == "float" and p.max is not None and p.max <= 1
    value, note = m.value, ""
    if m.percent:
        if not fraction:
            return f"{name} is not a share, so a percentage does not fit it"
        value = m.value / 100
    elif fraction and value > 1:
        return f"{name} is a share from {_fmt(p.min or 0)} to {_fmt(p.max or 1)}"
    elif fraction and m.weak:
        return f"{name} is a share; \"one\" or \"single\" counts things, it does not give a share"
    if "discount" in name and m.stems & SHRINK_STEMS and 0 < value < 1:
        kept = round(1 - value, 10)
        note = f"shrinking by {_fmt(value)} each time is a discount of {_fmt(kept)}"
        value = kept
    if p.type == "int" and not float(value).is_integer():
        return f"{name} takes whole numbers"
    return _clamp(value, p, note)


def _clamp(value: float, p: Param, note: str) -> _Converted:
    clamped = False
    if p.min is not None and value < p.min:
        note = _join(note, f"clamped to min {_fmt(p.min)} (asked {_fmt(value)})")
        value, clamped = p.min, True
    if p.max is not None and value > p.max:
        note = _join(note, f"clamped to max {_fmt(p.max)} (asked {_fmt(value)})")
        value, clamped = p.max, True
    typed: Value = int(round(value)) if p.type == "int" else float(value)
    return _Converted(typed, note, clamped)


def _join(a: str, b: str) -> str:
    return "; ".join(x for x in (a, b) if x)


def _fmt(x: float) -> str:
    return f"{x:g}"


def _phrase(text: str, m: _Mention, terms: Sequence[Term]) -> str:
    start = min([m.start, *(t.start for t in terms)])
    end = max([m.end, *(t.end for t in terms)])
    return " ".join(text[start:end].split())


# ----------------------------------------------------------------------------- assignment
@dataclass(frozen=True)
class _Candidate:
    score: float  # word match, lowered when the value had to be clamped
    mention: int
    target: str  # a param name, or "agents" / "agents.<role>"
    value: Value
    note: str
    terms: tuple[Term, ...]
    clamped: bool = False


@dataclass(frozen=True)
class _Miss:
    score: float
    target: str
    reason: str  # why the number cannot set it


def _candidates(m: _Mention, k: int, spec: EnvSpec, vocabs: dict[str, Vocab],
                structural: dict[str, Vocab]) -> tuple[list[_Candidate], list[_Miss]]:
    found: list[_Candidate] = []
    misses: list[_Miss] = []
    for name, p in spec.params.items():
        score, terms = _match(m, vocabs[name])
        if score < MIN_SCORE:
            continue
        conv = _convert(m, name, p)
        if isinstance(conv, str):
            misses.append(_Miss(score, name, conv))
        else:
            factor = OUT_OF_RANGE_FACTOR if conv.clamped else 1.0
            found.append(_Candidate(score * factor, k, name, conv.value, conv.note, tuple(terms),
                                    conv.clamped))
    if m.grid is None and m.integer and not m.percent:
        for target, vocab in structural.items():
            score, terms = _match(m, vocab)
            if score >= MIN_SCORE:
                found.append(_Candidate(score, k, target, int(m.value), "", tuple(terms)))
    return found, misses


class _Filler:
    """Greedy assignment of mentions to params, best pairs first."""

    def __init__(self, spec: EnvSpec, text: str, mentions: list[_Mention]) -> None:
        self.spec, self.text, self.mentions = spec, text, mentions
        self.fill = ParamFill()
        self.done: set[int] = set()
        self.source: dict[str, str] = {}  # param -> the phrase that set it
        self.misses: dict[int, list[_Miss]] = {}
        self.has_others = any(t.text in OTHERS for t in _tokens(text))

    def run(self) -> ParamFill:
        vocabs, structural = _param_vocabs(self.spec), _structural_vocabs(self.spec)
        cands: list[_Candidate] = []
        for k, m in enumerate(self.mentions):
            if m.grid is not None:
                self._grid(k, m)
                continue
            found, self.misses[k] = _candidates(m, k, self.spec, vocabs, structural)
            cands += found
        cands.sort(key=lambda c: (-c.score, self.mentions[c.mention].start, c.target))
        by_mention: dict[int, list[_Candidate]] = {}
        for c in cands:
            by_mention.setdefault(c.mention, []).append(c)
        for c in cands:
            if c.mention not in self.done:
                self._take(c, by_mention[c.mention])
        for k, m in enumerate(self.mentions):
            if k not in self.done and not m.weak:
                self.fill.ignored.append(self._why_ignored(k, by_mention.get(k, [])))
        return self.fill

    def _take(self, c: _Candidate, rivals: list[_Candidate]) -> None:
        m = self.mentions[c.mention]
        if c.target.startswith(STRUCTURAL):
            self.done.add(c.mention)
            self._structural(c, m)
            return
        if c.target in self.fill.values:
            if self.fill.values[c.target] == c.value:
                self.done.add(c.mention)  # said twice
            return
        if m.weak and (c.clamped or (self.has_others and c.target in _count_roles(self.spec))):
            return  # "one robot ... the other", "one sealed bid": not a setting
        tie = [r.target for r in rivals if r is not c and r.score == c.score
               and r.target not in self.fill.values and not r.target.startswith(STRUCTURAL)]
        self.done.add(c.mention)
        phrase = _phrase(self.text, m, c.terms)
        if tie:
            self.fill.ignored.append(f"'{phrase}' ({_fmt(m.value)}): could set {c.target} or "
                                     f"{' or '.join(tie)}; the text does not say which")
            return
        self._set(c.target, c.value, phrase, c.note)

    def _set(self, name: str, value: Value, phrase: str, note: str) -> None:
        self.fill.values[name] = value
        self.source[name] = phrase
        self.fill.evidence.append(ParamEvidence(name, value, phrase, note))

    def _structural(self, c: _Candidate, m: _Mention) -> None:
        role = c.target.partition(".")[2]
        roles = [role] if role else list(self.spec.agents)
        expected = sum(int(self.spec.agents[r].count) for r in roles)
        noun = f"{role}s" if role else "agents"
        phrase = _phrase(self.text, m, c.terms)
        if c.value == expected:
            self.fill.evidence.append(ParamEvidence(
                c.target, c.value, phrase, f"matches the template's fixed {expected} {noun}"))
        elif not (m.weak and c.value < expected):
            self.fill.conflicts.append(
                f"the text asks for {c.value} {noun} ('{phrase}') but {self.spec.name} has "
                f"exactly {expected}; the environment keeps {expected}")

    def _why_ignored(self, k: int, cands: list[_Candidate]) -> str:
        m = self.mentions[k]
        phrase = _phrase(self.text, m, m.after[:1])
        head = f"'{phrase}' ({_fmt(m.value)}{'%' if m.percent else ''})"
        taken = [c for c in cands if c.target in self.fill.values]
        misses = self.misses.get(k, [])
        best_taken = max(taken, key=lambda c: c.score, default=None)
        best_miss = max(misses, key=lambda x: x.score, default=None)
        if best_taken and (best_miss is None or best_taken.score >= best_miss.score):
            name = best_taken.target
            return (f"{head}: {name} is already set to {self.fill.values[name]} "
                    f"from '{self.source.get(name, '')}'")
        if best_miss:
            return f"{head}: {best_miss.reason}"
        return f"{head}: no parameter of {self.spec.name} matches the words around it"

    def _grid(self, k: int, m: _Mention) -> None:
        self.done.add(k)
        assert m.grid is not None
        rows, cols = m.grid
        phrase = " ".join(self.text[m.start:m.end].split())
        targets = _grid_params(self.spec)
        if targets is None:
            self.fill.ignored.append(f"'{phrase}': {self.spec.name} has no grid size to set")
            return
        height, width = targets
        if height == width:
            side = max(rows, cols)
            note = "" if rows == cols else f"the grid is square: used the larger side {_fmt(side)}"
            self._grid_side(height, side, phrase, note)
        else:
            self._grid_side(height, rows, phrase, "rows")
            self._grid_side(width, cols, phrase, "columns")

    def _grid_side(self, name: str, value: float, phrase: str, note: str) -> None:
        conv = _clamp(value, self.spec.params[name], "")
        self._set(name, conv.value, phrase, _join(note, conv.note))


def _grid_params(spec: EnvSpec) -> tuple[str, str] | None:
    """The params a grid size sets: the height and width params of a mechanics module with a size
    (a grid's), else a param named `size`."""
    for m in MECHANICS.values():
        section = getattr(spec, m.name, None)
        if m.size is not None and section is not None:
            h, w = m.size(section)
            if isinstance(h, str) and isinstance(w, str) and h in spec.params and w in spec.params:
                return h, w
    return ("size", "size") if "size" in spec.params else None


# ----------------------------------------------------------------------------- switches
def _switch_keys(name: str, p: Param) -> list[str] | None:
    """The words that turn a switch on: a bool, or a 0..1 param that is off by default."""
    off_float = (p.type == "float" and p.min is not None and p.max is not None and p.max <= 1
                 and p.default == p.min)
    if p.type != "bool" and not off_float:
        return None
    keys = [concept_of(w) for w in name.split("_") if w not in SWITCH_GENERIC]
    return keys or None


def _switch_value(p: Param, negated: bool) -> tuple[Value, str]:
    if p.type == "bool":
        return (not negated), ""
    if negated:
        return float(p.min or 0.0), ""
    assert p.min is not None and p.max is not None
    mid = round((p.min + p.max) / 2, 10)
    return mid, f"no number given: set to {_fmt(mid)}, the middle of its range"


def _negated(text: str, term: Term) -> bool:
    """'no slip', 'without noise', 'non-slippery', 'noise-free', 'noiseless'."""
    return bool(_negation_before(text, term)) or _free_after(text, term) or \
        term.surface.endswith("less")


def _negation_before(text: str, term: Term) -> str:
    clause = re.split(r"[.,;:!?()]", text[max(0, term.start - 30):term.start])[-1]
    words = _WORDS.findall(clause)[-2:]
    return next((w for w in reversed(words) if w in NEGATIONS), "")


def _free_after(text: str, term: Term) -> bool:
    return re.match(r"[- ]?free\b", text[term.end:term.end + 6]) is not None


_WORDS = re.compile(r"[a-z]+")


def _switches(spec: EnvSpec, text: str, fill: ParamFill) -> None:
    terms = analyze(text.replace("-", " "))
    stripped = [Term(concept_of(t.surface[:-4]), t.surface, t.start, t.end)
                for t in terms if t.surface.endswith("less")]  # noiseless -> noise, negated
    keys: dict[str, Term] = {}
    for t in sorted([*stripped, *terms], key=lambda t: t.start):
        keys.setdefault(t.key, t)
    for name, p in spec.params.items():
        needed = _switch_keys(name, p)
        if name in fill.values or not needed or not all(k in keys for k in needed):
            continue
        term = keys[needed[0]]
        value, note = _switch_value(p, _negated(text, term))
        fill.values[name] = value
        fill.evidence.append(ParamEvidence(name, value, _around(text, term), note))


def _around(text: str, term: Term) -> str:
    """The switch word, with its negation if it has one ("no slip", "noise-free")."""
    negation = _negation_before(text, term)
    phrase = f"{negation} {term.surface}" if negation else term.surface
    return f"{phrase}-free" if _free_after(text, term) else phrase


# ----------------------------------------------------------------------------- entry point
def extract_params(task: str, spec: EnvSpec) -> ParamFill:
    """Params of `spec` set from numbers and words in `task`, with the evidence for each."""
    text = _lower(task)
    toks = _tokens(text.replace("-", " "))
    mentions = _mentions(toks)
    _add_context(mentions, toks, text.replace("-", " "))
    fill = _Filler(spec, text, mentions).run()
    _switches(spec, text, fill)
    return fill
