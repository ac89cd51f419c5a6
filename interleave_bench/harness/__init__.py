"""InterleaveBench inside the evaluation harnesses people already run (docs/harness.md).

- :mod:`.inspect_task`: the inspect_ai task ``interleavebench/routing`` (the whole sequential task,
  either mode), registered by :mod:`.inspect_registry` through the ``inspect_ai`` entry point;
  :mod:`.inspect_log` reads its logs back as predictions files.
- :mod:`.lmeval` and the task folder ``lm_eval_tasks/``: the lm-evaluation-harness task
  ``interleavebench_closed`` (closed mode, message by message on the true history, :mod:`.closed`).

Both need the ``harness`` extra; :func:`require` says so in one line when it is missing.
"""

from __future__ import annotations

import importlib.util

from ..errors import UsageError

#: the distributions of the ``harness`` extra, by import name
HARNESS_PACKAGES = {"inspect_ai": "inspect-ai", "lm_eval": "lm-eval"}
#: how to get them
INSTALL_HINT = "pip install 'interleave-bench[harness]'"


def require(what: str, packages: tuple[str, ...] = ("inspect_ai",)) -> None:
    """Raise :class:`UsageError` naming ``what`` and the install command when a package is missing."""
    missing = [HARNESS_PACKAGES[p] for p in packages if importlib.util.find_spec(p) is None]
    if missing:
        raise UsageError(f"{what} needs {', '.join(missing)}: {INSTALL_HINT}")
