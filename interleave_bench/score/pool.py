"""A run pooled block by block: per-session counts and the pooled extras a score document is
built from (docs/score.md#how-it-reads-and-scores-at-scale), never per-message data beyond the
latencies (whose exact percentiles need them all) and, for a run whose rows carry a
``confidence``, each strict message's confidence and correctness (the calibration error is
taken over them all, :mod:`.calibration`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .bcubed import prf
from .block import Block
from .calibration import calibration_section
from .routing import COL, COLUMNS, chunked_latency_percentiles, grouped_breakdowns, pool_breakdowns

#: values per chunk of the pooled latencies (8 MB of floats)
CHUNK_VALUES = 1 << 20


@dataclass
class ColumnarRun:
    """What a run's score document is built from: per-session counts and the pooled extras.

    ``matrix`` holds one row of :data:`~interleave_bench.score.routing.COLUMNS` per scored
    session (in data order), ``session_ids`` and ``langs`` name them; ``latency`` the percentiles
    of the ``latency_rows`` latencies that count; ``breakdown`` as
    :func:`~interleave_bench.score.routing.merge_breakdowns` returns it; ``unscored`` the
    split's sessions without rows; ``rows`` and ``outside`` count the file's rows and those of
    sessions outside the split.
    """

    session_ids: list[str]
    langs: list[str]
    matrix: np.ndarray
    latency: tuple[float | None, float | None]
    latency_rows: int
    bcubed: tuple[float, float, float]
    breakdown: dict[str, dict[str, list[int]]]
    unscored: list[str]
    rows: int
    outside: int
    mode: str | None
    policy: str | None
    model: str | None
    #: the predictions file's SHA-256 (``sha256:<hex>``) when taken as it was read
    predictions_sha256: str | None = None
    #: the mode the run was scored in, and its cluster section (open mode)
    scored_mode: str = "closed"
    cluster: dict[str, Any] | None = None
    #: the rows left out of the numbers (:class:`~.rows.LeftOutRows`), when any were met
    listing: Any = None
    #: one error per row naming another mode than the run's (raised once the rows left out are)
    other_mode: list[Any] = field(default_factory=list)
    #: the error of a closed-mode run none of whose labels names a thread (raised once the run has
    #: sessions scored)
    wrong_labels: list[Any] = field(default_factory=list)
    #: the score document's ``calibration`` (:func:`~.calibration.calibration_section`; None: no confidence)
    calibration: dict[str, Any] | None = None


#: what joins the strings of a block (a string that holds it is kept as it is)
_SEP = "\x00"


def _packed(strings: list[str]) -> str | list[str]:
    """A block's strings as one text, or the list itself when one of them holds :data:`_SEP`."""
    text = _SEP.join(strings)
    return text if text.count(_SEP) == len(strings) - 1 else list(strings)


def _joined(parts: list[str | list[str]]) -> list[str]:
    """The strings :func:`_packed` a block at a time, one list again."""
    out: list[str] = []
    for part in parts:
        out += part.split(_SEP) if isinstance(part, str) else part
    return out


