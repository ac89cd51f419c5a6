"""The pipeline around the routers: data -> ``baselines`` -> the scorer, oracle perfect in both modes.

Uses the data generator (``interleave_bench.generate.generate_offline``) and the scorer
(``interleave_bench.score.run.score_files``).
"""

from __future__ import annotations

import json
from pathlib import Path


from interleave_bench.cli import main
from interleave_bench.generate import generate_offline
from interleave_bench.score.run import score_files

from _route_util import read_rows, standard_sessions, write_data

STANDARD = ["closed-oracle", "closed-stay", "closed-bm25", "open-oracle", "open-single", "open-always_new", "open-bm25"]


def baselines_then_score(data: Path, capsys) -> dict[str, dict]:
    """Run ``baselines`` on all splits, check each file covers every message once, score all."""
    assert main(["baselines", str(data), "--split", "all"]) == 0
    out = capsys.readouterr().out
    sessions_file = data / "sessions.jsonl"
    keys = []
    for line in sessions_file.read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        keys += [(s["session_id"], t["i"]) for t in s["turns"]]
    paths = []
    for name in STANDARD:
        path = data / "predictions" / f"{name}.jsonl"
        assert f"wrote {path}" in out
        assert [(r["session_id"], r["i"]) for r in read_rows(path)] == keys
        paths.append(path)
    runs = score_files(data, paths, split="all", bootstrap=0, write=False)
    return {r.system: r.result["metrics"] for r in runs}


def assert_oracle_perfect(metrics: dict[str, dict]) -> None:
    for mode in ("closed", "open"):
        m = metrics[f"{mode}-oracle"]
        assert m["accuracy"] == 1.0, mode
        assert m["weighted_error"] == 0.0, mode
        assert m["bcubed_f1"] == 1.0, mode
        assert m["oneoff_into_topic"] == 0.0, mode
        assert m["refs_recall"] in (1.0, None), mode


def test_oracle_scores_perfectly_on_hand_written_data(tmp_path, capsys):
    metrics = baselines_then_score(write_data(tmp_path / "data", standard_sessions()), capsys)
    assert_oracle_perfect(metrics)
    # and the baselines are not: the scorer can tell them apart
    assert metrics["open-single"]["accuracy"] < 1.0 and metrics["closed-stay"]["weighted_error"] > 0


def test_offline_data_through_baselines_and_scorer(tmp_path, capsys):
    data = generate_offline(4, tmp_path / "offline", seed=11, langs=("en", "zh")).parent
    metrics = baselines_then_score(data, capsys)
    assert_oracle_perfect(metrics)
