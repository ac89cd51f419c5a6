"""``interleave-bench mid-reply`` end to end: rule-only, dry run, the real client, the rule under faults, resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interleave_bench.llm import fake as fake_model
from interleave_bench.midreply.prompt import REQUEST_KIND

from _midreply_util import case, read_rows, run_cli, small_case_file, table_row

#: the packaged set: 60 cases, 34 belong with the running work, 26 elsewhere, 5 bare acknowledgements
N_CASES, N_RUNNING, N_ELSEWHERE, N_ACKS = 60, 34, 26, 5


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """Run in tmp (default results/ and .cache/ land there), with the response cache in tmp too."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    return tmp_path


def _answer_always(monkeypatch, text):
    """Make the fake model's classifier give ``text`` to every mid-reply request."""
    monkeypatch.setitem(fake_model.HANDLERS, REQUEST_KIND, lambda messages, body: text)


def test_rule_only_end_to_end(workdir, capsys):
    code, out, err = run_cli(capsys, "mid-reply", "--rule-only")
    assert code == 0, err
    results = workdir / "results" / "mid-reply-rule.jsonl"
    rows = read_rows(results)
    assert len(rows) == N_CASES
    assert {r["destination"] for r in rows} == {"running"}
    assert sum(r["via"] == "ack" for r in rows) == N_ACKS
    assert all(r["via"] in ("ack", "rule-only") and r["answer"] is None and r["usage"] is None for r in rows)
    assert err.startswith("mid-reply: policy rule; 60 cases from packaged cases")
    assert out.startswith("| ") and out.strip().endswith("|")  # stdout is the table alone (> table.md)
    # everything stays: exact = right side = 34/60; every case that belongs elsewhere is mixed in
    assert table_row(out, "**all**") == [
        "**all**", "60", "56.7% [44.1–68.4]", "56.7% [44.1–68.4]", "100.0% (26/26) [87.1–100.0]", "0.0% (0/34) [0.0–10.2]"]
    assert table_row(out, "expect=new")[4].startswith("100.0% (9/9)")
    assert "decided by: rule-only 55, ack 5" in err
    assert "done: mid-reply: 60 cases, 60 decided now" in err and "model " not in err
    summary = json.loads((workdir / "results" / "mid-reply-rule.score.json").read_text(encoding="utf-8"))
    assert summary["policy"] == "rule" and summary["model"] is None
    assert summary["metrics"]["mixed_in"] == {"value": 1.0, "k": N_ELSEWHERE, "n": N_ELSEWHERE, "ci95": [0.8713, 1.0]}
    assert summary["decisions"] == {"ack": 5, "rule-only": 55}
    assert summary["cases"]["sha256"].startswith("sha256:") and summary["provenance"]["package"] == "interleave-bench"


def test_dry_run_end_to_end_resumes_and_is_byte_identical(workdir, capsys):
    code, out, err = run_cli(capsys, "mid-reply", "--dry-run")
    assert code == 0, err
    results = workdir / "results" / "mid-reply-classifier-fake-model-dry.jsonl"
    rows = read_rows(results)
    assert [r["case_id"] for r in rows][:2] == ["en-01", "en-02"] and len(rows) == N_CASES
    called = [r for r in rows if r["via"] != "ack"]
    assert len(called) == N_CASES - N_ACKS
    assert all(r["answer"] and r["usage"]["input"] > 0 and r["model"] == "fake-model" for r in called)
    assert all(r["answer"] is None and r["usage"] is None for r in rows if r["via"] == "ack")
    assert "| **all** | 60 |" in out and "mid-reply: policy classifier (model fake-model, dry run)" in err
    assert "model fake-model: 55 paid calls, 0 from cache, 0 failed" in err
    # the fake classifier is fallible in both directions, and better than staying everywhere
    summary = json.loads(results.with_name("mid-reply-classifier-fake-model-dry.score.json").read_text(encoding="utf-8"))
    m = summary["metrics"]
    assert N_RUNNING < m["accuracy"]["k"] < N_CASES
    assert 0 < m["mixed_in"]["k"] < N_ELSEWHERE and 0 < m["split_off"]["k"] < N_RUNNING
    assert summary["usage"]["rows_with_call"] == 55 and summary["usage"]["this_run"]["calls"] == 55
    first = results.read_bytes()

    code, out, err = run_cli(capsys, "mid-reply", "--dry-run")
    assert code == 0 and "0 decided now, 60 kept from earlier runs" in err
    assert "model fake-model:" not in err.split("done:")[0]  # nothing left to ask: no model session, no cost line
    assert results.read_bytes() == first

    results.unlink()  # from scratch: every answer comes from the response cache, same bytes
    code, out, err = run_cli(capsys, "mid-reply", "--dry-run")
    assert code == 0 and "0 paid calls, 55 from cache" in err
    assert results.read_bytes() == first


