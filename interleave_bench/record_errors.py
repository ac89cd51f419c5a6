"""Pydantic's errors as the project's one-line messages: the field as a dotted path, the problem
in a short sentence showing the offending value (what :class:`~interleave_bench.errors.InputError`
prints)."""

from __future__ import annotations

import re
import types
import typing
from typing import Any, Optional, Union

from pydantic import BaseModel, ValidationError

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


#: the wrong-type errors, each with what it says the field holds
_TYPE_WANTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "bool_type": "true or false",
    "float_type": "a number",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
}


def describe_error(err: dict[str, Any], model: Optional[type[BaseModel]] = None) -> str:
    """One short sentence for one pydantic error, showing the offending value. With the record
    type ``model`` the error came from, a value of the wrong type in a field whose declaration
    says what it holds (its ``description``) is told that instead of the type's name: ``expected
    a thread id, 'none' for a one-off or 'ambiguous', got null`` (:func:`field_holds`)."""
    kind = err.get("type", "")
    value = err.get("input")
    if kind == "missing":
        return "required field is missing"
    if kind == "string_pattern_mismatch" and err.get("ctx", {}).get("pattern") == ID_PATTERN:
        return f"{_short(value)} holds a control character (an id is printed on one line)"
    if kind == "literal_error":
        allowed = _QUOTED.findall(err.get("ctx", {}).get("expected", ""))
        return f"{_short(value)} is not one of {', '.join(allowed)}"
    if kind in _TYPE_WANTED:
        want = (field_holds(model, tuple(err.get("loc", ()))) if model is not None else None) or _TYPE_WANTED[kind]
        return f"expected {want}, got {_short(value)}"
    if kind in ("int_parsing", "int_from_float", "bool_parsing", "float_parsing"):
        return f"{err.get('msg', 'invalid value')}, got {_short(value)}"
    return f"{err.get('msg', 'invalid value')} (got {_short(value)})"


def _short(value: Any) -> str:
    """The offending value as a message shows it: an object or list by its type's name, any other
    value :func:`~interleave_bench.errors.shown` (redacted, then cut short)."""
    return type(value).__name__ if isinstance(value, (dict, list)) else shown(value)


def field_holds(model: type[BaseModel], loc: tuple[Union[int, str], ...]) -> Optional[str]:
    """What the field at ``loc`` of a ``model`` record holds, as its declaration says it (its
    ``description``), or None: a field without one, or a path that leaves the record types (an
    item of a list is its item type's, a field of an optional record the record's)."""
    kind: Any = model
    info = None
    for part in loc:
        if isinstance(part, int):
            kind, info = _item_type(kind), None
            continue
        record = _record_type(kind)
        info = record.model_fields.get(part) if record is not None else None
        if info is None:
            return None
        kind = info.annotation
    return info.description if info is not None else None


def _required(kind: Any) -> Any:
    """The type an optional type holds besides null; any other type itself."""
    if typing.get_origin(kind) in (Union, types.UnionType):
        options = [a for a in typing.get_args(kind) if a is not type(None)]
        return options[0] if len(options) == 1 else None
    return kind


def _record_type(kind: Any) -> Optional[type[BaseModel]]:
    """The record type ``kind`` is, or is the optional form of; None for any other type."""
    kind = _required(kind)
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def _item_type(kind: Any) -> Any:
    """The item type of a list type (or of an optional list); None for any other type."""
    kind = _required(kind)
    return typing.get_args(kind)[0] if typing.get_origin(kind) is list else None


def validation_problems(exc: ValidationError, model: Optional[type[BaseModel]] = None) -> list[tuple[str, str]]:
    """``(field, message)`` for every error pydantic found in one record (of the record type
    ``model``, when given: :func:`describe_error`)."""
    return [(loc_to_field(tuple(e["loc"])), describe_error(e, model)) for e in exc.errors()]
