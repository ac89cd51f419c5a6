"""A second process holding an output's lock: two writers meet through barriers, never sleeps."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from interleave_bench.locks import exclusive_output

#: a safety net only: the barriers release long before, never a timing assumption
BARRIER_TIMEOUT_S = 120


def _hold(path: str, held, release) -> None:
    """A second process: holds the output's lock until the test lets it go."""
    with exclusive_output(path, "holder"):
        held.set()
        release.wait(BARRIER_TIMEOUT_S)


class Holder:
    """A process holding ``path``'s lock between ``with`` and its end (a barrier on each side)."""

    def __init__(self, path: Path):
        ctx = multiprocessing.get_context("spawn")
        self.held, self.release = ctx.Event(), ctx.Event()
        self.proc = ctx.Process(target=_hold, args=(str(path), self.held, self.release))

    def __enter__(self) -> "Holder":
        self.proc.start()
        assert self.held.wait(BARRIER_TIMEOUT_S)
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.proc.join(BARRIER_TIMEOUT_S)
        assert self.proc.exitcode == 0
