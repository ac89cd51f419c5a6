"""JSON read strictly: what Python's ``json`` accepts but no other reader agrees on is refused.

Python's ``json`` reads ``1e400`` as infinity, ``NaN`` and ``Infinity`` as numbers, an integer of
any length (then fails past 4,300 digits with a ``ValueError``), and a repeated key by keeping the
last; it fails with a ``RecursionError`` on deep nesting. A value read so is silently wrong, or an
internal error. :func:`parse_strict` refuses each with one :class:`~.errors.InputError` naming the
file, line and field (a JSON path such as ``tokens.answer``), and returns the same value as
``json.loads`` for everything else.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any, Optional

from .errors import InputError

#: the integer range every reader of these files agrees on: a signed 64-bit integer
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
#: digits of a number shown in an error: enough to recognise it, never thousands
SHOWN_DIGITS = 20


#: counts every refused value and repeated key a parse stands in for (and every parse, twice): a
#: parse that sees its two counts one apart made none, so there is nothing to look for. Counted by
#: ``next``, which no thread interrupts. Skipping the walk over every value made ``local`` route
#: ``benchmarks/bench_route.py``'s sessions about 5% faster per CPU second in both modes
_MADE = itertools.count()


class _Bad:
    """A value the parse stood in for what it refused; found with its path after the parse."""

    __slots__ = ("problem",)

    def __init__(self, problem: str):
        next(_MADE)
        self.problem = problem


class _Duplicate(dict):
    """An object with a repeated key (its repeated keys in ``repeated``, in order)."""

    __slots__ = ("repeated",)


def shown_digits(text: str) -> str:
    return text if len(text) <= SHOWN_DIGITS else f"{text[:SHOWN_DIGITS]}... ({len(text)} characters)"


def _int(text: str) -> Any:
    digits = text.lstrip("-")
    if len(digits) > len(str(INT_MAX)) or not INT_MIN <= int(text) <= INT_MAX:
        return _Bad(f"the integer {shown_digits(text)} is outside 64 bits")
    return int(text)


def _float(text: str) -> Any:
    value = float(text)
    if not math.isfinite(value):
        return _Bad(f"the number {shown_digits(text)} is outside the finite range of a float")
    return value


def _constant(text: str) -> Any:
    return _Bad(f"{text} is not a JSON number (NaN and Infinity are refused)")


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    next(_MADE)
    seen: set[str] = set()
    out = _Duplicate(obj)
    out.repeated = tuple(dict.fromkeys(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return out


def _path(parent: str, key: Any) -> str:
    return f"{parent}[{key}]" if isinstance(key, int) else (f"{parent}.{key}" if parent else str(key))


#: in a field of ``parse_strict(..., only=...)``, a part that stands for every key or position
ANY = "*"


def _fits(parts: tuple[Any, ...], pattern: tuple[Any, ...]) -> bool:
    return all(p == ANY or p == k for k, p in zip(parts, pattern))


def _first_bad(obj: Any, only: Optional[list[tuple[Any, ...]]] = None) -> Optional[tuple[str, str]]:
    """``(field, problem)`` of the first refused value in document order (within the fields of
    ``only``, when given), else ``None``. Iterative, so no depth ``json`` reads can exhaust the
    stack here."""

    def wanted(parts: tuple[Any, ...]) -> bool:
        # within a field of ``only``, or holding one (a key repeated there hides what it holds)
        return only is None or any(_fits(parts, f) for f in only)

    stack: list[tuple[str, tuple[Any, ...], Any]] = [("", (), obj)]
    while stack:
        where, parts, value = stack.pop()
        if not wanted(parts):
            continue
        if isinstance(value, _Bad):
            return where or "(value)", value.problem
        key = next((k for k in value.repeated if wanted((*parts, k))), None) if isinstance(value, _Duplicate) else None
        if key is not None:
            return _path(where, key), f"the key {key!r} appears twice in one object"
        if isinstance(value, dict):
            stack.extend((_path(where, k), (*parts, k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((_path(where, i), (*parts, i), v) for i, v in reversed(list(enumerate(value))))
    return None


def broken_json(path: str, line: Optional[int], exc: json.JSONDecodeError) -> InputError:
    """The one line for JSON text ``json`` cannot read: the line (``line``, one line of a JSON
    Lines file; else the document's line the fault is on) and the column on that line. Text that
    ends early is said to end there: a line cut short inside a string or before its value is
    complete, which ``json`` reports at the newline (as a control character), at the next line's
    column 1, or where the string starts; a whole document (``line`` None) cut so is said to be
    a file that ends there."""
    doc, pos, msg = exc.doc, exc.pos, exc.msg
    # a line ends at \n alone (json_text.NEWLINE), a \r just before it being a CRLF line's: another
    # \r inside a string is a control character in it, not the end of its line
    end = doc.find("\n", pos)
    end = len(doc) if end < 0 else end
    if end > pos and doc[end - 1] == "\r":
        end -= 1
    cut = msg.startswith("Unterminated string") or (msg.startswith("Invalid control character") and pos == end)
    if cut:  # the end of the line the string is on (where it was cut)
        pos = end
        # a document (no ``line``) cut there ends there; one whose string is cut at a line's end goes on
        ended = line is None and not doc[pos:].strip()
        problem = f"the {'file' if ended else 'line'} ends inside a string, unterminated"
    elif not doc[pos:].strip():  # nothing but white space (a newline) after the fault
        pos = len(doc.rstrip())
        problem = "the line ends before the JSON value does" if line is not None else "the file ends before the JSON value does"
    elif msg.startswith("Unexpected UTF-8 BOM"):  # (json's hint names a Python codec)
        problem = "the text starts with a byte-order mark (BOM): save it as UTF-8 without one"
    elif msg.startswith("Invalid control character"):
        problem = f"a control character (U+{ord(doc[pos]):04X}) inside a string, unescaped"
    else:
        problem = msg.removesuffix(" at")
    start = doc.rfind("\n", 0, pos) + 1
    where = line if line is not None else doc.count("\n", 0, pos) + 1
    return InputError(path, where, None, f"invalid JSON: {problem} (column {pos - start + 1})")


def parse_strict(path: str, line: Optional[int], text: str, only: Optional[list[tuple[Any, ...]]] = None) -> Any:
    """``json.loads(text)``, refusing with :class:`InputError` (``path``, ``line`` or the document's
    line, the field): broken JSON, nesting too deep to read, integers outside 64 bits, numbers
    outside the finite range of a float (``1e400``), ``NaN`` and ``Infinity``, and a key repeated
    in one object.

    ``only`` limits the value checks to the fields it lists, each a tuple of keys and positions
    (:data:`ANY` for every one): ``("samples", ANY, "store")`` is each sample's store and all it
    holds. It is for a document of which the caller reads those fields alone (another program's
    log, whose other fields may hold NaN by its own rules); a value refused elsewhere is left as
    no number, so nothing outside them is to be read from the result."""
    before = next(_MADE)
    try:
        obj = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant, object_pairs_hook=_pairs)
    except json.JSONDecodeError as exc:
        raise broken_json(path, line, exc) from None
    except RecursionError:
        raise InputError(path, line, None, "JSON nested too deeply to read") from None
    except ValueError as exc:  # a number ``int``/``float`` cannot take at all
        raise InputError(path, line, None, f"a number cannot be read: {str(exc)[:80]}") from None
    if next(_MADE) == before + 1:  # nothing refused, no key repeated
        return obj
    try:
        bad = _first_bad(obj, only)
    except RecursionError:  # pragma: no cover - the walk is iterative
        raise InputError(path, line, None, "JSON nested too deeply to read") from None
    if bad is not None:
        raise InputError(path, line, bad[0], bad[1])
    return obj
