"""The threshold sweep's curve across sweeps: what it holds, what it leaves off, what its summary says,
and what each point costs."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from interleave_bench.generate.runner import generate_offline
from interleave_bench.llm.prices import ENV_SOURCE, Price
from interleave_bench.route.sweep import CURVE_COLUMNS

from _cli_util import run_cli

SWEEP = ("route", "--mode", "closed", "--policy", "hybrid", "--dry-run", "--sweep-threshold")
CURVE = "closed-hybrid-sweep-fake-model.sweep"


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    return generate_offline(3, tmp_path / "data").parent


def sweep(capsys, data: Path, thresholds: str, *more: str) -> tuple[str, str]:
    code, out, err = run_cli(capsys, SWEEP[0], data, *SWEEP[1:], thresholds, *more)
    assert code == 0, err
    return out, err


def curve(data: Path) -> list[dict]:
    doc = json.loads((data / "predictions-dry" / f"{CURVE}.json").read_text())
    with open(data / "predictions-dry" / f"{CURVE}.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["threshold"]) for r in rows] == [p["threshold"] for p in doc["curve"]] == doc["options"]["thresholds"]
    return doc["curve"]


def summary(err: str) -> str:
    return next(line for line in err.splitlines() if line.startswith("done: route sweep"))


def test_a_second_sweep_adds_its_thresholds_to_the_curve(data, capsys):
    _, first_err = sweep(capsys, data, "0,0.7,1")
    first = curve(data)
    assert ": 3 thresholds, 3 on the curve, " in summary(first_err)
    out, err = sweep(capsys, data, "0.5,0.9")
    points = curve(data)
    assert [p["threshold"] for p in points] == [0.0, 0.5, 0.7, 0.9, 1.0]  # merged, in order: none dropped
    assert [p for p in points if p["threshold"] in (0.0, 0.7, 1.0)] == first  # the same figures
    rows = sum(1 for _ in (data / "predictions-dry" / "closed-hybrid-t0.5-fake-model.jsonl").open())
    assert "(5 thresholds)" in out and f": 2 thresholds, 5 on the curve, {2 * rows:,} messages, 0 errors;" in summary(err)
    # a rerun routes nothing and says so as route does of a resumed run: what is done, what was routed now
    out, err = sweep(capsys, data, "0.5,0.9")
    assert ": 0 thresholds, 2 already done, 5 on the curve, 0 messages, 0 errors;" in summary(err)
    kept = f"kept {data / 'predictions-dry' / 'closed-hybrid-t0.5-fake-model.jsonl'} ({rows:,} rows, already complete)"
    assert kept in out.splitlines() and not [line for line in out.splitlines() if line.endswith(" rows)")]
    assert curve(data) == points
    # the curve is the same whatever order the thresholds were run in
    other = data.parent / "other"
    other.mkdir()
    (other / "sessions.jsonl").write_bytes((data / "sessions.jsonl").read_bytes())
    sweep(capsys, other, "0,0.5,0.7,0.9,1")
    assert curve(other) == points


def test_runs_not_of_this_sweep_or_unfinished_stay_off_the_curve_and_are_named(data, capsys):
    sweep(capsys, data, "0.7", "--split", "dev")  # another sweep's run: its split is not in its name
    sweep(capsys, data, "0.5,1")
    folder = data / "predictions-dry"
    record = folder / "closed-hybrid-t0.5-fake-model.run.json"
    doc = json.loads(record.read_text())
    record.write_text(json.dumps({**doc, "complete": False}))  # as a run stopped before its end leaves it
    out, err = sweep(capsys, data, "0")
    assert [p["threshold"] for p in curve(data)] == [0.0, 1.0]
    assert f"not on the curve: {folder / 'closed-hybrid-t0.5-fake-model.jsonl'} (unfinished: give the sweep 0.5 to finish it)" in err
    assert f"not on the curve: {folder / 'closed-hybrid-t0.7-fake-model.jsonl'} (routed from other data or options than this sweep)" in err
    # giving the unfinished threshold finishes it and puts it back
    out, err = sweep(capsys, data, "0.5")
    assert [p["threshold"] for p in curve(data)] == [0.0, 0.5, 1.0] and "0.5-fake-model" not in err


def test_a_run_whose_rows_its_threshold_could_not_give_stays_off_the_curve(data, capsys):
    sweep(capsys, data, "0.5,1")
    folder = data / "predictions-dry"
    src, dst = folder / "closed-hybrid-t0.5-fake-model.jsonl", folder / "closed-hybrid-t0.6-fake-model.jsonl"
    dst.write_bytes(src.read_bytes())  # the 0.5 run passed off as one at 0.6: same bytes, so the same fingerprint
    doc = json.loads((folder / "closed-hybrid-t0.5-fake-model.run.json").read_text())
    doc["options"]["threshold"], doc["predictions"] = 0.6, dst.name
    (folder / "closed-hybrid-t0.6-fake-model.run.json").write_text(json.dumps(doc))
    rows = [json.loads(line) for line in dst.open()]
    under = [r for r in rows if r["via"] == "local" and r["confidence"] < 0.6]
    assert under and all(r["confidence"] >= 0.5 for r in rows if r["via"] == "local")
    out, err = sweep(capsys, data, "0.5,1")
    assert [p["threshold"] for p in curve(data)] == [0.5, 1.0]
    first = under[0]
    assert (f"not on the curve: {dst} ({len(under):,} rows decided by local under its threshold 0.6, where a run at "
            f"0.6 asks the model; first {first['session_id']} message {first['i']}, confidence {first['confidence']:g})"
            ) in err
    # given now, it is not taken as done: the sweep says why and how to route it again
    code, _, err = run_cli(capsys, SWEEP[0], data, *SWEEP[1:], "0.6")
    assert code != 0 and f"{dst} is not a run at 0.6 ({len(under):,} rows decided by local under its threshold" in err
    assert "delete it and its run record, or pass --fresh, to route it again" in err
    # every honest run of a sweep, 0 and 1 among them, routed again or now, is on the curve, none left off
    sweep(capsys, data, "0.6", "--fresh")
    out, err = sweep(capsys, data, "0,0.6,0.9")
    assert [p["threshold"] for p in curve(data)] == [0.0, 0.5, 0.6, 0.9, 1.0] and "not on the curve" not in err


def test_each_point_says_its_tokens_and_cost_per_message_at_the_price_score_uses(openai_env, data, capsys, monkeypatch):
    """A sweep against a model at EVAL_PRICES: each point's tokens and USD per message, worked out
    here from its run's rows on the measured split, agree with score's; without EVAL_PRICES the
    run record's price; at an unknown price no cost (never 0), but 0.0 where no call was paid."""
    def sweep_m(model: str, thresholds: str = "0,1") -> str:
        code, out, err = run_cli(capsys, "route", data, "--mode", "closed", "--policy", "hybrid", "--model", model,
                                 "--sweep-threshold", thresholds)
        assert code == 0, err
        return out

    def points_of(model: str) -> tuple[dict, list[dict], list[dict]]:
        name = data / "predictions" / f"closed-hybrid-sweep-{model}.sweep"
        doc = json.loads(Path(f"{name}.json").read_text())
        with open(f"{name}.csv", newline="") as fh:
            reader = csv.reader(fh)
            assert tuple(next(reader)) == CURVE_COLUMNS
            assert CURVE_COLUMNS[:7] == ("threshold", "messages", "local_share", "calls_per_message", "accuracy",
                                         "weighted_error", "predictions")  # the new columns after the old
            rows = [dict(zip(CURVE_COLUMNS, r)) for r in reader]
        return doc, doc["curve"], rows

    def tokens_of(point: dict, split: str) -> tuple[list[int], int]:
        """(input, cached, output) tokens of the point's run on ``split``, by hand from its rows, and its messages."""
        ids = {json.loads(x)["session_id"] for x in (data / "sessions.jsonl").read_text().splitlines()
               if json.loads(x)["split"] == split}
        rows = [json.loads(x) for x in (data / "predictions" / point["predictions"]).read_text().splitlines()]
        rows = [r for r in rows if r["session_id"] in ids]
        return [sum(r["usage"][k] for r in rows if "usage" in r) for k in ("input", "cache_hit", "output")], len(rows)

    monkeypatch.setenv("EVAL_PRICES", "2,0.5,8")
    out = sweep_m("m1")
    doc, (t0, t1), (csv0, csv1) = points_of("m1")
    split = doc["options"]["curve_split"]
    tokens, n = tokens_of(t1, split)
    assert n == t1["messages"] and tokens[0] > 0 and tokens[2] > 0
    assert t1["input_tokens_per_message"] == round(tokens[0] / n, 1)
    assert t1["output_tokens_per_message"] == round(tokens[2] / n, 1)
    assert t1["cost_usd_per_message"] > 0
    assert t1["cost_usd_per_message"] == pytest.approx(Price(2, 0.5, 8).cost(*tokens) / n, abs=1e-8)
    assert t1["price"] == {"model": "m1", "input": 2.0, "cached_input": 0.5, "output": 8.0, "source": ENV_SOURCE}
    # threshold 0 asks no model: no tokens and nothing paid
    assert (t0["calls_per_message"], t0["input_tokens_per_message"], t0["cost_usd_per_message"]) == (0.0, 0.0, 0.0)
    # the CSV and the printed table hold the same figures
    assert float(csv1["cost_usd_per_message"]) == t1["cost_usd_per_message"]
    assert float(csv1["input_tokens_per_message"]) == t1["input_tokens_per_message"] and csv0["cost_usd_per_message"] == "0.0"
    assert "| input tok/msg | output tok/msg | cost / msg |" in out
    line = next(x for x in out.splitlines() if x.startswith("| 1 |"))
    assert line.endswith(f" | {t1['input_tokens_per_message']:.1f} | {t1['output_tokens_per_message']:.1f} | "
                         f"{t1['cost_usd_per_message']:.8f} |"), line
    # the very figures score gives the file on that split
    code, printed, err = run_cli(capsys, "score", data, data / "predictions" / t1["predictions"], "--bootstrap", 0,
                                 "--split", split, "--json")
    assert code == 0, err
    scored = json.loads(printed)
    assert scored["cost_usd_per_message"] == t1["cost_usd_per_message"]
    assert scored["metrics"]["input_tokens_per_message"] == t1["input_tokens_per_message"]
    # without EVAL_PRICES: the price the run record says the calls were paid at, as score takes it
    # (the threshold 1 run is on the curve, not given now: its record is the one its run wrote)
    monkeypatch.delenv("EVAL_PRICES")
    sweep_m("m1", "0")
    _, (_, again), _ = points_of("m1")
    assert again["cost_usd_per_message"] == t1["cost_usd_per_message"]
    assert again["price"]["source"] == f"run record ({ENV_SOURCE})"
    # EVAL_PRICES given to the sweep wins over the record, as it does for score
    monkeypatch.setenv("EVAL_PRICES", "1,1,1")
    sweep_m("m1", "0")
    _, (_, priced), _ = points_of("m1")
    assert priced["price"]["source"] == ENV_SOURCE
    assert priced["cost_usd_per_message"] == pytest.approx(Price(1, 1, 1).cost(*tokens) / n, abs=1e-8)
    # a model at no known price: no cost, in every form, but the point that paid no call cost 0
    monkeypatch.delenv("EVAL_PRICES")
    out = sweep_m("m2")
    _, (u0, u1), (c0, c1) = points_of("m2")
    assert u1["input_tokens_per_message"] > 0 and u1["cost_usd_per_message"] is None and u1["price"] is None
    assert c1["cost_usd_per_message"] == "" and u0["cost_usd_per_message"] == 0.0 and c0["cost_usd_per_message"] == "0.0"
    assert next(x for x in out.splitlines() if x.startswith("| 1 |")).endswith(" | n/a |")


