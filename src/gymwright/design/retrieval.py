"""Retrieval over the spec library: which template is nearest a task text.

In one sentence: a template's similarity is the share of the task's informative words that its
spec covers, each word weighted by its rarity across the library (IDF) and by how prominently the
spec uses it (BM25 over the spec's fields: name and tags weigh 3, description, role and action
names 2, doc and params 1), after stop words, light stemming and a small hand-written table of
concepts (pie, pizza -> cake; robots, players -> agent; ...).

It is deterministic, needs no model, and every score can be explained word by word (`Match`
keeps the task words that matched). The offline designer uses `best_fit`; the model designer
uses `rank_library` to pick the few-shot example specs nearest a task.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from gymwright.spec.loader import library_names, load_spec
from gymwright.spec.model import EnvSpec

# Calibrated by tests/design/test_offline_designer.py: its 37 paraphrases score 0.36 to 0.95, its 8
# off-library tasks (Cournot, chess, poker, a market maker, ...) 0.01 to 0.19. The threshold
# sits in the gap, a little nearer the paraphrases: passing off a wrong template is worse
# than asking for a model.
FIT_THRESHOLD = 0.30
# Two templates closer than this are a near tie; the best one then needs a word of its own.
NEAR_TIE = 0.05
# A task word that no library spec uses counts like a word that only one spec uses.
UNKNOWN_DF = 1
K1, B = 1.2, 0.5  # BM25 saturation and length normalisation

FIELD_WEIGHTS = {"name": 3.0, "tags": 3.0, "description": 2.0, "roles": 2.0, "actions": 2.0,
                 "doc": 1.0, "params": 1.0}

# Concept -> surface forms (phrases allowed). Both the task and the specs are read through it.
# Agent nouns of one role (bidder, harvester, predator) are kept apart from the actions (bid,
# harvest, chase) so that "five bidders" can later be told from "five bid levels".
CONCEPTS: dict[str, tuple[str, ...]] = {
    "agent": ("agent", "player", "robot", "bot", "participant", "individual", "person", "people",
              "actor", "drone", "party", "member", "competitor", "opponent", "teammate", "ai",
              "villager", "resident", "household", "worker", "user", "trader", "firm", "company",
              "country", "nation", "student", "customer"),
    "cake": ("cake", "pie", "pizza", "pastry", "dessert", "tart", "pudding", "loaf",
             "chocolate bar"),
    "split": ("split", "divide", "division", "partition", "apportion", "carve", "cut up",
              "allocate", "allocation", "distribute", "distribution"),
    "offer": ("offer", "proposal", "propose", "proposer", "counteroffer", "counter offer",
              "counter proposal", "suggest", "suggestion"),
    "alternate": ("alternate", "alternating", "alternately", "take turns", "taking turns",
                  "take turn", "in turn", "turn based", "one after the other", "back and forth",
                  "turn by turn"),
    "accept": ("accept", "acceptance", "agree", "agreement"),
    "reject": ("reject", "rejection", "refuse", "refusal", "decline", "turn down", "turns down",
               "turned down"),
    "negotiate": ("negotiate", "negotiation", "negotiator", "bargain", "bargaining", "bargainer",
                  "haggle", "haggling", "barter", "bartering"),
    "discount": ("discount", "discounted", "discount factor", "shrink", "shrinking", "smaller",
                 "decay", "melt", "spoil", "lose", "gamma"),
    "memory": ("memory", "remember", "recall", "history"),
    "round": ("round", "turn", "period", "iteration", "repetition", "season", "year", "day",
              "week", "month", "generation", "times", "shot", "episode"),
    "step": ("step", "move", "tick", "timestep", "time step"),
    "horizon": ("horizon", "deadline", "time limit", "time horizon", "cutoff", "cut off"),
    "repeat": ("repeat", "repeated", "repeatedly", "iterated", "iterate", "again and again",
               "over and over"),
    "prisoner": ("prisoner", "prison", "jail", "suspect", "criminal", "accomplice"),
    "defect": ("defect", "defection", "betray", "betrayal", "rat out", "snitch", "confess",
               "cheat"),
    "cooperate": ("cooperate", "cooperation", "cooperative", "collaborate", "collaboration",
                  "collaborative", "teamwork", "work together", "stay silent", "keep quiet"),
    "reciprocity": ("tit for tat", "reciprocity", "reciprocate", "reciprocal", "retaliate",
                    "retaliation", "grim trigger", "revenge", "forgive", "forgiving"),
    "simultaneous": ("simultaneous", "simultaneously", "at the same time", "at once",
                     "concurrently"),
    "stag": ("stag", "deer", "elk", "moose", "big game"),
    "hare": ("hare", "rabbit", "bunny", "small game"),
    "hunt": ("hunt", "hunting"),
    "coordinate": ("coordinate", "coordination", "trust", "assurance", "risk dominant",
                   "payoff dominant"),
    "need": ("need", "needed", "require", "required", "requires", "at least", "enough",
             "threshold"),
    "predator": ("predator", "wolf", "lion", "tiger", "cop", "police", "policeman", "chaser",
                 "pursuer", "seeker", "cat", "shark", "hawk"),
    "prey": ("prey", "sheep", "mouse", "thief", "robber", "evader", "runner", "fugitive",
             "hider"),
    "chase": ("chase", "pursue", "pursuit", "evade", "evasion", "escape", "flee", "hide and seek"),
    "catch": ("catch", "capture", "corner", "surround", "trap"),
    "grid": ("grid", "gridworld", "grid world", "maze", "map", "warehouse", "lattice", "cell",
             "tile", "arena", "labyrinth"),
    "frozen": ("frozen", "ice", "icy", "frost", "frozenlake"),
    "slip": ("slip", "slippery", "slide", "sliding", "slick", "skid"),
    "hole": ("hole", "pit", "crack", "crevasse"),
    "collide": ("collide", "collision", "crash", "bump", "bump into", "run into", "conflict"),
    "navigate": ("navigate", "navigation", "travel", "cross", "traverse", "walk", "fly", "drive",
                 "route",
                 "routing", "path", "pathfinding", "path finding", "path planning", "mapf"),
    "goal": ("goal", "destination", "deliver", "delivery", "pickup", "dropoff"),
    "auction": ("auction", "auctioneer"),
    "bid": ("bid", "bidding"),
    "bidder": ("bidder", "buyer"),
    "sealed": ("sealed", "envelope"),
    "private": ("private", "privately", "secret", "secretly", "hidden", "concealed",
                "incomplete information"),
    "value": ("value", "valuation", "worth", "utility", "preference", "prefer"),
    "item": ("item", "object", "thing", "artifact", "bundle", "basket"),
    "contribute": ("contribute", "contribution", "donate", "donation", "invest", "investment",
                   "chip in", "put in", "put into", "pay into"),
    "pot": ("pot", "fund", "kitty", "common pot", "public fund"),
    "freeride": ("free ride", "free riding", "free rider", "freeride", "freeload",
                 "freeloader", "freeloading"),
    "multiply": ("multiply", "multiplied", "multiplier", "double", "doubled", "triple",
                 "tripled", "amplify"),
    "commons": ("commons", "tragedy", "tragedy of the commons", "common pool", "shared resource",
                "common resource", "common property"),
    "resource": ("resource", "stock", "fish", "fishery", "population", "biomass", "forest",
                 "tree", "timber", "wood", "grass", "pasture", "water", "aquifer"),
    "harvester": ("harvester", "fisherman", "fisher", "herder", "logger", "lumberjack",
                  "farmer", "shepherd"),
    "harvest": ("harvest", "logging", "graze", "grazing", "overfish", "overfishing",
                "overharvest", "overgraze", "extract", "extraction", "deplete", "depletion",
                "overuse", "consume", "consumption"),
    "regrow": ("regrow", "regrowth", "regenerate", "regeneration", "replenish", "refill", "renew",
               "renewable", "sustainable", "sustainability", "grow", "growth", "logistic"),
    "collapse": ("collapse", "extinct", "extinction", "exhausted", "ruin", "dry up", "dries up",
                 "run dry", "runs dry"),
    "communicate": ("communicate", "communication", "talk", "speak", "say", "tell", "message",
                    "signal", "signaling", "signalling", "language", "word", "symbol",
                    "vocabulary", "vocab", "utterance", "utter", "channel", "emergent", "send"),
    "speaker": ("speaker", "sender", "teller", "describer", "instructor", "informant"),
    "listener": ("listener", "receiver", "hearer", "guesser", "follower"),
    "target": ("target", "landmark", "candidate", "referent"),
    "pick": ("pick", "select", "guess", "identify"),
    "noise": ("noise", "noisy", "garble", "garbled", "corrupt", "corrupted", "trembling hand",
              "tremble"),
}

STOP_WORDS = frozenset("""
a an the and or nor but of to in on at by for with within without from into onto over under
about above after before between through during per via than then so as if else when while
where which who whom whose what how why that this these those there here it its they them their
theirs he she his her him we us our you your i me my is are was were be been being am has have
had having do does did doing will would shall should can could may might must not no yes also
only just very too such same other another each every all any both either neither some many
much more most less least few several own up out off again further once plus
want wants learn learns learning train trained training make makes making get gets got give
gives use uses using try tries trying environment env task setting scenario simulation
simulate simulated model etc like way kind sort
one two three four five six seven eight nine ten eleven twelve twenty hundred thousand
""".split())

_WORD = re.compile(r"[a-z]+")
_IRREGULAR = {"caught": "catch", "wolves": "wolf", "mice": "mouse", "people": "person",
              "fishermen": "fisherman", "thieves": "thief", "men": "man", "women": "woman",
              "halves": "half", "lives": "life", "said": "say", "sent": "send", "ran": "run"}


@dataclass(frozen=True)
class Match:
    """A library spec and its similarity to a task (0..1), with the task words that matched."""

    name: str
    score: float
    matched: tuple[str, ...]


@dataclass(frozen=True)
class Term:
    """One analysed word or phrase of a text: its key (stem or `#concept`) and where it was."""

    key: str
    surface: str
    start: int
    end: int


# ----------------------------------------------------------------------------- text analysis
def stem(word: str) -> str:
    """A light, deterministic stemmer: plurals, -ing, -ed, -ly and a final e."""
    w = _IRREGULAR.get(word, word)
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "xes", "ches", "shes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ly") and len(w) > 5:
        w = w[:-2]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def _stems(phrase: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in _WORD.findall(phrase.lower()))


@lru_cache(maxsize=1)
def _concept_table() -> tuple[dict[str, str], dict[tuple[str, ...], str], int]:
    """Single stems -> concept, stemmed phrases -> concept, and the longest phrase length."""
    words: dict[str, str] = {}
    phrases: dict[tuple[str, ...], str] = {}
    for concept, forms in CONCEPTS.items():
        for form in forms:
            key = _stems(form)
            if len(key) == 1:
                words.setdefault(key[0], concept)
            else:
                phrases.setdefault(key, concept)
    return words, phrases, max(len(p) for p in phrases)


def concept_of(word: str) -> str:
    """The key of one word: `#concept` if the concept table knows its stem, else the stem."""
    s = stem(word.lower())
    words, _, _ = _concept_table()
    return f"#{words[s]}" if s in words else s


def analyze(text: str) -> list[Term]:
    """The informative terms of a text, in order: phrases and words mapped to concepts first,
    then stop words (and one-letter words and numbers) dropped."""
    lowered = re.sub(r"['\u2019]s\b", "  ", text.lower())
    tokens = [(m.group(), m.start(), m.end()) for m in _WORD.finditer(lowered)]
    stems = [stem(t[0]) for t in tokens]
    words, phrases, longest = _concept_table()
    out: list[Term] = []
    i = 0
    while i < len(tokens):
        hit = _phrase_at(stems, i, phrases, longest)
        if hit:
            n, concept = hit
            start, end = tokens[i][1], tokens[i + n - 1][2]
            out.append(Term(f"#{concept}", lowered[start:end], start, end))
            i += n
            continue
        word, start, end = tokens[i]
        if stems[i] in words:
            out.append(Term(f"#{words[stems[i]]}", lowered[start:end], start, end))
        elif word not in STOP_WORDS and len(word) > 1:
            out.append(Term(stems[i], lowered[start:end], start, end))
        i += 1
    return out


def _phrase_at(stems: list[str], i: int, phrases: dict[tuple[str, ...], str],
               longest: int) -> tuple[int, str] | None:
    for n in range(min(longest, len(stems) - i), 1, -1):
        concept = phrases.get(tuple(stems[i:i + n]))
        if concept:
            return n, concept
    return None


def display(term: Term) -> str:
    """How a matched task term is shown: the task's own words, plus the concept if different."""
    if term.key.startswith("#"):
        concept = term.key[1:]
        if _stems(term.surface) != _stems(concept):
            return f"{term.surface} ({concept})"
    return term.surface


