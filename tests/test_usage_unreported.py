"""A provider that answers without token counts: the call's tokens and the run's cost are unknown
(null, "cost unknown" and why), never $0; a count sent as a boolean is refused like a float."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interleave_bench.llm.client import LLM, ModelCallError, RunStats, Usage, usage_of, usage_record
from interleave_bench.llm.prices import Price
from interleave_bench.llm.provider import Provider
from interleave_bench.llm.server import FakeServer

from _cli_util import run_cli
from _route_util import standard_sessions, write_data
from test_llm import no_waits


def llm_at(server: FakeServer, model: str = "m1") -> LLM:
    """A client of ``server`` that retries once (a test that makes it retry records the wait: no_waits)."""
    return LLM(Provider("openai-compatible", server.url, model, api_key="sk-test-unreported-0123456789"),
               max_retries=1)


def ask(llm: LLM):
    return llm.run(llm.complete("test", [{"role": "user", "content": "hello"}]))


def test_an_answer_without_usage_has_unknown_tokens_and_cost():
    with FakeServer(report_usage=False) as srv:
        llm = llm_at(srv)
        reply = ask(llm)
    assert reply.usage == Usage(0, 0, 0, unreported=1) and reply.usage.as_row() == {
        "input": 0, "output": 0, "cache_hit": 0, "unreported": 1}
    llm.stats.price = Price(1, 1, 1)
    assert llm.stats.calls == 1 and llm.stats.cost_usd is None
    assert llm.cost_line().endswith("; cost unknown (the provider reported no token counts for 1 call)")
    record = llm.stats.as_manifest()
    assert record["unreported"] == 1 and record["cost_usd"] is None


def test_a_usage_without_one_of_its_counts_reported_none():
    assert usage_of({"completion_tokens": 5}) == Usage(unreported=1)
    assert usage_of({"prompt_tokens": 7, "completion_tokens": 5}) == Usage(7, 0, 5)
    # 2 calls of 1M tokens known, 1 unknown: the total is unknown at any price
    assert usage_record({"calls": 3, "input_tokens": 2_000_000, "unreported": 1}, Price(1, 1, 1), "m")["cost_usd"] is None
    assert usage_record({"calls": 3, "input_tokens": 2_000_000}, Price(1, 1, 1), "m")["cost_usd"] == 2.0


def test_a_count_sent_as_a_boolean_is_refused_like_a_float():
    with FakeServer() as srv:
        srv.add_fault("usage_bool", times=2)
        llm = llm_at(srv)
        waits = no_waits(llm)
        with pytest.raises(ModelCallError, match="usage prompt_tokens is True, not a whole number"):
            ask(llm)
        assert len(waits) == 1 and srv.completions == 2  # asked again once, then given up: never counted as 1 token


def test_a_route_run_on_a_server_without_usage_records_an_unknown_cost(tmp_path, capsys, monkeypatch):
    small = write_data(tmp_path / "small", standard_sessions()[:2])
    with FakeServer(report_usage=False) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-unreported-0123456789")
        monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
        monkeypatch.setenv("EVAL_PRICES", "1,0,1")
        code, out, err = run_cli(capsys, "route", small, "--mode", "closed", "--policy", "llm", "--model", "m1")
        paid = srv.completions
    assert code == 0, err
    lines = err.splitlines()  # the summary, then the cost line, on stderr (a warning may follow them)
    [i] = [k for k, line in enumerate(lines) if line.startswith("model m1: ")]
    assert i > 0 and lines[i - 1].startswith("done: route "), err
    assert lines[i].endswith(f"cost unknown (the provider reported no token counts for {paid} calls)")
    assert "$0.0000" not in out + err and lines[i - 1].endswith("cost unknown")
    pred = small / "predictions" / "closed-llm-m1.jsonl"
    usage = json.loads(pred.with_suffix(".run.json").read_text(encoding="utf-8"))["usage"]
    assert usage["calls"] == usage["unreported"] == paid > 0 and usage["cost_usd"] is None
    rows = [json.loads(line) for line in pred.read_text(encoding="utf-8").splitlines()]
    assert sum(r["usage"]["unreported"] for r in rows if "usage" in r) == paid
    code, out, err = run_cli(capsys, "score", small, pred, "--bootstrap", 0, "--json")
    assert code == 0, err
    assert json.loads(out)["cost_usd_per_message"] is None  # unknown, not $0, at any price
