"""Unit tests of the routing pieces: text rules, bm25, answer validation, prompts, bursts, views."""

from __future__ import annotations

import asyncio
import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.route.answer import AnswerError, parse_each, parse_json_object, parse_one
from interleave_bench.route.base import Decision, Message, RouterView, ThreadCard, TopicView, conversation_of
from interleave_bench.route.bm25 import Bm25Router, bm25_scores, bm25_tokens, idf
from interleave_bench.route.bursts import MAX_BURST, is_mixed, plan_units, simulate_arrivals
from interleave_bench.route.payload import build_messages, build_payload
from interleave_bench.route.prompt import fix_message, prompt_lang, system_prompt
from interleave_bench.route.rules import fast_path
from interleave_bench.route.text import mentioned_titles, seems_to_go_on, short_title, tokens
from interleave_bench.schema import Session

from _route_util import EN_THREADS, EN_TURNS, session_dict


def view(mode="open", topics=(), current=None, pending=("hello",), history=(), lang="en") -> RouterView:
    return RouterView(
        session_id="s", lang=lang, mode=mode, cards=tuple(t.card for t in topics if t.card), topics=tuple(topics),
        history=tuple(history), current=current,
        pending=tuple(Message(100 + k, text) for k, text in enumerate(pending)),
    )


def topic(label, title="", *texts, card=None) -> TopicView:
    return TopicView(label, title, card, tuple(Message(k, t) for k, t in enumerate(texts)))


# --- text ------------------------------------------------------------------------------------------


def test_tokens_are_lowercased_words_and_chinese_pairs():
    assert tokens("Book 2 Rooms, please!") == ("book", "2", "rooms", "please")
    assert tokens("预订酒店") == ("预订", "订酒", "酒店")
    assert tokens("好 ok") == ("ok", "好")  # words first, then Chinese runs; a lone character is a token
    assert tokens("...") == ()


def test_title_mentions_need_whole_words_and_prefer_the_longer_title():
    titles = {"A": "Trip", "B": "Trip to Rome", "C": "Tax"}
    assert mentioned_titles(titles, "About the trip to Rome: flights?") == ["B"]
    assert mentioned_titles(titles, "Taxes are due") == []  # "tax" inside "taxes" is not the title
    assert mentioned_titles({"A": "装修厨房", "B": "东京旅行"}, "回到装修厨房的事") == ["A"]


@pytest.mark.parametrize(
    "text, goes_on",
    [
        ("and the hotel,", True),
        ("I booked the flight and", True),
        ("ok", True),  # very short
        ("two more things:", True),
        ("然后", True),
        ("酒店还有", True),
        ("我想订一家靠近车站的酒店", False),  # 12 Chinese characters, finished
        ("Please book the hotel near the station.", False),
        ("Book the hotel near the river", False),
    ],
)
def test_seems_to_go_on(text, goes_on):
    assert seems_to_go_on(text) is goes_on


def test_short_title():
    assert short_title("Let's plan the kitchen renovation: cabinets and more") == "Let's plan the kitchen renovation"
    assert short_title("please find me a good dentist downtown soon") == "please find me a good dentist"
    assert short_title("我想开始装修厨房，先选橱柜和台面。") == "我想开始装修厨房"
    assert short_title("...") == "topic" and short_title("") == "topic"


# --- bm25: a case computed by hand -------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    # the reference's word pattern: two characters or more, with _ . + # - inside a word
    ("c++ and a v1.2 e-mail", ("c++", "and", "v1.2", "e-mail")),
    ("I paid 5 EUR for C# (really)", ("paid", "eur", "for", "c#", "really")),
    ("snake_case.py, x", ("snake_case.py",)),
    # Chinese: overlapping pairs of each run; a one-character run gives itself
    ("预订酒店", ("预订", "订酒", "酒店")),
    ("好 ok", ("ok", "好")),
    # only U+4E00..U+9FFF counts as Chinese (U+3400 extension A and compatibility ideographs do not)
    ("\u3400\u4e00\uf900", ("\u4e00",)),
    ("...", ()),
])
def test_bm25_tokens_by_hand(text, expected):
    assert bm25_tokens(text) == expected


def test_bm25_counts_a_repeated_query_word_once():
    docs = [["visa", "visa", "form"], ["hotel"]]
    assert bm25_scores(["visa", "visa", "visa"], docs) == bm25_scores(["visa"], docs)
    assert bm25_scores(["visa"], docs)[0] > bm25_scores(["visa"], [["visa", "form", "x"], ["hotel"]])[0]  # doc tf counts