# ----------------------------------------------------------------------------- the index
@dataclass(frozen=True)
class _Index:
    tf: dict[str, Counter[str]]  # spec name -> key -> field-weighted count
    length: dict[str, float]
    avg_length: float
    df: Counter[str]


def spec_fields(spec: EnvSpec) -> dict[str, str]:
    """The text of each weighted field of a spec."""
    roles = " ".join(f"{r} {role.doc}" for r, role in spec.agents.items())
    actions = " ".join(f"{c.name} {c.doc}" for cs in spec.actions.values() for c in cs)
    params = " ".join(f"{p.replace('_', ' ')} {v.doc}" for p, v in spec.params.items())
    return {"name": spec.name.replace("_", " "), "tags": " ".join(spec.tags),
            "description": spec.description, "roles": roles, "actions": actions,
            "doc": spec.doc, "params": params}


def _spec_tf(spec: EnvSpec) -> Counter[str]:
    tf: Counter[str] = Counter()
    for field_name, text in spec_fields(spec).items():
        for term in analyze(text.replace("-", " ")):
            tf[term.key] += FIELD_WEIGHTS[field_name]
    return tf


@lru_cache(maxsize=1)
def _index() -> _Index:
    tf = {name: _spec_tf(load_spec(name)) for name in library_names()}
    length = {name: sum(c.values()) for name, c in tf.items()}
    df: Counter[str] = Counter()
    for counts in tf.values():
        df.update(counts.keys())
    return _Index(tf, length, sum(length.values()) / max(len(length), 1), df)


