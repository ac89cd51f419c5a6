"""Single features of the ``local`` router, each computed by hand on a small view."""

from __future__ import annotations

import pytest

from interleave_bench.route.base import Message, RouterView, TopicView
from interleave_bench.route.local import FEATURES, ProfileCache, candidates


def test_a_new_topic_reads_the_share_of_words_no_topic_has_seen():
    def unseen(topic_texts, text):
        topics = tuple(TopicView(f"t{k}", f"t{k}", None, (Message(k, t),)) for k, t in enumerate(topic_texts))
        view = RouterView("s", "en", "open", (), topics, (), None, (Message(len(topics), text),))
        c = candidates(view, ProfileCache())
        return c.features[c.labels.index("new")][FEATURES.index("new.unseen")]

    # kitchen is seen, budget, for and lisbon are not: 3 of 4 distinct words
    assert unseen(["kitchen tiles grout"], "kitchen budget for lisbon kitchen") == pytest.approx(0.75)
    # a word two topics have seen counts once: kitchen and lisbon seen, 2 of 4
    assert unseen(["kitchen tiles", "lisbon kitchen"], "kitchen budget for lisbon") == pytest.approx(0.5)
    # before any topic every word is new
    assert unseen([], "kitchen budget") == 1.0
