"""The threshold sweep of ``hybrid``: accuracy against the share of messages that cost a model call.

``interleave-bench route DATA --policy hybrid --sweep-threshold`` runs ``hybrid --threshold T`` for
every T of the sweep (each an ordinary, resumable run with its own predictions file), scores each
on the routed split, and writes the curve beside the predictions: ``<mode>-hybrid-sweep[-<model>]
.sweep.json`` and ``.sweep.csv``. At T = 0 every message goes to ``local`` (no call); as T rises
more go to the model. Each point says what it costs per message too (input and output tokens, and
USD at the price ``score`` would cost its run at: :func:`point_of`), so a threshold can be chosen
by cost as well as by calls.

The curve holds every threshold of that sweep whose run is there and finished, not only those
asked for now: a sweep at 0.5 and 0.9 after one at ten thresholds adds its points to the ten
(:func:`curve_members`), so no paid run drops off the curve, and the curve files are the same
whatever order the thresholds were run in.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Optional, Sequence

from ..documents import RunRecord, run_record_path
from ..errors import InputError, UsageError
from ..interrupted import note_kept
from ..fingerprints import sha256_file
from ..options import read_number, unsigned_zero
from ..score.table import RATE, metric
from ..io import atomic_write_text, read_predictions, read_run_record, read_sessions, sessions_file, write_json
from ..llm.prices import Price, PriceArgument, price_of_run
from ..provenance import provenance
from ..score.run import score_predictions
from .local import VIA_LOCAL, threshold_problem
from .model import local_decides
from .runner import (FALLBACK_VIA, MODEL_POLICIES, RouteOptions, RouteResult, default_output, output_name, run_route,
                     safe_name)

#: the thresholds of a sweep unless given: from "local decides all" through the confidences where
#: local's calibrated accuracy changes fastest
DEFAULT_THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 1.0)
#: columns of the CSV curve, in order (a new column goes at the end: CSV readers take them by place)
CURVE_COLUMNS = ("threshold", "messages", "local_share", "calls_per_message", "accuracy", "weighted_error",
                 "predictions", "input_tokens_per_message", "output_tokens_per_message", "cost_usd_per_message")


@dataclass(frozen=True)
class SweepPoint:
    """One threshold's run: its share of messages decided by ``local``, model calls per message
    (rows with usage over rows), strict accuracy and weighted error on the measured split, and its
    tokens and cost per message there as its score document gives them (:func:`point_of`); the
    cost is ``None`` at an unknown price and 0.0 where no row made a call. ``price`` is the price
    the cost was computed with as the score document records it (``provenance.price``; the JSON
    curve holds it, the CSV does not)."""

    threshold: float
    messages: int
    local_share: float
    calls_per_message: float
    accuracy: Optional[float]
    weighted_error: Optional[float]
    predictions: str
    input_tokens_per_message: Optional[float]
    output_tokens_per_message: Optional[float]
    cost_usd_per_message: Optional[float]
    price: Optional[dict[str, Any]]


@dataclass(frozen=True)
class SweepResult:
    """The curve's points in threshold order (every finished run of the sweep, :func:`curve_members`),
    the curve files written, the runs of the thresholds asked for now, and the files of the
    sweep's name left off the curve, each with why."""

    points: list[SweepPoint]
    json_path: Path
    csv_path: Path
    runs: list[RouteResult]
    left_off: list[tuple[Path, str]]


def parse_thresholds(text: str) -> tuple[float, ...]:
    """``"0.5,0.9"`` -> ``(0.5, 0.9)``, sorted and distinct; raises :class:`UsageError` when a
    value is not a number between 0 and 1."""
    out = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            value = read_number(part)  # -0 is 0; 0_5 is no number (float() reads 5)
        except ValueError:
            raise UsageError(f"--sweep-threshold: {part!r} is not a number") from None
        if not 0.0 <= value <= 1.0:
            raise UsageError(f"--sweep-threshold: {part} is not a confidence between 0 and 1")
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


def point_of(threshold: float, path: Path, sessions: Sequence[Any], split: str,
             price: PriceArgument = None) -> SweepPoint:
    """Score one threshold's predictions file into a :class:`SweepPoint`: every figure (messages,
    shares, accuracy, tokens and cost) over the messages of ``split``.

    The tokens and cost per message are the score document's (:func:`~..score.run.score_predictions`),
    priced as ``score`` prices the file (:func:`~..llm.prices.price_of_run`): ``price`` when it is
    one, else ``EVAL_PRICES`` when the lookup ``price`` holds it, else the price the run record
    beside ``path`` says its calls were paid at, else the dated table; the fake model is free.
    """
    ids = {s.session_id for s in sessions if split == "all" or s.split == split}
    rows = [r for r in read_predictions(path) if r.session_id in ids]
    n = len(rows)
    local = sum(1 for r in rows if r.via == VIA_LOCAL)
    calls = sum(1 for r in rows if r.usage is not None)

    def priced(model: Optional[str]) -> Optional[Price]:
        return price_of_run(price, model, path)

    doc = score_predictions(sessions, rows, system=path.stem, split=split, bootstrap=0, price=priced).result
    metrics = doc["metrics"]
    return SweepPoint(threshold, n, round(local / n, RATE) if n else 0.0, round(calls / n, RATE) if n else 0.0,
                      metrics.get("accuracy"), metrics.get("weighted_error"), path.name,
                      metrics.get("input_tokens_per_message"), metrics.get("output_tokens_per_message"),
                      doc["cost_usd_per_message"], doc["provenance"]["price"])


