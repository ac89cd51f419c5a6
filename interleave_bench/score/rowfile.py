"""A JSONL predictions file read a block at a time into compiled rows (:mod:`.columnar` puts
them in arrays): the compiled reader of the prediction record (:func:`~interleave_bench.compiled.decoder`:
the same fields, types and bounds, checked in C), a lean one while no row names a rare or unknown
field; a block it does not take, or cannot vouch for (a key that may be named twice, a number that
may lie beyond 64 bits), read by the record type. A defect raises :class:`~.datafile.Bad`.
"""

from __future__ import annotations

import functools
import os
from itertools import chain
from operator import attrgetter
from typing import Any, Iterator, Optional, Sequence

import msgspec
import numpy as np

from ..compiled import DecodeErrors, decoder
from ..errors import InputError, InputErrors
from ..json_text import is_blank, split_lines
from ..schema import PredictionRow, RowUsage
from .datafile import Bad, decode_lines, ids_unprintable, whole_line_blocks
from .keys import names_twice, quotes

_SID, _PRED = attrgetter("session_id"), attrgetter("pred")


#: the first ``model`` a predictions file names is read from this unknown field of its rows
MODEL_FIELD = "model"


@functools.lru_cache(maxsize=None)
def _row_decoder() -> Any:
    """The compiled reader of a prediction row: unknown fields passed over but ``model``, and
    refused in a usage (each usage field is a count the scorer adds up); a usage records which of
    its fields were given (``{}`` is no model call)."""
    return decoder(PredictionRow, keep_unknown=True, presence=(RowUsage,), extra=((MODEL_FIELD, Optional[str]),),
                   omit_defaults=True, patterns=False)


#: optional fields of a prediction row most files leave out: a block none of whose rows names one
#: (nor any field the row type does not know) is read by a reader without them, and their columns
#: hold their defaults
RARE_FIELDS = ("burst", "mixed", "waited")


@functools.lru_cache(maxsize=None)
def _lean_decoder() -> Any:
    """The compiled reader of a prediction row that names none of :data:`RARE_FIELDS` nor any
    unknown field (it refuses one)."""
    return decoder(PredictionRow, presence=(RowUsage,), leave_out=RARE_FIELDS, omit_defaults=True, patterns=False)


def _is_lean(row: Any) -> bool:
    return type(row) is _lean_decoder().type


def _field_or_none(row: Any, name: str) -> Any:
    """A row's field, ``None`` for a lean row (which names none of :data:`RARE_FIELDS`)."""
    return getattr(row, name, None)


def numbered_blocks(path: str | os.PathLike, digest: Any) -> Iterator[tuple[list[Any], Sequence[int]]]:
    """The rows of a JSONL predictions file, decoded by the compiled reader a block at a time
    (by the lean one while every block it meets fits it), with the number of each (from 0, blank
    lines passed over: :class:`~.rows.LeftOutRows` finds its line when it is listed); every byte of
    the file goes to ``digest`` (a hashlib object) as it is read. A block the compiled reader does
    not take, or cannot vouch for, is read by the record type (:func:`_strictly`); raises
    :class:`Bad` at a defect (the strict reader names it)."""
    # blank lines are passed over, as the strict reader does
    lean: Any = _lean_decoder()
    full = _row_decoder()
    name = str(path)
    before = 0  # rows before the block
    for block in whole_line_blocks(path, digest=digest):
        rows = None
        if lean is not None:
            try:
                rows = decode_lines(lean, block)
            except (*DecodeErrors, RecursionError):
                lean = None  # a row names a rare or unknown field: the full reader from here on
        if rows is None:
            try:
                rows = decode_lines(full, block)
            except (*DecodeErrors, RecursionError):
                rows = _strictly(name, block, as_rows=True)
            else:
                if long_numbers(block):  # in a field passed over: the record type judges it
                    _strictly(name, block)
                elif not named_once(block, rows):
                    _twice(name, block)
        elif not named_once(block, rows):
            _twice(name, block)
        if ids_unprintable(block, chain(map(_SID, rows), map(_PRED, rows))):
            raise Bad("a control character in an id")
        yield rows, range(before, before + len(rows))
        before += len(rows)


