"""Which kind of file a JSON Lines input is, told from its first record, so that a file of
another kind given in the place of sessions or predictions is refused in one line (what it is and
where it goes) rather than with an error for every field of every line.

Every reader of sessions (:func:`interleave_bench.io.iter_sessions`, and through it every command)
and the scorer's reader of predictions use :func:`other_kind`; ``validate`` tells a file's kind by
the same rule (:func:`record_kind`) and names a JSON document it does not check as they do
(:func:`document_words`), as ``vet`` names one in a ``.jsonl`` file (:func:`document_in`) and the
reader of facts results refuses one (:func:`refuse_document`, as :func:`other_kind` does). This is
the schema layer: it imports ``errors``, ``documents`` and ``json_text`` (where a line ends).
"""

from __future__ import annotations

import json
import os
from typing import Optional

from .documents import BOARD_ROW_FORMAT, FACTS_SUMMARY_KIND, MID_REPLY_FORMAT, RUN_FORMAT, SCORE_FORMAT
from .errors import InputError
from .json_text import open_lines

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
#: :func:`record_kind` of a record holding all of both kinds' fields
AMBIGUOUS = "ambiguous"


def record_kind(obj: object) -> Optional[str]:
    """Which kind of line ``obj`` (a file's first record) is: ``sessions`` or ``predictions`` when
    it holds all of that kind's :data:`KIND_FIELDS` and not all of the other's, else the kind of
    the only kind's own fields it holds (a defective record of that kind); :data:`AMBIGUOUS` when
    it holds all of both kinds' fields (no reader may guess); ``None`` for anything else (another
    command's results, a record holding some own fields of each). The one rule ``validate`` and
    every reader of sessions and predictions go by."""
    if not isinstance(obj, dict):
        return None
    full = [kind for kind, fields in KIND_FIELDS.items() if all(f in obj for f in fields)]
    if len(full) > 1:
        return AMBIGUOUS
    if full:
        return full[0]
    some = [kind for kind in KIND_FIELDS if any(f in obj for f in _OWN_FIELDS[kind])]
    return some[0] if len(some) == 1 else None


def ambiguous(path: str | os.PathLike, line: Optional[int]) -> InputError:
    """The one line for a first record of :data:`AMBIGUOUS` kind, at ``line``."""
    fields = {kind: ", ".join(fields) for kind, fields in KIND_FIELDS.items()}
    return InputError(str(path), line, None, f"ambiguous: its first record holds both a session's fields "
                                             f"({fields['sessions']}) and a prediction row's ({fields['predictions']}), "
                                             "so it is neither a sessions file nor a predictions file: a record is "
                                             "one or the other")


def other_kind(path: str | os.PathLike, what: str, data_goes: Optional[str] = None) -> None:
    """Raise :class:`InputError` (one line) when the JSONL file ``path``, given as ``what``
    (``sessions`` or ``predictions``), is plainly another kind of file, whose every line would
    otherwise be an error of its own: its first line a record of the other kind (the two files
    given the other way round), a record of both (:data:`AMBIGUOUS`, :func:`record_kind`) or a
    record with none of this kind's own fields (results of another command), or the file a JSON document written over several lines (a score file, a run record,
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
        with open_lines(path) as fh:
            number, first = next(((n, line) for n, line in enumerate(fh, start=1) if line.strip()), (0, ""))
    except (OSError, UnicodeDecodeError):
        return  # the strict reader says what is wrong with it
    if first.strip() == "{":
        refuse_document(path, what)
        return
    try:
        obj = json.loads(first)
    except (ValueError, RecursionError):
        return
    if not isinstance(obj, dict):
        return
    kind = record_kind(obj)
    if kind == AMBIGUOUS:
        raise ambiguous(path, number)
    if kind == other and all(f in obj for f in KIND_FIELDS[other]):
        given, goes = _WRONG_PLACE[what]
        raise InputError(str(path), None, None, f"{given}: {data_goes or goes}")
    if not any(f in obj for f in _OWN_FIELDS[what]):
        fields = " and ".join(_OWN_FIELDS[what])
        raise InputError(str(path), number, None, f"not a {what} file: its first record has no {fields} "
                                             f"(another command's output?)")


#: how a Parquet file begins
PARQUET_MAGIC = b"PAR1"


def _is_parquet(path: str | os.PathLike) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC
    except OSError:
        return False  # the strict reader says what is wrong with it


#: the largest JSON document :func:`document_in` reads whole to name its kind
_DOCUMENT_BYTES = 64 << 20


#: what a JSON document is, by its ``format``
_FORMAT_WORDS = {SCORE_FORMAT: "a score document", RUN_FORMAT: "a run record", BOARD_ROW_FORMAT: "a board row",
                 MID_REPLY_FORMAT: "a mid-reply summary"}
#: what a JSON document without a ``format`` is, by the field that names its kind (``validate``'s rule)
DOCUMENT_KEYS = {"cases": "a mid-reply case file", "writer": "a manifest"}
#: what a JSON document whose ``format`` is no string is, by its ``kind``
_KIND_WORDS = {FACTS_SUMMARY_KIND: "a facts summary"}


def document_words(doc: object) -> str:
    """What the JSON document ``doc`` is, for a message: a mid-reply case file or a manifest (by
    :data:`DOCUMENT_KEYS`), a score document, a run record... (by its ``format``, given after it:
    ``a score document (interleave-score-v1)``), a facts summary (by its ``kind``), else ``a JSON
    document`` (with its ``format`` when it states a short one)."""
    if not isinstance(doc, dict):
        return "a JSON document"
    for key, words in DOCUMENT_KEYS.items():
        if key in doc:
            return words
    kind = doc.get("format")
    if isinstance(kind, str) and len(kind) <= 60:
        return f"{_FORMAT_WORDS.get(kind, 'a JSON document')} ({kind})"
    words = _KIND_WORDS.get(doc.get("kind")) if isinstance(doc.get("kind"), str) else None
    return words or "a JSON document"



def refuse_document(path: str | os.PathLike, what: str) -> None:
    """Raise :class:`InputError` (one line, naming what it is: :func:`document_in`) when the file
    ``path``, given as ``what`` (a kind of JSON Lines file, in the plural: ``predictions``, ``facts
    results``), is a JSON document written over several lines, whose first line would otherwise be
    refused as broken JSON. The one check :func:`other_kind` and the facts results reader make."""
    if not os.path.isfile(path):
        return  # (a FIFO is not opened: it would be waited on; the reader names what it is)
    words = document_in(path)
    if words is not None:
        raise InputError(str(path), None, None, f"{words}, given as {what}: {what} are JSON Lines, one record a line")


def document_in(path: str | os.PathLike) -> Optional[str]:
    """:func:`document_words` of the file ``path`` when it is a JSON document written over several
    lines (its first non-blank line a lone ``{``: no JSON Lines record), else ``None`` (also when
    it is too large to read for its name, or cannot be read: the reader then says what is wrong)."""
    try:
        with open_lines(path) as fh:
            first = next((line for line in fh if line.strip()), "")
        if first.strip() != "{" or os.path.getsize(path) > _DOCUMENT_BYTES:
            return None
        with open(path, encoding="utf-8") as fh:
            return document_words(json.load(fh))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
