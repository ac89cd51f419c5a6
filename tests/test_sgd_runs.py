"""Routing the SGD import: baselines, ``score`` and ``compare`` in both modes; the leaderboard ranks it apart."""

from __future__ import annotations

import json

import _hub_util as u
from _hub_util import hub  # noqa: F401  (the fixture)
from _sgd_util import imported, run_cli  # noqa: F401  (imported: the fixture)
from interleave_bench.io import read_sessions
from interleave_bench.fingerprints import records_fingerprint

BOARD = "org/interleavebench-leaderboard"
DATA_REPO = "org/interleavebench"




def test_the_next_step_an_import_prints_runs_as_printed(tmp_path, capsys):
    """``import sgd`` suggests ``baselines OUT`` with no ``--mode`` (both modes apply, and that
    writes both, as docs/sgd.md runs it); ``import irc`` suggests ``--mode open``, all its data takes."""
    from pathlib import Path

    from _sgd_util import FIXTURE

    wanted = {"sgd": ["closed-bm25", "closed-oracle", "closed-stay", "open-always_new", "open-bm25", "open-oracle",
                      "open-single"],
              "irc": ["open-always_new", "open-bm25", "open-oracle", "open-single"]}
    corpora = {"sgd": FIXTURE, "irc": Path(__file__).parent / "data" / "irc"}
    for kind, corpus in corpora.items():
        out = tmp_path / kind
        code, printed, err = run_cli(capsys, "import", kind, corpus, "--out", out)
        assert code == 0, err
        [step] = [line for line in printed.splitlines() if line.startswith("next: ")]
        expected = f"next: interleave-bench baselines {out}" + (" --mode open" if kind == "irc" else "")
        assert step == expected
        code, _, err = run_cli(capsys, *step.split()[2:])
        assert code == 0, err
        assert sorted(p.stem for p in (out / "predictions").glob("*.jsonl")) == wanted[kind]


def test_baselines_score_and_compare_run_in_both_modes(tmp_path, capsys, imported):
    code, out, err = run_cli(capsys, "baselines", imported)
    assert code == 0, err
    preds = imported / "predictions"
    assert sorted(p.stem for p in preds.glob("*.jsonl")) == [
        "closed-bm25", "closed-oracle", "closed-stay", "open-always_new", "open-bm25", "open-oracle", "open-single"]
    for mode in ("closed", "open"):
        code, _, err = run_cli(capsys, "route", imported, "--mode", mode, "--policy", "local")
        assert code == 0, err
    code, out, err = run_cli(capsys, "score", imported, preds, "--bootstrap", 40)
    assert code == 0, err
    scores = {p.name.removesuffix(".score.json"): json.loads(p.read_text()) for p in preds.glob("*.score.json")}
    assert len(scores) == 9
    for mode in ("closed", "open"):
        oracle = scores[f"{mode}-oracle"]["metrics"]
        assert oracle["accuracy"] == 1.0 and oracle["weighted_error"] == 0.0 and oracle["bcubed_f1"] == 1.0
    sessions = read_sessions(imported / "sessions.jsonl")
    turns = [t for s in sessions for t in s.turns]
    # closed-stay keeps every message of a session on the thread its first message matched: right
    # exactly on that thread's messages (nothing is ambiguous here, so every message is strict)
    stay = {}
    for line in (preds / "closed-stay.jsonl").read_text().splitlines():
        row = json.loads(line)
        stay.setdefault(row["session_id"], set()).add(row["pred"])
    assert all(len(labels) == 1 for labels in stay.values())
    right = sum(t.gold.thread in stay[s.session_id] for s in sessions for t in s.turns)
    assert not any(t.ambiguous for t in turns)
    assert scores["closed-stay"]["metrics"]["accuracy"] == round(right / len(turns), 4)
    # the returns and the cross references are there to break down by
    returns = sum(t.gold.action == "return" for t in turns)
    cross = sum("cross" in t.tags for t in turns)
    assert returns and cross
    assert scores["closed-bm25"]["breakdowns"]["action"]["return"]["n"] == returns
    assert scores["closed-bm25"]["breakdowns"]["tag"]["cross"]["n"] == cross
    assert scores["closed-oracle"]["metrics"]["refs_recall"] == 1.0

    for mode, a, b in (("closed", "closed-stay", "closed-bm25"), ("open", "open-single", "open-local")):
        code, out, err = run_cli(capsys, "compare", imported, preds / f"{a}.jsonl", preds / f"{b}.jsonl",
                                 "--bootstrap", 40, "--json")
        assert code == 0, err
        doc = json.loads(out)
        assert doc["strict_messages"] == len(turns) and doc["a"]["system"] == a and doc["b"]["system"] == b
        assert doc["wins"] + doc["losses"] + doc["both_right"] + doc["both_wrong"] == len(turns)


