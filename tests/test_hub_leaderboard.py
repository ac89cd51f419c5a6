"""The leaderboard: rows from score files, the refusal rules, ranking with intervals, publication tags."""

from __future__ import annotations

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
    assert "published org/interleavebench-leaderboard" in out and ", tag v1" in out
    code, out, err = _add(capsys, s["llm"])
    assert code == 0, err

    code, out, err = u.cli(["leaderboard", "show", "--repo", BOARD], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"# {BOARD} at main (v2)"
    assert f"data revision: `{DATA_A}`; 2 runs ranked" in out
    table = [line for line in lines if line.startswith("| ") and not line.startswith("| rank")]
    assert table[0].startswith("| 1 | closed-llm | llm | deepseek-chat | 0.812 [0.780, 0.843] | 0.400 [0.350, 0.460] |")
    assert table[1].startswith("| 2 | bm25-baseline | bm25 | - | 0.734 [0.702, 0.765] | 0.610 [0.560, 0.670] |")
    assert table[0].endswith("| $0.000123 | v2 |") and table[1].endswith("| n/a | v1 |")

    # one commit and one tag per publication; an earlier publication still shows what it held
    assert sorted(hub.tags(BOARD)) == ["v1", "v2"]
    commits = hub.commits(BOARD)
    assert len(commits) == 3 and [c.oid for c in commits[1:]] == [hub.tags(BOARD)["v1"], hub.tags(BOARD)["v2"]]
    code, out, _ = u.cli(["leaderboard", "show", "--repo", BOARD, "--revision", "v1"], capsys)
    assert code == 0 and "1 run ranked" in out and "closed-llm" not in out

    # the board is a dataset: typed rows through load_dataset, at a publication tag
    script = (
        "import json, datasets\n"
        f"d = datasets.load_dataset({BOARD!r}, split='runs', revision='v2')\n"
        "print(json.dumps({'features': d.features.to_dict(), 'rows': d.to_list()}))\n"
    )
    loaded, logs = u.run_python(script, hub.env, cwd=tmp_path)
    assert loaded["features"] == board_features().to_dict()
    rows = {r["system"]: r for r in loaded["rows"]}
    assert rows["bm25-baseline"]["accuracy_lo"] == 0.702 and rows["bm25-baseline"]["data_repo"] == "org/interleavebench"
    assert rows["closed-llm"]["publication"] == "v2" and rows["closed-llm"]["data_revision"] == DATA_A
    assert json.loads(rows["closed-llm"]["provenance"])["predictions_file"] == "predictions/closed-llm.jsonl"
    assert TOKEN not in out + logs and u.files_containing(tmp_path, TOKEN) == []

    readme = hub.files(BOARD, "v2")["README.md"].decode()
    assert "| 1 | closed-llm |" in readme and "publication `v2`" in readme


def test_a_duplicate_add_is_refused_with_a_clear_message(hub, tmp_path, capsys):
    s = _scores(tmp_path)
    assert _add(capsys, s["bm25"])[0] == 0
    code, out, err = _add(capsys, s["bm25"])
    assert code == 2
    assert err.strip() == (f"error: {s['bm25']}: duplicate: closed-bm25 (closed, bm25, no model, dev) on data revision "
                           f"{DATA_A} is already on the board (published in v1)")
    # the same predictions under another name are the same run
    code, _, err = _add(capsys, s["bm25"], "--system", "renamed")
    assert code == 2 and "provenance.predictions_sha256: duplicate: the same predictions are already on the board" in err
    # and two copies in one add
    code, _, err = _add(capsys, s["llm"], s["llm"])
    assert code == 2 and "duplicate" in err
    assert sorted(hub.tags(BOARD)) == ["v1"] and len(hub.commits(BOARD)) == 2


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
    assert sorted(hub.tags(BOARD)) == ["v1", "v2"]


def test_a_run_on_the_same_data_file_joins_the_board_under_its_published_revision(hub, tmp_path, capsys):
    s = _scores(tmp_path)
    assert _add(capsys, s["bm25"], "--data-repo", "org/interleavebench", "--data-revision", "v0.1")[0] == 0
    # scored on the same file (same fingerprint), submitted without naming the revision
    code, out, err = _add(capsys, s["llm"])
    assert code == 0, err
    assert "added closed-llm (closed, llm, deepseek-chat, dev) on data revision v0.1" in out
    code, out, _ = u.cli(["leaderboard", "show", "--repo", BOARD], capsys)
    assert "data revision: `v0.1`; 2 runs ranked" in out
    # the same revision name over different data is refused
    other = u.write_json(tmp_path / "s" / "other.score.json", u.score("third", 0.6, 0.9, data_sha=DATA_B))
    code, _, err = _add(capsys, other, "--data-revision", "v0.1")
    assert code == 2 and f"scored on data {DATA_B}, but the runs on revision v0.1 were scored on other data" in err


def test_a_server_error_publishes_nothing(hub, tmp_path, capsys):
    s = _scores(tmp_path)
    assert _add(capsys, s["bm25"])[0] == 0
    hub.fail_next_commits(1, status=503)
    code, _, err = _add(capsys, s["llm"])
    assert code == 2 and "the Hub answered HTTP 503" in err and "nothing was published" in err
    assert sorted(hub.tags(BOARD)) == ["v1"]
    assert _add(capsys, s["llm"])[0] == 0 and sorted(hub.tags(BOARD)) == ["v1", "v2"]


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
        _row("f", 0.99, 0.01, data_revision=DATA_B, publication="v1"),  # an earlier board: not ranked
        _row("a", 0.70, 0.50, publication="v2"),
        _row("b", 0.80, 0.60, publication="v2"),
        _row("c", 0.80, 0.40, publication="v3"),  # ties b on accuracy, wins on weighted error
        _row("d", 0.10, 0.10, accuracy=None, publication="v3"),  # no accuracy sorts last
        _row("e", 0.99, 0.01, mode="open", publication="v3"),  # another mode: another table
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
    assert next_tag([]) == "v1"
    assert next_tag(["v1", "v2", "data-123", "v10"]) == "v11"


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
    existing = [_row("a", 0.7, 0.5, publication="v1")]
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
