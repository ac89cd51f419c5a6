"""The replay a block of sessions at a time: what the columnar scorer declines, in bounded memory.

An open-mode run (or a closed-mode one the arrays cannot decide: a label that is no thread of its
session) is scored by :func:`~.routing.score_session`, session by session, exactly as
:func:`~.run.score_predictions` scores it, but the data file and a JSONL predictions file are read
in step, a block of whole lines at a time: each block's sessions and rows are validated by their
record types, scored, reduced to the per-session counts the document is built from (the same
pooled sums, in the same order; the cluster contingency, whose clusters never span sessions, a
block at a time) and let go. Memory grows with the sessions, not with the messages.

Whatever this pass cannot decide as the whole-file replay would raises :class:`~.datafile.Bad`
(rows of a session the data does not hold or out of the data's order, rows for unknown turns,
duplicate rows, a Parquet file, a line only the strict reader judges); the caller then scores the
run with :func:`~.run.score_predictions`, which names every bad line.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
from pydantic import ValidationError

from .. import heap
from ..io import needs_strict_parse
from ..schema import PredictionRow, Session
from .cluster import Contingency, cluster_section_of, run_clusterings
from .columnar import ColumnarRun, _Chunks
from .datafile import Bad, whole_line_blocks
from .routing import BREAKDOWN_DIMENSIONS, COLUMNS, chunked_latency_percentiles, pooled_prf, score_session
from .rows import DEFAULT_MODE, index_rows


def _rows(path: str | os.PathLike, digest: Any) -> Iterator[list[tuple[int, PredictionRow]]]:
    """``(line, row)`` of a JSONL predictions file, a block at a time, each validated by the record
    type; every byte goes to ``digest``. Raises :class:`Bad` for a line the record type refuses
    or only the strict reader judges."""
    line_no = 0
    for block in whole_line_blocks(path):
        digest.update(block)
        out = []
        for line in block.split(b"\n")[:-1] if block.endswith(b"\n") else block.split(b"\n"):
            line_no += 1
            text = line.decode("utf-8")
            if not text.strip():
                continue
            if needs_strict_parse(text):
                raise Bad("a value only the strict reader judges")
            try:
                out.append((line_no, PredictionRow.model_validate_json(text)))
            except ValidationError:
                raise Bad("a bad row") from None
        yield out


def _first_mode(path: str | os.PathLike) -> str:
    """The mode the first row that names one names (the run's mode), else the default."""
    for block in _rows(path, hashlib.sha256()):
        for _, row in block:
            if row.mode is not None:
                return row.mode
    return DEFAULT_MODE


@dataclass
class _Pooled:
    """What the document is built from, pooled block by block in data order."""

    ids: list[str] = field(default_factory=list)
    langs: list[str] = field(default_factory=list)
    matrix: _Chunks = field(default_factory=lambda: _Chunks(len(COLUMNS)))
    latencies: _Chunks = field(default_factory=_Chunks)
    p_sum: float = 0.0
    r_sum: float = 0.0
    items: int = 0
    breakdown: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    unscored: list[str] = field(default_factory=list)
    rows: int = 0
    outside: int = 0
    policy: str | None = None
    model: str | None = None
    cells: list[tuple[np.ndarray, ...]] = field(default_factory=list)  # contingency pieces
    n_gold: int = 0
    n_pred: int = 0


def stream_run(data_path: str | os.PathLike, pred_path: str | os.PathLike, split: str, mode: str | None,
               allow_duplicates: bool) -> ColumnarRun:
    """A run scored by the replay, a block of sessions at a time (see the module's text)."""
    if str(pred_path).endswith(".parquet") or allow_duplicates:
        raise Bad("the whole-file replay decides")  # Parquet rows, and which duplicate counts
    run_mode = mode or _first_mode(pred_path)
    digest = hashlib.sha256()
    blocks = _rows(pred_path, digest)
    pending: list[tuple[int, PredictionRow]] = []
    done = False
    pool = _Pooled()
    for n_block, block in enumerate(whole_line_blocks(data_path), start=1):
        sessions = _sessions(block)
        wanted = {s.session_id for s in sessions}
        while not done and (not pending or pending[-1][1].session_id in wanted):
            more = next(blocks, None)
            if more is None:
                done = True
            else:
                pending += more
        mine = [p for p in pending if p[1].session_id in wanted]
        pending = [p for p in pending if p[1].session_id not in wanted]
        _score_block(pool, sessions, mine, str(pred_path), split, run_mode)
        if n_block % heap.EVERY == 0:
            heap.release()
    if pending or next(blocks, None):
        raise Bad("rows of sessions the data does not hold, or out of its order")
    if not pool.rows:
        raise Bad("no rows")
    return _finish(pool, run_mode, "sha256:" + digest.hexdigest())


def _sessions(block: bytes) -> list[Session]:
    out = []
    for line in block.split(b"\n"):
        if line.strip():
            try:
                out.append(Session.model_validate_json(line))
            except ValidationError:
                raise Bad("a bad session") from None  # the data pass names it
    return out


def _score_block(pool: _Pooled, sessions: list[Session], mine: list[tuple[int, PredictionRow]], source: str,
                 split: str, run_mode: str) -> None:
    by_id = {s.session_id: s for s in sessions}
    index = index_rows([r for _, r in mine], by_id, source=source, lines=[n for n, _ in mine], allow_duplicates=True)
    if index.duplicates or index.unknown_turns or index.unknown_sessions:
        raise Bad("rows the whole-file replay lists")
    pool.rows += index.rows
    pool.policy = pool.policy if pool.policy is not None else index.policy
    pool.model = pool.model if pool.model is not None else index.model
    chosen = [s for s in sessions if split == "all" or s.split == split]
    in_split = {s.session_id for s in chosen}
    pool.outside += sum(len(v) for sid, v in index.by_session.items() if sid not in in_split)
    scored, scores = [], []
    for s in chosen:
        by_i = index.by_session.get(s.session_id)
        if not by_i:
            pool.unscored.append(s.session_id)
            continue
        scored.append(s)
        scores.append(score_session(s, by_i, run_mode))
    if not scores:
        return
    pool.ids += [sc.session_id for sc in scores]
    pool.langs += [sc.lang for sc in scores]
    pool.matrix.append(np.array([sc.stats for sc in scores], dtype=np.float64))
    latencies = [x for sc in scores for x in sc.latencies]
    if latencies:
        pool.latencies.append(np.array(latencies, dtype=np.float64))
    for sc in scores:  # the pooled B-cubed sums go on adding the items' terms in order
        for x in sc.bcubed_precision:
            pool.p_sum += x
        for x in sc.bcubed_recall:
            pool.r_sum += x
        pool.items += len(sc.bcubed_precision)
        for key, (k, n) in sc.breakdown.items():
            cell = pool.breakdown.setdefault(key, [0, 0])
            cell[0] += k
            cell[1] += n
    if run_mode == "open":
        gold, pred = run_clusterings(scored, index.by_session)
        if len(gold):  # codes numbered after the earlier blocks' (clusters never span sessions)
            n_pred = int(pred.max()) + 1
            cells, counts = np.unique(gold * n_pred + pred, return_counts=True)
            pool.cells.append((cells // n_pred + pool.n_gold, cells % n_pred + pool.n_pred, counts,
                               np.bincount(gold), np.bincount(pred)))
            pool.n_gold += int(gold.max()) + 1
            pool.n_pred += n_pred


def _finish(pool: _Pooled, run_mode: str, predictions_sha256: str) -> ColumnarRun:
    breakdown: dict[str, dict[str, list[int]]] = {dim: {} for dim in BREAKDOWN_DIMENSIONS}
    for (dim, key), cell in sorted(pool.breakdown.items()):
        breakdown[dim][key] = cell
    cluster = None
    if run_mode == "open":
        parts = list(zip(*pool.cells)) if pool.cells else [[np.zeros(0, dtype=np.int64)]] * 5
        rows, cols, counts, gold_sizes, pred_sizes = (np.concatenate(p) for p in parts)
        cluster = cluster_section_of(Contingency(rows, cols, counts, gold_sizes, pred_sizes, int(counts.sum())))
    return ColumnarRun(
        session_ids=pool.ids, langs=pool.langs, matrix=pool.matrix.joined(),
        latency=chunked_latency_percentiles(pool.latencies.arrays()), latency_rows=len(pool.latencies),
        bcubed=pooled_prf(pool.p_sum, pool.r_sum, pool.items), breakdown=breakdown, unscored=pool.unscored,
        rows=pool.rows, outside=pool.outside, mode=run_mode, policy=pool.policy, model=pool.model,
        predictions_sha256=predictions_sha256, scored_mode=run_mode, cluster=cluster,
    )