def _name_pattern(opts: RouteOptions, model: Optional[str]) -> tuple[str, str]:
    """What the predictions file of this sweep at any threshold is named before and after the
    threshold (:func:`~.runner.output_name`): ``("closed-hybrid-t", "-m1.jsonl")``."""
    head, tail = output_name(replace(opts, threshold=0.5), model).split("-t0.5", 1)
    return head + "-t", tail


def _but_threshold(record: RunRecord) -> tuple[str, dict[str, Any]]:
    """What a sweep's runs share: the data and every option but the threshold."""
    return record.data_sha256, {k: v for k, v in record.options.items() if k != "threshold"}


def _off_threshold(path: Path, threshold: float) -> str:
    """Why the rows of ``path`` cannot be a run at ``threshold``, or ``""`` when they can.

    ``hybrid --threshold`` keeps ``local``'s decision only where its confidence reaches the
    threshold (:func:`~.model.local_decides`), so a row decided by ``local`` (``via: local``, or
    ``fallback-local`` after a failed burst call) below it is another threshold's. A model's row
    records no confidence of ``local``, so only ``local``'s rows can be checked.
    """
    try:
        rows = read_predictions(path)
    except InputError as exc:
        return f"its predictions cannot be read: {exc}"
    under = [r for r in rows if r.via in (VIA_LOCAL, FALLBACK_VIA + VIA_LOCAL)
             and not local_decides(r.confidence, threshold)]
    if not under:
        return ""
    first = under[0]
    conf = "none" if first.confidence is None else f"{first.confidence:g}"
    return (f"{len(under):,} row{'s' if len(under) != 1 else ''} decided by local under its threshold {threshold:g}, "
            f"where a run at {threshold:g} asks the model; first {first.session_id} message {first.i}, "
            f"confidence {conf}")


def _left_off_why(path: Path, opts: RouteOptions, model: Optional[str],
                  reference: RunRecord) -> tuple[Optional[float], str]:
    """``(threshold, "")`` for a finished run of the sweep of ``reference`` at ``path``, else
    ``(None, why it is not one)``."""
    record_path = run_record_path(path)
    if not record_path.is_file():
        return None, f"no run record {record_path.name}"
    try:
        record = read_run_record(record_path)
    except InputError as exc:
        return None, f"its run record cannot be read: {exc}"
    t = record.options.get("threshold")
    if not isinstance(t, (int, float)) or isinstance(t, bool):
        return None, "routed from other data or options than this sweep"
    t = unsigned_zero(t)  # -0 is 0, as --threshold reads it: a run of -0 (named t-0) is no file of the sweep
    if _but_threshold(record) != _but_threshold(reference) or output_name(replace(opts, threshold=t), model) != path.name:
        return None, "routed from other data or options than this sweep"
    if not record.complete:
        return None, f"unfinished: give the sweep {t:g} to finish it"
    if (record.provenance or {}).get("predictions") != sha256_file(path):
        return None, f"changed since {record_path.name} was written"
    why = _off_threshold(path, t)
    if why:
        return None, why
    return t, ""


def curve_members(folder: Path, opts: RouteOptions, model: Optional[str],
                  reference: RunRecord) -> tuple[dict[float, Path], list[tuple[Path, str]]]:
    """Every run of the sweep in ``folder`` that belongs on its curve, by threshold in order, and
    the files of the sweep's name left off, each with why.

    A run belongs when its file has the sweep's name at its threshold and its run record says it
    finished, from the same data and options as ``reference`` (a run of the sweep just made) but
    the threshold, its predictions are the bytes that record fingerprints, and every row follows
    its threshold (:func:`_off_threshold`). A run unfinished, from other data or options, changed
    since, or with a row its threshold could not have given is left off: its point would not be
    this sweep's.
    """
    head, tail = _name_pattern(opts, model)
    members: dict[float, Path] = {}
    left_off: list[tuple[Path, str]] = []
    for path in sorted(folder.glob(f"{head}*{tail}")):
        if len(path.name) <= len(head) + len(tail):
            continue
        try:
            read_number(path.name[len(head):len(path.name) - len(tail)])
        except ValueError:  # another run's file that the pattern happens to match (-t0.5-mergeall-...)
            continue
        t, why = _left_off_why(path, opts, model, reference)
        if t is None:
            left_off.append((path, why))
        else:
            members[t] = path
    return dict(sorted(members.items())), left_off


