"""The evaluate modules: their docstring examples run as doctests, and ``interleave_routing`` returns
exactly the metrics of ``interleave-bench score --json`` for the same inputs.

``evaluate`` copies a module into its modules cache and imports it from there; that happens in a
child process whose caches point into ``tmp_path`` (and which is offline), so nothing is written
outside the test's folder and no import state leaks between tests.
"""

from __future__ import annotations

import doctest
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interleave_bench.cli import main

from _score_util import many_sessions, rows, write_jsonl
from test_score_metrics import C1_LABELS, O1_LABELS, c1, o1

#: the modules' source folder; the test finds them by glob, so a new module is tested as it lands
METRICS_DIR = Path(__file__).resolve().parent.parent / "interleave_bench" / "metrics"

CHILD = r"""
import doctest, importlib.util, json, os, sys

import interleave_bench

names, inputs_path = json.loads(sys.argv[1]), sys.argv[2]
report = {"doctests": {}, "cwd": os.getcwd()}
for name in names:
    path = os.path.join(interleave_bench.metric_path(name), name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report["doctests"][name] = [result.attempted, result.failed]

import evaluate

routing = evaluate.load(interleave_bench.metric_path("interleave_routing"))
with open(inputs_path, encoding="utf-8") as fh:
    cases = json.load(fh)
report["results"] = {name: routing.compute(**kwargs) for name, kwargs in cases.items()}
print("REPORT " + json.dumps(report))
"""


def module_names() -> list[str]:
    """Every evaluate module of the package: a folder holding a script of its own name."""
    return sorted(p.parent.name for p in METRICS_DIR.glob("*/*.py") if p.stem == p.parent.name)


def run_child(tmp_path: Path, cases: dict) -> dict:
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps(cases), encoding="utf-8")
    env = dict(os.environ)
    env.update({
        "HF_MODULES_CACHE": str(tmp_path / "hf-modules"),
        "HF_EVALUATE_CACHE": str(tmp_path / "hf-evaluate"),
        "HF_DATASETS_CACHE": str(tmp_path / "hf-datasets"),
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_OFFLINE": "1",
        "HF_EVALUATE_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    })
    # run from a folder outside the checkout: the examples must not depend on the working folder
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(module_names()), str(inputs)], capture_output=True,
                          text=True, env=env, timeout=600, cwd=outside)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("REPORT "))
    doctest_output = proc.stdout[: proc.stdout.index("REPORT ")]
    return {**json.loads(line[len("REPORT "):]), "doctest_output": doctest_output}


def cli_metrics(tmp_path: Path, capsys, name: str, sessions: list, pred_rows: list) -> dict:
    data = write_jsonl(tmp_path / name / "sessions.jsonl", sessions)
    pred = write_jsonl(tmp_path / name / "run.jsonl", pred_rows)
    code = main(["score", str(data), str(pred), "--json", "--split", "all", "--bootstrap", "0"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    # open mode: the evaluate module also returns the cluster metrics of the score document
    return {**doc["metrics"], **(doc["cluster"]["metrics"] if doc.get("cluster") else {})}


def evaluate_inputs(sessions: list, labels: dict[str, list], mode: str, pred_refs: dict | None = None) -> dict:
    return {
        "predictions": [labels[s["session_id"]] for s in sessions],
        "references": [s["turns"] for s in sessions],
        "mode": mode,
        "threads": [[t["id"] for t in s["threads"]] for s in sessions],
        "session_ids": [s["session_id"] for s in sessions],
        "langs": [s["lang"] for s in sessions],
        "predicted_refs": [[(pred_refs or {}).get((s["session_id"], i)) for i in range(len(s["turns"]))]
                           for s in sessions],
    }


def test_evaluate_modules_doctests_and_equality_with_the_cli(tmp_path, capsys):
    cases, expected = {}, {}

    # the hand-computed closed session (usage stripped: the evaluate inputs carry labels only)
    s, r = c1()
    bare = [{k: v for k, v in row.items() if k in ("session_id", "i", "pred", "mode", "refs")} for row in r]
    expected["closed"] = cli_metrics(tmp_path, capsys, "closed", [s], bare)
    cases["closed"] = evaluate_inputs([s], {"c1": C1_LABELS}, "closed",
                                      {("c1", x["i"]): x["refs"] for x in r if "refs" in x})

    # the hand-computed open session
    s, r = o1()
    expected["open"] = cli_metrics(tmp_path, capsys, "open", [s], r)
    cases["open"] = evaluate_inputs([s], {"o1": O1_LABELS}, "open",
                                    {("o1", x["i"]): x["refs"] for x in r if "refs" in x})

    # many sessions, noisy open-mode labels, missing rows, a session without any prediction
    ss = many_sessions(9, turns=13)
    labels, all_rows = {}, []
    for n, sess in enumerate(ss):
        lab = [None if n == 8 else (["A", "B", "C"][(i * (n + 2)) % 3] if i % 5 else None) for i in range(13)]
        labels[sess["session_id"]] = lab
        all_rows += rows(sess["session_id"], lab, "open")
    expected["many"] = cli_metrics(tmp_path, capsys, "many", ss, all_rows)
    cases["many"] = evaluate_inputs(ss, labels, "open")

    report = run_child(tmp_path, cases)
    assert set(module_names()) >= {"interleave_routing", "interleave_bcubed", "interleave_mid_reply"}
    assert not Path(report["cwd"]).resolve().is_relative_to(METRICS_DIR.parent.parent)
    for name in module_names():
        attempted, failed = report["doctests"][name]
        assert attempted >= 4 and failed == 0, report["doctest_output"]
    for name, metrics in expected.items():
        assert report["results"][name] == metrics, name
    # and nothing was written outside the test's folder
    assert (tmp_path / "hf-modules").exists()


def test_package_doctests():
    # (the package re-exports the function under the module's name: fetch the module itself)
    result = doctest.testmod(importlib.import_module("interleave_bench.score.bcubed"))
    assert result.attempted >= 2 and result.failed == 0


def test_metric_cards_have_evaluate_yaml_headers():
    for name in module_names():
        text = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
        assert text.startswith("---\n") and "\n---\n" in text[4:]
        header = text[4: text.index("\n---\n", 4)]
        for key in ("title:", "tags:", "description:"):
            assert key in header
        for section in ("## Metric Description", "## How to Use", "### Inputs", "### Output Values",
                        "### Examples", "## Limitations and Bias", "## Citation"):
            assert section in text
        source = (METRICS_DIR / name / f"{name}.py").read_text(encoding="utf-8")
        # evaluate's import scanner misreads "import a, b": one import per line
        assert not any(line.startswith("import ") and "," in line for line in source.splitlines())


def test_score_labels_checks_its_inputs():
    from interleave_bench.hub.metric_inputs import score_labels

    gold = [{"gold": {"thread": "t1", "action": "new"}}]
    with pytest.raises(ValueError, match="1 sessions of references but 2 of predictions"):
        score_labels([gold], [["t1"], ["t1"]])
    with pytest.raises(ValueError, match="1 turns but 2 predicted labels"):
        score_labels([gold], [["t1", "t1"]])
    with pytest.raises(ValueError, match=r"^references\[0\]\[0\]\.gold\.action: 'swich' is not one of new, "):
        score_labels([[{"gold": {"thread": "t1", "action": "swich"}}]], [["t1"]])
    assert score_labels([gold], [["t1"]])["metrics"]["accuracy"] == 1.0
