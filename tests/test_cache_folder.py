"""A cache folder that cannot hold the cache (a file, a device, a folder that cannot be made or
written) is one line naming how it was given (``INTERLEAVE_CACHE=VALUE``, ``--cache DIR``), the
problem and what to do, exit 2, before any call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from interleave_bench.errors import UsageError
from interleave_bench.llm.cache import WITHOUT_IT, ResponseCache
from interleave_bench.llm.session import cache_dir_from, cache_dir_named

from _route_util import standard_sessions, write_data

ROOT = Path(__file__).resolve().parents[1]
NOT_A_FOLDER = "is not a folder (a file or device is there, or on its path), so it cannot hold the response cache"


def _dry_route(data: Path, tmp_path: Path, env_cache: str | None, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "INTERLEAVE_CACHE"}
    env.update(PYTHONPATH=str(ROOT), INTERLEAVE_NO_PROGRESS="1")
    if env_cache is not None:
        env["INTERLEAVE_CACHE"] = env_cache
    return subprocess.run([sys.executable, "-m", "interleave_bench.cli", "route", str(data), "--mode", "closed",
                           "--policy", "llm", "--dry-run", "--split", "all", "--out", str(tmp_path / "out.jsonl"),
                           *args], capture_output=True, text=True, env=env, cwd=tmp_path)


@pytest.mark.parametrize("where", ["/dev/null", "file", "under-a-file"])
def test_interleave_cache_naming_no_folder_is_one_line_naming_it(tmp_path, where):
    data = write_data(tmp_path / "data", standard_sessions()[:1])
    (tmp_path / "file").write_text("not a folder\n", encoding="utf-8")
    value = {"/dev/null": "/dev/null", "file": str(tmp_path / "file"),
             "under-a-file": str(tmp_path / "file" / "cache")}[where]
    proc = _dry_route(data, tmp_path, value)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"error: INTERLEAVE_CACHE={value}: {NOT_A_FOLDER}: {WITHOUT_IT}"]
    assert not (tmp_path / "out.jsonl").exists()  # refused before any work
    assert (tmp_path / "file").read_text(encoding="utf-8") == "not a folder\n"


def test_the_cache_option_is_named_as_given_and_wins_over_the_variable(tmp_path, monkeypatch):
    data = write_data(tmp_path / "data", standard_sessions()[:1])
    proc = _dry_route(data, tmp_path, str(tmp_path / "fine"), "--cache", "/dev/null")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"error: --cache /dev/null: {NOT_A_FOLDER}: {WITHOUT_IT}"]
    monkeypatch.delenv("INTERLEAVE_CACHE", raising=False)
    assert cache_dir_named(None) == (".cache", ".cache") and cache_dir_from(None) == ".cache"
    monkeypatch.setenv("INTERLEAVE_CACHE", "/x")
    assert cache_dir_named(None) == ("/x", "INTERLEAVE_CACHE=/x") and cache_dir_from("y") == "y"


def test_a_folder_that_cannot_be_made_or_written_says_so(tmp_path, monkeypatch):
    """The system's refusals, which root does not meet on a folder of its own, made by hand."""
    def refuse(self, *a, **kw):
        raise PermissionError(13, "Permission denied", str(self))

    with monkeypatch.context() as m:
        m.setattr(Path, "mkdir", refuse)
        with pytest.raises(UsageError) as exc:
            ResponseCache(tmp_path / "new", "INTERLEAVE_CACHE=new")
    assert str(exc.value) == ("INTERLEAVE_CACHE=new: cannot be made a folder (permission denied), so it cannot hold "
                              f"the response cache: {WITHOUT_IT}")
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    with pytest.raises(UsageError, match="^INTERLEAVE_CACHE=ro: is a folder that cannot be written, so it cannot"):
        ResponseCache(tmp_path, "INTERLEAVE_CACHE=ro")
