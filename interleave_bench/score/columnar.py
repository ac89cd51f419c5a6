"""The fast path of ``score``: files read into arrays, checked and scored as arrays.

The data file is read once, by :mod:`.datafile` (its full check and fingerprint on the way), into
a few compact numpy arrays per block of sessions. A JSONL predictions file is read by the compiled
reader of the prediction record (:func:`~interleave_bench.compiled.decoder`: the same fields,
types and bounds, checked in C) and a Parquet one by pyarrow (:mod:`.parquet`), into arrays in
step with the data: no per-row model objects. Anything the readers cannot vouch for (a bad value,
a number where the record reads text, an unknown field in a usage) raises :class:`Bad`; the
caller then reads the file with the strict record readers, which accept the same files and name
every bad line, field and value.

:func:`score_closed` scores a closed-mode run on the arrays with the formulas of
:mod:`.routing`, to the same bits: in closed mode every catalog topic holds its own thread
(``CLOSED_TOPIC_SEED``), so a message's outcome depends only on its label, its gold thread and
whether that thread came up earlier, and each accumulator becomes a grouped count. It returns
``None`` for what only the replay in :func:`~interleave_bench.score.routing.score_session`
decides (a label that is no thread of its session, open mode, rows left out), and the caller
scores the run with it.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from itertools import chain, compress
from operator import attrgetter, is_not
from typing import Any, Iterator, Optional, Sequence

import numpy as np
from msgspec import UNSET

from .. import heap
from ..compiled import DecodeErrors, decoder
from ..schema import ACTIONS, CLARIFY, ERROR, STYLES, PredictionRow, RowUsage
from .datafile import Bad, DataColumns, codes_in, data_pass, whole_line_blocks
from .routing import CLOSED_TOPIC_SEED, COLUMNS, OUTCOME_COST, OUTCOMES, chunked_latency_percentiles, grouped_breakdowns, pool_breakdowns, pooled_prf

#: more cells than this in the per-session B-cubed sum grid and the sums are taken session by session
GRID_CELLS = 20_000_000
#: values per chunk of the pooled latencies (8 MB of floats)
CHUNK_VALUES = 1 << 20
#: label codes beside thread numbers (0..k-1)
L_CLARIFY, L_ERROR = -2, -3


# --- reading ------------------------------------------------------------------------------------


@dataclass
class PredictionColumns:
    """The rows of a predictions file as arrays, in file order.

    ``session`` is the row's session position in the data (-1: a session the data does not
    hold); ``label`` a vocab code of ``pred``; ``call`` whether the row carries a non-empty usage;
    ``latency`` NaN where the row has none that counts (7.10). ``refs`` exploded: row of each
    reference, vocab code of each.
    """

    rows: int
    session: np.ndarray
    i: np.ndarray
    label: np.ndarray
    call: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    cached_tokens: np.ndarray
    latency: np.ndarray
    burst: np.ndarray  # 0 where the row has none
    mixed: np.ndarray
    waited: np.ndarray
    ref_row: np.ndarray
    ref_code: np.ndarray


#: the first ``model`` a predictions file names is read from this unknown field of its rows
MODEL_FIELD = "model"


@functools.lru_cache(maxsize=None)
def _row_decoder() -> Any:
    """The compiled reader of a prediction row: unknown fields passed over but ``model``, and
    refused in a usage (each usage field is a count the scorer adds up); a usage records which of
    its fields were given (``{}`` is no model call)."""
    return decoder(PredictionRow, keep_unknown=True, presence=(RowUsage,), extra=((MODEL_FIELD, Optional[str]),))


#: optional fields of a prediction row most files leave out: a block none of whose rows names one
#: (nor any field the row type does not know) is read by a reader without them, and their columns
#: hold their defaults
RARE_FIELDS = ("burst", "mixed", "waited")


@functools.lru_cache(maxsize=None)
def _lean_decoder() -> Any:
    """The compiled reader of a prediction row that names none of :data:`RARE_FIELDS` nor any
    unknown field (it refuses one)."""
    return decoder(PredictionRow, presence=(RowUsage,), leave_out=RARE_FIELDS)


def _is_lean(row: Any) -> bool:
    return type(row) is _lean_decoder().type


def _field_or_none(row: Any, name: str) -> Any:
    """A row's field, ``None`` for a lean row (which names none of :data:`RARE_FIELDS`)."""
    return getattr(row, name, None)


