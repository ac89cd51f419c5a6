"""The data a harness task reads: a data folder, an exported dataset folder, a Hub revision.

All three give the same sessions (the same fingerprint, on the records); bad input is the
project's one-line error. Needs neither harness: the loader is the project's.
"""

from __future__ import annotations

import pytest

import _hub_util as u
from _hub_util import hub  # noqa: F401  (the fixture)
from interleave_bench.errors import InputErrors, UsageError
from interleave_bench.harness.data import load
from interleave_bench.io import read_sessions

from _harness_util import small_data


def test_folder_export_and_hub_revision_give_the_same_sessions(hub, tmp_path, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("INTERLEAVE_HUB_DATA", str(tmp_path / "hub-data"))
    data = small_data(tmp_path / "data")
    code, _, err = u.cli(["export", "--v0", str(data), "--out", str(tmp_path / "exported")], capsys)
    assert code == 0, err
    code, _, err = u.cli(["push", str(tmp_path / "exported"), "--repo", "org/interleavebench", "--revision", "v0.1"],
                         capsys)
    assert code == 0, err
    every = read_sessions(data / "sessions.jsonl")
    for split in ("dev", "test", "all"):
        want = [s for s in every if split == "all" or s.split == split]
        got = [load(src, split) for src in (data, data / "sessions.jsonl", tmp_path / "exported",
                                            f"{tmp_path / 'exported'}#v0", "hub:org/interleavebench@v0.1")]
        assert {g.fingerprint for g in got} == {load(data, split).fingerprint}
        for g in got:
            assert sorted(s.session_id for s in g.sessions) == sorted(s.session_id for s in want)


def test_bad_data_is_the_project_s_error(tmp_path, capsys):
    with pytest.raises(Exception) as missing:
        load(tmp_path / "nowhere", "dev")
    assert "no such file or folder" in str(missing.value)
    data = small_data(tmp_path / "data")
    with pytest.raises(UsageError, match="split must be one of dev, test, all, got 'test-ish'"):
        load(data, "test-ish")
    only_dev = tmp_path / "dev-only"
    small_data(only_dev)
    rows = (only_dev / "sessions.jsonl").read_text().splitlines()
    (only_dev / "sessions.jsonl").write_text("\n".join(r for r in rows if '"split": "test"' not in r) + "\n")
    with pytest.raises(UsageError, match="no sessions in split 'test'"):
        load(only_dev, "test")
    text = (data / "sessions.jsonl").read_text().splitlines()
    (data / "sessions.jsonl").write_text("\n".join([text[0].replace('"lang": "en"', '"lang": 5'), *text[1:]]) + "\n")
    code, _, err = u.cli(["export", "--v0", str(small_data(tmp_path / "good")), "--out", str(tmp_path / "exp")], capsys)
    assert code == 0, err
    with pytest.raises(UsageError, match="no Parquet files of config 'v1'"):
        load(f"{tmp_path / 'exp'}#v1", "dev")
    with pytest.raises(InputErrors) as bad:
        load(data, "dev")
    assert "sessions.jsonl:1: lang" in str(bad.value.errors[0].format())


def test_import_inspect_without_the_extra_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "inspect_ai" else real(name, *a))
    code, out, err = u.cli(["import", "inspect", str(tmp_path / "x.eval"), "--out", str(tmp_path / "p.jsonl")], capsys)
    assert code == 2 and out == ""
    assert err == "error: import inspect needs inspect-ai: pip install 'interleave-bench[harness]'\n"


def test_lm_eval_tasks_prints_the_shipped_folder(capsys):
    from interleave_bench.harness.names import TASKS_DIR

    code, out, _ = u.cli(["lm-eval-tasks"], capsys)
    assert code == 0 and out == f"{TASKS_DIR}\n"
    assert (TASKS_DIR / "interleavebench" / "interleavebench_closed.yaml").is_file()


def test_closed_mode_on_open_only_data_names_each_harness_s_own_open_mode(tmp_path, capsys):
    """IRC data is open-only: the refusal tells inspect's user ``-T mode=open`` and lm-eval's (a
    closed-only task) the inspect task's, never ``route``'s ``--mode open``, which neither takes."""
    from pathlib import Path

    from interleave_bench.harness.lmeval import load_docs
    from interleave_bench.irc import import_irc

    irc = tmp_path / "irc"
    import_irc(Path(__file__).parent / "data" / "irc", irc)
    head = f"error: {irc}: session 'irc-2000-01-01_00' is open-only (its conversations are not known up front): " \
           "closed mode does not apply, use "
    with pytest.raises(UsageError) as refused:
        load(irc, "all", "closed")
    assert f"error: {refused.value}" == head + "-T mode=open"
    assert [s.session_id for s in load(irc, "all", "open").sessions] == ["irc-2000-01-01_00"]

    with pytest.raises(SystemExit) as stopped:
        load_docs(str(irc), split="all")
    assert stopped.value.code == 2
    assert capsys.readouterr().err == head + "the inspect task's -T mode=open (the lm-eval task is closed mode only)\n"

    inspect_ai = pytest.importorskip("inspect_ai")
    from interleave_bench.harness.inspect_registry import routing

    with pytest.raises(inspect_ai._util.error.PrerequisiteError) as task_refused:
        routing(data=str(irc), mode="closed", split="all")
    assert str(task_refused.value) == head + "-T mode=open"
    assert "--mode" not in str(task_refused.value)