def _twice(source: str, block: bytes) -> None:
    """Raise :class:`Bad` when a row of the block names a key twice (its keys read by
    :func:`~.keys.names_twice`, else the block read by the record type): the rows as decoded
    stand otherwise."""
    if names_twice(block, None, PredictionRow):
        _strictly(source, block)


def _strictly(source: str, block: bytes, as_rows: bool = False) -> list[Any]:
    """Each line of a block read by the record type; raises :class:`Bad` at a defect. With
    ``as_rows``, the rows as the full compiled reader holds them (:func:`as_compiled`)."""
    from ..io import parse_record

    out = []
    for line in split_lines(block):
        if is_blank(line):
            continue
        try:
            record = parse_record(source, None, line.decode("utf-8"), PredictionRow)
        except (InputError, InputErrors):
            raise Bad("a defect") from None
        if as_rows:
            out.append(as_compiled(record))
    return out


def as_compiled(record: PredictionRow) -> Any:
    """A prediction record as the full compiled reader holds one, with the same columns: a usage
    naming no field of its own but unknown ones is a model call of no tokens (as the record type
    reads it), a ``model`` that is no text is none."""
    fields = record.dump()
    usage = fields.get("usage")
    if isinstance(usage, dict):
        known = {k: usage[k] for k in _USAGE_FIELDS if k in usage}
        fields["usage"] = known or ({_USAGE_FIELDS[0]: 0} if usage else {})
    if not isinstance(fields.get(MODEL_FIELD), str):
        fields.pop(MODEL_FIELD, None)
    return msgspec.convert(fields, _row_decoder().type)


_USAGE_FIELDS = ("input", "output", "cache_hit")


#: the longest run of digits, and of exponent digits, a number in range is written with
INT_DIGITS, EXPONENT_DIGITS = 19, 3


def long_numbers(block: bytes) -> bool:
    """Whether the text may hold a number no reader takes (an integer beyond 64 bits, a float
    beyond the finite range): a run of :data:`INT_DIGITS` digits or more, or an exponent of
    :data:`EXPONENT_DIGITS` digits or more (text that merely looks so goes to the strict reader,
    which decides)."""
    b = np.frombuffer(block, dtype=np.uint8)
    digit = (b >= 48) & (b <= 57)
    at = np.arange(len(b))
    run = at - np.maximum.accumulate(np.where(digit, -1, at))  # digits so far in the run ending here
    if int(run.max(initial=0)) >= INT_DIGITS:
        return True
    e = np.flatnonzero((b[:-1] | 32) == ord("e"))  # an e or E after a digit
    e = e[(e > 0) & digit[np.maximum(e - 1, 0)]]
    sign = (b[np.minimum(e + 1, len(b) - 1)] == ord("+")) | (b[np.minimum(e + 1, len(b) - 1)] == ord("-"))
    end = np.minimum(e + sign + EXPONENT_DIGITS, len(b) - 1)
    return bool(np.any(run[end] >= EXPONENT_DIGITS))


def named_once(block: bytes, rows: list[Any]) -> bool:
    """Whether no row of the block names a key twice (JSON readers keep the last silently): the
    block is its rows written again without their defaults (which name every field a row holds
    once), or holds as many quote marks (:mod:`.keys`). A key that is null (the project writes
    none) or no field of the row type, or text escaped otherwise, is a doubt: ``False`` (the
    keys are read again, :func:`_twice`). One comparison for a file written as the project writes rows, else
    one count of one byte over each text: a quarter of the decoding's time, where counting every
    key apart took twice the decoding's (the predictions of ``benchmarks/bench_score.py --sessions 2000``)."""
    again = _ENCODE_LINES(rows)
    return again == block or quotes(block) == quotes(again)


_ENCODE_LINES = msgspec.json.Encoder().encode_lines
