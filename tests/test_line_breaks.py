"""A line of a JSON Lines file ends at ``\\n`` alone (json_text.NEWLINE). The other characters
Python breaks text at (a text file at a lone ``\\r``; ``str.splitlines`` at ``\\x0b``, ``\\x0c``,
``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028``, ``\\u2029`` too) may stand in a record's JSON text:
``\\r`` as white space between its tokens, ``\\x85``, ``\\u2028`` and ``\\u2029`` unescaped in its
strings, the rest escaped there. A record holding them reads back whole through every reader, the
strict ones and the scorer's array readers, and a fault after it is named on its own line."""

from __future__ import annotations

import contextlib
import io as std_io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interleave_bench import io
from interleave_bench.cli import main
from interleave_bench.fingerprints import records_fingerprint
from interleave_bench.schema import PredictionRow, Session
from interleave_bench.score import datafile
from interleave_bench.score.datafile import data_fingerprint
from interleave_bench.score.read import read_predictions_fast, read_sessions_fast
from interleave_bench.score.run import score_files, score_predictions, system_name

from _score_util import many_sessions, rows

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)

#: what Python breaks text at besides ``\n`` (``\r\n`` aside)
BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: what may part a record's tokens: JSON's white space, ``\r`` among it
BLANKS = ["", " ", "\t", "\r", " \r\t", "\r\r"]
#: lines that hold no record (white space as ``str.strip`` has it), passed over by every reader
BLANK_LINES = ["", " \r", "\u2028", "\x0c \x85", "\x1e"]

texts = st.text(st.sampled_from([*BREAKS, "a", " ", "é", '"', "\\"]), min_size=1, max_size=8)


@st.composite
def layouts(draw):
    """How a file's records are written: the blanks around its commas and colons, before and after
    each record, its line end (``\\n`` or ``\\r\\n``), and blank lines between records."""
    blank = st.sampled_from(BLANKS)
    return {
        "separators": (draw(blank) + "," + draw(blank), draw(blank) + ":" + draw(blank)),
        "around": (draw(blank), draw(blank)),
        "end": draw(st.sampled_from(["\n", "\r\n"])),
        "blank_lines": draw(st.lists(st.sampled_from(BLANK_LINES), max_size=3)),
        "blank_at": draw(st.lists(st.integers(0, 40), min_size=3, max_size=3)),
        "block": draw(st.sampled_from([64, 300, 1 << 20])),
    }


def write(path: Path, records: list[dict], layout: dict) -> list[int]:
    """Write ``records`` as ``layout`` says; returns the line (from 1) of each."""
    before, after = layout["around"]
    lines = [before + json.dumps(r, ensure_ascii=False, separators=layout["separators"]) + after for r in records]
    numbers = list(range(1, len(lines) + 1))
    for blank, at in zip(layout["blank_lines"], layout["blank_at"]):
        at = min(at, len(lines))
        lines.insert(at, blank)
        numbers = [n + (n > at) for n in numbers]
    path.write_bytes("".join(line + layout["end"] for line in lines).encode("utf-8"))
    return numbers


def odd_sessions(draw) -> list[dict]:
    """Sessions whose texts (turns, thread titles) hold the characters of :data:`BREAKS`."""
    ss = many_sessions(3, turns=5)
    for s in ss:
        for t in s["turns"]:
            t["text"] = draw(texts)
        s["threads"][0]["title"] = draw(texts)
    return ss


def odd_rows(draw, ss: list[dict]) -> list[dict]:
    """A closed-mode run over ``ss`` whose rows' free texts (``via``, ``policy``) hold them too."""
    out = []
    for s in ss:
        for r in rows(s["session_id"], [t["gold"]["thread"] or "t1" for t in s["turns"]]):
            r["via"], r["policy"] = draw(texts), draw(texts)
            out.append(r)
    return out


def errors_of(argv: list[str]) -> tuple[int, list[str]]:
    """A command's exit code and the error lines it printed."""
    err = std_io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std_io.StringIO()):
        code = main(argv)
    return code, [line for line in err.getvalue().split("\n") if line.startswith("error:")]


