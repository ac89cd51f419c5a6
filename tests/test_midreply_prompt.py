"""The classifier's prompt (in the case's language) and robust parsing of its answer."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.midreply.cases import load_cases, other_topics, running_topic
from interleave_bench.midreply.prompt import build_messages, parse_answer, prompt_language, read_payload
from interleave_bench.schema import MidReplyCase

IDS = ["lisbon-trip", "q3-review", "billing-py312"]
RUNNING = "q3-review"


@pytest.fixture(scope="module")
def shipped():
    return load_cases()


def _case(shipped, cid):
    return next(c for c in shipped.cases if c.id == cid)


@pytest.mark.parametrize(
    "text, want",
    [
        ('{"destination": "lisbon-trip"}', "lisbon-trip"),
        ('```json\n{"destination": "new"}\n```', "new"),
        ('Here is my answer: {"destination": "running"}', "running"),
        ('{"destination": "q3-review"}', "running"),  # the running topic's own id
        ('{"destination": "Lisbon-Trip"}', "lisbon-trip"),  # ids in another case
        ('{"Destination": " NEW "}', "new"),
        ('{"destination": "unsure"}', "unsure"),
        ('{"destination": null}', "unsure"),
        ('{"destination": "cannot decide"}', "unsure"),
        ('e.g. {"destination": "new"} ... final: {"destination": "billing-py312"}', "billing-py312"),
        ("destination: lisbon-trip", "lisbon-trip"),
        ("running", "running"),
        ('"new"', "new"),
        ("`lisbon-trip`.", "lisbon-trip"),
    ],
)
def test_answers_are_read_robustly(text, want):
    got = parse_answer(text, IDS, RUNNING)
    assert (got.destination, got.problem) == (want, None)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", "empty answer"),
        ("I am not sure what you mean. Here is a poem instead: roses are red.", "no destination in the answer"),
        ('{"topic": "lisbon-trip"}', "JSON object without a 'destination' key"),
        ('{"destination": "paris-trip"}', "unknown destination 'paris-trip'"),
        ('{"destination": 3}', "destination is not a string"),
        ('{"destination": "lisbon', "unknown destination 'lisbon'"),  # cut off mid-answer
    ],
)
def test_unreadable_answers_say_why(text, problem):
    got = parse_answer(text, IDS, RUNNING)
    assert got.destination is None
    assert got.problem.startswith(problem)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(IDS + ["running", "new", "unsure"]), st.sampled_from(["", "```json\n", "Answer: "]),
       st.sampled_from(["", "\n```", " Hope this helps."]))
def test_a_valid_answer_survives_any_dressing(dest, before, after):
    got = parse_answer(before + json.dumps({"destination": dest}) + after, IDS, RUNNING)
    assert got.destination == ("running" if dest == RUNNING else dest)


def test_the_prompt_is_in_the_cases_language(shipped):
    en = _case(shipped, "en-01")
    zh = _case(shipped, "zh-05")
    m_en = build_messages(en, running_topic(shipped, en), other_topics(shipped, en))
    m_zh = build_messages(zh, running_topic(shipped, zh), other_topics(shipped, zh))
    assert [m["role"] for m in m_en] == ["system", "user"]
    assert "running work" in m_en[0]["content"] and '"destination"' in m_en[0]["content"]
    assert "正在进行的工作" in m_zh[0]["content"] and '"destination"' in m_zh[0]["content"]
    assert m_zh[1]["content"].startswith("当前情况")


def test_the_payload_has_what_the_classifier_needs_and_never_the_answer(shipped):
    c = _case(shipped, "en-01")
    messages = build_messages(c, running_topic(shipped, c), other_topics(shipped, c))
    payload = read_payload(messages)
    assert payload["running"]["topic"]["id"] == c.running.topicId
    assert payload["running"]["request"] == c.running.request
    assert payload["running"]["progress"] == c.running.progress
    assert payload["message"] == {"how": c.how, "text": c.text}
    others = [t["id"] for t in payload["other_topics"]]
    assert c.running.topicId not in others and len(others) == len(shipped.catalogs["en"]) - 1
    assert set(payload["other_topics"][0]) == {"id", "title", "summary", "entities", "keywords", "lastState"}
    blob = json.dumps(messages, ensure_ascii=False)
    assert "expect" not in blob and "mention-trap" not in blob


def test_unknown_languages_fall_back_to_english():
    assert prompt_language("zh-CN") == "zh"
    assert prompt_language("zh_Hans") == "zh"
    assert prompt_language("EN") == "en"
    assert prompt_language("de") == "en"
    case = MidReplyCase.model_validate({"id": "de-1", "lang": "de", "running": {"topicId": "a", "request": "r"},
                                        "how": "queued", "text": "übrigens", "expect": "new"})
    from interleave_bench.schema import CatalogTopic

    m = build_messages(case, CatalogTopic(id="a", title="A"), [])
    assert "running work" in m[0]["content"] and "übrigens" in m[1]["content"]
