"""Small data and command runners for the harness tests (inspect_ai and lm-evaluation-harness)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

from _route_util import EN_THREADS, EN_TURNS, ZH_THREADS, ZH_TURNS, random_session, session_dict, write_data

#: inspect's command line made to work without a network (see the module)
INSPECT = Path(__file__).with_name("_inspect_offline.py")
#: a run of either harness that takes longer than this is stuck, not slow (a few sessions take seconds)
RUN_TIMEOUT_S = 300


def small_sessions() -> list[dict[str, Any]]:
    """Three dev sessions (English, Chinese, random) and one test session: a few seconds a run."""
    rng = random.Random(29)
    return [
        session_dict("en-0001", EN_THREADS, EN_TURNS),
        session_dict("zh-0001", ZH_THREADS, ZH_TURNS, lang="zh"),
        random_session(rng, "rnd-0001", n_turns=12),
        session_dict("en-0002", EN_THREADS, EN_TURNS[:6], split="test"),
    ]


def small_data(folder: Path) -> Path:
    return write_data(folder, small_sessions())


def run(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """A harness command line in a process of its own (both harnesses are command lines first)."""
    full = {**os.environ, **(env or {})}
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=full, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S)


def inspect_eval(cwd: Path, data: Path, mode: str, model: str, *extra: str, env: dict[str, str] | None = None) -> Path:
    """``inspect eval interleavebench/routing`` on ``data``; returns the one log it wrote."""
    from importlib.metadata import entry_points

    assert any(ep.value == "interleave_bench.harness.inspect_registry" for ep in entry_points(group="inspect_ai")), \
        "the inspect_ai entry point is not registered: reinstall the package (pip install -e '.[test]')"
    logs = cwd / f"logs-{mode}-{model.replace('/', '_')}"
    done = run([sys.executable, INSPECT, "eval", "interleavebench/routing", "-T", f"data={data}", "-T", f"mode={mode}",
                "--model", model, "--log-dir", logs, "--display", "none", *extra], cwd, env)
    assert done.returncode == 0, done.stderr[-3000:]
    found = sorted(logs.glob("*.eval"))
    assert len(found) == 1, found
    return found[0]


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
