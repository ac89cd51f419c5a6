"""Mid-reply case files: the packaged set, reading any file in the same format, and case lookups.

The format is docs/mid_reply.md#case-file-format (records in :mod:`interleave_bench.schema`); reading and
validation are :func:`interleave_bench.io.read_case_file`, so a malformed file gets one error per
defect naming the case (index and id) and the field. Other people's case sets in this format run
unchanged: languages, catalogs and topic ids are whatever the file says.
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Iterator

from ..io import read_case_file
from ..schema import MID_REPLY_NEW, MID_REPLY_RUNNING, CatalogTopic, MidReplyCase, MidReplyCaseFile

#: where the shipped cases live inside the package (read through importlib.resources)
PACKAGED_CASES = ("data", "mid_reply", "cases.json")


@contextmanager
def packaged_cases_path() -> Iterator[Path]:
    """A real filesystem path to the packaged case file for the duration of the ``with`` block."""
    ref = resources.files("interleave_bench").joinpath(*PACKAGED_CASES)
    with resources.as_file(ref) as path:
        yield Path(path)


def load_cases(path: str | os.PathLike | None = None) -> MidReplyCaseFile:
    """The validated case file at ``path`` (the packaged set when ``None``).

    Raises :class:`~interleave_bench.errors.InputErrors` naming the file, the case (index and id)
    and the field of every defect.
    """
    if path is None:
        with packaged_cases_path() as p:
            return read_case_file(p)
    return read_case_file(path)


def catalog_of(f: MidReplyCaseFile, case: MidReplyCase) -> list[CatalogTopic]:
    """The catalog of the case's language (validation guarantees it exists)."""
    return f.catalogs[case.lang]


def running_topic(f: MidReplyCaseFile, case: MidReplyCase) -> CatalogTopic:
    """The catalog topic whose reply is running when the case's message arrives."""
    return next(t for t in catalog_of(f, case) if t.id == case.running.topicId)


def other_topics(f: MidReplyCaseFile, case: MidReplyCase) -> list[CatalogTopic]:
    """The catalog topics other than the running one, in catalog order."""
    return [t for t in catalog_of(f, case) if t.id != case.running.topicId]


def expect_kind(expect: str) -> str:
    """``running``, ``new`` or ``topic`` (another catalog topic): the kind of a destination."""
    if expect == MID_REPLY_RUNNING:
        return MID_REPLY_RUNNING
    if expect == MID_REPLY_NEW:
        return MID_REPLY_NEW
    return "topic"


def case_fingerprint(f: MidReplyCaseFile, case: MidReplyCase, *extra: str) -> str:
    """A short hash of everything that can change a case's decision: the case, its catalog, ``extra``.

    ``extra`` carries the policy and the prompt and rule versions, so a stored result is reused
    only while all of them are unchanged.
    """
    blob = json.dumps(
        {"case": case.dump(), "catalog": [t.dump() for t in catalog_of(f, case)], "extra": list(extra)},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]
