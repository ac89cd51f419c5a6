"""The shipped rule: acknowledgements, undecided answers and failures stay with the running work."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.text import ACKS, is_bare_ack
from interleave_bench.midreply.rule import (
    VIA_ACK,
    VIA_CLASSIFIER,
    VIA_ERROR,
    VIA_RULE_ONLY,
    VIA_UNPARSABLE,
    VIA_UNSURE,
    ClassifierOutcome,
    Decision,
    decide,
)

ELSEWHERE = ["trip", "new"]


@pytest.mark.parametrize("text", ["ok", "好的", "thanks!", "嗯嗯"])
@pytest.mark.parametrize("said", ELSEWHERE + ["unsure", "running"])
def test_a_bare_ack_stays_even_when_the_classifier_says_otherwise(text, said):
    d = decide(text, ClassifierOutcome(said))
    assert (d.destination, d.via) == ("running", VIA_ACK)


@pytest.mark.parametrize("failure", [VIA_ERROR, VIA_UNPARSABLE])
def test_a_failed_call_or_unreadable_answer_stays_and_says_why(failure):
    d = decide("put the Lisbon numbers in too", ClassifierOutcome(None, failure))
    assert (d.destination, d.via) == ("running", failure)


def test_an_undecided_answer_stays():
    d = decide("what about the other one?", ClassifierOutcome("unsure"))
    assert (d.destination, d.via) == ("running", VIA_UNSURE)


@pytest.mark.parametrize("said", ["running", "trip", "new"])
def test_a_clear_answer_is_followed(said):
    assert decide("does TAP let you pick seats?", ClassifierOutcome(said)) == Decision(said, VIA_CLASSIFIER)


def test_without_a_classifier_everything_stays():
    assert decide("a whole new matter entirely", None).destination == "running"
    assert decide("a whole new matter entirely", None).via == VIA_RULE_ONLY
    assert decide("ok", None).via == VIA_ACK


def test_an_outcome_has_a_destination_or_a_failure_not_both():
    with pytest.raises(ValueError):
        ClassifierOutcome("trip", VIA_ERROR)
    with pytest.raises(ValueError):
        ClassifierOutcome(None)
    with pytest.raises(ValueError):
        ClassifierOutcome(None, "timeout")


acks = st.lists(st.sampled_from(sorted(ACKS)), min_size=1, max_size=3)
separators = st.sampled_from(["", " ", ", ", "! ", "，", "～", "...", " :) "])


@settings(max_examples=150, deadline=None)
@given(acks, separators, st.sampled_from(["", "!", "!!", "。", "~"]))
def test_any_run_of_acknowledgements_is_bare(words, sep, tail):
    text = sep.join(words) + tail
    if len("".join(words)) <= 24:
        assert is_bare_ack(text)


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=40), st.one_of(
    st.none(),
    st.builds(ClassifierOutcome, st.sampled_from(["running", "trip", "new", "unsure"])),
    st.builds(ClassifierOutcome, st.none(), st.sampled_from([VIA_ERROR, VIA_UNPARSABLE])),
))
def test_the_rule_only_ever_moves_a_message_on_a_clear_answer(text, outcome):
    d = decide(text, outcome)
    moved = d.destination != "running"
    clear = outcome is not None and outcome.destination in ("trip", "new")
    assert not moved or (clear and not is_bare_ack(text))
    if moved:
        assert d.destination == outcome.destination and d.via == VIA_CLASSIFIER
