"""The fast path of ``score``: files read as columns (pyarrow), checked and scored as arrays.

A data file and a predictions file (JSONL, or Parquet for predictions) are read by pyarrow's
compiled readers into a few compact numpy arrays per turn: no per-row model objects. Every field
the records declare is checked column by column against what the record types accept (types,
nulls, choices, bounds) and every check of :func:`~interleave_bench.schema.check_session` is made
on the arrays. Anything these checks cannot vouch for (a bad value, an unusual type, a column
pyarrow cannot type) makes the readers return ``None``; the caller then reads the file with the
strict record readers, which accept the same files and name every bad line, field and value.

:func:`score_closed` scores a closed-mode run on the arrays with the formulas of
:mod:`.routing`, to the same bits: in closed mode every catalog topic holds its own thread
(``CLOSED_TOPIC_SEED``), so a message's outcome depends only on its label, its gold thread and
whether that thread came up earlier, and each accumulator becomes a grouped count. It returns
``None`` for what only the replay in :func:`~interleave_bench.score.routing.score_session`
decides (a label that is no thread of its session, open mode, rows left out), and the caller
scores the run with it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..schema import ACTIONS, CLARIFY, ERROR, JUDGE_AMBIGUOUS, JUDGE_NONE, MODES, SPECIAL_LABELS, STYLES, VERSIONS
from ..schema import SPLITS as DATA_SPLITS
from .routing import BREAKDOWN_DIMENSIONS, CLOSED_TOPIC_SEED, COLUMNS, OUTCOME_COST, OUTCOMES, chunked_latency_percentiles, pooled_prf

#: bytes of whole lines pyarrow parses at a time (a block is checked and scored at once): large
#: enough for the array work to outweigh its overhead, small enough to keep memory flat (measured
#: on 2 cores: parsing blocks apart on this thread takes less CPU and far less memory than
#: pyarrow's threaded or streaming readers)
BLOCK_BYTES = 1 << 20
#: rows per block of a Parquet predictions file
BATCH_ROWS = 65_536
#: more cells than this in the per-session B-cubed sum grid and the sums are taken session by session
GRID_CELLS = 20_000_000
#: values per chunk of the pooled latencies (8 MB of floats)
CHUNK_VALUES = 1 << 20
#: how much a pooled array grows when full (a quarter: little held unused, few copies)
GROWTH = 1.25
#: label codes beside thread numbers (0..k-1)
L_CLARIFY, L_ERROR = -2, -3
#: judge codes beside thread numbers
J_NONE, J_AMBIGUOUS = -1, -2


# --- reading ------------------------------------------------------------------------------------

#: objects of a prediction row whose fields may be left out but not null (the record type refuses
#: a null there; a column cannot tell a null from a field left out, so the text is looked at)
NOT_NULL_INSIDE = ("usage",)
#: a JSON string (quotes escaped inside it), and an object of plain members after a key
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OBJECT_AFTER = rb'"%s"\s*:\s*\{((?:[^{}"]|"(?:[^"\\]|\\.)*")*)\}'
_KEY_OPENS = rb'"%s"\s*:\s*\{'


def null_inside(block: bytes, key: str) -> bool:
    """Whether an object under ``key`` in a block of JSON lines may hold an explicit null: a null
    outside its strings, an object the plain pattern cannot delimit (nested objects), or a key
    written with escapes. False only when none can."""
    if b"null" not in block:
        return False
    if b"\\u" in block:
        return True
    bodies = re.findall(_OBJECT_AFTER % key.encode(), block, re.DOTALL)
    if len(bodies) != len(re.findall(_KEY_OPENS % key.encode(), block)):
        return True
    return any(b"null" in _JSON_STRING.sub(b"", body) for body in bodies)



class _Bad(Exception):
    """A column the fast checks cannot vouch for (the strict readers decide)."""


def _field(struct, name: str, required: bool, types: tuple, nullable: bool):
    """Child ``name`` of a table or struct array, checked; ``None`` when absent and optional."""
    names = struct.column_names if isinstance(struct, pa.Table) else [f.name for f in struct.type]
    if name not in names:
        if required:
            raise _Bad(name)
        return None
    col = struct.column(name) if isinstance(struct, pa.Table) else struct.field(name)
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_null(col.type):
        if not nullable and len(col):
            raise _Bad(name)
        return None
    if not any(t(col.type) for t in types):
        raise _Bad(name)
    if not nullable and col.null_count:
        raise _Bad(name)
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
            raise _Bad("list item")
        return flat
    if not (pa.types.is_string(vt) or pa.types.is_large_string(vt)) or (flat.null_count and not nullable_items):
        raise _Bad("list item")
    return flat


def _in(col, allowed: Sequence[str]) -> None:
    """Raise unless every non-null value is one of ``allowed``."""
    if col is not None and not set(pc.unique(col.drop_null()).to_pylist()) <= set(allowed):
        raise _Bad("choice")


def _min_len(col, n: int = 1) -> None:
    """Raise when a non-null string is shorter than ``n`` characters."""
    if col is not None and len(col):
        shortest = pc.min(pc.utf8_length(col.drop_null())).as_py()
        if shortest is not None and shortest < n:
            raise _Bad("length")


def _nonneg(col) -> None:
    if col is not None:
        lo = pc.min(col).as_py()
        if lo is not None and lo < 0:
            raise _Bad("bound")


def _np(col, dtype=None) -> np.ndarray:
    arr = col.to_numpy(zero_copy_only=False)
    return arr.astype(dtype) if dtype is not None else arr


def _codes_in(keys: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """For each key, its position in ``pool`` (unique int64 keys), or -1."""
    if not len(pool):
        return np.full(len(keys), -1, dtype=np.int64)
    order = np.argsort(pool, kind="stable")
    sorted_pool = pool[order]
    pos = np.searchsorted(sorted_pool, keys)
    pos = np.minimum(pos, len(pool) - 1)
    hit = sorted_pool[pos] == keys
    return np.where(hit, order[pos], -1)


class _Vocab:
    """One dictionary of strings for a file: strings -> int codes (thread ids, labels, tags...)."""

    def __init__(self) -> None:
        self.code: dict[str, int] = {}

    def encode(self, col) -> np.ndarray:
        """Codes of a string column (nulls -> -1)."""
        if col is None or len(col) == 0:
            return np.zeros(0, dtype=np.int64)
        enc = pc.dictionary_encode(col)
        if isinstance(enc, pa.ChunkedArray):
            enc = enc.combine_chunks()
        local = enc.dictionary.to_pylist()
        table = np.array([self.code.setdefault(w, len(self.code)) for w in local] + [-1], dtype=np.int64)
        idx = enc.indices.fill_null(len(local)).to_numpy(zero_copy_only=False).astype(np.int64)
        return table[idx]

    def words(self) -> list[str]:
        """Every string seen, by code."""
        return list(self.code)


@dataclass
class DataColumns:
    """The sessions of a data file as arrays; turn arrays run over every turn of every session.

    Thread numbers are positions in a session's ``threads``; ``gold`` is -1 for a one-off;
    ``judge`` a thread number, :data:`J_NONE` or :data:`J_AMBIGUOUS`.
    """

    session_ids: list[str]
    splits: list[str]
    langs: list[str]
    thread_ids: list[list[str]]
    thread_start: np.ndarray  # (sessions + 1) offsets into the flat thread list
    turn_start: np.ndarray  # (sessions + 1) offsets into the turn arrays
    thread_code: np.ndarray  # vocab code of every thread id (flat)
    gold: np.ndarray
    judge: np.ndarray
    ambiguous: np.ndarray
    action: np.ndarray  # index into ACTIONS
    style: np.ndarray  # index into STYLES
    tag_start: np.ndarray  # (turns + 1) offsets into tag_codes
    tag_codes: np.ndarray
    ref_turn: np.ndarray  # gold refs, exploded: turn of each, thread number of each
    ref_thread: np.ndarray
    vocab: _Vocab
    thread_key: np.ndarray  # session * width + vocab code, per flat thread
    thread_pos: np.ndarray  # thread number of each flat thread
    width: int  # codes at or above this are no thread id

    def thread_number(self, sess: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Each (session, vocab code)'s thread number in its session, -1 where it names none."""
        ok = (codes >= 0) & (codes < self.width)
        pos = _codes_in(sess * self.width + np.where(ok, codes, 0), self.thread_key)
        return np.where(ok & (pos >= 0), self.thread_pos[np.maximum(pos, 0)], -1)

    def __len__(self) -> int:
        return len(self.session_ids)