@SETTINGS
@given(st.data(), layouts(), layouts())
def test_records_holding_python_line_breaks_read_back_whole_on_their_own_lines(data, data_layout, pred_layout):
    ss = odd_sessions(data.draw)
    rs = odd_rows(data.draw, ss)
    with tempfile.TemporaryDirectory() as tmp:
        data_path, pred = Path(tmp) / "sessions.jsonl", Path(tmp) / "run.jsonl"
        session_lines = write(data_path, ss, data_layout)
        row_lines = write(pred, rs, pred_layout)
        # the strict readers: each record as written, on its line
        assert [n for n, _ in io.iter_json_lines(pred)] == row_lines
        got = list(io.read_records_with_lines(pred, PredictionRow))
        assert [(n, r.dump()) for n, r in got] == [(n, PredictionRow.model_validate(r).dump()) for n, r in zip(row_lines, rs)]
        got_sessions = list(io.read_records_with_lines(data_path, Session))
        assert [n for n, _ in got_sessions] == session_lines
        assert [s.model_dump_json() for _, s in got_sessions] == [Session.model_validate(s).model_dump_json() for s in ss]
        assert read_predictions_fast(pred)[1] == row_lines
        # the array readers (a block of any size): the same records, so the same fingerprint and numbers
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(datafile, "BLOCK_BYTES", data_layout["block"])
            assert data_fingerprint(data_path) == records_fingerprint(read_sessions_fast(data_path))
            (run,) = score_files(data_path, [pred], split="dev", bootstrap=0, write=False)
        strict_rows, numbers = read_predictions_fast(pred)
        strict = score_predictions(read_sessions_fast(data_path), strict_rows, system=system_name(pred), split="dev",
                                   bootstrap=0, source=str(pred), lines=numbers).result
        assert _without_provenance(run.result) == _without_provenance(strict)
        assert run.result["counts"]["sessions"] == len(ss)


@SETTINGS
@given(st.data(), layouts(), st.integers(0, 14))
def test_a_fault_after_such_records_is_named_on_its_own_line(data, layout, bad):
    ss = odd_sessions(data.draw)
    rs = odd_rows(data.draw, ss)
    rs[bad]["i"] = str(rs[bad]["i"])  # a field of the wrong type
    with tempfile.TemporaryDirectory() as tmp:
        data_path, pred = Path(tmp) / "sessions.jsonl", Path(tmp) / "run.jsonl"
        write(data_path, ss, layout)
        line = write(pred, rs, layout)[bad]
        for argv in (["validate", str(pred)], ["score", str(data_path), str(pred), "--bootstrap", "0"]):
            code, errors = errors_of(argv)
            assert code == 2 and len(errors) == 1 and errors[0].startswith(f"error: {pred}:{line}: i: "), (argv, errors)
        # a byte that is no UTF-8, on that line
        text = pred.read_bytes().split(b"\n")
        text[line - 1] = text[line - 1].replace(b'"i"', b'"\xff"', 1)
        pred.write_bytes(b"\n".join(text))
        assert io.line_of_bad_utf8(pred, 7) == line
        code, errors = errors_of(["validate", str(pred)])
        assert code == 2 and errors[0].startswith(f"error: {pred}:{line}: not UTF-8 text"), errors


def _without_provenance(doc: dict) -> str:
    return json.dumps({k: v for k, v in doc.items() if k != "provenance"}, ensure_ascii=False)


def test_a_file_of_the_other_kind_whose_first_record_holds_a_carriage_return_is_named_in_one_line():
    ss = many_sessions(2, turns=3)
    rs = [r for s in ss for r in rows(s["session_id"], ["t1"] * 3)]
    with tempfile.TemporaryDirectory() as tmp:
        data_path, pred = Path(tmp) / "sessions.jsonl", Path(tmp) / "run.jsonl"
        write(data_path, ss, {"separators": (",\r", ":"), "around": ("", ""), "end": "\n", "blank_lines": [],
                              "blank_at": []})
        write(pred, rs, {"separators": (",\r", ":"), "around": ("", ""), "end": "\n", "blank_lines": [],
                         "blank_at": []})
        assert errors_of(["stats", str(pred)]) == (2, [f"error: {pred}: a predictions file (rows with session_id, i and "
                                                       "pred), given as the data: the data is a sessions file (lines "
                                                       "with turns and threads) or its folder"])
        code, errors = errors_of(["score", str(pred), str(data_path), "--bootstrap", "0"])
        assert code == 2 and len(errors) == 1 and "given as the data" in errors[0], errors
