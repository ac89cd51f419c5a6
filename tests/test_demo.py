"""`interleave-bench demo`: the main job on the embedded default, end to end, with no key and no network."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def test_demo_generates_routes_scores_and_prints_the_table(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DEEPSEEK_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    cmd = [sys.executable, "-m", "interleave_bench", "demo", "--sessions", "10", "--bootstrap", "200"]
    first = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    out = first.stdout
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ") and "-" in line.split("|")[1]}
    assert set(rows) == {"closed-oracle", "closed-stay", "closed-bm25", "closed-local", "open-oracle", "open-single",
                         "open-always_new", "open-bm25", "open-local"}
    for oracle in ("closed-oracle", "open-oracle"):
        assert "| 1.0000 [1.0000, 1.0000] | 1.0000 [1.0000, 1.0000] | 0.0000 [0.0000, 0.0000] |" in rows[oracle]
    data = tmp_path / "data" / "interleave-v0-demo"
    # the demo scores every split: its score files say so (score files are named by split)
    score = json.loads((data / "predictions" / "closed-bm25.all.score.json").read_text(encoding="utf-8"))
    assert score["counts"]["sessions"] == 10 and 0 < score["metrics"]["accuracy"] < 1
    assert score["provenance"]["data_sha256"].startswith("sha256:")
    # the summary line on stderr, as score's and facts' are, so the table on stdout can be piped
    assert first.stderr.splitlines()[-1].startswith("done: demo: 10 sessions, ")
    assert "done: " not in out
    # the small offline v1 set, with its probe counts by category
    [v1] = [line for line in out.splitlines() if line.startswith("v1 facts: ")]
    assert "data/interleave-v1-demo/sessions.jsonl: 10 sessions" in v1
    counts = dict(part.split(" ") for part in v1.split("probes (")[1].rstrip(")").split(", "))
    assert list(counts) == ["stale", "proposal", "rejected", "accepted", "cross"] and all(int(n) > 0 for n in counts.values())
    v1_sessions = (tmp_path / "data" / "interleave-v1-demo" / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(v1_sessions) == 10 and all(json.loads(line)["probes"] for line in v1_sessions)
    # a rerun prints the same table (seeded generation, model-free routers, seeded bootstrap)
    second = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    table = lambda text: [l for l in text.splitlines() if l.startswith("|")]
    assert second.returncode == 0 and table(second.stdout) == table(out)
    assert [line for line in second.stdout.splitlines() if line.startswith("v1 facts: ")] == [v1]


def test_demo_refuses_one_folder_for_both_sets_before_writing_anything(tmp_path, monkeypatch, capsys):
    from interleave_bench.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "link").symlink_to(tmp_path / "d", target_is_directory=True)
    for out, v1 in (("d", "d"), ("d", "./d/"), ("d", "link")):
        assert main(["demo", "--sessions", "2", "--out", out, "--v1-out", v1]) == 2
        err = capsys.readouterr().err
        assert err == f"error: demo: --out {out} and --v1-out {v1} are one folder; give the v1 set another --v1-out\n"
        assert not (tmp_path / "d").exists()
    # without a v1 set there is nothing to clash: the demo runs
    assert main(["demo", "--sessions", "2", "--bootstrap", "0", "--out", "d", "--v1-out", "d", "--v1-sessions", "0"]) == 0
    assert (tmp_path / "d" / "sessions.jsonl").is_file()
