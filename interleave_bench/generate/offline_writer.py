"""The offline writer: turns plan rows into messages with phrasing templates, no model needed.

Each row is rendered from the templates of its language, style and action
(``data/offline/templates/<lang>.json``): an explicit message names the thread's title, a cue
carries one concrete fact value of the thread, pronoun and implicit messages are built from generic
phrases only, one-offs are general questions. A row's fact statement and cross reference are
clauses added to the message. Frames, requests, generic phrases and tails multiply, so no single
phrasing covers more than a few percent of its style and almost every message is distinct.

Some vague ``continue`` rows get a short form instead (:data:`SHORT_FORM_P`): a whole message from
``frames.short``, either very short ("ok next", "继续") or a lead-in left open ("One more thing:",
"对了，还有"), as real users send before their next message. Only rows with nothing to carry take
it: no fact to state, no other thread to draw on.

The same renderer answers the fake model's write requests (``generate/fake.py``), so a dry run goes
through the model path with messages of the same shape.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Mapping

from ..errors import InputError
from ..schema import Thread
from . import packs
from .leak import is_vague, leak_hits
from .plan import FACT_UPDATE, PlanRow
from .stepcheck import step_problem
from .text import normalize
from .threads import ThreadSet

#: renders tried for one row before accepting a repeat or a leak (each try draws fresh phrasing)
MAX_RENDER_TRIES = 6
#: chance a fact-free, reference-free implicit or pronoun ``continue`` row is written in a short
#: form: users often send "ok next" or "also…" and go on in the next message; kept modest so whole
#: fixed messages stay rare enough for over 90% of texts to be distinct
SHORT_FORM_P = 0.15
#: the styles that may take a short form (both say nothing of their subject)
SHORT_STYLES = ("implicit", "pronoun")


@dataclass(frozen=True)
class Rendered:
    text: str
    frame: str  # which phrasing was used: ``style:group:index``, for variety statistics


@dataclass(frozen=True)
class Written:
    """A written message: its text, whether it still leaks, and the phrasing used (offline only).

    v1 adds the assistant's reply and ``miss``: the exchange still fails its fact step.
    """

    text: str
    leak: bool = False
    frame: str = ""
    assistant: str | None = None
    miss: bool = False


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def _group(action: str) -> str:
    return "new" if action == "new" else "continue" if action == "continue" else "move"


def _requests(thread: Thread, lang: str) -> tuple[str, ...]:
    try:
        return packs.domain_pack(thread.domain, lang).requests
    except InputError:  # a domain without a pack (model-made threads): generic requests
        return packs.templates(lang).vague


def takes_short_form(row: PlanRow) -> bool:
    """Whether a row may be written as a short form: a vague ``continue`` with nothing to carry."""
    return row.action == "continue" and row.style in SHORT_STYLES and row.fact is None and not row.ref_details


def render_row(row: PlanRow, threads: Mapping[str, Thread], lang: str, rng: random.Random) -> Rendered:
    """One message for one plan row, drawn from the templates with ``rng``.

    ``threads`` maps ids to threads (the row's thread and the threads it refers to). Assumes the
    row is consistent: a cue row has ``cue``, a fact row has ``fact``. A row that
    :func:`takes_short_form` is a whole short form with probability :data:`SHORT_FORM_P`.
    """
    T = packs.templates(lang)
    if row.action == "oneoff" or row.thread is None:
        k = rng.randrange(len(T.oneoff_frames))
        frame = T.oneoff_frames[k]
        fill = {name: rng.choice(vals) for name, vals in frame.slots}
        return Rendered(rng.choice(T.oneoff_prefixes) + frame.text.format(**fill), f"oneoff:{k}")
    if takes_short_form(row) and rng.random() < SHORT_FORM_P:
        forms = T.short[row.style]
        k = rng.randrange(len(forms))
        return Rendered(forms[k], f"{row.style}:short:{k}")  # no tail: it would close a lead-in
    # a vague message needs nothing of its thread (the fake model's rewrite renders without cards)
    thread = threads.get(row.thread)
    group = _group(row.action)
    style = row.style
    if style == "cue" and row.cue is None:
        style = "explicit"
    if style == "explicit":
        frames, fid = T.explicit[group], f"explicit:{group}"
    elif style == "cue":
        frames, fid = T.cue, "cue"
    elif style == "pronoun":
        g = "move" if group == "move" else "continue"
        frames, fid = T.pronoun[g], f"pronoun:{g}"
    else:
        frames, fid = T.implicit, "implicit"
    if thread is None and style in ("explicit", "cue"):
        raise KeyError(f"render_row: thread {row.thread!r} is needed for a {style} message")
    k = rng.randrange(len(frames))
    request = rng.choice(_requests(thread, lang) if thread is not None else T.vague)
    vague = rng.choice(T.vague)
    slots = {
        "title": thread.title if thread is not None else "",
        "request": request,
        "Request": _cap(request),
        "vague": vague,
        "Vague": _cap(vague),
        "cue": row.cue.value if row.cue else "",
        "label": packs.label_for(row.cue.key, lang) if row.cue else "",
    }
    text = frames[k].format(**slots)
    if row.fact is not None:
        text += rng.choice(step_phrasings(row.fact.kind, lang)).format(
            label=packs.label_for(row.fact.key, lang), value=row.fact.value or "", old=row.fact.previous or ""
        )
    for d in row.ref_details:
        ref = threads.get(d.thread)
        pool = T.cross_vague if style in ("pronoun", "implicit") or ref is None else T.cross_named
        text += rng.choice(pool).format(
            ref_title=ref.title if ref else "", ref_value=d.value, ref_label=packs.label_for(d.key, lang)
        )
    tail = rng.choice(T.tail)
    if tail.strip() and normalize(tail.strip(" .。!！")) in normalize(text):
        tail = ""  # "Thanks! ... Thanks." reads like a stutter
    return Rendered(text + tail, f"{fid}:{k}")


def step_phrasings(kind: str, lang: str) -> tuple[str, ...]:
    """The clauses a user message adds for a fact step: v0's ``state``/``update`` (and v1's ``intro``)
    from the templates, v1's other steps from the fact phrasings."""
    if kind in packs.USER_STEPS:
        return packs.fact_templates(lang).user[kind]
    T = packs.templates(lang)
    return T.fact_update if kind == FACT_UPDATE else T.fact_state


