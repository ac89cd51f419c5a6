"""Parquet prediction files for the scorer: read with pyarrow, checked column by column.

Every field the prediction record declares is checked against what the record type accepts
(types, nulls, choices, bounds); a block these checks cannot vouch for (a field of another type
the record type reads, a usage with fields of its own) is read row by row by the record type and
built again in the declared types (:func:`checked`), so that every valid file is scored on the
arrays; a defect raises :class:`Bad` (the strict reader names every bad row and field). JSONL
prediction files do not come here (:mod:`.columnar` reads them with the compiled record reader);
this module, and pyarrow with it, is loaded only for a Parquet file.
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError, InputErrors
from ..schema import MAX_ELAPSED_MS, MODES
from .columnar import PredictionColumns
from ..schema import more_cached_than_sent
from .datafile import Bad, DataColumns

#: rows per block of a Parquet predictions file
BATCH_ROWS = 65_536


# --- reading ------------------------------------------------------------------------------------


def _field(struct, name: str, required: bool, types: tuple, nullable: bool):
    """Child ``name`` of a table or struct array, checked; ``None`` when absent and optional."""
    names = struct.column_names if isinstance(struct, pa.Table) else [f.name for f in struct.type]
    if name not in names:
        if required:
            raise Bad(name)
        return None
    col = struct.column(name) if isinstance(struct, pa.Table) else struct.field(name)
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_null(col.type):
        if not nullable and len(col):
            raise Bad(name)
        return None
    if not any(t(col.type) for t in types):
        raise Bad(name)
    if not nullable and col.null_count:
        raise Bad(name)
    return col


#: the column types each kind of declared field may arrive as (anything else: the record type decides)
_STR = (pa.types.is_string, pa.types.is_large_string)
_INT = (pa.types.is_int64,)
_BOOL = (pa.types.is_boolean,)
_LIST = (pa.types.is_list, pa.types.is_large_list)
_STRUCT = (pa.types.is_struct,)
_NUM = (pa.types.is_int64, pa.types.is_float64)
_ANY = (lambda t: True,)


def _str_list(col, nullable_items: bool = False):
    """A list<string> column's flat values (checked), or raise."""
    vt = col.type.value_type
    flat = col.flatten()
    if pa.types.is_null(vt):
        if len(flat):
            raise Bad("list item")
        return flat
    if not (pa.types.is_string(vt) or pa.types.is_large_string(vt)) or (flat.null_count and not nullable_items):
        raise Bad("list item")
    return flat


def _in(col, allowed: Sequence[str]) -> None:
    """Raise unless every non-null value is one of ``allowed``."""
    if col is not None and not set(pc.unique(col.drop_null()).to_pylist()) <= set(allowed):
        raise Bad("choice")


def _nonneg(col) -> None:
    if col is not None:
        lo = pc.min(col).as_py()
        if lo is not None and lo < 0:
            raise Bad("bound")


def _within(col, hi: float, lo: float = 0) -> None:
    """Raise unless every non-null value lies in ``[lo, hi]`` (NaN does not)."""
    if col is not None and len(col.drop_null()):
        values = _np(col.drop_null(), np.float64)
        if not bool(np.all((values >= lo) & (values <= hi))):
            raise Bad("bound")


def _one_line(col) -> None:
    """Raise unless no value holds a control character (an id is printed on one line)."""
    if col is not None and pc.any(pc.match_substring_regex(col, r"[\x00-\x1f\x7f]")).as_py():
        raise Bad("control character")


def _np(col, dtype=None) -> np.ndarray:
    arr = col.to_numpy(zero_copy_only=False)
    return arr.astype(dtype) if dtype is not None else arr


def _list_parents(col) -> np.ndarray:
    return _np(pc.list_parent_indices(col), np.int64)


def tables(path: str | os.PathLike) -> Iterator[Any]:
    """The rows of a Parquet predictions file as pyarrow tables of :data:`BATCH_ROWS` rows, the
    next batch read on a thread of its own while this one is worked on (pyarrow reads without
    the GIL). Raises :class:`Bad` when pyarrow cannot read the file."""
    from concurrent.futures import ThreadPoolExecutor

    batches = _read(path)
    with ThreadPoolExecutor(1, thread_name_prefix="parquet") as ahead:
        try:
            pending = ahead.submit(next, batches, None)
            while True:
                table = pending.result()
                if table is None:
                    return
                pending = ahead.submit(next, batches, None)
                yield table
        finally:
            ahead.shutdown(wait=True, cancel_futures=True)
            batches.close()


