"""The ``local`` router's background: how common each token is in chat at large, and where it weighs."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.errors import InputError
from interleave_bench.route.base import Message, RoutedMessage, RouterView, ThreadCard, TopicView
from interleave_bench.route.local import FEATURES, LocalWeights, ProfileCache, candidates, shipped_weights
from interleave_bench.route.local_background import EMPTY, MIN_MESSAGES, POWER, Background, build_background, session_texts
from interleave_bench.route.local_corpora import Corpus, FitData, _folds
from interleave_bench.route.text import tokens
from interleave_bench.schema import Session


def test_weights_by_hand():
    # corpus A: 2 messages, "thanks" in both; corpus B: 3 messages, "thanks" in 1, "trip" and "rome" in 2
    b = build_background([["thanks a lot", "thanks for the map"], ["thanks", "trip to rome", "rome trip"]])
    e = 0.5 / 5
    unseen = math.log((1 + 2 * e) / e)  # ln 12
    thanks = (math.log((1 + 2 * e) / ((2 / 2 + 1 / 3) / 2 + e)) / unseen) ** 2  # share 2/3; IDF share 0.1803, squared
    trip = (math.log((1 + 2 * e) / ((0 + 2 / 3) / 2 + e)) / unseen) ** 2  # share 1/3; IDF share 0.4099, squared
    assert b.messages == 5
    # tokens in fewer than MIN_MESSAGES messages ("a", "lot", "map", ...) are not kept: they weigh as unseen
    assert MIN_MESSAGES == 2 and POWER == 2 and b.weights == {"rome": round(trip, 4), "thanks": round(thanks, 4), "trip": round(trip, 4)}
    assert (b.weights["thanks"], b.weights["trip"]) == (0.0325, 0.168)
    # no Chinese in the background: a Chinese token weighs what a kept token weighs where it occurs,
    # each corpus alike: A (0.0325 x 2) / 2, B (0.0325 + 0.168 x 4) / 5
    typical = round((0.0325 + (0.0325 + 4 * 0.168) / 5) / 2, 4)
    assert b.absent == {"chinese": typical} and typical == 0.0867
    assert [b.weight(q) for q in ("thanks", "lot", "旅行")] == [0.0325, 1.0, 0.0867]
    assert [EMPTY.weight(q) for q in ("thanks", "旅行")] == [1.0, 1.0]


texts = st.lists(st.text(alphabet="ab cd 旅行", max_size=12), max_size=8)


@settings(max_examples=80, deadline=None)
@given(st.lists(texts, min_size=1, max_size=3))
def test_weights_fall_as_tokens_get_commoner_whatever_the_order(corpora):
    b = build_background(corpora)
    assert all(0.0 < w <= 1.0 for w in b.weights.values())
    sized = [c for c in corpora if c]
    share = {q: sum(sum(q in set(tokens(t)) for t in c) / len(c) for c in sized) / len(sized) for q in b.weights}
    for q in b.weights:
        for r in b.weights:
            if share[q] > share[r]:
                assert b.weights[q] <= b.weights[r]
    # the corpora's order and each corpus's message order do not matter
    assert build_background([list(reversed(c)) for c in reversed(corpora)]).weights == b.weights


def test_the_file_keeps_the_background_and_refuses_a_bad_one():
    shipped = shipped_weights()
    bg = shipped.background
    assert bg.messages > 0 and not bg.absent  # the fit's corpora hold words and Chinese
    assert {len(q) > 0 and q[0] >= "\u3400" for q in bg.weights} == {True, False}
    doc = shipped.to_json()
    assert LocalWeights.from_json(doc).background == bg
    doc["background"]["tokens"]["thanks"] = 1.5
    with pytest.raises(InputError, match=r"w.json: background.tokens.thanks: must be a number in \(0, 1\]"):
        LocalWeights.from_json(doc, "w.json")
    del doc["background"]
    with pytest.raises(InputError, match="w.json: background: must be an object"):
        LocalWeights.from_json(doc, "w.json")


CARDS = (ThreadCard("t1", "Kitchen renovation", "Cabinets and tiles", "Finish by June"),
         ThreadCard("t2", "Trip to Lisbon", "Flights and hotel", "A week in May"))


def _view(mode: str) -> RouterView:
    history = [RoutedMessage(0, "new cabinets for the kitchen", "t1"), RoutedMessage(1, "thanks, book the flights", "t2")]
    msgs = {"t1": (Message(0, history[0].text),), "t2": (Message(1, history[1].text),)}
    if mode == "closed":
        topics = tuple(TopicView(c.id, c.title, c, msgs[c.id]) for c in CARDS)
    else:
        topics = tuple(TopicView(lab, lab, None, msgs[lab]) for lab in ("t1", "t2"))
    return RouterView("s", "en", mode, CARDS if mode == "closed" else (), topics, tuple(history), "t2",
                      (Message(2, "thanks"),))  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["closed", "open"])
def test_a_common_word_weighs_less_in_both_modes(mode, monkeypatch):
    from interleave_bench.route import local

    head = FEATURES.index("topic.head_bm25")
    filler = Background({"thanks": 0.25}, {}, 100)

    def head_bm25(background: Background) -> float:
        c = candidates(_view(mode), ProfileCache(), background)
        return c.features[c.labels.index("t2")][head]

    plain, weighed = head_bm25(EMPTY), head_bm25(filler)
    assert plain > 0
    # one shared term: its BM25 a quarter of what it was
    assert weighed == pytest.approx(math.log1p(math.expm1(plain) * 0.25))
    monkeypatch.setattr(local, "BACKGROUND_IN", ())  # a mode the background is not for keeps plain overlaps
    assert head_bm25(filler) == plain


def _session(sid: str, texts: list[str]) -> Session:
    turns = [{"i": i, "text": t, "gold": {"thread": "t1", "action": "new" if i == 0 else "continue"},
              "style": "explicit", "judge": {"thread": "t1"}, "ambiguous": False} for i, t in enumerate(texts)]
    return Session.model_validate({"session_id": sid, "version": "interleave-v0", "split": "dev", "lang": "en",
                                   "threads": [{"id": "t1", "title": "Kitchen", "domain": "home"}], "turns": turns})


def test_a_fit_builds_its_background_only_from_what_it_fits_on():
    a = Corpus("a", [_session(f"a{k}", ["paint the kitchen", f"paint sample {k}"]) for k in range(6)], {})
    b = Corpus("b", [_session(f"b{k}", ["zebra zebra", "zebra crossing"]) for k in range(6)], {})
    data = FitData()
    assert "zebra" in data.background([a, b]).weights
    assert "zebra" not in data.background([a]).weights  # b left out of the fit: out of its background too
    # a fold left out: its sessions' texts are not counted
    only_fold = {s.session_id for s in _folds(a.sessions)[1]}
    counted = list(session_texts(s for s in a.sessions if s.session_id not in only_fold))
    assert data.background([a], 1) == build_background([counted])
    assert data.background([a], 1).messages == 8 and data.background([a]).messages == 12


def test_the_cards_share_of_the_first_sentence_weighs_its_words():
    share = FEATURES.index("topic.card_share")
    view = _view("closed")
    view = RouterView(view.session_id, view.lang, view.mode, view.cards, view.topics, view.history, view.current,
                      (Message(2, "thanks for the kitchen tiles"),))
    filler = Background({"thanks": 0.25, "for": 0.125, "the": 0.125}, {}, 100)

    def card_share(background: Background) -> float:
        c = candidates(view, ProfileCache(), background)
        return c.features[c.labels.index("t1")][share]

    # the card (Kitchen renovation / Cabinets and tiles / Finish by June) has "kitchen" and "tiles":
    # 2 of 5 words as counted, 2 of 2.5 when each weighs as common as it is
    assert card_share(EMPTY) == 2 / 5
    assert card_share(filler) == 2 / 2.5
