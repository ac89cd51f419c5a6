"""The fake model's answers to a facts run's requests (extraction, summary, answer, routing).

Deterministic rules over the prompt text alone (never the data file), so ``--dry-run`` and the
tests exercise the whole model path at no cost and the fake behaves like a competent model on the
project's own data. It reads text as the offline writer writes it: every phrasing of a fact step
(statements and updates, refusals, acceptances, withdrawals, the assistant's proposals) is one of
the writer's templates (``data/offline/templates`` and ``data/offline/facts``), turned here into a
pattern with the fact's label and value as groups, and labels are the domain packs' (plus any the
prompt itself names). The probe's question is read with
:func:`~interleave_bench.schema.read_probe_question`, the same definition the generator writes.
It is a stand-in, not a measurement of anything.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Optional, Sequence

from ..errors import InputError
from ..generate import packs
from ..llm.fake import fake_handler
from ..route.text import title_mentioned
from ..schema import UNDECIDED_WORDS, read_probe_question
from .metrics import is_undecided, normalize
from .prompts import ANSWER_KIND, EXTRACT_KIND, ROUTE_KIND, SUMMARY_KIND

#: what a phrasing does to a fact; ``accepted`` confirms the value proposed before it
CONFIRMED, PROPOSED, WITHDRAWN, ACCEPTED = "confirmed", "proposed", "withdrawn", "accepted"
#: who speaks a phrasing
USER, REPLY = "user", "reply"
#: a value's characters: English values hold dots, commas and colons ("metrics-qa.internal",
#: "$2,400", "9:45 am") but never a sentence end; Chinese ones no Chinese punctuation
_VALUE = {"en": r"(?:(?![.?!;](?:\s|$))[^\n])+?", "zh": r"[^。！？；，\n]+?"}
_CJK = re.compile(r"[\u4e00-\u9fff]")
#: a line of notes: a briefing line ``- "<source>" <key>: <value> [notice]`` or a summary line
#: ``- <key>: <value> [notice]`` under ``Summary of "<source>":``
_NOTE_LINE = re.compile(r'^- (?:"(?P<src>[^"]*)" )?(?P<key>.+?)[:：] ?(?P<value>.+?)(?: ?\[[^\]]*\])?$')
_SUMMARY_HEAD = re.compile(r'^Summary of "(?P<src>[^"]*)":$')
#: the fake summary's words per language
_SUMMARY_WORDS = {
    "en": {"withdrawn": "withdrawn, undecided", "changed": "changed; was {old}", "none": "Nothing settled yet."},
    "zh": {"withdrawn": "已撤回，未定", "changed": "改过；原为{old}", "none": "目前没有定下来的事项。"},
}


def lang_of(text: str) -> str:
    """``zh`` when the text holds Chinese characters, else ``en``."""
    return "zh" if _CJK.search(text) else "en"


@dataclass(frozen=True)
class Said:
    """One fact step a text does: where, the label as written, the value (None for a withdrawal or
    an acceptance), what it does (:data:`CONFIRMED`...) and the words that do it."""

    start: int
    label: str
    value: Optional[str]
    status: str
    evidence: str


def _templates(lang: str, who: str) -> list[tuple[str, str]]:
    """``(status, template)`` of every phrasing ``who`` may use, the more specific kinds first (a
    refusal or an update also reads as a plain statement of its value)."""
    FT, T = packs.fact_templates(lang), packs.templates(lang)
    if who == REPLY:
        return [(PROPOSED, t) for t in FT.reply_propose]
    return ([(WITHDRAWN, t) for t in FT.user["retract"]] + [(CONFIRMED, t) for t in FT.user["reject"]]
            + [(CONFIRMED, t) for t in T.fact_update] + [(ACCEPTED, t) for t in FT.user["accept"]]
            + [(CONFIRMED, t) for t in T.fact_state])


def _literal(text: str, at_end: bool) -> str:
    out = []
    for k, ch in enumerate(text):
        if ch.isspace():
            out.append(r"\s+")
        elif ch == "." and (k + 1 == len(text) and at_end or k + 1 < len(text) and text[k + 1].isspace()):
            out.append(r"\.(?=\s|$)")  # a sentence end, not the dot inside a value
        else:
            out.append(re.escape(ch))
    return "".join(out)


def _pattern(template: str, lang: str, labels: Sequence[str]) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", template.strip())
    label = "|".join(re.escape(x) for x in sorted(labels, key=lambda x: (-len(x), x)))
    value = _VALUE.get(lang, _VALUE["en"])
    out = [r"(?<![\w'’])"] if lang == "en" else []
    for k, part in enumerate(parts):
        if k % 2 == 0:
            out.append(_literal(part, k + 1 == len(parts)))
        elif part == "label":
            out.append(f"(?P<label>{label})" + (r"(?!\w)" if lang == "en" else ""))
        else:
            out.append(f"(?P<{part}>{value})")
    return re.compile("".join(out), re.IGNORECASE)


def pack_labels(lang: str) -> frozenset[str]:
    """The labels the offline writer names facts by in ``lang`` (none for a language without packs)."""
    try:
        return frozenset(packs.fact_labels(lang).values())
    except InputError:
        return frozenset()


@lru_cache(maxsize=256)
def _patterns(lang: str, who: str, extra: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    labels = sorted(pack_labels(lang) | set(extra))
    if not labels:
        return ()
    try:
        templates = _templates(lang, who)
    except InputError:
        return ()
    return tuple((status, _pattern(t, lang, labels)) for status, t in templates)


def read_said(text: str, who: str, lang: str, labels: Iterable[str] = ()) -> list[Said]:
    """Every fact step ``text`` does when ``who`` says it, in text order; ``labels`` adds labels
    beyond the packs'. Where phrasings overlap, the more specific kind wins."""
    extra = tuple(sorted({x for x in labels if x} - pack_labels(lang)))
    found: list[Said] = []
    taken: list[tuple[int, int]] = []
    for status, pattern in _patterns(lang, who, extra):
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            taken.append((m.start(), m.end()))
            value = m.group("value") if "value" in pattern.groupindex else None
            found.append(Said(m.start(), m.group("label"), value.strip() if value else None, status, m.group(0)))
    return sorted(found, key=lambda s: s.start)


