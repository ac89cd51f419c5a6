"""The compiled readers (interleave_bench/compiled.py) against the record types they are derived from.

A compiled reader may refuse what the record type accepts (the caller then asks the record type),
but never accepts what it refuses, and what both accept reads the same: for sessions, the same
fingerprint line, byte for byte; for prediction rows, the same values.
"""

from __future__ import annotations

import copy
import json
import random

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from interleave_bench.score.datafile import ids_unprintable
from interleave_bench.compiled import DecodeErrors, canonical_line, decoder
from interleave_bench.io import _json_parts
from interleave_bench.fingerprints import records_fingerprint
from interleave_bench.schema import PredictionRow, RowUsage, Session
from interleave_bench.score.rowfile import RARE_FIELDS, _lean_decoder, _row_decoder
from interleave_bench.score.datafile import data_fingerprint
from interleave_bench.score.read import read_sessions_fast


def session(k: int = 0, sid: str | None = None) -> dict:
    return {
        "session_id": sid if sid is not None else f"s-{k:03d}", "version": "interleave-v0", "split": "dev", "lang": "en",
        "threads": [{"id": "t1", "title": "Trip", "domain": "travel"},
                    {"id": "t2", "title": "Tax", "domain": "money", "goal": "file", "twinOf": "t1"}],
        "turns": [
            {"i": 0, "text": "book it", "gold": {"thread": "t1", "action": "new"}, "style": "explicit",
             "judge": {"thread": "t1"}, "ambiguous": False},
            {"i": 1, "text": "what's 2+2?", "gold": {"thread": None, "action": "oneoff", "refs": []}, "style": "oneoff",
             "tags": ["oneoff"], "judge": {"thread": "none"}, "ambiguous": False},
            {"i": 2, "text": "the form", "gold": {"thread": "t2", "action": "new", "refs": ["t1"]}, "style": "cue",
             "judge": {"thread": "ambiguous", "candidates": ["t1", "t2"]}, "ambiguous": True},
        ],
    }


#: values a mutation may put anywhere: every JSON type, the edges of each
ODD_VALUES = [None, True, False, 0, -1, 1.0, 1.5, 2 ** 63, 2 ** 70, -(2 ** 64), "", "x", "t1", "\u2028", "a\"b\\", "\x00\x1f",
              "é😀", [], ["t1"], [1], {}, {"a": 1}, "oneoff", "new", "dev", "interleave-v1"]


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for k, v in enumerate(obj):
            yield from _paths(v, prefix + (k,))


def mutate(obj, rng: random.Random, times: int):
    """``obj`` with ``times`` random edits: a value replaced, a key dropped, a key added."""
    obj = json.loads(json.dumps(obj))
    for _ in range(times):
        paths = [p for p in _paths(obj) if p]
        path = rng.choice(paths)
        parent = obj
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        kind = rng.random()
        if kind < 0.6:
            parent[last] = copy.deepcopy(rng.choice(ODD_VALUES))  # a copy: later edits stay in obj
        elif kind < 0.8 and isinstance(parent, dict):
            del parent[last]
        elif isinstance(parent, dict):
            parent[rng.choice(["extra", "note", "goal", "refs", "tags", "candidates", "fact", "timeline"])] = copy.deepcopy(rng.choice(ODD_VALUES))
    return obj


def record_reading(model, line: bytes):
    try:
        return model.model_validate_json(line)
    except ValidationError:
        return None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), times=st.integers(0, 3))
def test_the_session_reader_accepts_only_what_the_record_type_accepts_and_prints_the_same_line(seed, times):
    line = json.dumps(mutate(session(), random.Random(seed), times), ensure_ascii=bool(seed % 2)).encode()
    try:
        got = decoder(Session).decode(line)
    except DecodeErrors:
        return  # refused: the record type decides
    record = record_reading(Session, line)
    assert record is not None, line
    assert canonical_line(got) == record.model_dump_json().encode()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), times=st.integers(0, 3))
def test_the_prediction_row_reader_accepts_only_what_the_record_type_accepts(seed, times):
    row = {"session_id": "s-000", "i": 2, "pred": "t1", "mode": "closed", "policy": "llm", "refs": ["t2"],
           "usage": {"input": 900, "output": 20}, "elapsed_ms": 312, "via": "llm", "burst": 2, "mixed": False,
           "model": "m-1"}
    if seed % 2:  # half of the rows start without the rare fields and the unknown one, as most files' rows
        row = {k: v for k, v in row.items() if k not in (*RARE_FIELDS, "model")}
    line = json.dumps(mutate(row, random.Random(seed), times)).encode()
    try:
        lean = _lean_decoder().decode(line)
    except DecodeErrors:
        lean = None
    try:
        got = _row_decoder().decode(line)
    except DecodeErrors:
        assert lean is None, line  # the lean reader takes no more than the full one
        return
    if ids_unprintable(line, [got.session_id, got.pred]):
        return  # the score pass checks ids a block at a time, and hands such a block to the record type
    record = record_reading(PredictionRow, line)
    if lean is not None:  # a row naming none of the rare fields nor an unknown one, read the same
        assert not record.model_extra and all(getattr(record, n) is None for n in RARE_FIELDS), line
        for name in lean.__struct_fields__:  # (as JSON: the two readers' usage types are distinct)
            assert msgspec.json.encode(getattr(lean, name)) == msgspec.json.encode(getattr(got, name)), name
    assert record is not None, line
    for name in ("session_id", "i", "pred", "mode", "policy", "refs", "elapsed_ms", "via", "burst", "mixed", "waited"):
        assert getattr(got, name) == getattr(record, name), name
    if record.usage is None:
        assert got.usage is None
    else:  # a usage that names a field is a model call, {} is none (section 7.10)
        named = {n for n in ("input", "output", "cache_hit") if getattr(got.usage, n) is not msgspec.UNSET}
        assert named == record.usage.model_fields_set
        for n in named:
            assert getattr(got.usage, n) == getattr(record.usage, n)
    model = (record.model_extra or {}).get("model")
    assert got.model == model