def _idf(key: str, index: _Index) -> float:
    n = len(index.tf)
    df = index.df.get(key, 0) or UNKNOWN_DF
    return math.log((n + 1) / (df + 0.5))


def _saturation(tf: float, length: float, avg_length: float) -> float:
    """BM25's term-frequency factor scaled to 0..1."""
    if tf <= 0:
        return 0.0
    norm = K1 * (1 - B + B * length / avg_length)
    return tf / (tf + norm)


# ----------------------------------------------------------------------------- ranking
def rank_library(task: str, names: Sequence[str] | None = None) -> list[Match]:
    """Every library spec (or those in `names`) with its similarity to `task`, best first."""
    index = _index()
    chosen = list(index.tf) if names is None else _known(names, index)
    terms = _unique(analyze(task.replace("-", " ")))
    total = sum(_idf(t.key, index) for t in terms)
    matches = [_score(name, terms, total, index) for name in chosen]
    return sorted(matches, key=lambda m: (-m.score, m.name))


def _known(names: Iterable[str], index: _Index) -> list[str]:
    names = list(names)
    unknown = [n for n in names if n not in index.tf]
    if unknown:
        raise ValueError(f"not library specs: {', '.join(unknown)}; "
                         f"the library has: {', '.join(index.tf)}")
    return names


