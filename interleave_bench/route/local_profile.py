"""The ``local`` router's view of each topic and what a message shares with it.

Which topics a message may go to (:class:`TopicIndex`), topic profiles (the card, the messages
routed to a topic and the assistant's replies to them, as token counts grown message by message),
the BM25 overlaps of a message with every topic, the bm25 baseline's own scores over the same
topics, and a chat's typical message length.
"""

from __future__ import annotations

import math
from collections import _count_elements
from functools import lru_cache
from itertools import chain, compress, repeat
from operator import attrgetter, ge, is_not
from typing import Callable, Iterable, Mapping, Optional, Sequence, TypeVar

from .base import Message, RouterView, ThreadCard, TopicView
from .bm25 import B, K1, bm25_tokens, idf
from .local_text import SpeakerLog, body, char_grams
from .text import tokens

#: topic profiles kept between calls; beyond this the other sessions' are dropped (a run routes one
#: session at a time, so a few hundred topics are plenty), and the session's own only when it alone
#: has this many
PROFILE_CACHE_MAX = 2048
#: sessions whose speaker logs and topic indexes are kept between calls (a run routes one session at
#: a time, or a few side by side)
SESSIONS_KEPT = 64
#: latest messages whose lengths say what a long message is in this chat
LENGTH_WINDOW = 20
#: the title of a topic a one-off opens: later messages never go there
ONEOFF_TITLE_PREFIX = "(one-off) "
_TEXT = attrgetter("text")
_LENGTH, _PLAIN_LENGTH = attrgetter("length"), attrgetter("plain_length")


def is_oneoff_topic(topic: TopicView) -> bool:
    """True for a topic this router opened for a one-off (no card, titled as one)."""
    return topic.card is None and topic.title.startswith(ONEOFF_TITLE_PREFIX)


# --- which topics a message may go to --------------------------------------------------------------------


class TopicIndex:
    """The topics of one session's views that a message may go to (not one-off topics), read view by
    view: a view's topics are mostly the very objects of the view before it (the runner makes again
    only those a message went to), so only the positions whose object changed are read again, and
    the rest is left to loops in C. (IRC's dev logs show 30 topics a view on average, their logs
    joined in pairs 60: one pass over them in Python took 10 and 19 us a message.) A topic whose
    messages are not a tuple (a hand-built view may hold a list, and grow it in place) is read again
    at every view, and labels that name several topics of a view are looked up one by one."""

    __slots__ = ("topics", "last", "labels", "position", "open", "everyone", "mutable")

    def __init__(self) -> None:
        self.topics: tuple[TopicView, ...] = ()  # the topics read, in the view's order
        # per position: the turn of the topic's latest message (inf with none yet, -inf for a
        # one-off topic), its label and whether a message may go to it
        self.last: list[float] = []
        self.labels: list[str] = []
        self.open: list[bool] = []
        self.position: dict[str, int] = {}  # label -> its position (the last one, where labels repeat)
        self.everyone: set[str] = set()  # the labels of the topics a message may go to
        self.mutable: set[int] = set()  # positions whose messages may change in place (not a tuple)

    def read(self, topics: Sequence[TopicView]) -> "TopicIndex":
        """Take in ``topics`` (a view's); returns itself."""
        topics = tuple(topics)  # (a view's own tuple, not copied: a list changed in place later is)
        old = self.topics
        if len(topics) < len(old):
            self.__init__()  # type: ignore[misc]  (another run of the session)
            old = ()
        n = len(old)
        changed = compress(range(n), map(is_not, old, topics))
        if self.mutable:
            changed = sorted(self.mutable.union(changed))
        renamed = False
        for k in chain(changed, range(n, len(topics))):
            t = topics[k]
            if type(t.messages) is not tuple:
                self.mutable.add(k)
            elif self.mutable:
                self.mutable.discard(k)
            may = not is_oneoff_topic(t)
            last = (t.messages[-1].i if t.messages else math.inf) if may else -math.inf
            if k < n:
                renamed = renamed or t.label != self.labels[k] or may != self.open[k]
                self.last[k], self.labels[k], self.open[k] = last, t.label, may
            else:
                self.last.append(last)
                self.labels.append(t.label)
                self.open.append(may)
                if may:
                    self.everyone.add(t.label)
            self.position[t.label] = k
        if renamed:  # (another run of the session, whose topics read alike)
            self.position = {label: k for k, label in enumerate(self.labels)}
            self.everyone = set(compress(self.labels, self.open))
        self.topics = topics
        return self

    def open_topics(self) -> list[TopicView]:
        """The topics a message may go to, in order."""
        return list(compress(self.topics, self.open))

    def near(self, at: int, quiet: int, ties: set[str]) -> list[TopicView]:
        """The topics a message may go to that turn ``at`` is at most ``quiet`` turns after the
        latest message of, or that have none yet, or whose labels are in ``ties``, in order."""
        keep = set(compress(range(len(self.topics)), map(ge, self.last, repeat(at - quiet))))
        position, open_ = self.position, self.open
        if len(position) == len(self.labels):
            keep.update(k for k in map(position.get, ties) if k is not None and open_[k])
        else:  # a label names several topics: each of them
            keep.update(k for k, label in enumerate(self.labels) if label in ties and open_[k])
        topics = self.topics
        return [topics[k] for k in sorted(keep)]