def _write_rows(path: Path, rows: list[dict]) -> bytes:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path.read_bytes()


def test_a_kept_row_whose_own_answer_gives_another_decision_is_refused(workdir, capsys):
    assert run_cli(capsys, "mid-reply", "--dry-run")[0] == 0
    results = Path("results") / "mid-reply-classifier-fake-model-dry.jsonl"
    rows = read_rows(results)
    wrong = [n for n, r in enumerate(rows) if r["destination"] != r["expect"]]
    assert 0 < len(wrong) < N_CASES - N_ACKS
    # every wrong destination set to the case's expect: the row's classifier, answer and via
    # still say where the classifier sent it
    edited = _write_rows(results, [{**r, "destination": r["expect"]} for r in rows])
    code, out, err = run_cli(capsys, "mid-reply", "--dry-run")
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"error: {results}:{n + 1}: destination: says {rows[n]['expect']!r}, but the rule gives "
        f"{rows[n]['destination']!r} from the row's own answer, read as {rows[n]['classifier']!r}" for n in wrong]
    assert results.read_bytes() == edited  # refused before anything is rewritten
    # a wrong answer said undecided; a bare acknowledgement said to be the classifier's
    first, ack = wrong[0], next(n for n, r in enumerate(rows) if r["via"] == "ack")
    forged = [dict(r) for r in rows]
    forged[first].update(destination="running", via="unsure")
    forged[ack].update(via="classifier")
    _write_rows(results, forged)
    code, _, err = run_cli(capsys, "mid-reply", "--dry-run")
    assert code == 2 and err.splitlines() == [
        f"error: {results}:{first + 1}: via: says 'unsure', but the rule gives 'classifier' from the row's own "
        f"answer, read as {rows[first]['classifier']!r}",
        f"error: {results}:{ack + 1}: via: says 'classifier', but the rule gives 'ack' from the message of case "
        f"{rows[ack]['case_id']!r}, a bare acknowledgement (no call)"]
    # a row said to be a failed call is not believed either: it is decided again (from the cache)
    forged = [dict(r) for r in rows]
    forged[first].update(destination="running", via="error", classifier=None, answer=None, usage=None, problem="HTTP 500")
    _write_rows(results, forged)
    code, _, err = run_cli(capsys, "mid-reply", "--dry-run")
    assert code == 0 and "1 decided now, 59 kept from earlier runs" in err
    assert read_rows(results) == rows


def test_real_client_against_the_fake_server(openai_env, tmp_path, capsys):
    server = openai_env["server"]
    out_file = tmp_path / "zh.jsonl"
    code, out, err = run_cli(capsys, "mid-reply", "--model", "fake-model", "--lang", "zh", "--out", str(out_file))
    assert code == 0, err
    rows = read_rows(out_file)
    assert len(rows) == 30 and {r["lang"] for r in rows} == {"zh"}
    acks = sum(r["via"] == "ack" for r in rows)
    assert server.completions == 30 - acks  # one call per message, none for acknowledgements
    assert {entry.kind for entry in server.log} == {REQUEST_KIND}
    sent = server.log[0].body
    assert sent["model"] == "fake-model" and sent["temperature"] == 0.0
    assert "正在进行的工作" in sent["messages"][0]["content"]  # the prompt is in the case's language
    assert "| lang=zh | 30 |" in out and "lang=en" not in out
    key = openai_env["key"]
    for path in [out_file, out_file.with_name("zh.score.json"), *Path(openai_env["cache"]).rglob("*")]:
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path


