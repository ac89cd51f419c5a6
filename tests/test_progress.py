"""Progress bars: drawn by tqdm on a terminal, nothing (and no tqdm) off one."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

from interleave_bench import progress as progress_mod
from interleave_bench.progress import progress

from _foundation_util import session


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_the_bar_iterates_updates_and_draws_nothing(monkeypatch, capsys):
    monkeypatch.delenv("INTERLEAVE_NO_PROGRESS", raising=False)
    assert list(progress([1, 2, 3], desc="x")) == [1, 2, 3]
    with progress(total=2, desc="y") as bar:
        bar.update()
        bar.set_postfix(done=1)
    progress(total=1).close()
    assert list(progress()) == []
    assert capsys.readouterr().err == ""


def test_on_a_terminal_tqdm_draws_the_bar_on_stderr(monkeypatch):
    terminal = _Terminal()
    monkeypatch.delenv("INTERLEAVE_NO_PROGRESS", raising=False)
    monkeypatch.setattr(sys, "stderr", terminal)
    assert progress_mod.progress_enabled()
    with progress(total=2, desc="score", unit="session") as bar:
        bar.update(2)
    assert type(bar).__module__.startswith("tqdm") and "score" in terminal.getvalue()
    monkeypatch.setenv("INTERLEAVE_NO_PROGRESS", "1")
    assert not progress_mod.progress_enabled()


def test_a_command_off_a_terminal_never_imports_tqdm(tmp_path):
    data = tmp_path / "sessions.jsonl"
    data.write_text(json.dumps(session()) + "\n", encoding="utf-8")
    code = ("import sys\nfrom interleave_bench.cli import main\n"
            f"code = main(['validate', {str(data)!r}])\n"
            "print(code, 'tqdm' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "INTERLEAVE_NO_PROGRESS": "1"})
    assert done.stdout.strip().splitlines()[-1] == "0 False", done.stderr


def test_call_counts_are_written_with_thousands_separators():
    from types import SimpleNamespace

    from interleave_bench.llm.client import RunStats
    from interleave_bench.progress import summary_line

    stats = RunStats(calls=2889, cached=1200, failed=1001)
    assert stats.line("m").startswith("model m: 2,889 paid calls, 1,200 from cache, 1,001 failed; ")
    line = summary_line("route x", {"sessions": 3}, 1.0, SimpleNamespace(stats=stats))
    assert "; 2,889 paid calls, 1,200 cached, 1,001 failed; " in line
