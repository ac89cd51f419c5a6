"""The fake model's mid-reply classifier: keyword overlap with the catalog, deterministic and fallible.

It reads the situation back out of the prompt (:func:`~interleave_bench.midreply.prompt.read_payload`)
and scores the message against each topic's title, entities and keywords, and against the running
request and its progress. The best-scoring other topic wins when it beats the running work; a
message that matches nothing is ``running`` when short (a fragment) and ``new`` when long; a tie
is ``unsure``. That is how a naive classifier goes wrong: it falls for messages that name another
topic while being about the running work, and misses changes worded with no shared keyword, so a
dry run shows plausible, non-trivial numbers. Some answers come wrapped in a code fence or a
sentence, so the answer parser is exercised too. The same request always gets the same answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..llm.fake import fake_handler, stable_hash
from .prompt import ANSWER_KEY, REQUEST_KIND, UNSURE, read_payload

#: weight of a catalog entity found in the message (a name is strong evidence)
ENTITY_WEIGHT = 2.0
#: weight of a catalog keyword or title word found in the message
KEYWORD_WEIGHT = 1.0
#: weight of each word or character pair the message shares with the running request and progress
CONTEXT_WEIGHT = 0.5
#: at most this much evidence for the running work comes from shared wording (keeps names decisive)
CONTEXT_CAP = 1.5
#: a message that matches nothing is a fragment of the running work up to this length
FRAGMENT_LENGTH = 30
#: a Chinese character says about as much as three Latin letters (for FRAGMENT_LENGTH)
CJK_CHAR_LENGTH = 3
#: one answer in this many comes inside a code fence, one more after a sentence (parser exercise)
DRESSING_MODULUS = 7
#: English words too common to count as shared wording
STOPWORDS = frozenset(
    "the a an and or but to of in on for with at by from is are was were be it this that these those "
    "i me my we our you your he she they them can could should would will just also too so not no do "
    "does did have has had what which when where who how about into than then there here its it's all "
    "one two let make give show me".split()
)

_WORD = re.compile(r"[a-z0-9][a-z0-9'.-]*[a-z0-9]|[a-z0-9]")
_CJK = re.compile(r"[\u3400-\u9fff]+")


def _units(text: str) -> set[str]:
    """Content words (English, four letters or more) and character pairs (Chinese) of a text."""
    low = text.lower()
    words = {w for w in _WORD.findall(low) if len(w) >= 4 and w not in STOPWORDS}
    pairs = {run[i : i + 2] for run in _CJK.findall(low) for i in range(len(run) - 1)}
    return words | pairs


def _mentions(term: str, text: str) -> bool:
    """Whether ``text`` (lower case) contains ``term``: whole words for Latin script, substring otherwise."""
    t = term.lower().strip()
    if not t:
        return False
    if t.isascii():
        return re.search(r"(?<![a-z0-9])" + re.escape(t) + r"(?![a-z0-9])", text) is not None
    return t in text


def _length(text: str) -> int:
    """Length of a message in Latin-letter units (a Chinese character counts CJK_CHAR_LENGTH)."""
    stripped = text.strip()
    cjk = sum(len(run) for run in _CJK.findall(stripped))
    return len(stripped) - cjk + CJK_CHAR_LENGTH * cjk


def _title_words(title: str) -> list[str]:
    low = title.lower()
    return [w for w in _WORD.findall(low) if len(w) >= 4 and w not in STOPWORDS] + _CJK.findall(low)


def topic_score(card: dict[str, Any], text: str) -> float:
    """Evidence that a message (lower case) belongs to a topic card: its names, keywords, title words."""
    score = 0.0
    score += ENTITY_WEIGHT * sum(_mentions(e, text) for e in card.get("entities") or [])
    score += KEYWORD_WEIGHT * sum(_mentions(k, text) for k in card.get("keywords") or [])
    score += KEYWORD_WEIGHT * sum(_mentions(w, text) for w in _title_words(str(card.get("title", ""))))
    return score


def classify(payload: dict[str, Any]) -> str:
    """The fake classifier's destination for one situation (``running``, a topic id, ``new``, ``unsure``)."""
    running = payload.get("running") or {}
    text = str((payload.get("message") or {}).get("text", ""))
    low = text.lower()
    context = _units(f"{running.get('request', '')} {running.get('progress', '')}")
    shared = len(_units(text) & context)
    running_score = topic_score(running.get("topic") or {}, low) + min(CONTEXT_CAP, CONTEXT_WEIGHT * shared)
    others = [(topic_score(t, low), str(t.get("id"))) for t in payload.get("other_topics") or []]
    best_score, best_id = max(others, default=(0.0, ""), key=lambda x: x[0])
    tied = [tid for s, tid in others if s == best_score]
    if best_score > running_score:
        return best_id if len(tied) == 1 else UNSURE
    if running_score > 0:
        return "running" if running_score > best_score else UNSURE
    return "running" if _length(text) <= FRAGMENT_LENGTH else "new"


@fake_handler(REQUEST_KIND)
def answer(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """The answer text: ``{"destination": ...}``, sometimes dressed the way real models dress it."""
    payload = read_payload(messages)
    if payload is None:
        return json.dumps({ANSWER_KEY: UNSURE})
    verdict = json.dumps({ANSWER_KEY: classify(payload)}, ensure_ascii=False)
    dressing = stable_hash(payload.get("message")) % DRESSING_MODULUS
    if dressing == 0:
        return f"```json\n{verdict}\n```"
    if dressing == 1:
        return f"Here is my answer: {verdict}"
    return verdict
