"""The ``local`` router: its signals, its calibrated confidence, gold-blindness, and hybrid with a threshold."""

from __future__ import annotations

import asyncio
import csv
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.cli import main
from interleave_bench.generate.runner import generate_offline
from interleave_bench.errors import InputError
from interleave_bench.io import iter_sessions
from interleave_bench.route.base import Message, RouterView, ThreadCard, TopicView
from interleave_bench.route.local import (
    FEATURES,
    ONEOFF_TITLE_PREFIX,
    Calibration,
    LocalRouter,
    LocalWeights,
    shipped_weights,
    split_message,
)
from interleave_bench.route.runner import RouteOptions, route_session
from interleave_bench.score.run import score_predictions

#: sessions of offline data for the calibration check: about 7,500 strict dev messages a mode, so
#: the bins that count (100 messages or more) are not at the mercy of a few messages
CALIBRATION_SESSIONS = 200


def cli(*args: object) -> int:
    return main([str(a) for a in args])


@pytest.fixture(scope="module")
def offline(tmp_path_factory) -> Path:
    """Offline data of the default seed (the distribution the shipped weights were fitted on)."""
    return generate_offline(CALIBRATION_SESSIONS, tmp_path_factory.mktemp("offline") / "data").parent


def view_of(mode: str, topics: list[TopicView], history_labels: list[tuple[int, str, str]], text: str, i: int) -> RouterView:
    from interleave_bench.route.base import RoutedMessage

    history = tuple(RoutedMessage(j, t, lab) for j, t, lab in history_labels)
    current = history[-1].label if history else None
    cards = tuple(t.card for t in topics if t.card is not None)
    return RouterView("s", "en", mode, cards, tuple(topics), history, current, (Message(i, text),))  # type: ignore[arg-type]


CARDS = [ThreadCard("t1", "Kitchen renovation", "Cabinets and tiles", "Finish by June"),
         ThreadCard("t2", "Trip to Lisbon", "Flights and hotel", "A week in May")]


def closed_topics(msgs: dict[str, list[tuple[int, str]]]) -> list[TopicView]:
    return [TopicView(c.id, c.title, c, tuple(Message(i, t) for i, t in msgs.get(c.id, []))) for c in CARDS]


# --- what a router sees: replies and speakers ------------------------------------------------------------------


def v1_session(replies: list[str | None], speakers: list[str | None] | None = None):
    from interleave_bench.schema import Session

    turns = []
    for i, reply in enumerate(replies):
        t = {"i": i, "text": f"message {i}", "gold": {"thread": "t1", "action": "new" if i == 0 else "continue"},
             "style": "explicit", "judge": {"thread": "t1"}, "ambiguous": False}
        if reply is not None:
            t["assistant"] = reply
        if speakers is not None and speakers[i] is not None:
            t["speaker"] = speakers[i]
        turns.append(t)
    return Session.model_validate({"session_id": "s", "version": "interleave-v1", "split": "dev", "lang": "en",
                                   "threads": [{"id": "t1", "title": "Kitchen", "domain": "home"}], "turns": turns})


def test_views_carry_earlier_replies_but_never_the_pending_messages_own():
    from interleave_bench.route.base import conversation_of
    from interleave_bench.route.topic_state import TopicState

    conv = conversation_of(v1_session(["reply 0", None, "reply 2 " + "x" * 400]))
    assert [m.reply for m in conv.messages] == ["reply 0", None, "reply 2 " + "x" * 400]
    state = TopicState(conv, "closed")
    seen = []
    for m in conv.messages:
        view = state.view([m])
        assert view.pending[0].reply is None  # not answered yet
        seen.append([h.reply for h in view.history])
        state.record(m, "t1")
    assert seen == [[], ["reply 0"], ["reply 0", None]]
    assert state.view([]).topics[0].messages[0].reply == "reply 0"


