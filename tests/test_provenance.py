"""The provenance block: what it reads once a process, and that a caller cannot change it."""

from __future__ import annotations

import importlib.metadata

from interleave_bench import provenance as prov


def test_package_versions_are_read_once_and_handed_out_as_copies(monkeypatch):
    installed = importlib.metadata.version("pydantic")
    first = prov.package_versions()
    assert first["pydantic"] == installed and set(first) == set(prov.TRACKED_PACKAGES)
    first["pydantic"] = "forged"
    monkeypatch.setattr(prov.importlib.metadata, "version", lambda name: "read again")
    assert prov.package_versions()["pydantic"] == installed  # neither read again nor forged
    assert prov.provenance()["packages"] == prov.package_versions()


def test_the_git_state_is_asked_once_a_process_and_handed_out_as_a_copy(monkeypatch):
    first = prov.git_state()
    first["commit"] = "forged"
    monkeypatch.setattr(prov.subprocess, "run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("asked again")))
    again = prov.git_state()
    assert again["commit"] != "forged" and set(again) == {"commit", "dirty"}
    block = prov.provenance(data="sha256:0")
    assert (block["git_commit"], block["git_dirty"]) == (again["commit"], again["dirty"])
    assert block["data"] == "sha256:0"
