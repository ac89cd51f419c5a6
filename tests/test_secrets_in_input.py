"""A key of the environment that an input file quotes (a field's value, a document's ``format``) is
redacted in every error line that shows the value: ``validate``, ``vet``, ``route``, ``score``, and
the harness's problem lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interleave_bench.errors import InputError, InputErrors
from interleave_bench.redaction import REDACTED

from _route_util import standard_sessions, write_data

KEY = "zq7HostileSecretValue9931xx"
ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(ROOT), "INTERLEAVE_NO_PROGRESS": "1"}
    return subprocess.run([sys.executable, "-m", "interleave_bench", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT)


@pytest.fixture
def quoting(tmp_path):
    """A JSON document whose ``format`` is the key, and a predictions file whose row gives it as a confidence."""
    doc = tmp_path / "doc.jsonl"
    doc.write_text(json.dumps({"format": KEY, "runs": []}, indent=2) + "\n", encoding="utf-8")
    data = write_data(tmp_path / "data", standard_sessions())
    s = json.loads((data / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[0])
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps({"session_id": s["session_id"], "i": 0, "pred": "t1", "confidence": KEY}) + "\n",
                    encoding="utf-8")
    return doc, data, pred


@pytest.mark.parametrize("args", [
    lambda doc, data, pred: ["validate", str(doc)],
    lambda doc, data, pred: ["validate", str(pred)],
    lambda doc, data, pred: ["route", str(doc), "--mode", "closed", "--policy", "stay"],
    lambda doc, data, pred: ["score", str(data), str(pred), "--split", "all", "--bootstrap", "0"],
])
def test_a_key_an_input_quotes_is_redacted_in_the_error_line(quoting, args):
    proc = _cli(*args(*quoting))
    assert proc.returncode == 2, proc.stderr
    assert KEY not in proc.stdout + proc.stderr
    assert REDACTED in proc.stderr


def test_vet_shows_no_key_of_a_file_it_cannot_read(quoting):
    proc = _cli("vet", str(quoting[0]))
    assert proc.returncode == 2 and proc.stderr.startswith("error: ")
    assert KEY not in proc.stdout + proc.stderr


def test_the_harness_problem_lines_redact_a_key(monkeypatch):
    from interleave_bench.harness.data import problem_lines

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    lines = problem_lines(InputErrors([InputError("s.jsonl", 3, "format", f"got {KEY!r}")]))
    assert lines == [f"error: s.jsonl:3: format: got '{REDACTED}'"]
