"""The leaderboard: rows computed from the runs themselves, the refusal rules, ranking with intervals, tags."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import _board_util as b
import _hub_util as u
from _hub_util import TOKEN, hub  # noqa: F401  (the fixture)
from interleave_bench.errors import InputError, InputErrors
from interleave_bench.hub.board_score import differences, name_key, normalise_name
from interleave_bench.hub.leaderboard import (
    board_features,
    check_additions,
    fmt_interval,
    next_tag,
    rank,
    row_from_score,
    value_range,
)

BOARD = "org/interleavebench-leaderboard"
DATA_A = "sha256:" + "a" * 64
DATA_B = "sha256:" + "b" * 64
DATA_REPO = "org/interleavebench"


@pytest.fixture
def runs(tmp_path):
    """``(data folder, {run: predictions file})`` of the seven baselines on ten sessions."""
    return b.baselines(tmp_path / "data")


def _add(capsys, *args):
    return u.cli(["leaderboard", "add", *args, "--repo", BOARD], capsys)


def _one_line_refusal(capsys, path, *args):
    code, out, err = _add(capsys, path, *args)
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"error: {path}: "), err
    return err


def test_rows_are_scored_from_the_predictions_and_shown_ranked_with_intervals(hub, runs, tmp_path, capsys):
    data, preds = runs
    code, out, err = _add(capsys, str(preds["closed-stay"]), "--data", str(data), "--system", "stay-baseline",
                          "--data-repo", DATA_REPO)
    assert code == 0, err
    assert "published org/interleavebench-leaderboard" in out and ", tag board-1" in out
    # a score file comes along: its figures are recomputed, agree, and the computed row is published
    score = b.score_file(data, preds["closed-bm25"], bootstrap=1000, out=tmp_path / "s" / "closed-bm25.score.json")
    code, out, err = _add(capsys, str(tmp_path / "s" / "closed-bm25.score.json"))
    assert code == 0, err

    stay = b.score_file(data, preds["closed-stay"], bootstrap=1000)
    code, out, err = u.cli(["leaderboard", "show", "--repo", BOARD], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"# {BOARD} at main (board-2)"
    fp = score["provenance"]["data_sha256"]
    assert f"data revision: `{fp}`; 2 runs ranked" in out
    table = [line for line in lines if line.startswith("| ") and not line.startswith("| rank")]

    def cell(doc, m="accuracy"):  # the very numbers the score file holds
        lo, hi = doc["intervals"][m]
        return f"{doc['metrics'][m]:.4f} [{lo:.4f}, {hi:.4f}]"

    assert table[0].startswith(f"| 1 | closed-bm25 | bm25 | - | {cell(score)} | {cell(score, 'weighted_error')} |")
    assert table[1].startswith(f"| 2 | stay-baseline | stay | - | {cell(stay)} |")
    assert table[0].endswith("| board-2 |") and table[1].endswith("| board-1 |")

    # one commit and one tag per publication; an earlier publication still shows what it held
    assert sorted(hub.tags(BOARD)) == ["board-1", "board-2"]
    commits = hub.commits(BOARD)
    assert len(commits) == 3 and [c.oid for c in commits[1:]] == [hub.tags(BOARD)["board-1"], hub.tags(BOARD)["board-2"]]
    code, out, _ = u.cli(["leaderboard", "show", "--repo", BOARD, "--revision", "board-1"], capsys)
    assert code == 0 and "1 run ranked" in out and "closed-bm25" not in out

    # the board is a dataset: typed rows through load_dataset, at a publication tag
    script = (
        "import json, datasets\n"
        f"d = datasets.load_dataset({BOARD!r}, split='runs', revision='board-2')\n"
        "print(json.dumps({'features': d.features.to_dict(), 'rows': d.to_list()}))\n"
    )
    loaded, logs = u.run_python(script, hub.env, cwd=tmp_path)
    assert loaded["features"] == board_features().to_dict()
    rows = {r["system"]: r for r in loaded["rows"]}
    assert rows["stay-baseline"]["accuracy_lo"] == stay["intervals"]["accuracy"][0]
    assert rows["stay-baseline"]["data_repo"] == DATA_REPO
    assert rows["closed-bm25"]["publication"] == "board-2" and rows["closed-bm25"]["data_revision"] == fp
    assert json.loads(rows["closed-bm25"]["provenance"])["predictions_file"] == str(preds["closed-bm25"])
    assert TOKEN not in out + logs and u.files_containing(tmp_path, TOKEN) == []

    readme = hub.files(BOARD, "board-2")["README.md"].decode()
    assert "| 1 | closed-bm25 |" in readme and "publication `board-2`" in readme


def test_the_same_run_or_the_same_name_twice_is_refused(hub, runs, capsys):
    data, preds = runs
    stay = str(preds["closed-stay"])
    assert _add(capsys, stay, "--data", str(data))[0] == 0
    code, out, err = _add(capsys, stay, "--data", str(data))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"error: {stay}: duplicate: closed-stay (closed, stay, no model, dev) on data revision sha256:")
    assert err.rstrip().endswith("is already on the board (published in board-1)")
    # the same predictions under another name are the same run
    code, _, err = _add(capsys, stay, "--data", str(data), "--system", "renamed")
    assert code == 2 and "provenance.predictions_sha256: duplicate: the same predictions are already on the board" in err
    # a name that differs by case or spacing is the same name
    for name in ("CLOSED-STAY", "closed-stay ", "  closed-stay"):
        code, _, err = _add(capsys, str(preds["closed-bm25"]), "--data", str(data), "--system", name)
        assert code == 2 and "duplicate: " in err and "is already on the board" in err, (name, err)
        assert name == "CLOSED-STAY" or "duplicate: closed-stay (" in err
    # a line break in a name would forge a line of output
    code, _, err = _add(capsys, str(preds["closed-bm25"]), "--data", str(data), "--system", "bm25\nerror: forged")
    assert code == 2 and err.count("\n") == 1 and "--system: a name may not hold control characters (U+000A)" in err
    # and two copies in one add
    code, _, err = _add(capsys, str(preds["closed-bm25"]), str(preds["closed-bm25"]), "--data", str(data))
    assert code == 2 and "duplicate" in err
    code, _, err = _add(capsys, str(preds["closed-bm25"]), "--data", str(data), "--system", "CLOSED-STAY")
    assert "is already on the board as closed-stay (names are one row of a table" in err
    assert sorted(hub.tags(BOARD)) == ["board-1"] and len(hub.commits(BOARD)) == 2
    # a name is normalised before it is published
    code, out, err = _add(capsys, str(preds["closed-bm25"]), "--data", str(data), "--system", "  my   ＢＭ25 ")
    assert code == 0, err
    assert "added my BM25 (closed, bm25, no model, dev)" in out


def test_closed_rows_that_say_open_mode_are_refused_and_open_runs_of_every_policy_pass(hub, runs, tmp_path, capsys):
    """An open-mode router names the topics it opens t1, t2, ... in turn; a label naming a thread of
    its session anywhere else was read off the thread cards: closed rows, whatever ``mode`` says."""
    from interleave_bench.hub.board_score import score_given

    data, preds = runs
    # the closed oracle's rows with ``mode`` edited: a one-off's side topic x1 opens before t3
    lines = preds["closed-oracle"].read_text(encoding="utf-8").splitlines(True)
    relabelled = tmp_path / "asopen.jsonl"
    relabelled.write_text("".join(x.replace('"mode":"closed"', '"mode":"open"').replace('"oracle"', '"genius"')
                                  for x in lines), encoding="utf-8")
    first = next(k for k, x in enumerate(lines, start=1) if '"session_id":"en-0000","i":4,' in x)
    code, _, err = _add(capsys, str(relabelled), "--data", str(data), "--system", "open-genius")
    assert code == 2 and err.count("\n") == 1 and err.startswith(
        f"error: {relabelled}:{first}: pred: 't3' is a thread id of session 'en-0000', but opens a topic that the "
        "session's numbering of its topics, in turn, names 't4' (and 7 more sessions): an open-mode router is shown "
        "no thread cards"), err
    assert "routed with the cards, in closed mode" in err
    # a closed router's guess of a thread not yet begun, its rows saying open
    guess = [json.loads(x) for x in preds["closed-stay"].read_text(encoding="utf-8").splitlines()]
    guessed = tmp_path / "guessed.jsonl"
    guessed.write_text("".join(json.dumps({**r, "mode": "open", "pred": "t3" if r["i"] == 1 else r["pred"]}) + "\n"
                               for r in guess), encoding="utf-8")
    code, _, err = _add(capsys, str(guessed), "--data", str(data))
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {guessed}:2: pred: 't3' is a thread id of session 'en-0000', but opens a topic "
                          "that the session's numbering of its topics, in turn, names 't2'"), err
    # the project's own open-mode runs of every policy, bursts merged or not, pass
    routed = []
    for policy, extra in (("local", ()), ("local", ("--merge", "all")), ("llm", ("--dry-run", "--merge", "all",
                                                                                 "--decide", "each"))):
        out = tmp_path / f"open-{policy}-{len(routed)}.jsonl"
        assert u.cli(["route", str(data), "--mode", "open", "--policy", policy, *extra, "--out", str(out)], capsys)[0] == 0
        routed.append(out)
    # another system's numbering of its topics, from 0 or on from its last session, is its own
    bm25 = [json.loads(x) for x in preds["open-bm25"].read_text(encoding="utf-8").splitlines()]
    for shift in (-1, 5):
        shifted = tmp_path / f"shifted{shift}.jsonl"
        shifted.write_text("".join(json.dumps({**r, "policy": "outside", "pred": f"t{int(r['pred'][1:]) + shift}"
                                               if r["pred"][1:].isdigit() else r["pred"]}) + "\n" for r in bm25),
                           encoding="utf-8")
        routed.append(shifted)
    opened = [preds[n] for n in ("open-oracle", "open-single", "open-always_new", "open-bm25")] + routed
    for split in ("dev", "all"):
        assert len(score_given([str(x) for x in opened], data=str(data), split=split)) == len(opened)


def test_a_second_row_for_a_turn_is_refused_without_naming_an_option_add_lacks(hub, runs, tmp_path, capsys):
    data, preds = runs
    lines = preds["closed-stay"].read_text(encoding="utf-8").splitlines()
    doubled = tmp_path / "closed-doubled.jsonl"
    doubled.write_text("\n".join([*lines, lines[0]]) + "\n", encoding="utf-8")
    code, out, err = _add(capsys, str(doubled), "--data", str(data))
    row = json.loads(lines[0])
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err == (f"error: {doubled}:{len(lines) + 1}: i: second row for session {row['session_id']!r} turn "
                   f"{row['i']} (first on line 1); remove it (score, compare and report keep the last with "
                   "--allow-duplicates)\n")
    assert hub.repos.get(("dataset", BOARD)) is None  # nothing published


def test_a_sessions_file_given_as_a_run_is_told_where_add_takes_its_data(hub, runs, capsys):
    data, _ = runs
    sessions = data / "sessions.jsonl"
    code, out, err = _add(capsys, str(sessions), "--data", str(data))
    assert code == 2 and out == ""
    assert err == (f"error: {sessions}: a sessions file (lines with turns and threads), given as predictions: it is "
                   "the data, given with --data\n")
    assert hub.repos.get(("dataset", BOARD)) is None


def test_a_score_file_that_disagrees_with_the_computed_run_is_refused_naming_the_field(hub, runs, tmp_path, capsys):
    data, preds = runs
    honest = b.score_file(data, preds["closed-stay"])
    cases = {
        "metrics.accuracy": b.forged(honest, metrics__accuracy=0.95),
        "counts.strict": b.forged(honest, counts__strict=371),
        "intervals.accuracy": b.forged(honest, intervals__accuracy=[0.0, 1.0]),
        "provenance.predictions_sha256": b.forged(honest, provenance__predictions_sha256="sha256:" + "0" * 64),
    }
    for field, doc in cases.items():
        err = _one_line_refusal(capsys, b.write(tmp_path / "s" / f"{field}.score.json", doc))
        assert f": {field}: the file says " in err and "the board publishes what it computes" in err, err
    assert hub.repos.get(("dataset", BOARD)) is None  # refused before any request


def test_a_run_without_intervals_is_refused(hub, runs, tmp_path, capsys):
    data, preds = runs
    bare = b.write(tmp_path / "s" / "bare.score.json", b.score_file(data, preds["closed-stay"], bootstrap=0))
    err = _one_line_refusal(capsys, bare)
    assert "provenance.bootstrap: 0: the run has no intervals" in err


def test_runs_without_provenance_or_on_other_data_are_refused_unless_new_board(hub, runs, tmp_path, capsys):
    data, preds = runs
    noprov = u.write_json(tmp_path / "s" / "noprov.score.json", u.score("x", 0.5, 0.5, provenance=False))
    code, _, err = _add(capsys, noprov)
    assert code == 2 and f"error: {noprov}: provenance.data_sha256: required field is missing" in err and len(err.splitlines()) == 1
    assert hub.repos.get(("dataset", BOARD)) is None  # refused before any request

    assert _add(capsys, str(preds["closed-stay"]), "--data", str(data))[0] == 0
    other_data, other = b.baselines(tmp_path / "other", n=6)
    code, _, err = _add(capsys, str(other["closed-stay"]), "--data", str(other_data))
    assert code == 2 and "but the board ranks sha256:" in err and "--new-board" in err

    code, out, err = _add(capsys, str(other["closed-stay"]), "--data", str(other_data), "--new-board")
    assert code == 0, err
    code, out, _ = u.cli(["leaderboard", "show", "--repo", BOARD], capsys)
    assert "1 run ranked, 1 on other data revisions not shown" in out
    assert sorted(hub.tags(BOARD)) == ["board-1", "board-2"]


def publish_data(tmp_path, capsys, n=6, revision="v0.1"):
    """Export ``n`` sessions as v0, push them to DATA_REPO tagged ``revision``; returns the data folder and runs."""
    data, preds = b.baselines(tmp_path / f"data-{revision}", n=n)
    out = tmp_path / f"export-{revision}"
    assert u.cli(["export", "--v0", str(data), "--out", str(out)], capsys)[0] == 0
    code, _, err = u.cli(["push", str(out), "--repo", DATA_REPO, "--revision", revision], capsys)
    assert code == 0, err
    return data, preds


def test_runs_on_a_published_revision_are_ranked_under_its_name(hub, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data, preds = publish_data(tmp_path, capsys)
    code, out, err = _add(capsys, str(preds["closed-stay"]), "--data", f"hub:{DATA_REPO}@v0.1")
    assert code == 0, err
    assert "added closed-stay (closed, stay, no model, dev) on data revision v0.1" in out
    # scored on the same file locally, submitted without naming the revision: joins under its name
    code, out, err = _add(capsys, str(preds["closed-bm25"]), "--data", str(data))
    assert code == 0, err
    assert "added closed-bm25 (closed, bm25, no model, dev) on data revision v0.1" in out
    code, out, _ = u.cli(["leaderboard", "show", "--repo", BOARD], capsys)
    assert "data revision: `v0.1`; 2 runs ranked" in out and "### config `v0`, split `dev`, mode `closed`" in out


def test_a_score_file_naming_a_revision_that_is_not_there_is_refused_naming_the_file(hub, tmp_path, capsys,
                                                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    data, preds = publish_data(tmp_path, capsys)
    assert u.cli(["score", f"hub:{DATA_REPO}@v0.1", str(preds["closed-stay"]), "--bootstrap", "50"], capsys)[0] == 0
    honest = json.loads(preds["closed-stay"].with_suffix(".score.json").read_text(encoding="utf-8"))
    assert honest["provenance"]["data_revision"] == "v0.1"
    for field, value, said in (("data_revision", "v9.9", f"resolve {DATA_REPO}@v9.9: revision not found"),
                               ("data_repo", "org/elsewhere", "resolve org/elsewhere@v0.1: repository not found")):
        doc = b.forged(honest, **{f"provenance__{field}": value})
        path = b.write(tmp_path / "s" / f"{field}.score.json", doc)
        err = _one_line_refusal(capsys, path)
        assert err.startswith(f"error: {path}: provenance.data_revision: {said}"), err
    assert hub.repos.get(("dataset", BOARD)) is None  # refused before the board is touched


def test_a_false_data_revision_claim_is_refused(hub, tmp_path, capsys):
    data, preds = publish_data(tmp_path, capsys)
    other_data, other = b.baselines(tmp_path / "other", n=5)
    run = str(preds["closed-stay"])
    err = _one_line_refusal(capsys, run, "--data", str(data), "--data-repo", DATA_REPO, "--data-revision", "v9.9")
    assert "'v9.9' is not a revision of org/interleavebench" in err
    # a revision that exists but holds other data than the run was scored on
    err = _one_line_refusal(capsys, str(other["closed-stay"]), "--data", str(other_data), "--data-repo", DATA_REPO,
                            "--data-revision", "v0.1")
    assert f"(commit {hub.tags(DATA_REPO)['v0.1'][:12]}) holds v0 " in err and "the run was not scored on that revision" in err
    # a claim without a repo to check it against
    err = _one_line_refusal(capsys, run, "--data", str(data), "--data-revision", "v0.1")
    assert "give --data-repo ORG/NAME" in err
    assert hub.repos.get(("dataset", BOARD)) is None or len(hub.commits(BOARD)) == 1  # nothing published
    # the true claim goes through
    code, out, err = _add(capsys, run, "--data", str(data), "--data-repo", DATA_REPO, "--data-revision", "v0.1")
    assert code == 0, err


def test_a_server_error_publishes_nothing(hub, runs, capsys):
    data, preds = runs
    assert _add(capsys, str(preds["closed-stay"]), "--data", str(data))[0] == 0
    hub.fail_next_commits(1, status=503)
    code, _, err = _add(capsys, str(preds["closed-bm25"]), "--data", str(data))
    assert code == 2 and "the Hub answered HTTP 503" in err and "nothing was published" in err
    assert sorted(hub.tags(BOARD)) == ["board-1"]
    assert _add(capsys, str(preds["closed-bm25"]), "--data", str(data))[0] == 0
    assert sorted(hub.tags(BOARD)) == ["board-1", "board-2"]


def test_a_concurrent_publication_is_refused_naming_the_boards_current_revision(hub, runs, capsys, monkeypatch):
    import interleave_bench.hub.leaderboard as lb

    data, preds = runs
    assert _add(capsys, str(preds["closed-stay"]), "--data", str(data))[0] == 0
    read_at = hub.repo(BOARD).branches["main"]
    real = lb.write_board
    others = []

    def another_add_first(*args, **kw):  # the other add publishes after this one read the board
        if not others:
            monkeypatch.setattr(lb, "write_board", real)
            others.append(lb.add_runs([str(preds["open-bm25"])], BOARD, data=str(data)))
        return real(*args, **kw)

    monkeypatch.setattr(lb, "write_board", another_add_first)
    code, _, err = _add(capsys, str(preds["closed-bm25"]), "--data", str(data))
    now = hub.repo(BOARD).branches["main"]
    assert code == 2 and err.count("\n") == 1 and now == others[0].commit != read_at
    assert f"the board is at {now[:12]}, moved by another publication since this add read it at {read_at[:12]}" in err


def test_show_of_a_missing_board_is_one_line(hub, capsys):
    code, _, err = u.cli(["leaderboard", "show", "--repo", "org/nothing-here"], capsys)
    assert code == 2 and "repository not found" in err and len(err.strip().splitlines()) == 1


def test_the_board_page_says_leaderboard_once(hub, runs, tmp_path, capsys):
    from interleave_bench.hub.board_render import page_title

    data, preds = runs
    assert _add(capsys, str(preds["closed-stay"]), "--data", str(data))[0] == 0
    page = tmp_path / "board.html"
    assert u.cli(["leaderboard", "show", "--repo", BOARD, "--html", str(page)], capsys)[0] == 0
    html = page.read_text(encoding="utf-8")
    assert f"<title>{BOARD}</title>" in html and "leaderboard leaderboard" not in html
    assert page_title("org/runs") == "org/runs leaderboard"


def test_publish_leaderboard_script_wraps_the_command(hub, runs, capsys):
    import importlib.util
    from pathlib import Path

    data, preds = runs
    script = Path(__file__).resolve().parents[1] / "scripts" / "publish_leaderboard.py"
    spec = importlib.util.spec_from_file_location("publish_leaderboard", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["add", str(preds["closed-stay"]), "--data", str(data), "--repo", BOARD]) == 0
    assert mod.main(["show", "--repo", BOARD]) == 0
    assert "| 1 | closed-stay |" in capsys.readouterr().out


# --- pure parts -------------------------------------------------------------------------------------------


def _row(system, acc, werr, **kw):
    r = row_from_score("x.json", u.score(system, acc, werr, data_sha=DATA_A))
    r.update(kw)
    return r


def test_rank_orders_by_accuracy_then_weighted_error_and_groups_by_config_split_and_mode():
    rows = [
        _row("f", 0.99, 0.01, data_revision=DATA_B, publication="board-1"),  # an earlier board: not ranked
        _row("a", 0.70, 0.50, publication="board-2"),
        _row("b", 0.80, 0.60, publication="board-2"),
        _row("c", 0.80, 0.40, publication="board-3"),  # ties b on accuracy, wins on weighted error
        _row("d", 0.10, 0.10, accuracy=None, publication="board-3"),  # no accuracy sorts last
        _row("e", 0.99, 0.01, mode="open", publication="board-3"),  # another mode: another table
        _row("g", 0.99, 0.01, data_config="sgd", publication="board-3"),  # another config: another table
    ]
    rev, groups, left_out = rank(rows)  # the board ranks the revision of its latest publication
    assert rev == DATA_A and left_out == 1
    assert [(g.config, g.split, g.mode) for g in groups] == [(None, "dev", "closed"), (None, "dev", "open"),
                                                             ("sgd", "dev", "closed")]
    assert [r["system"] for r in groups[0].rows] == ["c", "b", "a", "d"]
    assert groups[2].title == "config sgd, split dev, mode closed"
    rev, groups, left_out = rank(rows, DATA_B)
    assert rev == DATA_B and left_out == 6 and [r["system"] for r in groups[0].rows] == ["f"]


def test_value_ranges_are_the_metric_tables():
    from interleave_bench.score.table import metric

    assert value_range("routing", "topics_per_thread") == (metric("topics_per_thread").lo, metric("topics_per_thread").hi)
    assert value_range("routing", "topics_per_thread")[0] == 1.0
    assert value_range("routing", "weighted_error") == (0.0, 3.0)
    assert value_range("mid_reply", "mixed_in") == (metric("mid_reply_mixed_in").lo, metric("mid_reply_mixed_in").hi)
    assert value_range("shared_facts", "stale") == (metric("stale_answers").lo, metric("stale_answers").hi)
    assert value_range("shared_facts", "weighted_error") is None


def test_check_additions_accepts_new_runs_on_the_ranked_revision():
    existing = [_row("a", 0.7, 0.5, publication="board-1")]
    check_additions(existing, [_row("b", 0.8, 0.4)], ["b.json"])  # no exception
    with pytest.raises(InputErrors):
        check_additions(existing, [_row("b", 0.8, 0.4, data_revision=DATA_B)], ["b.json"])
    check_additions(existing, [_row("b", 0.8, 0.4, data_revision=DATA_B)], ["b.json"], new_board=True)
    with pytest.raises(InputErrors, match="duplicate: A"):
        check_additions(existing, [_row("A", 0.8, 0.4)], ["b.json"])  # a name is a name whatever its case
    # the same name in capitals, where folding the case undoes the letters' composition
    on_board = [_row("run-\u0390", 0.7, 0.5, publication="board-1")]
    with pytest.raises(InputErrors, match="duplicate: "):
        check_additions(on_board, [_row(normalise_name("RUN-\u03aa\u0301", "b.json", "system"), 0.8, 0.4)], ["b.json"])
    # names that look the same in a table are one name: other dashes, Cyrillic and Greek look-alikes
    on_board = [_row("closed-bm25", 0.7, 0.5, publication="board-1")]
    for look_alike in ("closed\u2010bm25", "closed\u2212bm25", "cl\u043esed-bm25", "closed-\u0392M25", "CLOSED\u2014BM25"):
        with pytest.raises(InputErrors, match="duplicate: .* as closed-bm25"):
            check_additions(on_board, [_row(normalise_name(look_alike, "b.json", "system"), 0.8, 0.4)], ["b.json"])
    check_additions(on_board, [_row("closed-bm26", 0.8, 0.4)], ["b.json"])  # a name that only looks close is its own


def test_intervals_are_formatted_beside_the_value():
    r = {"accuracy": 0.7341, "accuracy_lo": 0.70249, "accuracy_hi": 0.7651, "switch_f1": 0.5, "switch_f1_lo": None,
         "switch_f1_hi": None, "refs_recall": None}
    assert fmt_interval(r, "accuracy") == "0.7341 [0.7025, 0.7651]"
    assert fmt_interval(r, "switch_f1") == "0.5000"
    assert fmt_interval(r, "refs_recall") == "n/a"


def test_next_tag_counts_publications():
    assert next_tag([]) == "board-1"
    assert next_tag(["board-1", "board-2", "data-123", "v0.1"]) == "board-3"
    # a board tagged v<n> before the board-<n> naming goes on counting from there
    assert next_tag(["board-1", "board-2", "data-123", "v10"]) == "board-11"


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




# --- invariants of names and agreement ----------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_a_normalised_name_is_stable_printable_and_keeps_its_identity(raw):
    try:
        name = normalise_name(raw, "x.json", "system")
    except InputError as exc:
        assert "\n" not in exc.format()
        return
    assert normalise_name(name, "x.json", "system") == name  # normalising twice changes nothing
    assert name == name.strip() and "  " not in name and name.isprintable()
    assert name_key(name) == name_key(raw) == name_key(name.upper()) == name_key(f" {name} ")
    assert unicodedata.normalize("NFKC", name_key(name)) == name_key(name)  # folding leaves it normalised


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                           | st.text(max_size=5), lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(json_values, json_values)
def test_a_document_agrees_with_itself_and_not_with_another(a, other):
    assert list(differences(a, a)) == []
    if list(differences(a, other)):
        assert list(differences(other, a))  # disagreement goes both ways


def _hand_edited_board(hub, repo, table_or_bytes):
    """A board whose Parquet file was replaced by hand (an upload outside ``leaderboard add``)."""
    import io

    import pyarrow.parquet as pq
    from huggingface_hub import HfApi

    if isinstance(table_or_bytes, bytes):
        content = table_or_bytes
    else:
        buf = io.BytesIO()
        pq.write_table(table_or_bytes, buf)
        content = buf.getvalue()
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(repo, repo_type="dataset", exist_ok=True)
    info = api.upload_file(path_or_fileobj=content, path_in_repo="data/leaderboard.parquet", repo_id=repo,
                           repo_type="dataset")
    return info.oid


def test_a_hand_edited_board_file_is_one_line_naming_its_row_and_column(hub, runs, capsys):
    import pyarrow as pa

    data, preds = runs
    assert _add(capsys, str(preds["closed-stay"]), "--data", str(data))[0] == 0
    honest = b.score_file(data, preds["closed-stay"])
    good = row_from_score("x.json", honest)
    cases = {
        "system": pa.Table.from_pylist([{**good, "publication": "board-1"}, {**good, "system": None, "publication": "board-1"}]),
        "accuracy": pa.Table.from_pylist([{**good, "accuracy": float("nan"), "publication": "board-1"}]),
        "weighted_error": pa.Table.from_pylist([{**good, "weighted_error": "low", "publication": "board-1"}]),
        "sessions": pa.Table.from_pylist([{**good, "sessions": "8", "publication": "board-1"}]),
    }
    for k, (column, table) in enumerate(cases.items()):
        repo = f"org/edited-{k}"
        commit = _hand_edited_board(hub, repo, table)
        row = 2 if column == "system" else 1
        for argv in (["leaderboard", "show", "--repo", repo],
                     ["leaderboard", "add", str(preds["closed-bm25"]), "--data", str(data), "--repo", repo]):
            code, _, err = u.cli(argv, capsys)
            assert code == 2 and err.count("\n") == 1, (argv, err)
            assert err.startswith(f"error: hub:{repo}@{commit[:12]}/data/leaderboard.parquet:{row}: {column}: "), err
    commit = _hand_edited_board(hub, "org/edited-bytes", b"PAR1 not a table")
    code, _, err = u.cli(["leaderboard", "show", "--repo", "org/edited-bytes"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"error: hub:org/edited-bytes@{commit[:12]}/data/leaderboard.parquet: not a Parquet file"), err
    assert "interleave-board-" not in err  # never the temporary folder it was read from


def test_one_predictions_file_is_ranked_on_each_split_it_holds_once(hub, runs, capsys):
    """A run routed on every split is one run of the dev table and one of the test table: the same
    file is refused again only within a table."""
    data, preds = runs
    bm25 = str(preds["closed-bm25"])
    assert _add(capsys, bm25, "--data", str(data))[0] == 0
    code, _, err = _add(capsys, bm25, "--data", str(data), "--split", "test")
    assert code == 0, err
    code, _, err = _add(capsys, bm25, "--data", str(data), "--split", "test", "--system", "renamed")
    assert code == 2 and "duplicate: the same predictions are already on the board as closed-bm25 (closed, bm25, " \
                         "no model, test)" in err