# --- topic profiles ------------------------------------------------------------------------------------


class TopicProfile:
    """A topic's text as counts: token frequencies and length (grown in place).

    It holds the card, the messages routed to the topic (without their speakers' names) and the
    assistant's replies to them."""

    __slots__ = ("count", "last", "tf", "length", "replied", "plain_tf", "plain_length", "tail",
                 "card", "card_terms", "title_terms", "title_grams")

    def __init__(self) -> None:
        self.tail: Optional[Message] = None  # the latest message taken in, as it was then (with or without its reply)
        self.count = 0  # messages taken in
        self.last = -1  # turn of the latest one
        self.replied = False  # whether the latest one's reply is in (it comes after the message)
        self.tf: dict[str, int] = {}
        self.length = 0
        # the bm25 baseline's view of the topic: its card and messages as written, no replies
        self.plain_tf: dict[str, int] = {}
        self.plain_length = 0
        # the card the latest view showed: its distinct tokens, its title's tokens and its title's character n-grams
        self.card: Optional[ThreadCard] = None
        self.card_terms: frozenset[str] = frozenset()
        self.title_terms: frozenset[str] = frozenset()
        self.title_grams: frozenset[str] = frozenset()

    def show_card(self, card: ThreadCard) -> None:
        """Take ``card`` as the card the views show (its words and title grams, worked out once per
        profile instead of once per message and topic, where hashing the card for a cache and
        intersecting a tuple cost 1.1% of the instructions of routing offline dev closed)."""
        self.card = card
        self.card_terms = frozenset(tokens(card_text(card)))
        self.title_terms = frozenset(tokens(card.title))
        self.title_grams = frozenset(char_grams(card.title))

    def add_plain(self, text: str) -> None:
        """Take ``text`` into the bm25 baseline's view of the topic (:func:`~.bm25.bm25_tokens`)."""
        toks = bm25_tokens(text)
        _count_elements(self.plain_tf, toks)
        self.plain_length += len(toks)

    def add(self, text: str) -> None:
        toks = tokens(text)
        _count_elements(self.tf, toks)
        self.length += len(toks)


def card_text(card: ThreadCard) -> str:
    """The text of ``card`` as a topic's profile reads it: title, description and goal."""
    return f"{card.title}\n{card.description}\n{card.goal}"


S = TypeVar("S")


def _of_session(states: dict[tuple[str, str], S], view: RouterView, make: Callable[[], S]) -> S:
    """``view``'s session's entry of ``states`` (a new one from ``make`` the first time; beyond
    :data:`SESSIONS_KEPT` sessions, the others' go)."""
    key = (view.session_id, view.mode)
    state = states.get(key)
    if state is None:
        if len(states) >= SESSIONS_KEPT:
            states.clear()
        state = states[key] = make()
    return state