def _read(path: str | os.PathLike) -> Iterator[Any]:
    """:func:`tables` without the read-ahead."""
    import pyarrow.parquet as pq

    try:
        for batch in pq.ParquetFile(path, memory_map=False).iter_batches(batch_size=BATCH_ROWS, use_threads=False):
            yield pa.Table.from_batches([batch])
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
        raise Bad(str(exc)) from None


def positions(col, where: dict[str, int]) -> np.ndarray:
    """For each value of a string column, its number in ``where`` (-1 where it has none, or is
    null): looked up once per distinct value."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    enc = pc.dictionary_encode(col)
    table = np.array([where.get(w, -1) for w in enc.dictionary.to_pylist()] + [-1], dtype=np.int64)
    return table[enc.indices.fill_null(len(enc.dictionary)).to_numpy(zero_copy_only=False).astype(np.int64)]


def _first_string(col) -> str | None:
    """The first non-null value of a string column (``None`` if none)."""
    if col is None:
        return None
    valid = col.drop_null()
    return valid[0].as_py() if len(valid) else None


#: a usage's fields, as the record type (``schema.RowUsage``) declares them
_USAGE = ("input", "output", "cache_hit", "unreported")


def check_predictions(table) -> dict[str, Any]:
    """Check every declared field of a block of prediction rows; raise :class:`Bad` unless the
    record type accepts each as it stands. Returns the block's first ``mode``, ``policy`` and
    non-empty ``model``."""
    _one_line(_field(table, "session_id", True, _STR, False))
    _nonneg(_field(table, "i", True, _INT, False))
    pred = _field(table, "pred", True, _STR, False)
    _one_line(pred)
    if len(pred) and pc.min(pc.utf8_length(pred)).as_py() == 0:
        raise Bad("pred")
    mode = _field(table, "mode", False, _STR, True)
    _in(mode, MODES)
    policy = _field(table, "policy", False, _STR, True)
    refs = _field(table, "refs", False, _LIST, True)
    if refs is not None:
        _str_list(refs)
    usage = _field(table, "usage", False, _STRUCT, True)
    if usage is not None:
        if any(f.name not in _USAGE or pa.types.is_null(f.type) for f in usage.type):
            raise Bad("usage")  # other or null usage fields: the record type decides what they mean
        counts = {name: _field(usage, name, False, _INT, True) for name in _USAGE}
        for col in counts.values():
            _nonneg(col)
        sent, cached = counts["input"], counts["cache_hit"]
        if cached is not None and more_cached_than_sent(0 if sent is None else _np(sent.fill_null(0), np.int64),
                                                        _np(cached.fill_null(0), np.int64)).any():
            raise Bad("usage.cache_hit")  # the record type names the row
    _within(_field(table, "elapsed_ms", False, _NUM, True), MAX_ELAPSED_MS)
    _within(_field(table, "confidence", False, _NUM, True), 1)
    _field(table, "via", False, _STR, True)
    burst = _field(table, "burst", False, _INT, True)
    if burst is not None:
        lo = pc.min(burst).as_py()
        if lo is not None and lo < 1:
            raise Bad("burst")
    _field(table, "mixed", False, _BOOL, True)
    _field(table, "waited", False, _BOOL, True)
    model = None
    if "model" in table.column_names:
        m = _field(table, "model", False, _STR, True)  # another type: the replay skips it
        if m is not None:
            model = _first_string(pc.filter(m, pc.greater(pc.utf8_length(m), 0)))
    return {"mode": _first_string(mode), "policy": _first_string(policy), "model": model}


#: the declared fields in the types the column checks take, for a block built again from its records
_USAGE_TYPE = pa.struct([(name, pa.int64()) for name in _USAGE])
_SCHEMA = pa.schema([
    ("session_id", pa.string()), ("i", pa.int64()), ("pred", pa.string()), ("mode", pa.string()),
    ("policy", pa.string()), ("refs", pa.list_(pa.string())), ("usage", _USAGE_TYPE), ("elapsed_ms", pa.float64()),
    ("via", pa.string()), ("confidence", pa.float64()), ("burst", pa.int64()), ("mixed", pa.bool_()),
    ("waited", pa.bool_()), ("model", pa.string()),
])


def checked(table: Any, first: int, source: str, rebuild: bool = False) -> tuple[Any, dict[str, Any]]:
    """A block of rows checked (:func:`check_predictions`) and what it names first; a block the
    column checks cannot vouch for is read row by row by the record type (rows numbered from
    ``first`` + 1, as the strict reader numbers them) and built again in the declared types (a
    usage naming no field of its own but unknown ones is a model call of no tokens, a ``model``
    that is no text is none; ``rebuild``: every block). Raises :class:`Bad` at a defect."""
    if not rebuild:
        try:
            return table, check_predictions(table)
        except Bad:
            pass
    from .read import parquet_record

    extra = [name for name in table.column_names if name == NUMBER]
    rows = []
    for n, obj in enumerate(table.drop_columns(extra).to_pylist(), start=first + 1):
        try:
            record = parquet_record(source, n, obj)
        except (InputError, InputErrors):
            raise Bad("a defect") from None
        fields = record.dump()
        usage = fields.get("usage")
        if isinstance(usage, dict):
            known = {k: usage[k] for k in _USAGE if k in usage}
            fields["usage"] = known or ({_USAGE[0]: 0} if usage else {})
        if not isinstance(fields.get("model"), str):
            fields["model"] = None
        rows.append({name: fields.get(name) for name in _SCHEMA.names})
    rebuilt = pa.Table.from_pylist(rows, schema=_SCHEMA)
    for name in extra:  # the rows' numbers, kept
        rebuilt = rebuilt.append_column(name, table.column(name))
    return rebuilt, check_predictions(rebuilt)


#: the column a stream adds to each block: every row's number in the file (from 0)
NUMBER = "\x00row"


def numbers(table: Any) -> np.ndarray:
    """Each row's number in the file (from 0), as the stream numbered it."""
    return _np(table.column(NUMBER), np.int64)


