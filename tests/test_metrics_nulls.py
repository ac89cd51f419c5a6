"""A ``None`` in an evaluate module's inputs (a message without a row, a case without a decision) is
taken wherever it stands: a session routed to no message scores the same first, last or alone, as
the CLI's scorer scores it (hub/metric_inputs.py:NullsAreMissing)."""

from __future__ import annotations

import evaluate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import interleave_bench
from interleave_bench.hub.metric_inputs import score_labels

from _score_util import many_sessions

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)

routing = evaluate.load(interleave_bench.metric_path("interleave_routing"))
bcubed = evaluate.load(interleave_bench.metric_path("interleave_bcubed"))
mid_reply = evaluate.load(interleave_bench.metric_path("interleave_mid_reply"))

SESSIONS = many_sessions(4, turns=6)
GOLD = [s["turns"] for s in SESSIONS]


@st.composite
def runs(draw):
    """Labels for :data:`SESSIONS` (a thread, a wrong thread, or ``None``), some sessions all
    ``None``, in any order of the sessions."""
    order = draw(st.permutations(range(len(SESSIONS))))
    labels = []
    for k in order:
        if draw(st.booleans()):
            labels.append([None] * len(GOLD[k]))
        else:
            labels.append([draw(st.sampled_from([t["gold"]["thread"] or "t1", "t2", None])) for t in GOLD[k]])
    return [GOLD[k] for k in order], labels


@SETTINGS
@given(runs())
def test_sessions_without_rows_score_wherever_they_stand_as_the_scorer_scores_them(run):
    gold, labels = run
    want = score_labels(gold, labels, mode="closed", thread_labels=True)["metrics"]
    assert routing.compute(predictions=labels, references=gold) == want
    for ts, ls in zip(gold, labels):  # one session at a time
        routing.add(prediction=ls, reference=ts)
    assert routing.compute() == want
    b3 = bcubed.compute(predictions=labels, references=gold)
    assert b3 == {"precision": want["bcubed_precision"], "recall": want["bcubed_recall"], "f1": want["bcubed_f1"]}


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["running", "new", "t2", None]), st.sampled_from(["running", "new", "t2"])),
                min_size=1, max_size=6))
def test_a_case_without_a_decision_counts_alike_wherever_it_stands(cases):
    decided, expected = [list(x) for x in zip(*cases)]
    got = mid_reply.compute(predictions=decided, references=expected)
    assert got == mid_reply.compute(predictions=decided[::-1], references=expected[::-1])
    for d, e in cases:
        mid_reply.add(prediction=d, reference=e)
    assert mid_reply.compute() == got
    # no decision is a miss, as any destination that is not the expected one
    missed = ["(none)" if d is None else d for d in decided]
    assert got["n"] == len(cases) and got["accuracy"] == mid_reply.compute(predictions=missed, references=expected)["accuracy"]