def render_reply(row: PlanRow, lang: str, rng: random.Random) -> str:
    """The assistant's reply to a row's message: it proposes the value at a ``propose`` step and
    otherwise answers in general words (never a fact value, so no reply muddles the timeline)."""
    FT = packs.fact_templates(lang)
    if row.fact is not None and row.fact.kind == "propose":
        return rng.choice(FT.reply_propose).format(label=packs.label_for(row.fact.key, lang), value=row.fact.value or "")
    return rng.choice(FT.reply_generic)


def stated_label(row: PlanRow, lang: str) -> tuple[str, ...]:
    """The label of the fact a row states, which its message may name whatever its style."""
    return (packs.label_for(row.fact.key, lang),) if row.fact is not None else ()


def write_offline(
    rows: list[PlanRow], threadset: ThreadSet, lang: str, rng: random.Random, reply_rng: random.Random | None = None
) -> list[Written]:
    """Messages for every row of a session, one per row, in order.

    A vague message that would name its subject, or a text already used in the session, is drawn
    again (up to :data:`MAX_RENDER_TRIES` times); one that still leaks is marked so it gets the
    ``leak`` tag. With ``reply_rng`` (v1) every message also gets the assistant's reply, and an
    exchange the rule check (:func:`~interleave_bench.generate.stepcheck.step_problem`) rejects is
    drawn again too; one still rejected is marked ``miss``.
    """
    by_id = {t.id: t for t in threadset.threads}
    seen: set[str] = set()
    out: list[Written] = []
    for row in rows:
        hits: list[str] = []
        reply: str | None = None
        problem: str | None = None
        for _ in range(MAX_RENDER_TRIES):
            r = render_row(row, by_id, lang, rng)
            hits = []
            if row.thread is not None and is_vague(row):
                hits = leak_hits(r.text, row, by_id[row.thread], lang, threadset.keywords.get(row.thread, ()),
                                 allowed=stated_label(row, lang))
            if reply_rng is not None:
                reply = render_reply(row, lang, reply_rng)
                problem = step_problem(row.fact.kind, row.fact.value, r.text, reply, lang) if row.fact else None
            if not hits and r.text not in seen and problem is None:
                break
        seen.add(r.text)
        out.append(Written(r.text, bool(hits), r.frame, reply, problem is not None))
    return out