def _unique(terms: list[Term]) -> list[Term]:
    seen: dict[str, Term] = {}
    for t in terms:
        seen.setdefault(t.key, t)
    return list(seen.values())


def _score(name: str, terms: list[Term], total: float, index: _Index) -> Match:
    if total <= 0:
        return Match(name, 0.0, ())
    contributions = []
    for t in terms:
        sat = _saturation(index.tf[name].get(t.key, 0.0), index.length[name], index.avg_length)
        if sat > 0:
            contributions.append((_idf(t.key, index) * sat, t))
    contributions.sort(key=lambda c: (-c[0], c[1].start))
    score = round(sum(c for c, _ in contributions) / total, 4)
    return Match(name, score, tuple(display(t) for _, t in contributions))


def is_near_tie(best: Match, second: Match | None) -> bool:
    """The best match is barely ahead of the second and matches no task word of its own."""
    if second is None or best.score - second.score >= NEAR_TIE:
        return False
    return not set(best.matched) - set(second.matched)


def best_fit(task: str) -> tuple[Match | None, list[Match]]:
    """The library spec that fits `task` (None if none clears FIT_THRESHOLD or the best is a
    near tie without a word of its own), and the whole ranking."""
    ranking = rank_library(task)
    best = ranking[0] if ranking else None
    second = ranking[1] if len(ranking) > 1 else None
    if best is None or best.score < FIT_THRESHOLD or is_near_tie(best, second):
        return None, ranking
    return best, ranking


