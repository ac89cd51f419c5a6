"""A key named twice in one object of a JSON line, which the compiled readers read silently (they
keep the last value), found without reading every line strictly.

A line whose bytes are its record's fingerprint line (:func:`~interleave_bench.compiled.canonical_line`)
names each key once: the decoder refuses unknown fields and the encoder writes each field once.
Any other line is decoded again by a reader that refuses unknown fields and leaves a field the
line does not name unset (``presence``), and written back: that names exactly the keys the line
names, each once. A quote mark escaped as ``\\u0022`` aside, the line then holds as many quote
marks as the text written back when it names no key twice, and more when it does (every key
written adds two); a line holding that escape is read strictly
(:func:`~interleave_bench.strictjson.parse_strict`). Reading every line strictly instead cost
30% of the data pass of ``benchmarks/bench_score.py --sessions 2000``.
"""

from __future__ import annotations

from typing import Any, Sequence

import msgspec
import numpy as np

from ..errors import InputError
from ..strictjson import parse_strict

_ENCODE_LINES = msgspec.json.Encoder().encode_lines
_QUOTE = ord('"')
#: the one way to write a quote mark in JSON text without a quote byte
QUOTE_ESCAPE = b"\\u0022"


def quotes(text: bytes) -> int:
    """The quote marks in ``text``, counted by numpy (``bytes.count`` of one byte goes a byte at a
    time: 0.2 ms a megabyte against 0.9 ms on the files of ``benchmarks/bench_score.py``)."""
    return int(np.count_nonzero(np.frombuffer(text, dtype=np.uint8) == _QUOTE))


def named_twice(texts: Sequence[bytes], canonical: Sequence[bytes], presence: Any) -> list[int]:
    """The positions of the lines of ``texts`` (each a JSON object the compiled reader took) that
    name a key twice in one object; ``canonical`` holds each one's fingerprint line, ``presence``
    is the decoder described above. Every such line is listed, and no other but a line holding
    ``\\u0022`` that the strict reading refuses for another reason."""
    differ = [k for k, (text, line) in enumerate(zip(texts, canonical)) if text != line]
    if not differ:
        return []
    escaped = [k for k in differ if QUOTE_ESCAPE in texts[k]]
    plain = [k for k in differ if QUOTE_ESCAPE not in texts[k]] if escaped else differ
    out = [k for k in escaped if _strictly_twice(texts[k])]
    if plain:
        joined = b"\n".join([texts[k] for k in plain])
        try:
            again = _ENCODE_LINES(presence.decode_lines(joined))
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):  # (it reads what the compiled reader reads)
            return sorted(out + [k for k in plain if _strictly_twice(texts[k])])
        if quotes(joined) != quotes(again):  # some line names a key twice: which
            out += [k for k, line in zip(plain, again.split(b"\n")) if texts[k].count(b'"') != line.count(b'"')]
    return sorted(out)


def _strictly_twice(text: bytes) -> bool:
    try:
        parse_strict("", None, text.decode("utf-8"))
    except InputError:
        return True
    return False
