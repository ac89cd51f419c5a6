"""Text rules every part of the project shares: the one normaliser and the bare-acknowledgement rule.

- :func:`fold`: NFKC, case-folded, runs of white space as one space, trimmed. What "the same text"
  means when a phrase is looked for in a message (punctuation kept: "v1.2" stays "v1.2").
- :func:`normalize`: :func:`fold`, then every character that is not a letter or digit read as a
  space. What titles and acknowledgements are compared on ("Trip to Rome!" == "trip   to rome").
- :func:`is_bare_ack`: whether a message only acknowledges ("ok", "thanks!", "好的，谢谢", "👍").
  The routers' fast path and the mid-reply rule both keep such a message where it is.

The bm25 baseline has a tokeniser of its own (``route/bm25.py``), fixed by the reference.
Pure functions, standard library only.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache


def fold(text: str) -> str:
    """NFKC, case-folded, white space collapsed to single spaces and trimmed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


#: a run of letters and digits: ``[^\W_]`` is exactly the characters ``str.isalnum`` accepts
_ALNUM_RUN = re.compile(r"[^\W_]+")


def normalize(text: str) -> str:
    """:func:`fold`, with every character that is not a letter or digit read as a space.

    (The letter and digit runs of the folded text joined by single spaces: one regular expression
    instead of a test per character, which took a third less time over the texts of SGD's dev
    dialogues, whose assistant replies the local router reads.)"""
    return " ".join(_ALNUM_RUN.findall(unicodedata.normalize("NFKC", text).casefold()))


# --- bare acknowledgements -------------------------------------------------------------------------

#: acknowledgements that carry no content, in any of the project's languages (a chat mixes them:
#: Chinese speakers type "ok" too), stored without spaces. A message is bare when, with its
#: spaces, punctuation, symbols and case removed, it splits into these words. "done" and "will do"
#: confirm the step at hand; "lgtm" approves it; "辛苦了" thanks for the work: none names a subject.
ACKS = frozenset(
    {
        # English
        "ok", "okay", "okey", "k", "kk", "oki", "okie", "okthen", "sure", "yes", "yep", "yeah", "yup", "ya",
        "gotit", "gotcha", "thanks", "thankyou", "thanku", "thx", "ty", "tysm", "manythanks", "cheers", "somuch",
        "alot", "again", "great", "cool", "nice", "perfect", "lovely", "excellent", "super", "brilliant",
        "awesome", "good", "verygood", "goodstuff", "fine", "alright", "allright", "right", "soundsgood",
        "soundsgreat", "noted", "understood", "isee", "makessense", "roger", "ack", "lgtm", "np", "noproblem",
        "done", "willdo",
        # Chinese
        "好", "好的", "好滴", "好嘞", "好哒", "好吧", "好呀", "好啊", "好耶", "嗯", "嗯嗯", "嗯好", "恩", "恩恩", "哦", "噢",
        "喔", "行", "行吧", "可以", "收到", "谢谢", "谢了", "谢啦", "多谢", "感谢", "明白", "明白了", "了解", "知道了",
        "懂了", "没问题", "辛苦了", "辛苦", "棒", "太好了", "对", "对的", "是的", "妥", "ok的", "ok了",
    }
)
#: a message longer than this (letters and digits only) is saying something more
MAX_ACK_CHARS = 24
#: a question mark asks something, so a message with one is never a bare acknowledgement ("?", "ok?")
QUESTION_MARKS = frozenset("?？")
_LONGEST_ACK = max(len(a) for a in ACKS)


@lru_cache(maxsize=1 << 14)
def is_bare_ack(text: str) -> bool:
    """True when the whole message only acknowledges: it has no question mark, and its letters and
    digits (case-folded) split into words of :data:`ACKS`, or it has none at all but is not empty.

    So "ok", "OK!!", "got it, thanks", "好的，谢谢", "will do", "lgtm", "辛苦了", "👍" and "!!" are;
    "?", "ok?", "no", "ok, and add churn", "" are not.
    """
    if not text.strip() or any(q in text for q in QUESTION_MARKS):
        return False
    s = normalize(text).replace(" ", "")
    if not s:
        return True  # symbols only (an emoji, "!!"): a nod with no subject of its own
    if len(s) > MAX_ACK_CHARS:
        return False
    # reach[i]: the first i characters split into acknowledgements (a tiny word-break search)
    reach = [True] + [False] * len(s)
    for i in range(len(s)):
        if reach[i]:
            for size in range(1, min(_LONGEST_ACK, len(s) - i) + 1):
                if s[i : i + size] in ACKS:
                    reach[i + size] = True
    return reach[len(s)]


#: the categories of character no text the project shows as it is (a table's cell, a name on the
#: board) may hold, besides a tab and a line break: control, format (U+202E reorders what follows,
#: U+200E and U+FEFF are unseen), surrogate, private and unassigned (``C*``), and the line and
#: paragraph separators (U+2028, U+2029: a line break)
UNSHOWN_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


#: letters and marks that show nothing (Hangul fillers, the combining grapheme joiner, Mongolian
#: variation selectors): they hide text as a format character does
BLANK_LOOKING = frozenset("\u115f\u1160\u3164\uffa0\u034f\u180b\u180c\u180d\u180e\u180f")


def is_unshown(char: str) -> bool:
    """Whether ``char`` is of :data:`UNSHOWN_CATEGORIES` or :data:`BLANK_LOOKING`."""
    return char in BLANK_LOOKING or unicodedata.category(char) in UNSHOWN_CATEGORIES


def escaped(char: str) -> str:
    """``char`` as an escape: ``\\x1b``, ``\\u202e``, ``\\U000e0001``."""
    n = ord(char)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def escape_unshown(text: str) -> str:
    """``text`` with every character :func:`is_unshown` (a line break and a tab among them) as its
    :func:`escaped` form: how a name the user chose (a file's path in a ``wrote`` line, a table's
    cell) is printed, so it stays on its line and shows what it holds (``run\\x0a1.jsonl``)."""
    if text.isprintable() and BLANK_LOOKING.isdisjoint(text):  # (most text is)
        return text
    return "".join(escaped(c) if is_unshown(c) else c for c in text)
