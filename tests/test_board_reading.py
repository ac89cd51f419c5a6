"""The board reads a predictions file as the scorer reads it (``leaderboard add`` scores it with the
scorer, then reads its rows for their fingerprints): what ``score`` takes, the board takes, in
JSONL or Parquet alike, and what it refuses is one line naming the file and line, never an internal
error."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import _board_util as b
from interleave_bench.errors import InputError
from interleave_bench.hub.board_score import score_given
from interleave_bench.score.run import score_files


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return b.baselines(tmp_path_factory.mktemp("board-reading") / "data")


def test_a_parquet_run_whose_usage_names_some_fields_is_the_jsonl_run(runs, tmp_path):
    data, preds = runs
    rows = [json.loads(line) for line in preds["closed-bm25"].read_text(encoding="utf-8").splitlines()]
    for k, r in enumerate(rows):  # a usage struct: a row that names no output holds a null there
        r["usage"] = {"input": 40 + k, "output": 3} if k % 2 else {"input": 40 + k}
    jsonl = tmp_path / "closed-usage.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    parquet = tmp_path / "closed-usage.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    assert pq.read_table(parquet).to_pylist()[0]["usage"] == {"input": 40, "output": None}
    assert score_files(data, [parquet], bootstrap=0, write=False)[0].result["counts"]["sessions"]  # score takes it
    (a,), (p,) = (score_given([str(f)], data=str(data)) for f in (jsonl, parquet))
    assert p.rows_sha256 == a.rows_sha256 and p.decisions_sha256 == a.decisions_sha256


@pytest.mark.parametrize("name,edit,line", [
    ("two rows on one line", lambda ls: [ls[0] + ls[1], *ls[2:]], 1),
    ("a row over two lines", lambda ls: [*ls[:2], *ls[2].replace(',"i"', ',\n"i"', 1).split("\n"), *ls[3:]], 3),
])
def test_a_line_holding_other_than_one_row_is_one_line_naming_it(runs, tmp_path, name, edit, line):
    data, preds = runs
    lines = preds["closed-bm25"].read_text(encoding="utf-8").splitlines()
    pred = tmp_path / "run.jsonl"
    pred.write_text("\n".join(edit(lines)) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as got:
        score_given([str(pred)], data=str(data))
    errors = getattr(got.value, "errors", [got.value])
    assert errors[0].format().startswith(f"{pred}:{line}: invalid JSON: "), [e.format() for e in errors]
