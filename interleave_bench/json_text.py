"""The routing inputs' JSON text: :mod:`.strictjson`'s strict reading, and lone surrogates refused
(they are no Unicode text, and break every later step that writes the value); what the records'
readers (``interleave_bench.io``) parse every line with."""

from __future__ import annotations

import os
import re
from typing import IO, Any

from .errors import InputError
from .strictjson import INT_MAX, INT_MIN, parse_strict, shown_digits

#: the range of an integer in any file the project reads: 64 bits, signed (strictjson's)
INT64_MIN, INT64_MAX = INT_MIN, INT_MAX

#: a ``\\uD800``-``\\uDFFF`` escape: the only way a lone surrogate gets into parsed JSON text
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: the words Python's ``json`` reads as numbers though JSON has no such numbers
_NON_FINITE = ("NaN", "Infinity")


#: what ends a line of a JSON Lines file, and nothing else does. Python breaks text at more: a text
#: file at a lone ``\r`` too, ``str.splitlines`` at ``\x0b``, ``\x0c``, ``\x1c``-``\x1e``, ``\x85``,
#: ``\u2028`` and ``\u2029`` as well; a record's JSON text may hold ``\r`` as white space between
#: its tokens and ``\x85``, ``\u2028`` and ``\u2029`` unescaped in its strings, and a line broken
#: there would shift every later line's number. A ``\r\n`` line's ``\r`` is white space the parse
#: passes over. Every reader of these files breaks lines here: :func:`open_lines` for text,
#: :func:`split_lines` and :data:`NEWLINE_BYTE` for bytes.
NEWLINE = "\n"
NEWLINE_BYTE = b"\n"


def open_lines(path: str | os.PathLike) -> IO[str]:
    """A UTF-8 JSON Lines file opened for its lines: iterating it gives each line as written, with
    its :data:`NEWLINE` (Python's default breaks at a lone ``\\r`` too, made ``\\n``)."""
    return open(path, "r", encoding="utf-8", newline=NEWLINE)


def split_lines(block: bytes) -> list[bytes]:
    """The lines of a block of a JSON Lines file, without their :data:`NEWLINE_BYTE` (a block of
    whole lines gives an empty last part)."""
    return block.split(NEWLINE_BYTE)


def is_blank(line: str | bytes) -> bool:
    """Whether a line of a JSON Lines file holds no record: nothing but white space, as
    ``str.strip`` has it (a no-break space, ``\\x1e`` and the like too, not only JSON's blanks).
    Every reader of these files passes such a line over, and numbers the lines after it as lines."""
    return not (line.decode("utf-8", "replace") if isinstance(line, bytes) else line).strip()


def _json_path(parent: str, key: Any) -> str:
    return f"{parent}[{key}]" if isinstance(key, int) else (f"{parent}.{key}" if parent else str(key))


def find_bad_value(obj: Any) -> tuple[str, str] | None:
    """``(field, problem)`` for the first lone surrogate, NaN/Infinity or integer outside 64 bits
    of parsed JSON (or of Python data handed in as such: the evaluate modules' inputs, a router's
    decision), else ``None``: what no file the project reads can hold.

    Iterative, so a deep document cannot exhaust the stack here.
    """
    stack: list[tuple[str, Any]] = [("", obj)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return where or "(value)", "a lone surrogate (\\ud800-\\udfff) is not Unicode text"
        elif isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                return where or "(value)", f"{value!r} is not a JSON number (NaN and Infinity are refused)"
        elif isinstance(value, int) and not isinstance(value, bool):
            if not INT64_MIN <= value <= INT64_MAX:
                digits = shown_digits(str(value)) if value.bit_length() < 10_000 else f"of {value.bit_length():,} bits"
                return where or "(value)", f"the integer {digits} is outside 64 bits"
        elif isinstance(value, dict):
            for k, v in reversed(list(value.items())):
                if _SURROGATE.search(k):
                    return _json_path(where, k.encode("utf-8", "backslashreplace").decode()), "a lone surrogate in a key is not Unicode text"
                stack.append((_json_path(where, k), v))
        elif isinstance(value, list):
            stack.extend((_json_path(where, i), v) for i, v in reversed(list(enumerate(value))))
    return None


def needs_strict_parse(text: str) -> bool:
    """Whether JSON text may hold a lone surrogate or NaN/Infinity, which fast parsers (pydantic's)
    accept where :func:`parse_json` refuses them: such text must go through :func:`parse_json`."""
    return bool(_SURROGATE_ESCAPE.search(text)) or any(w in text for w in _NON_FINITE)


def parse_json(path: str, line: int | None, text: str) -> Any:
    """Parse JSON text strictly: :func:`~.strictjson.parse_strict` (broken JSON, nesting too deep,
    integers outside 64 bits, numbers beyond the finite range, NaN and Infinity, a key named twice
    in one object), and lone surrogates, which are no Unicode text; each an :class:`InputError`
    naming the file, line and field."""
    obj = parse_strict(path, line, text)
    if _SURROGATE_ESCAPE.search(text):
        bad = find_bad_value(obj)
        if bad is not None:
            raise InputError(path, line, bad[0], bad[1])
    return obj
