"""The text signals of the ``local`` router: what a message says, read without a model.

Lexicons of dialogue acts (an acknowledgement or carry-on opener, a vague follow-up, a pointer
back, a request opening a new subject, a one-off opener, a sentence drawing on another topic),
sentence splitting, character n-grams, and in multi-party chat who is who (:func:`people`). English
entries match as whole words of the lowercased text, Chinese ones anywhere. Entries are the
language's ordinary words for those acts, never one writer's fixed phrasing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple, Optional, Sequence

from .base import RouterView

from ..text import is_bare_ack, normalize

#: character n-gram length: three characters catch word stems and most Chinese words
CHAR_N = 3

# --- dialogue signals --------------------------------------------------------------------------------
# English entries match as whole words of the lowercased text, Chinese ones anywhere.

#: words that point back at what is being discussed: the message continues the current topic
ANAPHORA = (
    "it", "that", "this", "those", "these", "them", "same", "again", "that one", "this one",
    "它", "这个", "那个", "这件事", "那件事", "这边", "那边", "刚才", "这部分", "那部分", "这块", "那块",
)
#: phrases that point at another, earlier topic ("back to the other one")
OTHER_TOPIC = (
    "the other", "other one", "earlier one", "from before", "previous one", "what we had before",
    "other thing", "other matter", "other plan",
    "另一个", "另一件", "之前那", "前面那", "先前那", "早先那", "另外那件", "换回",
)
#: openers that acknowledge or carry on ("ok,", "thanks!", "好的，")
LEADS = (
    "ok", "okay", "alright", "all right", "great", "thanks", "thank you", "sure", "good", "got it", "fine",
    "yep", "yes", "yeah", "cool", "nice", "noted", "understood", "agreed", "makes sense", "mhm", "next",
    "go on", "carry on", "keep going", "continue", "and then", "right", "perfect", "sounds good",
    "好", "行", "嗯", "可以", "收到", "明白", "谢谢", "不错", "没问题", "了解", "对", "很好", "太好了",
    "懂了", "清楚了", "继续", "接着", "然后", "下一步", "往下", "再补",
)
#: phrases that open a new piece of work
NEW_SUBJECT = (
    "new", "start", "starting", "begin", "another", "also need", "also want", "something else", "different",
    "新", "开始", "另外", "还有个事", "还有一件", "换个",
)
#: the forms of a request ("I need ...", "can you ...", "帮我..."): one with nothing in common with the
#: topics so far opens a new piece of work
REQUEST = (
    "i need", "i want", "i would like", "i d like", "i am looking for", "i m looking for", "looking for",
    "can you", "could you", "would you", "help me", "please", "how do i", "how can i", "is there",
    "我想", "我要", "我需要", "帮我", "能不能", "可以帮", "请", "怎么",
)
#: phrases that announce a question outside every piece of work
ONEOFF_OPENERS = (
    "random question", "off topic", "unrelated", "side question", "different question", "quick question",
    "by the way", "general knowledge",
    "随便问", "题外话", "不相关", "插一句", "常识", "岔开", "顺便问",
)
#: phrases that draw on another topic: a sentence holding one speaks of that topic, not to it
REFERENCES = (
    "consistent with", "as in", "against", "around", "factor in", "bear in mind", "alongside",
    "clash with", "line up with", "coordinate", "together with", "compared with", "other side",
    "elsewhere", "same as",
    "参照", "参考", "对照", "考虑到", "避开", "配合", "沿用", "结合", "冲突", "撞上", "保持一致", "那边的",
)

#: a sentence ends after one of these (a full stop inside "v1.2" or "$1.5" does not end one)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


_WORD_RUN = re.compile(r"[a-z0-9]+")
_LEADING_JUNK = re.compile(r"^[\W_]+")


def _lexicon(phrases: Sequence[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """English phrases (words joined by single spaces) and Chinese ones of a lexicon."""
    words = frozenset(" ".join(p.split()) for p in phrases if not _CJK.search(p))
    return words, tuple(p for p in phrases if _CJK.search(p))


def _finder(phrases: Sequence[str], *, whole_words: bool = False) -> Optional[re.Pattern[str]]:
    """A pattern found in a text exactly when one of ``phrases`` is (None for no phrases); with
    ``whole_words``, only with a space or the text's edge on either side."""
    if not phrases:
        return None
    pattern = "|".join(map(re.escape, phrases))
    return re.compile(rf"(?<![^ ])(?:{pattern})(?![^ ])" if whole_words else pattern)


