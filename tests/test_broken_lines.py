"""A JSON Lines line cut short is named at its column on that line, with the real cause: its end
(not the next line's column 1, nor a control character at the newline). Every reader says it the
same way (``interleave_bench.strictjson.broken_json``): route, score, validate."""

from __future__ import annotations

import json

import pytest

from interleave_bench.cli import main
from interleave_bench.errors import InputError
from interleave_bench.strictjson import parse_strict

import _score_util as score_util
from _score_util import many_sessions, oracle_rows

ENDS = "invalid JSON: the line ends before the JSON value does"
IN_STRING = "invalid JSON: the line ends inside a string, unterminated"


@pytest.fixture
def files(tmp_path):
    ss = many_sessions(2)
    data = score_util.write_jsonl(tmp_path / "sessions.jsonl", ss)
    pred = score_util.write_jsonl(tmp_path / "p.jsonl", oracle_rows(ss, "closed"))
    return data, pred


def cut(path, line: int, at: str, keep: int = 0) -> tuple[int, str]:
    """Cut ``line`` (from 1) of ``path`` just before ``at`` (plus ``keep`` characters of it); the
    column where the cut line ends."""
    lines = path.read_text(encoding="utf-8").splitlines()
    text = lines[line - 1]
    lines[line - 1] = text[: text.index(at) + keep]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines[line - 1].rstrip()) + 1


def error_of(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("keep, problem", [(0, ENDS), (len('"pred": "t'), IN_STRING)])
def test_a_predictions_line_cut_short_is_named_at_its_end(files, tmp_path, capsys, keep, problem):
    data, pred = files
    column = cut(pred, 7, '"pred"', keep)  # after '"i": 6,', or inside its label
    want = f"error: {pred}:7: {problem} (column {column})\n"
    assert error_of(capsys, "score", data, pred, "--bootstrap", 0) == (2, want)
    code, err = error_of(capsys, "validate", pred)
    assert code == 2 and err.splitlines()[0] == want.strip()


@pytest.mark.parametrize("at, keep, problem", [('"turns"', len('"turns": ['), ENDS), ('"text"', len('"text": "mess'), IN_STRING)])
@pytest.mark.parametrize("command", ["route", "score", "validate"])
def test_a_sessions_line_cut_short_is_named_at_its_end(files, tmp_path, capsys, at, keep, problem, command):
    data, pred = files
    column = cut(data, 2, at, keep)
    argv = {"route": ["route", data, "--mode", "closed", "--policy", "local", "--split", "all", "--out", tmp_path / "o.jsonl"],
            "score": ["score", data, pred, "--bootstrap", 0], "validate": ["validate", data]}[command]
    code, err = error_of(capsys, *argv)
    assert code == 2 and err.splitlines()[0] == f"error: {data}:2: {problem} (column {column})"
    assert "Traceback" not in err and "Expecting" not in err and "control character" not in err


@pytest.mark.parametrize("text, line, want", [
    ('{"a":"x\ty"}', 3, "3: invalid JSON: a control character (U+0009) inside a string, unescaped (column 8)"),
    ('{bad', 1, "1: invalid JSON: Expecting property name enclosed in double quotes (column 2)"),
    ('{"a": [1,\n 2,\n', None, "2: invalid JSON: the file ends before the JSON value does (column 4)"),
    ('{\n "a": "xy\n}', None, "2: " + IN_STRING + " (column 10)"),
    # a document cut inside a string: the file ends there (at its last line, or after it)
    ('{\n "a": "xy', None, "2: invalid JSON: the file ends inside a string, unterminated (column 10)"),
    ('{\n "a": "xy\n', None, "2: invalid JSON: the file ends inside a string, unterminated (column 10)"),
    ('{"a": "xy', 1, "1: " + IN_STRING + " (column 10)"),
    ('{"a":1,   \r\n', 2, "2: " + ENDS + " (column 8)"),
    # a line ends at \n alone: a \r inside a string is a control character, one before \n a CRLF end
    ('{"a": "x\ry", "b": 1}\n', 4, "4: invalid JSON: a control character (U+000D) inside a string, unescaped (column 9)"),
    ('{"a": "xy\r\n', 4, "4: " + IN_STRING + " (column 10)"),
    ('\ufeff{"a": 1}', 1, "1: invalid JSON: the text starts with a byte-order mark (BOM): save it as UTF-8 "
                          "without one (column 1)"),
])
def test_the_position_is_the_column_on_the_line_of_the_fault(text, line, want):
    with pytest.raises(InputError) as caught:
        parse_strict("f", line, text)
    assert caught.value.format() == f"f:{want}"
    with pytest.raises(json.JSONDecodeError):  # what the standard library refuses, and no more
        json.loads(text)