def _list_parents(col) -> np.ndarray:
    return _np(pc.list_parent_indices(col), np.int64)


def _offsets(col) -> np.ndarray:
    off = _np(col.offsets, np.int64)
    return off - off[0]


def _batches(path: str | os.PathLike, parquet: bool = False, not_null_inside: Sequence[str] = ()) -> Iterator[Any]:
    """The file as pyarrow tables of whole lines (records), one block at a time, the next block
    parsed on a thread of its own while this one is worked on (pyarrow parses without the GIL, so
    the data file and every predictions file are parsed side by side on as many cores).

    Raises :class:`_Bad` when pyarrow cannot read or type a block, or when an object under a key
    of ``not_null_inside`` may hold an explicit null (the strict readers decide).
    """
    from concurrent.futures import ThreadPoolExecutor

    blocks = _parsed_blocks(path, parquet, not_null_inside)
    with ThreadPoolExecutor(1, thread_name_prefix="parse") as ahead:
        try:
            pending = ahead.submit(next, blocks, None)
            while True:
                table = pending.result()
                if table is None:
                    return
                pending = ahead.submit(next, blocks, None)
                yield table
        finally:
            ahead.shutdown(wait=True, cancel_futures=True)
            blocks.close()


def _parsed_blocks(path: str | os.PathLike, parquet: bool, not_null_inside: Sequence[str]) -> Iterator[Any]:
    """:func:`_batches` without the read-ahead."""
    try:
        if parquet:
            import pyarrow.parquet as pq

            for batch in pq.ParquetFile(path, memory_map=False).iter_batches(batch_size=BATCH_ROWS, use_threads=False):
                yield pa.Table.from_batches([batch])
            return
        import pyarrow.json as pj

        # each block of whole lines is parsed on its own, on this thread, into the system
        # allocator: memory stays flat however long the file (a streaming reader's does not)
        pool = pa.system_memory_pool()
        with open(path, "rb") as fh:
            rest = b""
            while True:
                chunk = fh.read(BLOCK_BYTES)
                data = rest + chunk
                cut = len(data) if not chunk else data.rfind(b"\n") + 1
                rest = data[cut:]
                if cut:
                    block = data[:cut]
                    block.decode("utf-8")  # pyarrow takes any bytes in a string: the record type does not
                    if any(null_inside(block, key) for key in not_null_inside):
                        raise _Bad("an explicit null")
                    options = pj.ReadOptions(use_threads=False, block_size=max(cut, BLOCK_BYTES))
                    yield pj.read_json(pa.BufferReader(block), read_options=options, memory_pool=pool)
                if not chunk:
                    return
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, UnicodeDecodeError) as exc:
        raise _Bad(str(exc)) from None