_LEXICONS = {name: _lexicon(v) for name, v in (
    ("anaphora", ANAPHORA), ("other", OTHER_TOPIC), ("new", NEW_SUBJECT), ("oneoff", ONEOFF_OPENERS),
    ("ref", REFERENCES), ("request", REQUEST),
)}
_LEAD_WORDS, _LEAD_CHINESE = _lexicon(LEADS)
#: the longest English phrase of any lexicon, in words
MAX_PHRASE_WORDS = max(len(p.split()) for words, _ in [*_LEXICONS.values(), (_LEAD_WORDS, ())] for p in words)
#: per lexicon, a pattern of its English phrases found in :func:`words_of` a text exactly when
#: the phrase's words are consecutive words of it, and one of its Chinese phrases (:func:`says`);
#: one search each instead of one set of every run of words per text (which, kept, was most of
#: what a run left for the garbage collector to walk; ``benchmarks/bench_route.py --corpus``:
#: SGD dev 5% faster closed, 11% open, IRC dev 12%)
_FINDERS = {name: (_finder(sorted(words), whole_words=True), _finder(chinese)) for name, (words, chinese) in _LEXICONS.items()}
#: per lexicon, the first words of its English phrases: a text holding none of them holds none of
#: its phrases, and is not searched (with ASCII text not searched for Chinese phrases either: the
#: five lexicons of a message took 5.3 us on IRC's dev logs, 2.7 us so)
_FIRST_WORDS = {name: frozenset(p.split()[0] for p in words) for name, (words, _) in _LEXICONS.items()}
_LEAD_FIRST_WORDS = frozenset(p.split()[0] for p in _LEAD_WORDS)


@lru_cache(maxsize=1 << 14)
def words_of(lowered: str) -> tuple[str, tuple[str, ...]]:
    """The English words of ``lowered`` (ASCII letter and digit runs, as in the bm25 tokens) joined
    by single spaces, and one by one."""
    words = tuple(_WORD_RUN.findall(lowered))
    return " ".join(words), words


def says(kind: str, lowered: str) -> bool:
    """True when lowercased text ``lowered`` holds a phrase of lexicon ``kind`` (English ones as
    whole words, Chinese ones anywhere)."""
    english, chinese = _FINDERS[kind]
    if english is not None:
        joined, words = words_of(lowered)
        if not _FIRST_WORDS[kind].isdisjoint(words) and english.search(joined) is not None:
            return True
    return chinese is not None and not lowered.isascii() and chinese.search(lowered) is not None


