"""A key of the environment that an input holds is in nothing a command prints: not its tables,
its ``--json`` documents, its warnings or summary lines (all of which pass the redaction the files
written pass), and no part of it is left where a message cuts a long value short."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli_util import run_cli
from _route_util import write_data
from _score_util import oracle_rows, write_jsonl
from interleave_bench.errors import InputError, clip, error_line, shown
from interleave_bench.redaction import REDACTED

KEY = "QwErTy0987654321ZxCvBnMlKjHgFdSa"


def key_parts(text: str, size: int = 6) -> list[str]:
    """Every piece of :data:`KEY` of ``size`` characters that ``text`` holds."""
    return [KEY[i:i + size] for i in range(len(KEY) - size + 1) if KEY[i:i + size] in text]


@pytest.fixture
def keyed(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("INTERLEAVE_NO_PROGRESS", "1")


@pytest.fixture
def data(tmp_path):
    return write_data(tmp_path / "data")


def predictions(data: Path, path: Path, **edit) -> Path:
    """The oracle's closed-mode rows of ``data`` with the third row's fields set as ``edit`` says."""
    sessions = [json.loads(x) for x in (data / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = oracle_rows(sessions, "closed")
    rows[2].update(edit)
    return write_jsonl(path, rows)


def test_score_prints_no_key_of_an_unknown_session_id(keyed, data, tmp_path, capsys):
    pred = predictions(data, tmp_path / "sid.jsonl", session_id="x" * 40 + KEY)
    code, out, err = run_cli(capsys, "score", data, pred, "--split", "all", "--bootstrap", "0")
    assert code == 0, err
    assert "not scored:" in out and REDACTED in out
    assert not key_parts(out + err)
    code, out, err = run_cli(capsys, "score", data, pred, "--split", "all", "--bootstrap", "0", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert REDACTED in doc["not_scored_line"] and not key_parts(out + err)


def test_compare_prints_no_key_of_an_unknown_session_id(keyed, data, tmp_path, capsys):
    honest = predictions(data, tmp_path / "honest.jsonl")
    pred = predictions(data, tmp_path / "sid.jsonl", session_id="x" * 40 + KEY)
    code, out, err = run_cli(capsys, "compare", data, honest, pred, "--split", "all")
    assert code == 0, err
    assert REDACTED in out + err
    assert not key_parts(out + err)


def test_a_key_in_a_path_a_command_prints_is_redacted(keyed, data, tmp_path, capsys):
    """``validate`` names the file it read, ``score`` the score file it wrote: a path is the user's too."""
    pred = predictions(data, tmp_path / KEY / "pred.jsonl")
    code, out, err = run_cli(capsys, "validate", pred)
    assert code == 0, err
    assert REDACTED in out + err and not key_parts(out + err)
    code, out, err = run_cli(capsys, "score", data, pred, "--split", "all", "--bootstrap", "0")
    assert code == 0, err
    assert "wrote" in out and not key_parts(out + err)


def test_a_key_printed_in_pieces_is_redacted_whole(keyed):
    """What a command prints reaches the stream a line at a time: a key written in two parts (a
    JSON document is printed a part at a time) is taken out whole; a line's start waits for its end."""
    import io

    from interleave_bench.cli import _Printed

    stream = io.StringIO()
    printed = _Printed(stream)
    printed.write("session " + KEY[:10])
    assert stream.getvalue() == ""
    printed.write(KEY[10:] + " unknown\nnext ")
    assert stream.getvalue() == f"session {REDACTED} unknown\n"
    printed.write("line")
    printed.flush()
    assert stream.getvalue() == f"session {REDACTED} unknown\nnext line"


def test_a_line_printed_in_many_parts_is_joined_once(monkeypatch):
    """The parts of a line not ended yet are kept apart and joined when it ends: each part was
    added to all held before it, so a long line printed in small parts took time growing with its
    square (2 MB in 10-character parts: 71 s). Each line reaches the redaction once, whole."""
    import io

    from interleave_bench import cli

    seen: list[str] = []
    monkeypatch.setattr(cli, "redact_secrets", lambda text: seen.append(text) or text)
    stream = io.StringIO()
    printed = cli._Printed(stream)
    for _ in range(1000):
        printed.write("abcdefghij")
    assert printed._held == ["abcdefghij"] * 1000 and seen == []
    printed.write("k\nrest")
    assert seen == ["abcdefghij" * 1000 + "k\n"] and stream.getvalue() == seen[0]
    printed.flush()
    assert seen[-1] == "rest" and stream.getvalue().endswith("\nrest")


@pytest.mark.parametrize("field, value", [
    ("confidence", "x" * 30 + KEY),
    ("i", "x" * 30 + KEY),
    ("pred", "x" * 30 + KEY + "\n"),  # a label holding a control character
    ("mode", "x" * 30 + KEY),
])
def test_a_value_cut_short_in_an_error_line_keeps_no_part_of_a_key(keyed, data, tmp_path, capsys, field, value):
    pred = predictions(data, tmp_path / "cut.jsonl", **{field: value})
    code, out, err = run_cli(capsys, "score", data, pred, "--split", "all", "--bootstrap", "0")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert f":3: {field}" in err
    assert not key_parts(out + err), err


def test_the_leaderboard_refusal_keeps_no_part_of_a_key(keyed, tmp_path):
    import _board_util as b
    from interleave_bench.hub.board_score import score_given

    data, preds = b.baselines(tmp_path / "data", n=4)
    doc = b.score_file(data, preds["closed-stay"])
    path = b.write(tmp_path / "forged.score.json", b.forged(doc, policy="x" * 30 + KEY))
    with pytest.raises(InputError) as caught:
        score_given([path])
    line = error_line(caught.value.format())
    assert "policy" in line and not key_parts(line), line


def test_clip_redacts_the_whole_text_before_cutting_it(keyed):
    for cut in (clip("x" * 30 + KEY, 60), shown("x" * 30 + KEY, 60), clip("y" * 55 + KEY, 60)):
        assert len(cut) <= 60 and not key_parts(cut), cut
    assert shown("short") == "'short'" and shown(None) == "null"
    assert clip("a" * 100, 10) == "aaaaaaa..."


def test_an_error_line_quoting_a_huge_label_stays_short(data, tmp_path, capsys):
    pred = write_jsonl(tmp_path / "huge.jsonl", [{"session_id": "en-0001", "i": 0, "pred": "a" * 2_000_000}])
    code, out, err = run_cli(capsys, "score", data, pred, "--split", "all", "--bootstrap", "0")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err[:300]
    assert str(pred) in err and "pred" in err
    assert len(err) < 1000, err[:300]


def test_an_error_line_of_any_length_keeps_its_start_and_end(keyed):
    """A message that quotes a value whole (a thread id the data names twice, say) is cut in its
    middle: the file, line and field, and what is wrong, are kept, and the key is gone first."""
    line = error_line(f"s.jsonl:3: threads[1].id: duplicate thread id {('b' * 10_000 + KEY)!r} (first on line 2)")
    assert len(line) <= 2000
    assert line.startswith("error: s.jsonl:3: threads[1].id: duplicate thread id 'bbb")
    assert line.endswith(f"{REDACTED}' (first on line 2)") and not key_parts(line)
