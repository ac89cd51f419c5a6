"""A key named twice in one object of a JSON line, which the compiled readers read silently (they
keep the last value), found without reading every line strictly.

:func:`key_reader` derives from a record type a reader of its keys alone: every object the record
type reads (records, lists and maps of them) becomes a struct that refuses unknown fields and
leaves unset a field the line does not name, and every other value is kept as its raw JSON text
(``msgspec.Raw``, not parsed). Written back, a line read so names each key it names once, with
every value as it was written: the line holds as many quote marks as that text when it names no
key twice, and more when it does (a key written again adds two quote marks at least). Only a
key of a map escaping a quote mark as ``\\u0022`` (no quote byte, where the text written back
has one) could offset that: a line holding that escape is read strictly instead
(:func:`~interleave_bench.strictjson.parse_strict`).
:func:`names_twice` compares the two counts, once for a block of lines. A line that is its
record's fingerprint line names each key once (the decoder refuses unknown fields and the encoder
writes each field once), so a block of fingerprint lines is taken at one comparison.

Reading every line strictly instead cost 30% of the data pass of ``benchmarks/bench_score.py
--sessions 2000``; the record type's own reader with its fields left unset, 60% (it parses
every value); this reader, 35%.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any, Union

import msgspec
import numpy as np
from pydantic import BaseModel

from ..errors import InputError
from ..json_text import NEWLINE_BYTE, is_blank, split_lines
from ..strictjson import parse_strict

_ENCODE_LINES = msgspec.json.Encoder().encode_lines
_QUOTE = ord('"')
#: the one way to write a quote mark in JSON text without a quote byte
QUOTE_ESCAPE = b"\\u0022"


def quotes(text: bytes) -> int:
    """The quote marks in ``text``, counted by numpy (``bytes.count`` of one byte goes a byte at a
    time: 0.14 ms a megabyte against 0.55 ms on the files of ``benchmarks/bench_score.py``)."""
    return int(np.count_nonzero(np.frombuffer(text, dtype=np.uint8) == _QUOTE))


def _holds_record(tp: Any) -> bool:
    return (isinstance(tp, type) and issubclass(tp, BaseModel)) or any(map(_holds_record, typing.get_args(tp)))


def _shape(tp: Any) -> Any:
    """The keys-only type of an annotation: records within it kept as structs, the rest raw."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _keys_struct(tp)
    if not _holds_record(tp):
        return msgspec.Raw
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        (inner,) = [a for a in args if a is not type(None)]
        return typing.Optional[_shape(inner)]
    if origin is list:
        return list[_shape(args[0])]  # type: ignore[misc]
    if origin is dict:
        return dict[str, _shape(args[1])]  # type: ignore[misc]
    if origin is typing.Annotated:
        return _shape(args[0])
    raise TypeError(f"no keys-only reading of {tp!r}")


@functools.lru_cache(maxsize=None)
def _keys_struct(model: type[BaseModel]) -> type[msgspec.Struct]:
    fields = [(name, Union[_shape(info.annotation), msgspec.UnsetType], msgspec.UNSET)
              for name, info in model.model_fields.items()]
    return msgspec.defstruct(f"Keys{model.__name__}", fields, kw_only=True, forbid_unknown_fields=True, gc=False)


@functools.lru_cache(maxsize=None)
def key_reader(model: type[BaseModel]) -> msgspec.json.Decoder:
    """The keys-only reader of ``model`` described above (for a record type whose fields hold
    no record beside another type in one union)."""
    return msgspec.json.Decoder(_keys_struct(model))


def names_twice(block: bytes, canonical: bytes | None, model: type[BaseModel]) -> bool:
    """Whether a line of ``block`` (whole lines of ``model`` records, each taken by a compiled
    reader that refuses unknown fields) names a key twice in one object. ``canonical``, when
    given, holds the lines' fingerprint lines, each followed by ``\\n``."""
    if block == canonical:
        return False
    if QUOTE_ESCAPE in block:
        lines = split_lines(block)
        return (any(_strictly_twice(line) for line in lines if QUOTE_ESCAPE in line)
                or names_twice(NEWLINE_BYTE.join(line for line in lines if QUOTE_ESCAPE not in line), None, model))
    try:
        again = _ENCODE_LINES(key_reader(model).decode_lines(block))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return True  # (it takes what the compiled readers take): the record type decides
    return quotes(block) != quotes(again)


def names_twice_strictly(block: bytes, model: type[BaseModel]) -> bool:
    """:func:`names_twice` for lines no other reader has taken: a line the keys-only reader does
    not take (an unknown field, broken JSON) is read strictly, and counts only where the strict
    reading refuses it (so the strict reader, which reads so too, names a defect of the file)."""
    if not names_twice(block, None, model):
        return False
    return any(_strictly_twice(line) for line in split_lines(block) if not is_blank(line) and names_twice(line, None, model))


def _strictly_twice(line: bytes) -> bool:
    """Whether the strict reading refuses a line (a key named twice, here; or text that is no
    UTF-8, which the strict reader refuses too)."""
    try:
        parse_strict("", None, line.decode("utf-8"))
    except (InputError, UnicodeDecodeError):
        return True
    return False
