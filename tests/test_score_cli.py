"""End to end: ``interleave-bench score`` and ``interleave-bench compare`` on files written for the purpose."""

from __future__ import annotations

import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interleave_bench.cli import main
from interleave_bench.io import read_sessions
from interleave_bench.fingerprints import records_fingerprint, sha256_file
from interleave_bench.score import score_runs
from interleave_bench.score.routing import METRICS
from interleave_bench.score.table import metric

from _cli_util import run_cli
from _score_util import many_sessions, oracle_rows, rows, session, single_rows, turn, write_jsonl
from test_score_metrics import C1_METRICS, c1

CONTRACT_KEYS = {"format", "system", "mode", "policy", "model", "split", "metrics", "intervals", "counts", "outcomes",
                 "breakdowns", "burst", "cost_usd_per_message", "not_scored", "provenance"}


@pytest.fixture
def data(tmp_path):
    ss = many_sessions(10, split_every=5)  # sessions 4 and 9 are test
    path = write_jsonl(tmp_path / "data" / "sessions.jsonl", ss)
    return path, ss


def test_score_writes_the_contract_and_prints_the_table(tmp_path, capsys, data):
    path, ss = data
    pred = write_jsonl(tmp_path / "data" / "predictions" / "closed-oracle.jsonl", oracle_rows(ss, "closed"))
    code, out, err = run_cli(capsys, "score", path, pred, "--bootstrap", 100)
    assert code == 0, err
    doc = json.loads((tmp_path / "data" / "predictions" / "closed-oracle.score.json").read_text())
    assert CONTRACT_KEYS <= set(doc)
    assert doc["format"] == "interleave-score-v1" and doc["system"] == "closed-oracle"
    assert (doc["mode"], doc["policy"], doc["split"]) == ("closed", "oracle", "dev")
    assert list(doc["metrics"]) == list(METRICS)
    assert doc["counts"]["sessions"] == 8  # the two test sessions are left out of dev
    assert doc["metrics"]["accuracy"] == 1.0 and doc["intervals"]["accuracy"] == [1.0, 1.0]
    prov = doc["provenance"]
    assert prov["data_sha256"] == records_fingerprint(read_sessions(path)) and prov["predictions_sha256"] == sha256_file(pred)
    assert prov["data_file"] == str(path) and prov["predictions_file"] == str(pred)
    assert (prov["bootstrap"], prov["seed"]) == (100, 0)
    for key in ("package_version", "git_commit", "git_dirty", "python", "packages", "created"):
        assert key in prov
    header = out.splitlines()[0]
    for title in ("system", "mode", "accuracy", "lenient acc.", "weighted error", "one-off into topic", "topics/thread",
                  "threads/topic", "refs recall", "switch F1", "B-cubed F1", "input tok/msg"):
        assert f"| {title} |" in header
    assert re.search(r"\| closed-oracle \| closed \| 1\.0000 \[1\.0000, 1\.0000\] \|", out)
    assert "not scored:" not in out and "not scored:" not in err  # a complete run: nothing to say
    assert doc["not_scored_line"] == "not scored: closed-oracle: nothing"  # the file still says it
    assert err.startswith("done: score: 1 run, dev split, 8 sessions scored")


