"""The offline writer: turns plan rows into messages with phrasing templates, no model needed.

Each row is rendered from the templates of its language, style and action
(``data/offline/templates/<lang>.json``). An explicit message names its thread as people do: by a
distinctive word in a wrapper ("the dashboard thing"), part of the title, a nickname or a detail of
the description, and only rarely (:data:`TITLE_P`) by the full title; a cue carries one concrete
fact value of the thread; pronoun and implicit messages are built from generic phrases and
requests of the thread's own domain, naming nothing; one-offs are general questions. A row's fact
statement and cross reference are clauses added to the message. The language's typing habits
(an opener, a lower-case start, no end punctuation, a fragment rule, a typo, a word of another
language) touch the generic words only, never a subject, a value or a clause.

Some vague ``continue`` rows get a short form instead (:data:`SHORT_FORM_P`): a whole message from
``frames.short``, either very short ("ok next", "继续") or a lead-in left open ("One more thing:",
"对了，还有"), as real users send before their next message. Only rows with nothing to carry take
it: no fact to state, no other thread to draw on.

The same renderer answers the fake model's write requests (``generate/fake.py``), so a dry run goes
through the model path with messages of the same shape.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Mapping

from ..errors import InputError
from ..schema import THREAD_MOVES, Thread
from . import packs
from .leak import is_vague, leak_hits
from .plan import FACT_UPDATE, PlanRow
from .stepcheck import step_problem
from .reader import content_words, generic_words
from .text import UNSPACED_LANGS, normalize
from .threads import ThreadSet

#: renders tried for one row before accepting a repeat or a leak (each try draws fresh phrasing)
MAX_RENDER_TRIES = 6
#: chance a fact-free, reference-free implicit or pronoun ``continue`` row is written in a short
#: form: users often send "ok next" or "also…" and go on in the next message; a quarter keeps vague
#: messages as short as model-written ones while over 90% of texts stay distinct
SHORT_FORM_P = 0.25
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


def _requests(thread: Thread | None, lang: str) -> tuple[str, ...]:
    if thread is None:
        return packs.templates(lang).vague
    try:
        return packs.domain_pack(thread.domain, lang).requests
    except InputError:  # a domain without a pack (model-made threads): generic requests
        return packs.templates(lang).vague


def takes_short_form(row: PlanRow) -> bool:
    """Whether a row may be written as a short form: a vague ``continue`` with nothing to carry."""
    return row.action == "continue" and row.style in SHORT_STYLES and row.fact is None and not row.ref_details


#: chance an explicit message names its thread by the full title; people mostly do not (the
#: model-written reference has about 4% of explicit messages carrying the title verbatim)
TITLE_P = 0.04
#: weights of the other ways of naming a subject: a distinctive word in a wrapper ("the dashboard
#: thing"), part of the title ("dashboard migration"), a nickname of the pack
SUBJECT_WEIGHTS = {"keyword": 3, "part": 2, "nickname": 2, "detail": 3}
#: how much more often a thread's first message brings up a detail of the description
FIRST_DETAIL_FACTOR = 4
#: a detail of the description is brought up when it is this long (characters, en / unspaced)
DETAIL_CHARS = {"spaced": (12, 40), "unspaced": (4, 14)}
#: what ends a clause of a description
_CLAUSE_END = re.compile(r"[;,.:!?，。；：！？]|\s[-–—]\s")
#: a word a typo may fall on: letters only, this long at least
TYPO_MIN_LETTERS = 5


def _spaced(lang: str) -> bool:
    return lang not in UNSPACED_LANGS


def _lower_first(s: str) -> str:
    """``s`` with its first letter lower-cased, unless the first word is an acronym or a name with
    capitals inside ("PDF", "iOS")."""
    word = s.split(" ", 1)[0]
    if not word or sum(ch.isupper() for ch in word) > 1:
        return s
    return s[:1].lower() + s[1:]


def title_parts(title: str, lang: str) -> tuple[str, ...]:
    """Shorter ways of saying a title that are not the title: it without its first or last word
    ("dashboard migration", "team dashboard"); none in unspaced languages."""
    if _spaced(lang):
        words = title.split()
        if len(words) < 2:
            return ()
        parts = [" ".join(words[1:]), _lower_first(" ".join(words[:-1]))]
        return tuple(p for p in dict.fromkeys(parts) if len(p) >= 4)
    return ()  # cutting characters off a Chinese title makes no word: only whole words name it


def description_details(description: str, lang: str) -> tuple[str, ...]:
    """The clauses of a description fit to bring up in a message, lower-cased at the start."""
    lo, hi = DETAIL_CHARS["spaced" if _spaced(lang) else "unspaced"]
    out = []
    for c in _CLAUSE_END.split(description):
        c = c.strip()
        if lo <= len(c) <= hi and (not _spaced(lang) or len(c.split()) >= 3):
            out.append(_lower_first(c) if _spaced(lang) else c)
    return tuple(out)


def subject_ref(thread: Thread, lang: str, rng: random.Random, *, first: bool = False) -> str:
    """How a message names its thread: rarely the title, mostly a wrapped distinctive word, part of
    the title, a nickname or a detail of the description (see :data:`SUBJECT_WEIGHTS`); the
    ``first`` message of a thread brings up a detail :data:`FIRST_DETAIL_FACTOR` times as often
    (one says what the work is when one first raises it)."""
    if rng.random() < TITLE_P:
        return thread.title
    T = packs.templates(lang)
    v = packs.variant_of(thread.domain, thread.title, lang)
    card = set(content_words(f"{thread.title} {thread.goal} {thread.description}", lang)) - generic_words(lang)
    ways = {
        # a word the card does not hold would name the work to no reader who has only the card
        "keyword": tuple(k for k in (v.keywords if v else ()) if card & set(content_words(k, lang))),
        "part": title_parts(thread.title, lang),
        "nickname": v.nicknames if v else (),
        "detail": description_details(thread.description, lang),
    }
    ways = {k: w for k, w in ways.items() if w}
    if not ways:
        return thread.title
    kinds = sorted(ways)
    weights = [SUBJECT_WEIGHTS[k] * (FIRST_DETAIL_FACTOR if first and k == "detail" else 1) for k in kinds]
    kind = rng.choices(kinds, weights=weights)[0]
    word = rng.choice(ways[kind])
    if kind != "keyword":
        return word
    return rng.choice(T.subject).format(kw=word)


def _typo(text: str, rng: random.Random) -> str:
    """``text`` with two neighbouring letters of one longer word swapped ("shoudl")."""
    words = [m for m in re.finditer(r"[A-Za-z]+", text) if len(m.group(0)) >= TYPO_MIN_LETTERS]
    if not words:
        return text
    m = rng.choice(words)
    w = m.group(0)
    k = rng.randrange(1, len(w) - 2)
    return text[: m.start()] + w[:k] + w[k + 1] + w[k] + w[k + 2 :] + text[m.end() :]


def habitual(filler: str, lang: str, rng: random.Random) -> str:
    """A generic filler (a request, a vague phrase) as people type it: a fragment rule, a word of
    another language, a typo, each by its chance in the templates' ``habits``."""
    H = packs.templates(lang).habits
    if rng.random() < H.fragment_p:
        rules = [r for r in H.fragments if r[0] in filler]
        if rules:
            a, b = rng.choice(rules)
            filler = filler.replace(a, b, 1)
    if rng.random() < H.mix_p:
        words = [r for r in H.mix if r[0] in filler]
        if words:
            a, b = rng.choice(words)
            filler = filler.replace(a, b, 1)
    if _spaced(lang) and rng.random() < H.typo_p:
        filler = _typo(filler, rng)
    return filler.strip() or filler


