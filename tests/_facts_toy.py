"""Two toy shared-facts systems for the plug-in protocol tests (``--system _facts_toy:Class``).

Neither calls a model. ``CurrentOnly`` keeps what the user states ("the budget is 900 EUR") and
forgets what the user withdraws; ``SharesProposals`` also keeps what the assistant only suggested
("My proposal for the guest count: 40 people"), the mistake the ``proposals_shared`` gate exists to catch.
"""

from __future__ import annotations

import re

from interleave_bench.facts.protocol import Exchange, FactLine, Request, SystemContext

STATED = re.compile(r"\bthe ([a-z]+(?: [a-z]+)?) is (\d[^.;:!?,]*)")
SUGGESTED = re.compile(r"\bfor the ([a-z]+(?: [a-z]+)?): (\d[^.;:!?,]*)")


class CurrentOnly:
    name = "current-only"

    def __init__(self, context: SystemContext):
        self.facts: dict[tuple[str, str], str] = {}

    async def observe(self, exchange: Exchange) -> None:
        self._take(exchange)

    def _take(self, exchange: Exchange) -> None:
        user = exchange.user.lower()
        for m in STATED.finditer(user):
            self.facts[(exchange.topic, m.group(1))] = m.group(2).strip()
        if "withdraw" in user:
            for topic, key in list(self.facts):
                if topic == exchange.topic and key in user:
                    del self.facts[(topic, key)]

    def _pointed(self, text: str, exclude: str | None) -> list[FactLine]:
        return [FactLine(t, k, v) for (t, k), v in sorted(self.facts.items()) if t != exclude and k in text.lower()]

    async def candidates(self, request: Request) -> list[FactLine]:
        return self._pointed(request.text, request.current)

    async def deliver(self, topic: str, request: Request, imported) -> list[FactLine]:
        return self._pointed(request.text, topic)


class SharesProposals(CurrentOnly):
    name = "shares-proposals"

    async def observe(self, exchange: Exchange) -> None:
        await super().observe(exchange)
        for m in SUGGESTED.finditer(exchange.assistant.lower()):
            self.facts[(exchange.topic, m.group(1))] = m.group(2).strip()


class Broken(CurrentOnly):
    """``CurrentOnly``, broken in session en-0002 by the way ``BREAK`` names (a class attribute the
    test sets): ``raise`` in observe at turn 5 (``project``: the project's own refusal there),
    ``none`` / ``dicts`` / ``ints`` from candidates,
    ``text`` from deliver, ``briefing`` giving a number; ``sync``: plain (not async) methods, which work."""

    name = "broken"
    BREAK = "raise"

    def __init__(self, context: SystemContext):
        super().__init__(context)
        self.hit = context.session_id == "en-0002"

    async def observe(self, exchange: Exchange) -> None:
        if self.hit and self.BREAK == "raise" and exchange.turn == 5:
            raise RuntimeError("lost the notebook")
        if self.hit and self.BREAK == "project" and exchange.turn == 5:  # as the project's cache refuses a file
            from interleave_bench.errors import InputError

            raise InputError("cache/llm.sqlite", None, None, "cannot be used as the response cache")
        await super().observe(exchange)

    async def candidates(self, request: Request):
        if self.hit and self.BREAK == "none":
            return None
        if self.hit and self.BREAK == "dicts":
            return [{"source": "move", "key": "budget", "value": "700 EUR"}]
        if self.hit and self.BREAK == "ints":
            return [FactLine("move", 123, "700 EUR")]  # type: ignore[arg-type]
        return await super().candidates(request)

    async def deliver(self, topic: str, request: Request, imported):
        if self.hit and self.BREAK == "text":
            return "move budget 700 EUR"
        return await super().deliver(topic, request, imported)

    def briefing(self, lines):
        if self.hit and self.BREAK == "briefing":
            return 42
        return "Facts: " + "; ".join(f"{ln.key} {ln.value}" for ln in lines)


class Sync(CurrentOnly):
    """``CurrentOnly`` from plain functions (no ``async``): the protocol takes sync methods too."""

    name = "sync"

    def observe(self, exchange: Exchange) -> None:  # type: ignore[override]
        self._take(exchange)

    def candidates(self, request: Request) -> list[FactLine]:  # type: ignore[override]
        return self._pointed(request.text, request.current)

    def deliver(self, topic: str, request: Request, imported) -> list[FactLine]:  # type: ignore[override]
        return self._pointed(request.text, topic)


class StopsAtFourth(CurrentOnly):
    """``CurrentOnly``, but made for session ``en-0004`` it stops the run as Ctrl-C would."""

    name = "stops-at-fourth"

    def __init__(self, context: SystemContext):
        if context.session_id == "en-0004":
            raise KeyboardInterrupt
        super().__init__(context)


class Eager(CurrentOnly):
    """``CurrentOnly`` that offers a line at every turn, the first included (before it has observed anything)."""

    name = "eager"

    def __init__(self, context: SystemContext):
        super().__init__(context)
        self.first = context.topics[0].id

    async def candidates(self, request: Request) -> list[FactLine]:
        return [FactLine(self.first, "budget", "1 EUR")]