def test_the_leaderboard_takes_an_sgd_run_on_its_release_and_never_ranks_it_with_v0(hub, tmp_path, capsys,  # noqa: F811
                                                                                       imported, monkeypatch):
    v0_rows = u.sessions(6)
    v0 = u.write_data(tmp_path / "v0", v0_rows, u.manifest(n=6))
    out = tmp_path / "export"
    assert run_cli(capsys, "export", "--v0", v0, "--sgd", imported, "--out", out)[0] == 0
    code, _, err = run_cli(capsys, "push", out, "--repo", DATA_REPO, "--revision", "v0.1")
    assert code == 0, err
    sgd_fp = records_fingerprint(read_sessions(imported / "sessions.jsonl"))
    # the published config routes straight from the Hub, and comes back as the import wrote it
    monkeypatch.setenv("INTERLEAVE_HUB_DATA", str(tmp_path / "hub-data"))
    code, out, err = run_cli(capsys, "baselines", f"hub:{DATA_REPO}@v0.1#sgd", "--mode", "closed")
    assert code == 0, err
    [folder] = (tmp_path / "hub-data").glob("*/sgd@*")
    assert read_sessions(folder / "sessions.jsonl") == read_sessions(imported / "sessions.jsonl")
    # the board scores the SGD run itself, on the release's sgd config
    code, out, err = run_cli(capsys, "leaderboard", "add", folder / "predictions" / "closed-bm25.jsonl", "--data",
                             f"hub:{DATA_REPO}@v0.1#sgd", "--system", "sgd-bm25", "--repo", BOARD)
    assert code == 0, err
    assert "added sgd-bm25 (closed, bm25, no model, dev) on data revision v0.1" in out
    # a v0 run on the same release is other data: it goes in a table of its own, never beside the SGD run
    code, out, err = run_cli(capsys, "baselines", v0, "--mode", "closed")
    assert code == 0, err
    code, _, err = run_cli(capsys, "leaderboard", "add", v0 / "predictions" / "closed-stay.jsonl", "--data", v0,
                           "--data-repo", DATA_REPO, "--data-revision", "v0.1", "--repo", BOARD)
    assert code == 0, err
    code, out, _ = run_cli(capsys, "leaderboard", "show", "--repo", BOARD)
    assert "data revision: `v0.1`; 2 runs ranked" in out
    tables = out.split("### ")[1:]
    assert [t.splitlines()[0] for t in tables] == ["config `sgd`, split `dev`, mode `closed`",
                                                   "config `v0`, split `dev`, mode `closed`"]
    assert "sgd-bm25" in tables[0] and "closed-stay" not in tables[0] and "closed-stay" in tables[1]
    # an SGD run scored on the local copy, claimed on the release: the revision's sgd config holds that data
    code, _, err = run_cli(capsys, "leaderboard", "add", folder / "predictions" / "closed-stay.jsonl", "--data", folder,
                           "--data-repo", DATA_REPO, "--data-revision", "v0.1", "--repo", BOARD)
    assert code == 0, err
    code, out, _ = run_cli(capsys, "leaderboard", "show", "--repo", BOARD)
    sgd_table = out.split("### ")[1]
    assert sgd_table.startswith("config `sgd`") and "closed-stay" in sgd_table
    from interleave_bench.hub.client import hub_api
    from interleave_bench.hub.leaderboard import fetch_board

    rows = fetch_board(hub_api(), BOARD).rows
    assert {r["data_sha256"] for r in rows if r["data_config"] == "sgd"} == {sgd_fp}
