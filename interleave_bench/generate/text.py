"""Text helpers shared by the writers, the leak check and the reader: matching, language, JSON answers.

Matching is case-insensitive. In text without spaces between words (Chinese) a phrase matches
anywhere; elsewhere it must stand alone, so ``$35`` does not match inside ``$350`` and ``it`` does
not match inside ``item``.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Iterable

from ..text import fold as normalize  # the project's one normaliser (punctuation kept)

#: languages written without spaces between words: phrases match as plain substrings
UNSPACED_LANGS = ("zh", "ja")
#: a Chinese message must have at least this share of CJK characters among its letters
MIN_CJK_SHARE = 0.3


def is_cjk(ch: str) -> bool:
    o = ord(ch)
    return 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0xF900 <= o <= 0xFAFF or 0x3040 <= o <= 0x30FF


@lru_cache(maxsize=20000)
def _pattern(phrase: str) -> re.Pattern[str]:
    norm = re.escape(normalize(phrase))
    # Stand-alone match for words and values: no letter or digit directly before or after. A
    # phrase that starts or ends with CJK characters needs no boundary on that side.
    left = "" if phrase and is_cjk(phrase[0]) else r"(?<![^\W_])"
    right = "" if phrase and is_cjk(phrase[-1]) else r"(?![^\W_])"
    return re.compile(left + norm + right)


def find(text: str, phrase: str, lang: str) -> int:
    """Position of the first match of ``phrase`` in ``text`` (both normalised), or -1.

    ``text`` must already be :func:`normalize`-d (callers normalise once per message).
    """
    if not phrase.strip():
        return -1
    if lang in UNSPACED_LANGS:
        return text.find(normalize(phrase))
    m = _pattern(phrase).search(text)
    return m.start() if m else -1


def contains(text: str, phrase: str, lang: str) -> bool:
    """Whether ``phrase`` occurs in raw ``text`` (see module docstring for the rule)."""
    return find(normalize(text), phrase, lang) >= 0


def overlapping(a: str, b: str) -> bool:
    """Whether one phrase contains the other (after normalising): they would be confused in matching."""
    na, nb = normalize(a), normalize(b)
    return na in nb or nb in na


def language_problem(text: str, lang: str) -> str | None:
    """Why ``text`` is not written in ``lang``, or None when it plausibly is.

    Chinese needs a fair share of CJK characters (values such as ``$1,200`` or ``Python 3.11``
    may be Latin); any other language must contain no CJK at all and some letters.
    """
    cjk = sum(1 for ch in text if is_cjk(ch))
    letters = sum(1 for ch in text if ch.isalpha() and not is_cjk(ch))
    if lang in UNSPACED_LANGS:
        if cjk < 2 or cjk / max(1, cjk + letters) < MIN_CJK_SHARE:
            return f"not written in {lang}"
        return None
    if cjk:
        return f"contains CJK characters but should be in {lang}"
    if letters == 0:
        return "has no words"
    return None


class AnswerError(ValueError):
    """A model answer that cannot be used; ``problems`` lists every reason, in words."""

    def __init__(self, problems: Iterable[str]):
        self.problems = list(problems) or ["unusable answer"]
        super().__init__("; ".join(self.problems))


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object a model answered, tolerating a code fence or words around it.

    Raises :class:`AnswerError` when there is no JSON object in ``text``.
    """
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for c in candidates:
        try:
            obj = json.loads(c)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            return obj
    raise AnswerError(["the answer is not a JSON object"])
