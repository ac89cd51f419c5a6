"""Which kind of file a JSON Lines input is, told from its first record, so that a file of
another kind given in the place of sessions or predictions is refused in one line (what it is and
where it goes) rather than with an error for every field of every line.

Every reader of sessions (:func:`interleave_bench.io.iter_sessions`, and through it every command)
and the scorer's reader of predictions use :func:`other_kind`. This is the schema layer: it
imports only ``errors``.
"""

from __future__ import annotations

import json
import os
from typing import Optional

from .errors import InputError

#: the fields that tell the two kinds of line apart: a line holding all of one kind's and not all
#: of the other's is that kind's
KIND_FIELDS = {"sessions": ("session_id", "turns", "threads"), "predictions": ("session_id", "i", "pred")}
#: what a file of the other kind is told, by where it stood: what it is, then what goes there (a
#: command that takes it elsewhere, or takes predictions after the data, says so: ``data_goes``)
_WRONG_PLACE = {"sessions": ("a predictions file (rows with session_id, i and pred), given as the data",
                             "the data is a sessions file (lines with turns and threads) or its folder"),
                "predictions": ("a sessions file (lines with turns and threads), given as predictions",
                                "it goes first, as the data, then the predictions")}
#: where the data goes for a command taking the data and then predictions (``score``, ``compare``)
DATA_FIRST = "the sessions file (or its folder) goes first, then the predictions"


#: fields only a record of the kind has (its fields the other kind lacks): a first line holding none
#: of them is another kind's (mid-reply or facts results, say), not a defective record of this kind
_OTHER = {"sessions": "predictions", "predictions": "sessions"}
_OWN_FIELDS = {kind: tuple(f for f in fields if f not in KIND_FIELDS[_OTHER[kind]]) for kind, fields in KIND_FIELDS.items()}


def other_kind(path: str | os.PathLike, what: str, data_goes: Optional[str] = None) -> None:
    """Raise :class:`InputError` (one line) when the JSONL file ``path``, given as ``what``
    (``sessions`` or ``predictions``), is plainly another kind of file, whose every line would
    otherwise be an error of its own: its first line a record of the other kind (the two files
    given the other way round) or a record with none of this kind's own fields (results of another
    command), or the file a JSON document written over several lines (a score file, a run record,
    a manifest: named by its ``format``). ``data_goes`` says what goes where the file stood instead
    of the default (:data:`DATA_FIRST` for a command taking predictions after the data)."""
    other = _OTHER[what]
    if not os.path.isfile(path):
        return  # (a FIFO is not opened: it would be waited on; the reader names what it is)
    if what == "sessions" and _is_parquet(path):
        raise InputError(str(path), None, None, "a Parquet file, given as sessions: sessions are JSON Lines, one "
                                                "record a line")
    if str(path).endswith(".parquet"):
        return  # predictions may be Parquet: its own reader checks it
    try:
        with open(path, encoding="utf-8") as fh:
            first = next((line for line in fh if line.strip()), "")
    except (OSError, UnicodeDecodeError):
        return  # the strict reader says what is wrong with it
    if first.strip() == "{":
        _document_given(path, what)
        return
    try:
        obj = json.loads(first)
    except (ValueError, RecursionError):
        return
    if not isinstance(obj, dict):
        return
    if all(f in obj for f in KIND_FIELDS[other]) and not all(f in obj for f in KIND_FIELDS[what]):
        given, goes = _WRONG_PLACE[what]
        raise InputError(str(path), None, None, f"{given}: {data_goes or goes}")
    if not any(f in obj for f in _OWN_FIELDS[what]):
        fields = " and ".join(_OWN_FIELDS[what])
        raise InputError(str(path), 1, None, f"not a {what} file: its first record has no {fields} "
                                             f"(another command's output?)")


#: how a Parquet file begins
PARQUET_MAGIC = b"PAR1"


def _is_parquet(path: str | os.PathLike) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC
    except OSError:
        return False  # the strict reader says what is wrong with it


#: the largest JSON document :func:`_document_given` reads whole to name its kind
_DOCUMENT_BYTES = 64 << 20


def _document_given(path: str | os.PathLike, what: str) -> None:
    """Raise the one line for a JSON document (not JSON Lines) given as ``what``; nothing when it is
    not one, or too large to read for its name (the strict reader then says what is wrong)."""
    try:
        if os.path.getsize(path) > _DOCUMENT_BYTES:
            return
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return
    if isinstance(doc, dict):
        kind = doc.get("format")
        named = f" ({kind})" if isinstance(kind, str) and len(kind) <= 60 else ""
        raise InputError(str(path), None, None, f"a JSON document{named}, given as {what}: {what} are JSON Lines, "
                                                "one record a line")
