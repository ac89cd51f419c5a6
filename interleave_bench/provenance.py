"""Provenance for every number: package version, git commit and dirty flag, Python and package versions.

Attached to manifests and score files so a number found months later can be traced to the code and
data that made it.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import platform
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import __version__

#: the packages whose versions can change a number the project reports
TRACKED_PACKAGES = ("datasets", "evaluate", "huggingface_hub", "openai", "pyarrow", "numpy", "scipy", "pydantic")


def package_versions() -> dict[str, str | None]:
    """The installed version of each of :data:`TRACKED_PACKAGES` (None where one is missing)."""
    return dict(_package_versions())


@lru_cache(maxsize=1)
def _package_versions() -> dict[str, str | None]:
    # read once a process (the packages it imported do not change under it): reading the eight
    # packages' metadata took 7 ms, at every run a command routes or scores
    out: dict[str, str | None] = {}
    for name in TRACKED_PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_state(start: Path | None = None) -> dict[str, Any]:
    """``{"commit": sha, "dirty": bool}`` of the checkout the package runs from, or nulls outside one.

    Asked at every call (two git commands, about 6 ms): a long process (a notebook, a sweep) may
    import a module edited, or run after a commit made, since its first run, and a record must not
    call that code clean."""
    root = Path(start or Path(__file__).resolve().parent)
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return {"commit": None, "dirty": None}
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root, capture_output=True, text=True, timeout=10,
        )
        return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def provenance(**fingerprints: Any) -> dict[str, Any]:
    """The provenance block: versions, git state, creation time, and any file fingerprints given."""
    git = git_state()
    out: dict[str, Any] = {
        "package": "interleave-bench",
        "package_version": __version__,
        "git_commit": git["commit"],
        "git_dirty": git["dirty"],
        "python": platform.python_version(),
        "packages": package_versions(),
        "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
    }
    out.update(fingerprints)
    return out
