"""The block scorer's topic history (score/block.py) against the message-by-message definition
of docs/score.md#the-metrics-exactly: what a topic held before each message."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.schema import PredictionRow, Session
from interleave_bench.score.block import score_block, session_scores, topic_history
from interleave_bench.score.columnar import record_columns
from interleave_bench.score.datafile import columns_of

import _score_reference as reference
from _score_util import session, turn


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


@st.composite
def runs(draw):
    """Random sessions (threads with and without messages, one-offs, ambiguous turns, refs) and
    rows with any labels: threads, strangers, numbers, the special ones; some turns without."""
    sessions, rows = [], []
    for k in range(draw(st.integers(1, 4))):
        ids = [f"t{j}" for j in range(1, draw(st.integers(1, 4)) + 1)]
        turns = []
        for i in range(draw(st.integers(1, 12))):
            gold = draw(st.one_of(st.none(), st.sampled_from(ids)))
            ambiguous = gold is not None and draw(st.booleans())
            judge = draw(st.sampled_from(ids + ["none", "ambiguous"])) if ambiguous else None
            refs = draw(st.lists(st.sampled_from(ids), max_size=2, unique=True)) if gold else []
            turns.append(turn(i, gold, ambiguous=ambiguous, judge=judge, refs=refs, tags=["x"] if i % 2 else []))
        s = session(f"s{k}", ids, turns)
        sessions.append(Session.model_validate(s))
        pool = ids + ["x", "y", "10", "9", "CLARIFY", "ERROR"]
        by_i = {}
        for i in range(len(turns)):
            if draw(st.integers(0, 5)):
                by_i[i] = PredictionRow.model_validate({
                    "session_id": s["session_id"], "i": i, "pred": draw(st.sampled_from(pool)),
                    "refs": draw(st.lists(st.sampled_from(pool), max_size=2)),
                    **({"usage": {"input": 3}} if i % 3 else {}), **({"elapsed_ms": 7 * i} if i % 2 else {}),
                    **({"burst": 1 + i % 2, "mixed": i % 4 == 1} if k % 2 else {})})
        rows.append(by_i)
    return sessions, rows, draw(st.sampled_from(["closed", "open"]))


@settings(max_examples=300, deadline=None, database=None)
@given(runs())
def test_the_block_scorer_is_the_message_by_message_definition(run):
    """Every session's counts (every column, to the bit), each message's outcome, label and
    correctness, open mode's mapping, and the conversation codes, against the replay of
    docs/score.md#the-metrics-exactly one message at a time (tests/_score_reference.py)."""
    sessions, rows, mode = run
    data = columns_of(sessions)
    flat = [r for by_i in rows for r in by_i.values()]
    where = [k for k, by_i in enumerate(rows) for _ in by_i]
    block = score_block(data, record_columns(flat, data, where), "all", mode, detail=True)
    with_rows = [k for k, by_i in enumerate(rows) if by_i]
    got = session_scores(data, block, list(range(len(sessions))))
    for k, (s, by_i) in enumerate(zip(sessions, rows)):
        want = reference.score_session(s, by_i, mode)
        assert (got[k].outcomes, got[k].labels, got[k].correct) == (want.outcomes, want.labels, want.correct)
        if mode == "open":
            assert got[k].mapping == want.mapping
        if by_i:
            assert block.matrix[with_rows.index(k)].tolist() == [float(x) for x in want.stats]
    if mode == "open":
        scored = [sessions[k] for k in with_rows]
        by_id = {s.session_id: rows[k] for k, s in enumerate(sessions)}
        gold, pred = reference.run_clusterings(scored, by_id)
        assert [x.tolist() for x in block.clusters] == [gold.tolist(), pred.tolist()]
