"""One value handed to an evaluate module, checked as the files' readers check it.

Text (an expected destination, a cluster label, a result row, a language...) and a number read as a
label's text: each a ``ValueError`` in one line naming the argument and its index when it is no
value a file could hold (NaN, an integer outside 64 bits, a list where text belongs). Inputs that
``datasets`` hands as a ``Column`` are made lists first (:func:`plain`).
"""

from __future__ import annotations

import functools
import numbers
from typing import Any, Iterable, Mapping, Optional

import numpy as np
from pydantic import TypeAdapter, ValidationError

from ..json_text import find_bad_value
from ..record_errors import describe_error
from ..schema import MidReplyExpect, PredictionRow


def plain(value: Any) -> Any:
    """A ``datasets`` ``Column`` (or any iterable but text and mappings) as a list, else ``value``."""
    if value is None or isinstance(value, (str, bytes, Mapping, list)):
        return value
    if isinstance(value, Iterable):
        return list(value)
    return value


def is_number(value: Any) -> bool:
    """Whether ``value`` is a number a label may be read from (numpy's too): not a bool."""
    return isinstance(value, (numbers.Integral, float)) and not isinstance(value, (bool, np.bool_))


def number_label(value: Any, where: str, what: str = "") -> str:
    """A number (numpy's too) as the label a prediction row reads it: its text, so ``1`` is ``"1"``,
    ``1.0`` is ``"1.0"`` and ``1.5`` is ``"1.5"``, as ``score`` reads ``"pred": 1.0`` in a file.
    ``ValueError`` in one line naming ``where`` for NaN, infinity or an integer outside 64 bits,
    which no file can hold."""
    value = int(value) if isinstance(value, numbers.Integral) else float(value)
    bad = find_bad_value(value)
    if bad is not None:
        raise ValueError(f"{where}: {what + ', ' if what else ''}{bad[1]}")
    return PredictionRow.model_validate({"session_id": "s", "i": 0, "pred": value}).pred


def listed(values: Any, name: str) -> Any:
    """``values``, an argument of one entry per case, message or session, as a list (a ``datasets``
    ``Column``, a tuple, any iterable but text and mappings made one: :func:`plain`), or None; else
    ``ValueError`` in one line naming the argument. The one check of every list argument: a text is
    never read letter by letter (``running="q3"`` as two running topics), nor a mapping key by key."""
    values = plain(values)
    if values is None or isinstance(values, list):
        return values
    raise ValueError(f"{name}: expected a list, {got(values)}")


def texts(values: Any, name: str, what: str, *, nulls: bool = False) -> Any:
    """``values`` (one per case or message, a list: :func:`listed`) when each is text (or None, with
    ``nulls``): raises :func:`text`'s error for one that is not."""
    values = listed(values, name)
    if isinstance(values, list):
        for i, v in enumerate(values):
            text(v, f"{name}[{i}]", what, nulls=nulls)
    return values


def text(value: Any, where: str, what: str, *, nulls: bool = False) -> Any:
    """``value`` when it is text (or None, with ``nulls``); else ``ValueError`` in one line naming
    ``where`` (``predictions[3]``) and what it got (NaN and a lone surrogate included)."""
    if isinstance(value, str):
        return unicode_text(value, where)
    if nulls and value is None:
        return value
    raise ValueError(f"{where}: {what} is text{' or None' if nulls else ''}, {got(value)}")


def expected_destinations(values: Any, name: str, what: str) -> Any:
    """``values`` (one per case) when each is an expected destination a case file could state
    (:func:`expected_destination`)."""
    values = texts(values, name, what)
    if isinstance(values, list):
        for i, v in enumerate(values):
            expected_destination(v, f"{name}[{i}]", what)
    return values


def expected_destination(value: Any, where: str, what: str) -> str:
    """``value`` when it is an expected destination as a case file's ``expect`` must be
    (:data:`~interleave_bench.schema.MidReplyExpect`: text, not empty); else ``ValueError`` in one
    line naming ``where`` (``references[0]``) with the words the case file's check gives."""
    text(value, where, what)
    try:
        return _EXPECT.validate_python(value)
    except ValidationError as exc:
        raise ValueError(f"{where}: {describe_error(exc.errors()[0])}") from None


#: the check of one expected destination
_EXPECT = TypeAdapter(MidReplyExpect)


def cluster_labels(values: Any, name: str, what: str = "a cluster label") -> Any:
    """``values`` (one per item, a list: :func:`listed`) as text labels when each is a cluster label
    (:func:`cluster_label`)."""
    values = listed(values, name)
    if isinstance(values, list):
        return [cluster_label(v, f"{name}[{i}]", what) for i, v in enumerate(values)]
    return values


def cluster_label(value: Any, where: str, what: str = "a cluster label") -> str:
    """``value`` as a text label when it is a cluster label: text, or an integer read as its text
    as a routing label is (:func:`number_label`), so ``1`` and ``"1"`` are one cluster and integer
    predictions go with text references. Else ``ValueError`` in one line naming ``where``: a float
    (``1.0`` would be read as ``"1.0"``, another cluster than ``1``, though ``1.0 == 1``; NaN),
    ``True``, a list, an integer outside 64 bits, empty text or text with a control character is
    no cluster label (text is checked as a prediction row's ``pred`` is)."""
    if isinstance(value, str):
        problem = _text_label_problem(unicode_text(value, where))
        if problem is not None:
            raise ValueError(f"{where}: {problem}")
        return value
    if is_number(value) and isinstance(value, numbers.Integral):
        return number_label(value, where, f"{what} is text or an integer")
    raise ValueError(f"{where}: {what} is text or an integer, {got(value)}")


@functools.lru_cache(maxsize=4096)
def _text_label_problem(value: str) -> Optional[str]:
    """What :class:`~interleave_bench.schema.PredictionRow` says of ``value`` as its ``pred``, or None."""
    try:
        PredictionRow.model_validate({"session_id": "s", "i": 0, "pred": value})
    except ValidationError as exc:
        return describe_error(exc.errors()[0])
    return None


def unicode_text(value: str, where: str) -> str:
    """``value`` when it is Unicode text; else ``ValueError`` in one line naming ``where`` with what
    the data's check (:func:`~interleave_bench.json_text.find_bad_value`) says of a lone surrogate,
    which no file holds and ``evaluate`` could not encode (a ``UnicodeEncodeError`` naming nothing)."""
    bad = find_bad_value(value)
    if bad is not None:
        raise ValueError(f"{where}: {bad[1]}")
    return value


def got(value: Any) -> str:
    """What an input held, for an error: NaN and infinity as the data's check says them."""
    bad = find_bad_value(value) if isinstance(value, float) else None
    return bad[1] if bad is not None else f"got {type(value).__name__} {value!r}"
