"""Strict JSON text: what every reader of the project takes as JSON, and what it refuses.

Python's ``json`` reads more than JSON means: ``NaN`` and ``Infinity``, lone surrogates, numbers
of any size (``1e400`` becomes infinity, a 5,000-digit integer fails deep in the interpreter) and
objects naming a key twice (the last wins). :func:`parse_json` reads a text and refuses each of
these as one :class:`~interleave_bench.errors.InputError` naming the field, so a value no later
step can hold never gets past a reader. Integers are held to 64 bits (what every file the project
writes uses, and what the compiled readers hold); nesting too deep for Python is refused too.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from .errors import InputError

#: the range of an integer in any file the project reads: 64 bits, signed
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
#: digits of the longest integer in that range
INT64_DIGITS = len(str(INT64_MAX))

#: a ``\\uD800``-``\\uDFFF`` escape: the only way a lone surrogate gets into parsed JSON text
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: the words Python's ``json`` reads as numbers though JSON has no such numbers
_NON_FINITE = ("NaN", "Infinity")


class _Refused:
    """A number the text holds that no reader takes, and why (found with its field after parsing)."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


class _Twice(dict):
    """An object that named a key twice (the key is :attr:`key`)."""

    __slots__ = ("key",)


def _hooks(found: list[bool]) -> dict[str, Callable[[Any], Any]]:
    """``json.loads`` hooks that mark what :func:`parse_json` refuses (and note in ``found`` that
    something was marked)."""

    def integer(text: str) -> Any:
        digits = len(text) - text.startswith("-")
        if digits > INT64_DIGITS or not INT64_MIN <= int(text) <= INT64_MAX:
            found.append(True)
            shown = text if digits <= 30 else f"an integer of {digits:,} digits"
            return _Refused(f"{shown} is outside the 64-bit integers")
        return int(text)

    def number(text: str) -> Any:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            found.append(True)
            return _Refused(f"{text if len(text) <= 30 else text[:27] + '...'} is beyond the finite numbers")
        return value

    def pairs(items: list[tuple[str, Any]]) -> Any:
        out = dict(items)
        if len(out) == len(items):
            return out
        found.append(True)
        seen: set[str] = set()
        twice = _Twice(out)
        twice.key = next(k for k, _ in items if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        return twice

    return {"parse_int": integer, "parse_float": number, "object_pairs_hook": pairs}


def _json_path(parent: str, key: Any) -> str:
    return f"{parent}[{key}]" if isinstance(key, int) else (f"{parent}.{key}" if parent else str(key))


def find_bad_value(obj: Any) -> tuple[str, str] | None:
    """``(field, problem)`` for the first value of parsed JSON no reader takes (a lone surrogate,
    NaN or Infinity, a number :func:`parse_json` marked, a key named twice), else ``None``.

    Iterative, so a deep document cannot exhaust the stack here.
    """
    stack: list[tuple[str, Any]] = [("", obj)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return where or "(value)", "a lone surrogate (\\ud800-\\udfff) is not Unicode text"
        elif isinstance(value, _Refused):
            return where or "(value)", value.problem
        elif isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                return where or "(value)", f"{value!r} is not a JSON number (NaN and Infinity are refused)"
        elif isinstance(value, dict):
            if isinstance(value, _Twice):
                return _json_path(where, value.key), "this key is named twice in one object (which one counts?)"
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


def json_error(path: str, line: int | None, exc: json.JSONDecodeError) -> InputError:
    """The one-line error of text ``json`` cannot read."""
    return InputError(path, line, None, f"invalid JSON: {exc.msg} (column {exc.colno})")


def parse_json(path: str, line: int | None, text: str) -> Any:
    """Parse JSON text strictly; raises :class:`InputError` (file, line, field) for broken JSON,
    nesting too deep for Python, ``NaN``/``Infinity``, lone surrogates, integers outside 64 bits,
    numbers beyond the finite range and keys named twice in one object, which Python's ``json``
    accepts but which are not values any later step can hold (or, for a repeated key, say which
    value is meant)."""
    found: list[bool] = []
    try:
        obj = json.loads(text, **_hooks(found))
    except json.JSONDecodeError as exc:  # a whole document's error names the line in it
        raise json_error(path, exc.lineno if line is None else line, exc) from None
    except RecursionError:
        raise InputError(path, line, None, "JSON nested too deeply to read") from None
    if found or needs_strict_parse(text):
        bad = find_bad_value(obj)
        if bad is not None:
            raise InputError(path, line, bad[0], bad[1])
    return obj