def test_payload_shows_replies_and_speakers_bounded_like_the_recent_window():
    from interleave_bench.route.base import conversation_of
    from interleave_bench.route.payload import MAX_TEXT_CHARS, RECENT_MESSAGES, build_payload
    from interleave_bench.route.topic_state import TopicState

    n = RECENT_MESSAGES + 3
    conv = conversation_of(v1_session([f"reply {i} " + "y" * 400 for i in range(n)], [f"nick{i}" for i in range(n)]))
    state = TopicState(conv, "closed")
    for m in conv.messages[:-1]:
        state.record(m, "t1")
    payload = build_payload(state.view([conv.messages[-1]]))
    shown = payload["conversation"]
    assert len(shown) == RECENT_MESSAGES
    assert [e["speaker"] for e in shown] == [f"nick{i}" for i in range(n - 1 - RECENT_MESSAGES, n - 1)]
    assert all(e["reply"].startswith("reply ") and len(e["reply"]) == MAX_TEXT_CHARS for e in shown)
    assert "reply" not in payload["new"][0]
    plain = build_payload(TopicState(conversation_of(v1_session([None, None])), "closed").view([conv.messages[0]]))
    assert plain["conversation"] == []


def test_irc_import_keeps_the_speaker(tmp_path):
    from interleave_bench.irc import import_irc

    import_irc(Path(__file__).parent / "data" / "irc", tmp_path / "irc")
    [s] = iter_sessions(tmp_path / "irc" / "sessions.jsonl")
    # lines 3..9 of the hand-written log; line 5 is a system line (nobody wrote it)
    assert [t.speaker for t in s.turns] == ["dave", "bob", None, "alice", "frank", "gina", "alice"]
    assert "speaker" not in s.turns[2].dump()


# --- the signals -------------------------------------------------------------------------------------------


def test_message_parts_set_pointing_sentences_apart():
    p = split_message("Now for Trip to Lisbon: which hotel? Keep it consistent with Kitchen renovation. Thanks.")
    assert p.head == "Now for Trip to Lisbon: which hotel?"
    assert p.refs == "Keep it consistent with Kitchen renovation."
    assert p.rest == "Thanks."
    assert split_message("版本 v1.2 已经好了。结合装修厨房一起考虑。").refs == "结合装修厨房一起考虑。"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["i", "need", "can", "you", "the", "other", "one", "by", "way", "new", "it", "x",
                                 "i'd like", "by the", "另一个", "帮", "我", "请"]), max_size=8),
       st.lists(st.sampled_from([" ", ", ", ". ", "'", "!", "-", ""]), min_size=8, max_size=8))
def test_a_lexicon_phrase_is_found_as_whole_words_or_chinese_anywhere(words, seps):
    import re

    from interleave_bench.route.local_text import _LEXICONS, says

    text = "".join(w + sep for w, sep in zip(words, seps)).lower()
    runs = re.findall(r"[a-z0-9]+", text)
    for kind, (english, chinese) in _LEXICONS.items():
        want = any(p.split() == runs[i:i + len(p.split())] for p in english for i in range(len(runs))) or \
            any(c in text for c in chinese)
        assert says(kind, text) is want, (kind, text)


def test_local_follows_a_named_title_a_vague_follow_up_and_a_pointer_back():
    router = LocalRouter()
    hist = {"t1": [(0, "Let's start the kitchen renovation: cabinets first."), (1, "ok, what should I do first?"),
                   (2, "Can you give me a checklist?")],
            "t2": [(3, "New thing: the trip to Lisbon. Flights for May?"), (4, "Sounds good. What could go wrong here?")]}
    labels = sorted((i, t, k) for k, msgs in hist.items() for i, t in msgs)
    topics = closed_topics(hist)
    named = router.decide(view_of("closed", topics, labels, "Back to Kitchen renovation: which tiles?", 5))
    assert named.label == "t1" and named.via == "local" and 0.0 <= named.confidence <= 1.0
    vague = router.decide(view_of("closed", topics, labels, "ok, and then?", 5))
    assert vague.label == "t2" and vague.confidence > 0.7  # stays with the current topic, and knows it
    back = router.decide(view_of("closed", topics, labels, "And the one from before: can you give me a checklist?", 5))
    assert back.label == "t1"  # the topic before the current one
    cross = router.decide(view_of("closed", topics, labels,
                                  "Sounds good, what could go wrong here? Keep it consistent with Kitchen renovation.", 5))
    assert cross.label == "t2"  # a title named only in a pointing sentence does not move the message


def test_a_thread_called_oneoff_is_a_topic_like_any_other():
    """The router's one-off candidate is named so that no thread id can be: a thread whose id is
    "oneoff" is routed to as a topic, not taken for a one-off."""
    cards = [ThreadCard("oneoff", "Kitchen renovation", "Cabinets and tiles", "Finish by June"), CARDS[1]]
    hist = {"oneoff": [(0, "Let's start the kitchen renovation: cabinets first.")],
            "t2": [(1, "New thing: the trip to Lisbon. Flights for May?")]}
    topics = [TopicView(c.id, c.title, c, tuple(Message(i, t) for i, t in hist.get(c.id, []))) for c in cards]
    labels = sorted((i, t, k) for k, msgs in hist.items() for i, t in msgs)
    named = LocalRouter().decide(view_of("closed", topics, labels, "Back to Kitchen renovation: which tiles?", 2))
    assert (named.kind, named.label) == ("topic", "oneoff")