def starts_with_lead(lowered: str) -> bool:
    """True when lowercased text ``lowered`` opens (after any punctuation) with an acknowledgement
    or carry-on word."""
    # the opening after the punctuation, cut out, not the text copied without it; a Chinese
    # opener only where the text opens with a character beyond ASCII (each of them does)
    junk = _LEADING_JUNK.match(lowered)
    start = junk.end() if junk is not None else 0
    text = lowered[start:start + 60]
    first = text[:1]
    if not first.isascii():
        return text.startswith(_LEAD_CHINESE)
    if not first.isalnum():
        return False
    words = _WORD_RUN.findall(text)
    if not words or words[0] not in _LEAD_FIRST_WORDS:
        return False
    return any(" ".join(words[:n]) in _LEAD_WORDS for n in range(1, min(len(words), MAX_PHRASE_WORDS) + 1))


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, in order (never empty: a text without an end is one sentence)."""
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip())]
    return [p for p in parts if p] or [text]


@lru_cache(maxsize=1 << 16)
def char_grams(text: str) -> tuple[str, ...]:
    """The character 3-grams of normalised ``text``, in order, a gram as often as it occurs (spaces
    kept, so word edges count; a text shorter than 3 is its own gram). Every reader takes them as a
    set, so they are not made distinct here: that took two fifths of the time a text.

    (A tuple, not a set: the garbage collector stops walking a tuple of strings once it has seen
    it, and a run caches one for every closed-mode message's first sentence and every card title;
    when a topic's profile also kept the 3-grams of each message and reply, sets of them were most
    of what it walked on SGD's dev dialogues, 0.39 s of a run's collection there against 0.12 s as
    tuples, and ``benchmarks/bench_route.py --corpus sgd`` 10% slower in both modes.)"""
    norm = normalize(text)
    if len(norm) < CHAR_N:
        return (norm,) if norm else ()
    # the text and its copies shifted by one and two characters (CHAR_N) zipped, not a generator of
    # the copies: a fifth less time a text over the dev texts of offline data and SGD
    return tuple(map("".join, zip(norm, norm[1:], norm[2:])))


class MessageParts(NamedTuple):
    """A message split the way the signals read it: first sentence, pointing sentences, the rest."""

    head: str
    refs: str
    rest: str
    lowered: str
    lowered_head: str


#: question marks, Western and full-width
_QUESTION = ("?", "？")
#: a sentence of at most this many words that opens with an acknowledgement only acknowledges
#: ("Thank you very much.", "Ok great."), so the next one is where the message names its subject
MAX_ACK_SENTENCE_WORDS = 6


def only_acknowledges(sentence: str) -> bool:
    """True when ``sentence`` acknowledges and says nothing more: a bare acknowledgement
    (:func:`~interleave_bench.text.is_bare_ack`), or at most :data:`MAX_ACK_SENTENCE_WORDS` words
    opening with one (:func:`starts_with_lead`), and no question."""
    if any(q in sentence for q in _QUESTION):
        return False
    lowered = sentence.lower()
    return is_bare_ack(sentence) or (starts_with_lead(lowered)
                                     and len(_WORD_RUN.findall(lowered)) <= MAX_ACK_SENTENCE_WORDS)


def split_message(text: str, skip_acks: bool = False) -> MessageParts:
    """The :class:`MessageParts` of ``text``: the first sentence (with ``skip_acks``, the first
    that does more than acknowledge, :func:`only_acknowledges`: "Thanks a lot. Can you find me a
    cab?" opens with its second), later sentences that draw on another topic
    (:data:`REFERENCES`), and the other later sentences (a skipped acknowledgement among them)."""
    return MessageParts(*_split(text, skip_acks))


@lru_cache(maxsize=1 << 14)
def _split(text: str, skip_acks: bool) -> tuple[str, str, str, str, str]:
    # cached as a plain tuple of strings, which the garbage collector stops walking once it has
    # seen it (a named tuple it walks at every pass: a run caches one per message)
    sents = sentences(text)
    skipped = 0
    while skip_acks and skipped < len(sents) - 1 and only_acknowledges(sents[skipped]):
        skipped += 1
    head = sents[skipped]
    refs, rest = [], []
    for s in sents[skipped + 1:]:
        (refs if says("ref", s.lower()) else rest).append(s)
    rest += sents[:skipped]
    return head, " ".join(refs), " ".join(rest), text.lower(), head.lower()


# --- replies and speakers --------------------------------------------------------------------------------

#: a participant's name as chat clients write it: letters, digits and the punctuation nicks allow
_NAME = re.compile(r"[a-z0-9_\-\[\]\\^{}|`]+")


def asks(reply: str | None) -> bool:
    """True when the assistant's ``reply`` ends by asking something (its last sentence holds a
    question mark)."""
    if not reply:
        return False
    last = sentences(reply)[-1]
    return any(q in last for q in _QUESTION)


def body(text: str, speaker: str | None) -> str:
    """``text`` without the speaker's own name in front (``<nick> text``, ``* nick does``): what the
    speaker said, so a name every message of theirs carries does not count as shared words."""
    if speaker:
        for lead in (f"<{speaker}>", f"* {speaker}"):
            if text.startswith(lead):
                return text[len(lead):].lstrip()
    return text


@lru_cache(maxsize=1 << 15)
def names_in(text: str) -> tuple[str, ...]:
    """The distinct lowercased words of ``text`` that could be a participant's name, in order (a
    name is matched whole, so ``dave`` is not found in ``davenport``; a tuple, as :func:`char_grams`)."""
    return tuple(dict.fromkeys(_NAME.findall(text.lower())))


@dataclass(frozen=True)
class People:
    """Who is who in multi-party chat, as the view shows it, for the pending message's speaker.

    ``mine``: topic of the speaker's latest message (None if they have not spoken); ``spoke``:
    how many messages the speaker has in each topic; ``addressed``: the topics of the latest
    messages of the participants the message names; ``named_in``: participants named, per topic
    they spoke in; ``named_me``: topic of the latest message that named the speaker."""

    multi: bool
    speaker: Optional[str]
    mine: Optional[str]
    spoke: dict[str, int]
    addressed: frozenset[str]
    named_in: dict[str, int]
    named_me: Optional[str]
    names_someone: bool

    def ties(self) -> set[str]:
        """The topics the speaker is tied to: those they spoke in, those the participants the
        message names spoke in, and the one of the latest message that named the speaker."""
        out = set(self.spoke).union(self.named_in)
        if self.named_me is not None:
            out.add(self.named_me)
        return out


NOBODY = People(False, None, None, {}, frozenset(), {}, None, False)


class SpeakerLog:
    """Who spoke where in one session's history, read message by message as the history grows (each
    message once, not once for every later message: IRC's dev logs hold 250 messages each).

    Only messages with a speaker and one of the ``allowed`` labels count (a topic a message may go
    to: a label's standing never changes within a session, as topics are never removed and a
    one-off topic is one from the start). A history that is not an extension of the one read
    (another run of the session) is read again from its start. (``benchmarks/bench_route.py
    --corpus irc``: 2,115 to 2,214 messages per CPU second; finding people took 49 us a message
    there, 8 us now.)"""

    __slots__ = ("seen", "speakers", "latest", "topics_of", "spoke", "naming")

    def __init__(self) -> None:
        self.seen: tuple = ()  # the history read so far
        self.speakers = False  # whether any message so far has a speaker
        self.latest: dict[str, str] = {}  # speaker (lowercased) -> topic of their latest message
        self.topics_of: dict[str, set[str]] = {}  # speaker -> topics they spoke in
        self.spoke: dict[str, dict[str, int]] = {}  # speaker -> topic -> their messages there
        # a name -> (topic, speaker) of the latest message naming it, and the topic of the latest
        # one naming it by someone else than that speaker
        self.naming: dict[str, tuple[str, str, Optional[str]]] = {}

    def read(self, history: tuple, allowed: set[str]) -> "SpeakerLog":
        """Take in the messages of ``history`` not read yet; returns itself."""
        n = len(self.seen)
        if len(history) < n or history[:n] != self.seen:
            self.__init__()  # type: ignore[misc]
            n = 0
        latest, topics_of, spoke, naming = self.latest, self.topics_of, self.spoke, self.naming
        for r in history[n:]:
            if r.speaker is None:
                continue
            self.speakers = True
            if r.label not in allowed:
                continue
            who, label = r.speaker.lower(), r.label
            latest[who] = label
            topics_of.setdefault(who, set()).add(label)
            mine = spoke.setdefault(who, {})
            mine[label] = mine.get(label, 0) + 1
            for name in names_in(r.text):
                was = naming.get(name)
                naming[name] = (label, who, None if was is None else was[2] if was[1] == who else was[0])
        self.seen = history
        return self

    def named(self, me: str) -> Optional[str]:
        """The topic of the latest message naming ``me`` (lowercased) that someone else wrote."""
        was = self.naming.get(me)
        return None if was is None else was[0] if was[1] != me else was[2]


def people(view: RouterView, said: str, log: SpeakerLog) -> People:
    """The :class:`People` of ``view``'s pending message, whose words are ``said``, from ``log``
    (the view's history read by :meth:`SpeakerLog.read`)."""
    me = view.pending[0].speaker
    if me is None:
        return People(True, None, None, {}, frozenset(), {}, None, False) if log.speakers else NOBODY
    me_lower = me.lower()
    latest = log.latest
    named = [n for n in names_in(said) if n in latest and n != me_lower]
    named_in: dict[str, int] = {}
    for n in named:
        for label in log.topics_of[n]:
            named_in[label] = named_in.get(label, 0) + 1
    return People(True, me, latest.get(me_lower), dict(log.spoke.get(me_lower, {})),
                  frozenset(latest[n] for n in named), named_in, log.named(me_lower), bool(named))