# ----------------------------------------------------------------------------- game types
# The kind of game a text describes, from its words (phrases as consecutive stems, stop words
# kept): the model designer offers as few-shot examples only library specs of a kind the task
# has (a two-car intersection is not a commons because both say "step" and "time"). A library
# spec's kinds come from its name and tags only (curated; its prose mentions other games).
GAME_TYPES: dict[str, tuple[str, ...]] = {
    "matrix game": ("matrix game", "payoff matrix", "normal form", "repeated game", "iterated",
                    "prisoner", "stag hunt", "rock paper scissors", "rock paper",
                    "paper scissors", "scissors", "rpsls", "spock", "matching pennies",
                    "game of chicken", "hawk dove", "battle of the sexes", "coordination game",
                    "minority game", "el farol", "blotto"),
    "auction": ("auction", "bid", "bidder", "bidding", "vickrey", "second price", "first price"),
    "bargaining": ("negotiation", "negotiate", "bargain", "bargaining", "ultimatum",
                   "alternating offer", "counteroffer", "counter offer", "split the", "divide the",
                   "multi issue"),
    "grid movement": ("grid", "gridworld", "grid world", "maze", "cell", "path finding", "mapf",
                      "navigation", "lattice", "push", "pursuit evasion", "predator prey",
                      "capture the flag", "forage", "foraging", "coverage", "warehouse"),
    "card game": ("card", "deck", "poker", "kuhn", "blackjack", "bluff"),
    "signaling": ("signal", "signaling", "signalling", "signaling game", "speaker", "listener",
                  "message", "communication", "emergent language", "lewis", "cheap talk",
                  "channel"),
    "resource commons": ("commons", "common pool", "common pool resource", "fishery", "fish",
                         "harvest", "regrow", "public good", "public goods", "contribute",
                         "contribution"),
    "traffic": ("intersection", "car", "traffic", "lane", "road", "vehicle", "crossroad"),
    "market": ("market", "trade", "trading", "trader", "inventory", "cournot", "price",
               "economy", "firm"),
}


def _stem_seq(text: str) -> tuple[str, ...]:
    text = re.sub(r"['\u2019]s\b", " ", text.lower()).replace("-", " ").replace("_", " ")
    return tuple(stem(w) for w in _WORD.findall(text))


def _has_phrase(seq: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return n > 0 and any(seq[i:i + n] == phrase for i in range(len(seq) - n + 1))


def game_types(text: str) -> frozenset[str]:
    """The kinds of game (`GAME_TYPES`) whose words the text uses."""
    seq = _stem_seq(text)
    return frozenset(kind for kind, forms in GAME_TYPES.items()
                     if any(_has_phrase(seq, _stem_seq(f)) for f in forms))


@cache
def library_game_types(name: str) -> frozenset[str]:
    """The kinds of game library spec `name` is, from its name and tags."""
    spec = load_spec(name)
    return game_types(" . ".join([spec.name, *spec.tags]))


def names_the_library_spec(task: str, name: str) -> bool:
    """The task names library spec `name`'s game ("a sealed-bid auction", "predator-prey",
    "the iterated prisoner's dilemma"): its name's words, in order, are in the task (a name of
    three words or more also without its first, "prisoner's dilemma")."""
    seq, words = _stem_seq(task), _stem_seq(name)
    return _has_phrase(seq, words) or (len(words) >= 3 and _has_phrase(seq, words[1:]))
