"""The data file read in a forked process (``score`` with one job): the same documents as read in
process, and what the pass raises reaches the caller as it was."""

from __future__ import annotations

import json
import os

import pytest

from interleave_bench.errors import InputError
from interleave_bench.score.datafile import DataPass
from interleave_bench.score.forked import Forked
from interleave_bench.score.run import score_files

from _score_util import many_sessions, oracle_rows, single_rows, write_jsonl


def _files(tmp_path, sessions):
    data = write_jsonl(tmp_path / "sessions.jsonl", sessions)
    closed = write_jsonl(tmp_path / "predictions" / "closed-oracle.jsonl", oracle_rows(sessions, "closed"))
    opened = write_jsonl(tmp_path / "predictions" / "open-single.jsonl", single_rows(sessions, "open"))
    return data, [closed, opened]


def _documents(data, predictions):
    """The score documents, but for when they were made."""
    docs = [f.result for f in score_files(data, predictions, bootstrap=50, write=False)]
    for doc in docs:
        del doc["provenance"]["created"]
    return [json.dumps(doc, sort_keys=True) for doc in docs]


def test_the_forked_pass_gives_the_documents_of_the_pass_in_process(tmp_path, monkeypatch):
    data, predictions = _files(tmp_path, many_sessions(300, turns=12))
    forked = _documents(data, predictions)
    monkeypatch.delattr(os, "fork")  # where there is no fork, the pass runs in process
    in_process = _documents(data, predictions)
    assert [_differing(json.loads(a), json.loads(b)) for a, b in zip(forked, in_process)] == [[], []]


def _differing(a, b, where=""):
    """The paths at which two documents differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [p for k in sorted(set(a) | set(b)) for p in _differing(a.get(k), b.get(k), f"{where}.{k}")]
    return [] if a == b else [f"{where}: {a!r:.80} != {b!r:.80}"]


class _Failing(DataPass):
    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.fingerprint = None

    def blocks(self):
        yield from ()
        raise self.error


def test_what_the_pass_raises_is_raised_in_the_caller_as_it_was():
    error = InputError("data.jsonl", 3, "turns[2].gold", "not a thread of this session")
    with pytest.raises(InputError) as caught:
        list(Forked(_Failing(error)))
    assert str(caught.value) == "data.jsonl:3: turns[2].gold: not a thread of this session"
    with pytest.raises(PermissionError):
        list(Forked(_Failing(PermissionError(13, "Permission denied"))))
