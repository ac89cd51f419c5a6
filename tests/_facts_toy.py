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
