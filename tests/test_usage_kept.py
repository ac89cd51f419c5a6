"""What a route run paid stays on its record: no price makes a cost infinite, an error at the end
keeps the calls, and calls no record kept are unknown, never 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interleave_bench.documents import RunRecord
from interleave_bench.errors import InputError, UsageError
from interleave_bench.llm.client import spent_usd
from interleave_bench.llm.prices import MAX_PRICE_PER_MILLION, Price, price_problem, prices_from

from _cli_util import run_cli
from _route_util import standard_sessions, write_data

ROUTE = ("route", "--mode", "closed", "--policy", "llm", "--model", "m1")


@pytest.fixture
def small(tmp_path) -> Path:
    return write_data(tmp_path / "small", standard_sessions()[:2])


def route(capsys, data: Path, *extra: object) -> tuple[int, str, str]:
    return run_cli(capsys, ROUTE[0], data, *ROUTE[1:], *extra)


def record_of(path: Path) -> dict:
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert RunRecord.model_validate(raw).dump() == raw
    return raw


def test_a_price_is_at_most_the_documented_bound():
    assert MAX_PRICE_PER_MILLION == 10_000.0
    assert price_problem((0, 0.5, 10_000)) is None
    assert "outside 0..10000" in price_problem((0, 0, 10_000.5))
    assert "not a finite number" in price_problem((float("nan"), 0, 0))
    assert "not a finite number" in price_problem((True, 0, 0))
    assert prices_from({"EVAL_PRICES": "10000,0,10000"})("m") == Price(10_000, 0, 10_000)
    for raw in ("1e308,0,0", "0,0,10000.01", "inf,0,0"):
        with pytest.raises(UsageError, match=r"^EVAL_PRICES: expected three numbers 'in,cached,out' from 0 to 10000"):
            prices_from({"EVAL_PRICES": raw})


def test_no_cost_is_ever_infinite():
    # 3 calls of 2M fresh + 1M cached input and 1M output at 1, 0.5 and 4 USD per million: 2 + 0.5 + 4
    assert spent_usd(Price(1, 0.5, 4), 3, 3_000_000, 1_000_000, 1_000_000) == pytest.approx(6.5)
    top = Price(MAX_PRICE_PER_MILLION, MAX_PRICE_PER_MILLION, MAX_PRICE_PER_MILLION)
    assert top.cost(10**400, 0, 0) is None  # a count no float holds: unknown, not inf
    assert spent_usd(top, 1, 0, 0, 10**400) is None


def test_a_price_that_would_make_the_cost_infinite_is_refused_before_any_call(openai_env, small, capsys,
                                                                              monkeypatch):
    monkeypatch.setenv("EVAL_PRICES", "1e308,0,0")
    code, out, err = route(capsys, small, "--split", "dev")
    assert code == 2, err
    assert err.strip().splitlines() == [err.strip()] and "EVAL_PRICES" in err and "internal error" not in err
    assert openai_env["server"].calls == 0
    assert not (small / "predictions").exists()


def test_a_recorded_price_out_of_bounds_is_refused_naming_the_record(openai_env, small, capsys, monkeypatch):
    monkeypatch.setenv("EVAL_PRICES", "2,0.5,8")
    assert route(capsys, small)[0] == 0
    pred = small / "predictions" / "closed-llm-m1.jsonl"
    record = json.loads(pred.with_suffix(".run.json").read_text(encoding="utf-8"))
    record["usage"]["price"]["output"] = 1e308
    pred.with_suffix(".run.json").write_text(json.dumps(record), encoding="utf-8")
    monkeypatch.delenv("EVAL_PRICES")
    code, out, err = run_cli(capsys, "score", small, pred, "--bootstrap", 0, "--json")
    assert code == 2 and "closed-llm-m1.run.json: usage.price.output: 1e+308 is outside 0..10000" in err, err
    # a resume of the file is refused before it asks anything
    calls = openai_env["server"].calls
    rows = pred.read_text(encoding="utf-8").splitlines(keepends=True)
    first = json.loads(rows[0])["session_id"]  # the first session kept, the second to route again
    pred.write_text("".join(r for r in rows if json.loads(r)["session_id"] == first), encoding="utf-8")
    code, out, err = route(capsys, small)
    assert code == 2 and "usage.price.output" in err, err
    assert openai_env["server"].calls == calls
    with pytest.raises(InputError, match="usage.price.input"):
        Price.of_record(RunRecord.model_validate(record).usage.model_copy(
            update={"price": record_price(input=10_001.0)}).price, "x.run.json")


def record_price(**figures: float):
    from interleave_bench.documents import Price as RecordedPrice

    base = {"model": "m1", "input": 1.0, "cached_input": 0.0, "output": 1.0, "source": "EVAL_PRICES"}
    return RecordedPrice.model_validate({**base, **figures})


def test_an_error_at_the_end_of_a_run_keeps_its_calls_on_the_record(openai_env, small, capsys, monkeypatch):
    """The run routes every session, then fails writing its finished record: the record still holds
    every call it paid, and the rerun that finishes the file adds none and loses none."""
    from interleave_bench.route import runner

    monkeypatch.setenv("EVAL_PRICES", "1,0,0")

    def broken(*args, **kwargs):
        raise RuntimeError("disk went away")

    monkeypatch.setattr(runner, "provenance", broken)
    code, out, err = route(capsys, small, "--no-cache")
    assert code == 1 and "disk went away" in err
    record = small / "predictions" / "closed-llm-m1.run.json"
    paid = openai_env["server"].completions
    usage = record_of(record)["usage"]
    assert paid > 0 and usage["calls"] == paid and usage["input_tokens"] > 0
    assert usage["cost_usd"] == round(usage["input_tokens"] / 1e6, 6) and usage["uncounted"] is False
    monkeypatch.undo()
    monkeypatch.setenv("EVAL_PRICES", "1,0,0")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_env["server"].url)
    monkeypatch.setenv("OPENAI_API_KEY", openai_env["key"])
    code, out, err = route(capsys, small, "--no-cache")
    assert code == 0, err
    done = record_of(record)
    assert done["complete"] is True and done["usage"] == usage  # nothing more paid, nothing lost
    assert openai_env["server"].completions == paid


def test_kept_rows_whose_record_holds_no_usage_cost_an_unknown_amount(openai_env, small, capsys, monkeypatch):
    """Rows a record kept no usage for (a run killed, or one of an older release that failed to
    write it): the resumed run's record says they are uncounted and its cost unknown, never 0."""
    monkeypatch.setenv("EVAL_PRICES", "1,0,0")
    assert route(capsys, small)[0] == 0
    record = small / "predictions" / "closed-llm-m1.run.json"
    raw = record_of(record)
    assert raw["usage"]["calls"] > 0
    raw["usage"], raw["complete"] = None, False
    record.write_text(json.dumps(raw), encoding="utf-8")
    code, out, err = route(capsys, small)
    assert code == 0, err
    usage = record_of(record)["usage"]
    assert usage["calls"] == 0 and usage["uncounted"] is True and usage["cost_usd"] is None


