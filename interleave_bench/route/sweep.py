"""The threshold sweep of ``hybrid``: accuracy against the share of messages that cost a model call.

``interleave-bench route DATA --policy hybrid --sweep-threshold`` runs ``hybrid --threshold T`` for
every T of the sweep (each an ordinary, resumable run with its own predictions file), scores each
on the routed split, and writes the curve beside the predictions: ``<mode>-hybrid-sweep[-<model>]
.sweep.json`` and ``.sweep.csv``. At T = 0 every message goes to ``local`` (no call); as T rises
more go to the model.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Optional, Sequence

from ..errors import UsageError
from ..score.table import RATE, metric
from ..io import atomic_write_text, read_predictions, read_sessions, sessions_file, write_json
from ..provenance import provenance
from ..score.run import score_predictions
from .local import VIA_LOCAL
from .runner import MODEL_POLICIES, RouteOptions, RouteResult, default_output, run_route, safe_name

#: the thresholds of a sweep unless given: from "local decides all" through the confidences where
#: local's calibrated accuracy changes fastest
DEFAULT_THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 1.0)
#: columns of the CSV curve, in order
CURVE_COLUMNS = ("threshold", "messages", "local_share", "calls_per_message", "accuracy", "weighted_error",
                 "predictions")


@dataclass(frozen=True)
class SweepPoint:
    """One threshold's run: its share of messages decided by ``local``, model calls per message
    (rows with usage over rows) and strict accuracy and weighted error on the routed split."""

    threshold: float
    messages: int
    local_share: float
    calls_per_message: float
    accuracy: Optional[float]
    weighted_error: Optional[float]
    predictions: str


@dataclass(frozen=True)
class SweepResult:
    """The points in threshold order, the curve files written and the runs behind them."""

    points: list[SweepPoint]
    json_path: Path
    csv_path: Path
    runs: list[RouteResult]


def parse_thresholds(text: str) -> tuple[float, ...]:
    """``"0.5,0.9"`` -> ``(0.5, 0.9)``, sorted and distinct; raises :class:`UsageError` when a
    value is not a number between 0 and 1."""
    out = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            value = float(part)
        except ValueError:
            raise UsageError(f"--sweep-threshold: {part!r} is not a number") from None
        if not 0.0 <= value <= 1.0:
            raise UsageError(f"--sweep-threshold: {value:g} is not a confidence between 0 and 1")
        out.add(value)
    if not out:
        raise UsageError("--sweep-threshold: give at least one threshold")
    return tuple(sorted(out))


def curve_path(data_file: Path, opts: RouteOptions, model: Optional[str], *, dry_run: bool) -> Path:
    """``<predictions folder>/<mode>-hybrid-sweep[-<model>].sweep.json``."""
    name = f"{opts.mode}-{opts.policy}-sweep" + (f"-{safe_name(model)}" if model else "")
    return default_output(data_file, opts, model, dry_run=dry_run).parent / f"{name}.sweep.json"


def curve_split(routed: str) -> str:
    """The split a sweep's curve is measured on: ``dev`` when every split was routed (a threshold is
    chosen on dev data, and the test split is reported once with it), else the routed one."""
    return "dev" if routed == "all" else routed


def point_of(threshold: float, path: Path, sessions: Sequence[Any], split: str) -> SweepPoint:
    """Score one threshold's predictions file into a :class:`SweepPoint`: every figure (messages,
    shares, accuracy) over the messages of ``split``."""
    ids = {s.session_id for s in sessions if split == "all" or s.split == split}
    rows = [r for r in read_predictions(path) if r.session_id in ids]
    n = len(rows)
    local = sum(1 for r in rows if r.via == VIA_LOCAL)
    calls = sum(1 for r in rows if r.usage is not None)
    metrics = score_predictions(sessions, rows, system=path.stem, split=split, bootstrap=0).result["metrics"]
    return SweepPoint(threshold, n, round(local / n, RATE) if n else 0.0, round(calls / n, RATE) if n else 0.0,
                      metrics.get("accuracy"), metrics.get("weighted_error"), path.name)


def run_sweep(data: str | os.PathLike, opts: RouteOptions, thresholds: Sequence[float], *, llm: Any,
              fresh: bool = False, dry_run: bool = False) -> SweepResult:
    """Run ``hybrid`` at every threshold, score each run, write the curve (JSON and CSV).

    ``opts.policy`` must be ``hybrid``; each run writes (or resumes) its own predictions file.
    Returns the :class:`SweepResult`.
    """
    if opts.policy != "hybrid":
        raise UsageError(f"--sweep-threshold applies to the hybrid policy only, not {opts.policy}")
    data_file = sessions_file(data)
    runs = [run_route(data_file, replace(opts, threshold=t), llm=llm, fresh=fresh, dry_run=dry_run) for t in thresholds]
    sessions = read_sessions(data_file)
    measured = curve_split(opts.split)
    points = [point_of(t, r.path, sessions, measured) for t, r in zip(thresholds, runs)]
    model = llm.model if (llm is not None and opts.policy in MODEL_POLICIES) else None
    json_path = curve_path(data_file, opts, model, dry_run=dry_run)
    csv_path = json_path.with_name(json_path.name[: -len(".json")] + ".csv")
    options = {k: v for k, v in opts.as_dict().items() if k != "threshold"}
    write_json(json_path, {
        "options": {**options, "model": model, "thresholds": list(thresholds), "curve_split": measured},
        "curve": [asdict(p) for p in points],
        "provenance": provenance(),
    })
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CURVE_COLUMNS)
    for p in points:
        writer.writerow([getattr(p, c) if getattr(p, c) is not None else "" for c in CURVE_COLUMNS])
    atomic_write_text(csv_path, buf.getvalue())
    return SweepResult(points, json_path, csv_path, runs)


def curve_table(points: Sequence[SweepPoint]) -> str:
    """The curve as a Markdown table: threshold, share decided locally, calls per message, accuracy."""
    lines = ["| threshold | local share | calls/message | accuracy | weighted error |", "|---|---|---|---|---|"]
    for p in points:
        acc = "n/a" if p.accuracy is None else f"{p.accuracy:.{metric('accuracy').shown}f}"
        err = "n/a" if p.weighted_error is None else f"{p.weighted_error:.{metric('weighted_error').shown}f}"
        # the shares as sweep.json holds them (RATE decimals), not rounded again
        lines.append(f"| {p.threshold:g} | {p.local_share:.{RATE}f} | {p.calls_per_message:.{RATE}f} | {acc} | {err} |")
    return "\n".join(lines)