def test_the_table_shows_the_very_numbers_the_score_file_holds(tmp_path, capsys, data):
    """A cell is the document's value at the document's decimals, never that value rounded again
    (0.9335 shown as 0.933 where the exact 0.93351 rounds to 0.934)."""
    path, ss = data
    pred = write_jsonl(tmp_path / "p" / "open-single.jsonl", single_rows(ss, "open"))
    code, out, _ = run_cli(capsys, "score", path.parent, pred, "--bootstrap", 50)
    assert code == 0
    doc = json.loads((tmp_path / "p" / "open-single.score.json").read_text())
    lines = [l for l in out.splitlines() if l.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    cells = dict(zip(header, (c.strip() for c in lines[1].strip("|").split("|"))))
    for key in ("accuracy", "accuracy_lenient", "weighted_error"):
        lo, hi = doc["intervals"][key]
        assert cells[metric(key).display] == f"{doc['metrics'][key]:.4f} [{lo:.4f}, {hi:.4f}]"
    for key in ("oneoff_into_topic", "switch_f1", "bcubed_f1"):
        assert cells[metric(key).display] == f"{doc['metrics'][key]:.4f}"
    for key in ("topics_per_thread", "threads_per_topic"):
        assert cells[metric(key).display] == f"{doc['metrics'][key]:.3f}"


def test_json_prints_the_document_and_rewrites_no_file(tmp_path, capsys, data):
    path, ss = data
    pred = write_jsonl(tmp_path / "p" / "open-oracle.jsonl", oracle_rows(ss, "open"))
    code, out, _ = run_cli(capsys, "score", path.parent, pred, "--bootstrap", 50, "--seed", 7)
    assert code == 0
    written = (tmp_path / "p" / "open-oracle.score.json").read_bytes()
    code, out, err = run_cli(capsys, "score", path.parent, pred, "--json", "--bootstrap", 40, "--seed", 7)
    assert code == 0 and "wrote" not in err
    printed = json.loads(out)
    assert (tmp_path / "p" / "open-oracle.score.json").read_bytes() == written  # --json left it alone
    assert printed["mode"] == "open" and printed["metrics"]["bcubed_f1"] == 1.0
    assert printed["metrics"] == json.loads(written)["metrics"]


def test_out_writes_the_document_where_told_and_json_with_out_writes_it_too(tmp_path, capsys, data):
    path, ss = data
    pred = write_jsonl(tmp_path / "p" / "open-oracle.jsonl", oracle_rows(ss, "open"))
    code, out, _ = run_cli(capsys, "score", path.parent, pred, "--bootstrap", 0, "--out", tmp_path / "mine.json")
    assert code == 0 and f"wrote {tmp_path / 'mine.json'}" in out
    assert not (tmp_path / "p" / "open-oracle.score.json").exists()
    code, out, err = run_cli(capsys, "score", path.parent, pred, "--bootstrap", 0, "--json", "--out", tmp_path / "j.json")
    assert code == 0 and json.loads(out) == json.loads((tmp_path / "j.json").read_text())
    assert json.loads(out)["metrics"] == json.loads((tmp_path / "mine.json").read_text())["metrics"]
    two = write_jsonl(tmp_path / "p" / "closed-oracle.jsonl", oracle_rows(ss, "closed"))
    code, out, err = run_cli(capsys, "score", path.parent, pred, two, "--out", tmp_path / "both.json")
    assert code == 2 and err.count("\n") == 1 and "give one predictions file" in err



@pytest.mark.parametrize("spelling, what", [
    ("pred", "the predictions file"),
    ("./pred", "the predictions file"),
    ("symlink to pred", "the predictions file"),
    ("hard link to pred", "the predictions file"),
    ("data", "the sessions file"),
    ("pred in the folder", "the predictions file"),
])
def test_out_that_is_an_input_is_refused_before_any_work(tmp_path, capsys, monkeypatch, data, spelling, what):
    path, ss = data
    pred = write_jsonl(tmp_path / "p" / "open-oracle.jsonl", oracle_rows(ss, "open"))
    monkeypatch.chdir(tmp_path)
    given = [pred.parent] if spelling == "pred in the folder" else [pred]
    out = {"pred": pred, "./pred": "./p/open-oracle.jsonl", "data": path, "pred in the folder": pred,
           "symlink to pred": tmp_path / "link.jsonl", "hard link to pred": tmp_path / "hard.jsonl"}[spelling]
    if spelling == "symlink to pred":
        out.symlink_to(pred)
    if spelling == "hard link to pred":
        out.hardlink_to(pred)
    before = {f: f.read_bytes() for f in (path, pred)}
    code, stdout, err = run_cli(capsys, "score", path.parent, *given, "--bootstrap", 0, "--out", out)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err == f"error: score: --out {out} is one of the inputs ({what}); choose another path\n"
    assert {f: f.read_bytes() for f in (path, pred)} == before
    assert sorted(x.name for x in pred.parent.iterdir()) == ["open-oracle.jsonl"]  # no score file, no lock left


def test_the_test_split_is_written_apart_from_the_dev_split(tmp_path, capsys, data):
    path, ss = data
    pred = write_jsonl(tmp_path / "p" / "closed-oracle.jsonl", oracle_rows(ss, "closed"))
    for split in ("dev", "test", "all"):
        code, out, _ = run_cli(capsys, "score", path.parent, pred, "--split", split, "--bootstrap", 0)
        assert code == 0
    files = {split: tmp_path / "p" / name for split, name in (("dev", "closed-oracle.score.json"),
                                                               ("test", "closed-oracle.test.score.json"),
                                                               ("all", "closed-oracle.all.score.json"))}
    for split, file in files.items():
        doc = json.loads(file.read_text())
        assert doc["split"] == split


def test_bootstrap_0_says_there_are_no_intervals(tmp_path, capsys, data):
    path, ss = data
    pred = write_jsonl(tmp_path / "p" / "closed-oracle.jsonl", oracle_rows(ss, "closed"))
    code, out, _ = run_cli(capsys, "score", path.parent, pred, "--bootstrap", 0)
    assert code == 0 and "no bootstrap intervals: --bootstrap 0" in out and "1.0000 [" not in out
    code, out, err = run_cli(capsys, "score", path.parent, pred, "--bootstrap", 0, "--json")
    assert "no bootstrap intervals" in err and json.loads(out)["intervals"]["accuracy"] is None
    code, out, _ = run_cli(capsys, "score", path.parent, pred, "--bootstrap", 40)
    assert "no bootstrap intervals" not in out and "1.0000 [1.0000, 1.0000]" in out


def test_split_choice(tmp_path, capsys, data):
    path, ss = data
    pred = write_jsonl(tmp_path / "p.jsonl", oracle_rows(ss, "closed"))
    for split, n in (("test", 2), ("all", 10), ("dev", 8)):
        code, out, _ = run_cli(capsys, "score", path, pred, "--split", split, "--json", "--bootstrap", 0)
        assert code == 0
        doc = json.loads(out)
        assert (doc["split"], doc["counts"]["sessions"]) == (split, n)
        assert doc["intervals"]["accuracy"] is None  # no resamples asked for


def test_not_scored_line_names_what_was_left_out(tmp_path, capsys, data):
    path, ss = data
    good = [r for r in oracle_rows(ss, "closed") if r["session_id"] not in ("s-000", "s-001")]
    extra = [{"session_id": "ghost", "i": 0, "pred": "t1"}, {"session_id": "s-002", "i": 99, "pred": "t1"}]
    pred = write_jsonl(tmp_path / "p.jsonl", good + extra)
    code, out, _ = run_cli(capsys, "score", path, pred, "--bootstrap", 0)
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("not scored:"))
    assert "2 sessions without predictions (s-000, s-001)" in line
    assert f"1 row for an unknown session (ghost i=0 line {len(good) + 1})" in line
    assert f"1 row for an unknown turn (s-002 i=99 line {len(good) + 2})" in line
    doc = json.loads((tmp_path / "p.score.json").read_text())
    assert {"reason": "unknown session", "session_id": "ghost", "i": 0, "line": len(good) + 1} in doc["not_scored"]
    assert doc["counts"]["sessions_without_rows"] == 2


