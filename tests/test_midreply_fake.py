"""The fake model's mid-reply classifier: deterministic, parseable, and wrong in plausible ways."""

from __future__ import annotations

import pytest

from interleave_bench.midreply import fake
from interleave_bench.midreply.cases import load_cases, other_topics, running_topic
from interleave_bench.midreply.prompt import build_messages, parse_answer


@pytest.fixture(scope="module")
def shipped():
    return load_cases()


def _answers(shipped):
    out = {}
    for c in shipped.cases:
        messages = build_messages(c, running_topic(shipped, c), other_topics(shipped, c))
        out[c.id] = fake.answer(messages, {})
    return out


def test_answers_are_deterministic_and_always_readable(shipped):
    first, second = _answers(shipped), _answers(shipped)
    assert first == second
    dressed = 0
    for c in shipped.cases:
        got = parse_answer(first[c.id], [t.id for t in shipped.catalogs[c.lang]], c.running.topicId)
        assert got.destination is not None, (c.id, first[c.id])
        dressed += not first[c.id].startswith("{")
    assert dressed > 0  # some answers come in a code fence or after a sentence, like real models'


def test_it_falls_for_a_name_and_catches_a_plain_pivot(shipped):
    def destination(cid):
        c = next(x for x in shipped.cases if x.id == cid)
        return fake.classify({"running": {"topic": running_topic(shipped, c).dump(), "request": c.running.request,
                                          "progress": c.running.progress},
                              "other_topics": [t.dump() for t in other_topics(shipped, c)],
                              "message": {"how": c.how, "text": c.text}})

    # "put the Lisbon numbers in this table too" is about the running table; a keyword matcher sees Lisbon
    assert destination("en-01") == "lisbon-trip"
    # "what's the weather usually like in Lisbon in mid-May?" really is about the trip
    assert destination("en-08") == "lisbon-trip"
    # a short fragment with no keyword continues the running work
    assert destination("en-20") == "running"
    # a long message about nothing in the catalog is new
    assert destination("en-12") == "new"


def test_a_tie_between_topics_is_unsure():
    card = {"id": "a", "title": "Alpha", "entities": ["Rome"], "keywords": []}
    payload = {"running": {"topic": {"id": "r", "title": "Running", "entities": [], "keywords": []},
                           "request": "", "progress": ""},
               "other_topics": [card, {**card, "id": "b", "title": "Beta"}],
               "message": {"how": "queued", "text": "is Rome nice in May?"}}
    assert fake.classify(payload) == "unsure"
