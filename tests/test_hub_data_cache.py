"""The copy of a Hub revision or an exported folder that commands read (``hub-data/.../sessions.jsonl``)
is used only while it holds the source's sessions: every use checks it against the source's
fingerprint, and a copy that was edited, cut short or left half-written by a killed run is written
anew from the source; one that cannot be rewritten is refused in one line saying how to clear it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import _board_util as b
import _hub_util as u
from _hub_util import hub  # noqa: F401  (the fixture)

DATA_REPO = "org/ib"
HUB_DATA = f"hub:{DATA_REPO}@v0.1"


@pytest.fixture
def published(hub, tmp_path, capsys, monkeypatch):
    """``(data folder, exported folder, {run: predictions file})``, the export pushed as ``v0.1``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INTERLEAVE_HUB_DATA", raising=False)
    data, preds = b.baselines(tmp_path / "data")
    out = tmp_path / "ex"
    assert u.cli(["export", "--v0", str(data), "--out", str(out)], capsys)[0] == 0
    code, _, err = u.cli(["push", str(out), "--repo", DATA_REPO, "--revision", "v0.1"], capsys)
    assert code == 0, err
    return data, out, preds


def _score(capsys, data: str, pred: Path) -> dict:
    code, out, err = u.cli(["score", data, str(pred), "--json", "--bootstrap", "40", "--split", "all"], capsys)
    assert code == 0, err
    return json.loads(out)


def _cached(pattern: str) -> Path:
    found = sorted(Path("hub-data").glob(pattern))
    assert len(found) == 1, found
    return found[0]


def _cut(path: Path) -> None:
    path.write_text("".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:3]), encoding="utf-8")


def _torn(path: Path) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


def _edited(path: Path) -> None:
    # every message's text the same: still valid sessions, but not the published ones
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        for t in r["turns"]:
            t["text"] = "the same words everywhere"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _emptied(path: Path) -> None:
    path.write_bytes(b"")
    (path.parent / "source.json").unlink()


@pytest.mark.parametrize("tamper", [_cut, _torn, _edited, _emptied])
@pytest.mark.parametrize("source", ["hub", "export"])
def test_a_cached_copy_that_is_not_the_sources_is_written_anew(published, capsys, tamper, source):
    data, exported, preds = published
    given = HUB_DATA if source == "hub" else str(exported)
    pattern = "org__ib/v0@*/sessions.jsonl" if source == "hub" else "export/ex__v0@*/sessions.jsonl"
    honest = _score(capsys, given, preds["closed-bm25"])
    assert honest["counts"]["sessions"] == 10
    cache = _cached(pattern)
    tamper(cache)
    again = _score(capsys, given, preds["closed-bm25"])
    for key in ("metrics", "counts", "outcomes"):
        assert again[key] == honest[key], key
    assert again["provenance"]["data_sha256"] == honest["provenance"]["data_sha256"]
    assert _cached(pattern) == cache  # the same folder, its copy written anew
    from interleave_bench.score.datafile import data_fingerprint

    assert data_fingerprint(cache) == honest["provenance"]["data_sha256"]
    assert json.loads((cache.parent / "source.json").read_text())["fingerprint"] == honest["provenance"]["data_sha256"]