def test_duplicate_rows_stop_the_run_unless_allowed(tmp_path, capsys):
    s = session("d", ["t1", "t2"], [turn(0, "t1", "new"), turn(1, "t2", "new")])
    data = write_jsonl(tmp_path / "sessions.jsonl", [s])
    r = rows("d", ["t1", "t1"]) + [{"session_id": "d", "i": 1, "pred": "t2", "mode": "closed"}]
    pred = write_jsonl(tmp_path / "dup.jsonl", r)
    code, out, err = run_cli(capsys, "score", data, pred)
    assert code == 2 and out == ""
    assert err.strip().splitlines()[0] == (
        f"error: {pred}:3: i: second row for session 'd' turn 1 (first on line 2); "
        "remove it (score, compare and report keep the last with --allow-duplicates)")
    assert "Traceback" not in err
    code, out, _ = run_cli(capsys, "score", data, pred, "--allow-duplicates", "--json", "--bootstrap", 0)
    assert code == 0
    doc = json.loads(out)
    assert doc["metrics"]["accuracy"] == 1.0  # the later row (t2) counts
    assert doc["not_scored"] == [{"reason": "duplicate", "session_id": "d", "i": 1, "line": 2}]


def test_bad_prediction_file_is_one_line_exit_2(tmp_path, capsys, data):
    path, ss = data
    pred = tmp_path / "bad.jsonl"
    pred.write_text('{"session_id": "s-000", "i": 0, "pred": "t1"}\n{"session_id": "s-000", "i": -1, "pred": "t1"}\nnot json\n')
    code, out, err = run_cli(capsys, "score", path, pred)
    assert code == 2
    lines = err.strip().splitlines()
    assert lines[0].startswith(f"error: {pred}:2: i: ") and lines[1].startswith(f"error: {pred}:3: invalid JSON")
    code, _, err = run_cli(capsys, "score", tmp_path / "missing.jsonl", pred)
    assert code == 2 and "no such file" in err


