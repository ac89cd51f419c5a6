"""``import irc`` refuses what is not the corpus: a link to a later message, a binary or non-text log,
numbers no log has; each one line naming file, line and field, exit 2, the output folder untouched."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from interleave_bench.cli import main

HAND = Path(__file__).parent / "data" / "irc"
NAME = "2000-01-01_00.annotation.txt"
LOG = "2000-01-01_00.ascii.txt"


def corpus(tmp_path: Path) -> Path:
    d = tmp_path / "corpus" / "dev"
    shutil.copytree(HAND / "dev", d)
    return d


def run_import(tmp_path: Path, capsys) -> tuple[int, str]:
    code = main(["import", "irc", str(tmp_path / "corpus"), "--out", str(tmp_path / "out")])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("annotation, expect", [
    ("5 3 -\n", f"{NAME}:1: B: message 3 cannot reply to the later message 5"),
    ("0 3 -\n" + "1 " + "9" * 5000 + " -\n", f"{NAME}:2: B: message 99999999999999999999... is past the end of the log"),
    ("0 3 -\n0 ３ -\n", f"{NAME}:2: link: not ASCII text"),
    ("0 3 -\n" + "x" * 10_000 + " 1 -\n", f"{NAME}:2: A: expected a message number, got 'xxxx"),
])
def test_a_link_no_corpus_has_is_one_line(tmp_path, capsys, annotation, expect):
    d = corpus(tmp_path)
    (d / NAME).write_text(annotation, encoding="utf-8")
    code, err = run_import(tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and expect in err, err
    assert len(err) < 400  # the bad line is shown cut, never whole
    assert not (tmp_path / "out" / "sessions.jsonl").exists()


@pytest.mark.parametrize("content, expect", [
    (b"[00:00] <ann> hi\n\x00\x01\x02\xff\xfe binary\n", f"{LOG}:2: holds a NUL byte: a binary file"),
    (b"[00:00] <ann> hi\n[00:01] <bob> caf\xe9\n", f"{LOG}:2: not UTF-8 text"),
])
def test_a_log_that_is_not_text_is_one_line(tmp_path, capsys, content, expect):
    d = corpus(tmp_path)
    lines = (d / LOG).read_bytes().splitlines(keepends=True)
    (d / LOG).write_bytes(content + b"".join(lines[2:]))
    code, err = run_import(tmp_path, capsys)
    assert code == 2 and err.count("\n") == 1 and expect in err, err
    assert not (tmp_path / "out" / "sessions.jsonl").exists()


def test_the_corpus_as_shipped_still_imports(tmp_path, capsys):
    corpus(tmp_path)
    code, err = run_import(tmp_path, capsys)
    assert code == 0, err
    assert (tmp_path / "out" / "sessions.jsonl").is_file()
    assert [p.name for p in (tmp_path / "out").iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("blank", ["", "   ", "[10:02] "])
def test_a_blank_annotated_message_is_one_line(tmp_path, capsys, blank):
    """An annotated message on a blank log line (the corpus's own tools refuse one) is named by its
    log line, counted from 1; a line outside the annotations may be blank."""
    d = corpus(tmp_path)
    lines = (d / LOG).read_text(encoding="utf-8").splitlines()
    lines[6] = blank  # message 6, annotated
    lines[1] = ""  # message 1, not annotated: no matter
    (d / LOG).write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, err = run_import(tmp_path, capsys)
    assert code == 2 and err == f"error: {d / LOG}:7: message 6 is a blank line: an annotated message has text\n", err
    assert not (tmp_path / "out" / "sessions.jsonl").exists()


@pytest.mark.parametrize("file", [LOG, NAME])
def test_a_log_or_annotation_starting_with_a_bom_is_one_line(tmp_path, capsys, file):
    """A UTF-8 byte order mark is refused in the log as in its annotations (and as in a JSON input),
    never taken for the first message's text: a log annotated from line 0 lost its time stamp and
    speaker to it."""
    d = corpus(tmp_path)
    (d / NAME).write_text("0 0 -\n" + (d / NAME).read_text(encoding="utf-8"), encoding="utf-8")  # line 0 annotated
    (d / file).write_bytes(b"\xef\xbb\xbf" + (d / file).read_bytes())
    code, err = run_import(tmp_path, capsys)
    assert code == 2 and err == f"error: {d / file}:1: starts with a UTF-8 byte order mark (BOM): save it as UTF-8 " \
                                 "without one\n", err
    assert not (tmp_path / "out" / "sessions.jsonl").exists()


def test_line_zero_annotated_imports_with_its_speaker(tmp_path, capsys):
    d = corpus(tmp_path)
    (d / NAME).write_text("0 0 -\n" + (d / NAME).read_text(encoding="utf-8"), encoding="utf-8")
    code, err = run_import(tmp_path, capsys)
    assert code == 0, err
    first = json.loads((tmp_path / "out" / "sessions.jsonl").read_text(encoding="utf-8").splitlines()[0])["turns"][0]
    assert (first["line"], first["speaker"], first["text"]) == (0, "alice", "<alice> anyone know how to reinstall grub?")