def row_blocks(path: str | os.PathLike, digest: Any) -> Iterator[list[Any]]:
    """The rows of a JSONL predictions file, decoded by the compiled reader a block at a time
    (by the lean one while every block it meets fits it); every byte of the file goes to
    ``digest`` (a hashlib object) as it is read. Raises :class:`Bad` for a line that reader does
    not take (the strict reader decides)."""
    # blank lines are passed over, as the strict reader does
    lean: Any = _lean_decoder().decode_lines
    full = _row_decoder().decode_lines
    for block in whole_line_blocks(path):
        digest.update(block)
        rows = None
        if lean is not None:
            try:
                rows = lean(block)
            except DecodeErrors:
                lean = None  # a row names a rare or unknown field: the full reader from here on
        if rows is None:
            try:
                rows = full(block)
            except DecodeErrors as exc:
                raise Bad(str(exc)) from None
        yield rows


_I, _SID, _PRED, _USAGE_OF, _ELAPSED, _VIA, _REFS = (attrgetter(a) for a in ("i", "session_id", "pred", "usage", "elapsed_ms", "via", "refs"))
_BURST, _MIXED, _WAITED = attrgetter("burst"), attrgetter("mixed"), attrgetter("waited")
_TOKENS = attrgetter("input", "output", "cache_hit")
_TOKEN_FIELDS = tuple(attrgetter(a) for a in ("input", "output", "cache_hit"))
_NAMED = functools.partial(is_not, None)


def _counts(values: list[int | None]) -> np.ndarray:
    """Optional counts as integers, 0 where left out (most files leave them all out)."""
    if values.count(None) == len(values):
        return np.zeros(len(values), dtype=np.int64)
    return np.fromiter((v or 0 for v in values), dtype=np.int64, count=len(values))


def _flags(values: list[bool | None]) -> np.ndarray:
    """Optional flags, false where left out."""
    if values.count(None) == len(values):
        return np.zeros(len(values), dtype=bool)
    return np.fromiter((v is True for v in values), dtype=bool, count=len(values))


