"""The project as a native Hub benchmark, against the loopback stand-in: metrics published as Spaces
load with ``evaluate.load("ORG/<module>")``."""

from __future__ import annotations

import json

import _hub_util as u
from _hub_util import hub  # noqa: F401  (the fixture)

ORG = "org"

LOAD_METRIC = """
import json, evaluate
routing = evaluate.load("org/interleave_routing")
gold = [{"gold": {"thread": "t1", "action": "new"}}, {"gold": {"thread": "t2", "action": "new"}},
        {"gold": {"thread": "t1", "action": "switch"}}, {"gold": {"thread": None, "action": "oneoff"}}]
r = routing.compute(predictions=[["t1", "t2", "t2", "t1"]], references=[gold])
b3 = evaluate.load("org/interleave_bcubed").compute(predictions=["x", "x", "x"], references=["a", "a", "b"])
print(json.dumps({"accuracy": r["accuracy"], "weighted_error": r["weighted_error"], "b3": b3}))
"""


def _env(hub, tmp_path):
    env = dict(hub.env)
    env.update({"HF_MODULES_CACHE": str(tmp_path / "hf-modules"), "HF_EVALUATE_CACHE": str(tmp_path / "hf-evaluate")})
    return env


def test_push_metrics_makes_one_commit_per_module_and_evaluate_loads_them_by_name(hub, tmp_path, capsys):
    code, out, err = u.cli(["push-metrics", "--org", ORG], capsys)
    assert code == 0, err
    for name in ("interleave_routing", "interleave_bcubed", "interleave_mid_reply"):
        commits = hub.commits(f"{ORG}/{name}", "space")
        assert len(commits) == 2  # creation, then the module in one commit
        files = hub.files(f"{ORG}/{name}", repo_type="space")
        assert {f"{name}.py", "README.md", "app.py", "requirements.txt"} <= set(files)
        assert b"interleave-bench==" in files["requirements.txt"]
    got, _ = u.run_python(LOAD_METRIC, _env(hub, tmp_path), cwd=tmp_path)
    assert got == {"accuracy": 0.6667, "weighted_error": 1.0, "b3": {"precision": 0.5556, "recall": 1.0, "f1": 0.7143}}

    # a second push changes nothing and commits nothing
    code, out, err = u.cli(["push-metrics", "--org", ORG, "--metric", "interleave_routing"], capsys)
    assert code == 0, err
    assert "unchanged" in out and len(hub.commits(f"{ORG}/interleave_routing", "space")) == 2


def test_push_metrics_refuses_an_unknown_module_in_one_line(hub, capsys):
    code, out, err = u.cli(["push-metrics", "--org", ORG, "--metric", "nope"], capsys)
    assert code == 2 and err.count("\n") == 1 and "interleave_routing" in err