@pytest.mark.parametrize("option, value", [
    ("--sweep-threshold", "0.30000000000000004"),
    ("--sweep-threshold", "0.5,0.12345"),  # refused before the 0.5 run, not after it
    ("--threshold", "0.30000000000000004"),
    ("--threshold", "0.12345"),
])
def test_a_threshold_finer_than_the_confidence_is_refused_before_any_run(data, capsys, option, value):
    """Run files are named ``-t{threshold:g}``: 0.30000000000000004 once wrote ``-t0.3``, and a later
    ``--threshold 0.3`` could only resume it or throw it away. Local's confidence has 4 decimals, so
    a finer threshold selects nothing more; it is refused in one line, exit 2, before any run."""
    code, out, err = run_cli(capsys, "route", data, "--mode", "closed", "--policy", "hybrid", "--dry-run", option, value)
    bad = value.split(",")[-1]
    assert code == 2 and err.strip().splitlines() == [
        f"error: {option} must have at most 4 decimal places, as local's confidence has, got {bad}"], err
    assert not (data / "predictions-dry").exists()


def test_a_python_sweep_refuses_a_fine_threshold_before_its_first_run(data):
    from interleave_bench.errors import UsageError
    from interleave_bench.route.runner import RouteOptions
    from interleave_bench.route.sweep import run_sweep

    with pytest.raises(UsageError, match="--sweep-threshold must have at most 4 decimal places"):
        run_sweep(data, RouteOptions(mode="closed", policy="hybrid"), [0.5, 0.12345], llm=None, dry_run=True)
    assert not (data / "predictions-dry").exists() and not (data / "predictions").exists()


def test_thresholds_of_4_decimals_have_a_file_each():
    """Every threshold the rule lets through gets a name of its own: no two runs share a file."""
    from interleave_bench.route.local import threshold_problem
    from interleave_bench.route.runner import RouteOptions, output_name

    thresholds = [k / 10_000 for k in range(10_001)]
    assert not [t for t in thresholds if threshold_problem(t)]
    names = {output_name(RouteOptions(mode="closed", policy="hybrid", threshold=t), "m") for t in thresholds}
    assert len(names) == len(thresholds)
    assert threshold_problem(0.1 + 0.2) and threshold_problem(0.00005) and threshold_problem(float("nan"))
