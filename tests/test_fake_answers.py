"""Answers of the project's fake model under another model's name: the fake server marks each one,
the client counts them, the run record keeps the count, and the board refuses such a run."""

from __future__ import annotations

import asyncio
import json
import shutil
from types import SimpleNamespace

import openai

import _board_util as b
from _hub_util import hub  # noqa: F401  (the fixture)
from interleave_bench.documents import RunRecord, RunUsage, run_record_path
from interleave_bench.llm.client import RunStats, _checked
from interleave_bench.llm.provider import FAKE_FINGERPRINT

from _cli_util import run_cli
from _route_util import standard_sessions, write_data

BOARD = "org/interleavebench-leaderboard"


def test_the_fake_server_marks_every_answer_and_echoes_the_model_asked_for(fake_server):
    async def ask(model: str):
        client = openai.AsyncOpenAI(api_key="any-key", base_url=fake_server.url, max_retries=0)
        try:
            return await client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": "hello"}], extra_headers={"X-Interleave-Kind": "test"})
        finally:
            await client.close()

    for model in ("gpt-4o-mini", "fake-model"):
        resp = asyncio.run(ask(model))
        assert resp.model == model  # the echo is kept: a client shows the name it asked for
        assert resp.system_fingerprint == FAKE_FINGERPRINT  # the field the openai client exposes says whose answer it is


def _record(path) -> dict:
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert RunRecord.model_validate(raw).dump() == raw  # what is written is exactly the typed record
    return raw


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if "came from the project's fake model" in line]


def test_a_route_run_answered_by_the_fake_server_under_a_models_name_says_so_and_records_it(openai_env, tmp_path, capsys):
    """The user's run: OPENAI_BASE_URL at the fake server, ``--model gpt-4o-mini``. It is not
    refused, but every answer is counted in the record, and stderr says whose answers they were;
    a rerun from the cache counts them again."""
    data = write_data(tmp_path / "data")
    run = ("route", data, "--mode", "closed", "--policy", "hybrid", "--threshold", "0.7", "--model", "gpt-4o-mini")
    code, out, err = run_cli(capsys, *run)
    assert code == 0, err
    record = data / "predictions" / "closed-hybrid-t0.7-gpt-4o-mini.run.json"
    usage = _record(record)["usage"]
    assert usage["calls"] > 0 and usage["fake_answers"] == usage["calls"] == openai_env["server"].completions
    (line,) = _warnings(err)
    n = usage["calls"]
    assert line == (f"warning: {n:,} answer{'s' if n != 1 else ''} came from the project's fake model (fake-model: its server "
                    "marks each one), not from gpt-4o-mini: the figures are its keyword matching; a route run's record "
                    "counts them (usage.fake_answers), and the leaderboard refuses the run")
    assert "fake" not in out  # stdout (the rows written, the summary, the cost line) is as before

    # started over from the cache: no call reaches the server, and the answers are still the fake model's
    code, _, err = run_cli(capsys, *run, "--fresh")
    assert code == 0, err
    again = _record(record)["usage"]
    assert again["calls"] == 0 and again["cached"] == again["fake_answers"] == usage["calls"]
    assert len(_warnings(err)) == 1


def test_the_fake_model_under_its_own_name_and_a_real_servers_answers_count_nothing(openai_env, tmp_path, capsys):
    data = write_data(tmp_path / "data", standard_sessions()[:2])
    # a dry run, and the fake server asked for fake-model: the name already says whose answers they are
    code, _, err = run_cli(capsys, "route", data, "--mode", "closed", "--policy", "llm", "--dry-run")
    assert code == 0, err
    assert _record(data / "predictions-dry" / "closed-llm-fake-model.run.json")["usage"]["fake_answers"] == 0
    assert _warnings(err) == []
    code, _, err = run_cli(capsys, "route", data, "--mode", "closed", "--policy", "llm", "--model", "fake-model")
    assert code == 0, err
    assert _record(data / "predictions" / "closed-llm-fake-model.run.json")["usage"]["fake_answers"] == 0
    assert _warnings(err) == []
    # an answer without the mark (any other server) counts nothing
    stats = RunStats()
    resp = SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content="t1"), finish_reason="stop")],
                           usage=None, system_fingerprint="fp_44709d6fcb")
    assert _checked(resp)[3] is False and stats.fake_line("gpt-4o-mini") is None


def test_a_record_written_before_fake_answers_were_counted_reads_as_none():
    assert RunUsage.model_validate({"calls": 3}).fake_answers == 0


def test_the_board_refuses_a_route_run_its_record_says_the_fake_model_answered(openai_env, hub, tmp_path, capsys):
    """The user's finding: the run above, added to the board, was ranked 2nd as gpt-4o-mini. It is
    refused in one line naming its run record and field; nothing is published."""
    data, _ = b.baselines(tmp_path / "data")
    assert run_cli(capsys, "route", data, "--mode", "closed", "--policy", "llm", "--model", "gpt-4o-mini")[0] == 0
    pred = data / "predictions" / "closed-llm-gpt-4o-mini.jsonl"
    record = run_record_path(pred)
    n = _record(record)["usage"]["fake_answers"]
    assert n > 0 and all(json.loads(x)["model"] == "gpt-4o-mini" for x in pred.read_text().splitlines() if '"model"' in x)
    code, out, err = run_cli(capsys, "leaderboard", "add", pred, "--data", data, "--repo", BOARD)
    assert code == 2 and out == ""
    assert err == (f"error: {record}: usage.fake_answers: {n:,} (answered by the project's fake-model, whose server "
                   "marks each answer, not by gpt-4o-mini): the board ranks real runs\n")
    # a score file of the run is refused the same way: the board reads the record beside the predictions it names
    score = tmp_path / "run.score.json"
    b.score_file(data, pred, out=score)
    code, _, err = run_cli(capsys, "leaderboard", "add", score, "--repo", BOARD)
    assert code == 2 and err.startswith(f"error: {record}: usage.fake_answers: {n:,} ") and err.count("\n") == 1, err
    assert run_cli(capsys, "leaderboard", "show", "--repo", BOARD)[0] == 2  # nothing was published

    # the same rows without their record are judged by the rows alone, as before
    bare = tmp_path / "bare" / pred.name
    bare.parent.mkdir()
    shutil.copy(pred, bare)
    code, _, err = run_cli(capsys, "leaderboard", "add", bare, "--data", data, "--repo", BOARD)
    assert code == 0, err


def test_a_record_beside_the_predictions_that_is_no_run_record_is_one_line(openai_env, hub, tmp_path, capsys):
    data, preds = b.baselines(tmp_path / "data")
    record = run_record_path(preds["closed-bm25"])
    record.write_text(json.dumps({"format": "interleave-run-v1", "usage": {"fake_answers": -1}}), encoding="utf-8")
    code, _, err = run_cli(capsys, "leaderboard", "add", preds["closed-bm25"], "--data", data, "--repo", BOARD)
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"error: {record}: "), err
