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
from typing import Any, Iterator

import numpy as np
from pydantic import ValidationError

from .. import heap
from ..io import needs_strict_parse
from ..schema import PredictionRow, Session
from .cluster import Contingency, cluster_section_of, run_clusterings
from .columnar import Block, ColumnarRun, PooledRun
from .datafile import Bad, whole_line_blocks
from .routing import COLUMNS, pool_breakdowns, score_session
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


class _Clusters:
    """The run's cluster contingency pooled block by block: codes numbered after the earlier
    blocks' (clusters never span sessions, so cells of two blocks never meet)."""

    def __init__(self) -> None:
        self.parts: list[tuple[np.ndarray, ...]] = []
        self.n_gold = self.n_pred = 0

    def add(self, gold: np.ndarray, pred: np.ndarray) -> None:
        if not len(gold):
            return
        n_pred = int(pred.max()) + 1
        cells, counts = np.unique(gold * n_pred + pred, return_counts=True)
        self.parts.append((cells // n_pred + self.n_gold, cells % n_pred + self.n_pred, counts,
                           np.bincount(gold), np.bincount(pred)))
        self.n_gold += int(gold.max()) + 1
        self.n_pred += n_pred

    def section(self) -> dict[str, Any]:
        parts = list(zip(*self.parts)) if self.parts else [[np.zeros(0, dtype=np.int64)]] * 5
        rows, cols, counts, gold_sizes, pred_sizes = (np.concatenate(p) for p in parts)
        return cluster_section_of(Contingency(rows, cols, counts, gold_sizes, pred_sizes, int(counts.sum())))


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
    pool, clusters = PooledRun(), _Clusters()
    named: dict[str, str | None] = {"policy": None, "model": None}
    rows = 0
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
        rows += _score_block(pool, clusters, named, sessions, mine, str(pred_path), split, run_mode)
        if n_block % heap.EVERY == 0:
            heap.release()
    if pending or next(blocks, None):
        raise Bad("rows of sessions the data does not hold, or out of its order")
    if not rows:
        raise Bad("no rows")
    return pool.finish(rows=rows, mode=run_mode, predictions_sha256="sha256:" + digest.hexdigest(),
                       scored_mode=run_mode, cluster=clusters.section() if run_mode == "open" else None, **named)


def _sessions(block: bytes) -> list[Session]:
    out = []
    for line in block.split(b"\n"):
        if line.strip():
            try:
                out.append(Session.model_validate_json(line))
            except ValidationError:
                raise Bad("a bad session") from None  # the data pass names it
    return out


def _score_block(pool: PooledRun, clusters: _Clusters, named: dict[str, str | None], sessions: list[Session],
                 mine: list[tuple[int, PredictionRow]], source: str, split: str, run_mode: str) -> int:
    """Score a block of sessions with their rows into ``pool`` (and ``clusters``, open mode);
    ``named`` keeps the first policy and model the rows name. Returns the block's row count."""
    by_id = {s.session_id: s for s in sessions}
    index = index_rows([r for _, r in mine], by_id, source=source, lines=[n for n, _ in mine], allow_duplicates=True)
    if index.duplicates or index.unknown_turns or index.unknown_sessions:
        raise Bad("rows the whole-file replay lists")
    for key in named:
        if named[key] is None:
            named[key] = getattr(index, key)
    chosen = [s for s in sessions if split == "all" or s.split == split]
    in_split = {s.session_id for s in chosen}
    scored, scores, unscored = [], [], []
    for s in chosen:
        by_i = index.by_session.get(s.session_id)
        if not by_i:
            unscored.append(s.session_id)
            continue
        scored.append(s)
        scores.append(score_session(s, by_i, run_mode))
    pool.add(Block(
        session_ids=[sc.session_id for sc in scores], langs=[sc.lang for sc in scores],
        matrix=np.array([sc.stats for sc in scores], dtype=np.float64).reshape(len(scores), len(COLUMNS)),
        latencies=np.array([x for sc in scores for x in sc.latencies], dtype=np.float64),
        p_terms=np.array([x for sc in scores for x in sc.bcubed_precision], dtype=np.float64),
        r_terms=np.array([x for sc in scores for x in sc.bcubed_recall], dtype=np.float64),
        breakdown=pool_breakdowns(sc.breakdown for sc in scores), unscored=unscored,
        outside=sum(len(v) for sid, v in index.by_session.items() if sid not in in_split),
    ))
    if run_mode == "open":
        clusters.add(*run_clusterings(scored, index.by_session))
    return index.rows
