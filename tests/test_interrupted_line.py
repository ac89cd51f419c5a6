"""The line Ctrl-C ends a run with says what was kept: how much of the work its output holds (0
included), and where the model's answers paid for are: in the response cache, so a rerun pays
for none of them again, or, with ``--no-cache``, nowhere, so a rerun pays for them again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interleave_bench.interrupted import interrupted_line

from _cli_util import run_cli
from _midreply_util import read_rows as read_results
from _route_util import read_rows, standard_sessions, write_data

ROUTE = ("--mode", "closed", "--policy", "llm", "--model", "m1")


def stop_calls(monkeypatch, when):
    """Ctrl-C at the model call for which ``when(calls asked so far)`` is true; returns a function
    that puts the client's own call back."""
    from interleave_bench.llm import client

    real, asked = client.LLM.complete, []

    async def stopped(self, *args, **kwargs):
        if when(len(asked)):
            raise KeyboardInterrupt  # the user's Ctrl-C
        asked.append(1)
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(client.LLM, "complete", stopped)
    return lambda: monkeypatch.setattr(client.LLM, "complete", real)


def usage_of(pred: Path) -> dict:
    return json.loads(pred.with_suffix(".run.json").read_text(encoding="utf-8"))["usage"]


@pytest.mark.parametrize("cache", [True, False])
def test_a_run_stopped_before_any_session_finished_says_none_is_kept_and_where_the_answers_are(
        openai_env, tmp_path, capsys, monkeypatch, cache):
    """Sessions progress together and are written in order: stopped early, none is in the file."""
    data = write_data(tmp_path / "data", standard_sessions()[:2])
    pred = data / "predictions" / "closed-llm-m1.jsonl"
    no_cache = () if cache else ("--no-cache",)
    unstopped = stop_calls(monkeypatch, lambda n: n == 4)
    code, _, err = run_cli(capsys, "route", data, *ROUTE, *no_cache)
    assert code == 130 and not pred.exists(), err
    paid = usage_of(pred)["calls"]  # the answers that came back (those in flight are lost)
    assert paid > 0
    answers = (f"the model's answers so far are kept in the response cache ({openai_env['cache']}), so a rerun does "
               "not pay for them again" if cache else
               "the model's answers are not kept (--no-cache), so a rerun pays again for those of the work not kept")
    assert err.splitlines()[-1] == (f"interrupted: 0 of 2 sessions finished, so none is kept in {pred}; {answers}; "
                                    "run the same command again to resume")
    # and so it is: the rerun takes every answer paid for from the cache, or (--no-cache) pays for each again
    unstopped()
    assert run_cli(capsys, "route", data, *ROUTE, *no_cache)[0] == 0
    assert usage_of(pred)["cached"] == (paid if cache else 0)


def test_a_run_stopped_after_some_sessions_says_how_many_its_file_holds(openai_env, tmp_path, capsys, monkeypatch):
    data = write_data(tmp_path / "data")
    pred = data / "predictions" / "closed-llm-m1.jsonl"
    # Ctrl-C at the first call after a session is written (one request at a time)
    stop_calls(monkeypatch, lambda n: pred.exists() and pred.stat().st_size > 0)
    code, _, err = run_cli(capsys, "route", data, *ROUTE, "--concurrency", "1")
    assert code == 130, err
    held = len({r["session_id"] for r in read_rows(pred)})
    assert 0 < held < 5
    assert err.splitlines()[-1] == (f"interrupted: {held} of 5 sessions finished and kept in {pred}; the model's "
                                    f"answers so far are kept in the response cache ({openai_env['cache']}), so a "
                                    "rerun does not pay for them again; run the same command again to resume")


def test_a_stopped_mid_reply_run_says_how_many_cases_its_file_holds(openai_env, tmp_path, capsys, monkeypatch):
    from interleave_bench.llm import client

    real, answered = client.LLM.complete, []

    async def stopped(self, *args, **kwargs):  # every case asks at once: Ctrl-C as the fifth answer comes back
        reply = await real(self, *args, **kwargs)
        answered.append(1)
        if len(answered) == 5:
            raise KeyboardInterrupt
        return reply

    monkeypatch.setattr(client.LLM, "complete", stopped)
    out = tmp_path / "mid.jsonl"
    code, _, err = run_cli(capsys, "mid-reply", "--model", "m1", "--concurrency", "1", "--out", out)
    assert code == 130, err
    held = len(read_results(out))
    assert held >= 4  # the four cases answered, and the bare acknowledgements the rule decides with no call
    assert err.splitlines()[-1] == (f"interrupted: {held} of 60 cases finished and kept in {out}; the model's answers "
                                    f"so far are kept in the response cache ({openai_env['cache']}), so a rerun does "
                                    "not pay for them again; run the same command again to resume")


def test_a_stopped_generate_run_says_how_many_sessions_it_kept(tmp_path):
    from interleave_bench.generate.runner import GenerateConfig, generate

    def stop_after_three(ident, ok):
        if ident.index == 2:
            raise KeyboardInterrupt

    out = tmp_path / "gen"
    with pytest.raises(KeyboardInterrupt) as stopped:
        generate(7, out, config=GenerateConfig(seed=4), after_session=stop_after_three)
    # the file that holds them until the run ends, named: the folder shows no sessions.jsonl yet
    work = out / ".sessions.work.jsonl"
    assert interrupted_line(stopped.value) == (f"interrupted: 3 of 7 sessions finished and kept in {work}; run the "
                                               "same command again to resume")
    assert len(work.read_text(encoding="utf-8").splitlines()) == 1 + 3  # its options, then the three sessions


def test_a_command_that_says_nothing_of_its_output_keeps_the_plain_line():
    assert interrupted_line(KeyboardInterrupt(), "without --fresh") == (
        "interrupted: finished work is kept; run the same command without --fresh to resume")


def test_a_stopped_sweep_says_which_thresholds_runs_are_complete(openai_env, tmp_path, capsys, monkeypatch):
    data = write_data(tmp_path / "data")
    stop_calls(monkeypatch, lambda n: True)  # at 0 local decides every message: the first call is at 0.5
    code, _, err = run_cli(capsys, "route", data, "--mode", "closed", "--policy", "hybrid", "--model", "m1",
                           "--sweep-threshold", "0,0.5")
    assert code == 130, err
    pred = data / "predictions" / "closed-hybrid-t0.5-m1.jsonl"
    assert err.splitlines()[-1] == (f"interrupted: 0 of 5 sessions finished, so none is kept in {pred}; the "
                                    "threshold runs at 0 are complete; run the same command again to resume")