def _usage_columns(usages: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Whether each row is a model call, and its (input, output, cached) token counts."""
    n = len(usages)
    call = np.zeros(n, dtype=bool)
    tokens = np.zeros((n, 3), dtype=np.int64)
    left_out = usages.count(None)
    if left_out == n:
        return call, tokens
    every = not left_out
    given = slice(None) if every else np.array(list(compress(range(n), usages)), dtype=np.int64)  # rows with a usage
    used = usages if every else list(compress(usages, usages))
    try:  # a field at a time; a field left out (``UNSET``) is no integer, and takes the path below
        for k, field in enumerate(_TOKEN_FIELDS):
            tokens[given, k] = np.fromiter(map(field, used), dtype=np.int64, count=len(used))
        call[given] = True
        return call, tokens
    except TypeError:
        pass
    values = list(chain.from_iterable(map(_TOKENS, used)))
    # read with presence: a field left out counts 0, a usage naming none is no call
    named = np.array([v is not UNSET for v in values], dtype=bool).reshape(len(used), 3)
    call[given] = named.any(axis=1)
    tokens[given] = np.array([0 if v is UNSET else v for v in values], dtype=np.int64).reshape(len(used), 3)
    return call, tokens


def _latencies(rows: list[Any]) -> np.ndarray:
    """Each row's latency in milliseconds, NaN where it has none that counts (7.10)."""
    values = list(map(_ELAPSED, rows))
    try:
        latency = np.fromiter(values, dtype=np.float64, count=len(values))
    except TypeError:  # some left out
        latency = np.array(values, dtype=np.float64)  # None -> NaN
    vias = list(map(_VIA, rows))
    if vias.count(None) + vias.count("llm") != len(vias):  # a latency counts for a row routed by the model
        latency[[v is not None and v != "llm" for v in vias]] = np.nan
    return latency


def row_columns(rows: list[Any], data: DataColumns, session: list[int]) -> PredictionColumns:
    """Decoded prediction rows (:func:`row_blocks`) as arrays against a block of sessions;
    ``session`` is each row's session position in the block."""
    n = len(rows)
    label = data.vocab.encode_words(list(map(_PRED, rows)))
    call, tokens = _usage_columns(list(map(_USAGE_OF, rows)))
    ref_lists = list(map(_REFS, rows))
    with_refs = list(compress(range(n), ref_lists))
    if with_refs:
        ref_row = np.repeat(np.array(with_refs, dtype=np.int64), [len(ref_lists[k]) for k in with_refs])
        ref_code = data.vocab.encode_words([r for k in with_refs for r in ref_lists[k]])
    else:
        ref_row = ref_code = np.zeros(0, dtype=np.int64)
    if rows and _is_lean(rows[-1]):  # (a lean row never follows a full one) none names a rare field
        burst, mixed, waited = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    else:
        if rows and _is_lean(rows[0]):  # the rows of the block where the lean reader stopped, and some before
            burst_of, mixed_of, waited_of = (functools.partial(_field_or_none, name=a) for a in RARE_FIELDS)
        else:
            burst_of, mixed_of, waited_of = _BURST, _MIXED, _WAITED
        burst = _counts(list(map(burst_of, rows)))
        mixed, waited = _flags(list(map(mixed_of, rows))), _flags(list(map(waited_of, rows)))
    return PredictionColumns(
        rows=n, session=np.array(session, dtype=np.int64), i=np.fromiter(map(_I, rows), dtype=np.int64, count=n),
        label=label, call=call, input_tokens=tokens[:, 0], output_tokens=tokens[:, 1], cached_tokens=tokens[:, 2],
        latency=_latencies(rows), burst=burst, mixed=mixed, waited=waited, ref_row=ref_row, ref_code=ref_code,
    )


def first_named(rows: list[Any]) -> dict[str, str | None]:
    """The first ``mode``, ``policy`` and non-empty ``model`` a block of decoded rows names."""
    return {
        "mode": next(filter(_NAMED, map(attrgetter("mode"), rows)), None),
        "policy": next(filter(_NAMED, map(attrgetter("policy"), rows)), None),
        # a lean row names no unknown field
        "model": None if rows and _is_lean(rows[0]) else next(filter(None, map(attrgetter(MODEL_FIELD), rows)), None),
    }


class PredictionStream:
    """A predictions file read a block at a time and handed out session block by session block.

    :meth:`take` returns the rows of the given sessions among those read so far, reading on while
    the last row read belongs to them: a file in the data's session order is read once, in step
    with the data, and never held whole. Rows that wait for a later block (or never find one)
    stay buffered; :meth:`rest` says whether any are left at the end. A JSONL file's rows are
    compiled structs (:func:`row_blocks`), a Parquet file's pyarrow tables (:mod:`.parquet`).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.parquet = str(path).endswith(".parquet")
        #: the SHA-256 of a JSONL file's bytes, taken as they are read (the file is read once)
        self.digest = None if self.parquet else hashlib.sha256()
        if self.parquet:
            from . import parquet

            self._blocks: Iterator[Any] = parquet.tables(path)
        else:
            self._blocks = row_blocks(path, self.digest)
        self._buffer: Any = None
        self._sids: list[str] = []  # the session id of each buffered JSONL row
        self._done = False
        self.rows = 0
        self.first: dict[str, str | None] = {"mode": None, "policy": None, "model": None}

    def _pull(self) -> bool:
        block = next(self._blocks, None)
        if block is None:
            self._done = True
            return False
        if not len(block):
            return True
        if self.parquet:
            from . import parquet

            found = parquet.check_predictions(block)
            self.rows += block.num_rows
            self._buffer = block if self._buffer is None else parquet.joined(self._buffer, block)
        else:
            found = first_named(block)
            self.rows += len(block)
            sids = list(map(_SID, block))
            if self._buffer is None:
                self._buffer, self._sids = block, sids
            else:
                self._buffer, self._sids = self._buffer + block, self._sids + sids
        for key, value in found.items():
            if self.first[key] is None:
                self.first[key] = value
        return True

    def sha256(self) -> str | None:
        """The file's SHA-256 (``sha256:<hex>``) once read to the end; ``None`` for Parquet."""
        return None if self.digest is None else "sha256:" + self.digest.hexdigest()

    def _last_session(self) -> str | None:
        if self._buffer is None or not len(self._buffer):
            return None
        if self.parquet:
            return self._buffer.column("session_id")[-1].as_py()
        return self._sids[-1]

    def take(self, data: DataColumns) -> Any:
        """The buffered rows of the sessions of ``data`` (in file order), reading on as needed:
        for a JSONL file the rows (compiled structs) and each one's session position in ``data``,
        for a Parquet file a pyarrow table; ``None`` when the file has no rows."""
        where = data.session_index
        while not self._done:
            last = self._last_session()
            if last is not None and last not in where:
                break
            self._pull()
        if self._buffer is None:
            return None
        if self.parquet:
            from . import parquet

            taken, self._buffer = parquet.split(self._buffer, where)
            return taken
        rows, sids = self._buffer, self._sids
        pos = list(map(where.get, sids))
        left = pos.count(None)
        cut = pos.index(None) if left else len(pos)
        if left == len(pos) - cut:  # in the data's order: the wanted rows come first
            self._buffer, self._sids = rows[cut:], sids[cut:]
            return rows[:cut], pos[:cut]
        mine = [p is not None for p in pos]
        other = [not m for m in mine]
        self._buffer, self._sids = list(compress(rows, other)), list(compress(sids, other))
        return list(compress(rows, mine)), list(compress(pos, mine))

    def columns(self, taken: Any, data: DataColumns) -> PredictionColumns:
        """What :meth:`take` returned, as arrays against a block of sessions."""
        if taken is None:
            return row_columns([], data, [])
        if self.parquet:
            from . import parquet

            return parquet.prediction_columns(taken, data)
        rows, session = taken
        return row_columns(rows, data, session)

    def rest(self) -> bool:
        """Whether any row is left over once every session block has been taken (read to the end)."""
        while self._pull():
            pass
        return self._buffer is not None and len(self._buffer) > 0


# --- scoring --------------------------------------------------------------------------------------


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


@dataclass
class Block:
    """One block of sessions scored: what :class:`PooledRun` pools."""

    session_ids: list[str]
    langs: list[str]
    matrix: np.ndarray
    latencies: np.ndarray
    p_terms: np.ndarray
    r_terms: np.ndarray
    breakdown: dict[tuple[str, str], list[int]]
    unscored: list[str]
    outside: int


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

    def finish(self, *, rows: int, mode: str | None, policy: str | None, model: str | None,
               predictions_sha256: str | None, scored_mode: str = "closed",
               cluster: dict[str, Any] | None = None) -> ColumnarRun:
        """The run's pooled counts, with what its predictions file says of itself; the run lets
        go of what it pooled (call once)."""
        breakdown = grouped_breakdowns(self.breakdown)
        latency = chunked_latency_percentiles(self.latencies.arrays())  # only these are kept
        latency_rows = len(self.latencies)
        self.latencies = _Chunks()  # let go before the matrix is joined
        matrix, self.matrix = self.matrix.joined(), _Chunks(len(COLUMNS))
        ids, langs = _joined(self._ids), _joined(self._langs)
        self._ids, self._langs = [], []
        return ColumnarRun(
            session_ids=ids, langs=langs, matrix=matrix, latency=latency, latency_rows=latency_rows,
            bcubed=pooled_prf(self.p_sum, self.r_sum, self.items), breakdown=breakdown, unscored=self.unscored,
            rows=rows, outside=self.outside, mode=mode, policy=policy, model=model,
            predictions_sha256=predictions_sha256, scored_mode=scored_mode, cluster=cluster,
        )


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


def _by_session(sess: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    return np.bincount(sess, weights=weights, minlength=n).astype(np.float64, copy=False)


def _sequential_sums(sess: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Per-session left-to-right sums of ``values`` (grouped by ``sess``, non-decreasing), from 0.0."""
    out = np.zeros(n, dtype=np.float64)
    if not len(values):
        return out
    starts = np.searchsorted(sess, np.arange(n))
    pos = np.arange(len(values)) - starts[sess]
    width = int(pos.max()) + 1
    if n * width <= GRID_CELLS:
        grid = np.zeros((n, width), dtype=np.float64)
        grid[sess, pos] = values
        for k in range(width):  # column by column: each session's terms added in order
            out += grid[:, k]
        return out
    from functools import reduce
    from operator import add

    ends = np.append(starts[1:], len(values))
    vals = values.tolist()
    for k in np.flatnonzero(ends > starts):
        out[k] = reduce(add, vals[starts[k]:ends[k]], 0.0)
    return out


#: at most this many (session, gold thread, label) cells and the contingency is counted in a dense grid
DENSE_CELLS = 1 << 22


def _contingency(ps: np.ndarray, pg: np.ndarray, pl: np.ndarray, w: int, n: int) -> tuple[np.ndarray, ...]:
    """The (gold thread, label) contingency of the items of ``n`` sessions (``ps`` the session of
    each item, ``pg`` and ``pl`` its thread and label, both in ``[0, w)``): each item's B-cubed
    precision and recall terms, and per session the non-empty cells, the threads and the labels."""
    pred_key = ps * w + pl
    ref_key = ps * w + pg
    cell_key = ref_key * w + pl
    if n * w * w <= DENSE_CELLS:
        cell_count = np.bincount(cell_key, minlength=n * w * w)
        pred_count = np.bincount(pred_key, minlength=n * w)
        ref_count = np.bincount(ref_key, minlength=n * w)
        per_cell = cell_count[cell_key]
        return (per_cell / pred_count[pred_key], per_cell / ref_count[ref_key],
                np.count_nonzero(cell_count.reshape(n, w * w), axis=1).astype(np.float64),
                np.count_nonzero(ref_count.reshape(n, w), axis=1).astype(np.float64),
                np.count_nonzero(pred_count.reshape(n, w), axis=1).astype(np.float64))
    cells, cell_inv, cell_n = np.unique(cell_key, return_inverse=True, return_counts=True)
    preds, pred_inv, pred_n = np.unique(pred_key, return_inverse=True, return_counts=True)
    refs, ref_inv, ref_n = np.unique(ref_key, return_inverse=True, return_counts=True)
    per_cell = cell_n[cell_inv]
    return (per_cell / pred_n[pred_inv], per_cell / ref_n[ref_inv], _by_session(cells // (w * w), n),
            _by_session(refs // w, n), _by_session(preds // w, n))


def score_closed(data: DataColumns, preds: PredictionColumns, split: str) -> Block | None:
    """Score a block of sessions of a closed-mode run on the arrays, exactly as the replay does
    (``preds`` holds the rows of these sessions); ``None`` when the replay must decide (rows of unknown sessions or turns, duplicate rows, a label that is no
    thread of its session, a session of ``CLOSED_TOPIC_SEED`` turns or more)."""
    n_sess = len(data)
    turn_start = data.turn_start
    n_turns = np.diff(turn_start)
    if n_turns.max() >= CLOSED_TOPIC_SEED:
        return None
    row_sess = preds.session
    if np.any(row_sess < 0) or np.any(preds.i >= n_turns[row_sess]):
        return None
    row_turn = turn_start[row_sess] + preds.i
    total = int(turn_start[-1])
    has_row = np.zeros(total, dtype=bool)
    has_row[row_turn] = True
    if int(has_row.sum()) != preds.rows:
        return None  # duplicates: the replay lists them with their lines
    words = data.vocab.code
    row_num = data.thread_number(row_sess, preds.label)
    row_lab = np.where(preds.label == words.get(CLARIFY, -9), L_CLARIFY,
                       np.where(preds.label == words.get(ERROR, -9), L_ERROR, row_num))
    if np.any(row_lab == -1):
        return None  # a label that names no thread of its session: the replay follows such topics
    sess = data.turn_session
    lab = np.full(total, L_ERROR, dtype=np.int64)
    lab[row_turn] = row_lab
    g = data.gold.astype(np.int64)
    amb = data.ambiguous
    thread = g >= 0
    special = lab < 0
    strict = thread & ~amb

    # outcomes (7.2): a thread's first message sent elsewhere is merged into a topic, later ones are wrong
    tt = np.flatnonzero(thread)
    kind = np.full(total, OUTCOMES.index("wrong_existing"), dtype=np.int64)
    kind[data.first_of_thread] = OUTCOMES.index("merged_new")
    kind[thread & (lab == g)] = OUTCOMES.index("correct")
    kind[thread & (lab == L_CLARIFY)] = OUTCOMES.index("clarify")
    kind[thread & (lab == L_ERROR)] = OUTCOMES.index("error")
    kind[~thread] = np.where(special[~thread], OUTCOMES.index("oneoff_isolated"), OUTCOMES.index("oneoff_into_topic"))
    ok = thread & (lab == g)
    judge = data.judge.astype(np.int64)
    lenient = thread & (ok | (amb & ~special & (judge >= 0) & (lab == judge)))
    cost = np.array([OUTCOME_COST.get(o, 0) for o in OUTCOMES], dtype=np.float64)[kind]

    cols: dict[str, np.ndarray] = {
        "messages": n_turns.astype(np.float64),
        "thread_messages": _by_session(sess, n_sess, thread),
        "strict": _by_session(sess, n_sess, strict),
        "oneoffs": _by_session(sess, n_sess, ~thread),
        "rows": _by_session(row_sess, n_sess),
        "strict_correct": _by_session(sess, n_sess, strict & ok),
        "lenient_correct": _by_session(sess, n_sess, lenient),
        "strict_cost": _by_session(sess, n_sess, np.where(strict, cost, 0.0)),
    }
    cols["ambiguous"] = cols["thread_messages"] - cols["strict"]
    for k, o in enumerate(OUTCOMES):
        cols["outcome_" + o] = _by_session(sess, n_sess, kind == k)

    # switches (7.6) over thread messages; a special label keeps the last topic label
    s_t, g_t, l_t = sess[tt], g[tt], lab[tt]
    same = np.zeros(len(tt), dtype=bool)
    same[1:] = s_t[1:] == s_t[:-1]
    gold_switch = same.copy()
    gold_switch[1:] &= g_t[1:] != g_t[:-1]
    valid = l_t >= 0
    last = np.maximum.accumulate(np.where(valid, np.arange(len(tt)), -1)) if len(tt) else np.zeros(0, dtype=np.int64)
    prev = np.full(len(tt), -1, dtype=np.int64)
    prev[1:] = last[:-1]
    has_prev = prev >= 0
    has_prev[has_prev] = s_t[prev[has_prev]] == s_t[has_prev]
    pred_switch = valid & has_prev
    pred_switch[pred_switch] = l_t[pred_switch] != l_t[prev[pred_switch]]
    cols["switch_tp"] = _by_session(s_t, n_sess, gold_switch & pred_switch)
    cols["switch_fp"] = _by_session(s_t, n_sess, ~gold_switch & pred_switch)
    cols["switch_fn"] = _by_session(s_t, n_sess, gold_switch & ~pred_switch)

    # clusters (7.7, 7.8): (gold thread, label) pairs of thread messages with topic labels
    pt = tt[valid]
    ps, pg, pl = sess[pt], g[pt], lab[pt]
    w = int(max(g.max(), lab.max())) + 2
    p_terms, r_terms, cells_n, threads_n, labels_n = _contingency(ps, pg, pl, w, n_sess)
    cols["thread_labels_sum"] = cols["label_threads_sum"] = cells_n
    cols["thread_labels_n"] = threads_n
    cols["label_threads_n"] = labels_n
    cols["bcubed_p_sum"] = _sequential_sums(ps, p_terms, n_sess)
    cols["bcubed_r_sum"] = _sequential_sums(ps, r_terms, n_sess)
    cols["bcubed_n"] = _by_session(ps, n_sess)

    # references (7.9): a thread message with gold refs is hit when a predicted ref names one of them
    ref_turns = np.zeros(total, dtype=bool)
    ref_turns[data.ref_turn] = True
    with_refs = thread & ref_turns
    hit = np.zeros(total, dtype=bool)
    if len(preds.ref_row):
        r_turn = row_turn[preds.ref_row]
        r_num = data.thread_number(row_sess[preds.ref_row], preds.ref_code)
        named = r_num >= 0
        wr = int(max(data.ref_thread.max(initial=0), r_num.max(initial=0))) + 2
        gold_keys = np.unique(data.ref_turn * wr + data.ref_thread)
        found = codes_in(r_turn[named] * wr + r_num[named], gold_keys) >= 0
        hit[r_turn[named][found]] = True
    cols["refs_n"] = _by_session(sess, n_sess, with_refs)
    cols["refs_hit"] = _by_session(sess, n_sess, with_refs & hit)

    # cost (7.10)
    cols["input_tokens"] = _by_session(row_sess, n_sess, preds.input_tokens.astype(np.float64))
    cols["output_tokens"] = _by_session(row_sess, n_sess, preds.output_tokens.astype(np.float64))
    cols["cached_tokens"] = _by_session(row_sess, n_sess, preds.cached_tokens.astype(np.float64))
    cols["calls"] = _by_session(row_sess, n_sess, preds.call)

    # bursts (7.11): three disjoint groups of strict messages
    b = preds.burst
    in_b = b > 0
    r_strict = strict[row_turn] & in_b
    r_ok = ok[row_turn]
    groups = {"alone": r_strict & (b == 1), "mixed": r_strict & (b > 1) & preds.mixed,
              "in_burst": r_strict & (b > 1) & ~preds.mixed}
    cols["burst_rows"] = _by_session(row_sess, n_sess, in_b)
    cols["burst_waited"] = _by_session(row_sess, n_sess, in_b & preds.waited)
    for name, mask in groups.items():
        cols[f"{name}_n"] = _by_session(row_sess, n_sess, mask)
        cols[f"{name}_correct"] = _by_session(row_sess, n_sess, mask & r_ok)

    # which sessions count: the split's sessions that have rows, in data order
    in_split = np.array([split == "all" or x == split for x in data.splits], dtype=bool)
    scored_mask = in_split & (cols["rows"] > 0)
    scored = np.flatnonzero(scored_mask)
    matrix = np.stack([cols[c] for c in COLUMNS], axis=1)[scored]

    scored_pairs = scored_mask[ps]
    lat_rows = scored_mask[row_sess] & ~np.isnan(preds.latency)
    return Block(
        session_ids=[data.session_ids[k] for k in scored],
        langs=[data.langs[k] for k in scored],
        matrix=matrix,
        latencies=preds.latency[lat_rows],
        p_terms=p_terms[scored_pairs],
        r_terms=r_terms[scored_pairs],
        breakdown=_breakdown(data, strict & scored_mask[sess], ok),
        unscored=[data.session_ids[k] for k in np.flatnonzero(in_split & ~scored_mask)],
        outside=int((~in_split[row_sess]).sum()),
    )


def _breakdown(data: DataColumns, strict: np.ndarray, ok: np.ndarray) -> dict[tuple[str, str], list[int]]:
    """``{(dimension, key): [correct, n]}`` over the strict messages of a block (7.11)."""
    pooled: dict[tuple[str, str], list[int]] = {}

    def add(dim: str, codes: np.ndarray, names: Sequence[str], mask: np.ndarray, good: np.ndarray) -> None:
        n = np.bincount(codes[mask], minlength=len(names))
        k = np.bincount(codes[mask], weights=good[mask], minlength=len(names))
        for c in np.flatnonzero(n):
            pooled[(dim, names[c])] = [int(k[c]), int(n[c])]

    add("action", data.action.astype(np.int64), ACTIONS, strict, ok)
    add("style", data.style.astype(np.int64), STYLES, strict, ok)
    tag_turn = data.tag_turn
    add("tag", data.tag_codes, data.vocab.words(), strict[tag_turn], ok[tag_turn])
    add("lang", data.turn_lang, data.lang_names, strict, ok)
    return pooled


def score_run_blocks(data_path: str | os.PathLike, pred_paths: Sequence[str | os.PathLike], split: str,
                     mode: str | None, background: bool = False) -> tuple[list[ColumnarRun | None], str | None]:
    """Score closed-mode runs on the arrays, reading the data file once, a block of sessions at a
    time (in a forked process when ``background``), with every predictions file in step.

    Returns one :class:`ColumnarRun` per file, ``None`` for a file the replay must score (a check
    failed, open mode, rows out of the data's order, rows left out), all ``None`` when the data
    file's checks fail; and the data fingerprint when the whole data file was read and passed
    (else ``None``).
    """
    if mode not in (None, "closed"):
        return [None] * len(pred_paths), None
    from ..progress import progress

    blocks, reader = data_pass(data_path, background)
    streams: list[PredictionStream | None] = [PredictionStream(p) for p in pred_paths]
    runs: list[PooledRun | None] = [PooledRun() for _ in pred_paths]
    bar = progress(desc=f"score {len(pred_paths)} run{'s' if len(pred_paths) != 1 else ''}", unit="session")
    try:
        for n_block, data in enumerate(blocks, start=1):
            bar.update(len(data))
            if n_block % heap.EVERY == 0:
                heap.release()
            for k, stream in enumerate(streams):
                if stream is None:
                    continue
                try:
                    block = _score_block(data, stream, split, mode)
                except Bad:
                    block = None
                if block is None:
                    streams[k] = runs[k] = None
                else:
                    runs[k].add(block)  # type: ignore[union-attr]
    except Bad:
        return [None] * len(pred_paths), None
    finally:
        bar.close()
        close = getattr(blocks, "close", None)
        if close is not None:
            close()
    out: list[ColumnarRun | None] = []
    for stream, run in zip(streams, runs):
        try:
            left = stream is None or stream.rest()
        except Bad:
            left = True
        if left or run is None or not stream.rows or (mode is None and stream.first["mode"] not in (None, "closed")):
            out.append(None)
        else:
            out.append(run.finish(rows=stream.rows, predictions_sha256=stream.sha256(), **stream.first))
    fingerprint = reader.fingerprint
    del streams, runs, blocks, reader
    heap.release()  # what the pass and the pooling let go
    return out, fingerprint


def _score_block(data: DataColumns, stream: PredictionStream, split: str, mode: str | None) -> Block | None:
    rows = stream.take(data)
    if mode is None and stream.first["mode"] not in (None, "closed"):
        return None  # an open-mode run
    try:
        preds = stream.columns(rows, data)
    except OverflowError:
        raise Bad("an integer beyond 64 bits") from None
    return score_closed(data, preds, split)
