"""Judging answers and delivered lines (docs/facts.md#judging-an-answer): a hand case for every verdict and edge, and
property tests of the invariants."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from interleave_bench.facts.metrics import (
    current_value,
    decoy_said,
    delivery_verdict,
    is_undecided,
    judge,
    normalize,
    same_value,
    says,
)


def test_says_needs_whole_numbers_and_the_value():
    assert says("The budget is 700 EUR now.", "700 EUR")
    assert not says("The budget is 7000 EUR.", "700 EUR")  # "7000" does not say 700
    assert not says("The budget is 1700 EUR.", "700 EUR")
    assert not says("It is 700.5 EUR.", "700 EUR")
    assert not says("It is 1.700 EUR.", "700 EUR")
    assert says("It is 7.5 hours", "7.5 hours")
    assert not says("It is 7.55 hours", "7.5 hours")
    assert not says("700", "700 EUR")  # the whole value must occur, not only its number
    assert says("ＴＨＥ  Budget: ７００   eur", "700 eur")  # NFKC, case and spaces
    assert not says("anything", "")


def test_a_currency_sign_or_unit_word_is_not_the_value_when_judging_but_equal_when_delivering():
    assert not says("€700", "700 EUR")
    assert judge("€700", "700 EUR", [], []).verdict == "wrong"
    assert same_value("€700", "700 EUR")
    assert same_value("700 euros", "700 EUR")
    assert same_value("¥5,000", "5000元")
    assert not same_value("€700", "7000 EUR")
    assert same_value("next Tuesday", "Next  tuesday")
    assert not same_value("Tuesday", "next Tuesday")  # only one says the other


@pytest.mark.parametrize("answer", [
    "undecided", "It is not settled yet.", "not decided", "Still unsettled.", "Unknown.",
    "未确定", "还没定", "还没有确定", "不确定", "这个未定",
])
def test_undecided_in_both_languages(answer):
    assert is_undecided(answer)
    assert judge(answer, None, [], []).verdict == "correct"  # gold null: undecided is right
    assert judge(answer, "900 EUR", [], []).verdict == "missing"


def test_not_undecided():
    assert not is_undecided("It is 900 EUR.")
    assert not is_undecided("决定了")


def test_verdicts_by_hand():
    confirmed = ["700 EUR", "900 EUR"]
    # current value, no decoy
    assert judge("It is 900 EUR.", "900 EUR", ["700 EUR"], confirmed).verdict == "correct"
    # the superseded value: a decoy that was once confirmed
    j = judge("700 EUR", "900 EUR", ["700 EUR"], confirmed)
    assert (j.verdict, j.decoy) == ("stale", "700 EUR")
    # both values said: a decoy is said, so not correct; it was confirmed, so stale
    assert judge("900 EUR, earlier 700 EUR", "900 EUR", ["700 EUR"], confirmed).verdict == "stale"
    # a value only ever proposed
    assert judge("40 people", "25 people", ["40 people"], ["25 people"]).verdict == "proposal"
    # gold null (a proposal not answered yet, or a withdrawn value)
    assert judge("300 EUR", None, ["300 EUR"], []).verdict == "proposal"
    assert judge("5000 EUR", None, ["5000 EUR"], ["5000 EUR"]).verdict == "stale"
    assert judge("undecided, maybe 300 EUR", None, ["300 EUR"], []).verdict == "proposal"
    assert judge("It is 300 EUR.", None, [], []).verdict == "wrong"
    # right value but also "not settled": not correct, and no decoy: missing
    assert judge("900 EUR but not settled", "900 EUR", ["700 EUR"], confirmed).verdict == "missing"
    # something else
    assert judge("I would say 800 EUR", "900 EUR", ["700 EUR"], confirmed).verdict == "wrong"
    assert judge("7000 EUR", "700 EUR", [], ["700 EUR"]).verdict == "wrong"


def test_a_decoy_inside_the_gold_value_is_not_a_decoy():
    gold, decoys = "700 EUR per person", ["700 EUR"]
    assert decoy_said("700 EUR per person", gold, decoys) is None
    assert judge("700 EUR per person", gold, decoys, ["700 EUR", gold]).verdict == "correct"
    # the bare decoy is not the gold value, and it is skipped as a decoy: wrong, not stale
    assert judge("700 EUR", gold, decoys, ["700 EUR", gold]).verdict == "wrong"
    # with gold null nothing is skipped
    assert decoy_said("700 EUR", None, decoys) == "700 EUR"


def test_the_first_decoy_said_counts():
    j = judge("either 40 people or 30 people", "25 people", ["30 people", "40 people"], ["30 people", "25 people"])
    assert (j.verdict, j.decoy) == ("stale", "30 people")


FACTS = {
    "move": {"budget": [("confirmed", "700 EUR"), ("confirmed", "900 EUR")],
             "deposit": [("proposed", "300 EUR"), ("confirmed", "300 EUR")]},
    "party": {"headcount": [("proposed", "40 people"), ("confirmed", "25 people")]},
    "hire": {"salary": [("confirmed", "5000 EUR"), ("retracted", None)]},
}


@pytest.mark.parametrize("source,key,value,verdict", [
    ("move", "budget", "900 EUR", "current"),
    ("move", "budget", "€900", "current"),       # a currency sign ignored
    ("move", "budget", "900 euros", "current"),  # a unit word ignored
    ("move", "budget", "700 EUR", "stale"),
    ("move", "deposit", "300 EUR", "current"),   # accepted: proposed and confirmed
    ("party", "headcount", "40 people", "proposal"),
    ("party", "headcount", "25 people", "current"),
    ("hire", "salary", "5000 EUR", "stale"),      # confirmed once, withdrawn since
    ("hire", "salary", None, "withdrawn"),
    ("move", "cost", "900 EUR", "current"),      # a key matching none: all of A's facts
    ("move", "cost", "40 people", "unknown"),    # ...and only A's
    ("move", "budget", "1000 EUR", "unknown"),
    ("nowhere", "budget", "900 EUR", "unknown"),
    ("move", "", "900 EUR", "unknown"),
])
def test_delivery_verdicts(source, key, value, verdict):
    assert delivery_verdict(source, key, value, FACTS) == verdict


def test_current_value_walks_the_timeline():
    assert current_value(FACTS["move"]["budget"]) == "900 EUR"
    assert current_value(FACTS["hire"]["salary"]) is None
    assert current_value([("proposed", "40 people")]) is None


values = st.text(alphabet=st.sampled_from(list("abc xyz0123456789.€元")), min_size=1, max_size=20)


@given(values)
def test_a_value_says_itself_and_equals_itself(v):
    assume(normalize(v))
    assert says(v, v)
    assert same_value(v, v)


@given(values, st.lists(values, max_size=3))
def test_answering_exactly_the_gold_value_is_correct(gold, decoys):
    assume(normalize(gold) and not is_undecided(gold))
    assert judge(gold, gold, decoys, [gold]).verdict == "correct"


@given(values, values)
def test_same_value_is_symmetric(a, b):
    assert same_value(a, b) == same_value(b, a)