def test_bm25_hand_computed():
    # docs: d1 = kitchen cabinet (2 tokens), d2 = hotel lisbon hotel (3 tokens); avgdl = 2.5, N = 2
    # idf(hotel) = idf(kitchen) = ln(1 + (2 - 1 + 0.5) / (1 + 0.5)) = ln 2 = 0.693147
    # d2 norm = 1.2 * (0.25 + 0.75 * 3 / 2.5) = 1.38; hotel (f=2): ln2 * 2 * 2.2 / (2 + 1.38) = 0.902322
    # d1 norm = 1.2 * (0.25 + 0.75 * 2 / 2.5) = 1.02; kitchen (f=1): ln2 * 1 * 2.2 / (1 + 1.02) = 0.754913
    docs = [["kitchen", "cabinet"], ["hotel", "lisbon", "hotel"]]
    assert idf(2, 1) == pytest.approx(math.log(2))
    assert bm25_scores(["hotel"], docs) == pytest.approx([0.0, 0.902322], abs=1e-5)
    # a query term counts once however often it is said (docs/route.md#policies): "hotel" twice is "hotel"
    assert bm25_scores(["kitchen", "hotel", "hotel"], docs) == pytest.approx([0.754913, 0.902322], abs=1e-5)
    assert bm25_scores(["x"], [[], []]) == [0.0, 0.0]
    assert bm25_scores(["x"], []) == []


def test_bm25_router_threshold_and_new_topics():
    r = Bm25Router()
    topics = (topic("t1", "", "kitchen cabinet"), topic("t2", "", "hotel lisbon hotel"))
    decide = lambda v: asyncio.run(r.route(v))  # noqa: E731
    # 0.90 < 1.5: a short message stays in the current topic
    assert decide(view(topics=topics, current="t1", pending=("hotel",))) == Decision.to_topic("t1")
    # a repeated word adds nothing: still 0.90
    assert decide(view(topics=topics, current="t1", pending=("hotel hotel",))) == Decision.to_topic("t1")
    # lisbon (f=1 in d2): ln2 * 2.2 / (1 + 1.38) = 0.640695; 0.902322 + 0.640695 = 1.54 >= 1.5: it moves
    assert decide(view(topics=topics, current="t1", pending=("hotel lisbon",))) == Decision.to_topic("t2")
    # unmatched and 6+ tokens: a new topic in open mode, the current one in closed mode
    long = "please find me a good dentist downtown"
    assert decide(view(topics=topics, current="t1", pending=(long,))).kind == "new"
    closed = (topic("A", "Kitchen", card=ThreadCard("A", "Kitchen", "cabinets", "")),
              topic("B", "Trip", card=ThreadCard("B", "Trip", "hotel lisbon", "")))
    assert decide(view(mode="closed", topics=closed, current="B", pending=(long,))) == Decision.to_topic("B")
    # the first closed-mode message takes the best match even below the threshold
    assert decide(view(mode="closed", topics=closed, current=None, pending=("cabinets",))) == Decision.to_topic("A")


# --- the rule fast path ------------------------------------------------------------------------------


def test_fast_path_rules():
    topics = (topic("t1", "Kitchen renovation", "x"), topic("t2", "Trip to Lisbon", "y"))
    assert fast_path(view(topics=topics, current="t2", pending=("ok thanks",))).via == "rule-ack"
    assert fast_path(view(topics=topics, current="t2", pending=("ok thanks",))).label == "t2"
    d = fast_path(view(topics=topics, current="t2", pending=("back to the kitchen renovation",)))
    assert (d.label, d.via) == ("t1", "rule-title")
    assert fast_path(view(topics=topics, current="t2", pending=("kitchen renovation or trip to lisbon?",))) is None
    assert fast_path(view(topics=topics, current=None, pending=("ok",))) is None  # nothing to stay in
    assert fast_path(view(topics=topics, current="t1", pending=("how much is it",))) is None


# --- answer validation -----------------------------------------------------------------------------