def test_a_copy_that_cannot_be_rewritten_is_refused_in_one_line_saying_how_to_clear_it(published, capsys):
    data, exported, preds = published
    _score(capsys, HUB_DATA, preds["closed-stay"])
    cache = _cached("org__ib/v0@*/sessions.jsonl")
    cache.unlink()
    cache.mkdir()  # what no rewrite can replace
    (cache / "x").write_text("x")
    code, out, err = u.cli(["score", HUB_DATA, str(preds["closed-stay"])], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {cache}: ") and f"remove the folder {cache.parent}" in err, err
    assert "Traceback" not in err
    # cleared as it says, the next run writes it anew
    import shutil

    shutil.rmtree(cache.parent)
    assert _score(capsys, HUB_DATA, preds["closed-stay"])["counts"]["sessions"] == 10


def test_a_copy_that_is_a_link_to_another_file_is_replaced_and_that_file_left_alone(published, capsys, tmp_path):
    data, exported, preds = published
    honest = _score(capsys, str(exported), preds["closed-stay"])
    cache = _cached("export/ex__v0@*/sessions.jsonl")
    mine = tmp_path / "mine.jsonl"
    mine.write_text("".join(cache.read_text(encoding="utf-8").splitlines(keepends=True)[:2]), encoding="utf-8")
    kept = mine.read_bytes()
    cache.unlink()
    cache.symlink_to(mine)
    assert _score(capsys, str(exported), preds["closed-stay"])["counts"] == honest["counts"]
    assert not cache.is_symlink() and mine.read_bytes() == kept


#: a run killed while it writes a cached copy anew: at the rename of the written file into place
KILLED_AT_RENAME = """
import os, signal, sys
real = os.replace
def replace(src, dst, *a, **kw):
    if str(dst).endswith("sessions.jsonl"):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst, *a, **kw)
os.replace = replace
from interleave_bench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_run_killed_while_it_rewrites_the_copy_leaves_nothing_taken_as_complete(published, hub, capsys, tmp_path):
    data, exported, preds = published
    honest = _score(capsys, HUB_DATA, preds["closed-bm25"])
    cache = _cached("org__ib/v0@*/sessions.jsonl")
    _cut(cache)
    env = {**os.environ, **hub.env, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", u.LOOPBACK_GUARD + KILLED_AT_RENAME, "score", HUB_DATA,
                           str(preds["closed-bm25"]), "--json"], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    # the written file never took the copy's name, and the mark of a complete copy is gone
    assert len(cache.read_text(encoding="utf-8").splitlines()) == 3
    assert not (cache.parent / "source.json").exists()
    again = _score(capsys, HUB_DATA, preds["closed-bm25"])
    assert again["counts"] == honest["counts"] and again["metrics"] == honest["metrics"]
    assert (cache.parent / "source.json").is_file()


def test_sessions_that_a_written_copy_cannot_hold_are_refused_not_scored_as_something_else(hub, tmp_path, capsys,
                                                                                           monkeypatch):
    # a message holding the value of a secret of the environment: every file is written without it
    monkeypatch.chdir(tmp_path)
    data, preds = b.baselines(tmp_path / "data")
    rows = [json.loads(line) for line in (data / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[0]["turns"][0]["text"] = "the key in the log reads sk-proj-" + "Q" * 40
    (data / "sessions.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                         encoding="utf-8")
    assert u.cli(["export", "--v0", str(data), "--out", str(tmp_path / "ex")], capsys)[0] == 0
    code, _, err = u.cli(["push", str(tmp_path / "ex"), "--repo", DATA_REPO, "--revision", "v0.1"], capsys)
    assert code == 0, err
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-" + "Q" * 40)
    code, out, err = u.cli(["score", HUB_DATA, str(preds["closed-stay"])], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("error: hub-data/org__ib/v0@") and "does not read back as its sessions" in err, err


#: holds the copy's lock from its "held" line until its stdin closes (a barrier both ways, not a
#: sleep that a slow machine could outlast)
HOLD_LOCK = """
import sys
from interleave_bench.locks import exclusive_output
with exclusive_output(sys.argv[1], "interleave-bench route (holding the copy)"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_copy_another_run_is_writing_is_refused_naming_that_run(published, capsys, tmp_path):
    data, exported, preds = published
    honest = _score(capsys, HUB_DATA, preds["closed-stay"])
    cache = _cached("org__ib/v0@*/sessions.jsonl")
    _cut(cache)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(cache)], env=env, cwd=tmp_path,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        code, out, err = u.cli(["score", HUB_DATA, str(preds["closed-stay"])], capsys)
        assert code == 2 and err.count("\n") == 1, err
        assert err.startswith(f"error: {cache}: another run is writing it (pid {holder.pid}: "), err
    finally:
        holder.stdin.close()  # the holder lets go of the lock and ends
        try:
            holder.wait(timeout=60)  # (a safety net for a hung holder, not a timing the test rests on)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()
    assert _score(capsys, HUB_DATA, preds["closed-stay"])["counts"] == honest["counts"]
