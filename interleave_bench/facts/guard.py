"""A plug-in shared-facts system held to the protocol's contract (docs/facts.md#the-protocol).

:class:`GuardedSystem` wraps the instance a run makes per session. Each call may be a coroutine
or a plain function; what it returns is checked (``candidates`` and ``deliver`` give a list of
:class:`~.protocol.FactLine` whose ``source`` and ``key`` are text and whose ``value`` and
``notice`` are text or None; ``briefing`` gives text). A system that raises an ``Exception``, or
returns something else, fails its session with :class:`SystemFailure`, whose text names the
system, the method, where in the session and why: the run writes that session one ``error`` row
and goes on (a rerun replays it), as for a model call that fails. ``KeyboardInterrupt`` and
``SystemExit`` are not caught: they stop the run, which keeps the finished sessions; nor is the
project's own refusal met inside a system's call (an :class:`~interleave_bench.errors.InterleaveError`,
such as a response cache it cannot use), which stops the run in its one line.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional, Sequence

from ..errors import InterleaveError, shown
from .protocol import Exchange, FactLine, Request, SystemContext

#: characters of a wrong value a failure shows
SHOWN_CHARS = 60


class SystemFailure(Exception):
    """One session a plug-in system could not serve; becomes the session's ``error`` row."""


def _shown(value: Any) -> str:
    # a Python object a system returned, so None as Python writes it (``shown`` writes JSON's null)
    return "None" if value is None else shown(value, SHOWN_CHARS)


def _after(request: Request) -> str:
    """Where in the session a request comes: after the turn it follows, or at the start."""
    return "at the session's start" if request.turn < 0 else f"after turn {request.turn}"


class GuardedSystem:
    """``cls(context)`` and its calls, each failure a :class:`SystemFailure` naming ``name``."""

    def __init__(self, cls: type, context: SystemContext, name: str):
        self.name = name
        self.inner = self._guard("__init__", "when made for the session", lambda: cls(context))
        render = getattr(self.inner, "briefing", None)
        self.briefing: Optional[Callable[[Sequence[FactLine]], str]] = (
            self._briefing if callable(render) else None)

    def _fail(self, method: str, where: str, why: str) -> SystemFailure:
        return SystemFailure(f"system {self.name}: {method}() {where} {why}")

    def _guard(self, method: str, where: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except InterleaveError:  # the project's own refusal (a cache it cannot use...): the run's, in one line
            raise
        except Exception as exc:  # noqa: BLE001 - the plug-in's bug is its session's error row
            raise self._fail(method, where, f"raised {type(exc).__name__}: {exc}") from None

    async def _call(self, method: str, where: str, *args: Any) -> Any:
        async def run() -> Any:
            result = getattr(self.inner, method)(*args)
            return await result if inspect.isawaitable(result) else result

        try:
            return await run()
        except InterleaveError:  # as in _guard
            raise
        except Exception as exc:  # noqa: BLE001 - as in _guard
            raise self._fail(method, where, f"raised {type(exc).__name__}: {exc}") from None

    def _lines(self, method: str, where: str, got: Any) -> list[FactLine]:
        if not isinstance(got, (list, tuple)):
            raise self._fail(method, where, f"returned {type(got).__name__} {_shown(got)}: expected a list of FactLine")
        for k, ln in enumerate(got):
            if not isinstance(ln, FactLine):
                raise self._fail(method, where, f"returned {type(ln).__name__} {_shown(ln)} at [{k}]: expected a FactLine")
            for field, nullable in (("source", False), ("key", False), ("value", True), ("notice", True)):
                v = getattr(ln, field)
                if not (isinstance(v, str) or (nullable and v is None)):
                    kind = "text or None" if nullable else "text"
                    raise self._fail(method, where, f"returned a FactLine whose {field} is {type(v).__name__} "
                                                    f"{_shown(v)} at [{k}]: expected {kind}")
        return list(got)

    async def observe(self, exchange: Exchange) -> None:
        await self._call("observe", f"at turn {exchange.turn}", exchange)

    async def candidates(self, request: Request) -> list[FactLine]:
        where = _after(request)
        return self._lines("candidates", where, await self._call("candidates", where, request))

    async def deliver(self, topic: str, request: Request, imported: Sequence[FactLine]) -> list[FactLine]:
        where = f"for topic {topic!r} {_after(request)}"
        return self._lines("deliver", where, await self._call("deliver", where, topic, request, imported))

    def _briefing(self, lines: Sequence[FactLine]) -> str:
        text = self._guard("briefing", "of the delivered lines", lambda: self.inner.briefing(lines))
        if not isinstance(text, str):
            raise self._fail("briefing", "of the delivered lines", f"returned {type(text).__name__} {_shown(text)}: "
                                                                   "expected text")
        return text