def test_parse_one_accepts_known_topics_new_and_clarify():
    v = view(topics=(topic("t1", "Kitchen"), topic("t2", "Trip")), current="t1")
    assert parse_one('{"topic": "t2", "refs": ["t1"]}', v) == Decision.to_topic("t2", refs=("t1",))
    assert parse_one('```json\n{"topic": "new", "title": " Dentist  visit "}\n```', v) == Decision.new("Dentist visit", refs=())
    assert parse_one('{"topic": null, "clarify": true}', v).kind == "clarify"
    # a ref to the chosen topic itself is dropped
    assert parse_one('{"topic": "t1", "refs": ["t1"]}', v).refs == ()


@pytest.mark.parametrize(
    "text, problem",
    [
        ("I think t2", "not valid JSON"),
        ("[1]", "one JSON object"),
        ('{"topic": "Trip"}', "'Trip' is not a topic"),
        ('{"topic": "new"}', "non-empty \"title\""),
        ('{"topic": "new", "title": "' + "x" * 101 + '"}', "longer than 100"),
        ('{"topic": "t1", "refs": ["t9"]}', "'t9', which is not a topic"),
        ('{"topic": "t1", "clarify": "no"}', "true or false"),
        ('{"title": "x"}', "\"topic\" is missing"),
        ('{"topic": "new:1", "title": ""}', "not a topic"),  # new:<n> only inside a burst answer
    ],
)
def test_parse_one_rejects(text, problem):
    v = view(topics=(topic("t1", "Kitchen"), topic("t2", "Trip")), current="t1")
    with pytest.raises(AnswerError) as exc:
        parse_one(text, v)
    assert problem in exc.value.problem


def test_parse_each_resolves_new_refs_and_checks_counts():
    v = view(topics=(topic("t1", "Kitchen"),), current="t1", pending=("a", "b", "c", "d"))
    text = json.dumps({"decisions": [
        {"message": 1, "topic": "new", "title": "Dentist"},
        {"message": 2, "topic": "new:1"},
        {"message": 3, "topic": "t1"},
        {"message": 4, "topic": "new:2"},  # a chain: message 2 is in message 1's topic
    ]})
    ds = parse_each(text, v)
    assert [d.kind for d in ds] == ["new", "new", "topic", "new"]
    assert [d.same_as for d in ds] == [None, 0, None, 0]
    with pytest.raises(AnswerError, match="exactly 4"):
        parse_each(json.dumps({"decisions": [{"topic": "t1"}]}), v)
    with pytest.raises(AnswerError, match="earlier message"):
        parse_each(json.dumps({"decisions": [{"topic": "new:1"}] + [{"topic": "t1"}] * 3}), v)
    with pytest.raises(AnswerError, match="in order"):
        parse_each(json.dumps({"decisions": [{"message": 2, "topic": "t1"}] + [{"topic": "t1"}] * 3}), v)
    with pytest.raises(AnswerError, match="decisions"):
        parse_each('{"topic": "t1"}', v)


def test_parse_json_object_is_strict_beyond_a_fence():
    assert parse_json_object('  {"a": 1}  ') == {"a": 1}
    with pytest.raises(AnswerError):
        parse_json_object('Sure! {"a": 1}')


# --- prompts and payload -------------------------------------------------------------------------------


def test_prompt_language_and_fallback():
    assert prompt_lang("zh") == "zh" and prompt_lang("zh-CN") == "zh"
    assert prompt_lang("fr") == "en"
    assert "话题" in system_prompt("zh", "closed", False)
    assert system_prompt("fr", "open", True) == system_prompt("en", "open", True)
    assert '"decisions"' in system_prompt("en", "open", True) and '"decisions"' not in system_prompt("en", "open", False)
    assert "declared" in system_prompt("en", "open", False) and "listed their topics up front" in system_prompt("en", "closed", False)
    assert "bad thing" in fix_message("zh", "bad thing")


def test_payload_shows_topics_conversation_and_new_messages():
    card = ThreadCard("A", "Kitchen", "cabinets", "by June")
    v = view(mode="closed", topics=(topic("A", "Kitchen", "m0", "m1", "m2", "m3", card=card),), current="A",
             pending=("one", "two"))
    p = build_payload(v)
    assert p["topics"][0] == {"id": "A", "title": "Kitchen", "description": "cabinets", "goal": "by June",
                              "messages": 4, "recent": ["m1", "m2", "m3"]}
    assert p["new"] == [{"n": 1, "text": "one"}, {"n": 2, "text": "two"}]
    msgs = build_messages(v, each=False)
    assert [m["role"] for m in msgs] == ["system", "user"] and json.loads(msgs[1]["content"]) == p


