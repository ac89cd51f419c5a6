"""The calibration of a run's ``confidence`` (docs/score.md#calibration): by hand, its properties,
through the CLI (JSONL and Parquet), in ``compare`` and on the board."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.cli import main
from interleave_bench.score import score_predictions
from interleave_bench.score.calibration import RELIABILITY_BINS, calibration_error, reliability_table
from interleave_bench.score.table import rounded

from _score_util import many_sessions, oracle_labels, rows, session, turn, write_jsonl

#: five strict messages of thread t1: right, wrong, wrong, wrong, right
LABELS = ["t1", "t2", "t2", "t2", "t1"]
CONFIDENCE = {0: 0.95, 1: 0.95, 2: 0.15, 3: 0.15, 4: 1.0}


def _five(confidence=CONFIDENCE, extra=()):
    s = session("s1", ["t1", "t2"], [turn(i, "t1") for i in range(5)] + list(extra))
    return [s], rows("s1", LABELS + ["t1"] * len(extra), confidence=confidence)


def _calibration(ss, rs, mode="closed"):
    return score_predictions(ss, rs, mode=mode, split="all", bootstrap=0).result["calibration"]


def test_the_five_messages_by_hand():
    # bin 0.9-1.0: 0.95, 0.95, 1.0 (a confidence of 1 in the top bin): mean 0.9667, accuracy 2/3, gap 0.3;
    # bin 0.1-0.2: 0.15, 0.15, accuracy 0, gap 0.15. ECE = (3 * 0.3 + 2 * 0.15) / 5 = 0.24
    assert calibration_error(list(CONFIDENCE.values()), [True, False, False, False, True]) == pytest.approx(0.24)
    c = _calibration(*_five())
    assert c["ece"] == 0.24 and c["bins"] == RELIABILITY_BINS == len(c["reliability"]) == 10
    assert (c["messages"], c["strict"], c["confidence"], c["accuracy"]) == (5, 5, 0.64, 0.4)
    top, low = c["reliability"][9], c["reliability"][1]
    assert top == {"lo": 0.9, "hi": 1.0, "n": 3, "confidence": 0.9667, "accuracy": 0.6667, "gap": 0.3}
    assert low == {"lo": 0.1, "hi": 0.2, "n": 2, "confidence": 0.15, "accuracy": 0.0, "gap": 0.15}
    empty = [b for k, b in enumerate(c["reliability"]) if k not in (1, 9)]
    assert all(b["n"] == 0 and b["confidence"] is b["accuracy"] is b["gap"] is None for b in empty)
    assert [b["lo"] for b in c["reliability"]] == [k / 10 for k in range(10)]


def test_only_strict_messages_with_a_confidence_count():
    # turns 2 and 3 without a confidence: over the three that have one (the top bin alone, gap 0.3)
    c = _calibration(*_five({0: 0.95, 1: 0.95, 4: 1.0}))
    assert (c["ece"], c["messages"], c["strict"]) == (0.3, 3, 5)
    assert sum(b["n"] for b in c["reliability"]) == 3
    # an ambiguous message and a one-off, with confidences, are no strict messages: left out
    extra = [turn(5, "t1", ambiguous=True, judge="t2"), turn(6, None)]
    ss, rs = _five(extra=extra)
    for r in rs[5:]:
        r["confidence"] = 0.05
    c = _calibration(ss, rs)
    assert (c["ece"], c["messages"], c["strict"]) == (0.24, 5, 5)


def test_a_run_without_confidence_has_null_calibration():
    ss, rs = _five({})
    assert all("confidence" not in r for r in rs)
    assert _calibration(ss, rs) is None


@settings(max_examples=60, deadline=None, database=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=80), st.randoms(use_true_random=False))
def test_ece_lies_in_0_1_and_does_not_depend_on_order(pairs, rnd):
    conf, ok = zip(*pairs)
    ece = calibration_error(conf, ok)
    assert 0.0 <= ece <= 1.0
    order = list(range(len(pairs)))
    rnd.shuffle(order)
    assert calibration_error([conf[k] for k in order], [ok[k] for k in order]) == pytest.approx(ece, abs=1e-12)
    table = reliability_table(conf, ok, empty=True)
    assert len(table) == RELIABILITY_BINS and sum(b["n"] for b in table) == len(pairs)


@settings(max_examples=60, deadline=None, database=None)
@given(st.lists(st.tuples(st.integers(1, 30), st.integers(0, 30)), min_size=1, max_size=12))
def test_ece_is_0_when_each_bins_accuracy_is_its_mean_confidence(groups):
    # each group of n messages, k of them right, says k/n: a bin of such groups is right as often
    # as it says, whatever groups share it
    conf, ok = [], []
    for n, k in groups:
        k = min(k, n)
        conf += [k / n] * n
        ok += [True] * k + [False] * (n - k)
    assert calibration_error(conf, ok) == pytest.approx(0.0, abs=1e-9)


@settings(max_examples=25, deadline=None, database=None)
@given(st.data())
def test_the_document_is_the_definition_over_accuracys_judgement_in_any_row_order(data):
    ss = many_sessions(4, turns=10)
    rs = []
    for s in ss:
        labels = [data.draw(st.sampled_from(["t1", "t2", lab])) for lab in oracle_labels(s)]
        conf = {i: data.draw(st.one_of(st.none(), st.floats(0, 1))) for i in range(len(labels))}
        rs += rows(s["session_id"], labels, confidence={i: c for i, c in conf.items() if c is not None})
    run = score_predictions(ss, rs, mode="closed", split="all", bootstrap=0)
    # the messages and correctness accuracy counts: each session's strict messages, as scored
    by = {(r["session_id"], r["i"]): r.get("confidence") for r in rs}
    conf, ok = [], []
    for s, sc in zip(run.sessions, run.scores):
        for t, right in zip(s.turns, sc.correct):
            c = by.get((s.session_id, t.i))
            if t.gold.thread is not None and not t.ambiguous and c is not None:
                conf.append(c)
                ok.append(right)
    doc = run.result["calibration"]
    if not conf:
        assert doc is None
        return
    assert doc["ece"] == rounded("ece", calibration_error(conf, ok)) and doc["messages"] == len(conf)
    shuffled = list(rs)
    random.Random(len(rs)).shuffle(shuffled)
    assert score_predictions(ss, shuffled, mode="closed", split="all", bootstrap=0).result["calibration"] == doc


# --- through the CLI ---------------------------------------------------------------------------------


def _cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def routed(tmp_path_factory):
    """A data folder routed by ``local`` and ``bm25`` in closed mode, through the CLI."""
    root = tmp_path_factory.mktemp("calibration")
    data = root / "data"
    write_jsonl(data / "sessions.jsonl", many_sessions(8, turns=14))
    out = {}
    for policy in ("local", "bm25"):
        out[policy] = data / "predictions" / f"closed-{policy}.jsonl"
        assert main(["route", str(data), "--mode", "closed", "--policy", policy, "--split", "all",
                     "--out", str(out[policy])]) == 0
    return data, out


def test_route_local_then_score_gives_the_calibration(routed, capsys):
    data, pred = routed
    code, out, err = _cli(capsys, "score", data, pred["local"], pred["bm25"], "--split", "all", "--json",
                          "--bootstrap", 0)
    assert code == 0, err
    local, bm25 = json.loads(out)
    c = local["calibration"]
    assert c["bins"] == 10 and len(c["reliability"]) == 10 and 0 <= c["ece"] <= 1
    assert sum(b["n"] for b in c["reliability"]) == c["messages"] == c["strict"] == local["counts"]["strict"]
    assert bm25["calibration"] is None  # bm25 gives no confidence
    # the table: a line over all and one per non-empty bin, for the local run only
    code, out, err = _cli(capsys, "score", data, pred["local"], pred["bm25"], "--split", "all", "--bootstrap", 0,
                          "--per-session")
    assert code == 0, err
    table = out[out.index("| system | ECE |"):].split("\n\n")[0].splitlines()
    assert table[2].startswith(f"| closed-local | {c['ece']:.4f} | all | {c['messages']:,} of {c['strict']:,} |")
    assert len(table) == 3 + sum(1 for b in c["reliability"] if b["n"]) and "closed-bm25" not in "".join(table)


def test_a_parquet_run_gives_the_same_calibration(routed, capsys, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    data, pred = routed
    lines = [json.loads(line) for line in pred["local"].read_text(encoding="utf-8").splitlines()]
    pq.write_table(pa.Table.from_pylist(lines), tmp_path / "closed-local.parquet")
    docs = []
    for path in (pred["local"], tmp_path / "closed-local.parquet"):
        code, out, err = _cli(capsys, "score", data, path, "--split", "all", "--json", "--bootstrap", 0)
        assert code == 0, err
        docs.append(json.loads(out)["calibration"])
    assert docs[0] == docs[1] and docs[0] is not None


def test_compare_gives_both_runs_calibration(routed, capsys):
    data, pred = routed
    code, out, err = _cli(capsys, "compare", data, pred["bm25"], pred["local"], "--split", "all", "--json",
                          "--bootstrap", 0)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["calibration"]["a"] is None and doc["calibration"]["b"]["bins"] == 10
    code, out, err = _cli(capsys, "compare", data, pred["bm25"], pred["local"], "--split", "all", "--bootstrap", 0)
    ece = doc["calibration"]["b"]["ece"]
    assert f"calibration (ECE of the rows' confidence): A – (no confidence), B {ece:.4f} (" in out


# --- on the board -------------------------------------------------------------------------------------


def test_the_board_checks_a_stated_calibration(tmp_path):
    import _board_util as b
    from interleave_bench.errors import InputError
    from interleave_bench.hub.board_score import score_given

    data, _ = b.baselines(tmp_path / "data")
    pred = data / "predictions" / "closed-local.jsonl"
    assert main(["route", str(data), "--mode", "closed", "--policy", "local", "--split", "all", "--out", str(pred)]) == 0
    honest = b.score_file(data, pred)
    assert honest["calibration"]["messages"] > 0

    def verdict(doc) -> str | None:
        path = b.write(tmp_path / "stated.score.json", doc)
        try:
            score_given([path])
        except InputError as exc:
            return exc.format()
        return None

    assert verdict(honest) is None
    # a file written before the section existed states none: the board computes it all the same
    assert verdict({k: v for k, v in honest.items() if k != "calibration"}) is None
    # ... and one written before ERROR rows were counted states no counts.error_rows
    older = {**honest, "counts": {k: v for k, v in honest["counts"].items() if k != "error_rows"}}
    assert verdict(older) is None
    said = verdict(b.forged(honest, counts__error_rows=None))
    assert said is not None and "counts.error_rows: the file says null" in said
    said = verdict(b.forged(honest, counts__error_rows=3))
    assert said is not None and "counts.error_rows: the file says 3" in said
    said = verdict(b.forged(honest, calibration__ece=round(honest["calibration"]["ece"] / 2, 4)))
    assert said is not None and "calibration.ece: the file says" in said
    said = verdict(b.forged(honest, calibration=None))
    assert said is not None and "calibration: the file says null" in said
    cut = b.forged(honest, calibration__reliability=honest["calibration"]["reliability"][:9])
    said = verdict(cut)
    assert said is not None and "calibration" in said


def test_a_bin_is_floor_of_ten_c_as_a_float_as_docs_score_md_says():
    import numpy as np

    from interleave_bench.score.calibration import bin_of

    # 10 * 0.8999999999999999 rounds to 9.0: the bin above the edge the confidence is just under
    got = bin_of(np.array([0.0, 0.0999, 0.1, 0.8999999999999999, 0.9, 0.99999, 1.0])).tolist()
    assert got == [0, 0, 1, 9, 9, 9, 9]
