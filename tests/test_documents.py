"""Typed result documents: writers build them, readers validate them, a bad one is one line."""

from __future__ import annotations

import json

import pytest

from _cli_util import run_cli
from interleave_bench.documents import (
    MidReplySummary,
    RunRecord,
    ScoreDocument,
    TracedScore,
    read_score_document,
    validate_document,
)
from interleave_bench.errors import InputError
from interleave_bench.llm.prices import DEFAULT_SOURCE, ENV_SOURCE, Price, prices_from
from interleave_bench.score import score_runs

from _score_util import many_sessions, oracle_rows, write_jsonl


def _usage_rows(ss):
    out = oracle_rows(ss, "closed", policy="llm")
    for r in out:
        r["model"] = "deepseek-chat"
        r["usage"] = {"input": 1000, "output": 10, "cache_hit": 0}
    return out


def test_the_score_file_is_a_score_document_and_records_the_price(tmp_path, capsys, monkeypatch):
    ss = many_sessions(4)
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    pred = write_jsonl(tmp_path / "predictions" / "closed-llm.jsonl", _usage_rows(ss))
    monkeypatch.setenv("EVAL_PRICES", "2,0.5,8")
    code, _, err = run_cli(capsys, "score", data, pred, "--bootstrap", 40)
    assert code == 0, err
    raw = json.loads((tmp_path / "predictions" / "closed-llm.score.json").read_text())
    doc = TracedScore.model_validate(raw)
    assert doc.dump() == raw  # what is written is exactly the typed document
    price = doc.provenance.price
    assert (price.model, price.input, price.cached_input, price.output, price.source) == ("deepseek-chat", 2, 0.5, 8, ENV_SOURCE)
    # 1000 input and 10 output tokens a message at 2 and 8 USD per million
    assert doc.cost_usd_per_message == round((1000 * 2 + 10 * 8) / 1e6, 8)


def test_library_scoring_reads_no_environment_and_uses_the_dated_table(monkeypatch):
    ss = many_sessions(3)
    monkeypatch.setenv("EVAL_PRICES", "100,100,100")  # a command would read it; the library does not
    doc = ScoreDocument.model_validate(score_runs(ss, {"x": _usage_rows(ss)}, split="all", bootstrap=0)["x"])
    assert doc.provenance.price.source == DEFAULT_SOURCE and doc.provenance.price.input == 0.28
    given = score_runs(ss, {"x": _usage_rows(ss)}, split="all", bootstrap=0, price=prices_from({"EVAL_PRICES": "1,1,1"}))
    assert given["x"]["provenance"]["price"]["input"] == 1.0


def test_prices_are_read_once_at_the_edge():
    lookup = prices_from({"EVAL_PRICES": "1,0.1,2"})
    assert lookup("anything") == Price(1.0, 0.1, 2.0) and lookup("anything").source == ENV_SOURCE
    assert prices_from({})("deepseek-chat").source == DEFAULT_SOURCE and prices_from({})("local") is None


def test_a_malformed_score_file_is_one_line_naming_the_field():
    ss = many_sessions(2)
    good = score_runs(ss, {"x": oracle_rows(ss, "closed")}, split="all", bootstrap=0)["x"]
    assert read_score_document("x.json", good).system == "x"
    with pytest.raises(InputError) as exc:
        read_score_document("x.json", {**good, "counts": {**good["counts"], "strict": "many"}})
    assert exc.value.field == "counts.strict" and len(exc.value.format().splitlines()) == 1
    with pytest.raises(InputError) as exc:
        read_score_document("x.json", good, traced=True)  # no file fingerprints: scored in memory
    assert exc.value.field == "provenance.data_sha256"
    with pytest.raises(InputError, match="expected a JSON object"):
        read_score_document("x.json", [good])


def test_run_records_are_typed_and_an_old_record_reads_as_version_one(tmp_path, capsys):
    ss = many_sessions(3)
    data = write_jsonl(tmp_path / "data" / "sessions.jsonl", ss)
    code, _, err = run_cli(capsys, "route", data.parent, "--mode", "closed", "--policy", "stay", "--split", "all")
    assert code == 0, err
    [path] = (tmp_path / "data" / "predictions").glob("*.run.json")
    raw = json.loads(path.read_text())
    record = RunRecord.model_validate(raw)
    assert record.format == "interleave-run-v1" and record.complete and record.counts.sessions == 3
    old = {k: v for k, v in raw.items() if k != "format"}
    assert RunRecord.model_validate(old).format == "interleave-run-v1"
    with pytest.raises(InputError) as exc:
        validate_document(RunRecord, {**raw, "options": 3}, str(path), "a run record")
    assert exc.value.field == "options" and str(path) in exc.value.format()


def test_mid_reply_summary_is_typed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "mid-reply", "--rule-only", "--limit", "6")
    assert code == 0, err
    [path] = (tmp_path / "results").glob("*.score.json")
    summary = MidReplySummary.model_validate(json.loads(path.read_text()))
    assert summary.format == "interleave-mid-reply-v1" and summary.metrics.n == 6
    assert summary.metrics.mixed_in.n == summary.metrics.n_elsewhere