def test_one_off_opens_a_topic_that_later_messages_skip():
    router = LocalRouter()
    hist = {"t1": [(0, "Let's start the kitchen renovation: cabinets first.")]}
    labels = [(0, hist["t1"][0][1], "t1")]
    d = router.decide(view_of("closed", closed_topics(hist), labels, "Random question: who wrote Don Quixote?", 1))
    assert d.kind == "new" and d.title.startswith(ONEOFF_TITLE_PREFIX)
    side = TopicView("x1", d.title, None, (Message(1, "Random question: who wrote Don Quixote?"),))
    after = router.decide(view_of("closed", closed_topics(hist) + [side], labels + [(1, "...", "x1")], "ok, next step?", 2))
    assert after.label == "t1"  # the one-off is neither a candidate nor the current topic


def irc_view(history: list[tuple[str, str, str]], speaker, text: str) -> RouterView:
    """An open-mode multi-party view: ``history`` is (speaker, text, topic) in order."""
    from interleave_bench.route.base import RoutedMessage

    routed = tuple(RoutedMessage(i, f"<{who}> {t}", lab, None, who) for i, (who, t, lab) in enumerate(history))
    labels = list(dict.fromkeys(lab for _, _, lab in history))
    topics = tuple(TopicView(lab, lab, None, tuple(Message(r.i, r.text, None, r.speaker) for r in routed if r.label == lab))
                   for lab in labels)
    body = text if speaker is None else f"<{speaker}> {text}"
    return RouterView("irc", "en", "open", (), topics, routed, routed[-1].label, (Message(len(history), body, None, speaker),))


IRC_HISTORY = [("alice", "anyone know how to reinstall grub?", "t1"), ("bob", "is anyone here using kde?", "t2"),
               ("dave", "alice: boot the live cd and run grub-install", "t1"), ("frank", "bob: yes, kde 3.5 here", "t2")]


def test_multi_party_speaker_and_addressee_point_to_their_conversations():
    router = LocalRouter()
    # naming dave points to dave's conversation, even from bob, whose own latest message was in t2
    assert router.decide(irc_view(IRC_HISTORY, "bob", "dave: thanks, what partition should it go on?")).label == "t1"
    # a new speaker's first words: to the conversation named, when it is also the subject
    assert router.decide(irc_view(IRC_HISTORY, "carol", "dave: what partition should grub go on?")).label == "t1"
    assert router.decide(irc_view(IRC_HISTORY, "carol", "frank: which version exactly?")).label == "t2"
    # no name, no shared words: the speaker carries on where they last spoke
    assert router.decide(irc_view(IRC_HISTORY, "alice", "hmm, still nothing on reboot")).label == "t1"
    # a system line (nobody wrote it) is a conversation of its own
    assert router.decide(irc_view(IRC_HISTORY, None, "=== gina has joined #ubuntu")).kind == "new"


def test_who_is_who_read_message_by_message_is_as_read_at_once():
    from interleave_bench.route.local_profile import ProfileCache
    from interleave_bench.route.local_text import SpeakerLog, people

    hist = IRC_HISTORY + [("bob", "dave: grub is on sda", "t1"), ("dave", "bob: then run update-grub", "t1"),
                          ("carol", "frank: and kde 4?", "t2"), ("alice", "bob: thanks", "t1")]
    cache = ProfileCache()
    # growing histories are read one new message at a time; a shorter one (not an extension) afresh
    for n in [*range(1, len(hist) + 1), 3, 5]:
        for who in ("alice", "bob", "dave", "carol", "frank", None):
            view = irc_view(hist[:n], who, "dave: ok")
            allowed = {t.label for t in view.topics}
            assert people(view, "dave: ok", cache.speakers(view, allowed)) == \
                people(view, "dave: ok", SpeakerLog().read(view.history, allowed))
    p = people(irc_view(hist, "bob", "dave: ok"), "dave: ok", cache.speakers(irc_view(hist, "bob", "dave: ok"), {"t1", "t2"}))
    # bob last spoke in t1, once in each; alice named him last (t1); dave, named, last spoke in t1
    assert (p.mine, p.spoke, p.named_me, p.addressed, p.named_in) == ("t1", {"t2": 1, "t1": 1}, "t1", {"t1"}, {"t1": 1})
    p = people(irc_view(hist, "frank", "ok"), "ok", cache.speakers(irc_view(hist, "frank", "ok"), {"t1", "t2"}))
    assert (p.mine, p.named_me, p.names_someone) == ("t2", "t2", False)  # carol named frank in t2