class ProfileCache:
    """Profiles of the topics of recent views, extended message by message instead of rebuilt, and
    each recent session's :class:`TopicIndex` and :class:`~.local_text.SpeakerLog`."""

    def __init__(self) -> None:
        self._store: dict[tuple[str, str, str, str], TopicProfile] = {}
        self._speakers: dict[tuple[str, str], SpeakerLog] = {}
        self._topics: dict[tuple[str, str], TopicIndex] = {}

    def topics(self, view: RouterView) -> TopicIndex:
        """The :class:`TopicIndex` of ``view``'s session, its topics read."""
        return _of_session(self._topics, view, TopicIndex).read(view.topics)

    def speakers(self, view: RouterView, allowed: set[str]) -> SpeakerLog:
        """The :class:`~.local_text.SpeakerLog` of ``view``'s session, its history read (``allowed``:
        the labels of the topics a message may go to)."""
        return _of_session(self._speakers, view, SpeakerLog).read(view.history, allowed)

    def get(self, view: RouterView, topic: TopicView) -> TopicProfile:
        """The profile of ``topic`` as the view shows it (card text, then its messages and replies)."""
        return self.profiles(view, (topic,))[0]

    def profiles(self, view: RouterView, topics: Sequence[TopicView]) -> list[TopicProfile]:
        """The profile of each of ``topics`` (:meth:`get`), in order: one loop over the topics, a
        method call only for a topic with something new (most have nothing new; IRC dev shows 8
        topics a message, each a call of :meth:`get` before)."""
        store, session, mode = self._store, view.session_id, view.mode
        out = []
        for topic in topics:
            card = topic.card
            key = (session, mode, topic.label, card.title if card is not None else "")
            prof = store.get(key)
            msgs = topic.messages
            # nothing new: the very message it took in last is the topic's latest
            if prof is None or prof.count != len(msgs) or not prof.count or msgs[-1] is not prof.tail \
                    or card is not prof.card:
                prof = self._grow(view, topic, key, prof)
                store = self._store  # (growing may have dropped other sessions' profiles)
            out.append(prof)
        return out

    def _grow(self, view: RouterView, topic: TopicView, key: tuple[str, str, str, str],
              prof: Optional[TopicProfile]) -> TopicProfile:
        """``prof`` (the stored profile of ``topic``, at ``key``, or None) brought up to the view."""
        card, msgs = topic.card, topic.messages
        # a session's topics only grow, so a profile whose latest message is still in place is a
        # prefix; a reply arrives after its message, so the latest one is taken in when it shows
        if prof is None or prof.count > len(msgs) or (prof.count and msgs[prof.count - 1].i != prof.last) \
                or (prof.replied and msgs[prof.count - 1].reply is None):
            if len(self._store) >= PROFILE_CACHE_MAX:
                # the other sessions' profiles go first: this session's are grown message by message
                mine = view.session_id
                self._store = {k: v for k, v in self._store.items() if k[0] == mine}
                if len(self._store) >= PROFILE_CACHE_MAX:
                    self._store.clear()
            prof = TopicProfile()
            if card is not None:
                prof.add(card_text(card))
                prof.add_plain(card_text(card))
            self._store[key] = prof
        if card is not None and card is not prof.card:
            prof.show_card(card)
        if prof.count and not prof.replied and prof.count <= len(msgs) and msgs[prof.count - 1].reply is not None:
            prof.add(msgs[prof.count - 1].reply)
            prof.replied = True
        for m in msgs[prof.count:]:
            prof.add(body(m.text, m.speaker))
            prof.add_plain(m.text)
            prof.replied = m.reply is not None
            if prof.replied:
                prof.add(m.reply)
            prof.last = m.i
        prof.count = len(msgs)
        prof.tail = msgs[-1] if msgs else None
        return prof




def counts(items: Iterable[str]) -> dict[str, int]:
    """How many times each of ``items`` occurs: a :class:`~collections.Counter`'s counts, in a plain
    dict (counted by the Counter's own C loop, without its set-up, and read faster: three counts a
    message, 1.6% of the instructions of routing offline dev closed)."""
    out: dict[str, int] = {}
    _count_elements(out, items)
    return out


@lru_cache(maxsize=64)
def idf_table(n: int) -> tuple[float, ...]:
    """The bm25 baseline's IDF for ``n`` documents, by document frequency 0..n."""
    return tuple(idf(n, d) for d in range(n + 1))


#: per topic, what :func:`part_bm25` finds: the three parts' BM25, the three parts' terms only that
#: topic has seen, the first sentence's terms it has seen
PartSums = tuple[float, float, float, int, int, int, int]
#: the sums of a topic that shares no term with the message
_NO_SUMS: PartSums = (0.0, 0.0, 0.0, 0, 0, 0, 0)


