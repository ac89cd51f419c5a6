"""Tokens per message are unknown (null, printed "–") where a call's tokens went unreported, never
the reported calls' count spread over every message as if the others cost nothing."""

from __future__ import annotations

from interleave_bench.score.run import score_predictions
from interleave_bench.reports.tables import fmt
from interleave_bench.score.table import metric

from _route_util import standard_sessions


def rows_with(usages: dict[int, dict[str, int]]) -> tuple[list[dict], list[dict]]:
    """The first dev session of the standard sessions, routed right, with ``usages`` by message index."""
    session = next(s for s in standard_sessions() if s["split"] == "dev")
    rows = []
    for t in session["turns"]:
        row = {"session_id": session["session_id"], "i": t["i"], "pred": t["gold"]["thread"] or "x1",
               "mode": "closed", "policy": "llm", "via": "llm"}
        if t["i"] in usages:
            row["usage"] = usages[t["i"]]
        rows.append(row)
    return [session], rows


def metrics_of(usages: dict[int, dict[str, int]]) -> tuple[int, dict]:
    sessions, rows = rows_with(usages)
    result = score_predictions(sessions, rows, bootstrap=0, price=None).result
    return result["counts"]["messages"], result["metrics"]


def test_reported_tokens_are_spread_over_every_message():
    n, m = metrics_of({0: {"input": 120, "output": 6, "cache_hit": 20}, 1: {"input": 80, "output": 4, "cache_hit": 0}})
    assert n > 2
    assert m["input_tokens_per_message"] == round(200 / n, 1)
    assert m["output_tokens_per_message"] == round(10 / n, 1)
    assert m["cached_tokens_per_message"] == round(20 / n, 1)
    assert m["model_calls_share"] == round(2 / n, 3)


def test_one_unreported_call_makes_every_token_figure_unknown():
    n, m = metrics_of({0: {"input": 120, "output": 6, "cache_hit": 20},
                       1: {"input": 0, "output": 0, "cache_hit": 0, "unreported": 1}})
    assert m["input_tokens_per_message"] is None
    assert m["output_tokens_per_message"] is None
    assert m["cached_tokens_per_message"] is None
    assert m["model_calls_share"] == round(2 / n, 3)  # the calls are still counted
    assert fmt(m["input_tokens_per_message"], metric("input_tokens_per_message").shown) == "–"  # the table's cell


def test_a_run_that_called_no_model_used_no_tokens():
    _, m = metrics_of({})
    assert m["input_tokens_per_message"] == 0.0 and m["model_calls_share"] == 0.0


def test_the_summary_and_cost_lines_say_tokens_are_unknown_never_0():
    from interleave_bench.llm.client import RunStats, Usage
    from interleave_bench.llm.prices import Price
    from interleave_bench.progress import summary_line

    class AllUnreported:  # three paid calls, none of which reported its counts
        stats = RunStats(calls=3, paid=Usage(unreported=3), price=Price(1, 0, 1))

    class SomeUnreported:  # two of three reported 1,200 + 300 tokens; one did not
        stats = RunStats(calls=3, paid=Usage(1200, 200, 300, unreported=1), price=Price(1, 0, 1))

    assert summary_line("route", {}, 1.0, AllUnreported()).endswith("; tokens unknown; cost unknown")
    assert "tokens 0 in" not in AllUnreported.stats.line("m")
    assert "; tokens unknown; cost unknown (the provider reported no token counts for 3 calls)" in AllUnreported.stats.line("m")
    assert summary_line("route", {}, 1.0, SomeUnreported()).endswith(
        "; tokens 1,200 in / 300 out (and 1 call unreported); cost unknown")
    assert "tokens 1,200 in (200 cached) / 300 out (and 1 call unreported); cost unknown" in SomeUnreported.stats.line("m")


# --- more cached tokens than sent ------------------------------------------------------------------

import json  # noqa: E402

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import pytest  # noqa: E402

from interleave_bench.llm.client import Unreadable, usage_of  # noqa: E402
from interleave_bench.llm.prices import Price  # noqa: E402

from _cli_util import run_cli  # noqa: E402
from _route_util import write_data  # noqa: E402

IMPOSSIBLE = {"input": 5, "output": 0, "cache_hit": 1000}


def impossible_run(tmp_path):
    sessions, rows = rows_with({0: {"input": 120, "output": 6, "cache_hit": 20}, 2: IMPOSSIBLE})
    data = write_data(tmp_path / "data", sessions)
    pred = tmp_path / "closed-llm.jsonl"
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return data, pred, rows


@pytest.mark.parametrize("command", ["score", "validate"])
def test_a_row_with_more_cached_tokens_than_sent_is_refused(tmp_path, capsys, command):
    data, pred, _ = impossible_run(tmp_path)
    code, out, err = run_cli(capsys, command, data, pred)
    assert code == 2 and str(pred) not in out  # (validate says the data is sound first)
    lines = err.strip().splitlines()  # (validate counts the file's errors after them)
    assert lines[0] == f"error: {pred}:3: usage.cache_hit: more cached tokens than the 5 input tokens sent (got 1000)"
    assert len(lines) == (1 if command == "score" else 2)


def test_a_parquet_row_with_more_cached_tokens_than_sent_is_refused(tmp_path, capsys):
    data, _, rows = impossible_run(tmp_path)
    pred = tmp_path / "closed-llm.parquet"
    pq.write_table(pa.Table.from_pylist(rows), pred)
    code, out, err = run_cli(capsys, "score", data, pred)
    assert code == 2 and "usage.cache_hit: more cached tokens than the 5 input tokens sent" in err
    assert len(err.strip().splitlines()) == 1


def test_the_model_layer_and_the_price_read_the_same_rule():
    assert usage_of({"prompt_tokens": 5, "completion_tokens": 1, "prompt_cache_hit_tokens": 5}).cached_input == 5
    with pytest.raises(Unreadable, match="1000 cached of 5 prompt tokens"):
        usage_of({"prompt_tokens": 5, "completion_tokens": 0, "prompt_cache_hit_tokens": 1000})
    assert Price(1, 0.5, 2).cost(3_000_000, 1_000_000, 1_000_000) == 2 + 0.5 + 2
    with pytest.raises(ValueError):  # never a figure for counts no reader takes
        Price(1, 0.5, 2).cost(5, 1000, 0)


def test_a_parquet_run_keeps_its_unreported_calls_as_its_jsonl_twin_does(tmp_path, capsys):
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from _cli_util import run_cli
    from _route_util import write_data

    sessions, rows = rows_with({0: {"input": 120, "output": 6, "cache_hit": 20},
                                1: {"input": 0, "output": 0, "cache_hit": 0, "unreported": 1}})
    data = write_data(tmp_path / "data", sessions)
    for row in rows:
        row["model"] = "deepseek-chat"  # a model of the price table: the cost is unknown for want of tokens only
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "twin.parquet")
    docs = []
    for name in ("run.jsonl", "twin.parquet"):
        code, out, err = run_cli(capsys, "score", data, tmp_path / name, "--json", "--bootstrap", 0)
        assert code == 0, err
        docs.append(json.loads(out))
    for doc in docs:
        assert doc["metrics"]["input_tokens_per_message"] is None and doc["cost_usd_per_message"] is None
        assert doc["cost_null_reason"] == "unreported"
