"""Invariants of the scorer, checked on random sessions and predictions (hypothesis)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from interleave_bench.score import bcubed, score_predictions
from interleave_bench.score.stats import (
    bootstrap_ratio_interval,
    bootstrap_sums,
    linear_percentiles,
    mcnemar_exact,
    paired_bootstrap_diff,
    percentile_interval,
    wilson,
)

from _score_util import oracle_rows, rows, session, turn

#: no example database: tests write nothing into the repository
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
SPECIAL = ("CLARIFY", "ERROR")


@st.composite
def sessions(draw, max_sessions: int = 3, max_turns: int = 12):
    """Random valid sessions: 1-3 threads, one-offs, ambiguous turns with any reading, refs."""
    out = []
    for k in range(draw(st.integers(1, max_sessions))):
        ids = [f"t{j}" for j in range(1, draw(st.integers(1, 3)) + 1)]
        ts = []
        for i in range(draw(st.integers(1, max_turns))):
            gold = draw(st.one_of(st.none(), st.sampled_from(ids))) if draw(st.booleans()) else draw(st.sampled_from(ids))
            ambiguous = draw(st.booleans()) and draw(st.booleans())
            judge = draw(st.sampled_from(ids + ["none", "ambiguous"])) if ambiguous else None
            refs = draw(st.lists(st.sampled_from(ids), max_size=2, unique=True)) if gold else []
            ts.append(turn(i, gold, ambiguous=ambiguous, judge=judge, refs=refs))
        out.append(session(f"s{k}", ids, ts))
    return out


@st.composite
def predicted(draw, mode: str):
    """Random sessions and random labels (thread ids or own labels, specials, missing rows, refs)."""
    ss = draw(sessions())
    pool = ["t1", "t2", "t3", "x"] if mode == "closed" else ["A", "B", "C", "D"]
    all_rows = []
    for s in ss:
        labels = draw(st.lists(st.one_of(st.sampled_from(pool), st.sampled_from(SPECIAL), st.none()),
                               min_size=len(s["turns"]), max_size=len(s["turns"])))
        refs = {i: draw(st.lists(st.sampled_from(pool), max_size=2)) for i in range(len(labels))}
        all_rows += rows(s["session_id"], labels, mode, refs=refs)
    return ss, all_rows


# --- oracle is perfect ---------------------------------------------------------------------------


@SETTINGS
@given(sessions(), st.sampled_from(["closed", "open"]))
def test_oracle_is_perfect_in_both_modes(ss, mode):
    r = score_predictions(ss, oracle_rows(ss, mode), bootstrap=0).result
    m, c = r["metrics"], r["counts"]
    if c["strict"]:
        assert m["accuracy"] == 1.0 and m["weighted_error"] == 0.0
    if c["thread_messages"]:
        assert m["accuracy_lenient"] == 1.0
        assert (m["bcubed_precision"], m["bcubed_recall"], m["bcubed_f1"]) == (1.0, 1.0, 1.0)
        assert m["topics_per_thread"] == 1.0 and m["threads_per_topic"] == 1.0
        # no switch at all leaves switch figures undefined (null), never a made-up 0
        assert m["switch_precision"] in (None, 1.0) and m["switch_recall"] in (None, 1.0)
    if c["oneoffs"]:
        assert m["oneoff_into_topic"] == 0.0
    assert r["outcomes"]["correct"] == c["thread_messages"]
    assert r["outcomes"]["oneoff_isolated"] == c["oneoffs"]


# --- renaming labels in open mode ---------------------------------------------------------------------

#: metrics that never use the label-to-thread mapping: renaming labels cannot change them
MAPPING_FREE = ("weighted_error", "oneoff_into_topic", "switch_precision", "switch_recall", "switch_f1",
                "topics_per_thread", "threads_per_topic", "bcubed_precision", "bcubed_recall", "bcubed_f1",
                "ambiguous_share")


def _best_mappings(s, session_rows) -> set[frozenset]:
    """Every label-to-thread mapping (positive pairs only) reached by a best matching, by brute force."""
    by_i = {r["i"]: r["pred"] for r in session_rows}
    agreement: Counter = Counter()
    labels = set()
    for t in s["turns"]:
        label = by_i.get(t["i"])
        if label is None or label in SPECIAL:
            continue
        labels.add(label)
        if t["gold"]["thread"]:
            agreement[(t["gold"]["thread"], label)] += 1
    threads = [th["id"] for th in s["threads"]]
    labels = sorted(labels)
    best, found = -1, set()
    # assign each thread a distinct label or nothing
    for choice in itertools.product([None, *labels], repeat=len(threads)):
        used = [c for c in choice if c is not None]
        if len(used) != len(set(used)):
            continue
        total = sum(agreement[(t, c)] for t, c in zip(threads, choice) if c is not None)
        mapping = frozenset((c, t) for t, c in zip(threads, choice) if c is not None and agreement[(t, c)] > 0)
        if total > best:
            best, found = total, {mapping}
        elif total == best:
            found.add(mapping)
    return found


@SETTINGS
@given(predicted("open"), st.permutations(["P", "Q", "R", "S"]))
def test_open_mode_renaming_labels_changes_nothing(case, new_names):
    ss, all_rows = case
    rename = dict(zip(["A", "B", "C", "D"], new_names))
    renamed = [{**r, "pred": rename.get(r["pred"], r["pred"]), "refs": [rename[x] for x in r.get("refs", [])]}
               for r in all_rows]
    before = score_predictions(ss, all_rows, bootstrap=0).result
    after = score_predictions(ss, renamed, bootstrap=0).result
    assert before["outcomes"] == after["outcomes"]
    for name in MAPPING_FREE:
        assert before["metrics"][name] == after["metrics"][name], name
    tie_free = all(
        len(_best_mappings(s, [r for r in all_rows if r["session_id"] == s["session_id"]])) == 1 for s in ss
    )
    event("tie-free matching" if tie_free else "matching with ties")
    if tie_free:
        for name in ("accuracy", "accuracy_lenient", "refs_recall"):
            assert before["metrics"][name] == after["metrics"][name], name
        assert before["breakdowns"] == after["breakdowns"]


# --- B-cubed against a brute-force pairwise implementation -------------------------------------------


def brute_bcubed(refs, preds, groups=None):
    n = len(refs)
    if n == 0:  # undefined
        return math.nan, math.nan, math.nan
    groups = groups if groups is not None else [0] * n
    p = r = 0.0
    for i in range(n):
        same_pred = [j for j in range(n) if groups[j] == groups[i] and preds[j] == preds[i]]
        same_ref = [j for j in range(n) if groups[j] == groups[i] and refs[j] == refs[i]]
        both = [j for j in same_pred if refs[j] == refs[i]]
        p += len(both) / len(same_pred)
        r += len(both) / len(same_ref)
    p, r = p / n, r / n
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


@settings(max_examples=150, deadline=None, database=None)
@given(st.lists(st.tuples(st.sampled_from("abcd"), st.integers(0, 4), st.sampled_from([1, 2, 3])), max_size=40),
       st.booleans())
def test_bcubed_equals_brute_force(items, grouped):
    refs = [x[0] for x in items]
    preds = [x[1] for x in items]
    groups = [x[2] for x in items] if grouped else None
    got = bcubed(refs, preds, groups)
    want = brute_bcubed(refs, preds, groups)
    if not items:  # one convention: B-cubed over nothing is undefined, here as in the score file
        assert all(math.isnan(x) for x in got)
        return
    assert all(math.isclose(a, b, abs_tol=1e-12) for a, b in zip(got, want))


@SETTINGS
@given(predicted("closed"))
def test_scorer_bcubed_is_brute_force_over_clustered_messages(case):
    # the scorer's B-cubed: thread messages with topic labels, clusters (session, thread) and
    # (session, label)
    ss, all_rows = case
    by_key = {(r["session_id"], r["i"]): r["pred"] for r in all_rows}
    scored = {r["session_id"] for r in all_rows}
    refs, preds, groups = [], [], []
    for s in ss:
        if s["session_id"] not in scored:
            continue
        for t in s["turns"]:
            label = by_key.get((s["session_id"], t["i"]), "ERROR")
            if t["gold"]["thread"] and label not in SPECIAL:
                refs.append(t["gold"]["thread"])
                preds.append(label)
                groups.append(s["session_id"])
    m = score_predictions(ss, all_rows, bootstrap=0).result["metrics"]
    got = [m["bcubed_precision"], m["bcubed_recall"], m["bcubed_f1"]]
    if not refs:  # nothing clustered: undefined, not 0
        assert got == [None, None, None]
        return
    want = [round(x, 4) for x in brute_bcubed(refs, preds, groups)]
    assert all(abs(a - b) <= 1e-4 for a, b in zip(got, want))


# --- bootstrap intervals ---------------------------------------------------------------------------


@SETTINGS
@given(predicted("closed"), st.integers(0, 2**31 - 1))
def test_bootstrap_intervals_contain_the_estimate_and_repeat_with_a_seed(case, seed):
    ss, all_rows = case
    first = score_predictions(ss, all_rows, bootstrap=200, seed=seed).result
    again = score_predictions(ss, all_rows, bootstrap=200, seed=seed).result
    assert first["intervals"] == again["intervals"]
    if not first["counts"]["sessions"]:  # nothing scored, nothing to resample
        assert all(first["intervals"][name] is None for name in ("accuracy", "switch_f1", "bcubed_f1"))
        return
    for name in ("accuracy", "accuracy_lenient", "weighted_error", "switch_f1", "bcubed_f1"):
        value, interval = first["metrics"][name], first["intervals"][name]
        if value is None:
            assert interval is None
            continue
        assert interval is not None
        assert interval[0] <= value <= interval[1], (name, value, interval)


def test_bootstrap_depends_on_the_seed_and_resamples_sessions():
    rng = np.random.default_rng(5)
    num = rng.integers(0, 20, size=50).astype(float)
    den = num + rng.integers(1, 20, size=50)
    a = bootstrap_ratio_interval(num, den, 500, seed=1)
    b = bootstrap_ratio_interval(num, den, 500, seed=1)
    c = bootstrap_ratio_interval(num, den, 500, seed=2)
    assert a == b and a != c
    assert a[0] < num.sum() / den.sum() < a[1]
    # every resample draws as many units as there are
    sums = bootstrap_sums(np.ones((50, 1)), 300, seed=3)
    assert np.all(sums[:, 0] == 50)
    # one unit: every resample is that unit, the interval is a point
    assert bootstrap_ratio_interval([3.0], [4.0], 100, seed=0) == (0.75, 0.75)
    assert bootstrap_ratio_interval([0.0], [0.0], 100, seed=0) is None
    assert percentile_interval(np.array([np.nan, 1.0, 3.0])) == (1.05, 2.95)


@SETTINGS
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40),
       st.lists(st.floats(0, 100), min_size=1, max_size=4))
def test_linear_percentiles_are_numpys_to_the_bit(values, q):
    got = linear_percentiles(np.array(values), q)
    want = np.percentile(np.array(values), q)
    assert [x.hex() for x in got.tolist()] == [x.hex() for x in want.tolist()]


def test_mcnemar_exact_by_hand():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0
    # all 10 discordant pairs one way: 2 * 0.5**10
    assert math.isclose(mcnemar_exact(0, 10), 2 / 1024)
    # 1 vs 9: 2 * (C(10,0) + C(10,1)) / 1024 = 22 / 1024
    assert math.isclose(mcnemar_exact(9, 1), 22 / 1024)
    assert mcnemar_exact(3, 4) == 1.0  # 2 * P(X <= 3 | n=7) = 2 * 0.5 = 1


def test_paired_bootstrap_of_identical_runs_is_zero():
    ok = np.array([3, 5, 0, 7], dtype=float)
    n = np.array([4, 6, 2, 9], dtype=float)
    assert paired_bootstrap_diff(ok, ok, n, 300, seed=0) == (0.0, 0.0)
    lo, hi = paired_bootstrap_diff(ok, n, n, 300, seed=0)
    assert 0 < lo <= (n.sum() - ok.sum()) / n.sum() <= hi


def test_wilson_is_unchanged():
    lo, hi = wilson(8, 10)
    assert math.isclose(lo, 0.4901624, abs_tol=1e-6) and math.isclose(hi, 0.9433178, abs_tol=1e-6)
    assert wilson(0, 0) == (0.0, 1.0)