class PooledRun:
    """A run pooled block by block (the columnar scorer's, and the replay's a block at a time);
    holds per-session counts, never per-message data beyond the latencies (whose percentiles need
    them all)."""

    def __init__(self) -> None:
        # ids and languages kept as one text per block (split when the run is finished): the
        # strings of each block's records are let go with it rather than pinning its memory
        self._ids: list[str | list[str]] = []
        self._langs: list[str | list[str]] = []
        self.matrix = _Chunks(len(COLUMNS))
        self.latencies = _Chunks()
        self.p_sum = self.r_sum = 0.0
        self.items = 0
        self.breakdown: dict[tuple[str, str], list[int]] = {}
        self.unscored: list[str] = []
        self.outside = 0
        self.clusters = _Clusters()
        # the confidence of each strict message whose row has one, and whether it is right
        self.confidence = _Chunks()
        self.confident_ok = _Chunks()

    def add(self, block: Block) -> None:
        if block.session_ids:
            self._ids.append(_packed(block.session_ids))
            self._langs.append(_packed(block.langs))
        self.matrix.append(block.matrix)
        if len(block.latencies):
            self.latencies.append(block.latencies)
        # the pooled B-cubed sums go on adding the items' terms in order (as the replay's)
        if len(block.p_terms):
            self.p_sum = float(np.cumsum(np.concatenate([[self.p_sum], block.p_terms]))[-1])
            self.r_sum = float(np.cumsum(np.concatenate([[self.r_sum], block.r_terms]))[-1])
            self.items += len(block.p_terms)
        pool_breakdowns([block.breakdown], into=self.breakdown)
        self.unscored += block.unscored
        self.outside += block.outside
        if block.clusters is not None:
            self.clusters.add(*block.clusters)
        if block.calibration is not None and len(block.calibration[0]):
            self.confidence.append(block.calibration[0])
            self.confident_ok.append(block.calibration[1])

    def finish(self, *, rows: int, mode: str | None, policy: str | None, model: str | None,
               predictions_sha256: str | None, scored_mode: str = "closed", listing: Any = None,
               other_mode: list[Any] | None = None, wrong_labels: list[Any] | None = None) -> ColumnarRun:
        """The run's pooled counts, with what its predictions file says of itself; the run lets
        go of what it pooled (call once)."""
        breakdown = grouped_breakdowns(self.breakdown)
        latency = chunked_latency_percentiles(self.latencies.arrays())  # only these are kept
        latency_rows = len(self.latencies)
        self.latencies = _Chunks()  # let go before the matrix is joined
        matrix, self.matrix = self.matrix.joined(), _Chunks(len(COLUMNS))
        calibration = calibration_section(self.confidence.joined(), self.confident_ok.joined(),
                                          int(matrix[:, COL["strict"]].sum()) if len(matrix) else 0)
        self.confidence, self.confident_ok = _Chunks(), _Chunks()
        ids, langs = _joined(self._ids), _joined(self._langs)
        self._ids, self._langs = [], []
        return ColumnarRun(
            session_ids=ids, langs=langs, matrix=matrix, latency=latency, latency_rows=latency_rows,
            bcubed=prf(self.p_sum, self.r_sum, self.items), breakdown=breakdown, unscored=self.unscored,
            rows=rows, outside=self.outside, mode=mode, policy=policy, model=model,
            predictions_sha256=predictions_sha256, scored_mode=scored_mode,
            cluster=self.clusters.section() if scored_mode == "open" else None, listing=listing,
            other_mode=other_mode or [], wrong_labels=wrong_labels or [], calibration=calibration,
        )


class _Clusters:
    """A run's conversation metrics (docs/score.md#conversation-metrics-open-mode) pooled block by
    block as the sums they are taken from (:func:`~.cluster.contingency_sums`): conversations
    never span sessions, so each block's contingency is summed and let go. (Holding every cell to
    the end grew with the messages: ``benchmarks/bench_score.py --messages 10000000 --mode open``
    peaked at 507 MB that way, 228 MB this way.)"""

    def __init__(self) -> None:
        self.sums: dict[str, float] | None = None

    def add(self, gold: np.ndarray, pred: np.ndarray) -> None:
        if not len(gold):
            return
        from .cluster import contingency_of_codes, contingency_sums

        block = contingency_sums(contingency_of_codes(gold, pred))
        self.sums = block if self.sums is None else {k: self.sums[k] + block[k] for k in block}

    def section(self) -> dict[str, Any]:
        from .cluster import SUMS, section_of_sums

        return section_of_sums(self.sums or dict.fromkeys(SUMS, 0.0))


class _Chunks:
    """Values (or rows of ``width`` values) appended block by block into arrays of
    :data:`CHUNK_VALUES` values each (large allocations, never regrown); a block of another dtype
    starts a new one."""

    def __init__(self, width: int = 0) -> None:
        self._width = width
        self._rows = max(CHUNK_VALUES // max(width, 1), 1)  # rows a chunk holds
        self._chunks: list[np.ndarray] = []
        self._used: list[int] = []

    def append(self, values: np.ndarray) -> None:
        """Add ``values`` (rows, when the chunks hold rows) after those appended so far."""
        shape = (self._rows, self._width) if self._width else (self._rows,)
        while len(values):
            if not self._chunks or self._used[-1] == self._rows or self._chunks[-1].dtype != values.dtype:
                self._chunks.append(np.empty(shape, dtype=values.dtype))
                self._used.append(0)
            at = self._used[-1]
            take = min(self._rows - at, len(values))
            self._chunks[-1][at:at + take] = values[:take]
            self._used[-1] = at + take
            values = values[take:]

    def arrays(self) -> list[np.ndarray]:
        """The values appended so far, chunk by chunk (views: no copy)."""
        return [c[:n] for c, n in zip(self._chunks, self._used)]

    def joined(self) -> np.ndarray:
        """The values appended so far as one array (a copy; the dtype widens as
        ``np.concatenate`` widens it)."""
        if not self._chunks:
            return np.zeros((0, self._width) if self._width else (0,))
        return np.concatenate(self.arrays())

    def __len__(self) -> int:
        return sum(self._used)
