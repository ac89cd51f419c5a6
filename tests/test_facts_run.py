"""``interleave-bench facts`` end to end on loopback: a dry run with all five strategies, reruns with
no paid call, injected faults ending with the same rows, toy plug-in systems and the gate they
decide, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interleave_bench.cli import main
from interleave_bench.facts.results import read_rows
from interleave_bench.llm.server import Fault
from interleave_bench.facts.metrics import STRATEGIES

from _facts_util import PROBES, read_rows as read_json_rows, session, write_data

ROOT = Path(__file__).resolve().parents[1]
#: a safety net only: the barrier below releases long before, never a timing assumption
BARRIER_TIMEOUT_S = 120
#: the exit of a finished run on this data with the fake model: its facts and summary strategies tie
#: (or summary is not run), so ``beats_summary`` fails and the run does not pass (docs/facts.md)
NOT_PASSED = 1


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    return write_data(tmp_path / "data")


def run_facts(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["facts", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_dry_run_all_strategies_writes_valid_rows_and_a_rerun_pays_nothing(data, capsys):
    code, out, err = run_facts(capsys, str(data), "--dry-run")
    assert code == NOT_PASSED, err
    # the report's imports per request at the metric table's decimals (3), as the summary holds it
    summary = json.loads((data / "facts" / "fake-model.score.json").read_text(encoding="utf-8"))
    from interleave_bench.facts.report import report

    summary["metrics"]["routing"]["imports_per_request"] = 0.21  # 30 of 143 requests, as the summary holds it
    assert "imports per request 0.210" in report(summary["metrics"])
    results = data / "facts" / "fake-model.jsonl"
    rows = read_rows(results)  # every row valid against its record type
    kinds = [r.kind for _, r in rows]
    n_probes = 3 * len(PROBES)
    assert kinds.count("answer") == n_probes * len(STRATEGIES)
    assert kinds.count("session") == 3 and "error" not in kinds
    assert kinds.count("route") >= n_probes and kinds.count("delivery") > 0
    answers = [r for _, r in rows if r.kind == "answer"]
    assert {a.strategy for a in answers} == set(STRATEGIES)
    assert all(a.verdict and a.context_tokens > 0 for a in answers)
    assert all(a.notes_chars > 0 for a in answers if a.strategy in ("summary", "oracle"))
    assert all(a.notes_chars == 0 for a in answers if a.strategy in ("single", "own"))
    assert all(a.verdict == "correct" for a in answers if a.strategy == "oracle")
    assert "| oracle | 24 | 1.000" in out and "gate beats_summary" in out
    assert "done: facts: 3 sessions, 3 replayed now" in err and "0 failed" in err
    assert (data / "facts" / "fake-model.score.json").is_file()
    first = results.read_bytes()

    # the results kept: nothing to replay, no model at all
    code, out2, err = run_facts(capsys, str(data), "--dry-run")
    assert code == NOT_PASSED and "0 replayed now, 3 kept from earlier runs" in err and "paid calls" not in err
    assert results.read_bytes() == first
    # the results gone, the cache kept: every answer from the cache, 0 paid calls, the same bytes
    results.unlink()
    code, _, err = run_facts(capsys, str(data), "--dry-run")
    assert code == NOT_PASSED and "; 0 paid calls," in err, err
    assert results.read_bytes() == first


def test_facts_exits_as_score_facts_does_on_the_same_run(data, capsys, monkeypatch):
    """A CI gate reads the exit code: ``facts`` gives the one ``score-facts`` gives for its file, 1
    when the run did not pass (the fake model's facts and summary tie: beats_summary fails), 0 when
    it did (every gate passed, as with a model that gains from the facts)."""
    code, out, _ = run_facts(capsys, str(data), "--dry-run")
    results = data / "facts" / "fake-model.jsonl"
    assert "gate beats_summary: FAIL" in out and "passed: no" in out and code == 1
    assert main(["score-facts", str(results)]) == 1
    capsys.readouterr()
    from interleave_bench.facts import metrics

    gates = metrics.gates
    monkeypatch.setattr(metrics, "gates", lambda *a, **k: {n: {**g, "passed": True} for n, g in gates(*a, **k).items()})
    code, out, err = run_facts(capsys, str(data), "--dry-run")  # every session kept, scored again
    assert "passed: yes" in out and "0 replayed now" in err and code == 0
    assert main(["score-facts", str(results)]) == 0


def test_injected_faults_end_with_the_same_rows(data, openai_env, capsys, tmp_path):
    server = openai_env["server"]
    code, _, err = run_facts(capsys, str(data), "--model", "fake-model", "--out", str(tmp_path / "clean.jsonl"))
    assert code == NOT_PASSED, err
    clean = (tmp_path / "clean.jsonl").read_bytes()

    # every fifth distinct request (in order of arrival) fails once with 429 and a tiny Retry-After:
    # 20% of the requests; the client's retries absorb them
    server.reset_counts()
    seen: set[str] = set()
    faulted: set[str] = set()

    def one_in_five(raw, kind, code="429"):
        if raw in seen:
            return None
        seen.add(raw)
        if len(seen) % 5:
            return None
        faulted.add(raw)
        return Fault(code, retry_after=0.001) if code == "429" else Fault(code)

    server._take_fault = one_in_five
    out = tmp_path / "faulty.jsonl"
    code, _, err = run_facts(capsys, str(data), "--model", "fake-model", "--out", str(out), "--cache",
                             str(tmp_path / "cache-faults"))
    assert code == NOT_PASSED, err
    assert len(faulted) == len(seen) // 5 and len(faulted) >= 20
    assert out.read_bytes() == clean

    # a failure the client does not retry: the session is an error row, the run says so, a rerun finishes it
    seen.clear()
    server._take_fault = lambda raw, kind: one_in_five(raw, kind, "500")
    out3 = tmp_path / "resumed.jsonl"
    code, _, err = run_facts(capsys, str(data), "--model", "fake-model", "--out", str(out3), "--max-retries", "0",
                             "--cache", str(tmp_path / "cache-500"), "--concurrency", "1")
    assert code in (1, 2), err  # some (1) or every (2) session failed
    assert any(r["kind"] == "error" for r in read_json_rows(out3))
    assert main(["score-facts", str(out3)]) == 1
    capsys.readouterr()
    server._take_fault = lambda raw, kind: None
    code, _, err = run_facts(capsys, str(data), "--model", "fake-model", "--out", str(out3), "--cache",
                             str(tmp_path / "cache-500"))
    assert code == NOT_PASSED, err
    assert out3.read_bytes() == clean


def _gates(path: Path, capsys) -> dict:
    main(["score-facts", str(path), "--json"])
    out, _ = capsys.readouterr()
    return json.loads(out)["metrics"]["gates"]


def test_a_toy_system_delivering_a_proposal_fails_proposals_shared_and_a_current_only_one_passes(data, capsys):
    code, _, err = run_facts(capsys, str(data), "--dry-run", "--system", "_facts_toy:SharesProposals",
                             "--strategies", "facts,summary")
    assert code == NOT_PASSED, err
    bad = data / "facts" / "fake-model-shares-proposals.jsonl"
    rows = read_json_rows(bad)
    assert any(r["kind"] == "delivery" and r["verdict"] == "proposal" for r in rows)
    gates = _gates(bad, capsys)
    assert gates["proposals_shared"]["passed"] is False

    code, _, err = run_facts(capsys, str(data), "--dry-run", "--system", "_facts_toy:CurrentOnly",
                             "--strategies", "facts,summary")
    assert code == NOT_PASSED, err
    good = data / "facts" / "fake-model-current-only.jsonl"
    rows = read_json_rows(good)
    assert {r["verdict"] for r in rows if r["kind"] == "delivery"} <= {"current", "withdrawn"}
    gates = _gates(good, capsys)
    assert gates["proposals_shared"]["passed"] is True, gates["proposals_shared"]


def test_a_system_offering_lines_at_the_first_turn_routes_only_later_turns(data, capsys):
    """A sampled turn's route row names the turn its request follows; the first turn follows none, so
    a system that offers lines there too (every turn sampled) still gives valid rows."""
    code, _, err = run_facts(capsys, str(data), "--dry-run", "--system", "_facts_toy:Eager", "--route-turns", "1000")
    assert code == NOT_PASSED, err
    turns = [r["turn"] for r in read_json_rows(data / "facts" / "fake-model-eager.jsonl")
             if r["kind"] == "route" and r.get("probe") is None]
    assert turns and min(turns) >= 0


def test_bad_input_and_options_are_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = session()
    s["probes"][0]["source"] = "nowhere"
    data = write_data(tmp_path / "bad", [s])
    code, _, err = run_facts(capsys, str(data), "--dry-run")
    assert code == 2 and err.strip().count("\n") == 0
    assert err.startswith(f"error: {data / 'sessions.jsonl'}:1: probes[0].source:"), err
    good = write_data(tmp_path / "good")
    for args, needle in ((["--strategies", "facts,nope"], "--strategies"), (["--system", "nomodule_x:Y"], "--system"),
                         (["--system", "badspec"], "--system"), (["--route-turns", "-1"], "--route-turns")):
        code, _, err = run_facts(capsys, str(good), "--dry-run", *args)
        assert code == 2 and needle in err and err.strip().count("\n") == 0, err
    v0 = session()
    v0.pop("probes"), v0.pop("timeline")
    code, _, err = run_facts(capsys, str(write_data(tmp_path / "v0", [v0])), "--dry-run")
    assert code == 2 and "needs v1 data" in err


def test_a_rerun_replays_only_failed_changed_or_cut_off_sessions_and_refuses_another_systems_file(data, capsys):
    assert run_facts(capsys, str(data), "--dry-run")[0] == NOT_PASSED
    results = data / "facts" / "fake-model.jsonl"
    first = results.read_bytes()
    rows = read_json_rows(results)
    # en-0002 failed last time (an error row instead of its rows), and the file ends in half a line
    kept = [r for r in rows if r["session_id"] != "en-0002"]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept)
    results.write_text(text + json.dumps({"kind": "error", "session_id": "en-0002", "problem": "HTTP 500"}) + "\n"
                       + '{"kind":"answer","sess', encoding="utf-8")
    code, _, err = run_facts(capsys, str(data), "--dry-run")
    assert code == NOT_PASSED and "1 replayed now, 2 kept from earlier runs" in err, err
    assert results.read_bytes() == first
    # other strategies change every session's fingerprint: all replayed
    code, _, err = run_facts(capsys, str(data), "--dry-run", "--strategies", "facts,summary")
    assert code == NOT_PASSED and "3 replayed now, 0 kept" in err
    # a file of another system is refused, not mixed
    code, _, err = run_facts(capsys, str(data), "--dry-run", "--system", "_facts_toy:CurrentOnly", "--out", str(results))
    assert code == 2 and "choose another --out" in err


def test_a_rerun_refuses_a_file_holding_an_answer_twice_and_leaves_it_as_it_was(data, capsys):
    assert run_facts(capsys, str(data), "--dry-run")[0] == NOT_PASSED
    results = data / "facts" / "fake-model.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if json.loads(line)["kind"] == "answer")
    results.write_text("".join(lines[: at + 1] + [lines[at]] + lines[at + 1:]), encoding="utf-8")
    before = results.read_bytes()
    code, _, err = run_facts(capsys, str(data), "--dry-run")
    assert code == 2 and err.splitlines()[-1].startswith(f"error: {results}:{at + 2}: probe: second answer row for "), err
    assert f"(first on line {at + 1}); remove it" in err
    assert results.read_bytes() == before


def test_a_session_whose_routing_answer_named_no_topic_is_asked_again(data, capsys):
    assert run_facts(capsys, str(data), "--dry-run")[0] == NOT_PASSED
    results = data / "facts" / "fake-model.jsonl"
    first = results.read_bytes()
    rows = read_json_rows(results)
    route = next(i for i, r in enumerate(rows) if r["kind"] == "route" and r["session_id"] == "en-0002")
    rows[route] = {**rows[route], "without": None, "error": "the router's answer names no topic"}
    results.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    code, _, err = run_facts(capsys, str(data), "--dry-run")
    assert code == NOT_PASSED and "1 replayed now, 2 kept from earlier runs" in err, err
    assert "named no topic" not in err
    assert results.read_bytes() == first


def test_two_runs_on_one_output_one_finishes_the_other_exits_2_naming_the_holder(data, openai_env, capsys, tmp_path):
    server = openai_env["server"]
    out = tmp_path / "shared.jsonl"
    args = ["facts", str(data), "--model", "fake-model", "--out", str(out)]
    gate = server.hold()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen([sys.executable, "-m", "interleave_bench", *args], env=env, cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # barrier: the first run waits on its first model call, so it holds the output's lock
        assert server.arrived.wait(BARRIER_TIMEOUT_S)
        assert main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(out) in err[0] and f"pid {first.pid}" in err[0] and "facts" in err[0], err
    finally:
        gate.set()
        stdout, stderr = first.communicate(timeout=BARRIER_TIMEOUT_S)
    assert first.returncode == NOT_PASSED, stderr
    answers = [(r["probe"], r["strategy"]) for r in read_json_rows(out) if r["kind"] == "answer"]
    assert len(answers) == len(set(answers)) == 3 * len(PROBES) * len(STRATEGIES)


def test_a_run_made_with_a_relative_path_is_scored_again_from_any_folder(data, capsys, monkeypatch, tmp_path):
    """The summary names its data by its whole path: score-facts finds it wherever it is run."""
    monkeypatch.chdir(data.parent)
    assert run_facts(capsys, data.name, "--dry-run")[0] == NOT_PASSED
    results = data / "facts" / "fake-model.jsonl"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["score-facts", str(results)]) in (0, 1)  # 1: a gate fails, as in the run's own summary
    assert "error" not in capsys.readouterr().err


def test_scoring_a_run_again_keeps_its_data_judges_against_it_and_refuses_when_it_is_gone(data, capsys):
    assert run_facts(capsys, str(data), "--dry-run")[0] == NOT_PASSED
    results = data / "facts" / "fake-model.jsonl"
    summary = results.with_name("fake-model.score.json")
    first = json.loads(summary.read_text(encoding="utf-8"))
    assert first["data"]["path"] == str(data / "sessions.jsonl") and first["split"] == "dev"
    # scored again without --data: the data the summary names is kept, and judged against
    assert main(["score-facts", str(results)]) in (0, 1)  # 1: a gate fails, as in the run's own summary
    capsys.readouterr()
    again = json.loads(summary.read_text(encoding="utf-8"))
    assert {k: again[k] for k in ("data", "split", "metrics")} == {k: first[k] for k in ("data", "split", "metrics")}
    assert again["provenance"]["data_sha256"] == first["data"]["sha256"]
    # an answer edited to say a wrong value but still marked correct is refused against that data
    rows = read_json_rows(results)
    k = next(i for i, r in enumerate(rows) if r["kind"] == "answer" and r["verdict"] == "correct")
    rows[k] = {**rows[k], "answer": "banana"}
    results.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert main(["score-facts", str(results)]) == 2
    assert f"{results}:{k + 1}: verdict: says 'correct'" in capsys.readouterr().err
    # the data changed since: refused naming the fingerprint, the summary left as it was
    original = (data / "sessions.jsonl").read_text(encoding="utf-8")
    (data / "sessions.jsonl").write_text(original.splitlines(keepends=True)[0], encoding="utf-8")
    before = summary.read_bytes()
    assert main(["score-facts", str(results)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {summary}: data.sha256: ") and "--data" in err, err
    assert summary.read_bytes() == before
    (data / "sessions.jsonl").write_text(original, encoding="utf-8")
    # the data gone: one line naming the summary's field, and the summary is left as it was
    (data / "sessions.jsonl").rename(data / "moved.jsonl")
    before = summary.read_bytes()
    assert main(["score-facts", str(results)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {summary}: data.path: ") and "--data" in err and err.strip().count("\n") == 0, err
    assert summary.read_bytes() == before


@pytest.mark.parametrize("how, said", [
    ("raise", "system broken: observe() at turn 5 raised RuntimeError: lost the notebook"),
    ("none", "system broken: candidates() at the session's start returned NoneType None: expected a list of FactLine"),
    ("dicts", "system broken: candidates() at the session's start returned dict {'source': 'move', 'key': 'budget', "
              "'value': '700 EUR'} at [0]: expected a FactLine"),
    ("ints", "system broken: candidates() at the session's start returned a FactLine whose key is int 123 at [0]: "
             "expected text"),
    ("text", "system broken: deliver() for topic 'move' after turn 2 returned str 'move budget 700 EUR': expected a "
             "list of FactLine"),
    ("briefing", "system broken: briefing() of the delivered lines returned int 42: expected text"),
])
def test_a_system_that_breaks_the_protocol_fails_its_session_as_an_error_row_and_the_run_goes_on(data, capsys,
                                                                                                 monkeypatch, how, said):
    import _facts_toy

    monkeypatch.setattr(_facts_toy.Broken, "BREAK", how)
    code, _, err = run_facts(capsys, str(data), "--dry-run", "--system", "_facts_toy:Broken", "--strategies", "facts",
                             "--no-cache")
    assert code == 1 and "internal error" not in err, err
    assert f"warning: 1 session failed and is recorded as an error row (first: {said}); run the same command" in err, err
    rows = read_json_rows(data / "facts" / "fake-model-broken.jsonl")
    assert [(r["session_id"], r["problem"]) for r in rows if r["kind"] == "error"] == [("en-0002", said)]
    finished = {r["session_id"] for r in rows if r["kind"] == "session"}
    assert finished == {"en-0001", "zh-0001"}  # the other sessions' work is kept, with --no-cache too
    # fixed, the same command replays only the failed session
    monkeypatch.setattr(_facts_toy.Broken, "BREAK", "nothing")
    code, _, err = run_facts(capsys, str(data), "--dry-run", "--system", "_facts_toy:Broken", "--strategies", "facts",
                             "--no-cache")
    assert code == NOT_PASSED and "1 replayed now, 2 kept from earlier runs" in err, err


def test_the_projects_own_refusal_inside_a_system_stops_the_run_in_one_line(data, capsys, monkeypatch):
    """A system's call that meets a refusal of the project's (a response cache it cannot use) is no
    bug of the system: the run stops with that one line, exit 2, the finished sessions kept."""
    import _facts_toy

    monkeypatch.setattr(_facts_toy.Broken, "BREAK", "project")
    code, _, err = run_facts(capsys, str(data), "--dry-run", "--system", "_facts_toy:Broken", "--strategies", "facts",
                             "--no-cache")
    assert code == 2 and err.splitlines()[-1] == "error: cache/llm.sqlite: cannot be used as the response cache", err
    rows = read_json_rows(data / "facts" / "fake-model-broken.jsonl")
    assert not [r for r in rows if r["kind"] == "error"] and {r["session_id"] for r in rows} <= {"en-0001", "zh-0001"}


def test_a_system_of_plain_functions_gives_what_its_async_twin_gives(data, capsys):
    for spec in ("_facts_toy:CurrentOnly", "_facts_toy:Sync"):
        code, _, err = run_facts(capsys, str(data), "--dry-run", "--system", spec, "--strategies", "facts")
        assert code == NOT_PASSED, err
    strip = [{k: v for k, v in r.items() if k not in ("system", "fingerprint")} for r in
             read_json_rows(data / "facts" / "fake-model-current-only.jsonl")]
    assert strip == [{k: v for k, v in r.items() if k not in ("system", "fingerprint")} for r in
                     read_json_rows(data / "facts" / "fake-model-sync.jsonl")]


def test_an_interrupted_run_keeps_the_sessions_it_finished(tmp_path):
    """Sessions run a few at a time (two per allowed request), in order, and each is written when it
    ends: Ctrl-C keeps those, and the rerun replays only the rest."""
    import _facts_util

    data = _facts_util.write_data(tmp_path / "v1", [_facts_util.session(f"en-{k:04d}") for k in range(1, 7)])
    out = tmp_path / "facts.jsonl"
    args = ["facts", str(data), "--dry-run", "--concurrency", "1", "--system", "_facts_toy:StopsAtFourth",
            "--out", str(out)]
    # in a process of its own, as Ctrl-C stops one (an interrupt raised through this process's event
    # loop upsets its interpreter state for the tests after it)
    tests = str(Path(__file__).resolve().parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")]),
           "INTERLEAVE_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom interleave_bench.cli import main\n"
                           "sys.exit(main(sys.argv[1:]))", *args], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 130, done.stderr
    kept = {r["session_id"] for r in _facts_util.read_rows(out) if r["kind"] == "session"}
    # (all six in flight at once, the fourth stopped the run before any had finished: none was kept)
    assert len(kept) >= 2 and "en-0004" not in kept and "en-0001" in kept
    # the line it ends with says how many the file holds, and that the answers paid for are in the cache
    assert [line for line in done.stderr.splitlines() if line.startswith("interrupted: ")] == [
        f"interrupted: {len(kept)} of 6 sessions finished and kept in {out}; the model's answers so far are kept in "
        f"the response cache ({tmp_path / 'cache'}), so a rerun does not pay for them again; run the same command "
        "again to resume"]