def test_a_failed_call_stays_is_recorded_and_is_retried_next_time(openai_env, tmp_path, capsys):
    server = openai_env["server"]
    server.add_fault("500", times=1, match="Lisbon numbers")
    out_file = tmp_path / "r.jsonl"
    args = ("mid-reply", "--model", "fake-model", "--lang", "en", "--max-retries", "0", "--out", str(out_file))
    code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    row = next(r for r in read_rows(out_file) if r["case_id"] == "en-01")
    assert (row["destination"], row["via"], row["answer"], row["usage"]) == ("running", "error", None, None)
    assert "HTTP 500" in row["problem"]
    assert "warning: 1 classifier call failed" in err and "error 1" in err
    # the next run tries the failed case again (and only it; everything else is kept)
    server.reset_counts()
    code, out, err = run_cli(capsys, *args)
    assert code == 0 and server.completions == 1 and "1 decided now" in err
    row = next(r for r in read_rows(out_file) if r["case_id"] == "en-01")
    assert row["via"] == "classifier" and row["answer"]


def test_an_unreadable_answer_stays_keeps_the_raw_text_and_is_asked_again_next_time(openai_env, tmp_path, capsys):
    server = openai_env["server"]
    server.add_fault("garbage", times=1, match="Lisbon numbers")
    out_file = tmp_path / "r.jsonl"
    args = ("mid-reply", "--model", "fake-model", "--lang", "en", "--out", str(out_file))
    code, _, err = run_cli(capsys, *args)
    assert code == 0, err
    row = next(r for r in read_rows(out_file) if r["case_id"] == "en-01")
    assert (row["destination"], row["via"], row["classifier"]) == ("running", "unparsable", None)
    assert row["answer"].startswith("I am not sure what you mean") and row["problem"].startswith("no destination")
    assert row["usage"]["output"] > 0
    # the next run asks the model again for that case (and only it): the unreadable answer was
    # dropped from the response cache, so it is not replayed
    server.reset_counts()
    code, _, err = run_cli(capsys, *args)
    assert code == 0 and server.completions == 1 and "1 decided now" in err
    assert "Lisbon numbers" in json.dumps(server.log[0].body, ensure_ascii=False)
    row = next(r for r in read_rows(out_file) if r["case_id"] == "en-01")
    assert row["via"] == "classifier" and row["problem"] is None
    # from scratch, every answer (the new one included) comes from the cache
    server.reset_counts()
    code, _, err = run_cli(capsys, "mid-reply", "--model", "fake-model", "--lang", "en", "--out", str(tmp_path / "again.jsonl"))
    assert code == 0 and server.calls == 0
    assert (tmp_path / "again.jsonl").read_bytes() == out_file.read_bytes()


def test_when_every_call_fails_the_run_says_so(openai_env, tmp_path, capsys):
    openai_env["server"].add_fault("500", times=100)
    cases = small_case_file(tmp_path, [case("c1", "put the Lisbon numbers in too", "running"),
                                       case("c2", "does TAP let me pick seats?", "trip"), case("c3", "ok", "running")])
    out_file = tmp_path / "r.jsonl"
    code, out, err = run_cli(capsys, "mid-reply", str(cases), "--model", "fake-model", "--max-retries", "0",
                             "--out", str(out_file))
    assert code == 2
    assert "error: every classifier call failed (2)" in err and "HTTP 500" in err
    assert [r["via"] for r in read_rows(out_file)] == ["error", "error", "ack"]  # still recorded


def test_an_undecided_answer_stays(openai_env, tmp_path, capsys, monkeypatch):
    _answer_always(monkeypatch, '{"destination": "unsure"}')
    cases = small_case_file(tmp_path, [case("c1", "does TAP let me pick seats?", "trip"),
                                       case("c2", "what's a good gift for a neighbour?", "new")])
    out_file = tmp_path / "r.jsonl"
    code, out, err = run_cli(capsys, "mid-reply", str(cases), "--model", "fake-model", "--out", str(out_file))
    assert code == 0, err
    assert [(r["destination"], r["via"], r["classifier"]) for r in read_rows(out_file)] == [
        ("running", "unsure", "unsure"), ("running", "unsure", "unsure")]
    assert "decided by: unsure 2" in err
    # kept as they are on the next run: the rule gives the same from their own answers
    code, _, err = run_cli(capsys, "mid-reply", str(cases), "--model", "fake-model", "--out", str(out_file))
    assert code == 0 and "0 decided now, 2 kept from earlier runs" in err


