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


def summary_and_cost_line(err: str, model: str) -> tuple[str, str]:
    """The run's summary line and the cost line right after it, on stderr (where a warning or an
    ``ERROR rows remain`` line may follow them)."""
    lines = err.splitlines()
    [i] = [k for k, line in enumerate(lines) if line.startswith(f"model {model}: ")]
    assert i > 0 and lines[i - 1].startswith("done: route "), err
    return lines[i - 1], lines[i]


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
    summary, line = summary_and_cost_line(err, "m1")
    assert line.endswith(f"; cost unknown (m1 is not in the price table of {PRICES_AS_OF}: set EVAL_PRICES)"), line
    assert "prices as of" not in line and summary.endswith("; cost unknown")
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
    assert summary_and_cost_line(err, "m1")[1].endswith(f"; cost ${cost:.4f} (prices from EVAL_PRICES)")
    # a rerun of the finished file pays nothing more and keeps what the file cost, at the same price
    assert run_cli(capsys, "route", small, "--mode", "closed", "--policy", "llm", "--model", "m1")[0] == 0
    assert record_of(small / "predictions" / "closed-llm-m1.run.json")["usage"] == usage
    # ... also in a shell without EVAL_PRICES: the file was paid at that price (it became null)
    monkeypatch.delenv("EVAL_PRICES")
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
    assert summary_and_cost_line(err, "fake-model")[1].endswith("; cost $0.0000 (the fake model is free: nothing spent)")


def test_a_dry_run_is_free_whatever_eval_prices_says(small, capsys, monkeypatch, tmp_path):
    """A dry run spends nothing: EVAL_PRICES prices every model but the fake one, in the record, the
    cost line and a score of its rows alike (it recorded $0.35 of a dry run's tokens)."""
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("EVAL_PRICES", "0.28,0.028,0.42")
    code, out, err = run_cli(capsys, "route", small, "--mode", "closed", "--policy", "llm", "--dry-run")
    assert code == 0, err
    usage = record_of(small / "predictions-dry" / "closed-llm-fake-model.run.json")["usage"]
    assert usage["calls"] > 0 and usage["input_tokens"] > 0 and usage["cost_usd"] == 0.0
    assert usage["price"]["input"] == usage["price"]["output"] == 0.0 and usage["price"]["source"] == DEFAULT_SOURCE
    assert summary_and_cost_line(err, "fake-model")[1].endswith("; cost $0.0000 (the fake model is free: nothing spent)")
    assert run_cli(capsys, "score", small, small / "predictions-dry" / "closed-llm-fake-model.jsonl", "--bootstrap", 0)[0] == 0
    assert json.loads((small / "predictions-dry" / "closed-llm-fake-model.score.json").read_text())["cost_usd_per_message"] == 0.0
    from interleave_bench.llm.prices import price_for, prices_from

    assert price_for("openai-api/fake/fake-model", {"EVAL_PRICES": "1,1,1"}).cost(10**6, 0, 10**6) == 0.0
    assert prices_from({"EVAL_PRICES": "1,1,1"})("m1") == Price(1, 1, 1)


def test_a_run_that_paid_nothing_cost_nothing_whatever_the_price(openai_env, small, capsys):
    assert run_cli(capsys, "route", small, "--mode", "closed", "--policy", "llm", "--model", "m1")[0] == 0
    out = small / "again.jsonl"
    code, _, err = run_cli(capsys, "route", small, "--mode", "closed", "--policy", "llm", "--model", "m1",
                                 "--out", out)  # every answer from the cache: no call paid
    assert code == 0, err
    usage = record_of(out.with_suffix(".run.json"))["usage"]
    assert usage["calls"] == 0 and usage["cached"] > 0
    assert usage["cost_usd"] == 0.0 and usage["price"] is None
    assert summary_and_cost_line(err, "m1")[1].endswith("; cost $0.0000 (no paid call)")


