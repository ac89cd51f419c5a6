"""Text helpers shared by the routers: tokens, bare acknowledgements, titles, messages that go on.

Tokens follow the bm25 baseline's definition (lowercased English words and overlapping pairs of
Chinese characters), so every rule and the fake model read text the same way.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

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


def normalize(text: str) -> str:
    """Casefolded, NFKC, punctuation and symbols turned into single spaces, trimmed.

    Used to compare titles with messages and to recognise acknowledgements, so "Trip to Rome!" and
    "trip   to rome" read the same.
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    kept = [ch if (ch.isalnum() or ch.isspace()) else " " for ch in text]
    return " ".join("".join(kept).split())


# --- bare acknowledgements -----------------------------------------------------------------------

#: phrases that acknowledge without adding anything; a message made only of these stays put
ACK_PHRASES = frozenset(
    {
        # English
        "ok", "okay", "okey", "k", "kk", "oki", "okie", "thanks", "thank you", "thx", "ty", "thank u",
        "many thanks", "cheers", "got it", "gotcha", "sure", "great", "cool", "nice", "perfect",
        "sounds good", "sounds great", "alright", "all right", "yes", "yep", "yeah", "yup", "noted",
        "understood", "fine", "good", "awesome", "will do", "right", "i see", "makes sense", "lovely",
        "excellent", "super", "brilliant", "done", "roger", "ack", "np", "no problem",
        # Chinese
        "好", "好的", "好滴", "好嘞", "好吧", "嗯", "嗯嗯", "恩", "哦", "噢", "谢谢", "谢了", "多谢", "感谢",
        "收到", "明白", "明白了", "知道了", "了解", "懂了", "行", "行吧", "可以", "没问题", "好呀", "好啊",
        "对", "对的", "是的", "嗯好", "妥", "ok了",
    }
)
_ACK_NOSPACE = frozenset(p.replace(" ", "") for p in ACK_PHRASES)
_ACK_MAX_PHRASE = max(len(p) for p in _ACK_NOSPACE)
#: an acknowledgement longer than this (characters, spaces removed) is saying something more
ACK_MAX_CHARS = 24


def is_bare_ack(text: str) -> bool:
    """True when ``text`` is nothing but acknowledgement phrases ("ok thanks!", "好的，谢谢", "👍").

    A message of symbols only (an emoji, "!!") counts as an acknowledgement too: it carries no
    subject of its own.
    """
    norm = normalize(text).replace(" ", "")
    if not norm:
        return bool(text.strip())
    if len(norm) > ACK_MAX_CHARS:
        return False
    # can the message be cut into acknowledgement phrases? (dynamic programming over positions)
    ok = [False] * (len(norm) + 1)
    ok[0] = True
    for end in range(1, len(norm) + 1):
        for start in range(max(0, end - _ACK_MAX_PHRASE), end):
            if ok[start] and norm[start:end] in _ACK_NOSPACE:
                ok[end] = True
                break
    return ok[len(norm)]


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
    words = _WORD.findall(stripped.lower())
    if words and re.search(r"[a-z0-9]$", stripped.lower()) and words[-1] in DANGLING_EN:
        return True
    if stripped.endswith(DANGLING_ZH):
        return True
    return word_count(stripped) <= SHORT_MAX_WORDS and cjk_count(stripped) <= SHORT_MAX_CJK


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