def prediction_columns(table, data: DataColumns) -> PredictionColumns:
    """Rows already checked (:func:`_check_predictions`) as arrays against a block of sessions."""
    n = table.num_rows
    col = {name: _field(table, name, False, _ANY, True) for name in table.column_names}
    session = positions(col["session_id"], data.session_index)
    label = data.vocab.encode(col["pred"])
    zeros = np.zeros(n, dtype=np.int64)
    call = np.zeros(n, dtype=bool)
    tokens = {name: zeros for name in _USAGE}
    usage = col.get("usage")
    if usage is not None:
        for name in _USAGE:
            c = _field(usage, name, False, _INT, True)
            if c is not None:
                call |= _np(c.is_valid(), bool)
                tokens[name] = _np(c.fill_null(0), np.int64)
        call &= _np(usage.is_valid(), bool)
    latency = np.full(n, np.nan)
    elapsed, via = col.get("elapsed_ms"), col.get("via")
    if elapsed is not None:
        counts = elapsed.is_valid()
        if via is not None:
            counts = pc.and_(counts, pc.or_(via.is_null(), pc.equal(via, "llm")).fill_null(True))
        values = _np(elapsed.fill_null(0), np.float64)  # milliseconds are floats, as the record type reads them
        latency = np.where(_np(counts, bool), values, np.nan)
    refs = col.get("refs")
    ref_row = ref_code = np.zeros(0, dtype=np.int64)
    if refs is not None and len(refs.flatten()):
        ref_row = _list_parents(refs)
        ref_code = data.vocab.encode(refs.flatten())
    burst, mixed, waited = col.get("burst"), col.get("mixed"), col.get("waited")
    conf = col.get("confidence")  # a column of nulls is a null column (no row has one)
    confidence = None
    if conf is not None and not pa.types.is_null(conf.type) and conf.null_count < len(conf):
        confidence = _np(pc.cast(conf, pa.float64()).fill_null(np.nan), np.float64)
    return PredictionColumns(
        rows=n, session=session, i=_np(col["i"], np.int64), label=label, call=call,
        input_tokens=tokens["input"], output_tokens=tokens["output"], cached_tokens=tokens["cache_hit"],
        unreported=tokens["unreported"] if tokens["unreported"] is not zeros else None, latency=latency,
        burst=_np(burst.fill_null(0), np.int64) if burst is not None else zeros,
        mixed=_np(mixed.fill_null(False), bool) if mixed is not None else np.zeros(n, dtype=bool),
        waited=_np(waited.fill_null(False), bool) if waited is not None else np.zeros(n, dtype=bool),
        ref_row=ref_row, ref_code=ref_code, confidence=confidence,
    )




def joined(buffer: Any, table: Any) -> Any:
    """Two checked blocks of rows as one table (blocks are typed apart: a field one lacks is null
    there); blocks whose types do not join (an unknown field of two types) are built again in
    the declared types first (:func:`checked`)."""
    try:
        return pa.concat_tables([buffer, table], promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.concat_tables([checked(t, 0, "", rebuild=True)[0] for t in (buffer, table)])


def split(table: Any, where: dict[str, int]) -> tuple[Any, Any]:
    """``(rows of the sessions ``where`` numbers, the others)``, each in file order."""
    mine = positions(table.column("session_id"), where) >= 0
    return table.filter(mine), table.filter(~mine)
