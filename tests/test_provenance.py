"""The provenance block: package versions read once a process, the git state at every call, and that a
caller cannot change either."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess

import pytest

from interleave_bench import provenance as prov


def test_package_versions_are_read_once_and_handed_out_as_copies(monkeypatch):
    installed = importlib.metadata.version("pydantic")
    first = prov.package_versions()
    assert first["pydantic"] == installed and set(first) == set(prov.TRACKED_PACKAGES)
    first["pydantic"] = "forged"
    monkeypatch.setattr(prov.importlib.metadata, "version", lambda name: "read again")
    assert prov.package_versions()["pydantic"] == installed  # neither read again nor forged
    assert prov.provenance()["packages"] == prov.package_versions()


def _git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


def test_the_git_state_is_asked_at_every_call(tmp_path):
    """A long process that loads code edited after its first run records it as dirty."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "code.py").write_text("x = 1\n", encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", "code.py")
    _git(repo, "commit", "-q", "-m", "first")
    first = prov.git_state(repo)
    assert len(first["commit"]) == 40 and first["dirty"] is False
    first["commit"] = "forged"
    (repo / "code.py").write_text("x = 2\n", encoding="utf-8")
    edited = prov.git_state(repo)
    assert edited["dirty"] is True and edited["commit"] != "forged"
    _git(repo, "commit", "-q", "-am", "second")
    assert prov.git_state(repo)["commit"] not in (first["commit"], edited["commit"])
    assert prov.git_state(tmp_path) == {"commit": None, "dirty": None}  # outside a checkout


def test_the_provenance_block_carries_the_git_state():
    block = prov.provenance(data="sha256:0")
    git = prov.git_state()
    assert (block["git_commit"], block["git_dirty"]) == (git["commit"], git["dirty"])
    assert block["data"] == "sha256:0"