def test_a_short_answer_to_the_assistants_question_continues_its_topic():
    from interleave_bench.route.base import RoutedMessage
    from interleave_bench.route.local import ProfileCache, candidates, FEATURES as F

    topics = closed_topics({"t1": [(0, "Let's start the kitchen renovation: cabinets first.")],
                            "t2": [(1, "Now the trip to Lisbon: flights for May.")]})
    asked = (RoutedMessage(0, "Let's start the kitchen renovation: cabinets first.", "t1"),
             RoutedMessage(1, "Now the trip to Lisbon: flights for May.", "t2", "Sure. Which date do you leave?"))
    view = RouterView("s", "en", "closed", tuple(CARDS), tuple(topics), asked, "t2", (Message(2, "The 3rd."),))
    c = candidates(view, ProfileCache())
    row = c.features[c.labels.index("t2")]
    assert row[F.index("topic.current_asked")] == 1.0 and row[F.index("topic.current_answer")] == 1.0
    assert LocalRouter().decide(view).label == "t2"
    told = (asked[0], RoutedMessage(1, asked[1].text, "t2", "Done: your flights are booked."))
    c = candidates(replace_history(view, told), ProfileCache())
    row = c.features[c.labels.index("t2")]
    assert row[F.index("topic.current_answer")] == 0.0 and row[F.index("topic.current_done")] == 1.0


def replace_history(view: RouterView, history) -> RouterView:
    from dataclasses import replace

    return replace(view, history=tuple(history))


def test_replies_join_their_topics_profile():
    from interleave_bench.route.local import ProfileCache

    cache = ProfileCache()
    t = TopicView("t1", "Kitchen", None, (Message(0, "cabinets first", "I suggest oak veneer"),))
    view = RouterView("s", "en", "open", (), (t,), (), None, ())
    prof = cache.get(view, t)
    assert {"oak", "veneer", "cabinets"} <= prof.tf.keys()
    # a reply that arrives after the profile was built is taken in
    t0 = TopicView("t2", "Trip", None, (Message(1, "flights for May"),))
    cache.get(view, t0)
    later = cache.get(view, TopicView("t2", "Trip", None, (Message(1, "flights for May", "try the night train"),)))
    assert "train" in later.tf


# --- weights and calibration ------------------------------------------------------------------------------------


def test_shipped_weights_name_every_feature_and_were_fitted_on_dev():
    w = shipped_weights()
    doc = json.loads((Path(__file__).resolve().parents[1] / "interleave_bench/data/local/weights.json").read_text())
    assert doc["features"] == list(FEATURES) and set(doc["modes"]) == {"closed", "open"}
    assert w.fit["split"] == "dev"
    # fitted across the three corpora, each left out in turn, every input named by its fingerprint
    assert set(w.fit["corpora"]) == {"offline", "sgd", "irc"}
    assert set(w.fit["held_out"]["sgd"]) == {"closed", "open"} and set(w.fit["held_out"]["irc"]) == {"open"}
    assert all(c.get("sessions_sha256") or c.get("content") for c in w.fit["corpora"].values())
    with pytest.raises(InputError, match="modes.open: is missing"):
        LocalWeights.from_json({**doc, "modes": {"closed": doc["modes"]["closed"]}})


