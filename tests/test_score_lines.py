"""One JSON value a line, read alike by every command: the array readers of ``score`` and ``report``
(score/datafile.py, score/rowfile.py) take a file exactly when the strict readers of ``validate``,
``compare``, ``stats`` and ``baselines`` do, refuse a line holding two records, or a record written
over two lines, with the strict reader's one line naming the file and line, and pass over the same
blank lines (json_text.is_blank)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interleave_bench.cli import main
from interleave_bench.errors import InputError
from interleave_bench.score import datafile
from interleave_bench.score.columnar import score_run_blocks
from interleave_bench.score.datafile import data_fingerprint
from interleave_bench.score.read import read_predictions_fast, read_sessions_fast
from interleave_bench.score.run import score_files

from _score_util import many_sessions, rows, write_jsonl

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


def errors_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


def strict_errors(read, path: Path) -> list[str]:
    """The error lines a command prints for what the strict reader ``read`` refuses in ``path``."""
    with pytest.raises(InputError) as got:
        read(path)
    return [f"error: {e.format()}" for e in getattr(got.value, "errors", [got.value])]


def run_rows(ss: list[dict]) -> list[dict]:
    return [r for s in ss for r in rows(s["session_id"], [t["gold"]["thread"] or "ERROR" for t in s["turns"]])]


def lines_of(items: list[dict]) -> list[str]:
    return [json.dumps(x, ensure_ascii=False) for x in items]


#: a good file's lines made into one a line that holds something else: (name, edit of the lines)
LAYOUTS = {
    "two records on one line": lambda ls: [ls[0], ls[1] + ls[2], *ls[3:]],
    "two records on one line, a blank between": lambda ls: [ls[0], ls[1] + " \t" + ls[2], *ls[3:]],
    # a lone carriage return ends no line (as old Macs broke lines): it is a blank between the two
    "two records parted by a lone carriage return": lambda ls: [ls[0], ls[1] + "\r" + ls[2], *ls[3:]],
    "a record over two lines": lambda ls: [ls[0], *ls[1].replace(', "', ',\n"', 1).split("\n"), *ls[2:]],
    # each alone would pass a count of the lines: together they must not
    "two on one line and one over two": lambda ls: [ls[0] + ls[1], *ls[2].replace(', "', ',\n"', 1).split("\n"),
                                                    *ls[3:]],
}


@pytest.fixture
def data(tmp_path) -> tuple[Path, list[dict]]:
    ss = many_sessions(4, turns=6)
    return write_jsonl(tmp_path / "data" / "sessions.jsonl", ss).parent, ss


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_predictions_line_holding_other_than_one_record_is_one_error_in_every_command(data, tmp_path, capsys, layout):
    folder, ss = data
    good = write_jsonl(tmp_path / "good.jsonl", run_rows(ss))
    pred = tmp_path / "bad.jsonl"
    pred.write_text("\n".join(LAYOUTS[layout](lines_of(run_rows(ss)))) + "\n", encoding="utf-8")
    want = strict_errors(read_predictions_fast, pred)
    assert want and all(line.startswith(f"error: {pred}:") and "invalid JSON" in line for line in want)
    for argv in (["score", str(folder), str(pred), "--bootstrap", "0"],
                 ["report", str(folder), str(pred), "--html", str(tmp_path / "r.html"), "--bootstrap", "0"],
                 ["compare", str(folder), str(good), str(pred), "--bootstrap", "0"],
                 ["validate", str(folder / "sessions.jsonl"), str(pred)]):
        assert main(argv) == 2, argv
        assert errors_of(capsys.readouterr().err) == want, argv
    assert not (tmp_path / "bad.score.json").exists() and not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_sessions_line_holding_other_than_one_session_is_one_error_in_every_command(data, tmp_path, capsys, layout):
    folder, ss = data
    pred = write_jsonl(tmp_path / "run.jsonl", run_rows(ss))
    bad = tmp_path / "bad" / "sessions.jsonl"
    bad.parent.mkdir()
    bad.write_text("\n".join(LAYOUTS[layout](lines_of(ss))) + "\n", encoding="utf-8")
    want = strict_errors(read_sessions_fast, bad)
    assert want and all(line.startswith(f"error: {bad}:") for line in want)
    for argv in (["score", str(bad.parent), str(pred), "--bootstrap", "0"],
                 ["stats", str(bad.parent)], ["baselines", str(bad.parent)], ["validate", str(bad)]):
        assert main(argv) == 2, argv
        got = errors_of(capsys.readouterr().err)
        assert (got[:1] if argv[0] == "validate" else got) == want, argv  # validate names every bad line


def test_a_row_and_its_copy_on_one_line_are_named_on_that_line(data, tmp_path, capsys):
    folder, ss = data
    ls = lines_of(run_rows(ss))
    pred = tmp_path / "copy.jsonl"
    pred.write_text("\n".join([ls[0] + ls[0], *ls[1:]]) + "\n", encoding="utf-8")
    assert main(["score", str(folder), str(pred), "--bootstrap", "0"]) == 2
    (error,) = errors_of(capsys.readouterr().err)
    assert error.startswith(f"error: {pred}:1: invalid JSON: Extra data"), error  # not a duplicate on "line 2"


@pytest.mark.parametrize("blank", ["\u00a0", "\x1e \u3000", "\x0c"])
def test_a_line_of_any_white_space_is_passed_over_by_every_reader(data, tmp_path, capsys, blank):
    folder, ss = data
    pred = write_jsonl(tmp_path / "run.jsonl", run_rows(ss))
    want = json.loads(json.dumps(score_files(folder, [pred], bootstrap=40, write=False)[0].result["metrics"]))
    for path, items in ((pred, run_rows(ss)), (folder / "sessions.jsonl", ss)):
        ls = lines_of(items)
        path.write_text("\n".join([ls[0], blank, *ls[1:], blank]) + "\n", encoding="utf-8")
    copy = tmp_path / "run-copy.jsonl"  # (compare refuses one file given as both runs)
    copy.write_bytes(pred.read_bytes())
    for argv in (["validate", str(folder), str(pred)], ["stats", str(folder)],
                 ["compare", str(folder), str(pred), str(copy), "--bootstrap", "0"],
                 ["score", str(folder), str(pred), "--bootstrap", "40"]):
        assert main(argv) == 0, (argv, capsys.readouterr().err)
    assert json.loads((tmp_path / "run.score.json").read_text(encoding="utf-8"))["metrics"] == want


def test_rows_left_out_of_a_file_holding_carriage_returns_are_named_at_the_strict_readers_lines(data, tmp_path, capsys):
    folder, ss = data
    ls = [line.replace(", ", ",\r ") for line in lines_of(run_rows(ss))]  # blanks between tokens: no line ends
    ls.insert(3, ls[2])  # a second row for a turn, on line 4
    ls.append(json.dumps({"session_id": "elsewhere", "i": 0, "pred": "t1", "via": "\u2028\x85"}, ensure_ascii=False))
    pred = tmp_path / "cr.jsonl"
    pred.write_bytes("\r\n".join(ls).encode("utf-8") + b"\r\n")
    assert main(["validate", str(folder), str(pred)]) == 2
    assert errors_of(capsys.readouterr().err)[0].startswith(f"error: {pred}:4: i: duplicate row ")
    assert main(["score", str(folder), str(pred), "--bootstrap", "0"]) == 2
    (error,) = errors_of(capsys.readouterr().err)
    assert error.startswith(f"error: {pred}:4: i: second row for session ") and "(first on line 3)" in error
    assert main(["score", str(folder), str(pred), "--bootstrap", "0", "--allow-duplicates"]) == 0
    left_out = json.loads((tmp_path / "cr.score.json").read_text(encoding="utf-8"))["not_scored"]
    assert sorted((x["line"], x["reason"]) for x in left_out) == [(3, "duplicate"), (len(ls), "unknown session")]


# --- any layout of lines: the array readers take what the strict readers take ------------------------


@st.composite
def layouts(draw, n: int):
    """How ``n`` records are written as lines: each line's blanks and break, blank lines between,
    and now and then two records on one line or one over two."""
    parts = []
    odd = draw(st.booleans())  # half the files hold no line but of one record: both readers take them
    for k in range(n):
        how = draw(st.sampled_from(["line"] * 6 + ["joined", "split"])) if k and odd else "line"
        parts.append((how, draw(st.sampled_from(["", " ", "\t"])), draw(st.sampled_from(["", " ", "\r"])),
                      draw(st.sampled_from(["\n", "\r\n", "\r"])), draw(st.sampled_from([""] * 4 + ["\n", " \n", "\r\n", "\u00a0\n", "\x1e\n"]))))
    return parts, draw(st.booleans()), draw(st.sampled_from([64, 200, 4096]))


def write_layout(path: Path, texts: list[str], parts: list[tuple], last_break: bool) -> None:
    out = []
    for text, (how, before, after, end, blank) in zip(texts, parts):
        if how == "joined" and out:
            out[-1] = out[-1].rstrip("\r\n") + before
        elif how == "split":
            text = text.replace(', "', ",\n" + before + '"', 1)
        out.append(blank + before + text + after + end)
    body = "".join(out)
    path.write_bytes((body if last_break else body.rstrip("\r\n")).encode("utf-8"))


def strictly(read, path: Path) -> bool:
    try:
        read(path)
    except InputError:
        return False
    return True


@SETTINGS
@given(layouts(24))
def test_the_predictions_array_reader_takes_a_file_exactly_when_the_strict_reader_does(layout):
    parts, last_break, block = layout
    ss = many_sessions(4, turns=6)
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(datafile, "BLOCK_BYTES", block)
        data = write_jsonl(Path(tmp) / "sessions.jsonl", ss)
        pred = Path(tmp) / "run.jsonl"
        write_layout(pred, lines_of(run_rows(ss)), parts, last_break)
        (run,), _ = score_run_blocks(data, [pred], "dev", None)
        assert (run is not None) == strictly(read_predictions_fast, pred)


@SETTINGS
@given(layouts(5))
def test_the_data_pass_takes_a_sessions_file_exactly_when_the_strict_reader_does(layout):
    parts, last_break, block = layout
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(datafile, "BLOCK_BYTES", block)
        data = Path(tmp) / "sessions.jsonl"
        write_layout(data, lines_of(many_sessions(5, turns=3)), parts, last_break)
        assert strictly(data_fingerprint, data) == strictly(read_sessions_fast, data)
