"""The model writer: the user's messages written by a model, eight plan rows at a time.

Each request shows the thread cards, the rows to write (action, style, the fact to state or change,
the cue detail, the threads drawn on) and the last messages before them. The answer must have one
message per row, in the session's language, carrying the row's fact value and cue value exactly; a
bad answer is corrected once (:func:`~interleave_bench.generate.ask.ask_json`). A vague message
(pronoun, implicit) that names its thread's title or a fact value it should not gets one rewrite
request; if that fails or still leaks, the message is kept and tagged ``leak``.
"""

from __future__ import annotations

from typing import Any

from ..llm import LLM
from ..schema import Thread
from .ask import ask_json
from .leak import is_vague, leak_hits
from .offline_writer import Written
from .plan import PlanRow
from .prompts import check_facts_messages, fact_rewrite_messages, rewrite_messages, write_messages, write_v1_messages
from .text import AnswerError, contains, language_problem
from .threads import ThreadSet, thread_data

#: plan rows written per request ("eight at a time")
WRITE_CHUNK = 8
#: earlier messages shown for continuity (older ones rarely change how the next ones read)
EARLIER_CONTEXT = 12
#: varied phrasing across messages and sessions; the cache makes reruns identical anyway
WRITE_TEMPERATURE = 0.9
#: output budget of one write request (eight messages of a few sentences)
WRITE_MAX_TOKENS = 2500
#: a rewrite should stay close to the message it fixes
REWRITE_TEMPERATURE = 0.7
#: output budget of one rewrite (one message)
REWRITE_MAX_TOKENS = 400
#: longest message accepted: users type a few sentences, not essays
MAX_MESSAGE_CHARS = 600
#: longest reply accepted (v1): a reply of a few sentences, so sessions stay cheap to answer over
MAX_REPLY_CHARS = 800
#: v1 steps whose user message states no value (the reply proposes; the user agrees or withdraws)
NO_VALUE_STEPS = ("propose", "accept", "retract")
#: exchanges judged per fact-check request
CHECK_CHUNK = 8
#: the fact check is a judgement: as deterministic as the provider allows
CHECK_TEMPERATURE = 0.0
#: output budget of one fact-check request (eight verdicts with short reasons)
CHECK_MAX_TOKENS = 1200
#: output budget of one v1 write request (eight messages and eight replies)
WRITE_V1_MAX_TOKENS = 5000
#: output budget of one fact rewrite (one message and one reply)
FACT_REWRITE_MAX_TOKENS = 700


def writer_cards(threads: list[Thread]) -> list[dict[str, Any]]:
    """The thread cards of the write prompt."""
    return [thread_data(t, twin_key="twin_of") for t in threads]


def check_write_answer(obj: dict[str, Any], rows: list[PlanRow], lang: str) -> list[str]:
    """The texts of one chunk in row order, or :class:`AnswerError` listing what is wrong."""
    got = obj.get("messages")
    if not isinstance(got, list):
        raise AnswerError(['"messages" must be a list with one entry per row'])
    problems: list[str] = []
    want = [r.i for r in rows]
    if len(got) != len(rows):
        problems.append(f"expected {len(rows)} messages (one per row), got {len(got)}")
    texts: dict[int, str] = {}
    for k, item in enumerate(got):
        i = item.get("i") if isinstance(item, dict) else None
        text = item.get("text") if isinstance(item, dict) else None
        if not isinstance(i, int) or isinstance(i, bool) or i not in want:
            problems.append(f"messages[{k}]: i must be one of the rows' i ({want[0]}..{want[-1]})")
            continue
        if i in texts:
            problems.append(f"i={i} appears twice")
            continue
        if not isinstance(text, str) or not text.strip():
            problems.append(f"i={i}: text must be a non-empty string")
            continue
        text = text.strip()
        if len(text) > MAX_MESSAGE_CHARS:
            problems.append(f"i={i}: text is longer than {MAX_MESSAGE_CHARS} characters")
        if (lp := language_problem(text, lang)) is not None:
            problems.append(f"i={i}: text is {lp}")
        texts[i] = text
    for r in rows:
        text = texts.get(r.i)
        if text is None:
            if not any(f"i={r.i}" in p for p in problems):
                problems.append(f"no message for row i={r.i}")
            continue
        for v in user_values(r):
            if not contains(text, v, lang):
                problems.append(f"i={r.i}: must state the {r.fact.key} value {v!r} exactly")
        if r.cue is not None and r.style == "cue" and not contains(text, r.cue.value, lang):
            problems.append(f"i={r.i}: a cue message must mention {r.cue.value!r} exactly")
    if len(set(texts.values())) < len(texts):
        problems.append("two messages are identical; vary them")
    if problems:
        raise AnswerError(problems)
    return [texts[r.i] for r in rows]