def test_same_inputs_same_intervals_other_seed_other_resamples(tmp_path, capsys):
    ss = many_sessions(12)
    path = write_jsonl(tmp_path / "sessions.jsonl", ss)
    # a noisy run: sessions differ in how many labels are wrong (none to about half)
    noisy = []
    for n, s in enumerate(ss):
        labels = [t["gold"]["thread"] or "q" for t in s["turns"]]
        labels = ["t2" if (i * (n + 1)) % 7 < n % 4 and lab == "t1" else lab for i, lab in enumerate(labels)]
        noisy += rows(s["session_id"], labels)
    pred = write_jsonl(tmp_path / "noisy.jsonl", noisy)

    def intervals(seed):
        code, out, _ = run_cli(capsys, "score", path, pred, "--json", "--bootstrap", 300, "--seed", seed)
        assert code == 0
        return json.loads(out)["intervals"]

    a, b, c = intervals(1), intervals(1), intervals(2)
    assert a == b
    assert a["accuracy"] != c["accuracy"] or a["weighted_error"] != c["weighted_error"]
    assert a["accuracy"][0] < a["accuracy"][1]


def test_a_negative_seed_is_one_line_exit_2(tmp_path, capsys, runs):
    path, oracle, single = runs
    for argv in (("score", path, oracle), ("compare", path, oracle, single),
                 ("report", path, oracle, "--html", tmp_path / "r.html")):
        with pytest.raises(SystemExit) as stop:
            main([str(a) for a in (*argv, "--bootstrap", 40, "--seed", -5)])
        err = capsys.readouterr().err
        assert stop.value.code == 2, err  # was an internal error (exit 1): the resamples' generator takes no negative seed
        assert err.strip() == f"error: interleave-bench {argv[0]}: argument --seed: must be 0 or more, got -5 " \
                              f"(see interleave-bench {argv[0]} --help)"


def test_folders_of_predictions_and_the_burst_table(tmp_path, capsys, data):
    path, ss = data
    folder = tmp_path / "preds"
    write_jsonl(folder / "closed-oracle.jsonl", oracle_rows(ss, "closed"))
    burst = oracle_rows(ss, "closed")
    for k, r in enumerate(burst):
        r.update(burst=1 + k % 2, mixed=k % 4 == 1, waited=k % 2 == 1)
    write_jsonl(folder / "closed-oracle-merge.jsonl", burst)
    code, out, _ = run_cli(capsys, "score", path.parent, folder, "--bootstrap", 0, "--per-session")
    assert code == 0
    assert "| closed-oracle |" in out and "| closed-oracle-merge |" in out
    assert "| system | alone | in a burst | in a burst across threads | replies held | model calls/msg |" in out
    assert re.search(r"\| closed-oracle-merge \| 1\.0000 \[[0-9.]+, 1\.0000\] \(n=\d+\) \|", out)
    assert "| system | session | lang |" in out and "| closed-oracle | s-000 | en |" in out
    assert (folder / "closed-oracle-merge.score.json").exists()


def test_python_api_matches_the_cli(tmp_path, capsys):
    s, r = c1()
    path = write_jsonl(tmp_path / "sessions.jsonl", [s])
    pred = write_jsonl(tmp_path / "closed-x.jsonl", r)
    code, out, _ = run_cli(capsys, "score", path, pred, "--json", "--bootstrap", 100)
    assert code == 0
    cli_doc = json.loads(out)
    api_doc = score_runs([s], {"closed-x": r}, bootstrap=100)["closed-x"]
    assert cli_doc["metrics"] == api_doc["metrics"] == C1_METRICS
    assert cli_doc["intervals"] == api_doc["intervals"]
    assert cli_doc["breakdowns"] == api_doc["breakdowns"]


# --- compare ------------------------------------------------------------------------------------------


@pytest.fixture
def runs(tmp_path):
    ss = many_sessions(12, turns=14)
    path = write_jsonl(tmp_path / "sessions.jsonl", ss)
    oracle = write_jsonl(tmp_path / "open-oracle.jsonl", oracle_rows(ss, "open"))
    single = write_jsonl(tmp_path / "open-single.jsonl", single_rows(ss))
    return path, oracle, single


def test_compare_a_run_with_its_copy(tmp_path, capsys, runs):
    path, oracle, _ = runs
    copy = tmp_path / "open-copy.jsonl"  # (one file given twice is refused: test_compare_refusals.py)
    copy.write_bytes(oracle.read_bytes())
    code, out, _ = run_cli(capsys, "compare", path, oracle, copy, "--json", "--bootstrap", 200)
    assert code == 0
    doc = json.loads(out)
    assert doc["flips"] == [] and (doc["wins"], doc["losses"]) == (0, 0)
    assert doc["mcnemar_p"] == 1.0 and doc["accuracy_diff"] == 0.0
    assert doc["accuracy_diff_interval"] == [0.0, 0.0]
    assert not doc["significant"] and not doc["regression"]
    assert all(cell["delta"] in (0, 0.0, None) for cell in doc["metrics"].values())


