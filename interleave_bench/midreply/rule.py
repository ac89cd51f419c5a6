"""The shipped mid-reply rule: when in doubt, a message stays with the running work.

A message that arrives while a reply runs is sent elsewhere only when the classifier says so
clearly. Everything else stays with the running work:

- a bare acknowledgement ("ok", "thanks!", "好的", "👍"), decided before and without a model call;
- a message the classifier keeps (``running``);
- a message the classifier cannot decide (``unsure``);
- a message whose call failed or whose answer could not be read (recorded as such).

Staying is the safe failure: a change to the running work sent elsewhere is lost to the work
(the reply carries on without it), while another matter kept with the running work is at worst
answered in the wrong place, where the person sees it at once. ``--rule-only`` applies this rule
with no classifier at all, so every message stays: the baseline a classifier has to beat.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from ..schema import MID_REPLY_RUNNING
from .prompt import UNSURE

#: bump when the rule (or the acknowledgement list) changes, so stored results are redone
RULE_VERSION = "1"

# How a decision was reached (the ``via`` of a result row).
VIA_ACK = "ack"  # a bare acknowledgement: stays, no call made
VIA_CLASSIFIER = "classifier"  # the classifier's answer was followed (running, a topic, or new)
VIA_UNSURE = "unsure"  # the classifier could not decide: stays
VIA_UNPARSABLE = "unparsable"  # the answer could not be read: stays
VIA_ERROR = "error"  # the call failed after every retry: stays
VIA_RULE_ONLY = "rule-only"  # no classifier (the baseline): stays
VIAS = (VIA_ACK, VIA_CLASSIFIER, VIA_UNSURE, VIA_UNPARSABLE, VIA_ERROR, VIA_RULE_ONLY)

#: acknowledgements that carry no content, in any of the project's languages (a chat mixes them:
#: Chinese speakers type "ok" too). Stored without spaces; the message is matched with its spaces,
#: punctuation and case removed, so "Got it, thanks!" and "好的，谢谢" are bare acknowledgements.
ACKS = frozenset(
    {
        # English
        "ok", "okay", "okey", "k", "kk", "oki", "okie", "sure", "yes", "yep", "yeah", "yup", "ya",
        "gotit", "gotcha", "thanks", "thankyou", "thx", "ty", "tysm", "cheers", "great", "cool",
        "nice", "perfect", "alright", "allright", "soundsgood", "fine", "noted", "understood",
        "roger", "lgtm", "np", "awesome", "good", "verygood", "right", "okthen", "goodstuff",
        "somuch", "alot", "again",
        # Chinese
        "好", "好的", "好滴", "好嘞", "好哒", "好吧", "嗯", "嗯嗯", "恩", "恩恩", "哦", "噢", "喔",
        "行", "行吧", "可以", "收到", "谢谢", "多谢", "感谢", "谢啦", "明白", "明白了", "了解",
        "知道了", "没问题", "辛苦了", "辛苦", "棒", "太好了", "好耶", "懂了", "妥", "ok的",
        # emoji and symbols people send as a nod
        "👍", "👌", "🙏", "✅", "🙂", "😊",
    }
)
#: a message longer than this (after removing spaces and punctuation) is never a bare acknowledgement
MAX_ACK_CHARS = 24

_LONGEST_ACK = max(len(a) for a in ACKS)
#: Unicode categories dropped before matching: punctuation, modifier symbols (emoji skin tones),
#: format characters (zero-width joiners) and combining marks (emoji variation selectors)
_DROPPED_CATEGORIES = ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sk", "Cf", "Mn")
#: symbols people trail a nod with ("ok~", "好的～" becomes "~" under NFKC)
_DROPPED_SYMBOLS = frozenset("~^")


def _normalise(text: str) -> str:
    """NFKC, case-folded, without spaces, punctuation, tildes and emoji modifiers."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(
        ch
        for ch in text
        if not ch.isspace() and unicodedata.category(ch) not in _DROPPED_CATEGORIES and ch not in _DROPPED_SYMBOLS
    )


def is_bare_ack(text: str) -> bool:
    """True when the whole message is one or more acknowledgements and nothing else.

    A split into words of :data:`ACKS` after removing spaces, punctuation and case:
    "ok", "Thanks!", "got it, thanks", "好的，谢谢", "👍" are; "ok, and add churn", "no", "?" are not.
    """
    s = _normalise(text)
    if not s or len(s) > MAX_ACK_CHARS:
        return False
    # reach[i]: the first i characters split into acknowledgements (a tiny word-break search)
    reach = [True] + [False] * len(s)
    for i in range(len(s)):
        if reach[i]:
            for size in range(1, min(_LONGEST_ACK, len(s) - i) + 1):
                if s[i : i + size] in ACKS:
                    reach[i + size] = True
    return reach[len(s)]


@dataclass(frozen=True)
class ClassifierOutcome:
    """What the classifier gave for one message.

    ``destination``: ``running``, a topic id, ``new`` or ``unsure`` when the answer was read;
    ``None`` when the call failed (``failure`` = ``error``) or the answer was unreadable
    (``failure`` = ``unparsable``).
    """

    destination: str | None
    failure: str | None = None

    def __post_init__(self) -> None:
        if (self.destination is None) == (self.failure is None):
            raise ValueError("a classifier outcome has either a destination or a failure")
        if self.failure not in (None, VIA_ERROR, VIA_UNPARSABLE):
            raise ValueError(f"unknown failure {self.failure!r}")


@dataclass(frozen=True)
class Decision:
    """Where the message goes (``running``, a topic id or ``new``) and how that was decided (``via``)."""

    destination: str
    via: str


def decide(text: str, outcome: ClassifierOutcome | None) -> Decision:
    """Apply the shipped rule to one message; ``outcome`` is None when no classifier ran.

    A bare acknowledgement stays whatever the classifier said. Otherwise the classifier's
    ``running``, topic id or ``new`` is followed, and ``unsure``, a failed call or an unreadable
    answer stays with the running work.
    """
    if is_bare_ack(text):
        return Decision(MID_REPLY_RUNNING, VIA_ACK)
    if outcome is None:
        return Decision(MID_REPLY_RUNNING, VIA_RULE_ONLY)
    if outcome.failure is not None:
        return Decision(MID_REPLY_RUNNING, outcome.failure)
    if outcome.destination == UNSURE:
        return Decision(MID_REPLY_RUNNING, VIA_UNSURE)
    return Decision(str(outcome.destination), VIA_CLASSIFIER)
