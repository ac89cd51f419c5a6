"""Shared fixtures: the fake OpenAI-compatible server on loopback, a clean environment, tmp cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The fake model's answers for every request kind the tests send (commands import their own part's
# handlers before a dry run; a test that drives a runner against the fake server needs them all).
import interleave_bench.facts.fake  # noqa: F401
import interleave_bench.generate.fake  # noqa: F401
import interleave_bench.midreply.fake  # noqa: F401
import interleave_bench.route.fake  # noqa: F401
from interleave_bench.redaction import KEY_VARIABLES
from interleave_bench.llm.server import FakeServer

# Nothing in the suite may reach a real provider: drop any keys or endpoints the machine has set.
for _var in (*KEY_VARIABLES, "OPENAI_BASE_URL", "EVAL_EXTRA_BODY", "EVAL_PRICES", "INTERLEAVE_CACHE",
             "INTERLEAVE_JSON_MODE"):
    os.environ.pop(_var, None)
os.environ.setdefault("INTERLEAVE_NO_PROGRESS", "1")
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"


@pytest.fixture
def fake_server():
    """A fresh fake OpenAI-compatible server; ``.url``, ``.calls``, ``.add_fault(...)``."""
    with FakeServer() as srv:
        yield srv


@pytest.fixture
def openai_env(fake_server, monkeypatch, tmp_path):
    """Environment pointing the real ``openai`` client at the fake server with a recognisable key."""
    key = "sk-test-SECRET-0123456789abcdef"
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    return {"server": fake_server, "key": key, "cache": tmp_path / "cache"}


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory):
    """The project's wheel, built once per test process for every test that inspects or installs
    it (no build isolation, no download), from a copy of the checkout: setuptools builds in the
    source tree's ``build/``, where two test processes building at once broke each other's wheel."""
    import shutil
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    src = tmp_path_factory.mktemp("wheel-src") / "src"
    cache = shutil.ignore_patterns("__pycache__", "*.egg-info")
    top = {".git", "build", ".pytest_cache", ".hypothesis", "data", "tests"}  # the checkout's own, not the package's

    def skip(folder: str, names: list[str]) -> set[str]:
        return set(cache(folder, names)) | (top.intersection(names) if Path(folder) == root else set())

    shutil.copytree(root, src, ignore=skip)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(src)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    [wheel] = list(out.glob("*.whl"))
    return wheel
