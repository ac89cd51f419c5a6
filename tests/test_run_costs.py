"""What a route run says it cost: the run record's cost and the price behind it, and the cost line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interleave_bench.documents import RunRecord
from interleave_bench.llm.prices import DEFAULT_SOURCE, ENV_SOURCE, PRICES_AS_OF, Price

from _cli_util import run_cli
from _route_util import standard_sessions, write_data


@pytest.fixture
def small(tmp_path) -> Path:
    return write_data(tmp_path / "small", standard_sessions()[:2])


def record_of(path: Path) -> dict:
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert RunRecord.model_validate(raw).dump() == raw  # what is written is exactly the typed record
    return raw


def test_a_run_at_an_unknown_price_records_no_cost_and_says_so_once(openai_env, small, capsys):
    code, out, err = run_cli(capsys, "route", small, "--mode", "closed", "--policy", "llm", "--model", "m1")
    assert code == 0, err
    usage = record_of(small / "predictions" / "closed-llm-m1.run.json")["usage"]
    assert usage["calls"] > 0 and usage["input_tokens"] > 0
    assert usage["cost_usd"] is None and usage["price"] is None  # not 0.0: nothing says what it cost
    line = out.splitlines()[-1]
    assert line.endswith(f"; cost unknown (m1 is not in the price table of {PRICES_AS_OF}: set EVAL_PRICES)"), line
    assert "prices as of" not in line and out.splitlines()[-2].endswith("; cost unknown")
    # the score file agrees: no cost per message at an unknown price
    assert run_cli(capsys, "score", small, small / "predictions" / "closed-llm-m1.jsonl", "--bootstrap", 0)[0] == 0
    assert json.loads((small / "predictions" / "closed-llm-m1.score.json").read_text())["cost_usd_per_message"] is None


def test_a_run_records_the_price_it_used_and_the_cost_at_it(openai_env, small, capsys, monkeypatch):
    monkeypatch.setenv("EVAL_PRICES", "2,0.5,8")
    code, out, err = run_cli(capsys, "route", small, "--mode", "closed", "--policy", "llm", "--model", "m1")
    assert code == 0, err
    usage = record_of(small / "predictions" / "closed-llm-m1.run.json")["usage"]
    assert usage["price"] == {"model": "m1", "input": 2.0, "cached_input": 0.5, "output": 8.0, "source": ENV_SOURCE}
    cost = Price(2, 0.5, 8).cost(usage["input_tokens"], usage["cached_input_tokens"], usage["output_tokens"])
    assert cost > 0 and usage["cost_usd"] == round(cost, 6)
    assert out.splitlines()[-1].endswith(f"; cost ${cost:.4f} (prices from EVAL_PRICES)")
    # a rerun of the finished file pays nothing more and keeps what the file cost, at the same price
    assert run_cli(capsys, "route", small, "--mode", "closed", "--policy", "llm", "--model", "m1")[0] == 0
    assert record_of(small / "predictions" / "closed-llm-m1.run.json")["usage"] == usage


def test_a_model_of_the_table_records_the_table_and_its_date(small, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    code, out, err = run_cli(capsys, "route", small, "--mode", "closed", "--policy", "hybrid", "--dry-run")
    assert code == 0, err
    usage = record_of(small / "predictions-dry" / "closed-hybrid-fake-model.run.json")["usage"]
    assert usage["calls"] > 0 and usage["cost_usd"] == 0.0
    assert usage["price"] == {"model": "fake-model", "input": 0.0, "cached_input": 0.0, "output": 0.0,
                              "source": DEFAULT_SOURCE}
    assert PRICES_AS_OF in DEFAULT_SOURCE
    assert out.splitlines()[-1].endswith(f"; cost $0.0000 (prices as of {PRICES_AS_OF}; EVAL_PRICES sets others)")


def test_a_run_that_paid_nothing_cost_nothing_whatever_the_price(openai_env, small, capsys):
    assert run_cli(capsys, "route", small, "--mode", "closed", "--policy", "llm", "--model", "m1")[0] == 0
    out = small / "again.jsonl"
    code, printed, err = run_cli(capsys, "route", small, "--mode", "closed", "--policy", "llm", "--model", "m1",
                                 "--out", out)  # every answer from the cache: no call paid
    assert code == 0, err
    usage = record_of(out.with_suffix(".run.json"))["usage"]
    assert usage["calls"] == 0 and usage["cached"] > 0
    assert usage["cost_usd"] == 0.0 and usage["price"] is None
    assert printed.splitlines()[-1].endswith("; cost $0.0000 (no paid call)")
