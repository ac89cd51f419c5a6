"""The offline rule check of v1 fact steps: does an exchange do its step (docs/generate.md#v1-replies-fact-episodes-timeline-and-probes)?

The offline writer's phrasings are known, so a rule can confirm each of them: an ``intro`` or
``update`` states the value (not as a question); a ``propose`` has the reply carry the value and the
user not state it; an ``accept`` agrees (a marker of ``check.accept``) without the value and not as a
question; a ``reject`` refuses (a marker of ``check.reject``) and states the value; a ``retract``
withdraws (a marker of ``check.retract``) without a question. The model path does not use this
rule to judge a model's writing: words lists only know their own phrasings, so there a model judges
by meaning. The fake model uses it as its stand-in judge.
"""

from __future__ import annotations

import re

from . import packs
from .text import contains, normalize

#: sentence ends in the languages the offline writer writes
_SENTENCE = re.compile(r"[^.!?。！？]+[.!?。！？]*")
_QUESTION_END = ("?", "？")


def _sentences(text: str) -> list[str]:
    return [m.group(0).strip() for m in _SENTENCE.finditer(text) if m.group(0).strip()]


def _asked(text: str, phrase: str, lang: str) -> bool:
    """Whether every sentence of ``text`` holding ``phrase`` is a question (False when none holds it)."""
    holding = [s for s in _sentences(text) if contains(s, phrase, lang)]
    return bool(holding) and all(s.endswith(_QUESTION_END) for s in holding)


def _marker(text: str, step: str, lang: str) -> str | None:
    """The first marker of ``step`` that ``text`` holds, or None."""
    norm = normalize(text)
    for m in packs.fact_templates(lang).check[step]:
        if normalize(m) in norm:
            return m
    return None


def step_problem(kind: str, value: str | None, user: str, assistant: str, lang: str) -> str | None:
    """Why an exchange (user message, assistant reply) fails to do its ``kind`` step, or None.

    ``value`` is the step's value (the proposed one for ``propose``, the value kept for
    ``reject``, None for ``retract``).
    """
    v = value or ""
    if kind in ("intro", "update"):
        if not contains(user, v, lang):
            return f"the user does not state the value {v!r}"
        if _asked(user, v, lang):
            return "the user states the value as a question"
        return None
    if kind == "propose":
        if not contains(assistant, v, lang):
            return f"the reply does not propose {v!r}"
        if contains(user, v, lang):
            return f"the user states {v!r} instead of the reply proposing it"
        return None
    if kind == "accept":
        if contains(user, v, lang):
            return f"the acceptance repeats the value {v!r}"
        m = _marker(user, "accept", lang)
        if m is None:
            return "the user does not agree"
        if _asked(user, m, lang):
            return "the user agrees as a question"
        return None
    if kind == "reject":
        if _marker(user, "reject", lang) is None:
            return "the user does not turn the proposal down"
        if not contains(user, v, lang):
            return f"the user does not state the value {v!r} instead"
        return None
    if kind == "retract":
        m = _marker(user, "retract", lang)
        if m is None:
            return "the user does not withdraw the value"
        if _asked(user, m, lang):
            return "the user withdraws as a question"
        return None
    return None  # a v0 kind: nothing to check