def part_bm25(query: set[str], head: set[str], refs: set[str], rest: set[str],
              profs: Sequence[TopicProfile],
              common: Optional[Mapping[str, float]] = None) -> tuple[list[PartSums], int]:
    """Per topic of ``profs``: the BM25 of the message's first sentence, its sentences that point
    elsewhere and the rest (each part's distinct terms: ``head``, ``refs``, ``rest``; ``query`` all
    of them), then how many of each part's terms that topic alone has seen, and how many of the
    first sentence's terms it has seen; and how many terms of ``query`` some topic has seen. With
    ``common`` (each term's background weight, :attr:`.local_background.Background.lookup`) each
    term's share of the sums is weighed by it."""
    n = len(profs)
    # (the keys' ``&``, not the set's: ``set & keys`` tries the set's own first, and took twice the time)
    have = [p.tf.keys() & query for p in profs]
    df = counts(chain.from_iterable(have))
    avgdl = sum(map(_LENGTH, profs)) / n if n else 0.0
    weights = idf_table(n)
    # each shared term's weight, worked out once for every topic
    weight = ({q: weights[d] for q, d in df.items()} if common is None
              else {q: weights[d] * common[q] for q, d in df.items()})
    # a message of one sentence (most are) has head terms only: its sums skip the tests of each
    # term's part, in the same order and so to the same floats
    one_part = not (refs or rest)
    out = []
    for p, terms in zip(profs, have):
        if not terms:  # a topic that shares no term with the message: no loop for its zero sums
            out.append(_NO_SUMS)
            continue
        norm = K1 * (1.0 - B + B * p.length / avgdl) if avgdl else K1
        tf = p.tf
        hb = rb = tb = 0.0
        ho = ro = to = 0
        hs = 0
        for q in sorted(terms):  # a fixed order: float sums then agree from run to run
            f = tf[q]
            c = weight[q] * f / (f + norm)
            alone = df[q] == 1
            if one_part:
                hb += c
                ho += alone
                continue
            if q in head:
                hb += c
                ho += alone
                hs += 1
            if q in refs:
                rb += c
                ro += alone
            if q in rest:
                tb += c
                to += alone
        out.append((hb * (K1 + 1.0), rb * (K1 + 1.0), tb * (K1 + 1.0), ho, ro, to, len(terms) if one_part else hs))
    return out, len(df)


def plain_bm25(query: Sequence[str], profs: Sequence[TopicProfile]) -> list[float]:
    """The bm25 baseline's score of ``query`` (its tokens) against each topic, from the profiles'
    plain counts: :func:`~.bm25.bm25_scores` over the topics' cards and messages as written, from
    counts grown message by message instead of re-tokenised (a test holds the two equal)."""
    n = len(profs)
    avgdl = sum(map(_PLAIN_LENGTH, profs)) / n if n else 0.0
    if not avgdl:
        return [0.0] * n
    distinct = tuple(dict.fromkeys(query))
    have = [list(filter(p.plain_tf.__contains__, distinct)) for p in profs]  # in query order, as bm25 sums
    df = counts(chain.from_iterable(have))
    weights = idf_table(n)
    k1 = K1 + 1.0  # (the same float, not worked out again a term)
    out = []
    for p, terms in zip(profs, have):
        if not terms:
            out.append(0.0)
            continue
        norm = K1 * (1.0 - B + B * p.plain_length / avgdl)
        tf = p.plain_tf
        score = 0.0
        for q in terms:
            f = tf[q]
            score += weights[df[q]] * f * k1 / (f + norm)
        out.append(score)
    return out


def typical_length(view: RouterView) -> float:
    """The mean log length (distinct tokens) of the chat's latest :data:`LENGTH_WINDOW` messages (0
    with none): a message is long or short for its chat, not by one corpus's measure."""
    recent = view.history[-LENGTH_WINDOW:]
    if not recent:
        return 0.0
    return math.fsum(map(_log_length, map(_TEXT, recent))) / len(recent)


@lru_cache(maxsize=1 << 15)
def _log_length(text: str) -> float:
    return math.log1p(len(set(tokens(text))))