def check_rewrite_answer(obj: dict[str, Any], lang: str, keep: list[str]) -> str:
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise AnswerError(['"text" must be a non-empty string'])
    text = text.strip()
    problems = []
    if (lp := language_problem(text, lang)) is not None:
        problems.append(f"text is {lp}")
    if len(text) > MAX_MESSAGE_CHARS:
        problems.append(f"text is longer than {MAX_MESSAGE_CHARS} characters")
    problems += [f"must still contain {v!r}" for v in keep if not contains(text, v, lang)]
    if problems:
        raise AnswerError(problems)
    return text


def user_values(row: PlanRow) -> list[str]:
    """The values a row's user message must carry: the value its fact states (v0 ``state`` and
    ``update``; v1 ``intro``, ``update`` and ``reject``). A v1 proposal or acceptance carries none."""
    if row.fact is None or not row.fact.value or row.fact.kind in NO_VALUE_STEPS:
        return []
    return [row.fact.value]



async def _without_leak(llm: LLM, session_id: str, lang: str, row: PlanRow, text: str,
                        by_id: dict) -> tuple[str, bool]:
    """``(text, leak)``: a vague message that names its subject is rewritten once (section 5.3);
    ``leak`` says whether it still does."""
    if row.thread is None or not is_vague(row):
        return text, False
    hits = leak_hits(text, row, by_id[row.thread], lang)
    if not hits:
        return text, False
    fixed = await rewrite_leak(llm, session_id, lang, row, text, hits)
    if fixed is not None:
        text = fixed
    return text, bool(leak_hits(text, row, by_id[row.thread], lang))

async def rewrite_leak(llm: LLM, session_id: str, lang: str, row: PlanRow, text: str, forbidden: list[str]) -> str | None:
    """A rewritten vague message, or None when the model's rewrite is unusable."""
    keep = user_values(row)
    payload = {"session": session_id, "language": lang, "i": row.i, "style": row.style, "text": text,
               "forbidden": forbidden, "keep": keep, "row": row.to_payload()}
    try:
        return await ask_json(
            llm, "rewrite", rewrite_messages(lang, payload, row.style, forbidden, keep),
            lambda obj: check_rewrite_answer(obj, lang, keep),
            lang=lang, stage=f"rewrite message {row.i}", what=f"{session_id} rewrite {row.i}",
            temperature=REWRITE_TEMPERATURE, max_tokens=REWRITE_MAX_TOKENS, retry=False,
        )
    except AnswerError:
        return None


async def write_with_model(llm: LLM, session_id: str, lang: str, threadset: ThreadSet, rows: list[PlanRow]) -> list[Written]:
    """Every row's message, written by the model; raises :class:`SessionFailed` if a chunk stays bad."""
    cards = writer_cards(threadset.threads)
    by_id = {t.id: t for t in threadset.threads}
    out: list[Written] = []
    for start in range(0, len(rows), WRITE_CHUNK):
        chunk = rows[start : start + WRITE_CHUNK]
        earlier = [
            {"i": r.i, "thread": r.thread, "text": w.text}
            for r, w in zip(rows[max(0, start - EARLIER_CONTEXT) : start], out[max(0, start - EARLIER_CONTEXT) :])
        ]
        payload = {"session": session_id, "language": lang, "threads": cards, "earlier": earlier,
                   "rows": [r.to_payload() for r in chunk]}
        texts = await ask_json(
            llm, "write", write_messages(lang, payload),
            lambda obj, chunk=chunk: check_write_answer(obj, chunk, lang),
            lang=lang, stage=f"write rows {chunk[0].i}-{chunk[-1].i}", what=f"{session_id} write {chunk[0].i}-{chunk[-1].i}",
            temperature=WRITE_TEMPERATURE, max_tokens=WRITE_MAX_TOKENS,
        )
        for row, text in zip(chunk, texts):
            text, leak = await _without_leak(llm, session_id, lang, row, text, by_id)
            out.append(Written(text, leak))
    return out



