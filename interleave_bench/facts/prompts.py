"""The model requests of a facts run: extraction, summary, answering a probe, routing with facts.

Each builder returns chat messages; structured requests put a JSON payload in the last user
message (so the fake model and the real one read the same thing). Parsers return what they could
read and never raise on a model's answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

#: request kinds (the fake model's handlers and the cache table)
EXTRACT_KIND = "facts-extract"
SUMMARY_KIND = "facts-summary"
ANSWER_KIND = "facts-answer"
ROUTE_KIND = "facts-route"
#: bumped when a prompt changes, so a rerun redoes sessions answered with the old prompts
PROMPT_VERSION = 2
#: every call of a facts run is greedy: reruns must be repeatable
TEMPERATURE = 0.0

EXTRACT_SYSTEM = """You keep the facts of one topic of a chat: values that were settled, proposed or withdrawn \
(a budget, a date, an owner...). You get the topic's current facts, its recent exchanges and its LAST exchange. \
List the facts the LAST exchange states, proposes, confirms or withdraws. Answer with one JSON object: \
{"items": [{"label": "<short name>", "value": "<value, or null when withdrawn>", "status": "confirmed" | "proposed" | "withdrawn", \
"evidence": "<exact words quoted from the last exchange>"}]}. Only the user confirms or withdraws; a value only the \
assistant suggests is "proposed". When the user accepts a proposal without repeating it, give the proposed value, \
status "confirmed", and quote the user's acceptance. Use the label of a current fact when it is the same fact. \
No items: {"items": []}."""

SUMMARY_SYSTEM = """Summarise this topic of a chat for someone working on another topic: state every value \
that is settled now (amounts, dates, owners), and say which ones were changed or withdrawn. Be brief."""

ANSWER_SYSTEM = """You are the assistant of the topic "{title}" in a chat. Answer the user's last message."""

ROUTE_SYSTEM = """You route a chat message to the topic it belongs to. You get the topics (id and title), the \
topic the chat is in, the recent messages and the new message{facts}. Answer with one JSON object: \
{{"topic": "<topic id>"{imports}}}."""
ROUTE_FACTS_CLAUSE = ", and facts settled in other topics that the message may need, numbered"
ROUTE_IMPORTS_CLAUSE = ', "imports": [<numbers of the facts the message needs, or none>]'


def _payload_message(payload: dict[str, Any]) -> dict[str, str]:
    return {"role": "user", "content": json.dumps(payload, ensure_ascii=False, indent=1)}


def extract_messages(title: str, facts: Sequence[dict[str, Any]], recent: Sequence[dict[str, str]],
                     last: dict[str, str]) -> list[dict[str, str]]:
    """The extractor's request: the topic, its current facts, recent exchanges and the last one."""
    return [{"role": "system", "content": EXTRACT_SYSTEM},
            _payload_message({"topic": title, "facts": list(facts), "recent": list(recent), "last": last})]


def summary_messages(title: str, exchanges: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """The summary request for one topic's exchanges so far."""
    return [{"role": "system", "content": SUMMARY_SYSTEM},
            _payload_message({"topic": title, "exchanges": list(exchanges)})]


def answer_messages(title: str, history: Sequence[dict[str, str]], notes: str, question: str) -> list[dict[str, str]]:
    """The probe's request: the asking topic's history, then its notes (if any) and the question."""
    final = f"{notes}\n\n{question}" if notes else question
    return [{"role": "system", "content": ANSWER_SYSTEM.format(title=title)}, *history,
            {"role": "user", "content": final}]


def route_messages(topics: Sequence[dict[str, str]], current: Optional[str], recent: Sequence[str], text: str,
                   facts: Optional[Sequence[dict[str, Any]]]) -> list[dict[str, str]]:
    """The routing request; ``facts`` (numbered from 1) are offered when given, else none are."""
    system = ROUTE_SYSTEM.format(facts=ROUTE_FACTS_CLAUSE if facts else "",
                                 imports=ROUTE_IMPORTS_CLAUSE if facts else "")
    payload: dict[str, Any] = {"topics": list(topics), "current": current, "recent": list(recent), "message": text}
    if facts:
        payload["facts"] = [{"n": i + 1, **f} for i, f in enumerate(facts)]
    return [{"role": "system", "content": system}, _payload_message(payload)]


# --- reading answers ---------------------------------------------------------------------------------

_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)
STATUSES = ("confirmed", "proposed", "withdrawn")


def _json_object(text: str) -> Optional[dict[str, Any]]:
    t = text.strip()
    m = _FENCE.match(t)
    if m:
        t = m.group(1).strip()
    try:
        obj = json.loads(t)
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


@dataclass(frozen=True)
class Item:
    label: str
    value: Optional[str]
    status: str
    evidence: str


def parse_items(text: str) -> Optional[list[Item]]:
    """The extractor's items (malformed items skipped), or None when the answer is not the JSON asked for."""
    obj = _json_object(text)
    if obj is None or not isinstance(obj.get("items"), list):
        return None
    items = []
    for it in obj["items"]:
        if not isinstance(it, dict):
            continue
        label, status, evidence, value = it.get("label"), it.get("status"), it.get("evidence"), it.get("value")
        if not isinstance(label, str) or not label.strip() or status not in STATUSES or not isinstance(evidence, str):
            continue
        if value is not None and not isinstance(value, (str, int, float)):
            continue
        items.append(Item(label.strip(), None if value is None else str(value).strip(), status, evidence))
    return items


def parse_route(text: str, topic_ids: Sequence[str], offered: int) -> tuple[Optional[str], list[int]]:
    """The routed topic (None when the answer names no known topic) and the imported fact numbers
    (those in 1..offered, each once, in order)."""
    obj = _json_object(text)
    if obj is None:
        return None, []
    topic = obj.get("topic")
    topic = topic if isinstance(topic, str) and topic in topic_ids else None
    imports: list[int] = []
    raw = obj.get("imports") or []
    if isinstance(raw, list):
        for x in raw:
            if isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= offered and x not in imports:
                imports.append(x)
    return topic, imports
