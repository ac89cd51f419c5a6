"""The metric table: the docs and the table agree both ways; formulas, rounding and ranges."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

from interleave_bench.score import score_predictions
from interleave_bench.score.routing import COL, COLUMNS, POOLED, derive
from interleave_bench.score.table import FAMILIES, METRICS, family, metric, rank_key, rounded

from test_score_properties import predicted

ROOT = Path(__file__).resolve().parents[1]
#: a documented metric: a row of a metric table in the docs, anchored where the table entry points
DOC_ROW = re.compile(
    r'^\| <a id="(?P<anchor>[^"]+)"></a>`(?P<key>[^`]+)` \| `(?P<json_key>[^`]+)` \| (?P<display>[^|]+) \| '
    r"(?P<decimals>[^|]+) \| (?P<interval>[^|]+) \| (?P<better>[^|]+) \| (?P<meaning>[^|]+) \|$"
)
BETTER = {True: "higher", False: "lower", None: "–"}


def documented() -> dict[str, dict[str, str]]:
    """``{key: row fields + file}`` for every metric row in the doc files the table names."""
    out: dict[str, dict[str, str]] = {}
    for file in sorted({m.doc_file for m in METRICS.values()}):
        for line in (ROOT / file).read_text(encoding="utf-8").splitlines():
            hit = DOC_ROW.match(line)
            if hit:
                assert hit["key"] not in out, f"{hit['key']} documented twice"
                out[hit["key"]] = {**hit.groupdict(), "file": file}
    return out


def test_every_table_entry_is_documented_at_its_anchor():
    docs = documented()
    for m in METRICS.values():
        assert m.key in docs, f"{m.key}: no row in {m.doc_file}"
        row = docs[m.key]
        assert (row["file"], row["anchor"]) == (m.doc_file, m.anchor), m.key
        assert row["json_key"] == m.json_key and row["display"] == m.display and row["meaning"] == m.meaning
        assert row["decimals"] == ("as is" if m.decimals is None else str(m.decimals)), m.key
        assert row["interval"] == m.interval and row["better"] == BETTER[m.higher_is_better], m.key


def test_every_documented_metric_is_in_the_table():
    assert set(documented()) <= set(METRICS)


def test_score_docs_say_where_the_table_is():
    text = (ROOT / "docs/score.md").read_text(encoding="utf-8")
    assert any("interleave_bench/score/table.py" in line and "METRICS" in line for line in text.splitlines())


def test_keys_anchors_and_families_are_well_formed():
    assert len({m.anchor for m in METRICS.values()}) == len(METRICS)
    for m in METRICS.values():
        assert m.family in FAMILIES and m.interval in ("bootstrap", "wilson", "none")
        if m.interval == "wilson":
            assert m.wilson_counts is not None
        if m.wilson_counts is not None and m.family not in ("mid_reply", "facts"):  # counts of their own documents
            assert all(c in COL for c in m.wilson_counts)
    assert [m.key for m in family("burst")][0] == "burst_alone"


def test_lookup_errors_are_clear():
    with pytest.raises(ValueError, match="unknown metric 'acuracy'.*accuracy"):
        metric("acuracy")
    with pytest.raises(ValueError, match="unknown metric family"):
        family("speed")
    with pytest.raises(ValueError, match="not ranked"):
        rank_key("ambiguous_share", 0.1)


def test_rounding_by_hand():
    assert rounded("accuracy", 0.123456) == 0.1235
    assert rounded("topics_per_thread", 1.23456) == 1.235
    assert rounded("input_tokens_per_message", 812.349) == 812.3
    assert rounded("latency_p50_ms", 812.349) == 812.349  # taken as it is
    assert rounded("accuracy", float("nan")) is None and rounded("accuracy", None) is None


def test_ranking_direction_by_hand():
    values = [0.5, None, 0.9]
    assert sorted(values, key=lambda v: rank_key("accuracy", v)) == [0.9, 0.5, None]
    assert sorted(values, key=lambda v: rank_key("weighted_error", v)) == [0.5, 0.9, None]


def test_formulas_by_hand():
    totals = np.zeros(len(COLUMNS))
    for name, value in {"messages": 10, "thread_messages": 8, "strict": 6, "ambiguous": 2, "strict_correct": 3,
                        "strict_cost": 6, "switch_tp": 1, "switch_fp": 1, "switch_fn": 3, "oneoffs": 2,
                        "outcome_oneoff_into_topic": 1, "input_tokens": 1005, "calls": 4}.items():
        totals[COL[name]] = value
    d = derive(totals)
    assert d["accuracy"] == 0.5 and d["weighted_error"] == 1.0 and d["ambiguous_share"] == 0.25
    # switch precision 1/2, recall 1/4, F1 = 2 * 1/2 * 1/4 / (3/4) = 1/3
    assert d["switch_f1"] == pytest.approx(1 / 3)
    assert d["oneoff_into_topic"] == 0.5 and d["input_tokens_per_message"] == 100.5 and d["model_calls_share"] == 0.4
    # nothing clustered: B-cubed is undefined (printed as "–"), not 0
    assert np.isnan(d["refs_recall"]) and np.isnan(d["bcubed_f1"])
    # the same formulas over a batch of resampled totals, elementwise
    batch = derive(np.stack([totals, totals * 2]))
    assert list(batch["accuracy"]) == [0.5, 0.5]
    assert {m.key for m in POOLED} == set(d)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(st.sampled_from(["closed", "open"]).flatmap(lambda mode: st.tuples(st.just(mode), predicted(mode))))
def test_every_defined_metric_lies_in_its_range(case):
    mode, (ss, all_rows) = case
    doc = score_predictions(ss, all_rows, mode=mode, split="all", bootstrap=40).result
    for key, value in doc["metrics"].items():
        m = metric(key)
        if value is not None:
            assert m.lo - 1e-9 <= value <= m.hi + 1e-9, (key, value)
        interval = doc["intervals"].get(key)
        if interval is not None:
            assert m.lo - 1e-9 <= interval[0] <= interval[1] <= m.hi + 1e-9, (key, interval)


def test_every_scored_metric_names_the_function_that_computes_its_counts():
    """From a metric's name to its code in one step: the entry's ``counts`` is a function of
    score/block.py (score/cluster.py for the conversation metrics), and the counts a formula reads
    are among those that function (or message_counts, which counts the messages) computes."""
    import inspect

    from interleave_bench.score import block, cluster
    from interleave_bench.score.table import FAMILIES, family

    named = [m for f in ("routing", "cost", "burst", "cluster") if f in FAMILIES for m in family(f)]
    assert named and all(m.counts for m in named), [m.key for m in named if not m.counts]
    for m in named:
        home = cluster if m.family == "cluster" else block
        assert callable(getattr(home, m.counts, None)), (m.key, m.counts)
        if m.formula is None or m.counts == "score_block":
            continue
        read: list[str] = []

        class Reads(dict):
            def __getitem__(self, name):
                read.append(name)
                return 1.0

        m.formula(Reads())
        source = inspect.getsource(getattr(home, m.counts)) + inspect.getsource(block.message_counts)
        # (names built from a stem: outcome_<outcome>, <group>_n, <group>_correct)
        assert all(f'"{name}"' in source or f'"{name.rsplit("_", 1)[0]}"' in source or name.startswith("outcome_")
                   for name in read), (m.key, read)
