"""Independent reading: each message labelled without the plan, from the thread cards and the chat so far.

A label is a thread id, ``none`` (belongs to no thread: a one-off) or ``ambiguous`` with the
candidate threads. Wherever the reading disagrees with the plan the message is marked
``ambiguous`` (strict scores leave those out); the label itself goes into ``turn.judge``.

Two readers do this job:

- :func:`read_with_model`: the model reads the messages in chunks, seeing the thread cards, every
  earlier message with the label it already gave, and the new messages.
- :class:`RuleReader` (offline, and the fake model's reading): a message that names a thread's title
  or one of its fact values belongs to the thread named first, unless that mention follows a
  reference phrase ("as in", "from", "参照"...), which marks a thread the message only draws on.
  Without such a mention: a phrase pointing elsewhere ("the other one") picks the one other recent
  thread, or is ambiguous between several; an acknowledgement or a pronoun ("ok", "that one")
  continues the current thread; anything else is a one-off (``none``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Sequence

from ..llm import LLM
from ..schema import JUDGE_AMBIGUOUS, JUDGE_NONE, MIN_CANDIDATES, Thread, agreeing_judge
from . import packs
from .ask import ask_json
from .prompts import read_messages
from .text import UNSPACED_LANGS, AnswerError, find, is_cjk, normalize
from .threads import ThreadSet, anchors, thread_data

#: messages labelled per model request
READ_CHUNK = 8
#: the reader should be as deterministic as the provider allows
READ_TEMPERATURE = 0.0
#: output budget of one reading request (eight short labels)
READ_MAX_TOKENS = 1200
#: words skipped between a reference phrase and the mention it introduces ("as in *the* plan")
_ARTICLES = ("the ", "a ", "an ", "our ", "my ")


@dataclass(frozen=True)
class Label:
    """One reading: ``thread`` is a thread id, ``none`` or ``ambiguous`` (then with ``candidates``)."""

    thread: str
    candidates: tuple[str, ...] = ()

    def judge(self) -> dict[str, Any]:
        """The ``turn.judge`` record."""
        out: dict[str, Any] = {"thread": self.thread}
        if self.thread == JUDGE_AMBIGUOUS:
            out["candidates"] = list(self.candidates)
        return out

    def agrees_with(self, gold_thread: str | None) -> bool:
        """Whether the reading names the planned thread (``none`` for a one-off)."""
        return self.thread == agreeing_judge(gold_thread)


class RuleReader:
    """The rule-based reader of one session; feed it messages in order with :meth:`read`."""

    def __init__(self, threads: Sequence[Thread], lang: str):
        self.lang = lang
        self.ids = [t.id for t in threads]
        lex = packs.templates(lang).lexicon
        self._lead = [normalize(m) for m in lex.lead_markers]
        self._cont = list(lex.continue_markers)
        self._switch = list(lex.switch_markers)
        self._ref = [normalize(m) for m in lex.ref_markers]
        self._anchors = [(tid, text) for tid, text in anchors(list(threads)) if text.strip()]
        generic = generic_words(lang)
        cards = {t.id: set(content_words(f"{t.title} {t.goal} {t.description}", lang)) - generic for t in threads}
        owners: dict[str, list[str]] = {}
        for tid in self.ids:
            for w in cards[tid]:
                owners.setdefault(w, []).append(tid)
        self._owners = owners  # content word -> the threads whose card has it
        self._work = work_words(lang)
        self.current: str | None = None
        self.recent: list[str] = []  # threads labelled so far, most recent first
        self.vague_move = False  # whether the last message moved to another thread by "the other one" alone

    def observe(self, label: Label | str) -> None:
        """Take a label (this reader's or one given earlier) as the state of the conversation."""
        tid = label.thread if isinstance(label, Label) else label
        if tid in self.ids:
            self.current = tid
            self.recent = [tid] + [t for t in self.recent if t != tid]

    def _is_reference(self, norm: str, pos: int) -> bool:
        before = norm[:pos].rstrip()
        for art in _ARTICLES:
            if (before + " ").endswith(" " + art) or before + " " == art:
                before = before[: len(before) - len(art.strip())].rstrip()
                break
        for m in self._ref:
            if before.endswith(m):
                start = len(before) - len(m)
                if self.lang in ("zh", "ja") or start == 0 or not before[start - 1].isalnum():
                    return True
        return False

    def _starts_with_lead(self, norm: str) -> bool:
        for m in self._lead:
            if norm.startswith(m) and (self.lang in ("zh", "ja") or len(norm) == len(m) or not norm[len(m)].isalnum()):
                return True
        return False

    def classify(self, text: str) -> Label:
        """The label of one message given the state so far (the state is not changed)."""
        norm = normalize(text)
        first: dict[str, int] = {}
        referenced: set[str] = set()  # words of mentions the message only draws on
        for tid, phrase in self._anchors:
            pos = find(norm, phrase, self.lang)
            if pos >= 0 and not self._is_reference(norm, pos):
                first[tid] = min(pos, first.get(tid, pos))
            elif pos >= 0:
                referenced.update(content_words(phrase, self.lang))
        if first:
            best = min(first.values())
            tied = [t for t in self.ids if first.get(t) == best]
            return Label(tied[0]) if len(tied) == 1 else Label(JUDGE_AMBIGUOUS, tuple(tied))
        words = set(content_words(text, self.lang)) - referenced
        own: dict[str, int] = {}
        shared: set[str] = set()
        for w in words:
            tids = self._owners.get(w, ())
            if len(tids) == 1:
                own[tids[0]] = own.get(tids[0], 0) + 1
            else:
                shared.update(tids)
        if own:
            best = max(own.values())
            tied = [t for t in self.ids if own.get(t) == best]
            return Label(tied[0]) if len(tied) == 1 else Label(JUDGE_AMBIGUOUS, tuple(tied))
        if shared:
            # only words two cards share (twins, one domain): a reader cannot tell them apart
            return Label(JUDGE_AMBIGUOUS, tuple(t for t in self.ids if t in shared))
        if any(find(norm, m, self.lang) >= 0 for m in self._switch):
            others = [t for t in self.recent if t != self.current]
            if len(others) == 1:
                return Label(others[0])
            if len(others) > 1:
                return Label(JUDGE_AMBIGUOUS, tuple(others))
            return self._continuing()
        pointing = any(find(norm, m, self.lang) >= 0 for m in self._cont)
        if pointing and self.vague_move and len(self.recent) > 1:
            # "that" right after a move made by "the other one" alone: the thread just left is as
            # likely what it points to
            return Label(JUDGE_AMBIGUOUS, tuple(t for t in self.ids if t in self.recent[:2]))
        if pointing or self._starts_with_lead(norm) or words & self._work:
            return self._continuing()
        return Label(JUDGE_NONE)

    def _continuing(self) -> Label:
        if self.current is not None:
            return Label(self.current)
        if len(self.ids) == 1:
            return Label(self.ids[0])
        return Label(JUDGE_AMBIGUOUS, tuple(self.ids))

    def read(self, text: str) -> Label:
        """Label the next message and move the state on."""
        label = self.classify(text)
        before = self.current
        self.observe(label)
        self.vague_move = self._moved_vaguely(text, before, label)
        return label

    def _moved_vaguely(self, text: str, before: str | None, label: Label) -> bool:
        """Whether ``text`` moved the conversation from ``before`` by a switch phrase alone (no
        title, value or card word of any thread)."""
        if before is None or label.thread in (before, JUDGE_NONE):
            return False
        norm = normalize(text)
        if any(find(norm, p, self.lang) >= 0 for _, p in self._anchors):
            return False
        if any(w in self._owners for w in content_words(text, self.lang)):
            return False
        return any(find(norm, m, self.lang) >= 0 for m in self._switch)

    def read_all(self, texts: Iterable[str]) -> list[Label]:
        return [self.read(t) for t in texts]


#: a Latin word of a message: letters and digits, apostrophes inside
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
#: the shortest Latin word that may tell a thread apart
MIN_WORD_CHARS = 3


def content_words(text: str, lang: str) -> list[str]:
    """The words of ``text`` that may point to a thread: Latin words of :data:`MIN_WORD_CHARS` or
    more, lower-cased, a possessive or plural ``s`` cut; in unspaced languages also every pair of
    neighbouring CJK characters."""
    out = []
    for m in _WORD.finditer(normalize(text).replace(" s ", " ")):
        w = m.group(0)
        cjk = [ch for ch in w if is_cjk(ch)]
        if cjk and lang in UNSPACED_LANGS:
            for r in "".join(ch if is_cjk(ch) else " " for ch in w).split():
                out += [r[k : k + 2] for k in range(len(r) - 1)]
            out += [x for x in "".join(" " if is_cjk(ch) else ch for ch in w).split() if len(x) >= MIN_WORD_CHARS]
            continue
        w = re.sub(r"['’]s$", "", w)
        if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        if len(w) >= MIN_WORD_CHARS:
            out.append(w)
    return out


@lru_cache(maxsize=None)
def generic_words(lang: str) -> frozenset[str]:
    """Words that tell no thread apart: the reader's stop words and every word of the templates'
    generic phrasing (vague requests, openers, tails, short forms, fact and cross clauses)."""
    T = packs.templates(lang)
    texts = [*T.lexicon.stopwords, *T.vague, *T.pronoun_requests, *T.openers, *T.tail, *T.short["implicit"],
             *T.short["pronoun"], *T.fact_state, *T.fact_update, *T.cross_named, *T.cross_vague,
             *T.implicit, *T.pronoun["continue"], *T.pronoun["move"]]
    return frozenset(w for t in texts for w in content_words(t.replace("{", " ").replace("}", " "), lang))


@lru_cache(maxsize=None)
def work_words(lang: str) -> frozenset[str]:
    """Words of the templates' generic requests about work ("step", "checklist") that no one-off
    question or its lead-in uses: a message with one of them continues the work at hand."""
    T = packs.templates(lang)
    work = {w for t in [*T.vague, *T.pronoun_requests] for w in content_words(t, lang)}
    oneoff = {w for f in T.oneoff_frames for t in [f.text, *(x for _, vals in f.slots for x in vals)]
              for w in content_words(t.replace("{", " ").replace("}", " "), lang)}
    oneoff |= {w for t in T.oneoff_prefixes for w in content_words(t, lang)}
    return frozenset(work - oneoff - set(content_words(" ".join(T.lexicon.stopwords), lang)))


# --- the model reader --------------------------------------------------------------------------------


def reader_cards(threads: Sequence[Thread]) -> list[dict[str, Any]]:
    """What the reader knows of each thread: everything but the plan (and the twin marker)."""
    return [thread_data(t, twin_key=None) for t in threads]


def check_read_answer(obj: dict[str, Any], indexes: list[int], ids: list[str]) -> list[Label]:
    """The labels of one chunk in order, or :class:`AnswerError` listing what is wrong."""
    got = obj.get("labels")
    if not isinstance(got, list):
        raise AnswerError(['"labels" must be a list'])
    problems: list[str] = []
    by_i: dict[int, Label] = {}
    allowed = set(ids) | {JUDGE_NONE, JUDGE_AMBIGUOUS}
    for k, item in enumerate(got):
        if not isinstance(item, dict) or not isinstance(item.get("i"), int) or isinstance(item.get("i"), bool):
            problems.append(f"labels[{k}] needs an integer i")
            continue
        i, thread = item["i"], item.get("thread")
        if i not in indexes:
            problems.append(f"labels[{k}]: i={i} is not one of the new messages ({indexes[0]}..{indexes[-1]})")
            continue
        if i in by_i:
            problems.append(f"i={i} is labelled twice")
            continue
        if not isinstance(thread, str) or thread not in allowed:
            problems.append(f"i={i}: thread must be a thread id, 'none' or 'ambiguous', got {thread!r}")
            continue
        cands: tuple[str, ...] = ()
        if thread == JUDGE_AMBIGUOUS:
            raw = item.get("candidates")
            if not isinstance(raw, list) or len({c for c in raw if c in ids}) < MIN_CANDIDATES or any(c not in ids for c in raw):
                problems.append(f"i={i}: 'ambiguous' needs candidates: two or more thread ids")  # (MIN_CANDIDATES)
                continue
            cands = tuple(dict.fromkeys(raw))
        by_i[i] = Label(thread, cands)
    missing = [i for i in indexes if i not in by_i and not any(f"i={i}" in p for p in problems)]
    if missing:
        problems.append(f"no label for i={', '.join(map(str, missing))}")
    if problems:
        raise AnswerError(problems)
    return [by_i[i] for i in indexes]


async def read_with_model(llm: LLM, session_id: str, lang: str, threadset: ThreadSet, texts: list[str]) -> list[Label]:
    """The model's reading of every message, in order; raises :class:`SessionFailed` if it cannot."""
    cards = reader_cards(threadset.threads)
    ids = [t.id for t in threadset.threads]
    labels: list[Label] = []
    for start in range(0, len(texts), READ_CHUNK):
        idx = list(range(start, min(start + READ_CHUNK, len(texts))))
        payload = {
            "session": session_id,
            "language": lang,
            "threads": cards,
            "earlier": [{"i": i, "text": texts[i], "label": labels[i].thread} for i in range(start)],
            "messages": [{"i": i, "text": texts[i]} for i in idx],
        }
        labels += await ask_json(
            llm, "read", read_messages(lang, payload),
            lambda obj, idx=idx: check_read_answer(obj, idx, ids),
            lang=lang, stage=f"read messages {idx[0]}-{idx[-1]}", what=f"{session_id} read {idx[0]}-{idx[-1]}",
            temperature=READ_TEMPERATURE, max_tokens=READ_MAX_TOKENS,
        )
    return labels
