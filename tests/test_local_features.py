"""Single features of the ``local`` router, each computed by hand on a small view."""

from __future__ import annotations

import math
from operator import mul

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.route.base import Message, RoutedMessage, RouterView, ThreadCard, TopicView
from interleave_bench.route.local import FEATURES, NEW, QUIET_TURNS, ProfileCache, candidates
from interleave_bench.route.local_rows import NEW_LAYOUT, ONEOFF_LAYOUT, best_of, split_weights


def test_a_new_topic_reads_the_share_of_words_no_topic_has_seen():
    def unseen(topic_texts, text):
        topics = tuple(TopicView(f"t{k}", f"t{k}", None, (Message(k, t),)) for k, t in enumerate(topic_texts))
        view = RouterView("s", "en", "open", (), topics, (), None, (Message(len(topics), text),))
        c = candidates(view, ProfileCache())
        return c.features[c.labels.index(NEW)][FEATURES.index("new.unseen")]

    # kitchen is seen, budget, for and lisbon are not: 3 of 4 distinct words
    assert unseen(["kitchen tiles grout"], "kitchen budget for lisbon kitchen") == pytest.approx(0.75)
    # a word two topics have seen counts once: kitchen and lisbon seen, 2 of 4
    assert unseen(["kitchen tiles", "lisbon kitchen"], "kitchen budget for lisbon") == pytest.approx(0.5)
    # before any topic every word is new
    assert unseen([], "kitchen budget") == 1.0


CARDS = (ThreadCard("t1", "Kitchen renovation", "Cabinets and tiles", "Finish by June"),
         ThreadCard("t2", "Trip to Lisbon", "Flights and hotel", "A week in May"))


@pytest.mark.parametrize("text", ["the grout and the hotel", "the grout and the hotel. Also the kitchen june."])
def test_a_topic_reads_the_share_of_the_first_sentences_words_it_has_seen(text):
    def head_seen(mode):
        topics = (TopicView("t1", "Kitchen renovation", CARDS[0] if mode == "closed" else None,
                            (Message(0, "the grout is grey"),)),
                  TopicView("t2", "Trip to Lisbon", CARDS[1] if mode == "closed" else None,
                            (Message(1, "flights and hotel for a week in may"),)))
        view = RouterView("s", "en", mode, CARDS if mode == "closed" else (), topics, (), None, (Message(2, text),))
        c = candidates(view, ProfileCache())
        return [c.features[c.labels.index(t)][FEATURES.index("topic.head_seen")] for t in ("t1", "t2")]

    # the first sentence's words: the, grout, and, hotel. The kitchen card and its message have
    # seen the, grout and and (3 of 4); the Lisbon card and its message and and hotel (2 of 4).
    # Later sentences do not count ("kitchen", "june" are on the kitchen card).
    assert head_seen("closed") == [pytest.approx(0.75), pytest.approx(0.5)]
    # open mode does not read it (HEAD_SEEN_IN)
    assert head_seen("open") == [0.0, 0.0]


@pytest.mark.parametrize("speakers", [True, False])
@pytest.mark.parametrize("mode", ["open", "closed"])
def test_a_multi_party_conversation_silent_for_too_long_is_no_longer_a_candidate(speakers, mode):
    labels = _quiet_labels(mode, speakers, "cid", "grub again")
    # only a multi-party chat in open mode lets a conversation end; one person's topics, and
    # closed mode's cards, stay candidates however long they were silent
    assert ("t1" in labels) == (not (speakers and mode == "open"))
    assert "t2" in labels


@pytest.mark.parametrize("speaker, text", [
    ("ann", "grub again"),  # ann spoke in t1
    ("cid", "ann: grub again"),  # the message names ann, who spoke in t1
    ("dan", "grub again"),  # t1's latest message named dan
])
def test_a_silent_conversation_the_speaker_is_tied_to_stays_a_candidate(speaker, text):
    assert "t1" in _quiet_labels("open", True, speaker, text)


def _quiet_labels(mode, speakers, speaker, text):
    """The candidates of a message from ``speaker`` when t1 has been silent one turn too long and t2
    exactly long enough; t1 holds ann's message naming dan, t2 bob's."""
    who = (lambda name: name) if speakers else (lambda name: None)
    # t1 last heard from at turn 0, t2 at turn 1; the pending message comes QUIET_TURNS + 1 turns
    # after t1's message
    at = QUIET_TURNS + 1
    card = (lambda k: CARDS[k]) if mode == "closed" else (lambda k: None)
    t1 = TopicView("t1", "t1", card(0), (Message(0, "dan: grub fails to boot", None, who("ann")),))
    t2 = TopicView("t2", "t2", card(1), (Message(1, "wifi drops", None, who("bob")),))
    history = (RoutedMessage(0, "dan: grub fails to boot", "t1", None, who("ann")),
               RoutedMessage(1, "wifi drops", "t2", None, who("bob")))
    view = RouterView("s", "en", mode, CARDS if mode == "closed" else (), (t1, t2), history, "t2",
                      (Message(at, text, None, who(speaker)),))
    return candidates(view, ProfileCache()).labels