def iter_data_columns(path: str | os.PathLike) -> Iterator[DataColumns]:
    """The sessions of a data file as :class:`DataColumns`, a block of whole sessions at a time.

    Raises :class:`_Bad` as soon as a check fails (session ids are checked unique over the file).
    """
    seen: set[str] = set()
    start = 0
    any_rows = False
    for table in _batches(path):
        if not table.num_rows:
            continue
        any_rows = True
        cols = _data_columns(table)
        seen.update(cols.session_ids)
        start += len(cols)
        if len(seen) != start:
            raise _Bad("duplicate session id")
        yield cols
    if not any_rows:
        raise _Bad("no sessions")


def _data_columns(table) -> DataColumns:
    vocab = _Vocab()
    sid = _field(table, "session_id", True, _STR, False)
    _min_len(sid)
    if pc.count_distinct(sid).as_py() != len(sid):
        raise _Bad("session_id")
    _in(_field(table, "version", True, _STR, False), VERSIONS)
    split = _field(table, "split", True, _STR, False)
    _in(split, DATA_SPLITS)
    lang = _field(table, "lang", True, _STR, False)
    _min_len(lang)
    _field(table, "persona", False, _STR, False)
    _field(table, "probes", False, _LIST, True)
    threads = _field(table, "threads", True, _LIST, False)
    turns = _field(table, "turns", True, _LIST, False)
    if pc.min(pc.list_value_length(threads)).as_py() < 1 or pc.min(pc.list_value_length(turns)).as_py() < 1:
        raise _Bad("empty list")

    # threads
    th = threads.flatten()
    if not pa.types.is_struct(th.type) or th.null_count:
        raise _Bad("threads")
    th_sess = _list_parents(threads)
    tid = _field(th, "id", True, _STR, False)
    _min_len(tid)
    _field(th, "title", True, _STR, False)
    _field(th, "domain", True, _STR, False)
    for name in ("goal", "description"):
        _field(th, name, False, _STR, False)
    cons = _field(th, "constraints", False, _LIST, False)
    if cons is not None:
        _str_list(cons)
    facts = _field(th, "facts", False, _LIST, False)
    if facts is not None:
        f = facts.flatten()
        if len(f):
            if not pa.types.is_struct(f.type) or f.null_count:
                raise _Bad("facts")
            _field(f, "key", True, _STR, False)
            _field(f, "value", True, _STR, False)
            _field(f, "update", False, _STR, True)
    twin = _field(th, "twinOf", False, _STR, True)
    n_sess = len(sid)
    thread_code = vocab.encode(tid)
    width = max(len(vocab.code), 1) + 8
    th_key = th_sess * width + thread_code
    if len(np.unique(th_key)) != len(th_key):
        raise _Bad("duplicate thread id")
    reserved = {*SPECIAL_LABELS, JUDGE_NONE, JUDGE_AMBIGUOUS}
    if any(w in reserved for w in vocab.code):
        raise _Bad("reserved thread id")
    thread_start = _offsets(threads)
    th_pos = np.arange(len(th_key)) - thread_start[th_sess]

    def thread_number(sess: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Each (session, string code)'s thread number in its session, -1 if none."""
        pos = _codes_in(sess * width + codes, th_key)
        return np.where((codes >= 0) & (pos >= 0), th_pos[np.maximum(pos, 0)], -1)

    if twin is not None:
        tw = vocab.encode(twin)
        has = tw >= 0
        num = thread_number(th_sess, tw)
        if np.any(has & ((num < 0) | (num == th_pos))):
            raise _Bad("twinOf")

    # turns
    tu = turns.flatten()
    if not pa.types.is_struct(tu.type) or tu.null_count:
        raise _Bad("turns")
    tu_sess = _list_parents(turns)
    turn_start = _offsets(turns)
    i = _field(tu, "i", True, _INT, False)
    if np.any(_np(i, np.int64) != np.arange(len(tu)) - turn_start[tu_sess]):
        raise _Bad("turn numbering")
    _field(tu, "text", True, _STR, False)
    for name in ("reply",):
        _field(tu, name, False, _STR, True)
    amb = _field(tu, "ambiguous", True, _BOOL, False)
    style = _field(tu, "style", True, _STR, False)
    _in(style, STYLES)
    tags = _field(tu, "tags", False, _LIST, False)
    fact = _field(tu, "fact", False, _STRUCT, True)
    if fact is not None:
        present = fact.is_valid()
        for name in ("key", "kind"):
            c = _field(fact, name, True, _STR, True)
            if pc.any(pc.and_(present, c.is_null())).as_py():
                raise _Bad("fact")
    gold = _field(tu, "gold", True, _STRUCT, False)
    g_thread = _field(gold, "thread", True, _STR, True)
    action = _field(gold, "action", True, _STR, False)
    _in(action, ACTIONS)
    g_refs = _field(gold, "refs", False, _LIST, False)
    judge = _field(tu, "judge", True, _STRUCT, False)
    j_thread = _field(judge, "thread", True, _STR, False)
    cands = _field(judge, "candidates", False, _LIST, True)

    action_code = _np(pc.index_in(action, value_set=pa.array(list(ACTIONS))), np.int8)
    style_code = _np(pc.index_in(style, value_set=pa.array(list(STYLES))), np.int8)
    oneoff_a = action_code == ACTIONS.index("oneoff")
    oneoff_s = style_code == STYLES.index("oneoff")
    if np.any(oneoff_a != oneoff_s):
        raise _Bad("style")
    n_turns = len(tu)
    g_codes = vocab.encode(g_thread) if g_thread is not None else np.full(n_turns, -1, dtype=np.int64)
    gold_num = thread_number(tu_sess, g_codes)
    if np.any(oneoff_a & (g_codes >= 0)) or np.any(~oneoff_a & (g_codes < 0)) or np.any((g_codes >= 0) & (gold_num < 0)):
        raise _Bad("gold.thread")
    j_codes = vocab.encode(j_thread)
    j_num = thread_number(tu_sess, j_codes)
    j_words = np.array([vocab.code.get(JUDGE_NONE, -9), vocab.code.get(JUDGE_AMBIGUOUS, -9)])
    judge_code = np.where(j_num >= 0, j_num, np.where(j_codes == j_words[0], J_NONE, np.where(j_codes == j_words[1], J_AMBIGUOUS, -9)))
    if np.any(judge_code == -9):
        raise _Bad("judge.thread")
    if cands is not None:
        cv = _str_list(cands)
        if len(cv):
            c_turn = _list_parents(cands)
            if np.any(thread_number(tu_sess[c_turn], vocab.encode(cv)) < 0):
                raise _Bad("judge.candidates")
    if g_refs is not None:
        rv = _str_list(g_refs)
        ref_turn = _list_parents(g_refs) if len(rv) else np.zeros(0, dtype=np.int64)
        ref_thread = thread_number(tu_sess[ref_turn], vocab.encode(rv)) if len(rv) else np.zeros(0, dtype=np.int64)
        if np.any(ref_thread < 0):
            raise _Bad("gold.refs")
    else:
        ref_turn = ref_thread = np.zeros(0, dtype=np.int64)
    if tags is not None:
        tv = _str_list(tags)
        tag_start = _offsets(tags)
        tag_codes = vocab.encode(tv) if len(tv) else np.zeros(0, dtype=np.int64)
    else:
        tag_start = np.zeros(n_turns + 1, dtype=np.int64)
        tag_codes = np.zeros(0, dtype=np.int64)
    thread_words = tid.to_pylist()
    return DataColumns(
        session_ids=sid.to_pylist(), splits=split.to_pylist(), langs=lang.to_pylist(),
        thread_ids=[thread_words[thread_start[k]:thread_start[k + 1]] for k in range(n_sess)],
        thread_start=thread_start, turn_start=turn_start, thread_code=thread_code,
        gold=gold_num.astype(np.int32), judge=judge_code.astype(np.int32), ambiguous=_np(amb, bool),
        action=action_code, style=style_code, tag_start=tag_start, tag_codes=tag_codes,
        ref_turn=ref_turn, ref_thread=ref_thread.astype(np.int32), vocab=vocab,
        thread_key=th_key, thread_pos=th_pos, width=width,
    )


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


def _first_string(col) -> str | None:
    """The first non-null value of a string column (``None`` if none)."""
    if col is None:
        return None
    valid = col.drop_null()
    return valid[0].as_py() if len(valid) else None


_USAGE = ("input", "output", "cache_hit")


def _check_predictions(table) -> dict[str, Any]:
    """Check every declared field of a block of prediction rows; raise :class:`_Bad` unless the
    record type accepts each as it stands. Returns the block's first ``mode``, ``policy`` and
    non-empty ``model``."""
    _field(table, "session_id", True, _STR, False)
    _nonneg(_field(table, "i", True, _INT, False))
    _field(table, "pred", True, _STR, False)
    mode = _field(table, "mode", False, _STR, True)
    _in(mode, MODES)
    policy = _field(table, "policy", False, _STR, True)
    refs = _field(table, "refs", False, _LIST, True)
    if refs is not None:
        _str_list(refs)
    usage = _field(table, "usage", False, _STRUCT, True)
    if usage is not None:
        if any(f.name not in _USAGE or pa.types.is_null(f.type) for f in usage.type):
            raise _Bad("usage")  # other or null usage fields: the record type decides what they mean
        for name in _USAGE:
            _nonneg(_field(usage, name, False, _INT, True))
    _nonneg(_field(table, "elapsed_ms", False, _NUM, True))
    _field(table, "via", False, _STR, True)
    burst = _field(table, "burst", False, _INT, True)
    if burst is not None:
        lo = pc.min(burst).as_py()
        if lo is not None and lo < 1:
            raise _Bad("burst")
    _field(table, "mixed", False, _BOOL, True)
    _field(table, "waited", False, _BOOL, True)
    model = None
    if "model" in table.column_names:
        m = _field(table, "model", False, _STR, True)  # another type: the replay skips it
        if m is not None:
            model = _first_string(pc.filter(m, pc.greater(pc.utf8_length(m), 0)))
    return {"mode": _first_string(mode), "policy": _first_string(policy), "model": model}


def _prediction_columns(table, data: DataColumns) -> PredictionColumns:
    """Rows already checked (:func:`_check_predictions`) as arrays against a block of sessions."""
    n = table.num_rows
    col = {name: _field(table, name, False, _ANY, True) for name in table.column_names}
    session = _np(pc.index_in(col["session_id"], value_set=pa.array(data.session_ids)).fill_null(-1), np.int64)
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
    return PredictionColumns(
        rows=n, session=session, i=_np(col["i"], np.int64), label=label, call=call,
        input_tokens=tokens["input"], output_tokens=tokens["output"], cached_tokens=tokens["cache_hit"],
        latency=latency,
        burst=_np(burst.fill_null(0), np.int64) if burst is not None else zeros,
        mixed=_np(mixed.fill_null(False), bool) if mixed is not None else np.zeros(n, dtype=bool),
        waited=_np(waited.fill_null(False), bool) if waited is not None else np.zeros(n, dtype=bool),
        ref_row=ref_row, ref_code=ref_code,
    )


class PredictionStream:
    """A predictions file read a block at a time and handed out session block by session block.

    :meth:`take` returns the rows of the given sessions among those read so far, reading on while
    the last row read belongs to them: a file in the data's session order is read once, in step
    with the data, and never held whole. Rows that wait for a later block (or never find one)
    stay buffered; :meth:`rest` says whether any are left at the end.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self._blocks = _batches(path, parquet=str(path).endswith(".parquet"), not_null_inside=NOT_NULL_INSIDE)
        self._buffer = None
        self._done = False
        self.rows = 0
        self.first: dict[str, str | None] = {"mode": None, "policy": None, "model": None}

    def _pull(self) -> bool:
        table = next(self._blocks, None)
        if table is None:
            self._done = True
            return False
        if table.num_rows:
            found = _check_predictions(table)
            for key, value in found.items():
                if self.first[key] is None:
                    self.first[key] = value
            self.rows += table.num_rows
            if self._buffer is None:
                self._buffer = table
            else:  # blocks are typed apart: a field one block lacks is null there
                try:
                    self._buffer = pa.concat_tables([self._buffer, table], promote_options="permissive")
                except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                    raise _Bad(str(exc)) from None  # an unknown field of two types: the record type keeps both
        return True

    def take(self, session_ids: Sequence[str]):
        """The buffered rows of ``session_ids`` (a pyarrow table, in file order), reading on as
        needed; ``None`` when the file has no rows."""
        wanted = set(session_ids)
        while not self._done:
            if self._buffer is not None and self._buffer.num_rows:
                if self._buffer.column("session_id")[-1].as_py() not in wanted:
                    break
            self._pull()
        if self._buffer is None:
            return None
        mine = pc.is_in(self._buffer.column("session_id"), value_set=pa.array(list(session_ids)))
        taken = self._buffer.filter(mine)
        self._buffer = self._buffer.filter(pc.invert(mine))
        return taken

    def rest(self) -> bool:
        """Whether any row is left over once every session block has been taken (read to the end)."""
        while self._pull():
            pass
        return self._buffer is not None and self._buffer.num_rows > 0


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


@dataclass
class _Block:
    """One block of sessions scored: what :class:`ClosedRun` pools."""

    session_ids: list[str]
    langs: list[str]
    matrix: np.ndarray
    latencies: np.ndarray
    p_terms: np.ndarray
    r_terms: np.ndarray
    breakdown: dict[tuple[str, str], list[int]]
    unscored: list[str]
    outside: int


class ClosedRun:
    """A closed-mode run pooled block by block; holds per-session counts, never per-message data
    beyond the latencies (whose percentiles need them all)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.langs: list[str] = []
        self.matrix = _Growing((len(COLUMNS),))
        self.latencies = _Chunks()
        self.p_sum = self.r_sum = 0.0
        self.items = 0
        self.breakdown: dict[tuple[str, str], list[int]] = {}
        self.unscored: list[str] = []
        self.outside = 0

    def add(self, block: _Block) -> None:
        self.ids += block.session_ids
        self.langs += block.langs
        self.matrix.append(block.matrix)
        if len(block.latencies):
            self.latencies.append(block.latencies)
        # the pooled B-cubed sums go on adding the items' terms in order (as the replay's)
        if len(block.p_terms):
            self.p_sum = float(np.cumsum(np.concatenate([[self.p_sum], block.p_terms]))[-1])
            self.r_sum = float(np.cumsum(np.concatenate([[self.r_sum], block.r_terms]))[-1])
            self.items += len(block.p_terms)
        for key, (k, n) in block.breakdown.items():
            cell = self.breakdown.setdefault(key, [0, 0])
            cell[0] += k
            cell[1] += n
        self.unscored += block.unscored
        self.outside += block.outside

    def finish(self, stream: PredictionStream) -> ColumnarRun:

        breakdown: dict[str, dict[str, list[int]]] = {dim: {} for dim in BREAKDOWN_DIMENSIONS}
        for (dim, key), cell in sorted(self.breakdown.items()):
            breakdown[dim][key] = cell
        latency = chunked_latency_percentiles(self.latencies.arrays())  # only these are kept
        matrix = self.matrix.array()
        return ColumnarRun(
            session_ids=self.ids, langs=self.langs, matrix=matrix, latency=latency, latency_rows=len(self.latencies),
            bcubed=pooled_prf(self.p_sum, self.r_sum, self.items), breakdown=breakdown, unscored=self.unscored,
            rows=stream.rows, outside=self.outside, mode=stream.first["mode"], policy=stream.first["policy"],
            model=stream.first["model"],
        )


class _Chunks:
    """Values appended block by block into arrays of :data:`CHUNK_VALUES` (each one large
    allocation, never regrown or joined); a block of another dtype starts a new one."""

    def __init__(self) -> None:
        self._chunks: list[np.ndarray] = []
        self._used: list[int] = []

    def append(self, values: np.ndarray) -> None:
        """Add ``values`` after those appended so far."""
        while len(values):
            if not self._chunks or self._used[-1] == CHUNK_VALUES or self._chunks[-1].dtype != values.dtype:
                self._chunks.append(np.empty(CHUNK_VALUES, dtype=values.dtype))
                self._used.append(0)
            at = self._used[-1]
            take = min(CHUNK_VALUES - at, len(values))
            self._chunks[-1][at:at + take] = values[:take]
            self._used[-1] = at + take
            values = values[take:]

    def arrays(self) -> list[np.ndarray]:
        """The values appended so far, chunk by chunk (views: no copy)."""
        return [c[:n] for c, n in zip(self._chunks, self._used)]

    def __len__(self) -> int:
        return sum(self._used)


class _Growing:
    """Rows appended block by block into one array grown a quarter at a time: the pooled arrays
    live in a few large allocations (handed back whole when outgrown) rather than in many small
    ones that would pin the memory of the blocks' scratch arrays around them."""

    def __init__(self, width: tuple[int, ...] = ()) -> None:
        self._data = np.zeros((0, *width))
        self._n = 0

    def append(self, rows: np.ndarray) -> None:
        """Add ``rows`` (the dtype widens as ``np.concatenate`` would widen it)."""
        need = self._n + len(rows)
        dtype = np.result_type(self._data, rows) if self._n else rows.dtype
        if need > len(self._data) or dtype != self._data.dtype:
            grown = np.empty((max(need, int(len(self._data) * GROWTH)), *rows.shape[1:]), dtype=dtype)
            grown[:self._n] = self._data[:self._n]
            self._data = grown
        self._data[self._n:need] = rows
        self._n = need

    def array(self) -> np.ndarray:
        """The rows appended so far (a view: no copy)."""
        return self._data[:self._n]


def _by_session(sess: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    return np.bincount(sess, weights=weights, minlength=n).astype(np.float64)


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


def _count_distinct(sess: np.ndarray, key: np.ndarray, n: int) -> np.ndarray:
    """Per session: how many distinct ``key`` values its items hold."""
    if not len(key):
        return np.zeros(n)
    w = int(key.max()) + 1
    return _by_session(np.unique(sess * w + key) // w, n)


def score_closed(data: DataColumns, preds: PredictionColumns, split: str) -> _Block | None:
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
    sess = np.repeat(np.arange(n_sess), n_turns)
    lab = np.full(total, L_ERROR, dtype=np.int64)
    lab[row_turn] = row_lab
    g = data.gold.astype(np.int64)
    amb = data.ambiguous
    thread = g >= 0
    special = lab < 0
    strict = thread & ~amb

    # outcomes (7.2): a thread's first message sent elsewhere is merged into a topic, later ones are wrong
    tt = np.flatnonzero(thread)
    key = sess[tt] * (int(g.max()) + 2) + g[tt]
    _, first = np.unique(key, return_index=True)
    seen_before = np.ones(total, dtype=bool)
    seen_before[tt[first]] = False
    kind = np.full(total, OUTCOMES.index("wrong_existing"), dtype=np.int64)
    kind[thread & ~seen_before] = OUTCOMES.index("merged_new")
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
    cell_key = (ps * w + pg) * w + pl
    cells, cell_inv, cell_n = np.unique(cell_key, return_inverse=True, return_counts=True)
    _, pred_inv, pred_n = np.unique(ps * w + pl, return_inverse=True, return_counts=True)
    _, ref_inv, ref_n = np.unique(ps * w + pg, return_inverse=True, return_counts=True)
    p_terms = cell_n[cell_inv] / pred_n[pred_inv]
    r_terms = cell_n[cell_inv] / ref_n[ref_inv]
    cols["thread_labels_sum"] = _by_session(cells // (w * w), n_sess)
    cols["label_threads_sum"] = cols["thread_labels_sum"]
    cols["thread_labels_n"] = _count_distinct(ps, pg, n_sess)
    cols["label_threads_n"] = _count_distinct(ps, pl, n_sess)
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
        found = _codes_in(r_turn[named] * wr + r_num[named], gold_keys) >= 0
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
    return _Block(
        session_ids=[data.session_ids[k] for k in scored],
        langs=[data.langs[k] for k in scored],
        matrix=matrix,
        latencies=preds.latency[lat_rows],
        p_terms=p_terms[scored_pairs],
        r_terms=r_terms[scored_pairs],
        breakdown=_breakdown(data, sess, strict & scored_mask[sess], ok),
        unscored=[data.session_ids[k] for k in np.flatnonzero(in_split & ~scored_mask)],
        outside=int((~in_split[row_sess]).sum()),
    )


def _breakdown(data: DataColumns, sess: np.ndarray, strict: np.ndarray, ok: np.ndarray) -> dict[tuple[str, str], list[int]]:
    """``{(dimension, key): [correct, n]}`` over the strict messages of a block (7.11)."""
    pooled: dict[tuple[str, str], list[int]] = {}

    def add(dim: str, codes: np.ndarray, names: Sequence[str], mask: np.ndarray, good: np.ndarray) -> None:
        n = np.bincount(codes[mask], minlength=len(names))
        k = np.bincount(codes[mask], weights=good[mask], minlength=len(names))
        for c in np.flatnonzero(n):
            pooled[(dim, names[c])] = [int(k[c]), int(n[c])]

    add("action", data.action.astype(np.int64), ACTIONS, strict, ok)
    add("style", data.style.astype(np.int64), STYLES, strict, ok)
    tag_turn = np.repeat(np.arange(len(strict)), np.diff(data.tag_start))
    add("tag", data.tag_codes, data.vocab.words(), strict[tag_turn], ok[tag_turn])
    langs = sorted(set(data.langs))
    number = {x: k for k, x in enumerate(langs)}
    lang_code = np.array([number[x] for x in data.langs], dtype=np.int64)[sess]
    add("lang", lang_code, langs, strict, ok)
    return pooled


def score_run_blocks(data_path: str | os.PathLike, pred_paths: Sequence[str | os.PathLike], split: str,
                     mode: str | None) -> list[ColumnarRun | None]:
    """Score closed-mode runs on the arrays, reading the data file once, a block of sessions at a
    time, with every predictions file in step; one :class:`ColumnarRun` per file, ``None`` for a
    file the replay must score (a check failed, open mode, rows out of the data's order, rows
    left out), and all ``None`` when the data file's checks fail."""
    if mode not in (None, "closed"):
        return [None] * len(pred_paths)
    from ..progress import progress

    streams: list[PredictionStream | None] = [PredictionStream(p) for p in pred_paths]
    runs: list[ClosedRun | None] = [ClosedRun() for _ in pred_paths]
    bar = progress(desc=f"score {len(pred_paths)} run{'s' if len(pred_paths) != 1 else ''}", unit="session")
    try:
        for data in iter_data_columns(data_path):
            bar.update(len(data))
            for k, stream in enumerate(streams):
                if stream is None:
                    continue
                try:
                    block = _score_block(data, stream, split, mode)
                except _Bad:
                    block = None
                if block is None:
                    streams[k] = runs[k] = None
                else:
                    runs[k].add(block)  # type: ignore[union-attr]
    except _Bad:
        return [None] * len(pred_paths)
    finally:
        bar.close()
    out: list[ColumnarRun | None] = []
    for stream, run in zip(streams, runs):
        try:
            left = stream is None or stream.rest()
        except _Bad:
            left = True
        if left or run is None or not stream.rows or (mode is None and stream.first["mode"] not in (None, "closed")):
            out.append(None)
        else:
            out.append(run.finish(stream))
    return out


def _score_block(data: DataColumns, stream: PredictionStream, split: str, mode: str | None) -> _Block | None:
    table = stream.take(data.session_ids)
    if mode is None and stream.first["mode"] not in (None, "closed"):
        return None  # an open-mode run
    if table is None:
        table = _empty_predictions()
    return score_closed(data, _prediction_columns(table, data), split)


def _empty_predictions():
    return pa.table({"session_id": pa.array([], pa.string()), "i": pa.array([], pa.int64()),
                     "pred": pa.array([], pa.string())})