def test_a_run_stopped_after_its_first_session_keeps_what_it_paid_on_the_record(openai_env, tmp_path, capsys,
                                                                               monkeypatch):
    """Ctrl-C after a session is written: the record keeps the calls paid so far, and the resumed run
    adds its own, so the file's record counts every call that wrote it."""
    from interleave_bench.cli import main
    from interleave_bench.llm import client

    small = write_data(tmp_path / "five", standard_sessions())  # sessions left to route after the first
    real, paid = client.LLM.complete, []
    rows_file = small / "predictions" / "closed-llm-m1.jsonl"

    async def counted(self, *args, **kwargs):
        if rows_file.exists() and rows_file.stat().st_size:  # a session written: Ctrl-C at the next call
            raise KeyboardInterrupt
        out = await real(self, *args, **kwargs)
        paid.append(1)
        return out

    monkeypatch.setattr(client.LLM, "complete", counted)
    args = ["route", str(small), "--mode", "closed", "--policy", "llm", "--model", "m1", "--no-cache",
            "--concurrency", "1", "--split", "all"]
    assert main(args) == 130
    record = small / "predictions" / "closed-llm-m1.run.json"
    stopped = record_of(record)
    before = len(paid)
    assert stopped["complete"] is False and stopped["usage"]["calls"] == before > 0
    monkeypatch.setattr(client.LLM, "complete", lambda self, *a, **k: counted_again(self, *a, **k))

    async def counted_again(self, *args, **kwargs):
        out = await real(self, *args, **kwargs)
        paid.append(1)
        return out

    assert main(args) == 0
    capsys.readouterr()
    # every call of both runs is counted once (the resumed run asks again what the stop cut off)
    assert record_of(record)["usage"]["calls"] == len(paid) > before


def test_a_file_of_another_models_rows_is_not_resumed(openai_env, small, capsys):
    from interleave_bench.errors import UsageError
    from interleave_bench.io import read_sessions
    from interleave_bench.route.resume import prepare_resume
    from interleave_bench.route.runner import RouteOptions

    assert run_cli(capsys, "route", small, "--mode", "closed", "--policy", "llm", "--model", "m1")[0] == 0
    out = small / "predictions" / "closed-llm-m1.jsonl"
    sessions = read_sessions(small / "sessions.jsonl")
    opts = RouteOptions(mode="closed", policy="llm")
    assert prepare_resume(out, sessions, opts, model="m1") == {s.session_id for s in sessions}
    with pytest.raises(UsageError, match="line 1 is a row of model 'm1', not 'm2'; it was written by a different run"):
        prepare_resume(out, sessions, opts, model="m2")


def test_score_and_report_cost_a_run_at_the_price_it_was_paid_at(openai_env, small, capsys, monkeypatch, tmp_path):
    """A run priced by EVAL_PRICES, scored in a shell without it: the score takes the price its run
    record says the calls were paid at (its cost per message was null, the model being in no
    table); EVAL_PRICES given to score wins; a record of another model's price is not read."""
    monkeypatch.setenv("EVAL_PRICES", "2,0.5,8")
    assert run_cli(capsys, "route", small, "--mode", "closed", "--policy", "llm", "--model", "m1")[0] == 0
    pred = small / "predictions" / "closed-llm-m1.jsonl"
    usage = record_of(pred.with_suffix(".run.json"))["usage"]
    monkeypatch.delenv("EVAL_PRICES")

    def scored(*extra) -> dict:
        code, out, err = run_cli(capsys, "score", small, pred, "--bootstrap", 0, "--split", "all", "--json", *extra)
        assert code == 0, err
        return json.loads(out)

    doc = scored()
    messages = doc["counts"]["messages"]
    assert doc["cost_usd_per_message"] == pytest.approx(usage["cost_usd"] / messages, abs=1e-8) and usage["cost_usd"] > 0
    assert doc["provenance"]["price"] == {"model": "m1", "input": 2.0, "cached_input": 0.5, "output": 8.0,
                                          "source": "run record (EVAL_PRICES)"}
    code, out, err = run_cli(capsys, "report", small, pred, "--bootstrap", 0, "--split", "all", "--html", tmp_path / "r.html")
    assert code == 0, err
    assert "No known cost" not in (tmp_path / "r.html").read_text(encoding="utf-8")
    monkeypatch.setenv("EVAL_PRICES", "1,1,1")
    assert scored()["provenance"]["price"]["source"] == ENV_SOURCE
    monkeypatch.delenv("EVAL_PRICES")
    record = json.loads(pred.with_suffix(".run.json").read_text(encoding="utf-8"))
    record["usage"]["price"]["model"] = "m2"
    pred.with_suffix(".run.json").write_text(json.dumps(record), encoding="utf-8")
    assert scored()["cost_usd_per_message"] is None
    record["usage"]["price"]["input"] = -1.0
    pred.with_suffix(".run.json").write_text(json.dumps(record), encoding="utf-8")
    code, out, err = run_cli(capsys, "score", small, pred, "--bootstrap", 0, "--json")
    assert code == 2 and "closed-llm-m1.run.json" in err and "usage.price.input" in err, err

