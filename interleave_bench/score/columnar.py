"""The predictions' side of ``score``: files read into arrays in step with the data's blocks.

The data file is read once, by :mod:`.datafile` (its full check and fingerprint on the way), into
a few compact numpy arrays per block of sessions. A JSONL predictions file is read by the compiled
reader of the prediction record (:func:`~interleave_bench.compiled.decoder`: the same fields,
types and bounds, checked in C) and a Parquet one by pyarrow (:mod:`.parquet`), into arrays in
step with the data: no per-row model objects. A block the compiled reader does not take, or
cannot vouch for, is read by the record type and put in the same arrays: every valid file is
scored here. Rows left out of the numbers (unknown sessions or turns, second rows for a turn) are
listed as :func:`~.rows.index_rows` lists them. A defect raises :class:`Bad`, and the caller has
the strict reader name it (:func:`~.read.refused`). :func:`score_run_blocks` scores each block
of sessions with :func:`~.block.score_block`, in either mode.
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

from ..compiled import DecodeErrors
from ..errors import InputError
from ..json_text import NEWLINE_BYTE
from ..schema import more_cached_than_sent
from ..schema import PredictionRow
from .datafile import Bad, DataColumns, data_pass, decode_lines, whole_line_blocks
from .block import Block, score_block
from .pool import ColumnarRun, PooledRun  # noqa: F401 - read from here too
from .rowfile import (MODEL_FIELD, RARE_FIELDS, _is_lean, _field_or_none,  # noqa: F401 - read from here too
                      _row_decoder, _strictly, numbered_blocks)
from .labels import ThreadLabels
from .rows import LeftOutRows, mode_error, other_modes, row_lines
from .routing import DEFAULT_MODE



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
    #: calls of each row whose tokens the provider did not report (``usage.unreported``; None: none)
    unreported: Optional[np.ndarray] = None
    #: each row's ``confidence``, NaN where it has none (None: no row of the block has one)
    confidence: Optional[np.ndarray] = None



_I, _SID, _PRED, _USAGE_OF, _ELAPSED, _VIA, _REFS = (attrgetter(a) for a in ("i", "session_id", "pred", "usage", "elapsed_ms", "via", "refs"))
_BURST, _MIXED, _WAITED, _MODE = attrgetter("burst"), attrgetter("mixed"), attrgetter("waited"), attrgetter("mode")
_CONFIDENCE = attrgetter("confidence")
_TOKENS = attrgetter("input", "output", "cache_hit", "unreported")
_TOKEN_FIELDS = tuple(attrgetter(a) for a in ("input", "output", "cache_hit", "unreported"))
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
    """Whether each row is a model call, and its (input, output, cached, unreported) counts."""
    n = len(usages)
    call = np.zeros(n, dtype=bool)
    tokens = np.zeros((n, 4), dtype=np.int64)
    left_out = usages.count(None)
    if left_out == n:
        return call, tokens
    every = not left_out
    given = slice(None) if every else np.array(list(compress(range(n), usages)), dtype=np.int64)  # rows with a usage
    used = usages if every else list(compress(usages, usages))
    try:  # a field at a time; a field left out (``UNSET``) is no integer, and takes the path below
        for k, field in enumerate(_TOKEN_FIELDS[:3]):
            tokens[given, k] = np.fromiter(map(field, used), dtype=np.int64, count=len(used))
        call[given] = True
        unreported = list(map(_TOKEN_FIELDS[3], used))  # left out of nearly every row: 0
        if unreported.count(UNSET) != len(unreported):
            tokens[given, 3] = np.array([0 if v is UNSET else v for v in unreported], dtype=np.int64)
        return call, tokens
    except TypeError:
        pass
    values = list(chain.from_iterable(map(_TOKENS, used)))
    # read with presence: a field left out counts 0, a usage naming none is no call
    named = np.array([v is not UNSET for v in values], dtype=bool).reshape(len(used), 4)
    call[given] = named.any(axis=1)
    tokens[given] = np.array([0 if v is UNSET else v for v in values], dtype=np.int64).reshape(len(used), 4)
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


def confidences(rows: list[Any]) -> Optional[np.ndarray]:
    """Each row's ``confidence`` (NaN where it has none), ``None`` when no row has one: a run
    without confidences pays one pass over its rows for them."""
    values = list(map(_CONFIDENCE, rows))
    if values.count(None) == len(values):
        return None
    return np.array(values, dtype=np.float64)  # None -> NaN


def row_columns(rows: list[Any], data: DataColumns, session: list[int]) -> PredictionColumns:
    """Decoded prediction rows (:func:`numbered_blocks`) as arrays against a block of sessions;
    ``session`` is each row's session position in the block."""
    n = len(rows)
    label = data.vocab.encode_words(list(map(_PRED, rows)))
    call, tokens = _usage_columns(list(map(_USAGE_OF, rows)))
    if more_cached_than_sent(tokens[:, 0], tokens[:, 2]).any():  # the record type names the row
        raise Bad("usage.cache_hit")
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
        unreported=tokens[:, 3], confidence=confidences(rows),
    )