def test_confidence_is_calibrated_per_kind_of_chat():
    import numpy as np
    from interleave_bench.route.local import ModeWeights, chat_kind
    from interleave_bench.route.local_fit import MIN_STEP_MESSAGES, Judged, fit_calibrations

    assert chat_kind(irc_view(IRC_HISTORY, "carol", "hello")) == "multi"
    plain = view_of("closed", closed_topics({}), [(0, "kitchen first", "t1")], "ok", 1)
    assert chat_kind(plain) == "plain"
    assert chat_kind(replace_history(plain, [RoutedMessageOf(0, "kitchen first", "t1", "Oak or pine?")])) == "replies"
    # replies right half the time, plain chat always; too few multi-party messages for a map of their own
    judged = ([Judged(0.7, 0, k % 2 == 0, "en", "explicit", "replies") for k in range(MIN_STEP_MESSAGES)]
              + [Judged(0.7, 0, True, "en", "explicit", "plain") for _ in range(MIN_STEP_MESSAGES)]
              + [Judged(0.7, 0, False, "en", "explicit", "multi") for _ in range(10)])
    mw = fit_calibrations(judged, np.zeros(len(FEATURES)))
    assert set(mw.by_kind) == {"replies", "plain"}
    assert mw.confidence(0.7, "replies") == pytest.approx(0.5) and mw.confidence(0.7, "plain") == 1.0
    assert mw.confidence(0.7, "multi") == mw.calibration(0.7)  # the map over every message
    doc = LocalWeights({"closed": mw, "open": mw}, {}).to_json()
    back = LocalWeights.from_json(doc).modes["open"]
    assert back.confidence(0.7, "replies") == pytest.approx(0.5) and isinstance(back, ModeWeights)


def RoutedMessageOf(*args):
    from interleave_bench.route.base import RoutedMessage

    return RoutedMessage(*args)


# --- runs ----------------------------------------------------------------------------------------------------


def scramble(row: dict, rng: random.Random) -> dict:
    """Nonsense, still schema-valid, in the gold, judge and ambiguous fields of every turn."""
    s = json.loads(json.dumps(row))
    ids = [t["id"] for t in s["threads"]]
    for t in s["turns"]:
        oneoff = rng.random() < 0.2
        t["gold"] = {"thread": None if oneoff else rng.choice(ids), "action": "oneoff" if oneoff else "switch",
                     "refs": [] if oneoff else rng.sample(ids, rng.randint(0, len(ids)))}
        t["style"] = "oneoff" if oneoff else "pronoun"
        t["judge"] = {"thread": rng.choice(ids + ["none", "ambiguous"])}
        t["ambiguous"] = rng.random() < 0.5
    return s


WORDS = ["kitchen", "tiles", "oak", "lisbon", "flights", "hotel", "c++", "v1.2", "预订", "酒店", "the", "and"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), max_size=4), min_size=1, max_size=4),
       st.lists(st.sampled_from(WORDS), min_size=1, max_size=8))
def test_bm25_evidence_is_the_bm25_baselines_own_score(topic_msgs, query):
    from interleave_bench.route.bm25 import bm25_scores, bm25_tokens, topic_tokens
    from interleave_bench.route.local import ProfileCache, plain_bm25

    topics = [TopicView(f"t{k}", f"t{k}", None, tuple(Message(10 * k + j, " ".join(m)) for j, m in enumerate(msgs)))
              for k, msgs in enumerate(topic_msgs)]
    view = RouterView("s", "en", "open", (), tuple(topics), (), None, ())
    cache = ProfileCache()
    q = bm25_tokens(" ".join(query))
    got = plain_bm25(q, [cache.get(view, t) for t in topics])
    assert got == pytest.approx(bm25_scores(q, [topic_tokens(t) for t in topics]))


def test_weights_at_the_prior_decide_as_bm25(offline):
    """Far from the data (the weights at the fit's prior) the router is the bm25 baseline: the
    fallback every fit is drawn to."""
    import numpy as np
    from interleave_bench.route.bm25 import Bm25Router
    from interleave_bench.route.local import ModeWeights
    from interleave_bench.route.local_fit import bm25_prior

    sessions = [s for s in iter_sessions(offline / "sessions.jsonl") if s.split == "dev"][:6]
    prior = LocalRouter(LocalWeights({m: ModeWeights(np.asarray(bm25_prior()), Calibration()) for m in ("closed", "open")}, {}))
    for mode in ("closed", "open"):
        opts = RouteOptions(mode=mode, policy="local")
        for s in sessions:
            a = [r["pred"] for r in asyncio.run(route_session(s, prior, opts))[0]]
            b = [r["pred"] for r in asyncio.run(route_session(s, Bm25Router(), RouteOptions(mode=mode, policy="bm25")))[0]]
            assert a == b, (mode, s.session_id)