def _finish(body: str, lang: str, rng: random.Random, *, closes: bool, opener: bool = True) -> str:
    """The message body with an opener (unless ``opener`` is false: "ok" before a one-off would
    tie it to the work at hand), its case and, where nothing follows (``closes``), its end
    punctuation as people type them."""
    T = packs.templates(lang)
    H = T.habits
    if opener and rng.random() < H.opener_p:
        opener = rng.choice(T.openers)
        body = opener + ("" if opener.endswith(" ") or not _spaced(lang) else " ") + body
    if _spaced(lang):
        body = _lower_first(body) if rng.random() < H.lower_p else _cap(body)
    if closes and rng.random() < H.drop_end_p:
        body = body.rstrip(".。!！")
    return body


def render_row(row: PlanRow, threads: Mapping[str, Thread], lang: str, rng: random.Random) -> Rendered:
    """One message for one plan row, drawn from the templates with ``rng``.

    ``threads`` maps ids to threads (the row's thread and the threads it refers to). Assumes the
    row is consistent: a cue row has ``cue``, a fact row has ``fact``. A row that
    :func:`takes_short_form` is a whole short form with probability :data:`SHORT_FORM_P`.

    An explicit message names its subject by :func:`subject_ref` or a detail of the description,
    a cue by one fact value; pronoun and implicit messages use generic phrases only. The typing
    habits touch the generic words alone, never a subject, a value or a fact clause.
    """
    T = packs.templates(lang)
    if row.action == "oneoff" or row.thread is None:
        k = rng.randrange(len(T.oneoff_frames))
        frame = T.oneoff_frames[k]
        fill = {name: rng.choice(vals) for name, vals in frame.slots}
        text = _finish(rng.choice(T.oneoff_prefixes) + frame.text.format(**fill), lang, rng, closes=True, opener=False)
        return Rendered(text, f"oneoff:{k}")
    if takes_short_form(row) and rng.random() < SHORT_FORM_P:
        forms = T.short[row.style]
        k = rng.randrange(len(forms))
        return Rendered(forms[k], f"{row.style}:short:{k}")  # no tail: it would close a lead-in
    # a vague message needs nothing of its thread (the fake model's rewrite renders without cards)
    thread = threads.get(row.thread)
    group = THREAD_MOVES[row.action]
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
        raise KeyError(f"render_row: thread {row.thread!r} is needed for a message of style {style!r}")
    k = rng.randrange(len(frames))
    frame = frames[k]
    slots = {"title": thread.title if thread is not None else ""}
    if "{request}" in frame:
        slots["request"] = habitual(rng.choice(_requests(thread, lang)), lang, rng)
    if "{topic}" in frame:  # a request of the thread's own domain, its subject unsaid
        slots["topic"] = habitual(rng.choice(_requests(thread, lang)), lang, rng)
    if "{about}" in frame:  # a question on one of the thread's facts, by its label alone
        labels = [packs.label_for(f.key, lang) for f in thread.facts] if thread is not None else []
        slots["about"] = (habitual(rng.choice(T.about).format(label=rng.choice(labels)), lang, rng) if labels
                          else habitual(rng.choice(T.vague), lang, rng))
    if "{vague}" in frame:
        slots["vague"] = habitual(rng.choice(T.vague), lang, rng)
    if "{pron}" in frame:
        slots["pron"] = habitual(rng.choice(T.pronoun_requests), lang, rng)
    if "{ref}" in frame:
        slots["ref"] = subject_ref(thread, lang, rng, first=row.action == "new")
    if "{detail}" in frame:
        details = description_details(thread.description, lang)
        slots["detail"] = (rng.choice(T.detail).format(detail=rng.choice(details)) if details
                           else subject_ref(thread, lang, rng))
    if row.cue is not None:
        slots["cue"], slots["label"] = row.cue.value, packs.label_for(row.cue.key, lang)
    clauses = ""
    if row.fact is not None:
        clauses += rng.choice(step_phrasings(row.fact.kind, lang)).format(
            label=packs.label_for(row.fact.key, lang), value=row.fact.value or "", old=row.fact.previous or ""
        )
    for d in row.ref_details:
        ref = threads.get(d.thread)
        pool = T.cross_vague if style in ("pronoun", "implicit") or ref is None else T.cross_named
        clauses += rng.choice(pool).format(
            ref_title=ref.title if ref else "", ref_value=d.value, ref_label=packs.label_for(d.key, lang)
        )
    tail = rng.choice(T.tail)
    text = _finish(frame.format_map(_Slots(slots)), lang, rng, closes=not clauses and not tail.strip())
    if clauses and text[-1:].isalnum():
        text += "," if _spaced(lang) else "，"  # a clause after an open end reads as one run-on line
    text += clauses
    if tail.strip() and normalize(tail.strip(" .。!！")) in normalize(text):
        tail = ""  # "Thanks! ... Thanks." reads like a stutter
    return Rendered(text + tail, f"{fid}:{k}")


class _Slots(dict):
    """Frame slots; a slot the frame names but the row has none for reads as empty."""

    def __missing__(self, key: str) -> str:
        return ""


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
