"""One writer per file, by any name: hard links, a file its writer makes or puts in its place.

Two writers meet through barriers (events a child process sets and waits on), never sleeps.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from interleave_bench.cli import main
from interleave_bench.errors import UsageError
from interleave_bench.io import JsonlAppender, atomic_write_text
from interleave_bench.locks import OTHER_NAME, exclusive_output, lock_path

from _lock_util import Holder, StoppedRoute
from _route_util import standard_sessions, write_data

ROOT = Path(__file__).resolve().parents[1]


def _refused_everywhere(name: Path) -> None:
    """Every writer of ``name`` is refused with the one line of a second writer."""
    with pytest.raises(UsageError, match="another run is writing it"):
        with exclusive_output(name, "second"):
            pass
    with pytest.raises(UsageError, match="another run is writing it"):
        JsonlAppender(name)
    with pytest.raises(UsageError, match="another run is writing it"):
        atomic_write_text(name, "second\n")


def test_a_hard_link_to_the_output_is_the_same_output(tmp_path):
    a = tmp_path / "a.jsonl"
    a.write_text("first\n", encoding="utf-8")
    (tmp_path / "other").mkdir()
    h = tmp_path / "other" / "h.jsonl"  # another name, in another folder
    os.link(a, h)
    with Holder(tmp_path / "sub" / ".." / "a.jsonl"):  # (a path of its own to the same name)
        with pytest.raises(UsageError, match=f"{h}: another run is writing it \\({OTHER_NAME}\\)"):
            with exclusive_output(h, "second"):
                pass
        _refused_everywhere(h)
    assert a.read_text(encoding="utf-8") == "first\n" and os.path.samefile(a, h)  # nothing got through
    assert not lock_path(h).exists() and not lock_path(a).exists()
    with exclusive_output(h, "after"):  # released with its holder
        pass


def test_a_file_its_writer_made_is_locked_under_a_name_it_gets_later(tmp_path):
    a = tmp_path / "a.jsonl"
    with Holder(a, "append"):  # not there when it took the lock: its appender made it
        h = tmp_path / "h.jsonl"
        os.link(a, h)
        _refused_everywhere(h)
    assert a.read_text(encoding="utf-8") == '{"by":"holder"}\n'


def test_a_file_put_in_the_outputs_place_stays_locked_under_every_name(tmp_path):
    a = tmp_path / "a.jsonl"
    a.write_text("old\n", encoding="utf-8")
    with Holder(a, "replace"):  # an atomic write: a new file (a new inode) in a's place
        h = tmp_path / "h.jsonl"
        os.link(a, h)  # a name of the new file
        _refused_everywhere(h)
    assert a.read_text(encoding="utf-8") == '{"by":"holder"}\n'


_PROBE = ("import sys; from interleave_bench.locks import exclusive_output\n"
          "try:\n    with exclusive_output(sys.argv[1], 'other'): pass\n"
          "except Exception as exc: print(exc); sys.exit(3)\n")


def test_a_process_writing_one_file_under_two_names_keeps_it_locked_till_its_last_block(tmp_path):
    a = tmp_path / "a.jsonl"
    a.write_text("", encoding="utf-8")
    h = tmp_path / "h.jsonl"
    os.link(a, h)
    with exclusive_output(a, "first"):
        with exclusive_output(h, "same process"):  # this process's own lock: no refusal
            pass
        proc = subprocess.run([sys.executable, "-c", _PROBE, str(h)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.returncode == 3 and OTHER_NAME in proc.stdout, proc


def test_two_routes_into_hard_links_of_one_file_one_is_refused_at_once(tmp_path, capsys):
    data = write_data(tmp_path / "data", standard_sessions()[:2])
    a, h = tmp_path / "a.jsonl", tmp_path / "h.jsonl"
    a.touch()
    os.link(a, h)
    args = ["route", str(data), "--mode", "closed", "--policy", "stay", "--split", "all"]
    with StoppedRoute(data, a):  # a run into a, in its first call: it holds its lock
        assert main(args + ["--out", str(h)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"{h}: another run is writing it" in err[0], err
    assert a.read_text(encoding="utf-8") == "" and os.path.samefile(a, h)  # the refused run wrote nothing
    assert main(args + ["--out", str(h)]) == 0
    assert main(args + ["--out", str(a)]) == 0  # the same file, finished: nothing appended twice
    lines = h.read_text(encoding="utf-8").splitlines()
    assert len(lines) == sum(len(s["turns"]) for s in standard_sessions()[:2])
