"""The fake model's answers to routing requests (kinds ``route`` and ``route-each``).

Deterministic and plausible: it reads the payload the model router sends (:mod:`.payload`) and
picks the topic sharing the most distinctive words with the message (words found in every topic
count for nothing), keeps short unmatched messages in the current topic, and opens a topic for a
long unmatched one. Imperfect by design (vague messages fool it) but far better than chance, so
dry runs and tests produce realistic, scorable predictions.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ..llm.fake import fake_handler
from .text import cjk_count, short_title, tokens, word_count

#: a topic needs this much shared-word weight to be chosen (one word unique to it, or two shared by some)
MATCH_MIN = 1.0
#: a second topic with this much weight is given as a ref
REF_MIN = 2.0
#: an unmatched open-mode message of this many words or more opens a topic
NEW_MIN_WORDS = 6
#: in closed mode only a longer unmatched message, sharing nothing with any thread, opens a side topic
CLOSED_NEW_MIN_WORDS = 8


def _payload(messages: list[dict[str, Any]]) -> Optional[dict[str, Any]]:
    for m in messages:
        if m.get("role") != "user":
            continue
        try:
            obj = json.loads(m.get("content") or "")
        except (TypeError, ValueError):
            continue
        if isinstance(obj, dict) and "new" in obj:
            return obj
    return None


def _topic_tokens(t: dict[str, Any]) -> set[str]:
    parts = [t.get("title", ""), t.get("description", ""), t.get("goal", ""), t.get("first", "")]
    parts += [str(x) for x in t.get("recent", [])]
    return set(tokens(" ".join(str(p) for p in parts)))


def _choose(payload: dict[str, Any], text: str, extra: list[tuple[str, set[str]]], current: Optional[str]) -> dict[str, Any]:
    """One decision for ``text`` given the payload's topics plus ``extra`` (label, tokens) ones."""
    mode = payload.get("mode", "open")
    # in closed mode a side topic holds one one-off: it never attracts later messages
    listed = [t for t in payload.get("topics", []) if mode == "open" or "goal" in t]
    topics = [(str(t.get("id")), _topic_tokens(t)) for t in listed] + extra
    query = set(tokens(text))
    n = len(topics)
    df: dict[str, int] = {}
    for _, toks in topics:
        for tok in toks:
            df[tok] = df.get(tok, 0) + 1
    scored = []
    for k, (label, toks) in enumerate(topics):
        score = 0.0
        for tok in query & toks:
            if n == 1 or df[tok] < n:
                score += 1.0 if df[tok] == 1 else 0.5
        scored.append((score, -k, label))
    scored.sort(reverse=True)
    if scored and scored[0][0] >= MATCH_MIN:
        best = scored[0][2]
        refs = [label for score, _, label in scored[1:2] if score >= REF_MIN and not label.startswith("new:")]
        return {"topic": best, "title": "", "refs": refs, "clarify": False}
    # length in words; Chinese is counted two characters a word (its tokens are character pairs)
    length = word_count(text) + cjk_count(text) / 2
    long_enough = length >= (CLOSED_NEW_MIN_WORDS if mode == "closed" else NEW_MIN_WORDS)
    nothing_shared = not scored or scored[0][0] == 0.0
    if current is not None and not (long_enough and (mode == "open" or nothing_shared)):
        return {"topic": current, "title": "", "refs": [], "clarify": False}
    if mode == "closed" and topics and not (long_enough and nothing_shared):
        return {"topic": topics[0][0], "title": "", "refs": [], "clarify": False}
    return {"topic": "new", "title": short_title(text), "refs": [], "clarify": False}


def _home(payload: dict[str, Any]) -> Optional[str]:
    """Where a vague message stays: the current topic, except that in closed mode a side topic
    (a one-off's, with no goal) is left for the latest declared thread of the conversation."""
    current = payload.get("current")
    if payload.get("mode") != "closed":
        return current
    declared = {str(t.get("id")) for t in payload.get("topics", []) if "goal" in t}
    if current in declared:
        return current
    for m in reversed(payload.get("conversation", [])):
        if m.get("topic") in declared:
            return m["topic"]
    return current


@fake_handler("route")
def answer_route(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """One decision for the new message(s), routed as one unit."""
    payload = _payload(messages)
    if payload is None:
        return json.dumps({"topic": "new", "title": "topic", "refs": [], "clarify": False})
    text = "\n".join(str(m.get("text", "")) for m in payload.get("new", []))
    return json.dumps(_choose(payload, text, [], _home(payload)), ensure_ascii=False)


@fake_handler("route-each")
def answer_route_each(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """One decision per new message, in order; ``new:<n>`` joins a topic opened earlier in the burst."""
    payload = _payload(messages)
    if payload is None:
        return json.dumps({"decisions": []})
    current = _home(payload)
    extra: list[tuple[str, set[str]]] = []
    decisions = []
    for k, item in enumerate(payload.get("new", []), start=1):
        text = str(item.get("text", ""))
        d = _choose(payload, text, extra, current)
        if d["topic"] == "new":
            extra.append((f"new:{k}", set(tokens(text))))
            current = f"new:{k}"
        else:
            if d["topic"].startswith("new:"):
                # joining a burst topic: say which message opened it, and let it grow
                label = d["topic"]
                extra = [(lbl, toks | set(tokens(text))) if lbl == label else (lbl, toks) for lbl, toks in extra]
            current = d["topic"]
        decisions.append({"message": k, **d})
    return json.dumps({"decisions": decisions}, ensure_ascii=False)