def test_message_length_is_read_against_the_chats_own():
    from interleave_bench.route.base import RoutedMessage
    from interleave_bench.route.local import FEATURES as F, NEW, ProfileCache, candidates

    def new_length(history_texts, text):
        history = tuple(RoutedMessage(i, t, "t1") for i, t in enumerate(history_texts))
        topic = TopicView("t1", "x", None, tuple(Message(i, t) for i, t in enumerate(history_texts)))
        view = RouterView("s", "en", "open", (), (topic,), history, "t1", (Message(len(history), text),))
        c = candidates(view, ProfileCache())
        return c.features[c.labels.index(NEW)][F.index("new.length")]

    four = "alpha beta gamma delta"
    # log(1 + 4) against a chat of four-token messages: average; against two-token ones: long
    assert new_length([four, "one two three four"], four) == pytest.approx(0.0)
    import math
    assert new_length(["one two", "three four"], four) == pytest.approx(math.log(5) - math.log(3))


def test_local_is_gold_blind(tmp_path, offline):
    lines = (offline / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[:6]
    real, fake = tmp_path / "real", tmp_path / "fake"
    rng = random.Random(3)
    for folder, rows in ((real, lines), (fake, [json.dumps(scramble(json.loads(x), rng)) for x in lines])):
        folder.mkdir()
        (folder / "sessions.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    for mode in ("closed", "open"):
        outs = []
        for folder in (real, fake):
            assert cli("route", folder, "--mode", mode, "--policy", "local") == 0
            outs.append((folder / "predictions" / f"{mode}-local.jsonl").read_bytes())
        assert outs[0] == outs[1], f"{mode}-local changed with the gold labels"
        rows = [json.loads(x) for x in outs[0].decode().splitlines()]
        assert all(r["via"] == "local" and 0.0 <= r["confidence"] <= 1.0 for r in rows)


def test_local_beats_bm25_on_offline_data(offline):
    sessions = [s for s in iter_sessions(offline / "sessions.jsonl") if s.split == "test"][:10]
    for mode in ("closed", "open"):
        acc = {}
        for policy in ("bm25", "local"):
            from interleave_bench.route.runner import make_router

            opts = RouteOptions(mode=mode, policy=policy)
            rows = [r for s in sessions for r in asyncio.run(route_session(s, make_router(policy), opts))[0]]
            acc[policy] = score_predictions(sessions, rows, split="test", bootstrap=0).result["metrics"]["accuracy"]
        assert acc["local"] > acc["bm25"] + 0.1, (mode, acc)


def test_a_resume_with_other_local_weights_is_another_run(tmp_path, offline, capsys):
    from dataclasses import replace

    from interleave_bench.errors import UsageError
    from interleave_bench.route.runner import run_route

    data = small_copy(offline, tmp_path, 4)
    out = data / "predictions" / "closed-local.jsonl"
    assert cli("route", data, "--mode", "closed", "--policy", "local") == 0
    before = out.read_bytes()
    shipped = shipped_weights()
    assert json.loads(out.with_suffix(".run.json").read_text())["options"]["local_weights"] == shipped.fingerprint()
    refit = LocalWeights({m: replace(mw, weights=mw.weights * 0.5) for m, mw in shipped.modes.items()}, shipped.fit)
    assert refit.fingerprint() != shipped.fingerprint()
    with pytest.raises(UsageError, match=r"other weights of the local router .*pass --fresh"):
        run_route(data, RouteOptions(mode="closed", policy="local"), router=LocalRouter(refit))
    assert out.read_bytes() == before
    assert cli("route", data, "--mode", "closed", "--policy", "local") == 0  # the same weights: a resume
    assert out.read_bytes() == before
    # hybrid's local fast path is tied to its weights too; the rule fast path has none
    assert cli("route", data, "--mode", "closed", "--policy", "hybrid", "--threshold", "0.9", "--dry-run") == 0
    assert cli("route", data, "--mode", "closed", "--policy", "hybrid", "--dry-run") == 0
    dry = data / "predictions-dry"
    records = {p.name: json.loads(p.read_text())["options"] for p in dry.glob("*.run.json")}
    assert [o.get("local_weights") for _, o in sorted(records.items())] == [None, shipped.fingerprint()], records


def test_threshold_needs_hybrid_and_a_confidence(tmp_path, offline, capsys):
    assert cli("route", offline, "--mode", "closed", "--policy", "bm25", "--threshold", "0.5") == 2
    assert "--threshold applies to the hybrid policy only" in capsys.readouterr().err
    assert cli("route", offline, "--mode", "closed", "--policy", "hybrid", "--threshold", "1.5", "--dry-run") == 2
    assert "between 0 and 1" in capsys.readouterr().err
    assert cli("route", offline, "--mode", "closed", "--policy", "local", "--sweep-threshold") == 2
    assert "hybrid policy only" in capsys.readouterr().err
    assert cli("route", offline, "--mode", "closed", "--policy", "hybrid", "--sweep-threshold", "0.5,x", "--dry-run") == 2
    assert "'x' is not a number" in capsys.readouterr().err


def small_copy(offline: Path, tmp_path: Path, n: int) -> Path:
    folder = tmp_path / "small"
    folder.mkdir()
    lines = (offline / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    (folder / "sessions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_hybrid_at_a_threshold_that_sends_half_to_local_makes_half_the_calls(openai_env, tmp_path, offline):
    data = small_copy(offline, tmp_path, 6)
    assert cli("route", data, "--mode", "closed", "--policy", "local") == 0
    confidences = sorted(json.loads(x)["confidence"] for x in (data / "predictions/closed-local.jsonl").read_text().splitlines())
    # closed mode: in open mode most plain-chat confidences sit on the calibration's floor, so no
    # threshold splits them. Hybrid's local confidences follow the model's earlier decisions: sweep
    # thresholds around the median and take the one that sends closest to half the messages to local
    picks = sorted({confidences[int(len(confidences) * q / 20)] for q in range(6, 16)})
    assert cli("route", data, "--mode", "closed", "--policy", "hybrid", "--model", "m1",
               "--sweep-threshold", ",".join(f"{t:g}" for t in picks)) == 0
    curve = json.loads((data / "predictions/closed-hybrid-sweep-m1.sweep.json").read_text())["curve"]
    point = min(curve, key=lambda p: abs(p["local_share"] - 0.5))
    rows = [json.loads(x) for x in (data / "predictions" / point["predictions"]).read_text().splitlines()]
    local = [r for r in rows if r["via"] == "local"]
    model = [r for r in rows if r["via"] != "local"]
    assert all(r["confidence"] >= point["threshold"] and "usage" not in r for r in local)
    assert all(r["via"] == "llm" and "usage" in r for r in model)  # one call per message the model decided
    assert 0.4 <= len(local) / len(rows) <= 0.6, len(local) / len(rows)
    assert 0.4 <= len(model) / len(rows) <= 0.6
    # the curve is measured on the dev sessions (every split was routed)
    dev = {json.loads(x)["session_id"] for x in (data / "sessions.jsonl").read_text().splitlines()
           if json.loads(x)["split"] == "dev"}
    on_dev = [r for r in rows if r["session_id"] in dev]
    assert point["messages"] == len(on_dev)
    assert point["calls_per_message"] == pytest.approx(sum(r["via"] != "local" for r in on_dev) / len(on_dev), abs=1e-3)


def test_dry_run_sweep_writes_the_curve(tmp_path, offline, monkeypatch, capsys):
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("EVAL_PRICES", "1,1,1")  # prices every model but the fake one
    data = small_copy(offline, tmp_path, 3)
    assert cli("route", data, "--mode", "closed", "--policy", "hybrid", "--dry-run", "--sweep-threshold", "0,0.9,1") == 0
    out = capsys.readouterr().out
    assert "| threshold | local share | calls/message | accuracy |" in out
    # each row shows the shares as sweep.json holds them
    table = [line for line in out.splitlines() if line.startswith("| 0.9 |")]
    folder = data / "predictions-dry"
    doc = json.loads((folder / "closed-hybrid-sweep-fake-model.sweep.json").read_text())
    curve = doc["curve"]
    assert [p["threshold"] for p in curve] == [0.0, 0.9, 1.0]
    assert curve[0]["local_share"] == 1.0 and curve[0]["calls_per_message"] == 0.0
    shares = [p["calls_per_message"] for p in curve]
    assert shares == sorted(shares) and shares[-1] > 0  # a higher threshold asks the model more often
    assert table[0].startswith(f"| 0.9 | {curve[1]['local_share']:.4f} | {curve[1]['calls_per_message']:.4f} | ")
    assert curve[-1]["input_tokens_per_message"] > 0 and curve[-1]["output_tokens_per_message"] > 0
    for p in curve:
        assert p["cost_usd_per_message"] == 0.0  # a dry run is free, whatever EVAL_PRICES says
        assert p["local_share"] + p["calls_per_message"] == pytest.approx(1.0, abs=1e-3)
        assert (folder / p["predictions"]).exists() and 0.0 <= p["accuracy"] <= 1.0
    with open(folder / "closed-hybrid-sweep-fake-model.sweep.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [float(r["threshold"]) for r in table] == [0.0, 0.9, 1.0]




def test_a_dry_run_sweep_in_a_fresh_process_asks_the_fake_model_for_routing_answers(tmp_path, offline):
    """Run alone (not after a test that loaded the fake model's routing answers): no message ends as ERROR."""
    import os
    import subprocess
    import sys

    data = small_copy(offline, tmp_path, 2)
    env = {**os.environ, "INTERLEAVE_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "interleave_bench", "route", str(data), "--mode", "closed", "--policy",
                           "hybrid", "--dry-run", "--sweep-threshold", "1"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(x) for x in (data / "predictions-dry" / "closed-hybrid-t1-fake-model.jsonl").read_text().splitlines()]
    assert sum(r["via"] == "llm" for r in rows) > len(rows) / 2  # threshold 1: the model decides most messages
    assert [r for r in rows if r["pred"] == "ERROR"] == [] and "ERROR" not in proc.stderr
    assert ", 0 errors;" in proc.stderr, proc.stderr


def test_a_sweep_says_how_many_error_rows_each_run_left(tmp_path, offline, openai_env, capsys):
    srv = openai_env["server"]
    srv.add_fault("garbage", times=10_000)  # every answer unusable, the corrective retry too
    data = small_copy(offline, tmp_path, 2)
    assert cli("route", data, "--mode", "closed", "--policy", "hybrid", "--model", "m1", "--sweep-threshold", "0,1") == 0
    out, err = capsys.readouterr()
    n = sum(1 for x in (data / "predictions" / "closed-hybrid-t1-m1.jsonl").read_text().splitlines() if '"ERROR"' in x)
    assert n > 0 and f"{n:,} ERROR rows remain in {data / 'predictions' / 'closed-hybrid-t1-m1.jsonl'}" in err, err
    assert "t0-m1.jsonl" not in err  # threshold 0 asks no model: nothing left to ask again
    assert f", {n:,} errors;" in err, err


def test_each_run_of_a_sweep_records_its_own_usage(tmp_path, offline, monkeypatch, capsys):
    import re

    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    data = small_copy(offline, tmp_path, 2)
    assert cli("route", data, "--mode", "closed", "--policy", "hybrid", "--dry-run", "--sweep-threshold", "0.9,1") == 0
    err = capsys.readouterr().err
    total = int(re.search(r"; ([0-9,]+) paid calls,", err).group(1).replace(",", ""))
    folder = data / "predictions-dry"
    usage = {t: json.loads((folder / f"closed-hybrid-t{t}-fake-model.run.json").read_text())["usage"] for t in ("0.9", "1")}
    # each record holds its run's calls: together the sweep's, not the running total twice
    assert usage["0.9"]["calls"] > 0 and usage["1"]["calls"] > 0
    assert usage["0.9"]["calls"] + usage["1"]["calls"] == total, (usage, total)
    for t in ("0.9", "1"):
        rows = [json.loads(x) for x in (folder / f"closed-hybrid-t{t}-fake-model.jsonl").read_text().splitlines()]
        paid_in = sum(r["usage"]["input"] for r in rows if "usage" in r)
        assert usage[t]["input_tokens"] <= paid_in  # (its rows count cached answers too)


def test_a_sweep_over_every_split_measures_its_curve_on_the_dev_sessions(tmp_path, offline, monkeypatch, capsys):
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    data = small_copy(offline, tmp_path, 10)
    sessions = [json.loads(x) for x in (data / "sessions.jsonl").read_text().splitlines()]
    dev = sum(len(s["turns"]) for s in sessions if s["split"] == "dev")
    assert 0 < dev < sum(len(s["turns"]) for s in sessions)  # both splits are there
    assert cli("route", data, "--mode", "closed", "--policy", "hybrid", "--dry-run", "--sweep-threshold", "0,1") == 0
    doc = json.loads((data / "predictions-dry" / "closed-hybrid-sweep-fake-model.sweep.json").read_text())
    assert doc["options"]["split"] == "all" and doc["options"]["curve_split"] == "dev"
    assert [p["messages"] for p in doc["curve"]] == [dev, dev]
    rows = (data / "predictions-dry" / "closed-hybrid-t0-fake-model.jsonl").read_text().splitlines()
    assert len(rows) == sum(len(s["turns"]) for s in sessions)  # every split routed: the test split is there to report