def test_compare_oracle_against_single_is_significant(capsys, runs):
    path, oracle, single = runs
    code, out, _ = run_cli(capsys, "compare", path, oracle, single, "--json", "--bootstrap", 200)
    assert code == 0  # no gate asked for
    doc = json.loads(out)
    assert doc["wins"] == 0 and doc["losses"] > 20
    assert doc["mcnemar_p"] < 1e-6 and doc["significant"] and doc["regression"]
    lo, hi = doc["accuracy_diff_interval"]
    assert lo <= doc["accuracy_diff"] <= hi < 0
    assert len(doc["flips"]) == doc["losses"]
    # most telling first: a flip whose cost changed by 3 (pollution) before one that changed by 1
    costs = {"correct": 0, "wrong_existing": 3, "merged_new": 3, "spurious_new": 1, "clarify": 1, "error": 1}
    changes = [abs(costs[f["b_outcome"]] - costs[f["a_outcome"]]) for f in doc["flips"]]
    assert changes == sorted(changes, reverse=True)
    assert {"session_id", "i", "text", "gold", "a", "b"} <= set(doc["flips"][0])


def test_compare_markdown_and_the_regression_gate(capsys, runs):
    path, oracle, single = runs
    code, out, err = run_cli(capsys, "compare", path, oracle, single, "--fail-on-regression", "--show", 3,
                             "--bootstrap", 100)
    assert code == 1
    assert "verdict: B is significantly worse than A at the 5% level" in out
    assert re.search(r"McNemar exact p = [0-9.e-]+", out)
    assert "flipped messages, most telling first (3 of" in out
    assert "each run's labels are its own topics (A's t1 is not B's t1)" in out  # open mode: own labels
    assert "| session | i | text | gold | A | B |" in out
    assert "regression: open-single is significantly worse than open-oracle" in err
    # the other way round B is better: the gate passes
    code, out, _ = run_cli(capsys, "compare", path, single, oracle, "--fail-on-regression", "--bootstrap", 100)
    assert code == 0 and "verdict: B is significantly better than A at the 5% level" in out


def test_compare_show_0_prints_the_count_of_flips_and_no_table(capsys, runs):
    path, oracle, single = runs
    code, out, _ = run_cli(capsys, "compare", path, oracle, single, "--show", 0, "--bootstrap", 0)
    flips = json.loads(run_cli(capsys, "compare", path, oracle, single, "--json", "--bootstrap", 0)[1])["flips"]
    assert code == 0 and len(flips) > 20
    assert out.endswith(f"\n\nflipped messages: {len(flips)} (--show N lists the N most telling)\n")
    assert "| session |" not in out and "most telling first" not in out  # was a header over no row


def test_compare_refuses_runs_scored_in_two_modes(tmp_path, capsys, runs):
    path, oracle, _ = runs
    closed = write_jsonl(tmp_path / "closed-oracle.jsonl", oracle_rows(many_sessions(12, turns=14), "closed"))
    code, out, err = run_cli(capsys, "compare", path, closed, oracle, "--bootstrap", 0)
    assert code == 2 and out == ""
    assert err.splitlines()[0] == (
        f"error: {oracle}:1: mode: B is an open-mode run and A ({closed}) a closed-mode one: a closed-mode router is "
        "shown the threads and an open-mode one is not, so a paired comparison is of two runs of one mode")
    # rows without a run record are scored in the mode given: both in one mode
    code, _, err = run_cli(capsys, "compare", path, closed, oracle, "--bootstrap", 0, "--mode", "open")
    assert code == 0 and "error:" not in err
    again = write_jsonl(tmp_path / "open-again.jsonl", oracle_rows(many_sessions(12, turns=14), "open"))
    code, _, err = run_cli(capsys, "compare", path, oracle, again, "--bootstrap", 0)
    assert code == 0 and "warning:" not in err


def test_compare_pairs_only_sessions_both_runs_cover(tmp_path, capsys, runs):
    path, oracle, _ = runs
    lines = oracle.read_text().splitlines()
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(x for x in lines if '"s-000"' not in x) + "\n")
    code, out, _ = run_cli(capsys, "compare", path, oracle, partial, "--json", "--bootstrap", 0)
    assert code == 0
    doc = json.loads(out)
    assert doc["sessions"] == 11
    assert doc["not_compared"] == [{"session_id": "s-000", "reason": "scored only in A"}]
    assert doc["flips"] == [] and doc["mcnemar_p"] == 1.0