def check_thresholds(thresholds: Sequence[float]) -> None:
    """Refuse (one line naming ``--sweep-threshold``) a sweep with a threshold ``hybrid`` cannot
    take (:func:`~.local.threshold_problem`), before any run: a sweep routes them one after another."""
    for t in thresholds:
        problem = threshold_problem(t)
        if problem:
            raise UsageError(f"--sweep-threshold {problem}")


def run_sweep(data: str | os.PathLike, opts: RouteOptions, thresholds: Sequence[float], *, llm: Any,
              fresh: bool = False, dry_run: bool = False, price: PriceArgument = None) -> SweepResult:
    """Run ``hybrid`` at every threshold, score each run, write the curve (JSON and CSV).

    ``opts.policy`` must be ``hybrid``; each run writes (or resumes) its own predictions file. The
    curve holds these thresholds and every other finished run of the same sweep beside them
    (:func:`curve_members`). ``price`` prices each point's tokens as :func:`point_of` says (the
    command passes :func:`~..llm.prices.prices_from` the environment; the default: each run
    record's price, else the dated table). Returns the :class:`SweepResult`.
    """
    if opts.policy != "hybrid":
        raise UsageError(f"--sweep-threshold applies to the hybrid policy only, not {opts.policy}")
    check_thresholds(thresholds)
    data_file = sessions_file(data)
    runs: list[RouteResult] = []
    try:
        for t in thresholds:
            runs.append(run_route(data_file, replace(opts, threshold=t), llm=llm, fresh=fresh, dry_run=dry_run))
    except KeyboardInterrupt as exc:  # the line Ctrl-C ends with says the earlier thresholds' runs are whole
        if runs:
            note_kept(exc, f"the threshold runs at {', '.join(f'{t:g}' for t in thresholds[:len(runs)])} are complete")
        raise
    model = llm.model if (llm is not None and opts.policy in MODEL_POLICIES) else None
    reference = read_run_record(run_record_path(runs[0].path))
    members, left_off = curve_members(runs[0].path.parent, opts, model, reference)
    missing = [r.path for r in runs if r.path.name not in {p.name for p in members.values()}]
    if missing:
        threshold = dict(zip((r.path.name for r in runs), thresholds))[missing[0].name]
        off = _off_threshold(missing[0], threshold)
        if off:  # there already and taken as done, but no run at its threshold gives its rows
            raise UsageError(f"{missing[0]} is not a run at {threshold:g} ({off}): delete it and its run record, "
                             "or pass --fresh, to route it again")
        # just finished: only another process writing it since could take it off
        raise UsageError(f"{missing[0]} changed while the sweep ran: run the sweep again")
    sessions = read_sessions(data_file)
    measured = curve_split(opts.split)
    points = [point_of(t, path, sessions, measured, price) for t, path in members.items()]
    json_path = curve_path(data_file, opts, model, dry_run=dry_run)
    csv_path = json_path.with_name(json_path.name[: -len(".json")] + ".csv")
    options = {k: v for k, v in opts.as_dict().items() if k != "threshold"}
    write_json(json_path, {
        "options": {**options, "model": model, "thresholds": list(members), "curve_split": measured},
        "curve": [asdict(p) for p in points],
        "provenance": provenance(),
    })
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CURVE_COLUMNS)
    for p in points:
        writer.writerow([getattr(p, c) if getattr(p, c) is not None else "" for c in CURVE_COLUMNS])
    atomic_write_text(csv_path, buf.getvalue())
    return SweepResult(points, json_path, csv_path, runs, left_off)


#: the figures of a point the curve's table shows after the shares, by their metric table entries
_SHOWN = ("accuracy", "weighted_error", "input_tokens_per_message", "output_tokens_per_message", "cost_usd_per_message")


def curve_table(points: Sequence[SweepPoint]) -> str:
    """The curve as a Markdown table: threshold, share decided locally, calls per message, accuracy,
    weighted error, input and output tokens per message and USD per message (``n/a`` where
    undefined, and for the cost where the price is unknown)."""
    head = ["threshold", "local share", "calls/message", *(metric(k).display for k in _SHOWN)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in points:
        shown = [getattr(p, k) for k in _SHOWN]
        cells = ["n/a" if v is None else f"{v:.{metric(k).shown}f}" for k, v in zip(_SHOWN, shown)]
        # the shares as sweep.json holds them (RATE decimals), not rounded again
        lines.append(f"| {p.threshold:g} | {p.local_share:.{RATE}f} | {p.calls_per_message:.{RATE}f} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)
