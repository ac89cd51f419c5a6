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
from .prompts import rewrite_messages, write_messages
from .text import AnswerError, contains, language_problem
from .threads import ThreadSet, thread_data

#: plan rows written per request (DESIGN.md section 5: "eight at a time")
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
        if r.fact is not None and not contains(text, r.fact.value, lang):
            problems.append(f"i={r.i}: must state the {r.fact.key} value {r.fact.value!r} exactly")
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


async def rewrite_leak(llm: LLM, session_id: str, lang: str, row: PlanRow, text: str, forbidden: list[str]) -> str | None:
    """A rewritten vague message, or None when the model's rewrite is unusable."""
    keep = [row.fact.value] if row.fact is not None else []
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
            leak = False
            if row.thread is not None and is_vague(row):
                hits = leak_hits(text, row, by_id[row.thread], lang)
                if hits:
                    fixed = await rewrite_leak(llm, session_id, lang, row, text, hits)
                    if fixed is not None:
                        text = fixed
                    leak = bool(leak_hits(text, row, by_id[row.thread], lang))
            out.append(Written(text, leak))
    return out

