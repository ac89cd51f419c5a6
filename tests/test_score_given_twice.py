"""One run given twice to ``score`` or ``report`` (the same path, a symlink to it, a folder holding it
or a hard link to it) is refused in one line, exit 2, before anything is read, whatever the command
writes: score files beside the runs, ``--out``, ``--json``, a page."""

from __future__ import annotations

from pathlib import Path

import pytest

from interleave_bench.errors import UsageError
from interleave_bench.score.run import score_files

from _cli_util import run_cli
from _score_util import many_sessions, oracle_rows, write_jsonl

#: how the second of two names reaches the run ``S/a.jsonl``
SPELLINGS = ("the same path", "a symlink", "a folder holding a hard link")

#: what the command writes, as its options say it
WRITES = {
    "score beside the runs": ("score",),
    "score --json": ("score", "--json"),
    "score --out": ("score", "--out", "{out}/a.score.json"),
    "report --html": ("report", "--html", "{out}/r.html"),
}


@pytest.fixture
def runs(tmp_path):
    """The data file, and ``S/a.jsonl`` and its second name for each spelling."""
    ss = many_sessions(4, split_every=2)
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    folder = tmp_path / "S"
    folder.mkdir()
    a = write_jsonl(folder / "a.jsonl", oracle_rows(ss, "closed"))
    (folder / "link.jsonl").symlink_to(a.name)
    hard = tmp_path / "H"
    hard.mkdir()
    (hard / "a.jsonl").hardlink_to(a)
    (hard / "b.jsonl").hardlink_to(a)
    return data, {
        "the same path": ([a, a], f"{a} and {a}"),
        "a symlink": ([a, folder / "link.jsonl"], f"{a} and {folder / 'link.jsonl'}"),
        "a folder holding a hard link": ([hard / "a.jsonl", hard], f"{hard / 'a.jsonl'} and {hard / 'a.jsonl'}"),
    }


@pytest.mark.parametrize("spelled", SPELLINGS)
@pytest.mark.parametrize("writes", WRITES)
def test_one_run_given_twice_is_refused_in_one_line(runs, tmp_path, capsys, writes, spelled):
    data, spellings = runs
    given, named = spellings[spelled]
    out = tmp_path / "out"
    command, *options = (o.format(out=out) for o in WRITES[writes])
    before = sorted(tmp_path.rglob("*"))
    code, stdout, err = run_cli(capsys, command, data, *given, "--bootstrap", 0, *options)
    assert (code, stdout) == (2, "")
    assert err == f"error: {command}: {named} are one predictions file, given twice: give it once\n"
    assert sorted(tmp_path.rglob("*")) == before  # no score file, page or lock file written


def test_a_folder_holding_a_run_and_a_hard_link_to_it_is_refused(runs, capsys):
    data, _ = runs
    hard = data.parent / "H"
    code, _, err = run_cli(capsys, "score", data, hard, "--json", "--bootstrap", 0)
    assert code == 2
    assert err == (f"error: score: {hard / 'a.jsonl'} and {hard / 'b.jsonl'} are one predictions file, "
                   "given twice: give it once\n")


@pytest.mark.parametrize("command", ["score", "report"])
def test_it_is_refused_before_the_data_is_read(runs, tmp_path, capsys, command):
    """The data named is no file at all: the run given twice is said first."""
    _, spellings = runs
    given, named = spellings["a symlink"]
    html = ("--html", tmp_path / "r.html") if command == "report" else ("--json",)
    code, _, err = run_cli(capsys, command, tmp_path / "no-such-data", *given, "--bootstrap", 0, *html)
    assert code == 2
    assert err == f"error: {command}: {named} are one predictions file, given twice: give it once\n"


def test_score_files_refuses_it_from_python(runs):
    data, spellings = runs
    given, named = spellings["a symlink"]
    with pytest.raises(UsageError, match=f"^score: {named} are one predictions file"):
        score_files(data, given, bootstrap=0, write=False)


def test_two_runs_of_one_name_in_two_folders_are_two_runs(runs, tmp_path, capsys):
    """Only one file given twice is refused: ``S/a.jsonl`` and a copy of it elsewhere score side by side."""
    data, spellings = runs
    [a, _] = spellings["the same path"][0]
    copy = tmp_path / "T" / "a.jsonl"
    copy.parent.mkdir()
    copy.write_bytes(Path(a).read_bytes())
    code, stdout, err = run_cli(capsys, "score", data, a, copy, "--json", "--bootstrap", 0)
    assert code == 0, err
    assert stdout.count('"system": "a"') == 2