def record_columns(rows: list[PredictionRow], data: DataColumns, session: list[int]) -> PredictionColumns:
    """Validated prediction records as arrays against a block of sessions (as :func:`row_columns`
    reads decoded rows); a usage that names no field is no model call, as in a file."""
    cols = row_columns(rows, data, session)
    cols.call = np.fromiter((u is not None and bool(u.__pydantic_fields_set__ or u.__pydantic_extra__)
                             for u in map(_USAGE_OF, rows)), dtype=bool, count=len(rows))
    return cols


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
    with the data, and never held whole (``whole``: read whole before the first block is taken,
    for a file whose rows come in another order). Rows that wait for a later block (or never find
    one) stay buffered; :meth:`rest` says what is left at the end. A JSONL file's rows are
    compiled structs (:func:`numbered_blocks`) with their numbers, a Parquet file's pyarrow tables
    (:mod:`.parquet`, each row's number in a column of its own). ``listing`` gathers the rows
    left out of the numbers, :attr:`other_mode` the rows naming another mode than the run's,
    :attr:`labels` the labels of a closed-mode run (:meth:`count_labels`).
    """

    def __init__(self, path: str | os.PathLike, run_mode: str | None = None, whole: bool = False,
                 allow_duplicates: bool = False) -> None:
        self.parquet = str(path).endswith(".parquet")
        #: the run's mode, that every row naming one must name (``None``: a mode asked for, rows unchecked)
        self.run_mode = run_mode
        #: the SHA-256 of a JSONL file's bytes, taken as they are read (the file is read once)
        self.digest = None if self.parquet else hashlib.sha256()
        if self.parquet:
            from . import parquet

            self._blocks: Iterator[Any] = parquet.tables(path)
        else:
            self._blocks = numbered_blocks(path, self.digest)
        self._buffer: Any = None
        self._sids: list[str] = []  # the session id of each buffered JSONL row
        self._lines: list[int] = []  # and its number in the file (from 0)
        self._done = False
        self.whole = whole
        self.rows = 0
        self.first: dict[str, str | None] = {"mode": None, "policy": None, "model": None}
        self.source = str(path)
        # a Parquet row's number is its place in the file, which the strict reader gives as its line
        lines_of = (lambda numbers: {n: n + 1 for n in numbers}) if self.parquet else functools.partial(row_lines, path)
        self.listing = LeftOutRows(self.source, allow_duplicates, lines_of)
        #: (number, mode) of each row naming another mode than the run's
        self.other_mode: list[tuple[int, str]] = []
        #: the labels of the split's rows scored in closed mode, places by number
        self.labels = ThreadLabels()

    def _pull(self) -> bool:
        block = next(self._blocks, None)
        if block is None:
            self._done = True
            return False
        if self.parquet:
            if not len(block):
                return True
            from . import parquet

            block = block.append_column(parquet.NUMBER, pa_range(self.rows, block.num_rows))
            block, found = parquet.checked(block, self.rows, self.source)
            if self.run_mode is not None and "mode" in block.column_names:
                modes = block.column("mode").to_pylist()
                self.other_mode += [(self.rows + k, modes[k]) for k in other_modes(modes, self.run_mode)]
            self.rows += block.num_rows
            self._buffer = block if self._buffer is None else parquet.joined(self._buffer, block)
        else:
            block, lines = block
            if not block:
                return True
            found = first_named(block)
            modes = list(map(_MODE, block))
            if self.run_mode is not None and modes.count(None) + modes.count(self.run_mode) != len(modes):
                self.other_mode += [(lines[k], modes[k]) for k in other_modes(modes, self.run_mode)]
            self.rows += len(block)
            sids = list(map(_SID, block))
            if self._buffer is None:
                self._buffer, self._sids, self._lines = block, sids, list(lines)
            else:
                self._buffer, self._sids, self._lines = self._buffer + block, self._sids + sids, self._lines + list(lines)
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
        for a JSONL file the rows (compiled structs), each one's session position in ``data`` and
        its line, for a Parquet file a pyarrow table; ``None`` when the file has no rows."""
        where = data.session_index
        while not self._done:
            last = self._last_session()
            if not self.whole and last is not None and last not in where:
                break
            self._pull()
        if self._buffer is None:
            return None
        if self.parquet:
            from . import parquet

            taken, self._buffer = parquet.split(self._buffer, where)
            return taken
        rows, sids, lines = self._buffer, self._sids, self._lines
        pos = list(map(where.get, sids))
        left = pos.count(None)
        cut = pos.index(None) if left else len(pos)
        if left == len(pos) - cut:  # in the data's order: the wanted rows come first
            self._buffer, self._sids, self._lines = rows[cut:], sids[cut:], lines[cut:]
            return rows[:cut], pos[:cut], lines[:cut]
        mine = [p is not None for p in pos]
        other = [not m for m in mine]
        self._buffer, self._sids, self._lines = list(compress(rows, other)), list(compress(sids, other)), list(compress(lines, other))
        return list(compress(rows, mine)), list(compress(pos, mine)), list(compress(lines, mine))

    def columns(self, taken: Any, data: DataColumns) -> PredictionColumns:
        """What :meth:`take` returned, as arrays against a block of sessions."""
        if taken is None:
            return row_columns([], data, [])
        if self.parquet:
            from . import parquet

            return parquet.prediction_columns(taken, data)
        rows, session, _ = taken
        return row_columns(rows, data, session)

    def rest(self, known: set[str] | None = None) -> bool:
        """Whether rows are left over once every session block has been taken (read to the end)
        that :attr:`listing` cannot list: rows of sessions in ``known`` (the data's: the file's
        rows came in another order), or any row when ``known`` is not given. The rows of unknown
        sessions are listed."""
        while self._pull():
            pass
        if self._buffer is None or not len(self._buffer):
            return False
        if self.parquet:
            from . import parquet

            sids = self._buffer.column("session_id").to_pylist()
            if known is None or not known.isdisjoint(sids):
                return True
            stray = zip(sids, self._buffer.column("i").to_pylist(), parquet.numbers(self._buffer).tolist())
            self._buffer = self._buffer.slice(0, 0)
        else:
            if known is None or not known.isdisjoint(self._sids):
                return True
            stray = zip(self._sids, map(_I, self._buffer), self._lines)
            self._buffer, self._sids, self._lines = [], [], []
        for sid, i, number in stray:
            self.listing.stray(sid, i, number, known_session=False)
        return False

    def count_labels(self, taken: Any, preds: PredictionColumns, data: DataColumns, split: str) -> None:
        """Count the labels of the rows of the split's sessions among those :meth:`take` returned
        (``preds``: the same rows as arrays), as closed mode scores them."""
        if taken is None or not preds.rows or self.labels.named:
            return
        if self.parquet:
            from . import parquet

            places = parquet.numbers(taken)
        else:
            places = np.array(taken[2], dtype=np.int64)
        mine = np.array([split == "all" or x == split for x in data.splits], dtype=bool)[preds.session]
        self.labels.add_columns(data, preds.session[mine], preds.label[mine], places[mine])

    def label_errors(self) -> list[InputError]:
        """The error of a closed-mode run none of whose labels names a thread (:class:`~.labels.ThreadLabels`)."""
        if not self.labels.refused:
            return []
        n = self.labels.first[0]  # type: ignore[index]
        return [self.labels.error(self.source, self.listing.lines_of({n})[n])]

    def mode_errors(self) -> list[InputError]:
        """One error per row naming another mode than the run's, in the file's order."""
        if not self.other_mode:
            return []
        line = self.listing.lines_of({n for n, _ in self.other_mode})
        return [mode_error(self.source, line[n], m, self.run_mode) for n, m in sorted(self.other_mode)]  # type: ignore[arg-type]


def pa_range(start: int, n: int) -> Any:
    """``start`` .. ``start + n - 1`` as a pyarrow int64 array."""
    import pyarrow as pa

    return pa.array(np.arange(start, start + n, dtype=np.int64))


# --- scoring --------------------------------------------------------------------------------------


def first_mode(path: str | os.PathLike) -> str:
    """The mode a run is scored in when none is asked for: the first its rows name, else
    ``DEFAULT_MODE`` (docs/score.md#interleave-bench-score-data-predjsonl). Raises :class:`Bad`
    at a defect in the blocks read (the strict reader names it)."""
    return named_mode(path) or DEFAULT_MODE


def named_mode(path: str | os.PathLike) -> str | None:
    """The first mode a predictions file's rows name (the mode they were routed in), ``None``
    when none names one. Only the blocks that could name one are decoded. Raises :class:`Bad` at
    a defect in those (the strict reader names it)."""
    if str(path).endswith(".parquet"):
        from . import parquet

        before = 0
        for table in parquet.tables(path):
            named = parquet.checked(table, before, str(path))[1]["mode"] if len(table) else None
            if named is not None:
                return named
            before += len(table)
        return None
    for block in whole_line_blocks(path):
        if b'"mode"' not in block and b"\\u" not in block:  # (a key may be written with escapes)
            continue
        found = min(k for k in (block.find(b'"mode"'), block.find(b"\\u")) if k >= 0)
        end = block.find(NEWLINE_BYTE, found) + 1 or len(block)
        # the first line that may name one (most files name it in their first row), then the rest
        for part in (block[block.rfind(NEWLINE_BYTE, 0, found) + 1:end], block[end:]):
            try:
                rows = decode_lines(_row_decoder(), part) if part else []
            except (*DecodeErrors, RecursionError):
                rows = _strictly(str(path), part, as_rows=True)
            named = first_named(rows)["mode"]
            if named is not None:
                return named
    return None


def score_run_blocks(data_path: str | os.PathLike, pred_paths: Sequence[str | os.PathLike], split: str,
                     mode: str | None, allow_duplicates: bool = False,
                     background: bool = False) -> tuple[list[ColumnarRun | None], str]:
    """Score runs on the arrays (:func:`~.block.score_block`, either mode), reading the data file
    once, a block of sessions at a time (in a forked process when ``background``), with every
    predictions file in step; a file whose rows
    come in another order than the data's is scored in a second pass that reads it whole first.
    Rows left out of the numbers (of unknown sessions or turns, second rows for a turn) are listed
    on the run (:attr:`ColumnarRun.listing`), rows naming another mode than the run's too.

    Returns one :class:`ColumnarRun` per file, ``None`` for a file holding a defect or no rows
    (:func:`~.read.refused` names it), and the data fingerprint; raises the strict reader's
    errors when the data file holds a defect (before any predictions file's).
    """
    from .read import refused

    modes: list[str | None] = []
    for p in pred_paths:
        try:
            modes.append(mode or first_mode(p))
        except Bad:
            modes.append(None)
    out: list[ColumnarRun | None] = [None] * len(pred_paths)
    todo = [k for k, m in enumerate(modes) if m]
    fingerprint = None
    for whole in (False, True):
        try:
            runs, fingerprint = _pass(data_path, [pred_paths[k] for k in todo], [modes[k] for k in todo], split, mode,
                                      whole, allow_duplicates, background)
        except Bad:
            refused(data_path, "sessions")
        again = []
        for k, run in zip(todo, runs):
            if run is _AGAIN:
                again.append(k)
            else:
                out[k] = run  # type: ignore[assignment]
        todo = again
        if not todo:
            break
    assert fingerprint is not None
    return out, fingerprint


#: what :func:`_pass` returns for a file whose rows came in another order than the data's
_AGAIN = object()


def _pass(data_path: str | os.PathLike, pred_paths: Sequence[str | os.PathLike], modes: Sequence[str | None],
          split: str, mode: str | None, whole: bool, allow_duplicates: bool,
          background: bool) -> tuple[list[Any], str | None]:
    """One pass over the data file with every predictions file in step (``whole``: each read
    whole first): a run, ``None`` (a defect, or no rows) or :data:`_AGAIN` per file, and the data
    fingerprint. Raises :class:`Bad` at a defect of the data file."""
    from ..progress import progress

    blocks, reader = data_pass(data_path, background)
    streams: list[PredictionStream | None] = [PredictionStream(p, None if mode else m, whole, allow_duplicates)
                                              for p, m in zip(pred_paths, modes)]
    runs: list[PooledRun | None] = [PooledRun() for _ in modes]
    known: set[str] = set()  # the data's session ids
    bar = progress(desc=f"score {len(pred_paths)} run{'s' if len(pred_paths) != 1 else ''}", unit="session")
    try:
        for data in blocks:
            bar.update(len(data))
            known.update(data.session_ids)
            for k, stream in enumerate(streams):
                if stream is None:
                    continue
                try:
                    runs[k].add(_score_block(data, stream, split, modes[k]))  # type: ignore[union-attr, arg-type]
                except Bad:  # a defect: the run is not scored (the strict reader names it)
                    streams[k] = runs[k] = None
    finally:
        bar.close()
    out: list[Any] = []
    for stream, run, run_mode in zip(streams, runs, modes):
        try:
            left = stream is not None and stream.rest(known)
        except Bad:
            stream = None
            left = False
        if stream is None or run is None or not stream.rows:
            out.append(None)
        elif left:
            if whole:  # read whole, every row of the data's sessions was taken
                raise AssertionError(f"{stream.source}: rows left after a whole pass")
            out.append(_AGAIN)
        else:
            out.append(run.finish(rows=stream.rows, predictions_sha256=stream.sha256(), scored_mode=run_mode,  # type: ignore[arg-type]
                                  listing=stream.listing, **stream.first, other_mode=stream.mode_errors(),
                                  wrong_labels=stream.label_errors()))
    return out, reader.fingerprint


def _score_block(data: DataColumns, stream: PredictionStream, split: str, mode: str) -> Block:
    """A block of sessions of one run scored, the rows it leaves out listed; raises :class:`Bad`
    at a defect (an integer beyond 64 bits)."""
    taken = stream.take(data)
    for listed in (False, True):
        try:
            preds = stream.columns(taken, data)
        except OverflowError:
            raise Bad("an integer beyond 64 bits") from None
        n_turns = np.diff(data.turn_start)
        if not (np.any(preds.session < 0) or np.any(preds.i >= n_turns[preds.session])):
            row_turn = data.turn_start[preds.session] + preds.i
            if not preds.rows or int(np.bincount(row_turn).max()) <= 1:  # (a count per turn: cheaper than sorting)
                break
        assert not listed
        taken = _listed(data, taken, stream)  # rows left out: listed, then the rest read again
    if mode == "closed":
        stream.count_labels(taken, preds, data, split)
    return score_block(data, preds, split, mode)


def _listed(data: DataColumns, taken: Any, stream: PredictionStream) -> Any:
    """A block's rows (in file order; :meth:`PredictionStream.take`'s) without those left out of
    the numbers, which the stream's listing is told: rows of turns their session does not have,
    and of a turn that has another row (the last counts)."""
    if stream.parquet:
        from . import parquet

        sids = taken.column("session_id").to_pylist()
        where = parquet.positions(taken.column("session_id"), data.session_index)
        i, numbers = parquet._np(taken.column("i"), np.int64), parquet.numbers(taken).tolist()
    else:
        rows, pos, numbers = taken
        sids = list(map(_SID, rows))
        where = np.array(pos, dtype=np.int64)
        i = np.fromiter(map(_I, rows), dtype=np.int64, count=len(rows))
    stray = i >= np.diff(data.turn_start)[where]
    turn = np.where(stray, -1, data.turn_start[where] + i)
    counts = np.bincount(turn[~stray])
    keep = ~stray
    listing = stream.listing
    for k in np.flatnonzero(stray).tolist():
        listing.stray(sids[k], int(i[k]), numbers[k], known_session=True)
    for t in np.flatnonzero(counts > 1):
        same = np.flatnonzero(turn == t).tolist()
        for before, k in zip(same[:-1], same[1:]):
            listing.repeated(sids[k], int(i[k]), numbers[k], numbers[before], numbers[same[0]])
        keep[same[:-1]] = False
    if stream.parquet:
        import pyarrow as pa

        return taken.filter(pa.array(keep))
    return list(compress(rows, keep)), list(compress(pos, keep)), list(compress(numbers, keep))
