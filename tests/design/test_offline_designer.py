"""The offline designer: retrieval over the library, params from the task text, plain words.

The paraphrases are written the way a person would ask, not copied from the spec descriptions;
they cover every library spec. The off-library tasks must not be passed off as a template. The
two sets together justify FIT_THRESHOLD (see test_threshold_separates_paraphrases_from_off_library).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import pytest

from gymwright.design.offline import offline_design
from gymwright.design.params_from_text import extract_params
from gymwright.design.retrieval import (
    FIT_THRESHOLD,
    Match,
    analyze,
    best_fit,
    rank_library,
    stem,
)
from gymwright.spec.loader import library_names, load_spec

# task text, expected template, expected params (a subset of what is set)
PARAPHRASES: list[tuple[str, str, dict[str, Any]]] = [
    ("two robots divide a pie by taking turns making offers", "cake_negotiation", {}),
    ("two robots divide a pie by taking turns making offers, ten rounds at most",
     "cake_negotiation", {"max_rounds": 10}),
    ("Two bots haggle over how to split a pizza; every refused proposal makes the pizza 5% "
     "smaller, and they have at most twenty rounds",
     "cake_negotiation", {"discount": 0.95, "max_rounds": 20}),
    ("Bargaining over a shrinking dessert: the proposer suggests a split and the other side "
     "accepts or turns it down, with a discount factor of 0.8", "cake_negotiation",
     {"discount": 0.8}),
    ("An ultimatum-like haggling game: one bot proposes how to cut a chocolate bar, the other "
     "accepts or rejects, and the bar melts a little after each refusal", "cake_negotiation", {}),
    ("Two suspects are questioned again and again; each round both either stay silent or "
     "betray the other, for 100 rounds", "iterated_prisoners_dilemma", {"rounds": 100}),
    ("a repeated prisoner's dilemma where tit-for-tat could emerge; players remember the last "
     "five moves", "iterated_prisoners_dilemma", {"memory": 5}),
    ("Prisoners choose simultaneously to cooperate or defect in an iterated game where 10% of "
     "moves are flipped by noise", "iterated_prisoners_dilemma", {"noise": 0.1}),
    ("Two players play the prisoner's dilemma 40 times in a row", "iterated_prisoners_dilemma",
     {"rounds": 40}),
    ("Four hunters decide together whether to go after a deer, which needs all of them, or "
     "settle for a rabbit each", "stag_hunt", {"n_hunters": 4}),
    ("A trust dilemma: three players can hunt a big stag together or each grab a safe hare, "
     "over 30 rounds", "stag_hunt", {"n_hunters": 3, "rounds": 30}),
    ("hunters coordinate on a stag hunt with a threshold of 3 out of 5 hunters", "stag_hunt",
     {"threshold": 3, "n_hunters": 5}),
    ("Players repeatedly choose between going for a deer together or a rabbit alone",
     "stag_hunt", {}),
    ("Ten citizens decide each round how much of their money to put into a shared pot that is "
     "multiplied and split equally", "public_goods", {"n_players": 10}),
    ("A voluntary contribution game with six people and a multiplier of 2.5 where free riding "
     "is tempting", "public_goods", {"n_players": 6, "multiplier": 2.5}),
    ("a two-player public goods game where the common pot is tripled", "public_goods",
     {"n_players": 2, "multiplier": 3.0}),
    ("Twelve villagers repeatedly decide how much to donate to a community fund that is doubled "
     "and shared by all", "public_goods", {"n_players": 12, "multiplier": 2.0}),
    ("four delivery robots must cross an 8x8 frozen lake without colliding", "mapf_frozenlake",
     {"size": 8, "n_agents": 4}),
    ("Three agents walk to their own goals on a slippery icy grid full of holes, 6 by 6",
     "mapf_frozenlake", {"n_agents": 3, "size": 6, "slip": 0.25}),
    ("Multi-robot path planning in a warehouse grid: robots must reach their destinations "
     "without bumping into each other, at most 50 steps", "mapf_frozenlake", {"max_steps": 50}),
    ("Eight drones must fly to their own landing pads on a 7x7 map without crashing into each "
     "other", "mapf_frozenlake", {"size": 7, "n_agents": 5}),
    ("three wolves chase two sheep on a 10x10 grid", "predator_prey",
     {"num_predators": 3, "num_prey": 2, "size": 10}),
    ("Pursuit-evasion: a team of chasers tries to corner and capture a runner in an arena with "
     "obstacles", "predator_prey", {}),
    ("Cops and robbers on a 9 by 9 map: four cops must catch a thief", "predator_prey",
     {"size": 9, "num_predators": 4}),
    ("two police cars chase a getaway car through a city grid", "predator_prey",
     {"num_predators": 2}),
    ("One agent knows which of five landmarks is the target and must tell a second agent, who "
     "cannot see it, using a small vocabulary of symbols", "speaker_listener", {"n_targets": 5}),
    ("A sender sees the goal among 4 targets and sends a message over a discrete channel to a "
     "receiver that must pick it; vocabulary of 4 words", "speaker_listener",
     {"n_targets": 4, "vocab_size": 4}),
    ("a referential game: a describer and a guesser, 6 candidate landmarks, the describer may "
     "use 3 symbols over a noisy channel", "speaker_listener",
     {"n_targets": 6, "vocab_size": 3, "noise": 0.25}),
    ("a one-shot sealed auction among five bidders", "sealed_bid_auction",
     {"rounds": 1, "n_bidders": 5}),
    ("Seven buyers secretly submit prices for a painting at the same time; the highest bid wins "
     "and pays what it offered, repeated over 20 rounds", "sealed_bid_auction",
     {"n_bidders": 7, "rounds": 20}),
    ("Sixteen bidders each privately value a painting and submit one sealed bid; the highest "
     "bid pays its bid", "sealed_bid_auction", {"n_bidders": 16}),
    ("Fishermen share a lake whose fish regrow each season; if they overfish, the population "
     "collapses. 6 fishermen, 200 seasons", "commons_harvest",
     {"n_harvesters": 6, "rounds": 200}),
    ("Tragedy of the commons: five herders graze cattle on a shared pasture that regrows slowly",
     "commons_harvest", {"n_harvesters": 5}),
    ("Loggers cut a forest that regrows, with a carrying capacity of 500 trees",
     "commons_harvest", {"capacity": 500.0}),
    ("villagers draw water from a shared well that refills slowly; overuse dries it up",
     "commons_harvest", {}),
    ("Two agents split a collection of books, hats and balls, each valuing the items privately, "
     "proposing allocations in turn", "multi_issue_negotiation", {}),
    ("Deal-or-no-deal style haggling over several kinds of objects with hidden valuations, at "
     "most 8 proposals before the deadline", "multi_issue_negotiation", {"max_turns": 8}),
]

OFF_LIBRARY = [
    "a Cournot duopoly: two firms choose production quantities and the market price falls as "
    "total output rises",
    "two players play chess, moving pieces on an 8x8 board until checkmate",
    "control the traffic lights at a city intersection to minimize how long cars wait",
    "a market maker quotes bid and ask prices to traders on a stock exchange and manages its "
    "inventory",
    "a card game like poker where players bet chips, bluff and fold",
    "robot soccer: two teams of three players try to score goals",
    "balance a pole on a moving cart",
    "rock paper scissors between two players",
]

MARGIN = 0.03  # how far both sets stay from the threshold


def _ids(cases: list[tuple[str, str, dict[str, Any]]]) -> list[str]:
    return [f"{template}-{i}" for i, (_, template, _) in enumerate(cases)]


# ----------------------------------------------------------------------------- paraphrases
@pytest.mark.parametrize(("task", "template", "params"), PARAPHRASES, ids=_ids(PARAPHRASES))
def test_paraphrase_maps_to_the_right_template_and_params(task: str, template: str,
                                                          params: dict[str, Any]) -> None:
    choice = offline_design(task)
    assert choice.fits and choice.template == template, choice.explanation
    for name, value in params.items():
        assert choice.params.get(name) == pytest.approx(value), (name, choice.explanation)
    assert not choice.conflicts, choice.conflicts
    assert f"chose template {template}" in choice.explanation
    assert "retrieval + rules, no language model" in choice.explanation


def test_paraphrases_cover_every_library_spec() -> None:
    assert {t for _, t, _ in PARAPHRASES} == set(library_names())


def test_threshold_separates_paraphrases_from_off_library() -> None:
    lowest = min(rank_library(task)[0].score for task, _, _ in PARAPHRASES)
    highest = max(rank_library(task)[0].score for task in OFF_LIBRARY)
    assert lowest >= FIT_THRESHOLD + MARGIN, lowest
    assert highest <= FIT_THRESHOLD - MARGIN, highest


# ----------------------------------------------------------------------------- no template fits
@pytest.mark.parametrize("task", OFF_LIBRARY)
def test_off_library_task_is_refused_with_the_best_match_and_a_model_hint(task: str) -> None:
    choice = offline_design(task)
    assert not choice.fits and choice.template is None and choice.params == {}
    text = choice.explanation
    assert f"the best match is {choice.best.name} with similarity {choice.best.score:.2f}" in text
    assert f"below the {FIT_THRESHOLD:.2f} threshold" in text
    assert "a language model is needed" in text and "--model" in text


def test_a_near_tie_without_a_telling_word_is_not_a_fit() -> None:
    choice = offline_design("two agents negotiate")
    assert not choice.fits
    assert {choice.best.name, choice.alternatives[0].name} == {
        "cake_negotiation", "multi_issue_negotiation"}
    assert "near tie" in choice.explanation and "--model" in choice.explanation


def test_an_empty_task_fits_nothing() -> None:
    choice = offline_design("")
    assert not choice.fits and choice.score == 0.0


def test_the_explanation_says_what_was_chosen_why_and_from_which_words() -> None:
    choice = offline_design("Two bots haggle over how to split a pizza; every refused proposal "
                            "makes the pizza 5% smaller, and they have at most twenty rounds")
    text = choice.explanation
    assert text.startswith("offline designer (retrieval + rules, no language model): chose "
                           "template cake_negotiation (similarity ")
    assert "pizza (cake)" in text and "next: multi_issue_negotiation" in text
    assert "max_rounds=20 from 'twenty rounds'" in text
    assert "discount=0.95 from" in text and "a discount of 0.95" in text
    assert "'two bots haggle' matches the template's fixed 2 agents" in text


def test_a_conflicting_fixed_count_is_a_warning() -> None:
    choice = offline_design("three robots split a pie by alternating offers")
    assert choice.fits and choice.template == "cake_negotiation"
    assert choice.conflicts == ["the text asks for 3 agents ('three robots') but "
                                "cake_negotiation has exactly 2; the environment keeps 2"]
    assert "warning: the text asks for 3 agents" in choice.explanation


def test_the_choice_is_plain_data_for_the_store() -> None:
    data = asdict(offline_design("a one-shot sealed auction among five bidders"))
    assert data["template"] == "sealed_bid_auction" and data["best"]["name"] == "sealed_bid_auction"
    assert data["evidence"][0].keys() == {"param", "value", "phrase", "note"}
    assert len(data["alternatives"]) == 2
    assert json.loads(json.dumps(data)) == json.loads(json.dumps(data, sort_keys=True))


# ----------------------------------------------------------------------------- retrieval
def test_ranking_is_sorted_complete_and_bounded() -> None:
    ranking = rank_library("three wolves chase two sheep on a grid")
    assert [m.name for m in ranking][0] == "predator_prey"
    assert sorted(m.name for m in ranking) == library_names()
    assert all(0.0 <= m.score <= 1.0 for m in ranking)
    assert [m.score for m in ranking] == sorted((m.score for m in ranking), reverse=True)
    assert "wolves (predator)" in ranking[0].matched


def test_ranking_over_some_names() -> None:
    ranking = rank_library("split a pie", names=["stag_hunt", "cake_negotiation"])
    assert [m.name for m in ranking] == ["cake_negotiation", "stag_hunt"]
    with pytest.raises(ValueError, match="not library specs: chess"):
        rank_library("chess", names=["chess"])


def test_best_fit_returns_the_match_and_the_ranking() -> None:
    fit, ranking = best_fit("a one-shot sealed auction among five bidders")
    assert isinstance(fit, Match) and fit.name == "sealed_bid_auction" and fit == ranking[0]
    none, ranking = best_fit("balance a pole on a moving cart")
    assert none is None and len(ranking) == len(library_names())


def test_retrieval_and_design_are_deterministic() -> None:
    task = "four delivery robots must cross an 8x8 frozen lake without colliding"
    assert rank_library(task) == rank_library(task)
    assert offline_design(task) == offline_design(task)


def test_stemming_and_concepts() -> None:
    assert stem("bidding") == stem("bids") == "bid"
    assert stem("divided") == stem("divide") == stem("dividing")
    keys = [t.key for t in analyze("Taking turns, the robots split a pizza")]
    assert keys == ["#alternate", "#agent", "#split", "#cake"]
    assert [t.key for t in analyze("the tragedy of the commons")] == ["#commons"]


# ----------------------------------------------------------------------------- params from text
def _values(task: str, spec: str) -> dict[str, Any]:
    return extract_params(task, load_spec(spec)).values


@pytest.mark.parametrize(("task", "spec", "expected"), [
    ("twenty-five rounds", "cake_negotiation", {"max_rounds": 25}),
    ("a dozen bidders", "sealed_bid_auction", {"n_bidders": 12}),
    ("a pair of hunters", "stag_hunt", {"n_hunters": 2}),
    ("a two-player game", "public_goods", {"n_players": 2}),
    ("two hundred rounds", "public_goods", {"rounds": 200}),
    ("an auction with a 5% reserve price", "sealed_bid_auction", {"reserve": 0.05}),
    ("discount 0.95", "cake_negotiation", {"discount": 0.95}),
    ("a discount factor of 0.9", "cake_negotiation", {"discount": 0.9}),
    ("the cake shrinks by 10% each round", "cake_negotiation", {"discount": 0.9}),
    ("a horizon of 40", "cake_negotiation", {"max_rounds": 40}),
    ("walkers have 30 steps", "mapf_frozenlake", {"max_steps": 30}),
    ("ten rounds", "mapf_frozenlake", {"max_steps": 10}),
], ids=lambda v: v if isinstance(v, str) and " " not in v else None)
def test_numbers_in_words_digits_and_percents(task: str, spec: str,
                                              expected: dict[str, Any]) -> None:
    assert _values(task, spec) == pytest.approx(expected)


@pytest.mark.parametrize("grid", ["8x8", "8 x 8", "8 by 8", "8\u00d78", "eight by eight", "8-by-8"])
def test_grid_sizes(grid: str) -> None:
    fill = extract_params(f"robots cross a {grid} frozen lake", load_spec("mapf_frozenlake"))
    assert fill.values == {"size": 8}
    assert fill.evidence[0].phrase == grid


def test_out_of_range_values_are_clamped_with_a_note() -> None:
    fill = extract_params("six robots cross a 12x12 lake", load_spec("mapf_frozenlake"))
    assert fill.values == {"n_agents": 5, "size": 10}
    notes = {e.param: e.note for e in fill.evidence}
    assert notes == {"n_agents": "clamped to max 5 (asked 6)",
                     "size": "clamped to max 10 (asked 12)"}


def test_a_non_square_grid_on_a_square_template_says_so() -> None:
    fill = extract_params("an 8x6 lake", load_spec("mapf_frozenlake"))
    assert fill.values == {"size": 8}
    assert fill.evidence[0].note == "the grid is square: used the larger side 8"


def test_numbers_that_fit_no_param_are_ignored_plainly() -> None:
    fill = extract_params("at most 2.5 rounds, 100 fish", load_spec("cake_negotiation"))
    assert fill.values == {}
    assert fill.ignored == ["'2.5 rounds' (2.5): max_rounds takes whole numbers",
                            "'100 fish' (100): no parameter of cake_negotiation matches the "
                            "words around it"]


def test_a_count_shared_by_two_roles_is_not_guessed() -> None:
    fill = extract_params("four agents on a grid", load_spec("predator_prey"))
    assert fill.values == {}
    assert fill.ignored == ["'four agents' (4): could set num_predators or num_prey; the text "
                            "does not say which"]


def test_fixed_counts_are_evidence_or_conflicts() -> None:
    cake = load_spec("cake_negotiation")
    same = extract_params("two robots split a pie", cake)
    assert same.values == {} and same.conflicts == []
    assert same.evidence[0].note == "matches the template's fixed 2 agents"
    three_way = extract_params("a three-way split of a pie", cake)
    assert three_way.conflicts == ["the text asks for 3 agents ('three-way') but cake_negotiation "
                                   "has exactly 2; the environment keeps 2"]
    listeners = extract_params("three listeners and a speaker", load_spec("speaker_listener"))
    assert listeners.conflicts[0].startswith("the text asks for 3 listeners")


def test_one_of_several_is_not_a_count() -> None:
    assert extract_params("one robot proposes a split of the pie, the other accepts",
                          load_spec("cake_negotiation")).conflicts == []
    assert _values("one robot waits while the other crosses the lake", "mapf_frozenlake") == {}
    assert _values("a single robot crosses the lake", "mapf_frozenlake") == {"n_agents": 1}


@pytest.mark.parametrize(("task", "spec", "expected"), [
    ("with slippery ice", "mapf_frozenlake", {"slip": 0.25}),
    ("an icy lake with no slip", "mapf_frozenlake", {"slip": 0.0}),
    ("a noise-free iterated prisoner's dilemma", "iterated_prisoners_dilemma", {"noise": 0.0}),
    ("a noiseless channel", "speaker_listener", {"noise": 0.0}),
    ("shuffled targets", "speaker_listener", {"shuffle": True}),
    ("no overbidding; ties are broken at random", "sealed_bid_auction",
     {"allow_overbid": False, "random_ties": True}),
    ("players observe the round number", "iterated_prisoners_dilemma", {"observe_time": True}),
])
def test_switches_from_words(task: str, spec: str, expected: dict[str, Any]) -> None:
    assert _values(task, spec) == expected


def test_a_switch_without_a_number_says_what_it_chose() -> None:
    fill = extract_params("with slippery ice", load_spec("mapf_frozenlake"))
    assert fill.evidence[0].phrase == "slippery"
    assert fill.evidence[0].note == "no number given: set to 0.25, the middle of its range"


def test_extract_params_is_deterministic() -> None:
    spec = load_spec("predator_prey")
    task = "three wolves chase two sheep on a 10x10 grid for 80 steps"
    assert extract_params(task, spec) == extract_params(task, spec)
    assert extract_params(task, spec).values == {"size": 10, "num_predators": 3, "num_prey": 2,
                                                 "max_steps": 80}
