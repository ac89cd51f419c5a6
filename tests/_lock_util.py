"""A second process holding an output's lock: two writers meet through barriers, never sleeps."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from interleave_bench.locks import exclusive_output

#: a safety net only: the barriers release long before, never a timing assumption
BARRIER_TIMEOUT_S = 120


def _hold(path: str, held, release, how: str = "lock") -> None:
    """A second process: holds the output's lock until the test lets it go; with ``how``
    ``append`` it holds an appender to it (which makes the file), with ``replace`` it has put a
    new file in its place (an atomic write) meanwhile."""
    from interleave_bench.io import JsonlAppender, atomic_write_text

    with exclusive_output(path, "holder"):
        if how == "append":
            with JsonlAppender(path) as app:
                app.append({"by": "holder"})
                held.set()
                release.wait(BARRIER_TIMEOUT_S)
            return
        if how == "replace":
            atomic_write_text(path, '{"by":"holder"}\n')
        held.set()
        release.wait(BARRIER_TIMEOUT_S)


class Holder:
    """A process holding ``path``'s lock between ``with`` and its end (a barrier on each side);
    ``how``: what it does while it holds it (:func:`_hold`)."""

    def __init__(self, path: Path, how: str = "lock"):
        ctx = multiprocessing.get_context("spawn")
        self.held, self.release = ctx.Event(), ctx.Event()
        self.proc = ctx.Process(target=_hold, args=(str(path), self.held, self.release, how))

    def __enter__(self) -> "Holder":
        self.proc.start()
        assert self.held.wait(BARRIER_TIMEOUT_S)
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.proc.join(BARRIER_TIMEOUT_S)
        assert self.proc.exitcode == 0


class _HeldThenStopped:
    """A router whose first call waits for the test, then stops its run before any row."""

    policy = "stay"
    uses_model = False

    def __init__(self, held, release):
        self.held, self.release = held, release

    async def route(self, view):
        from interleave_bench.errors import UsageError

        self.held.set()
        self.release.wait(BARRIER_TIMEOUT_S)
        raise UsageError("stopped by the test")


def _route_then_stop(data: str, out: str, fresh: bool, held, release) -> None:
    """A second process: a ``route --mode closed`` run into ``out`` stopped in its first call."""
    from interleave_bench.errors import UsageError
    from interleave_bench.route.runner import RouteOptions, run_route

    try:
        run_route(data, RouteOptions(mode="closed", policy="stay"), out=out, fresh=fresh,
                  router=_HeldThenStopped(held, release))
    except UsageError:
        raise SystemExit(2) from None


class StoppedRoute(Holder):
    """A route run into ``out`` in another process (``fresh``: one starting over), inside its first
    call between ``with`` and its end (it holds its locks and has made what a run makes before its
    first row), then stopped before a row (its exit code 2), or killed there (:meth:`kill`)."""

    def __init__(self, data: Path, out: Path, *, fresh: bool = False):
        ctx = multiprocessing.get_context("spawn")
        self.held, self.release = ctx.Event(), ctx.Event()
        self.proc = ctx.Process(target=_route_then_stop, args=(str(data), str(out), fresh, self.held, self.release))
        self.killed = False

    def kill(self) -> None:
        """Kill the run with SIGKILL where it is held."""
        self.proc.kill()
        self.proc.join(BARRIER_TIMEOUT_S)
        self.killed = True

    def __exit__(self, *exc) -> None:
        if self.killed:
            return
        self.release.set()
        self.proc.join(BARRIER_TIMEOUT_S)
        assert self.proc.exitcode == 2
