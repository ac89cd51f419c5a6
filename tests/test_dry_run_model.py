"""``--dry-run`` answers with the fake model, so a ``--model`` naming another model is refused before
any work: its name would go on the fake model's answers (the output file, every row, the cost
line's prices), and a facts run would resume that model's real results file."""

from __future__ import annotations

import pytest

from interleave_bench.cli import main
from interleave_bench.llm.provider import FAKE_MODEL, dry_run_model, run_model

from _facts_util import session as v1_session, write_data as write_v1
from _route_util import standard_sessions, write_data as write_v0

REFUSAL = ("error: --dry-run answers with the project's fake model (fake-model), and --model deepseek-chat would put "
           "deepseek-chat's name on its answers: drop --model, or drop --dry-run to call deepseek-chat")


def _files(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.mark.parametrize("command", [
    ["route", "{v0}", "--mode", "closed", "--policy", "llm"],
    ["route", "{v0}", "--mode", "open", "--policy", "hybrid", "--sweep-threshold", "0.5"],
    ["facts", "{v1}"],
    ["mid-reply", "--lang", "en"],
    ["generate", "--sessions", "1", "--out", "{root}/gen"],
])
def test_a_dry_run_naming_another_model_is_refused_before_any_work(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    v0 = write_v0(tmp_path / "v0", standard_sessions()[:1])
    v1 = write_v1(tmp_path / "v1", [v1_session("en-0001")])
    before = _files(tmp_path)
    args = [a.format(v0=v0, v1=v1, root=tmp_path) for a in command]
    assert main([*args, "--dry-run", "--model", "deepseek-chat"]) == 2
    assert capsys.readouterr().err.strip() == REFUSAL
    assert _files(tmp_path) == before  # no output, no lock, no cache


def test_the_fake_model_s_own_name_is_a_dry_run_s_model():
    assert dry_run_model(None) == dry_run_model(FAKE_MODEL) == FAKE_MODEL
    assert run_model(None, True) == run_model(FAKE_MODEL, True) == FAKE_MODEL
    assert run_model("m1", False) == "m1"