def test_hand_cases_the_readers_refuse():
    refused = [
        b'{"session_id":"s","i":1.0,"pred":"t1"}',  # a float for an integer
        b'{"session_id":"s","i":1,"pred":7}',  # a number for a label: the record type reads it as text
        b'{"session_id":"s","i":1,"pred":"t1","usage":{"input":null}}',  # a null inside usage
        b'{"session_id":"s","i":1,"pred":"t1","usage":{"tokens":3}}',  # a usage field the scorer cannot count
        b'{"session_id":"s","i":1,"pred":"t1","mixed":1}',  # a number for a flag
        b'{"session_id":"s","i":1,"pred":"t1","elapsed_ms":NaN}',
        b'{"session_id":"s","i":1,"pred":"\\ud800"}',  # a lone surrogate
    ]
    for line in refused:
        with pytest.raises(DecodeErrors):
            _row_decoder().decode(line)
    s = session()
    del s["turns"][1]["gold"]["thread"]  # required, though it may be null
    with pytest.raises(DecodeErrors):
        decoder(Session).decode(json.dumps(s))
    s = session()
    s["turns"][0]["i"] = True
    with pytest.raises(DecodeErrors):
        decoder(Session).decode(json.dumps(s))


def test_usage_presence_is_read_as_the_record_type_reads_it():
    empty = _row_decoder().decode(b'{"session_id":"s","i":0,"pred":"t1","usage":{}}')
    zero = _row_decoder().decode(b'{"session_id":"s","i":0,"pred":"t1","usage":{"input":0}}')
    assert (empty.usage.input, zero.usage.input) == (msgspec.UNSET, 0)
    assert not PredictionRow.model_validate_json('{"session_id":"s","i":0,"pred":"t1","usage":{}}').usage.model_fields_set
    assert RowUsage.model_validate({"input": 0}).model_fields_set == {"input"}


TRICKY_IDS = ["a", "a\"b", "a\\", "a#", "é", "\u2028", "z", "A", "a\u00a0", "😀", "a b", "ab"]


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_the_data_fingerprint_is_the_records_fingerprint(tmp_path, order):
    """Ids that escape, sort by code point, lines with unknown fields (the record type's reading)
    and a v1-looking version: the fast pass gives the records fingerprint either way."""
    rows = [session(sid=sid) for sid in TRICKY_IDS]
    rows[2]["note"] = {"kept": [1, 2]}  # an unknown field: read by the record type
    rows[3]["threads"][0]["color"] = "red"
    rows = sorted(rows, key=lambda r: r["session_id"]) if order == "sorted" else random.Random(3).sample(rows, len(rows))
    path = tmp_path / "sessions.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=k % 2 == 0) + "\n" for k, r in enumerate(rows)), encoding="utf-8")
    want = records_fingerprint(read_sessions_fast(path))
    assert data_fingerprint(path) == want
    by_hand = "sha256:" + __import__("hashlib").sha256(
        b"".join(s.encode() + b"\n" for s in sorted(Session.model_validate(r).model_dump_json() for r in rows))).hexdigest()
    assert want == by_hand


@settings(max_examples=200, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=4), inner, max_size=5), max_leaves=40))
def test_json_documents_are_written_as_the_standard_library_indents_them(obj):
    import interleave_bench.io as io

    was = io.JSON_ITEMS
    io.JSON_ITEMS = 3  # long lists written a slice at a time
    try:
        assert "".join(_json_parts(obj)) == json.dumps(obj, ensure_ascii=False, indent=2) + "\n"
    finally:
        io.JSON_ITEMS = was


def test_ids_that_stop_ascending_in_a_later_block_give_the_same_fingerprint(tmp_path, monkeypatch):
    from interleave_bench.errors import InputError
    from interleave_bench.score import datafile

    monkeypatch.setattr(datafile, "BLOCK_BYTES", 2048)  # a few sessions a block
    ids = [f"s-{k:03d}" for k in range(40)] + ["r-1", "s-100", "a"] + [f"t-{k}" for k in range(12)]
    path = tmp_path / "sessions.jsonl"
    path.write_text("".join(json.dumps(session(sid=sid)) + "\n" for sid in ids), encoding="utf-8")
    assert data_fingerprint(path) == records_fingerprint(read_sessions_fast(path))
    # one id twice, far apart and out of order: refused, as the strict reader refuses it
    path.write_text("".join(json.dumps(session(sid=sid)) + "\n" for sid in [*ids, "s-005"]), encoding="utf-8")
    with pytest.raises(InputError, match="duplicate"):
        data_fingerprint(path)
