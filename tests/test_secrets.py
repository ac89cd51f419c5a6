"""End to end with a key in the environment: the key reaches the server and nothing else.

Runs every model-calling command (generate, route, mid-reply) against the fake OpenAI-compatible
server through the real ``openai`` client with a recognisable key, then scores, exports and
validates, and scans every file written (outputs, predictions, score files, manifests, the
response cache) and everything printed for the key.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

KEY = "sk-e2e-SECRET-7f3a9c1d5e"


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "interleave_bench", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)
    assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    return proc


def test_key_is_in_no_file_and_no_output(fake_server, tmp_path):
    env = dict(os.environ)
    env.update({
        "OPENAI_BASE_URL": fake_server.url,
        "OPENAI_API_KEY": KEY,
        "INTERLEAVE_CACHE": str(tmp_path / "cache"),
        "HF_HOME": str(tmp_path / "hf"),
        "INTERLEAVE_NO_PROGRESS": "1",
    })
    data = tmp_path / "data"
    outputs = [
        run_cli(["generate", "--sessions", "3", "--model", "m1", "--out", str(data)], env, tmp_path),
        run_cli(["route", str(data), "--mode", "closed", "--policy", "hybrid", "--model", "m1"], env, tmp_path),
        run_cli(["route", str(data), "--mode", "open", "--policy", "llm", "--model", "m1", "--merge", "all",
                 "--decide", "each"], env, tmp_path),
        run_cli(["mid-reply", "--model", "m1", "--limit", "6", "--out", str(tmp_path / "mr.jsonl")], env, tmp_path),
        run_cli(["score", str(data), str(data / "predictions")], env, tmp_path),
        run_cli(["export", "--v0", str(data), "--out", str(tmp_path / "interleavebench")], env, tmp_path),
        run_cli(["validate", str(data)], env, tmp_path),
    ]
    # the model was really called, with the key as a bearer token
    assert fake_server.completions > 0
    assert all(e.headers.get("authorization") == f"Bearer {KEY}" for e in fake_server.log)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    kinds = {p.suffix for p in files}
    assert {".jsonl", ".json", ".sqlite", ".parquet"} <= kinds, kinds
    for p in files:
        assert KEY.encode() not in p.read_bytes(), f"key written to {p}"
    for proc in outputs:
        assert KEY not in proc.stdout and KEY not in proc.stderr
