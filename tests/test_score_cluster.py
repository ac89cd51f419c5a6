"""The field's conversation-disentanglement metrics: hand-computed cases, invariants, the table entries."""

from __future__ import annotations

import doctest
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.score import cluster
from interleave_bench.score.cluster import (
    adjusted_rand_index,
    cluster_metrics,
    contingency,
    exact_match,
    one_to_one,
    shen_f1,
    variation_of_information,
    vi_scaled,
)
from interleave_bench.score.table import family

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = settings(max_examples=80, deadline=None, database=None)

# gold a a a b b c, predicted x x y y y z; contingency (a,x)=2 (a,y)=1 (b,y)=2 (c,z)=1, N = 6
GOLD = list("aaabbc")
PRED = list("xxyyyz")


def test_one_to_one_by_hand():
    # best matching a-x (2), b-y (2), c-z (1): 5 of 6 messages
    assert one_to_one(GOLD, PRED) == pytest.approx(5 / 6)


def test_vi_by_hand():
    # VI = (1/N) sum n_ij (log2(a_i/n_ij) + log2(b_j/n_ij))
    #    = (2 log2 1.5 + 2 log2 3 + 2 log2 1.5) / 6
    vi = (2 * math.log2(1.5) + 2 * math.log2(3) + 2 * math.log2(1.5)) / 6
    assert variation_of_information(contingency(GOLD, PRED)) == pytest.approx(vi)
    assert vi == pytest.approx(0.9182958)
    assert vi_scaled(GOLD, PRED) == pytest.approx(1 - vi / math.log2(6))
    assert round(vi_scaled(GOLD, PRED), 4) == 0.6448


def test_ari_by_hand():
    # index 1 + 1 = 2; gold pairs 3 + 1 = 4; predicted pairs 1 + 3 = 4; expected 4 * 4 / 15
    expected = 16 / 15
    assert adjusted_rand_index(GOLD, PRED) == pytest.approx((2 - expected) / (4 - expected))
    assert adjusted_rand_index(GOLD, PRED) == pytest.approx(7 / 22)


def test_shen_f1_by_hand():
    # a: best F with x = 2*2/(3+2) = 0.8; b: with y = 2*2/(2+3) = 0.8; c: with z = 1
    assert shen_f1(GOLD, PRED) == pytest.approx((3 * 0.8 + 2 * 0.8 + 1 * 1.0) / 6)


def test_exact_match_by_hand():
    # multi-message: gold {a, b}, predicted {x, y}; none equal (c = z is a single: left out)
    assert exact_match(GOLD, PRED) == (0.0, 0.0, 0.0)
    # gold a a b b c, predicted x x y y y: a = x matches; b != y
    assert exact_match(list("aabbc"), list("xxyyy")) == (0.5, 0.5, 0.5)
    # only singles on the predicted side: precision undefined, recall 0, F1 0
    assert exact_match(list("aab"), list("xyz")) == (None, 0.0, 0.0)
    assert exact_match(list("abc"), list("xyz")) == (None, None, None)


def test_edge_cases():
    assert cluster_metrics([], [])["one_to_one"] is None
    one = cluster_metrics(["a"], ["x"])
    assert one["one_to_one"] == 1.0 and one["vi_scaled"] is None and one["ari"] == 1.0
    # everything in one cluster against all singletons: ARI 0, 1-1 one message
    assert adjusted_rand_index(list("aaaa"), list("wxyz")) == 0.0
    assert one_to_one(list("aaaa"), list("wxyz")) == 0.25
    with pytest.raises(ValueError):
        contingency(["a"], [])


def test_one_to_one_is_solved_per_component_as_one_matching():
    # two sessions pooled: session-qualified ids never meet, and the sum of per-session optima
    # is the pooled optimum
    gold = [(1, "a"), (1, "a"), (1, "b"), (2, "a"), (2, "a"), (2, "a")]
    pred = [(1, "x"), (1, "y"), (1, "y"), (2, "x"), (2, "x"), (2, "y")]
    assert one_to_one(gold, pred) == pytest.approx((2 + 2) / 6)


labels = st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=40)


@SETTINGS
@given(labels)
def test_identical_clusterings_score_perfectly(gold):
    m = cluster_metrics(gold, gold)
    assert m["one_to_one"] == 1.0 and m["ari"] == 1.0 and m["shen_f1"] == 1.0
    assert m["vi_scaled"] == (None if len(gold) < 2 else 1.0)
    multi = any(gold.count(x) > 1 for x in set(gold))
    assert m["exact_f1"] == (1.0 if multi else None)


@SETTINGS
@given(labels, st.lists(st.sampled_from("pqrstu"), min_size=40, max_size=40), st.permutations("pqrstu"),
       st.permutations("abcdefg"))
def test_renaming_labels_changes_nothing(gold, pred, pred_names, gold_names):
    pred = pred[: len(gold)]
    rename_pred = dict(zip("pqrstu", pred_names))
    rename_gold = dict(zip("abcdefg", gold_names))
    before = cluster_metrics(gold, pred)
    assert cluster_metrics(gold, [rename_pred[x] for x in pred]) == before
    assert cluster_metrics([rename_gold[x] for x in gold], pred) == before


@SETTINGS
@given(labels, st.lists(st.sampled_from("pqrstu"), min_size=40, max_size=40))
def test_metrics_stay_in_range_and_one_to_one_is_symmetric(gold, pred):
    pred = pred[: len(gold)]
    m = cluster_metrics(gold, pred)
    for key in ("one_to_one", "shen_f1", "exact_precision", "exact_recall", "exact_f1", "vi_scaled"):
        assert m[key] is None or 0.0 <= m[key] <= 1.0
    assert m["ari"] <= 1.0
    assert one_to_one(gold, pred) == pytest.approx(one_to_one(pred, gold))


def test_doctests():
    result = doctest.testmod(cluster)
    assert result.attempted >= 5 and result.failed == 0


def test_each_cluster_metric_is_in_the_table_with_a_doc_anchor():
    entries = family("cluster")
    assert [m.key for m in entries] == list(cluster_metrics(GOLD, PRED))
    for m in entries:
        path, anchor = m.doc.split("#")
        text = (ROOT / path).read_text(encoding="utf-8")
        anchors = {re.sub(r"[^a-z0-9 -]", "", h.strip().lower()).replace(" ", "-")
                   for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
        anchors |= set(re.findall(r'<a id="([^"]+)"', text))
        assert anchor in anchors, m.doc


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from("abc"), st.sampled_from("pqrs")), min_size=1, max_size=40))
def test_one_to_one_by_components_equals_one_matching_of_everything(items):
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    gold = [(g, a) for g, a, _ in items]  # three groups (sessions) whose clusters never meet
    pred = [(g, p) for g, _, p in items]
    rows, cols = sorted(set(gold)), sorted(set(pred))
    weights = np.zeros((len(rows), len(cols)))
    for a, p in zip(gold, pred):
        weights[rows.index(a), cols.index(p)] += 1
    r, k = linear_sum_assignment(weights, maximize=True)
    assert one_to_one(gold, pred) == pytest.approx(weights[r, k].sum() / len(items))