# --- v1: user message and reply per row, each fact step checked by meaning ------------------------------


def _exchange_problems(r: PlanRow, text: str, reply: str, lang: str) -> list[str]:
    """What is structurally wrong with one v1 exchange (the meaning is the check request's job)."""
    problems = []
    if r.fact is not None and r.fact.kind == "propose" and r.fact.value and not contains(reply, r.fact.value, lang):
        problems.append(f"i={r.i}: the reply must propose the {r.fact.key} value {r.fact.value!r} exactly")
    if len(reply) > MAX_REPLY_CHARS:
        problems.append(f"i={r.i}: assistant is longer than {MAX_REPLY_CHARS} characters")
    if (lp := language_problem(reply, lang)) is not None:
        problems.append(f"i={r.i}: assistant is {lp}")
    return problems


def check_write_v1_answer(obj: dict[str, Any], rows: list[PlanRow], lang: str) -> list[tuple[str, str]]:
    """``(text, reply)`` of one chunk in row order, or :class:`AnswerError` listing what is wrong."""
    texts = check_write_answer(obj, rows, lang)  # the user side, as v0 checks it
    got = {item.get("i"): item.get("assistant") for item in obj["messages"] if isinstance(item, dict)}
    problems: list[str] = []
    out = []
    for r, text in zip(rows, texts):
        reply = got.get(r.i)
        if not isinstance(reply, str) or not reply.strip():
            problems.append(f"i={r.i}: assistant must be a non-empty string")
            continue
        reply = reply.strip()
        problems += _exchange_problems(r, text, reply, lang)
        out.append((text, reply))
    if problems:
        raise AnswerError(problems)
    return out


def check_verdicts(obj: dict[str, Any], items: list[int]) -> dict[int, str | None]:
    """``{i: None when the step is done, else why not}`` from a fact-check answer, or :class:`AnswerError`."""
    got = obj.get("results")
    if not isinstance(got, list):
        raise AnswerError(['"results" must be a list with one entry per exchange'])
    out: dict[int, str | None] = {}
    problems = []
    for k, item in enumerate(got):
        i = item.get("i") if isinstance(item, dict) else None
        ok = item.get("ok") if isinstance(item, dict) else None
        if not isinstance(i, int) or isinstance(i, bool) or i not in items or i in out:
            problems.append(f"results[{k}]: i must be one of {items}, once each")
            continue
        if not isinstance(ok, bool):
            problems.append(f"i={i}: ok must be true or false")
            continue
        why = item.get("why")
        out[i] = None if ok else (str(why).strip() if isinstance(why, str) and why.strip() else "the step is not done")
    missing = [i for i in items if i not in out]
    if missing and not problems:
        problems.append(f"no verdict for i={', '.join(map(str, missing))}")
    if problems:
        raise AnswerError(problems)
    return out


def _exchange_payload(r: PlanRow, text: str, reply: str) -> dict[str, Any]:
    assert r.fact is not None
    out: dict[str, Any] = {"i": r.i, "step": r.fact.kind, "key": r.fact.key, "value": r.fact.value}
    if r.fact.previous is not None:
        out["previous"] = r.fact.previous
    out["user"] = text
    out["assistant"] = reply
    return out


async def check_steps(llm: LLM, session_id: str, lang: str, rows: list[PlanRow], texts: dict[int, tuple[str, str]],
                      round_: int) -> dict[int, str | None]:
    """The model's verdict on every fact step among ``rows``, by meaning, :data:`CHECK_CHUNK` at a time."""
    stepped = [r for r in rows if r.fact is not None]
    verdicts: dict[int, str | None] = {}
    for start in range(0, len(stepped), CHECK_CHUNK):
        chunk = stepped[start : start + CHECK_CHUNK]
        items = [r.i for r in chunk]
        payload = {"session": session_id, "language": lang, "round": round_,
                   "exchanges": [_exchange_payload(r, *texts[r.i]) for r in chunk]}
        verdicts.update(await ask_json(
            llm, "check_facts", check_facts_messages(lang, payload),
            lambda obj, items=items: check_verdicts(obj, items),
            lang=lang, stage=f"check steps {items[0]}-{items[-1]}", what=f"{session_id} check {items[0]}-{items[-1]}",
            temperature=CHECK_TEMPERATURE, max_tokens=CHECK_MAX_TOKENS,
        ))
    return verdicts