def test_compare_says_what_score_says_of_turns_scored_as_error(tmp_path, capsys, runs):
    path, oracle, _ = runs
    lines = oracle.read_text().splitlines()
    cut = [x for x in lines if '"s-001"' in x][-3:]  # a session cut part-way, and one left out whole
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(x for x in lines if '"s-000"' not in x and x not in cut) + "\n")
    code, out, err = run_cli(capsys, "score", path, short, "--json", "--bootstrap", 0)
    said = json.loads(out)["not_scored_line"]
    assert code == 0 and said.endswith("; 3 turns of scored sessions without a row, each scored as ERROR")
    assert said in err.splitlines()
    code, out, err = run_cli(capsys, "compare", path, oracle, short, "--json", "--bootstrap", 0)
    assert code == 0
    doc = json.loads(out)
    assert doc["not_scored_line"] == {"a": "not scored: open-oracle: nothing", "b": said}
    assert doc["not_scored_notices"] == [said]  # a complete run says nothing
    assert said in err.splitlines() and "not scored: open-oracle" not in err  # on stderr with --json, as score says it
    code, out, _ = run_cli(capsys, "compare", path, oracle, short, "--bootstrap", 0)
    assert code == 0 and said in out.splitlines() and "not scored: open-oracle" not in out


def test_closed_labels_of_which_none_names_a_thread_are_refused_by_every_reader(tmp_path, capsys):
    ss = many_sessions(6, turns=14)
    path = write_jsonl(tmp_path / "sessions.jsonl", ss)
    good = oracle_rows(ss, "closed")
    oracle = write_jsonl(tmp_path / "closed-oracle.jsonl", good)
    upper = write_jsonl(tmp_path / "upper.jsonl", [{**r, "pred": r["pred"].upper()} for r in good])
    first = good[0]["pred"].upper()
    said = (f"closed mode reads every label as a thread id, and none of the {len(good):,} labels names a thread of "
            f"its session (first: {first!r}): a system's own topic labels are scored in open mode (--mode open, or "
            '"mode": "open" in its rows)')
    parquet = tmp_path / "upper.parquet"
    pq.write_table(pa.Table.from_pylist([{**r, "pred": r["pred"].upper()} for r in good]), parquet)
    for argv, pred in ((("score", path, upper, "--bootstrap", 0), upper), (("score", path, parquet, "--bootstrap", 0), parquet),
                       (("compare", path, oracle, upper, "--bootstrap", 0), upper), (("validate", path, upper), upper)):
        code, _, err = run_cli(capsys, *argv)
        assert code == 2 and [x for x in err.splitlines() if x.startswith("error:")] == [f"error: {pred}:1: pred: {said}"]
    assert not (tmp_path / "upper.score.json").exists()
    # open mode matches them to threads; special labels are no topic's; one label naming a thread
    # makes the rest closed-mode labels, scored as wrong ones (rows that say closed, scored in open
    # mode, go to a score file of that mode)
    code, _, _ = run_cli(capsys, "score", path, upper, "--bootstrap", 0, "--mode", "open")
    assert code == 0 and json.loads((tmp_path / "upper.open.score.json").read_text())["metrics"]["accuracy"] == 1.0
    special = write_jsonl(tmp_path / "special.jsonl", [{**r, "pred": ("CLARIFY", "ERROR")[k % 2]} for k, r in enumerate(good)])
    one = write_jsonl(tmp_path / "one.jsonl", [{**r, "pred": r["pred"].upper() if k else r["pred"]} for k, r in enumerate(good)])
    for pred in (special, one):
        for argv in (("score", path, pred, "--bootstrap", 0), ("compare", path, oracle, pred, "--bootstrap", 0),
                     ("validate", path, pred)):
            code, _, err = run_cli(capsys, *argv)
            assert code == 0, err
        assert json.loads(pred.with_suffix(".score.json").read_text())["metrics"]["accuracy"] < 0.1


def test_compare_takes_each_delta_on_the_unrounded_figures():
    """By hand: 3 strict messages, A right on 1 (0.3333), B on 2 (0.6667). B - A is 1/3 = 0.3333,
    not 0.6667 - 0.3333 = 0.3334; the metric's delta and accuracy_diff are one number."""
    from interleave_bench.score import score_predictions
    from interleave_bench.score.compare import compare

    ss = [session("c", ["t1", "t2"], [turn(0, "t1", "new"), turn(1, "t2", "new"), turn(2, "t1", "switch")])]
    a = score_predictions(ss, rows("c", ["t1", "t1", "t2"]), system="a", bootstrap=0)
    b = score_predictions(ss, rows("c", ["t1", "t2", "t2"]), system="b", bootstrap=0)
    assert (a.result["metrics"]["accuracy"], b.result["metrics"]["accuracy"]) == (0.3333, 0.6667)
    doc = compare(a, b, bootstrap=0, seed=0)
    assert doc["accuracy_diff"] == doc["metrics"]["accuracy"]["delta"] == 0.3333
    # weighted error by hand: A 2 wrong_existing (3 each) = 6/3 = 2.0; B 1 = 1.0
    assert doc["metrics"]["weighted_error"]["delta"] == -1.0