def _same(a: str, b: str) -> bool:
    return normalize(a) == normalize(b)


def _payload(messages: list[dict[str, Any]]) -> dict[str, Any]:
    try:
        obj = json.loads(messages[-1]["content"])
    except (json.JSONDecodeError, KeyError, IndexError, TypeError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _proposed_in(replies: Iterable[str], label: str, lang: str) -> Optional[str]:
    """The value the latest of ``replies`` proposes for ``label``, or None."""
    for reply in reversed(list(replies)):
        for s in reversed(read_said(reply, REPLY, lang, [label])):
            if _same(s.label, label):
                return s.value
    return None


@fake_handler(EXTRACT_KIND)
def answer_extract(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    p = _payload(messages)
    last = p.get("last") or {}
    user, assistant = str(last.get("user", "")), str(last.get("assistant", ""))
    facts = [f for f in p.get("facts") or [] if isinstance(f, dict) and isinstance(f.get("label"), str)]
    recent = [x for x in p.get("recent") or [] if isinstance(x, dict)]
    lang = lang_of(user + assistant)
    labels = [f["label"] for f in facts]

    def known(label: str) -> str:
        return next((x for x in labels if _same(x, label)), label)

    items: list[dict[str, Any]] = []
    for s in read_said(user, USER, lang, labels):
        label, value, status = known(s.label), s.value, s.status
        if status == ACCEPTED:
            pending = [f for f in facts if _same(f["label"], label) and f.get("status") == PROPOSED and f.get("value")]
            value = str(pending[-1]["value"]) if pending else _proposed_in(
                (str(x.get("assistant", "")) for x in recent), label, lang)
            if value is None:
                continue  # nothing was proposed: nothing to accept
            status = CONFIRMED
        items.append({"label": label, "value": value, "status": status, "evidence": s.evidence})
    for s in read_said(assistant, REPLY, lang, labels):
        items.append({"label": known(s.label), "value": s.value, "status": PROPOSED, "evidence": s.evidence})
    return json.dumps({"items": items}, ensure_ascii=False)


@fake_handler(SUMMARY_KIND)
def answer_summary(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    p = _payload(messages)
    exchanges = [x for x in p.get("exchanges") or [] if isinstance(x, dict)]
    lang = lang_of(" ".join(str(x.get("user", "")) for x in exchanges))
    words = _SUMMARY_WORDS.get(lang, _SUMMARY_WORDS["en"])
    # label -> (label as written, value or None when withdrawn, the value before a change)
    state: dict[str, tuple[str, Optional[str], Optional[str]]] = {}
    proposed: dict[str, str] = {}
    for x in exchanges:
        for s in read_said(str(x.get("user", "")), USER, lang):
            key = normalize(s.label)
            value = proposed.get(key) if s.status == ACCEPTED else s.value if s.status == CONFIRMED else None
            if s.status == ACCEPTED and value is None:
                continue
            before = state.get(key)
            now = before[1] if before else None
            was = now if now is not None and now != value else (before[2] if before else None)
            state[key] = (s.label, value, was)
        for s in read_said(str(x.get("assistant", "")), REPLY, lang):
            if s.value:
                proposed[normalize(s.label)] = s.value
    lines = []
    for label, value, old in state.values():
        if value is None:
            lines.append(f"- {label}: {words['withdrawn']}")
        else:
            note = f" [{words['changed'].format(old=old)}]" if old else ""
            lines.append(f"- {label}: {value}{note}")
    return "\n".join(lines) if lines else words["none"]


def _from_notes(text: str, source: str, label: str) -> tuple[bool, Optional[str]]:
    """Whether notes in ``text`` speak of ``source``'s ``label``, and the value the last such line
    gives (None: not settled)."""
    seen, value = False, None
    block: Optional[str] = None
    for raw in text.splitlines():
        line = raw.strip()
        head = _SUMMARY_HEAD.match(line)
        if head:
            block = head.group("src")
            continue
        m = _NOTE_LINE.match(line)
        if not m:
            continue
        src = m.group("src") if m.group("src") is not None else block
        key = m.group("key")
        if src != source or not (_same(key, label) or _same(key.replace("_", " "), label)):
            continue
        seen = True
        v = m.group("value").strip()
        value = None if is_undecided(v) else v
    return seen, value


@fake_handler(ANSWER_KIND)
def answer_probe(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    final = str(messages[-1].get("content", ""))
    q = read_probe_question(final)
    if q is None:
        return UNDECIDED_WORDS["en"]
    undecided = UNDECIDED_WORDS[q.lang]
    # Read the history in order, the latest word wins: notes (earlier probes' and this one's) about
    # the source's fact, and the chat's own statements of it while the chat is on the source topic.
    value: Optional[str] = None
    on_source = False
    proposed: Optional[str] = None
    for msg in [*messages[1:-1], {"role": "user", "content": final}]:
        text = str(msg.get("content", ""))
        if msg.get("role") == "user":
            seen, noted = _from_notes(text, q.source, q.label)
            if seen:
                value = noted
            if read_probe_question(text) is not None:
                continue  # a probe names both topics: it moves the chat nowhere
            if title_mentioned(q.source, text):
                on_source = True
            elif title_mentioned(q.thread, text):
                on_source = False
            if not on_source:
                continue
            for s in read_said(text, USER, lang_of(text), [q.label]):
                if not _same(s.label, q.label):
                    continue
                if s.status == ACCEPTED:
                    if proposed is not None:
                        value = proposed
                else:
                    value = s.value if s.status == CONFIRMED else None
        elif on_source:
            found = _proposed_in([text], q.label, lang_of(text))
            proposed = found if found is not None else proposed
    return value if value is not None else undecided


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
