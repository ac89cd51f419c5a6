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


def _with_line(path, k, edit):
    lines = path.read_bytes().split(b"\n")
    lines[k] = edit(lines[k])
    path.write_bytes(b"\n".join(lines))


@pytest.mark.parametrize("where", [0, 150, 299])
def test_a_key_named_twice_is_refused_by_the_forked_pass_as_in_process(tmp_path, monkeypatch, where):
    """The look for a key named twice runs in a process of its own (:class:`KeysPass`): the same
    one-line error as in process, wherever the line is."""
    data, predictions = _files(tmp_path, many_sessions(300, turns=12))
    _with_line(data, where, lambda line: line.replace(b'"split":', b'"lang":"en","split":', 1))
    errors = []
    for fork in (True, False):
        if not fork:
            monkeypatch.delattr(os, "fork")
        with pytest.raises(InputError) as caught:
            score_files(data, predictions, bootstrap=0, write=False)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert f":{where + 1}:" in errors[0] and "lang" in errors[0]


def test_lines_only_the_record_type_reads_are_scored_by_the_forked_pass_as_in_process(tmp_path, monkeypatch):
    """A field the record types do not know (kept, not a defect) and a key escaping a quote mark
    do not make the key look refuse a file."""
    data, predictions = _files(tmp_path, many_sessions(300, turns=12))
    _with_line(data, 7, lambda line: line[:-1] + b',"notes":{"by":"x"}}')
    _with_line(data, 8, lambda line: line[:-1] + b',"notes":{"by":"x","by\\u0022":1}}')
    forked = _documents(data, predictions)
    monkeypatch.delattr(os, "fork")
    assert forked == _documents(data, predictions)


def test_the_key_look_finds_a_key_named_twice_in_any_block(tmp_path):
    from interleave_bench.score.datafile import Bad
    from interleave_bench.score.forked import KeysPass

    data, _ = _files(tmp_path, many_sessions(300, turns=12))
    assert list(KeysPass(data, block_bytes=4096).blocks()) == []
    _with_line(data, 250, lambda line: line.replace(b'"turns":', b'"turns":[],"turns":', 1))
    with pytest.raises(Bad):
        list(KeysPass(data, block_bytes=4096).blocks())
    with pytest.raises(Bad):
        list(Forked(KeysPass(data, block_bytes=4096)))
