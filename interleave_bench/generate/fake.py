"""The fake model's answers to the generation requests: ``threads``, ``write``, ``rewrite``, ``read``.

Each handler reads the JSON payload of the request (:func:`~interleave_bench.generate.prompts.extract_payload`)
and answers as a careful model would, from the same data the offline path uses: threads from the
domain packs, messages from the phrasing templates, readings from the rule reader. Choices are
seeded by a stable hash of the payload, so the same request always gets the same answer.

To exercise the leak path, about one vague message in :data:`LEAK_EVERY` is written naming its
thread's title; the rewrite handler obeys, answering a clean vague message that keeps the values it
was told to keep.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ..llm.fake import fake_handler, stable_hash
from ..schema import Thread
from . import packs
from .leak import is_vague
from .offline_writer import render_row
from .plan import PlanRow
from .prompts import extract_payload
from .reader import RuleReader
from .text import contains
from .threads import build_offline_threads

#: one vague message in this many is written leaky, so dry runs exercise the rewrite
LEAK_EVERY = 7
#: renders tried for a clean rewrite
REWRITE_TRIES = 8


def _answer(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _threads_of(cards: list[dict[str, Any]]) -> dict[str, Thread]:
    out = {}
    for c in cards:
        c = {k: v for k, v in c.items() if k != "twin_of"}
        out[c["id"]] = Thread.model_validate(c)
    return out


@fake_handler("threads")
def answer_threads(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    p = extract_payload(messages)
    lang = p.get("language", "en")
    spec = p["threads"]
    known = set(packs.domain_names())
    # A domain without a pack borrows a pack's content, picked stably from its name.
    domains = [s["domain"] if s["domain"] in known else sorted(known)[stable_hash(s["domain"]) % len(known)] for s in spec]
    index = {s["id"]: k for k, s in enumerate(spec)}
    twins = {k: index[s["twin_of"]] for k, s in enumerate(spec) if s.get("twin_of") in index}
    updates = [list(s.get("updates") or []) for s in spec]
    rng = random.Random(stable_hash("threads", p))
    ts = build_offline_threads(domains, twins, updates, lang, rng, persona_hint=p.get("persona_hint") or None)
    return _answer({
        "persona": ts.persona,
        "threads": [
            {"id": s["id"], "title": t.title, "goal": t.goal, "description": t.description,
             "facts": [{"key": f.key, "value": f.value, "update": f.update} for f in t.facts],
             "constraints": list(t.constraints)}
            for s, t in zip(spec, ts.threads)
        ],
    })


@fake_handler("write")
def answer_write(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    p = extract_payload(messages)
    lang = p.get("language", "en")
    threads = _threads_of(p["threads"])
    out = []
    used = {e.get("text") for e in p.get("earlier") or []}
    for raw in p["rows"]:
        row = PlanRow.from_payload(raw)
        rng = random.Random(stable_hash("write", p.get("session"), row.i))
        for _ in range(REWRITE_TRIES):
            text = render_row(row, threads, lang, rng).text
            if text not in used:
                break
        used.add(text)
        if row.thread is not None and is_vague(row) and stable_hash("leak", p.get("session"), row.i) % LEAK_EVERY == 0:
            sep = "，" if lang == "zh" else ": "
            text = threads[row.thread].title + sep + text
        out.append({"i": row.i, "text": text})
    return _answer({"messages": out})


@fake_handler("rewrite")
def answer_rewrite(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    p = extract_payload(messages)
    lang = p.get("language", "en")
    row = PlanRow.from_payload(p["row"])
    forbidden = list(p.get("forbidden") or [])
    keep = list(p.get("keep") or [])
    rng = random.Random(stable_hash("rewrite", p.get("session"), row.i))
    text = p.get("text", "")
    for _ in range(REWRITE_TRIES):
        # a vague row renders from generic phrases only: no thread card is needed
        text = render_row(row, {}, lang, rng).text
        if not any(contains(text, f, lang) for f in forbidden) and all(contains(text, k, lang) for k in keep):
            break
    return _answer({"text": text})


@fake_handler("read")
def answer_read(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    p = extract_payload(messages)
    lang = p.get("language", "en")
    threads = list(_threads_of(p["threads"]).values())
    reader = RuleReader(threads, lang)
    for e in p.get("earlier") or []:
        reader.observe(str(e.get("label")))
    labels = []
    for m in p["messages"]:
        label = reader.read(m["text"])
        item: dict[str, Any] = {"i": m["i"], "thread": label.thread}
        if label.candidates:
            item["candidates"] = list(label.candidates)
        labels.append(item)
    return _answer({"labels": labels})