# --- bursts ------------------------------------------------------------------------------------------


def test_arrivals_are_seeded_and_follow_the_probabilities():
    keys = ["A"] * 10 + ["B"] * 10
    a = simulate_arrivals(keys, same=0.5, cross=0.15, seed=3, session_id="s")
    assert a == simulate_arrivals(keys, same=0.5, cross=0.15, seed=3, session_id="s")
    assert a != simulate_arrivals(keys, same=0.5, cross=0.15, seed=4, session_id="s")
    # same=1, cross=0: runs of one thread, cut at MAX_BURST; never across threads or one-offs
    f = simulate_arrivals(["A"] * 6 + ["B", None, None], same=1.0, cross=0.0, seed=0, session_id="s")
    assert f == [False, True, True, True, False, True, False, False, False]
    # the observed rate over many pairs is near the configured one
    many = simulate_arrivals(["A"] * 4000, same=0.3, cross=0.0, seed=1, session_id="s")
    rate = sum(many) / 3999
    assert 0.2 < rate < 0.3  # below 0.3 because a run is cut at MAX_BURST


def test_plan_units_merge_policies():
    texts = ["Book the hotel near the river.", "and breakfast,", "ok", "Something else entirely here."]
    follows = [False, True, True, True]
    assert [u.positions for u in plan_units(texts, follows, "none")] == [(0,), (1,), (2,), (3,)]
    assert plan_units(texts, follows, "none")[0].waited is None
    all_ = plan_units(texts, follows, "all")
    assert [u.positions for u in all_] == [(0, 1, 2, 3)] and all_[0].waited == (True,) * 4
    # adaptive does not wait after the finished first message, so message 1 starts a new request
    adaptive = plan_units(texts, follows, "adaptive")
    assert [u.positions for u in adaptive] == [(0,), (1, 2, 3)]
    assert [u.waited for u in adaptive] == [(False,), (True, True, False)]
    assert is_mixed(["A", "A"]) is False and is_mixed(["A", "B"]) and is_mixed(["A", None]) and not is_mixed([None])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["A", "B", None]), min_size=1, max_size=40),
       st.floats(0, 1), st.floats(0, 1), st.integers(0, 10**6), st.sampled_from(["none", "all", "adaptive"]))
def test_units_partition_the_session_in_order(keys, same, cross, seed, merge):
    follows = simulate_arrivals(keys, same=same, cross=cross, seed=seed, session_id="x")
    texts = ["and" if k % 3 == 0 else "A finished sentence about something." for k in range(len(keys))]
    units = plan_units(texts, follows, merge)
    flat = [p for u in units for p in u.positions]
    assert flat == list(range(len(keys)))
    assert all(1 <= len(u.positions) <= MAX_BURST for u in units)
    # a unit never joins two messages that did not arrive together
    assert all(follows[p] for u in units for p in u.positions[1:])


# --- views carry no gold -----------------------------------------------------------------------------


def test_conversation_copies_only_allowed_fields():
    data = session_dict("s1", EN_THREADS, EN_TURNS)
    marker = "GOLDMARKER"
    data["persona"] = marker
    for t in data["threads"]:
        t["facts"] = [{"key": marker, "value": marker, "update": None}]
        t["constraints"] = [marker]
    for t in data["turns"]:
        t["tags"] = [marker]
        t["judge"] = {"thread": "none", "candidates": []}
        t["fact"] = {"key": marker, "kind": marker}
        t["reply"] = marker
        t["extra_field"] = marker
    conv = conversation_of(Session.model_validate(data))
    assert marker not in repr(conv)
    assert [m.text for m in conv.messages] == [t[0] for t in EN_TURNS]
    assert [c.id for c in conv.cards] == ["A", "B", "C"]


def test_view_step_is_pure():
    v = view(topics=(topic("t1", "K"),), current=None, pending=("a", "b"))
    w = v.step("t1")
    assert v.pending[0].text == "a" and not v.history
    assert w.current == "t1" and [m.text for m in w.topic("t1").messages] == ["a"] and len(w.pending) == 1
    assert w.step("CLARIFY").current == "t1"
    with pytest.raises(ValueError):
        v.step("t9")


def test_random_sessions_are_valid():
    rng = random.Random(0)
    from _route_util import random_session

    for k in range(20):
        Session.model_validate(random_session(rng, f"r{k}"))
