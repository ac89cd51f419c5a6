"""The reference shared-facts system: extract each topic's facts, guard them, offer and deliver them.

- **Extraction**: after every exchange of a topic, one model call reads the topic's recent
  exchanges and current facts and lists items ``{label, value, status, evidence}``.
- **Evidence checks**: an item counts only when its quoted evidence occurs in that exchange; only
  the user confirms or withdraws (a "confirmed" item quoting only the assistant stays proposed; a
  withdrawal quoting only the assistant is dropped).
- **Version guards**: a fact's version only grows; an exchange older than the fact's last change
  never overwrites it.
- **Candidates**: other topics' confirmed facts that the request's text or recent messages point
  to (naming the topic's title or the fact's label).
- **Delivery**: confirmed values only, for the facts the request points to and those the router
  imported, plus a notice when a value delivered earlier to this topic changed or was withdrawn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

from ..llm import LLM
from ..route.text import title_mentioned
from .metrics import normalize
from .prompts import EXTRACT_KIND, TEMPERATURE, Item, extract_messages, parse_items
from .protocol import Exchange, FactLine, Request, SystemContext

#: exchanges of a topic the extractor sees besides the last one: enough to resolve "yes, that one"
RECENT_EXCHANGES = 3
#: recent messages whose words may point a request to a fact (the request itself always counts)
POINTING_MESSAGES = 2
#: asks per exchange when the extractor's answer is not the JSON asked for: one fresh retry, as
#: one unreadable answer is usually a glitch and a fact missed here is missed for good
EXTRACT_ATTEMPTS = 2


@dataclass
class FactState:
    label: str
    value: Optional[str] = None  # the confirmed value (None: never confirmed, or withdrawn)
    status: str = "proposed"  # confirmed | proposed | withdrawn
    proposed: Optional[str] = None  # a value only the assistant put forward, waiting for the user
    version: int = 0
    turn: int = -1  # turn of the last change


@dataclass
class _Topic:
    title: str
    exchanges: list[dict[str, str]] = field(default_factory=list)
    facts: dict[str, FactState] = field(default_factory=dict)  # by normalised label


def _names(label: str, text: str) -> bool:
    """True when ``text`` names the label as whole words (punctuation around it allowed)."""
    lab = normalize(label)
    return bool(lab) and re.search(rf"(?<!\w){re.escape(lab)}(?!\w)", normalize(text)) is not None


def _occurs(evidence: str, text: str) -> bool:
    e = normalize(evidence)
    return bool(e) and e in normalize(text)


class ReferenceSystem:
    """The project's shared-facts system (see the module docstring)."""

    name = "reference"

    def __init__(self, context: SystemContext):
        self.llm: Optional[LLM] = context.llm
        self.session_id = context.session_id
        self.topics = {t.id: _Topic(t.title) for t in context.topics}
        self.delivered: dict[str, dict[tuple[str, str], tuple[Optional[str], int]]] = {}
        self.unreadable = 0  # extractor answers that were not the JSON asked for

    # --- observing -----------------------------------------------------------------------------------

    async def observe(self, exchange: Exchange) -> None:
        topic = self.topics.get(exchange.topic)
        if topic is None or self.llm is None:
            return
        last = {"user": exchange.user, "assistant": exchange.assistant}
        facts = [{"label": f.label, "value": f.value if f.status == "confirmed" else f.proposed, "status": f.status}
                 for f in topic.facts.values()]
        messages = extract_messages(topic.title, facts, topic.exchanges[-RECENT_EXCHANGES:], last)
        replies = []
        items = None
        for attempt in range(EXTRACT_ATTEMPTS):
            replies.append(await self.llm.complete(EXTRACT_KIND, messages, temperature=TEMPERATURE, attempt=attempt,
                                                   what=f"{self.session_id} turn {exchange.turn}"))
            items = parse_items(replies[-1].text)
            if items is not None:
                break
        topic.exchanges.append(last)
        if items is None:
            self.unreadable += 1
            forget = getattr(self.llm, "reject", None)
            for reply in replies if callable(forget) else ():
                forget(reply)  # replayed from the cache they could never be read: a later run asks again
            return
        for item in items:
            self.apply(exchange, item)

    def apply(self, exchange: Exchange, item: Item) -> bool:
        """Apply one extracted item after the evidence checks and version guard; returns True when
        it changed the topic's facts."""
        topic = self.topics[exchange.topic]
        by_user = _occurs(item.evidence, exchange.user)
        by_assistant = _occurs(item.evidence, exchange.assistant)
        if not (by_user or by_assistant):
            return False  # the quote is not in this exchange: an invention
        status = item.status
        if status == "withdrawn" and not by_user:
            return False  # only the user withdraws
        if status == "confirmed" and not by_user:
            status = "proposed"  # only the user confirms
        key = normalize(item.label)
        fact = topic.facts.get(key)
        if fact is None:
            fact = topic.facts[key] = FactState(item.label)
        if exchange.turn < fact.turn:
            return False  # an older turn never overwrites a newer value
        before = (fact.value, fact.status, fact.proposed)
        if status == "proposed":
            if item.value is None:
                return False
            fact.proposed = item.value
            if fact.value is None and fact.status != "confirmed":
                fact.status = "proposed"
        elif status == "confirmed":
            value = item.value if item.value is not None else fact.proposed
            if value is None:
                return False
            fact.value, fact.status, fact.proposed = value, "confirmed", None
        else:
            fact.value, fact.status, fact.proposed = None, "withdrawn", None
        if (fact.value, fact.status, fact.proposed) != before:
            fact.version += 1
            fact.turn = exchange.turn
            return True
        return False

    # --- offering and delivering ------------------------------------------------------------------

    def _confirmed(self, exclude: Optional[str]) -> list[tuple[str, FactState]]:
        return [(tid, f) for tid, t in self.topics.items() if tid != exclude
                for f in t.facts.values() if f.status == "confirmed" and f.value is not None]

    def _points(self, request: Request, tid: str, fact: FactState) -> bool:
        texts = [request.text, *request.recent[-POINTING_MESSAGES:]]
        title = self.topics[tid].title
        return any(title_mentioned(title, t) or _names(fact.label, t) for t in texts)

    async def candidates(self, request: Request) -> list[FactLine]:
        return [FactLine(tid, f.label, f.value) for tid, f in self._confirmed(request.current)
                if self._points(request, tid, f)]

    async def deliver(self, topic: str, request: Request, imported: Sequence[FactLine]) -> list[FactLine]:
        sent = self.delivered.setdefault(topic, {})
        lines: list[FactLine] = []
        chosen: set[tuple[str, str]] = set()
        wanted = {(ln.source, normalize(ln.key)) for ln in imported}
        for tid, f in self._confirmed(topic):
            k = (tid, normalize(f.label))
            if k in wanted or self._points(request, tid, f):
                chosen.add(k)
        # a value delivered earlier that changed or was withdrawn since gets a notice
        for (tid, key), (old, version) in sorted(sent.items()):
            f = self.topics[tid].facts.get(key)
            if f is None or f.version == version:
                continue
            if f.status == "withdrawn":
                lines.append(FactLine(tid, f.label, None, f"withdrawn; was {old}"))
                sent[(tid, key)] = (None, f.version)
            elif f.status == "confirmed" and f.value != old:
                lines.append(FactLine(tid, f.label, f.value, f"changed; was {old}"))
                sent[(tid, key)] = (f.value, f.version)
                chosen.discard((tid, key))
        for tid, key in sorted(chosen):
            f = self.topics[tid].facts[key]
            lines.append(FactLine(tid, f.label, f.value))
            sent[(tid, key)] = (f.value, f.version)
        return lines
