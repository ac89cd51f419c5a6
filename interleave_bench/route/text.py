"""Text helpers shared by the routers: tokens, titles, messages that go on (the normaliser and the
bare-acknowledgement rule are the project's, :mod:`interleave_bench.text`).

Tokens follow the bm25 baseline's definition (lowercased English words and overlapping pairs of
Chinese characters), so every rule and the fake model read text the same way.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..text import normalize

#: a run of Chinese characters (CJK unified ideographs and extension A, compatibility ideographs)
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
#: an English word: ASCII letters and digits (digits keep dates, amounts and flight numbers)
_WORD = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=1 << 16)
def tokens(text: str) -> tuple[str, ...]:
    """The bm25 tokens of ``text``, in order: lowercased English words, then Chinese bigrams.

    Each run of Chinese characters gives its overlapping pairs ("预订酒店" -> 预订, 订酒, 酒店); a run
    of one character gives that character, so a one-character message still has a token. Cached:
    a topic's messages are tokenised again for every later message of the session.
    """
    lowered = text.lower()
    out = _WORD.findall(lowered)
    for run in _CJK_RUN.findall(lowered):
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[k : k + 2] for k in range(len(run) - 1))
    return tuple(out)


def word_count(text: str) -> int:
    """Number of English words (ASCII letter/digit runs) in ``text``."""
    return len(_WORD.findall(text.lower()))


def cjk_count(text: str) -> int:
    """Number of Chinese characters in ``text``."""
    return sum(len(run) for run in _CJK_RUN.findall(text))


# --- titles ----------------------------------------------------------------------------------------

#: a title shorter than this (after normalising) is too generic to count as a mention
MIN_TITLE_CHARS = 3
#: ...except in Chinese, where two characters already make a specific word
MIN_TITLE_CHARS_CJK = 2


def title_mentioned(title: str, text: str) -> bool:
    """True when the normalised ``title`` occurs in the normalised ``text`` as whole words.

    English titles must sit on word boundaries ("Rome trip" is not found in "Romen trips"); Chinese
    titles are found anywhere, as Chinese has no spaces.
    """
    t = normalize(title)
    if not t:
        return False
    has_cjk = cjk_count(t) > 0
    if len(t.replace(" ", "")) < (MIN_TITLE_CHARS_CJK if has_cjk else MIN_TITLE_CHARS):
        return False
    n = normalize(text)
    if has_cjk:
        return t.replace(" ", "") in n.replace(" ", "")
    return f" {t} " in f" {n} "


def mentioned_titles(titles: dict[str, str], text: str) -> list[str]:
    """The labels whose title ``text`` names, leaving out a title found only inside a longer one.

    ``titles`` maps label -> title. "Trip" and "Trip to Rome" both occur in "about the trip to
    Rome": only the longer one counts, as it is the one the user named.
    """
    hits = {label: normalize(title) for label, title in titles.items() if title_mentioned(title, text)}
    out = []
    for label, t in hits.items():
        inside_longer = any(other != label and len(o) > len(t) and t in o for other, o in hits.items())
        if not inside_longer:
            out.append(label)
    return out


# --- messages that seem to go on ---------------------------------------------------------------------

#: a message ending in one of these is unfinished: more is coming
OPEN_PUNCTUATION = (",", ";", ":", "-", "–", "—", "…", "...", "(", "[", "&", "+", "/", "，", "；", "：", "、", "（", "～", "~")
#: a message ending in one of these words is unfinished ("... and", "... 然后")
DANGLING_EN = frozenset(
    {"and", "but", "or", "so", "also", "plus", "because", "then", "with", "like", "since", "though",
     "although", "if", "when", "while", "as", "the", "a", "an", "to", "for", "of", "about", "btw"}
)
DANGLING_ZH = ("然后", "还有", "而且", "但是", "不过", "另外", "所以", "因为", "或者", "以及", "并且", "接着", "再说", "就是", "和", "跟", "还")
#: a text ending in an English word (its last word is not cut off by punctuation)
_WORD_END = re.compile(r"[a-z0-9]$")
#: at most this many English words is "very short": a fragment, likely followed by more
SHORT_MAX_WORDS = 3
#: at most this many Chinese characters is "very short"
SHORT_MAX_CJK = 6


def seems_to_go_on(text: str) -> bool:
    """True when a message looks unfinished, so a system should wait for the next one.

    That is: it ends in open punctuation, or in a dangling connective ("and", "but", "然后",
    "还有", ...), or it is very short (at most 3 English words and at most 6 Chinese characters).
    """
    stripped = text.rstrip()
    if not stripped:
        return True
    if stripped.endswith(OPEN_PUNCTUATION):
        return True
    # the words found once and the end pattern compiled once (``re.search`` with a pattern string
    # looks it up in re's cache at every call): 1.4% fewer instructions routing offline dev with local
    lowered = stripped.lower()
    words = _WORD.findall(lowered)
    if words and words[-1] in DANGLING_EN and _WORD_END.search(lowered):
        return True
    if not stripped[-1].isascii() and stripped.endswith(DANGLING_ZH):  # (each ends in a Chinese character)
        return True
    return len(words) <= SHORT_MAX_WORDS and cjk_count(stripped) <= SHORT_MAX_CJK  # len(words): word_count(stripped)


# --- titles for topics a rule or baseline opens ------------------------------------------------------

#: a new topic's title from its first message: this many English words...
TITLE_WORDS = 6
#: ...or this many characters of a Chinese message
TITLE_CJK_CHARS = 12


def short_title(text: str) -> str:
    """A short title for a topic opened by ``text``: its first clause, cut to a few words (or
    characters, in Chinese)."""
    flat = " ".join(text.split())
    clause = re.split(r"[，。！？；：,.!?;:]", flat, maxsplit=1)[0].strip() or flat
    if cjk_count(clause) > word_count(clause):
        return clause[:TITLE_CJK_CHARS].strip() or "topic"
    return " ".join(clause.split(" ")[:TITLE_WORDS]).strip(" ,.;:!?") or "topic"
