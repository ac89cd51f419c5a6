"""What a command stopped by Ctrl-C kept, said in the one line it ends with (exit 130).

A ``KeyboardInterrupt`` on its way out of a command passes through the parts that know what was
kept, and each marks it: the writer of an output with how much of the work its output holds
(:func:`note_kept`, worded by :func:`kept_in`), the model session with where the answers paid
for so far are (:func:`note_answers`: the response cache, or nowhere with ``--no-cache``).
:func:`interrupted_line` words the marks, what the outputs kept first, the same for every command
(``route``, ``generate``, ``facts``, ``mid-reply``); a command that marks nothing says only that
its finished work is kept.
"""

from __future__ import annotations

import os
from typing import Optional

from .text import escape_unshown

#: the attributes of the interrupt holding what the parts it passed through said their outputs kept
#: (in the order it passed them), and where the model's answers are
_KEPT, _ANSWERS = "_interleave_kept", "_interleave_answers"


def kept_in(finished: int, total: int, unit: str, path: str | os.PathLike) -> str:
    """How much of a run's work (``total`` of ``unit``: sessions, cases) its output ``path`` holds:
    ``3 of 40 sessions finished and kept in FILE``, or, none finished, that none is."""
    units, where = unit if total == 1 else f"{unit}s", escape_unshown(os.fspath(path))
    if finished:
        return f"{finished:,} of {total:,} {units} finished and kept in {where}"
    return f"0 of {total:,} {units} finished, so none is kept in {where}"


def note_kept(exc: BaseException, text: str) -> None:
    """Mark the interrupt ``exc`` with ``text``, what an output it passed kept (:func:`kept_in`)."""
    _mark(exc, _KEPT, [*getattr(exc, _KEPT, ()), text])


def _mark(exc: BaseException, name: str, value: object) -> None:
    try:
        setattr(exc, name, value)
    except AttributeError:  # (an exception of a class that takes no attribute: said plainly)
        pass


def note_answers(exc: BaseException, cache_folder: Optional[str | os.PathLike]) -> None:
    """Mark the interrupt ``exc`` of a run that paid for model answers with where they are kept:
    the response cache in ``cache_folder``, or, ``None`` (``--no-cache``), nowhere but in what its
    output holds."""
    if cache_folder is not None:
        _mark(exc, _ANSWERS, f"the model's answers so far are kept in the response cache "
                             f"({escape_unshown(os.fspath(cache_folder))}), so a rerun does not pay for them again")
    else:
        _mark(exc, _ANSWERS, "the model's answers are not kept (--no-cache), so a rerun pays again for those of "
                             "the work not kept")


def interrupted_line(exc: BaseException, again: str = "again") -> str:
    """The line a command stopped by ``exc`` (Ctrl-C) ends with: what its outputs kept and where the
    model's answers are, as the parts it passed marked it, and how to resume (``run the same
    command {again}``)."""
    notes = [*(getattr(exc, _KEPT, None) or ["finished work is kept"]), *filter(None, [getattr(exc, _ANSWERS, None)])]
    return f"interrupted: {'; '.join(notes)}; run the same command {again} to resume"
