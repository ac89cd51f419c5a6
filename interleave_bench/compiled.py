"""Compiled readers of the record types: the same fields, types and bounds, checked in C.

:func:`compiled` derives, from a record type of :mod:`.schema` (a pydantic model), a
``msgspec`` struct type with the same fields in the same order, the same defaults, and the same
constraints (types taken strictly as JSON writes them, ``Literal`` choices, ``min_length``,
``ge``, ``le``, ``pattern``). It refuses unknown fields (``keep_unknown=False``) or passes over them. Nothing is
declared twice: the record types stay the one definition, and a test holds the two readings to
each other on random and malformed records.

:func:`canonical_line` is a record's line for the data fingerprint
(:func:`~interleave_bench.fingerprints.records_fingerprint`): what ``model_dump_json`` writes for the
record, written here by msgspec for a record without unknown fields (the same bytes: every field,
defaults included, in the schema's order, compact, UTF-8 characters kept).

A decoder may refuse what the record type accepts (an unknown field, an integer beyond 64 bits,
a number the record type coerces to text): the caller then asks the record type. It never accepts
what the record type refuses (the test says so).
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any, Literal, Union

import annotated_types
import msgspec
from pydantic import BaseModel, Strict
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

#: the errors a compiled decoder raises for a line it does not take
DecodeErrors = (msgspec.DecodeError, msgspec.ValidationError)


class Unsupported(TypeError):
    """A field whose type or constraint this module cannot compile exactly."""


#: the options of pydantic's general field metadata compiled here: numbers taken as text (text only
#: here), and a pattern
_GENERAL = {"coerce_numbers_to_str", "pattern"}


def _general(m: Any) -> dict[str, Any] | None:
    """The options of a pydantic general metadata entry, ``None`` for another kind of entry."""
    options = getattr(m, "__dict__", None)
    if options is None or type(m).__name__ != "_PydanticGeneralMetadata":
        return None
    return dict(options)


def _pattern(pattern: str) -> str:
    """A record type's pattern as Python's ``re`` reads it: its ``$`` is the end of the text (it
    is for the record types' regex engine), where Python's also matches before a last line break."""
    return pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith(r"\$") else pattern


def _text_only(info: FieldInfo) -> bool:
    """Whether a field's metadata only coerces numbers to text (taken as text only here)."""
    return all(getattr(m, "coerce_numbers_to_str", None) is True and set(vars(m)) == {"coerce_numbers_to_str"}
               for m in info.metadata) and bool(info.metadata)


def _meta(info: FieldInfo, patterns: bool = True) -> dict[str, Any]:
    """The msgspec constraints of a field's pydantic metadata (``patterns``: its pattern too)."""
    out: dict[str, Any] = {}
    for m in info.metadata:
        general = _general(m)
        if general is not None:
            if not set(general) <= _GENERAL or general.get("coerce_numbers_to_str", True) is not True:
                raise Unsupported(f"constraint {m!r}")
            if "pattern" in general and patterns:
                out["pattern"] = _pattern(general["pattern"])
            continue  # numbers are refused here: text only
        if isinstance(m, annotated_types.MinLen):
            out["min_length"] = m.min_length
        elif isinstance(m, annotated_types.Ge):
            out["ge"] = m.ge
        elif isinstance(m, annotated_types.Le):
            out["le"] = m.le
        elif isinstance(m, Strict):
            continue  # msgspec takes every JSON type strictly
        else:
            raise Unsupported(f"constraint {m!r}")
    return out


def _type(tp: Any, keep_unknown: bool, presence: tuple[type[BaseModel], ...] = (), meta: Any = None,
          patterns: bool = True) -> Any:
    """The msgspec type of a pydantic annotation; ``meta`` (constraints) applies to the value
    itself, inside an ``Optional``."""
    origin = typing.get_origin(tp)
    if meta is not None:
        if origin in (Union, types.UnionType):
            return Union[tuple(_type(a, keep_unknown, presence, None if a is type(None) else meta, patterns)
                               for a in typing.get_args(tp))]  # type: ignore[return-value]
        return typing.Annotated[_type(tp, keep_unknown, presence, patterns=patterns), meta]
    if tp in (str, bool, int, float, type(None)):
        return tp
    if tp is Any:
        return Any
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return compiled(tp, keep_unknown, presence, patterns=patterns)
    if origin is Literal:
        return tp
    if origin in (Union, types.UnionType):
        return Union[tuple(_type(a, keep_unknown, presence, patterns=patterns) for a in typing.get_args(tp))]  # type: ignore[return-value]
    if origin is list:
        (item,) = typing.get_args(tp)
        return list[_type(item, keep_unknown, presence, patterns=patterns)]  # type: ignore[misc]
    if origin is dict:
        key, value = typing.get_args(tp)
        return dict[_type(key, keep_unknown, presence, patterns=patterns), _type(value, keep_unknown, presence, patterns=patterns)]  # type: ignore[misc]
    if origin is typing.Annotated:
        base, *marks = typing.get_args(tp)
        if all(isinstance(m, FieldInfo) and _text_only(m) for m in marks):
            return _type(base, keep_unknown, presence, patterns=patterns)
        raise Unsupported(f"annotated type {tp!r}")
    raise Unsupported(f"type {tp!r}")


@functools.lru_cache(maxsize=None)
def compiled(model: type[BaseModel], keep_unknown: bool = False, presence: tuple[type[BaseModel], ...] = (),
             extra: tuple[tuple[str, Any], ...] = (), leave_out: tuple[str, ...] = (),
             omit_defaults: bool = False, patterns: bool = True) -> type[msgspec.Struct]:
    """The msgspec struct type that reads what ``model`` reads (see the module's text).

    Unknown fields are refused unless ``keep_unknown`` (then passed over: the struct does not hold
    them). A field the record type coerces from a number to text takes text only (a number is for
    the record type to read). In the records of a type in ``presence``, a field left out holds
    ``msgspec.UNSET`` rather than its default, and unknown fields are refused, so a reader can tell
    ``{}`` from ``{"input": 0}`` or ``{"other": 1}``;
    ``extra`` adds ``(name, type)`` fields the record type keeps as unknown ones (default ``None``).
    ``leave_out`` names fields of ``model`` (which must have defaults) the struct does not hold:
    its unknown fields are then refused, so a record it reads names none of them (each holds its
    default), and a record that names one is for another reader.
    """
    fields: list[tuple[Any, ...]] = []
    unset = model in presence
    keep_unknown = keep_unknown and not unset
    if leave_out:
        keep_unknown = False
    for name, info in model.model_fields.items():
        if name in leave_out:
            if info.is_required():
                raise Unsupported(f"{model.__name__}.{name}: a required field left out")
            continue
        if info.alias not in (None, name) or info.validation_alias is not None:
            raise Unsupported(f"{model.__name__}.{name}: an alias")
        meta = _meta(info, patterns)
        tp = _type(info.annotation, keep_unknown, presence, msgspec.Meta(**meta) if meta else None, patterns)
        if unset and (info.default_factory is not None or info.default is not PydanticUndefined):
            fields.append((name, Union[tp, msgspec.UnsetType], msgspec.UNSET))
        elif info.default_factory is not None:
            fields.append((name, tp, msgspec.field(default_factory=info.default_factory)))
        elif info.default is not PydanticUndefined:
            fields.append((name, tp, info.default))
        else:
            fields.append((name, tp))
    for name, tp in extra:
        fields.append((name, tp, None))
    # gc=False: a decoded record holds text, numbers, lists and other records, never itself, so
    # the collector need not track the millions a large file decodes to
    return msgspec.defstruct(
        f"Compiled{model.__name__}{'Lean' if leave_out else ''}", fields, kw_only=True, forbid_unknown_fields=not keep_unknown,
        module=__name__, gc=False, omit_defaults=omit_defaults,
    )


@functools.lru_cache(maxsize=None)
def decoder(model: type[BaseModel], keep_unknown: bool = False, presence: tuple[type[BaseModel], ...] = (),
            extra: tuple[tuple[str, Any], ...] = (), leave_out: tuple[str, ...] = (),
            omit_defaults: bool = False, patterns: bool = True) -> msgspec.json.Decoder:
    """A JSON decoder of one ``model`` record a call (bytes or str in, struct out); the options
    are :func:`compiled`'s."""
    return msgspec.json.Decoder(compiled(model, keep_unknown, presence, extra, leave_out, omit_defaults, patterns))


_ENCODER = msgspec.json.Encoder()
#: JSON text of a value as the fingerprint lines write it (compact, UTF-8 characters kept)
encode = _ENCODER.encode


def canonical_line(record: msgspec.Struct) -> bytes:
    """The fingerprint line of a record read by a decoder that refuses unknown fields: the bytes
    ``model_dump_json`` writes for it, UTF-8."""
    return _ENCODER.encode(record)


def canonical_lines(records: list[msgspec.Struct]) -> bytes:
    """:func:`canonical_line` of each record, each followed by ``\\n``, in one piece."""
    return _ENCODER.encode_lines(records)
