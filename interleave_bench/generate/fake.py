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

import dataclasses
import json
import random
from typing import Any

from ..llm.fake import fake_handler, stable_hash
from ..schema import Thread
from . import packs
from .leak import is_vague
from .offline_writer import render_reply, render_row
from .stepcheck import step_problem
from .plan import PlanRow
from .prompts import extract_payload
from .reader import RuleReader
from .text import contains, language_problem
from .threads import build_offline_threads

#: one vague message in this many is written leaky, so dry runs exercise the rewrite
LEAK_EVERY = 7
#: renders tried for a clean rewrite
REWRITE_TRIES = 8
#: one v1 fact step in this many is first written sloppily (it does not do its step), so dry runs
#: exercise the fact check and its rewrite
SLOPPY_EVERY = 4
#: one sloppy step in this many stays sloppy when rewritten, so dry runs exercise ``fact-miss``
STUBBORN_EVERY = 2
#: a sloppy exchange per step: it names what the step needs but fails it (a question, no agreement)
SLOPPY = {
    "en": {
        "intro": " Is the {label} {value}?",
        "update": " Should the {label} be {value} now?",
        "propose": " The {label} could be {value}.",
        "accept": " Hmm, what about the {label}?",
        "reject": " So the {label}: {old} or {value}?",
        "retract": " Should we drop the {label}?",
    },
    "zh": {
        "intro": "{label}是{value}吗？",
        "update": "{label}要改成{value}吗？",
        "propose": "{label}也许是{value}。",
        "accept": "嗯，{label}怎么说？",
        "reject": "{label}是{old}还是{value}？",
        "retract": "{label}要撤回吗？",
    },
}


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
    alts = bool(p.get("alternatives"))
    ts = build_offline_threads(domains, twins, updates, lang, rng, persona_hint=p.get("persona_hint") or None,
                               alternatives=alts)

    def fact(f: Any) -> dict[str, Any]:
        out = {"key": f.key, "value": f.value, "update": f.update}
        if alts:
            out["alternative"] = f.alternative
        return out

    return _answer({
        "persona": ts.persona,
        "threads": [
            {"id": s["id"], "title": t.title, "goal": t.goal, "description": t.description,
             "facts": [fact(f) for f in t.facts],
             "constraints": list(t.constraints)}
            for s, t in zip(spec, ts.threads)
        ],
    })


def _with_planted_leak(text: str, row: PlanRow, threads: dict, lang: str, session: Any) -> str:
    """Every LEAK_EVERY-th vague message (by a stable hash) names its thread's title, so the leak
    check and its rewrite are exercised; other messages come back as they are."""
    if row.thread is not None and is_vague(row) and stable_hash("leak", session, row.i) % LEAK_EVERY == 0:
        sep = "，" if lang == "zh" else ": "
        return threads[row.thread].title + sep + text
    return text


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
        text = _with_planted_leak(text, row, threads, lang, p.get("session"))
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



# --- v1 -------------------------------------------------------------------------------------------------


def _sloppy(row: PlanRow, threads: dict[str, Thread], lang: str, rng: random.Random) -> tuple[str, str]:
    """An exchange that fails its step: the message without the step's clause plus a sloppy one."""
    assert row.fact is not None
    base = render_row(dataclasses.replace(row, fact=None), threads, lang, rng).text
    text = base + SLOPPY[lang if lang in SLOPPY else "en"][row.fact.kind].format(
        label=packs.label_for(row.fact.key, lang), value=row.fact.value or "", old=row.fact.previous or "")
    # a proposal's reply still carries the value (the user wrongly states it too); other replies are
    # general; either in the session's language, as a competent model writes it (a short Chinese
    # phrasing around a long Latin value, "型号可以考虑ThinkPad X1 Carbon。", reads as not Chinese)
    replied = row if row.fact.kind == "propose" else dataclasses.replace(row, fact=None)
    for _ in range(REWRITE_TRIES):
        reply = render_reply(replied, lang, rng)
        if language_problem(reply, lang) is None:
            break
    return text, reply


def _is_sloppy(session: Any, i: int) -> bool:
    return stable_hash("sloppy", session, i) % SLOPPY_EVERY == 0


@fake_handler("write_v1")
def answer_write_v1(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    p = extract_payload(messages)
    lang = p.get("language", "en")
    threads = _threads_of(p["threads"])
    out = []
    used = {e.get("text") for e in p.get("earlier") or []}
    for raw in p["rows"]:
        row = PlanRow.from_payload(raw)
        rng = random.Random(stable_hash("write_v1", p.get("session"), row.i))
        if row.fact is not None and _is_sloppy(p.get("session"), row.i):
            text, reply = _sloppy(row, threads, lang, rng)
        else:
            for _ in range(REWRITE_TRIES):
                text = render_row(row, threads, lang, rng).text
                reply = render_reply(row, lang, rng)
                ok = row.fact is None or step_problem(row.fact.kind, row.fact.value, text, reply, lang) is None
                # as a competent model writes: in the session's language (a short Chinese phrasing
                # around a long Latin value, "型号定ThinkPad X1 Carbon怎么样？", reads as not Chinese)
                ok = ok and language_problem(text, lang) is None and language_problem(reply, lang) is None
                if text not in used and ok:
                    break
        used.add(text)
        text = _with_planted_leak(text, row, threads, lang, p.get("session"))
        out.append({"i": row.i, "text": text, "assistant": reply})
    return _answer({"messages": out})


@fake_handler("check_facts")
def answer_check_facts(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """The fake judge: the offline rule check stands in for a model's reading by meaning."""
    p = extract_payload(messages)
    lang = p.get("language", "en")
    results = []
    for e in p["exchanges"]:
        problem = step_problem(e["step"], e.get("value"), e["user"], e["assistant"], lang)
        item: dict[str, Any] = {"i": e["i"], "ok": problem is None}
        if problem is not None:
            item["why"] = problem
        results.append(item)
    return _answer({"results": results})


@fake_handler("fact_rewrite")
def answer_fact_rewrite(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    p = extract_payload(messages)
    lang = p.get("language", "en")
    row = PlanRow.from_payload(p["row"])
    threads = _threads_of(p.get("threads") or [])
    rng = random.Random(stable_hash("fact_rewrite", p.get("session"), row.i))
    if stable_hash("stubborn", p.get("session"), row.i) % STUBBORN_EVERY == 0:
        return _answer({"text": p["user"], "assistant": p["assistant"]})  # answers, but fixes nothing
    text, reply = p["user"], p["assistant"]
    for _ in range(REWRITE_TRIES):
        text = render_row(row, threads, lang, rng).text
        reply = render_reply(row, lang, rng)
        if row.fact is None or step_problem(row.fact.kind, row.fact.value, text, reply, lang) is None:
            break
    return _answer({"text": text, "assistant": reply})
