"""Pydantic's errors as the project's one-line messages: the field as a dotted path, the problem
in a short sentence showing the offending value (what :class:`~interleave_bench.errors.InputError`
prints)."""

from __future__ import annotations

import re
from typing import Any, Union

from pydantic import ValidationError

from .errors import shown

#: what no id may hold: control characters
ID_REFUSES = r"\x00-\x1f\x7f"
#: the text of an id (``^...$`` is the whole text for the record types' regex engine; the
#: compiled readers read it so too)
ID_PATTERN = rf"^[^{ID_REFUSES}]*$"
#: finds what :data:`ID_PATTERN` refuses, for readers that check many ids at once
CONTROL = re.compile(f"[{ID_REFUSES}]")

_QUOTED = re.compile(r"'([^']*)'")


def loc_to_field(loc: tuple[Union[int, str], ...]) -> str:
    """``('turns', 3, 'gold', 'action')`` -> ``turns[3].gold.action``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(record)"


def describe_error(err: dict[str, Any]) -> str:
    """One short sentence for one pydantic error, showing the offending value."""
    kind = err.get("type", "")
    value = err.get("input")
    if kind == "missing":
        return "required field is missing"
    if kind == "string_pattern_mismatch" and err.get("ctx", {}).get("pattern") == ID_PATTERN:
        return f"{_short(value)} holds a control character (an id is printed on one line)"
    if kind == "literal_error":
        allowed = _QUOTED.findall(err.get("ctx", {}).get("expected", ""))
        return f"{_short(value)} is not one of {', '.join(allowed)}"
    if kind in ("string_type", "int_type", "bool_type", "float_type", "list_type", "dict_type", "model_type"):
        want = {
            "string_type": "a string",
            "int_type": "an integer",
            "bool_type": "true or false",
            "float_type": "a number",
            "list_type": "a list",
            "dict_type": "an object",
            "model_type": "an object",
        }[kind]
        return f"expected {want}, got {_short(value)}"
    if kind in ("int_parsing", "int_from_float", "bool_parsing", "float_parsing"):
        return f"{err.get('msg', 'invalid value')}, got {_short(value)}"
    return f"{err.get('msg', 'invalid value')} (got {_short(value)})"


def _short(value: Any) -> str:
    """The offending value as a message shows it: an object or list by its type's name, any other
    value :func:`~interleave_bench.errors.shown` (redacted, then cut short)."""
    return type(value).__name__ if isinstance(value, (dict, list)) else shown(value)


def validation_problems(exc: ValidationError) -> list[tuple[str, str]]:
    """``(field, message)`` for every error pydantic found in one record."""
    return [(loc_to_field(tuple(e["loc"])), describe_error(e)) for e in exc.errors()]