async def rewrite_step(llm: LLM, session_id: str, lang: str, row: PlanRow, text: str, reply: str, why: str,
                       cards: list[dict[str, Any]]) -> tuple[str, str] | None:
    """A rewritten exchange that should do its step, or None when the rewrite is unusable."""
    assert row.fact is not None
    payload = {"session": session_id, "language": lang, "threads": [c for c in cards if c["id"] == row.thread],
               "row": row.to_payload(), **_exchange_payload(row, text, reply)}

    def check(obj: dict[str, Any]) -> tuple[str, str]:
        pair = check_write_v1_answer({"messages": [{"i": row.i, "text": obj.get("text"), "assistant": obj.get("assistant")}]},
                                     [row], lang)
        return pair[0]

    try:
        return await ask_json(
            llm, "fact_rewrite", fact_rewrite_messages(lang, payload, row.fact.kind, why), check,
            lang=lang, stage=f"rewrite step {row.i}", what=f"{session_id} rewrite step {row.i}",
            temperature=REWRITE_TEMPERATURE, max_tokens=FACT_REWRITE_MAX_TOKENS, retry=False,
        )
    except AnswerError:
        return None


async def write_v1_with_model(llm: LLM, session_id: str, lang: str, threadset: ThreadSet, rows: list[PlanRow]) -> list[Written]:
    """Every row's message and reply (v1), steps checked by the model and a miss rewritten once.

    A vague message that leaks gets v0's rewrite. Then a check request judges each fact step by
    meaning; a missed step gets one rewrite request and a second check; a step still missed (or
    whose rewrite is unusable) is marked ``miss``. Raises :class:`SessionFailed` if a request's
    answers stay unusable.
    """
    cards = writer_cards(threadset.threads)
    by_id = {t.id: t for t in threadset.threads}
    texts: dict[int, tuple[str, str]] = {}
    leaks: dict[int, bool] = {}
    for start in range(0, len(rows), WRITE_CHUNK):
        chunk = rows[start : start + WRITE_CHUNK]
        earlier = [
            {"i": r.i, "thread": r.thread, "text": texts[r.i][0], "assistant": texts[r.i][1]}
            for r in rows[max(0, start - EARLIER_CONTEXT) : start]
        ]
        payload = {"session": session_id, "language": lang, "threads": cards, "earlier": earlier,
                   "rows": [r.to_payload() for r in chunk]}
        pairs = await ask_json(
            llm, "write_v1", write_v1_messages(lang, payload),
            lambda obj, chunk=chunk: check_write_v1_answer(obj, chunk, lang),
            lang=lang, stage=f"write rows {chunk[0].i}-{chunk[-1].i}", what=f"{session_id} write {chunk[0].i}-{chunk[-1].i}",
            temperature=WRITE_TEMPERATURE, max_tokens=WRITE_V1_MAX_TOKENS,
        )
        for row, (text, reply) in zip(chunk, pairs):
            text, leak = await _without_leak(llm, session_id, lang, row, text, by_id)
            texts[row.i] = (text, reply)
            leaks[row.i] = leak
    missed: dict[int, str] = {i: why for i, why in (await check_steps(llm, session_id, lang, rows, texts, 1)).items() if why}
    if missed:
        retried = []
        for row in rows:
            if row.i not in missed:
                continue
            fixed = await rewrite_step(llm, session_id, lang, row, *texts[row.i], missed[row.i], cards)
            if fixed is not None:
                texts[row.i] = fixed
                if row.thread is not None:
                    leaks[row.i] = bool(leak_hits(fixed[0], row, by_id[row.thread], lang))
                retried.append(row)
        again = await check_steps(llm, session_id, lang, retried, texts, 2)
        missed = {i: why for i, why in missed.items() if i not in again or again[i]}
    return [Written(texts[r.i][0], leaks[r.i], assistant=texts[r.i][1], miss=r.i in missed) for r in rows]
