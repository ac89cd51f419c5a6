"""Real runs for the leaderboard tests: a small data folder, the model-free baselines on it, their score files."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import _hub_util as u

#: small and quick: the board's rules are the subject here, not the intervals
BOOT = 50
#: sessions in the data folder (every fifth is test, so 8 dev sessions)
N_SESSIONS = 10


#: the last message of the first dev and the first test session, in its twin thread's words: bm25 sends
#: it to the twin (t2, not t3), so bm25 is not right on every strict message of a split, as on real
#: data, and the board tells its runs from the oracle's (a run right on every one is refused as the oracle)
TWIN_WORDS = "The flaky CI job is broken again, 数据 ✓"


def baselines(folder: Path, n: int = N_SESSIONS, langs: tuple[str, ...] = ("en", "zh")) -> tuple[Path, dict[str, Path]]:
    """A data folder of ``n`` sessions and the seven baselines' prediction files: ``(data, {run: path})``."""
    from interleave_bench.route.standard import write_baselines

    sessions = u.sessions(n, langs=langs)
    for s in (sessions[0], sessions[min(4, n - 1)]):
        s["turns"][4]["text"] = TWIN_WORDS
    data = u.write_data(folder, sessions, u.manifest(n=n))
    results = write_baselines(data / "sessions.jsonl", "all", out_dir=data / "predictions")
    return data, {Path(r.path).name[: -len(".jsonl")]: Path(r.path) for r in results}


def score_file(data: Path, pred: Path, *, bootstrap: int = BOOT, out: Path | None = None) -> dict[str, Any]:
    """The score document ``interleave-bench score`` writes for ``pred`` (written to ``out`` too when given)."""
    from interleave_bench.score.run import score_files

    doc = score_files(data, [pred], bootstrap=bootstrap, write=False)[0].result
    if out is not None:
        write(out, doc)
    return doc


def write(path: Path, doc: Any) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return str(path)


def forged(doc: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A copy of ``doc`` with ``changes`` applied at dotted paths (``"metrics.accuracy"`` -> value)."""
    out = copy.deepcopy(doc)
    for dotted, value in changes.items():
        *head, last = dotted.split("__")
        at = out
        for k in head:
            at = at[k]
        at[last] = value
    return out