def test_index_rows_names_every_duplicate(tmp_path):
    from interleave_bench.errors import InputErrors
    from interleave_bench.score.rows import index_rows
    from interleave_bench.schema import PredictionRow, Session

    s = Session.model_validate(session("d", ["t1"], [turn(0, "t1", "new"), turn(1, "t1")]))
    raw = [("d", 0, "t1"), ("d", 0, "x"), ("ghost", 0, "t1"), ("d", 0, "t1"), ("ghost", 0, "t1"), ("d", 5, "t1")]
    parsed = [PredictionRow.model_validate({"session_id": a, "i": b, "pred": c}) for a, b, c in raw]
    lines = [10, 11, 12, 13, 14, 15]
    with pytest.raises(InputErrors) as exc:
        index_rows(parsed, {"d": s}, source="p.jsonl", lines=lines)
    assert [(e.line, e.message.split(";")[0]) for e in exc.value.errors] == [
        (11, "second row for session 'd' turn 0 (first on line 10)"),
        (13, "second row for session 'd' turn 0 (first on line 10)"),
        (14, "second row for session 'ghost' turn 0 (first on line 12)"),
    ]
    idx = index_rows(parsed, {"d": s}, source="p.jsonl", lines=lines, allow_duplicates=True)
    assert idx.by_session["d"][0].pred == "t1" and list(idx.by_session["d"]) == [0]  # the last row counts
    # each replaced row, in the order the replacing rows come
    assert [(x.session_id, x.line) for x in idx.duplicates] == [("d", 10), ("d", 11), ("ghost", 12)]
    assert [(x.session_id, x.i, x.line) for x in idx.unknown_sessions] == [("ghost", 0, 12)]
    assert [(x.session_id, x.i, x.line) for x in idx.unknown_turns] == [("d", 5, 15)]


def test_bad_data_file_names_line_and_field(tmp_path, capsys):
    good = session("a", ["t1"], [turn(0, "t1", "new")])
    bad = session("b", ["t1"], [turn(0, "t1", "new")])
    bad["turns"][0]["gold"]["action"] = "swich"
    data = write_jsonl(tmp_path / "sessions.jsonl", [good, bad])
    pred = write_jsonl(tmp_path / "p.jsonl", rows("a", ["t1"]))
    code, out, err = run_cli(capsys, "score", data, pred)
    assert code == 2 and out == ""
    assert err.strip() == (f"error: {data}:2: turns[0].gold.action: 'swich' is not one of new, continue, switch, "
                           "return, oneoff")


def test_scoring_many_runs_keeps_their_per_session_rows_only_in_the_files(tmp_path, capsys, data):
    from interleave_bench.score import score_files

    path, ss = data
    preds = [write_jsonl(tmp_path / "data" / "predictions" / f"closed-{k}.jsonl", oracle_rows(ss, "closed")) for k in range(3)]
    kept = score_files(path, preds, bootstrap=0)
    lean = score_files(path, preds, bootstrap=0, keep_per_session=False)
    for full, small in zip(kept, lean):
        assert len(full.result["per_session"]) == 8 and "per_session" not in small.result
        on_disk = json.loads(small.score_file.read_text())
        assert on_disk["per_session"] == full.result["per_session"]
        assert {k: v for k, v in full.result.items() if k not in ("per_session", "provenance")} == \
            {k: v for k, v in small.result.items() if k != "provenance"}
    # --json prints every row (the file's document, written earlier; --json itself writes none)
    code, out, err = run_cli(capsys, "score", path, preds[0], "--bootstrap", 0, "--json")
    assert code == 0 and json.loads(out)["per_session"] == kept[0].result["per_session"]
    printed, on_file = json.loads(out), json.loads(preds[0].with_suffix(".score.json").read_text())
    for doc in (printed, on_file):
        doc["provenance"].pop("created")  # when it was scored: the one field two scorings differ in
    assert printed == on_file


