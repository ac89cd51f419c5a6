"""The leaderboard: rows from score files, the refusal rules, ranking with intervals, publication tags."""

from __future__ import annotations

import hashlib
import json

import pytest

import _hub_util as u
from _hub_util import TOKEN, hub  # noqa: F401  (the fixture)
from interleave_bench.errors import InputError, InputErrors
from interleave_bench.hub.leaderboard import (
    board_features,
    check_additions,
    fmt_interval,
    next_tag,
    rank,
    row_from_score,
)

BOARD = "org/interleavebench-leaderboard"
DATA_A = "sha256:" + "a" * 64
DATA_B = "sha256:" + "b" * 64
DATA_REPO = "org/interleavebench"


def _scores(tmp_path):
    return {
        "bm25": u.write_json(tmp_path / "s" / "closed-bm25.score.json", u.score("closed-bm25", 0.734, 0.61, data_sha=DATA_A)),
        "llm": u.write_json(tmp_path / "s" / "closed-llm.score.json",
                            u.score("closed-llm", 0.812, 0.40, policy="llm", model="deepseek-chat", data_sha=DATA_A)),
    }


def _add(capsys, *args):
    return u.cli(["leaderboard", "add", *args, "--repo", BOARD], capsys)


def test_add_two_runs_then_show_them_ranked_with_intervals(hub, tmp_path, capsys):
    s = _scores(tmp_path)
    code, out, err = _add(capsys, s["bm25"], "--system", "bm25-baseline", "--data-repo", "org/interleavebench")
    assert code == 0, err
    assert "published org/interleavebench-leaderboard" in out and ", tag board-1" in out
    code, out, err = _add(capsys, s["llm"])
    assert code == 0, err

    code, out, err = u.cli(["leaderboard", "show", "--repo", BOARD], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"# {BOARD} at main (board-2)"
    assert f"data revision: `{DATA_A}`; 2 runs ranked" in out
    table = [line for line in lines if line.startswith("| ") and not line.startswith("| rank")]
    assert table[0].startswith("| 1 | closed-llm | llm | deepseek-chat | 0.812 [0.780, 0.843] | 0.400 [0.350, 0.460] |")
    assert table[1].startswith("| 2 | bm25-baseline | bm25 | - | 0.734 [0.702, 0.765] | 0.610 [0.560, 0.670] |")
    assert table[0].endswith("| $0.000123 | board-2 |") and table[1].endswith("| n/a | board-1 |")

    # one commit and one tag per publication; an earlier publication still shows what it held
    assert sorted(hub.tags(BOARD)) == ["board-1", "board-2"]
    commits = hub.commits(BOARD)
    assert len(commits) == 3 and [c.oid for c in commits[1:]] == [hub.tags(BOARD)["board-1"], hub.tags(BOARD)["board-2"]]
    code, out, _ = u.cli(["leaderboard", "show", "--repo", BOARD, "--revision", "board-1"], capsys)
    assert code == 0 and "1 run ranked" in out and "closed-llm" not in out

    # the board is a dataset: typed rows through load_dataset, at a publication tag
    script = (
        "import json, datasets\n"
        f"d = datasets.load_dataset({BOARD!r}, split='runs', revision='board-2')\n"
        "print(json.dumps({'features': d.features.to_dict(), 'rows': d.to_list()}))\n"
    )
    loaded, logs = u.run_python(script, hub.env, cwd=tmp_path)
    assert loaded["features"] == board_features().to_dict()
    rows = {r["system"]: r for r in loaded["rows"]}
    assert rows["bm25-baseline"]["accuracy_lo"] == 0.702 and rows["bm25-baseline"]["data_repo"] == "org/interleavebench"
    assert rows["closed-llm"]["publication"] == "board-2" and rows["closed-llm"]["data_revision"] == DATA_A
    assert json.loads(rows["closed-llm"]["provenance"])["predictions_file"] == "predictions/closed-llm.jsonl"
    assert TOKEN not in out + logs and u.files_containing(tmp_path, TOKEN) == []

    readme = hub.files(BOARD, "board-2")["README.md"].decode()
    assert "| 1 | closed-llm |" in readme and "publication `board-2`" in readme


def test_a_duplicate_add_is_refused_with_a_clear_message(hub, tmp_path, capsys):
    s = _scores(tmp_path)
    assert _add(capsys, s["bm25"])[0] == 0
    code, out, err = _add(capsys, s["bm25"])
    assert code == 2
    assert err.strip() == (f"error: {s['bm25']}: duplicate: closed-bm25 (closed, bm25, no model, dev) on data revision "
                           f"{DATA_A} is already on the board (published in board-1)")
    # the same predictions under another name are the same run
    code, _, err = _add(capsys, s["bm25"], "--system", "renamed")
    assert code == 2 and "provenance.predictions_sha256: duplicate: the same predictions are already on the board" in err
    # and two copies in one add
    code, _, err = _add(capsys, s["llm"], s["llm"])
    assert code == 2 and "duplicate" in err
    assert sorted(hub.tags(BOARD)) == ["board-1"] and len(hub.commits(BOARD)) == 2


def test_runs_without_provenance_or_on_other_data_are_refused_unless_new_board(hub, tmp_path, capsys):
    s = _scores(tmp_path)
    noprov = u.write_json(tmp_path / "s" / "noprov.score.json", u.score("x", 0.5, 0.5, provenance=False))
    code, _, err = _add(capsys, noprov)
    assert code == 2 and f"error: {noprov}: provenance.data_sha256: required field is missing" in err and len(err.splitlines()) == 1
    assert hub.repos.get(("dataset", BOARD)) is None  # refused before any request

    assert _add(capsys, s["bm25"])[0] == 0
    other = u.write_json(tmp_path / "s" / "newdata.score.json", u.score("closed-bm25", 0.70, 0.7, data_sha=DATA_B))
    code, _, err = _add(capsys, other)
    assert code == 2 and f"scored on data revision {DATA_B}, but the board ranks {DATA_A}" in err and "--new-board" in err

    code, out, err = _add(capsys, other, "--new-board")
    assert code == 0, err
    code, out, _ = u.cli(["leaderboard", "show", "--repo", BOARD], capsys)
    assert f"data revision: `{DATA_B}`; 1 run ranked, 1 on other data revisions not shown" in out
    code, out, _ = u.cli(["leaderboard", "show", "--repo", BOARD, "--data-revision", DATA_A], capsys)
    assert "| 1 | closed-bm25 | bm25 | - | 0.734 [0.702, 0.765] |" in out
    assert sorted(hub.tags(BOARD)) == ["board-1", "board-2"]


def publish_data(tmp_path, capsys, n=6, revision="v0.1"):
    """Export ``n`` sessions as v0, push them to DATA_REPO tagged ``revision``; returns their fingerprint."""
    from interleave_bench.io import records_fingerprint
    from interleave_bench.schema import Session

    rows = u.sessions(n)
    src = u.write_data(tmp_path / f"data-{revision}", rows, u.manifest(n=n))
    out = tmp_path / f"export-{revision}"
    assert u.cli(["export", "--v0", str(src), "--out", str(out)], capsys)[0] == 0
    code, _, err = u.cli(["push", str(out), "--repo", DATA_REPO, "--revision", revision], capsys)
    assert code == 0, err
    return records_fingerprint(Session.model_validate(r) for r in rows)


def test_a_run_on_the_same_data_file_joins_the_board_under_its_published_revision(hub, tmp_path, capsys):
    fp = publish_data(tmp_path, capsys)
    bm25 = u.write_json(tmp_path / "s" / "bm25.score.json", u.score("closed-bm25", 0.734, 0.61, data_sha=fp))
    llm = u.write_json(tmp_path / "s" / "llm.score.json",
                       u.score("closed-llm", 0.812, 0.40, policy="llm", model="deepseek-chat", data_sha=fp))
    code, _, err = _add(capsys, bm25, "--data-repo", DATA_REPO, "--data-revision", "v0.1")
    assert code == 0, err
    # scored on the same file (same fingerprint), submitted without naming the revision
    code, out, err = _add(capsys, llm)
    assert code == 0, err
    assert "added closed-llm (closed, llm, deepseek-chat, dev) on data revision v0.1" in out
    code, out, _ = u.cli(["leaderboard", "show", "--repo", BOARD], capsys)
    assert "data revision: `v0.1`; 2 runs ranked" in out
    # the same revision name over different data is refused: v0.1 on the data repo holds other records
    other = u.write_json(tmp_path / "s" / "other.score.json", u.score("third", 0.6, 0.9, data_sha=DATA_B))
    code, _, err = _add(capsys, other, "--data-revision", "v0.1")
    assert code == 2 and err.count("\n") == 1
    assert f"scored on data {DATA_B}, but {DATA_REPO}@v0.1 (commit {hub.tags(DATA_REPO)['v0.1'][:12]}) holds v0 {fp}" in err


def test_a_server_error_publishes_nothing(hub, tmp_path, capsys):
    s = _scores(tmp_path)
    assert _add(capsys, s["bm25"])[0] == 0
    hub.fail_next_commits(1, status=503)
    code, _, err = _add(capsys, s["llm"])
    assert code == 2 and "the Hub answered HTTP 503" in err and "nothing was published" in err
    assert sorted(hub.tags(BOARD)) == ["board-1"]
    assert _add(capsys, s["llm"])[0] == 0 and sorted(hub.tags(BOARD)) == ["board-1", "board-2"]


def test_show_of_a_missing_board_is_one_line(hub, capsys):
    code, _, err = u.cli(["leaderboard", "show", "--repo", "org/nothing-here"], capsys)
    assert code == 2 and "repository not found" in err and len(err.strip().splitlines()) == 1


# --- pure parts -------------------------------------------------------------------------------------------


def _row(system, acc, werr, **kw):
    r = row_from_score("x.json", u.score(system, acc, werr, data_sha=DATA_A))
    r.update(kw)
    return r


def test_rank_orders_by_accuracy_then_weighted_error_and_groups_by_split_and_mode():
    rows = [
        _row("f", 0.99, 0.01, data_revision=DATA_B, publication="board-1"),  # an earlier board: not ranked
        _row("a", 0.70, 0.50, publication="board-2"),
        _row("b", 0.80, 0.60, publication="board-2"),
        _row("c", 0.80, 0.40, publication="board-3"),  # ties b on accuracy, wins on weighted error
        _row("d", 0.10, 0.10, accuracy=None, publication="board-3"),  # no accuracy sorts last
        _row("e", 0.99, 0.01, mode="open", publication="board-3"),  # another mode: another table
    ]
    rev, groups, left_out = rank(rows)  # the board ranks the revision of its latest publication
    assert rev == DATA_A and left_out == 1
    assert [(g.split, g.mode) for g in groups] == [("dev", "closed"), ("dev", "open")]
    assert [r["system"] for r in groups[0].rows] == ["c", "b", "a", "d"]
    rev, groups, left_out = rank(rows, DATA_B)
    assert rev == DATA_B and left_out == 5 and [r["system"] for r in groups[0].rows] == ["f"]


def test_intervals_are_formatted_beside_the_value():
    r = {"accuracy": 0.7341, "accuracy_lo": 0.70249, "accuracy_hi": 0.7651, "switch_f1": 0.5, "switch_f1_lo": None,
         "switch_f1_hi": None, "refs_recall": None}
    assert fmt_interval(r, "accuracy") == "0.734 [0.702, 0.765]"
    assert fmt_interval(r, "switch_f1") == "0.500"
    assert fmt_interval(r, "refs_recall") == "n/a"


def test_next_tag_counts_publications():
    assert next_tag([]) == "board-1"
    assert next_tag(["board-1", "board-2", "data-123", "v0.1"]) == "board-3"
    # a board tagged v<n> before the board-<n> naming goes on counting from there
    assert next_tag(["board-1", "board-2", "data-123", "v10"]) == "board-11"


def test_a_malformed_score_file_is_one_line_naming_the_field():
    bad = {"format": "something-else", "metrics": {}, "mode": 3, "split": "dev"}
    with pytest.raises(InputError) as exc:
        row_from_score("run.score.json", bad)
    assert exc.value.field == "format"
    line = exc.value.format()
    assert len(line.splitlines()) == 1 and line.startswith("run.score.json: format:") and "mode" in line
    good = u.score("x", 0.5, 0.5)
    for field, breaks in [("mode", {"mode": 3}), ("provenance.data_sha256", {"provenance": {"bootstrap": 1, "seed": 0}}),
                          ("metrics.accuracy", {"metrics": {"accuracy": "high"}}),
                          ("counts.messages", {"counts": {**good["counts"], "messages": None}})]:
        with pytest.raises(InputError) as exc:
            row_from_score("run.score.json", {**good, **breaks})
        assert exc.value.field == field and len(exc.value.format().splitlines()) == 1
    with pytest.raises(InputError) as exc:
        row_from_score("run.score.json", {**good, "metrics": {"weighted_error": 0.1}})
    assert exc.value.field == "metrics.accuracy" and "ranks on it" in str(exc.value)


def test_check_additions_accepts_new_runs_on_the_ranked_revision():
    existing = [_row("a", 0.7, 0.5, publication="board-1")]
    check_additions(existing, [_row("b", 0.8, 0.4)], ["b.json"])  # no exception
    with pytest.raises(InputErrors):
        check_additions(existing, [_row("b", 0.8, 0.4, data_revision=DATA_B)], ["b.json"])
    check_additions(existing, [_row("b", 0.8, 0.4, data_revision=DATA_B)], ["b.json"], new_board=True)


def test_a_board_from_a_newer_version_is_not_rewritten(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from interleave_bench.errors import UsageError
    from interleave_bench.hub.leaderboard import _read_rows

    row = _row("a", 0.7, 0.5)
    older = {k: v for k, v in row.items() if k != "git_commit"}  # an older board lacks a column
    pq.write_table(pa.Table.from_pylist([older]), tmp_path / "old.parquet")
    assert _read_rows(str(tmp_path / "old.parquet"))[0]["git_commit"] is None
    pq.write_table(pa.Table.from_pylist([{**row, "elo": 1200.0}]), tmp_path / "new.parquet")
    with pytest.raises(UsageError, match=r"columns this interleave-bench .* does not know \(elo\)"):
        _read_rows(str(tmp_path / "new.parquet"))


def test_publish_leaderboard_script_wraps_the_command(hub, tmp_path, capsys):
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "publish_leaderboard.py"
    spec = importlib.util.spec_from_file_location("publish_leaderboard", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    s = _scores(tmp_path)
    assert mod.main(["add", s["bm25"], "--repo", BOARD]) == 0
    assert mod.main(["show", "--repo", BOARD]) == 0
    assert "| 1 | closed-bm25 |" in capsys.readouterr().out


# --- honesty: claims are checked, impossible values and partial runs refused -------------------------------


def _one_line_refusal(capsys, path, *args):
    code, out, err = _add(capsys, path, *args)
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"error: {path}: "), err
    return err


def test_a_false_data_revision_claim_is_refused(hub, tmp_path, capsys):
    fp = publish_data(tmp_path, capsys)
    # on a fresh board: a revision the data repo does not have
    s = u.write_json(tmp_path / "s" / "a.score.json", u.score("a", 0.7, 0.5, data_sha=fp))
    err = _one_line_refusal(capsys, s, "--data-repo", DATA_REPO, "--data-revision", "v9.9")
    assert "'v9.9' is not a revision of org/interleavebench" in err
    # a revision that exists but holds other data than the run was scored on
    other = u.write_json(tmp_path / "s" / "b.score.json", u.score("b", 0.7, 0.5, data_sha=DATA_B))
    err = _one_line_refusal(capsys, other, "--data-repo", DATA_REPO, "--data-revision", "v0.1")
    assert "the run was not scored on that revision" in err
    # a claim without a repo to check it against
    err = _one_line_refusal(capsys, s, "--data-revision", "v0.1")
    assert "give --data-repo ORG/NAME" in err
    assert hub.repos.get(("dataset", BOARD)) is None or len(hub.commits(BOARD)) == 1  # nothing published
    # the true claim goes through, and the row records the commit it resolved to
    code, out, err = _add(capsys, s, "--data-repo", DATA_REPO, "--data-revision", "v0.1")
    assert code == 0, err


def test_values_out_of_range_or_outside_their_interval_are_refused(hub, tmp_path, capsys):
    bad = u.score("cheat", 0.7, 0.5)
    bad["metrics"]["accuracy"] = 2.5
    bad["intervals"]["accuracy"] = [2.4, 2.6]
    err = _one_line_refusal(capsys, u.write_json(tmp_path / "s" / "range.score.json", bad))
    assert "metrics.accuracy: 2.5 is outside its range [0.0, 1.0]" in err
    outside = u.score("odd", 0.7, 0.5)
    outside["intervals"]["accuracy"] = [0.75, 0.8]
    err = _one_line_refusal(capsys, u.write_json(tmp_path / "s" / "interval.score.json", outside))
    assert "metrics.accuracy: 0.7 lies outside its own 95% interval [0.75, 0.8]" in err
    negative = u.score("neg", 0.7, 0.5)
    negative["metrics"]["weighted_error"] = -0.1
    negative["intervals"]["weighted_error"] = None
    err = _one_line_refusal(capsys, u.write_json(tmp_path / "s" / "neg.score.json", negative))
    assert "metrics.weighted_error: -0.1 is outside its range [0.0, 3.0]" in err
    assert hub.repos.get(("dataset", BOARD)) is None  # refused before any request


def test_a_partial_run_is_refused(hub, tmp_path, capsys):
    partial = u.score("partial", 0.9, 0.1)
    partial["counts"]["sessions_without_rows"] = 3
    partial["not_scored"] = [{"reason": "no predictions", "session_id": f"s{k}"} for k in range(3)]
    err = _one_line_refusal(capsys, u.write_json(tmp_path / "s" / "partial.score.json", partial))
    assert "a partial run: 3 sessions of split 'dev' had no predictions" in err


def _summary(kind, acc=(7, 10), **more):
    k, n = acc
    doc = {
        "kind": kind, "policy": "rule", "model": None,
        "cases": {"path": "packaged", "sha256": "sha256:" + "c" * 64, "selected": n, "lang": None, "limit": None},
        "results": {"path": "results/x.jsonl", "sha256": "sha256:" + hashlib.sha256(kind.encode()).hexdigest()},
        "metrics": {"n": n, "accuracy": {"value": round(k / n, 4), "k": k, "n": n, "ci95": [0.3968, 0.8922]},
                    "mixed_in": {"value": 0.5, "k": 1, "n": 2, "ci95": [0.0945, 0.9055]}},
        "provenance": {"package_version": "0.1.0", "created": "2025-03-02T09:00:00+00:00"},
    }
    doc.update(more)
    return doc


def test_mid_reply_and_shared_facts_summaries_are_rows_of_their_own_kind(hub, tmp_path, capsys):
    mid = u.write_json(tmp_path / "s" / "mid.score.json", _summary("mid-reply"))
    rate = {"value": 0.7, "k": 7, "n": 10, "ci95": [0.3968, 0.8922]}
    facts_doc = {  # as `interleave-bench score-facts` writes it
        "format": 1, "kind": "facts", "system": None, "model": None, "passed": True,
        "results": {"path": "facts/run.jsonl", "sha256": "sha256:" + "f" * 64},
        "data": {"path": "data/sessions.jsonl", "sha256": "sha256:" + "c" * 64},
        "metrics": {"strategies": {"facts": {"answer_accuracy": rate, "stale_answers": {**rate, "value": 0.1, "k": 1, "ci95": [0.0179, 0.4042]},
                                             "proposal_answers": {**rate, "value": 0.0, "k": 0, "ci95": [0.0, 0.2775]}},
                                   "summary": {"answer_accuracy": {**rate, "value": 0.5, "k": 5}}},
                    "duplicates": [], "missing": []},
        "provenance": {"package_version": "0.1.0", "results": "sha256:" + "f" * 64},
    }
    facts = u.write_json(tmp_path / "s" / "facts.score.json", facts_doc)
    routing = _scores(tmp_path)["bm25"]
    code, out, err = _add(capsys, routing)
    assert code == 0, err
    code, out, err = _add(capsys, mid, facts, "--new-board")
    assert code == 0, err
    code, out, _ = u.cli(["leaderboard", "show", "--repo", BOARD, "--data-revision", "sha256:" + "c" * 64], capsys)
    assert "mode `mid-reply`" in out and "mode `facts`" in out
    assert "| 1 | mid-reply-rule | rule | - | 0.700 [0.397, 0.892] |" in out
    assert "| 1 | facts | facts | - | 0.700 [0.397, 0.892] | 0.100 [0.018, 0.404] | 0.000 [0.000, 0.278] |" in out
    partial = u.write_json(tmp_path / "s" / "mid-partial.score.json",
                           _summary("mid-reply", cases={"sha256": "sha256:" + "c" * 64, "limit": 5, "lang": None}))
    err = _one_line_refusal(capsys, partial)
    assert "a partial run (limit 5)" in err
    unfinished = u.write_json(tmp_path / "s" / "facts-partial.score.json",
                              {**facts_doc, "metrics": {**facts_doc["metrics"], "missing": ["s1/p2/facts"]}})
    err = _one_line_refusal(capsys, unfinished)
    assert "a partial run: 1 probe answer missing (first s1/p2/facts)" in err