def test_a_first_sentence_that_only_acknowledges_is_passed_over():
    from interleave_bench.route.local_text import only_acknowledges, split_message

    assert [only_acknowledges(s) for s in ("Thank you very much.", "Ok great.", "好的。", "Thanks, that works.",
                                           "Thanks, can you also book a table?", "The hotel is fine.",
                                           "Great, now I need a cab to the airport please.")] == [
        True, True, True, True, False, False, False]
    text = "Thank you very much. Ok. Can you show me attractions in Lisbon? Keep it consistent with the flights."
    assert split_message(text, skip_acks=False).head == "Thank you very much."
    p = split_message(text, skip_acks=True)
    assert p.head == "Can you show me attractions in Lisbon?"
    assert p.refs == "Keep it consistent with the flights."
    assert p.rest == "Thank you very much. Ok."  # kept, with the later sentences
    assert p.lowered_head == p.head.lower() and p.lowered == text.lower()
    # a message that only acknowledges keeps its last sentence as its first
    assert split_message("Thanks. Great.", skip_acks=True).head == "Great."


@pytest.mark.parametrize("mode", ["closed", "open"])
def test_a_subject_named_after_thanks_is_read_as_the_first_sentence(mode):
    from interleave_bench.route.local import SKIP_ACKS_IN

    topics = tuple(TopicView(c.id, c.title, c if mode == "closed" else None, (Message(k, f"about the {c.title}"),))
                   for k, c in enumerate(CARDS))
    text = "Thanks a lot. Which hotel in Lisbon is near the flights?"
    view = RouterView("s", "en", mode, CARDS if mode == "closed" else (), topics,
                      (RoutedMessage(0, "about the kitchen", "t1"),), "t1", (Message(2, text),))
    c = candidates(view, ProfileCache())
    head = [row[FEATURES.index("topic.head_bm25")] for row in c.features[:2]]
    if mode in SKIP_ACKS_IN:
        assert head[1] > head[0]  # the request names Lisbon's words: t2's, not the kitchen's
    else:
        assert head == [0, 0]  # "Thanks a lot." names nothing


def _views() -> list[RouterView]:
    """Views of each kind of chat, mode and message shape (one sentence, several, a pointer elsewhere)."""
    topics = (TopicView("t1", "Kitchen renovation", CARDS[0], (Message(0, "the grout is grey"),)),
              TopicView("t2", "Trip to Lisbon", CARDS[1], (Message(1, "flights and hotel for a week in may"),)))
    out = []
    for reply in (None, "Sure. Which date do you leave?"):
        history = (RoutedMessage(0, "the grout is grey", "t1"), RoutedMessage(1, topics[1].messages[0].text, "t2", reply))
        for mode in ("closed", "open"):
            for text in ("the grout and the hotel", "Thanks. The hotel in may? Also the kitchen grout, consistent with June."):
                out.append(RouterView("s", "en", mode, CARDS, topics, history, "t2", (Message(2, text),)))
    said = (RoutedMessage(0, "<ann> grub fails on boot", "t1", None, "ann"),
            RoutedMessage(1, "<bob> is kde any good", "t2", None, "bob"))
    irc = tuple(TopicView(r.label, r.label, None, (Message(r.i, r.text, None, r.speaker),)) for r in said)
    for speaker, text in (("bob", "ann: grub again? The kde one works."), (None, "=== carl joined")):
        body = text if speaker is None else f"<{speaker}> {text}"
        out.append(RouterView("irc", "en", "open", (), irc, said, "t2", (Message(2, body, None, speaker),)))
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-4.0, 4.0), min_size=len(FEATURES), max_size=len(FEATURES)))
def test_a_score_over_a_rows_layout_is_the_score_over_its_full_row(weights):
    """A row holds the features of its layout only; the others are 0, so the score over the full
    row (each product added in :data:`FEATURES` order) is the same float, and so is the decision."""
    split = split_weights(weights)
    layouts = set()
    for view in _views():
        c = candidates(view, ProfileCache())
        scores = [sum(map(mul, row, weights)) for row in c.features]
        top = max(scores)
        assert best_of(c, split) == (scores.index(top), 1.0 / sum(math.exp(x - top) for x in scores))
        layouts.update(c.layouts)
    # current and other topics, one sentence and several, each kind of chat, a new topic, a one-off
    assert len(layouts) >= 10 and {NEW_LAYOUT, ONEOFF_LAYOUT} <= layouts