def test_a_running_record_says_its_calls_are_not_yet_counted(openai_env, tmp_path, capsys, monkeypatch):
    """From its first row until it ends, the record says the run's calls are uncounted: a run killed
    with kill -9 leaves a record whose cost is unknown, not that of the calls before it."""
    from interleave_bench.cli import main
    from interleave_bench.llm import client

    data = write_data(tmp_path / "five", standard_sessions())
    rows_file = data / "predictions" / "closed-llm-m1.jsonl"
    record = data / "predictions" / "closed-llm-m1.run.json"
    real, seen = client.LLM.complete, []

    async def watched(self, *args, **kwargs):
        if rows_file.exists() and rows_file.stat().st_size and not seen:
            seen.append(record_of(record)["usage"])  # what a kill -9 here would leave
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(client.LLM, "complete", watched)
    monkeypatch.setenv("EVAL_PRICES", "1,0,0")
    assert main(["route", str(data), "--mode", "closed", "--policy", "llm", "--model", "m1", "--no-cache",
                 "--concurrency", "1", "--split", "all"]) == 0
    capsys.readouterr()
    assert seen and seen[0]["uncounted"] is True and seen[0]["cost_usd"] is None and seen[0]["calls"] > 0
    done = record_of(record)["usage"]
    assert done["uncounted"] is False and done["cost_usd"] == round(done["input_tokens"] / 1e6, 6)


def test_calls_paid_before_ctrl_c_stopped_the_first_session_stay_on_the_record(openai_env, tmp_path, capsys,
                                                                               monkeypatch):
    """Ctrl-C before the first session is written: the calls already paid are on the record, and the
    rerun that finishes the file counts them with its own, its rows those of an uninterrupted run."""
    from interleave_bench.llm import client

    small = write_data(tmp_path / "one", standard_sessions()[:1])  # one session: its calls one after another

    monkeypatch.setenv("EVAL_PRICES", "1,0,0")
    real, asked = client.LLM.complete, []

    async def stopped_at_third(self, *args, **kwargs):
        asked.append(1)
        if len(asked) == 3:
            raise KeyboardInterrupt  # the user's Ctrl-C, two answers paid, no session finished
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(client.LLM, "complete", stopped_at_third)
    code, out, err = route(capsys, small)
    assert code == 130, err
    pred = small / "predictions" / "closed-llm-m1.jsonl"
    record = pred.with_suffix(".run.json")
    assert not pred.exists() or not pred.read_text(encoding="utf-8")  # no row written
    paid = openai_env["server"].completions
    assert paid == 2
    kept = record_of(record)
    assert kept["complete"] is False and kept["usage"]["calls"] == paid and kept["usage"]["uncounted"] is False
    assert kept["usage"]["cost_usd"] == round(kept["usage"]["input_tokens"] / 1e6, 6) > 0
    monkeypatch.setattr(client.LLM, "complete", real)
    code, out, err = route(capsys, small, "--split", "dev")  # another run's record: refused, kept as it was
    assert code == 2 and len(err.strip().splitlines()) == 1 and "closed-llm-m1.run.json holds the calls" in err, err
    assert record_of(record) == kept and openai_env["server"].completions == paid
    code, out, err = route(capsys, small)  # the two paid answers come from the cache
    assert code == 0, err
    done = record_of(record)
    assert done["complete"] is True and done["usage"]["calls"] == openai_env["server"].completions
    assert done["usage"]["cached"] == 2 and done["usage"]["uncounted"] is False
    assert done["usage"]["input_tokens"] > kept["usage"]["input_tokens"]
    whole = small / "whole.jsonl"  # an uninterrupted run through the same cache
    assert route(capsys, small, "--out", whole)[0] == 0
    assert pred.read_bytes() == whole.read_bytes()