@pytest.mark.parametrize("bad_lines", [10, 13])
def test_a_file_bad_on_every_line_prints_twenty_errors_and_counts_the_rest(tmp_path, capsys, bad_lines):
    s = session("d", ["t1"], [turn(0, "t1", "new")])
    data = write_jsonl(tmp_path / "sessions.jsonl", [s])
    pred = write_jsonl(tmp_path / "wrong.jsonl", [{"session_id": "d", "i": "zero"}] * bad_lines)  # two errors a line
    code, out, err = run_cli(capsys, "score", data, pred)
    lines = err.strip().splitlines()
    assert code == 2 and out == ""
    assert lines[:20] == [f"error: {pred}:{n}: {f}" for n in range(1, 11)
                          for f in ("i: expected an integer, got 'zero'", "pred: required field is missing")]
    if bad_lines == 10:
        assert len(lines) == 20
    else:
        assert lines[20:] == [f"error: 6 more errors in {pred} not shown (interleave-bench validate lists every "
                              "error of a data or predictions file)"]


def test_the_two_files_given_the_other_way_round_are_refused_in_one_line_each(tmp_path, capsys):
    s = session("d", ["t1"], [turn(0, "t1", "new"), turn(1, "t1")])
    data = write_jsonl(tmp_path / "sessions.jsonl", [s])
    pred = write_jsonl(tmp_path / "closed-x.jsonl", rows("d", ["t1", "t1"]))
    as_data = (f"error: {pred}: a predictions file (rows with session_id, i and pred), given as the data: the "
               "sessions file (or its folder) goes first, then the predictions")
    as_pred = (f"error: {data}: a sessions file (lines with turns and threads), given as predictions: it goes "
               "first, as the data, then the predictions")
    for argv, want in ((("score", pred, data), as_data), (("score", data, data), as_pred),
                       (("compare", data, pred, data), as_pred), (("compare", pred, pred, pred), as_data)):
        code, out, err = run_cli(capsys, *argv)
        assert (code, out, err.strip()) == (2, "", want), argv
    code, _, err = run_cli(capsys, "score", data, pred, "--bootstrap", 0)  # the right way round
    assert code == 0, err


@pytest.mark.parametrize("command", ["score", "compare", "report"])
@pytest.mark.parametrize("value", ["-1", "100001", "1000000000"])
def test_a_bootstrap_out_of_range_is_one_line(command, value, capsys):
    """Resamples beyond the bound used to end in an out-of-memory internal error after the read."""
    from interleave_bench.cli import main

    with pytest.raises(SystemExit) as stopped:
        runs = ["a.jsonl", "b.jsonl"] if command == "compare" else ["a.jsonl"]
        main([command, "no-such-data", *runs, f"--bootstrap={value}"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"argument --bootstrap: must be 0 (no intervals) or 40 to 100,000 (fewer resamples give no "
                        f"95% interval), got {value} (see interleave-bench {command} --help)")
    assert "\n" not in err


def test_score_files_refuses_a_bootstrap_out_of_range_before_reading():
    from interleave_bench.errors import UsageError
    from interleave_bench.score.run import score_files

    with pytest.raises(UsageError, match=r"^--bootstrap must be 0 \(no intervals\) or 40 to 100,000 .*, got 100001$"):
        score_files("no-such-data", ["a.jsonl"], bootstrap=100_001)


@pytest.mark.parametrize("kind, content, line", [
    ("a score file", '{\n  "format": "interleave-score-v1",\n  "system": "x"\n}\n',
     ": a score document (interleave-score-v1), given as predictions: predictions are JSON Lines, one record a line"),
    ("a manifest", '{\n  "version": "interleave-v0"\n}\n',
     ": a JSON document, given as predictions: predictions are JSON Lines, one record a line"),
    ("another command's results", '{"case_id": "c1", "label": "x"}\n' * 30,
     ":1: not a predictions file: its first record has no i and pred (another command's output?)"),
])
def test_another_kind_of_file_given_as_predictions_is_one_line(tmp_path, capsys, kind, content, line):
    s = session("d", ["t1"], [turn(0, "t1", "new")])
    data = write_jsonl(tmp_path / "sessions.jsonl", [s])
    pred = tmp_path / "given.jsonl"
    pred.write_text(content, encoding="utf-8")
    code, out, err = run_cli(capsys, "score", data, pred)
    assert code == 2 and out == "" and err == f"error: {pred}{line}\n", kind


def test_another_command_s_results_given_as_the_data_are_one_line(tmp_path, capsys):
    data = tmp_path / "results.jsonl"
    data.write_text('{"case_id": "c1", "label": "x"}\n' * 3, encoding="utf-8")
    pred = write_jsonl(tmp_path / "p.jsonl", rows("d", ["t1"]))
    code, _, err = run_cli(capsys, "score", data, pred)
    assert code == 2
    assert err == f"error: {data}:1: not a sessions file: its first record has no turns and threads (another command's output?)\n"
