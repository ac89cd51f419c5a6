"""The block scorer's topic history (score/block.py) against the message-by-message definition
of docs/score.md#the-metrics-exactly: what a topic held before each message."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.score.block import topic_history


def held_before(topics, golds, seeds, seed):
    """The definition, one message at a time: a topic's counts per thread in insertion order."""
    held: dict[int, dict[int, int]] = {}
    fresh, major = [], []
    for topic, gold, start in zip(topics, golds, seeds):
        counts = held.get(topic)
        if counts is None:
            counts = held[topic] = {start: seed} if start >= 0 else {}
        if counts:
            fresh.append(False)
            major.append(max(counts.items(), key=lambda kv: kv[1])[0])  # the first of the greatest
        else:
            fresh.append(True)
            major.append(-1)
        if gold >= 0:
            counts[gold] = counts.get(gold, 0) + 1
    return fresh, major


@st.composite
def messages(draw):
    n = draw(st.integers(0, 40))
    topics = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    golds = draw(st.lists(st.integers(-1, 3), min_size=n, max_size=n))
    seeded = draw(st.dictionaries(st.integers(0, 4), st.integers(-1, 3)))
    return topics, golds, [seeded.get(t, -1) for t in topics], draw(st.sampled_from([1, 2, 3, 1_000_000]))


@settings(max_examples=400, deadline=None, database=None)
@given(messages())
def test_topic_history_is_the_message_by_message_definition(case):
    topics, golds, seeds, seed = case
    fresh, major = topic_history(np.array(topics, dtype=np.int64), np.array(golds, dtype=np.int64),
                                 np.array(seeds, dtype=np.int64), seed)
    assert (fresh.tolist(), major.tolist()) == held_before(topics, golds, seeds, seed)


def test_a_tie_goes_to_the_thread_held_first():
    # one topic is sent a, b, b, a and a one-off: before each it holds {}, a1, a1 b1 (a first),
    # a1 b2, a2 b2 (a first again)
    fresh, major = topic_history(np.zeros(5, dtype=np.int64), np.array([0, 1, 1, 0, -1]), np.full(5, -1), 1)
    assert fresh.tolist() == [True, False, False, False, False]
    assert major.tolist() == [-1, 0, 0, 1, 0]