def test_a_bare_ack_stays_with_no_call_even_when_the_classifier_would_move_it(openai_env, tmp_path, capsys, monkeypatch):
    _answer_always(monkeypatch, '{"destination": "trip"}')
    cases = small_case_file(tmp_path, [case("c1", "ok", "running"), case("c2", "好的～", "running"),
                                       case("c3", "Thanks!", "running"), case("c4", "does TAP let me pick seats?", "trip")])
    out_file = tmp_path / "r.jsonl"
    code, out, err = run_cli(capsys, "mid-reply", str(cases), "--model", "fake-model", "--out", str(out_file))
    assert code == 0, err
    assert [(r["destination"], r["via"]) for r in read_rows(out_file)] == [
        ("running", "ack"), ("running", "ack"), ("running", "ack"), ("trip", "classifier")]
    assert openai_env["server"].completions == 1
    assert table_row(out, "**all**")[2].startswith("100.0%")


def test_a_results_file_of_another_run_is_refused(workdir, capsys):
    out_file = workdir / "r.jsonl"
    assert run_cli(capsys, "mid-reply", "--rule-only", "--limit", "3", "--out", str(out_file))[0] == 0
    before = out_file.read_bytes()
    code, out, err = run_cli(capsys, "mid-reply", "--dry-run", "--out", str(out_file))
    assert code == 2 and out == ""
    assert f"error: {out_file}: holds results of policy 'rule', not of this run (policy 'classifier' with model 'fake-model')" in err
    assert out_file.read_bytes() == before
    other = small_case_file(workdir, [case("c1", "ok", "running")])
    code, _, err = run_cli(capsys, "mid-reply", str(other), "--rule-only", "--out", str(out_file))
    assert code == 2 and "holds case 'en-01', which the case file does not have" in err


def test_a_changed_case_is_decided_again(workdir, capsys):
    cases = [case("c1", "and a churn column", "running"), case("c2", "ok", "running")]
    path = small_case_file(workdir, cases, name="mine.json")
    assert run_cli(capsys, "mid-reply", str(path), "--rule-only")[0] == 0
    results = workdir / "results" / "mid-reply-mine-rule.jsonl"  # another case set: its name is in the path
    old = {r["case_id"]: r["fingerprint"] for r in read_rows(results)}
    cases[1]["text"] = "what's a good gift for a neighbour?"
    cases[1]["expect"] = "new"
    small_case_file(workdir, cases, name="mine.json")
    code, out, err = run_cli(capsys, "mid-reply", str(path), "--rule-only")
    assert code == 0 and "1 decided now, 1 kept from earlier runs" in err
    rows = read_rows(results)
    assert [r["case_id"] for r in rows] == ["c1", "c2"]
    assert rows[0]["fingerprint"] == old["c1"] and rows[1]["fingerprint"] != old["c2"]
    assert rows[1]["via"] == "rule-only" and rows[1]["expect"] == "new"


def test_a_run_killed_mid_write_resumes(workdir, capsys):
    out_file = workdir / "r.jsonl"
    assert run_cli(capsys, "mid-reply", "--rule-only", "--lang", "en", "--out", str(out_file))[0] == 0
    full = out_file.read_bytes()
    lines = full.splitlines(keepends=True)
    out_file.write_bytes(b"".join(lines[:10]) + lines[10][:25])  # ten rows and half of the eleventh
    code, _, err = run_cli(capsys, "mid-reply", "--rule-only", "--lang", "en", "--out", str(out_file))
    assert code == 0 and "20 decided now, 10 kept from earlier runs" in err
    assert out_file.read_bytes() == full


def test_selection_options(workdir, capsys):
    out_file = workdir / "r.jsonl"
    code, out, err = run_cli(capsys, "mid-reply", "--rule-only", "--lang", "zh", "--limit", "3", "--out", str(out_file))
    assert code == 0
    assert [r["case_id"] for r in read_rows(out_file)] == ["zh-01", "zh-02", "zh-03"]
    assert "3 cases from packaged cases" in err
    for bad, message in [
        (["--rule-only", "--dry-run"], "--rule-only calls no model"),
        (["--rule-only", "--limit", "0"], "--limit must be at least 1"),
        (["--rule-only", "--lang", "fr"], "--lang fr: no such cases in packaged cases (languages: en, zh)"),
        ([], "no model configured"),
    ]:
        code, out, err = run_cli(capsys, "mid-reply", *bad)
        assert code == 2 and message in err and out == "", bad
