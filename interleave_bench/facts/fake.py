"""The fake model's answers to a facts run's requests (extraction, summary, answer, routing).

Deterministic text rules over the request payloads, so ``--dry-run`` and the tests exercise the
whole model path at no cost. They read plain statements ("the budget is 700 EUR", "预算是700元"),
an assistant's suggestion as a proposal, "yes"/"ok" as accepting the pending proposal, and
"withdraw"/"drop"/"cancel" (撤回/取消) next to a fact's label as a withdrawal. They are a stand-in,
not a measurement of anything.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

from ..llm.fake import fake_handler
from ..route.text import title_mentioned
from ..score.facts import normalize
from .prompts import ANSWER_KIND, EXTRACT_KIND, ROUTE_KIND, SUMMARY_KIND

#: "<label> is/to/at/of/: <value with a digit>" and its Chinese counterpart
_STATE_EN = re.compile(r"\b([A-Za-z]+) (?:is|to|at|of|=|:) ([^.;:!?,\n]*\d[^.;:!?,\n]*)")
_STATE_ZH = re.compile(r"([\u4e00-\u9fff]{2})(?:是|定为|改为|为)([^。；！？，,\n]*\d[^。；！？，,\n]*)")
_WITHDRAW = re.compile(r"\b(withdraw|withdrawn|scrap|drop|forget|cancel)\b|撤回|取消|作废")
_ACCEPT = re.compile(r"\b(yes|ok|okay|agreed|deal|sounds good|go with)\b|好的|可以|同意")
_KEY_EN = re.compile(r'the (.+?) from "')
_KEY_ZH = re.compile(r'的(.+?)(?:现在|是什么|：|:|，|,)')
_NOTE_LINE = re.compile(r'^- "[^"]*" (.+?): (.+?)(?: \[[^\]]*\])?$')
UNDECIDED_EN, UNDECIDED_ZH = "undecided", "未确定"
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _payload(messages: list[dict[str, Any]]) -> dict[str, Any]:
    try:
        obj = json.loads(messages[-1]["content"])
    except (json.JSONDecodeError, KeyError, IndexError, TypeError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _statements(text: str) -> list[tuple[str, str, str]]:
    """(label, value, evidence) of every plain statement of a value in ``text``."""
    out = [(m.group(1).lower(), m.group(2).strip(), m.group(0)) for m in _STATE_EN.finditer(text)]
    out += [(m.group(1), m.group(2).strip(), m.group(0)) for m in _STATE_ZH.finditer(text)]
    return out


@fake_handler(EXTRACT_KIND)
def answer_extract(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    p = _payload(messages)
    last = p.get("last") or {}
    user, assistant = str(last.get("user", "")), str(last.get("assistant", ""))
    facts = [f for f in p.get("facts") or [] if isinstance(f, dict)]
    items: list[dict[str, Any]] = []
    w = _WITHDRAW.search(user.lower())
    if w:
        for f in facts:
            if f.get("status") == "confirmed" and normalize(str(f.get("label", ""))) in normalize(user):
                items.append({"label": f["label"], "value": None, "status": "withdrawn", "evidence": w.group(0)})
    stated = _statements(user)
    for label, value, evidence in stated:
        items.append({"label": label, "value": value, "status": "confirmed", "evidence": evidence})
    a = _ACCEPT.search(user.lower())
    if not stated and not w and a:
        pending = [f for f in facts if f.get("status") == "proposed" and f.get("value")]
        if pending:
            f = pending[-1]
            items.append({"label": f["label"], "value": f["value"], "status": "confirmed", "evidence": a.group(0)})
    for label, value, evidence in _statements(assistant):
        items.append({"label": label, "value": value, "status": "proposed", "evidence": evidence})
    return json.dumps({"items": items}, ensure_ascii=False)


@fake_handler(SUMMARY_KIND)
def answer_summary(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    p = _payload(messages)
    said = [str(x.get("user", "")) for x in p.get("exchanges") or [] if isinstance(x, dict)]
    keep = [s for s in said if _statements(s) or _WITHDRAW.search(s.lower())]
    return "Settled so far: " + " ".join(keep[-4:]) if keep else "Nothing settled yet."


def _key_of(question: str) -> Optional[str]:
    m = _KEY_EN.search(question) or _KEY_ZH.search(question)
    return normalize(m.group(1)) if m else None


def _from_text(text: str, key: str) -> Optional[str]:
    """The value the latest statement or withdrawal of ``key`` in ``text`` gives (undecided after a withdrawal)."""
    best: tuple[int, Optional[str]] = (-1, None)
    for m in list(_STATE_EN.finditer(text)) + list(_STATE_ZH.finditer(text)):
        if normalize(m.group(1)) == key and m.start() > best[0]:
            best = (m.start(), m.group(2).strip())
    low = text.lower()
    for m in _WITHDRAW.finditer(low):
        window = low[max(0, m.start() - 40): m.end() + 40]
        if key in normalize(window) and m.start() > best[0]:
            best = (m.start(), UNDECIDED_EN)
    return best[1]


@fake_handler(ANSWER_KIND)
def answer_probe(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    final = str(messages[-1].get("content", ""))
    notes, _, question = final.rpartition("\n\n")
    undecided = UNDECIDED_ZH if _CJK.search(question) else UNDECIDED_EN
    key = _key_of(question)
    if key is None:
        return undecided
    for line in notes.splitlines():
        m = _NOTE_LINE.match(line.strip())
        if m and key in normalize(m.group(1)):
            return undecided if m.group(2).startswith(("withdrawn", "undecided")) else m.group(2)
    found = _from_text(notes, key)
    if found is None:
        for msg in reversed(messages[1:-1]):
            if msg.get("role") == "user":
                found = _from_text(str(msg.get("content", "")), key)
                if found is not None:
                    break
    if found is None or found == UNDECIDED_EN:
        return undecided
    return found


@fake_handler(ROUTE_KIND)
def answer_route(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    p = _payload(messages)
    text = str(p.get("message", ""))
    topics = [t for t in p.get("topics") or [] if isinstance(t, dict)]
    hits = []
    for t in topics:
        if title_mentioned(str(t.get("title", "")), text):
            hits.append((normalize(text).find(normalize(str(t["title"]))), str(t["id"])))
    topic = min(hits)[1] if hits else (p.get("current") or (topics[0]["id"] if topics else None))
    out: dict[str, Any] = {"topic": topic}
    if p.get("facts"):
        out["imports"] = [f["n"] for f in p["facts"] if normalize(str(f.get("key", ""))) in normalize(text)]
    return json.dumps(out, ensure_ascii=False)
