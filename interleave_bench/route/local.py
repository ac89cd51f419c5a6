"""The ``local`` policy: a model-free router with a calibrated confidence for every decision.

For each message it scores every candidate (each topic it may go to, a new topic in open mode, and
a one-off in both modes) with a few signals a message really carries, weighs them with weights
fitted on the offline ``dev`` split (``interleave_bench/data/local/weights.json``, written by
``scripts/fit_local.py``), and picks the best candidate. The signals:

- lexical overlap of the message with each topic's card and routed messages: BM25 over the bm25
  baseline's tokens (:func:`~.text.tokens`), and character 3-grams, which match Chinese without a
  word segmenter and English word forms ("bike" in "bikes"); the first sentence (where people
  name what they are talking about) is scored apart from the rest, and sentences that point
  elsewhere ("keep it consistent with ...", "结合...") apart again;
- tokens that only one topic has seen (the values of its facts: a date, an amount, a name);
- a topic's title named in the message;
- recency: the current topic, the one before it, how long since a topic last had a message,
  whether it has had one at all;
- the dialogue signals of the message itself: a bare acknowledgement, a short lead-in, a vague
  follow-up ("that one", "这个"), a pointer back ("the other one", "之前那个"), a new-subject or
  one-off opener.

The winning candidate's probability (a softmax over the candidates) is mapped through a
monotone calibration fitted on the router's own dev-split runs, so ``confidence`` reads as the
chance the decision is right. A one-off is offered only when there is a current topic and no topic
alone shares :data:`WORK_TERMS` words with the first sentence. One-off topics are titled with
:data:`ONEOFF_TITLE_PREFIX`; they are never offered as a place for a later message and never count
as the current topic.

The router sees only the :class:`~.base.RouterView` (gold-blind, like every router here).
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from operator import mul
from importlib import resources
from typing import Any, Optional, Sequence

import numpy as np

from .base import Decision, RouterView, TopicView
from .bm25 import B, K1, idf
from ..text import is_bare_ack, normalize
from .text import seems_to_go_on, short_title, title_mentioned, tokens

POLICY = "local"
#: ``via`` of a decision made by this router
VIA_LOCAL = "local"
#: the title of a topic a one-off opens: later messages never go there
ONEOFF_TITLE_PREFIX = "(one-off) "
#: the weights file shipped in the package
WEIGHTS_RESOURCE = ("interleave_bench", "data/local/weights.json")
#: format tag of the weights file, bumped whenever the feature list changes meaning
WEIGHTS_FORMAT = "interleave-local-1"
#: character n-gram length: three characters catch word stems and most Chinese words
CHAR_N = 3
#: topic profiles kept between calls; beyond this the cache starts over (a run routes one session
#: at a time, so a few hundred topics are plenty)
PROFILE_CACHE_MAX = 2048
#: first-sentence terms that one topic alone has seen which make a message that topic's work, never
#: a one-off (one such word can be chance; two are a subject)
WORK_TERMS = 2

# --- dialogue signals --------------------------------------------------------------------------------
# English entries match as whole words of the lowercased text, Chinese ones anywhere.

#: words that point back at what is being discussed: the message continues the current topic
ANAPHORA = (
    "it", "that", "this", "those", "these", "them", "same", "again", "that one", "this one",
    "what we were just doing", "as discussed",
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
    "new", "start", "starting", "begin", "another one", "also need", "adding", "tackle", "bring in",
    "separate matter", "get going", "need a hand", "help with", "juggling", "my list",
    "新", "开始", "再加一件", "还在弄", "还得处理", "着手", "筹备", "搞定", "帮我看看", "还有个事",
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


_LEXICONS = {name: _lexicon(v) for name, v in (
    ("anaphora", ANAPHORA), ("other", OTHER_TOPIC), ("new", NEW_SUBJECT), ("oneoff", ONEOFF_OPENERS),
    ("ref", REFERENCES),
)}
_LEAD_WORDS, _LEAD_CHINESE = _lexicon(LEADS)
#: the longest English phrase of any lexicon, in words
MAX_PHRASE_WORDS = max(len(p.split()) for words, _ in [*_LEXICONS.values(), (_LEAD_WORDS, ())] for p in words)


@lru_cache(maxsize=1 << 14)
def word_phrases(lowered: str) -> frozenset[str]:
    """Every run of 1 to :data:`MAX_PHRASE_WORDS` consecutive English words of ``lowered``, each
    joined by single spaces (words are ASCII letter and digit runs, as in the bm25 tokens)."""
    words = _WORD_RUN.findall(lowered)
    return frozenset(" ".join(words[i : i + n]) for n in range(1, MAX_PHRASE_WORDS + 1) for i in range(len(words) - n + 1))


def says(kind: str, lowered: str) -> bool:
    """True when lowercased text ``lowered`` holds a phrase of lexicon ``kind`` (English ones as
    whole words, Chinese ones anywhere)."""
    words, chinese = _LEXICONS[kind]
    return not words.isdisjoint(word_phrases(lowered)) or any(c in lowered for c in chinese)


def starts_with_lead(lowered: str) -> bool:
    """True when lowercased text ``lowered`` opens (after any punctuation) with an acknowledgement
    or carry-on word."""
    text = _LEADING_JUNK.sub("", lowered, count=1)
    if text.startswith(_LEAD_CHINESE):
        return True
    if not text[:1].isascii() or not text[:1].isalnum():
        return False
    words = _WORD_RUN.findall(text[:60])
    return any(" ".join(words[:n]) in _LEAD_WORDS for n in range(1, min(len(words), MAX_PHRASE_WORDS) + 1))


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, in order (never empty: a text without an end is one sentence)."""
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip())]
    return [p for p in parts if p] or [text]


@lru_cache(maxsize=1 << 16)
def char_grams(text: str) -> frozenset[str]:
    """The distinct character 3-grams of normalised ``text`` (spaces kept, so word edges count)."""
    norm = normalize(text)
    if len(norm) < CHAR_N:
        return frozenset((norm,)) if norm else frozenset()
    return frozenset(norm[k : k + CHAR_N] for k in range(len(norm) - CHAR_N + 1))


@dataclass(frozen=True)
class MessageParts:
    """A message split the way the signals read it: first sentence, pointing sentences, the rest."""

    head: str
    refs: str
    rest: str
    lowered: str
    lowered_head: str


@lru_cache(maxsize=1 << 14)
def split_message(text: str) -> MessageParts:
    """The :class:`MessageParts` of ``text``: sentence one, later sentences that draw on another
    topic (:data:`REFERENCES`), and the other later sentences."""
    sents = sentences(text)
    refs, rest = [], []
    for s in sents[1:]:
        (refs if says("ref", s.lower()) else rest).append(s)
    return MessageParts(sents[0], " ".join(refs), " ".join(rest), text.lower(), sents[0].lower())


# --- topic profiles ------------------------------------------------------------------------------------


class TopicProfile:
    """A topic's text as counts: token frequencies, length and character n-grams (grown in place)."""

    __slots__ = ("count", "last", "tf", "length", "grams")

    def __init__(self) -> None:
        self.count = 0  # messages taken in
        self.last = -1  # turn of the latest one
        self.tf: dict[str, int] = {}
        self.length = 0
        self.grams: set[str] = set()

    def add(self, text: str) -> None:
        toks = tokens(text)
        tf = self.tf
        for t in toks:
            tf[t] = tf.get(t, 0) + 1
        self.length += len(toks)
        self.grams |= char_grams(text)


class ProfileCache:
    """Profiles of the topics of recent views, extended message by message instead of rebuilt."""

    def __init__(self) -> None:
        self._store: dict[tuple[str, str, str, str], TopicProfile] = {}

    def get(self, view: RouterView, topic: TopicView) -> TopicProfile:
        """The profile of ``topic`` as the view shows it (card text, then its messages)."""
        card = topic.card
        key = (view.session_id, view.mode, topic.label, card.title if card is not None else "")
        msgs = topic.messages
        prof = self._store.get(key)
        # a session's topics only grow, so a profile whose latest message is still in place is a prefix
        if prof is None or prof.count > len(msgs) or (prof.count and msgs[prof.count - 1].i != prof.last):
            if len(self._store) >= PROFILE_CACHE_MAX:
                self._store.clear()
            prof = TopicProfile()
            if card is not None:
                prof.add(f"{card.title}\n{card.description}\n{card.goal}")
            self._store[key] = prof
        for m in msgs[prof.count:]:
            prof.add(m.text)
            prof.last = m.i
        prof.count = len(msgs)
        return prof


# --- features --------------------------------------------------------------------------------------------

#: one name per feature, in weight order. ``topic.*`` describe an existing topic, ``new.*`` the
#: candidate "open a new topic" (open mode), ``oneoff.*`` the candidate "a one-off question".
TOPIC_FEATURES = (
    "topic.head_bm25", "topic.head_best", "topic.head_chars", "topic.head_title", "topic.head_only_here",
    "topic.ref_bm25", "topic.ref_title", "topic.ref_only_here",
    "topic.rest_bm25", "topic.rest_title", "topic.rest_only_here",
    "topic.current", "topic.current_ack", "topic.current_short", "topic.current_anaphora",
    "topic.current_lead", "topic.current_other", "topic.current_unnamed",
    "topic.previous", "topic.previous_other", "topic.gap", "topic.gap_other", "topic.unseen",
)
NEW_FEATURES = (
    "new.bias", "new.opener", "new.head_bm25_max", "new.head_chars_max", "new.vague", "new.length",
    "new.oneoff_opener",
)
ONEOFF_FEATURES = (
    "oneoff.bias", "oneoff.opener", "oneoff.head_bm25_max", "oneoff.tail_bm25_max", "oneoff.vague",
    "oneoff.new_opener", "oneoff.length", "oneoff.head_chars_max",
)
FEATURES = TOPIC_FEATURES + NEW_FEATURES + ONEOFF_FEATURES
_TOPIC_PAD = [0.0] * (len(NEW_FEATURES) + len(ONEOFF_FEATURES))
_NEW_LEFT = [0.0] * len(TOPIC_FEATURES)
_NEW_RIGHT = [0.0] * len(ONEOFF_FEATURES)
_ONEOFF_LEFT = [0.0] * (len(TOPIC_FEATURES) + len(NEW_FEATURES))
NEW = "new"
ONEOFF = "oneoff"


@dataclass(frozen=True)
class Candidates:
    """The candidates of one decision and their feature rows (one row per candidate)."""

    labels: tuple[str, ...]  # topic labels, then NEW (open mode), then ONEOFF (when offered)
    features: list[list[float]]


def is_oneoff_topic(topic: TopicView) -> bool:
    """True for a topic this router opened for a one-off (no card, titled as one)."""
    return topic.card is None and topic.title.startswith(ONEOFF_TITLE_PREFIX)


@lru_cache(maxsize=64)
def _idf_table(n: int) -> tuple[float, ...]:
    """The bm25 baseline's IDF for ``n`` documents, by document frequency 0..n."""
    return tuple(idf(n, d) for d in range(n + 1))


@dataclass(frozen=True)
class Overlap:
    """What a message shares with each topic: the terms each has, their document frequencies."""

    have: list[set[str]]  # per topic: the message's terms it has seen
    df: Counter  # per term: topics that have it
    norms: list[float]  # per topic: BM25 length normalisation
    weights: tuple[float, ...]  # IDF by document frequency


def overlap(query: set[str], profs: Sequence[TopicProfile]) -> Overlap:
    """The :class:`Overlap` of the message's distinct terms ``query`` with the topics ``profs``."""
    n = len(profs)
    have = [query & p.tf.keys() for p in profs]
    df = Counter(chain.from_iterable(have))
    avgdl = sum(p.length for p in profs) / n if n else 0.0
    norms = [K1 * (1.0 - B + B * p.length / avgdl) if avgdl else K1 for p in profs]
    return Overlap(have, df, norms, _idf_table(n))


def _gram_overlap(grams: frozenset[str], profs: Sequence[TopicProfile]) -> list[float]:
    """For each topic, the IDF-weighted share of ``grams`` it has seen (0..1)."""
    n = len(profs)
    if not grams or not n:
        return [0.0] * n
    weights = _idf_table(n)
    have = [grams & p.grams for p in profs]
    df = Counter(chain.from_iterable(have))
    weight_of = {g: weights[d] for g, d in df.items()}
    # fsum: exactly rounded whatever the (hash-seed dependent) order of a set, so runs agree
    total = (len(grams) - len(df)) * weights[0] + math.fsum(weight_of.values())
    return [math.fsum(map(weight_of.__getitem__, h)) / total for h in have]


@lru_cache(maxsize=1 << 12)
def _title_terms(title: str) -> frozenset[str]:
    return frozenset(tokens(title))


def _title_in(title: str, text: str, terms: set[str]) -> bool:
    """:func:`~.text.title_mentioned`, asked only when ``terms`` (the text's tokens) hold every
    token of the title, which a mention implies."""
    need = _title_terms(title)
    return bool(need) and need <= terms and title_mentioned(title, text)


def _recency(view: RouterView, allowed: set[str]) -> tuple[Optional[str], Optional[str]]:
    """The current topic and the one before it, among ``allowed`` labels (one-offs skipped)."""
    current = previous = None
    for r in reversed(view.history):
        if r.label not in allowed:
            continue
        if current is None:
            current = r.label
        elif r.label != current:
            previous = r.label
            break
    return current, previous


def candidates(view: RouterView, cache: ProfileCache) -> Candidates:
    """The candidates of ``view``'s pending unit with their feature rows (see :data:`FEATURES`)."""
    text = view.pending_text()
    parts = split_message(text)
    topics = [t for t in view.topics if not is_oneoff_topic(t)]
    labels = [t.label for t in topics]
    profs = [cache.get(view, t) for t in topics]
    n = len(topics)
    head_q, ref_q, rest_q = set(tokens(parts.head)), set(tokens(parts.refs)), set(tokens(parts.rest))
    all_q = head_q | ref_q | rest_q

    ack = float(is_bare_ack(text))
    short = float(seems_to_go_on(text))
    anaphora = float(says("anaphora", parts.lowered_head))
    lead = float(starts_with_lead(parts.lowered))
    other = float(says("other", parts.lowered_head))
    new_opener = float(says("new", parts.lowered_head))
    oneoff_opener = float(says("oneoff", parts.lowered_head))
    vague = max(ack, short, anaphora, lead)
    length = math.log1p(len(all_q))

    rows: list[list[float]] = []
    current = previous = None
    work_terms = 0
    head_bm_max = tail_bm_max = head_chars_max = 0.0
    if n:
        ov = overlap(all_q, profs)
        df, weights = ov.df, ov.weights
        sums = []  # per topic: bm25 of head, refs, rest; terms only it has in head, refs, rest
        for prof, have, norm in zip(profs, ov.have, ov.norms):
            tf = prof.tf
            hb = rb = tb = 0.0
            ho = ro = to = 0
            for q in sorted(have):  # a fixed order: float sums then agree from run to run
                f = tf[q]
                c = weights[df[q]] * f / (f + norm)
                alone = df[q] == 1
                if q in head_q:
                    hb += c
                    ho += alone
                if q in ref_q:
                    rb += c
                    ro += alone
                if q in rest_q:
                    tb += c
                    to += alone
            sums.append((hb * (K1 + 1.0), rb * (K1 + 1.0), tb * (K1 + 1.0), ho, ro, to))
        head_chars = _gram_overlap(char_grams(parts.head), profs)
        head_bm = [x[0] for x in sums]
        best = max(range(n), key=lambda k: (head_bm[k], -k))
        head_bm_max = math.log1p(head_bm[best])
        tail_bm_max = math.log1p(max(x[1] + x[2] for x in sums))
        head_chars_max = max(head_chars)
        work_terms = max(x[3] for x in sums)
        current, previous = _recency(view, set(labels))
        at = view.pending[0].i
        log1p = math.log1p
        for k, (t, (hb, rb, tb, ho, ro, to)) in enumerate(zip(topics, sums)):
            title = t.card.title if t.card is not None else ""
            head_title = float(bool(title) and _title_in(title, parts.head, head_q))
            ref_title = float(bool(title and ref_q) and _title_in(title, parts.refs, ref_q))
            rest_title = float(bool(title and rest_q) and _title_in(title, parts.rest, rest_q))
            named = head_title or ho > 0
            gap = log1p(at - t.messages[-1].i) if t.messages else 0.0  # unseen: its own feature
            cur = float(t.label == current)
            prev = float(t.label == previous)
            rows.append([  # in TOPIC_FEATURES order
                log1p(hb), float(k == best and hb > 0), head_chars[k], head_title, log1p(ho),
                log1p(rb), ref_title, log1p(ro),
                log1p(tb), rest_title, log1p(to),
                cur, cur * ack, cur * short, cur * anaphora, cur * lead, cur * other, cur * float(not named),
                prev, prev * other, gap, gap * other, float(not t.messages),
            ] + _TOPIC_PAD)
    out_labels = list(labels)
    if view.mode == "open":
        rows.append(_NEW_LEFT + [  # in NEW_FEATURES order
            1.0, new_opener, head_bm_max, head_chars_max, vague, length, oneoff_opener,
        ] + _NEW_RIGHT)
        out_labels.append(NEW)
    # a one-off is a question off the work in progress: with no current topic there is nothing to
    # be off from, and a first sentence sharing several words with one topic alone is that work
    if current is not None and work_terms < WORK_TERMS:
        rows.append(_ONEOFF_LEFT + [  # in ONEOFF_FEATURES order
            1.0, oneoff_opener, head_bm_max, tail_bm_max, vague, new_opener, length, head_chars_max,
        ])
        out_labels.append(ONEOFF)
    return Candidates(tuple(out_labels), rows)


def best_of(features: Sequence[Sequence[float]], weights: Sequence[float]) -> tuple[int, float]:
    """The index of the best-scoring row (the first on a tie) and its softmax probability."""
    scores = [sum(map(mul, row, weights)) for row in features]
    top = max(scores)
    return scores.index(top), 1.0 / sum(math.exp(x - top) for x in scores)


# --- weights and calibration ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    """A monotone map from the winning candidate's probability to the chance it is right.

    ``x`` (increasing) and ``y`` (non-decreasing) are the knots; between them the map is linear,
    beyond them flat. With no knots it is the identity.
    """

    x: tuple[float, ...] = ()
    y: tuple[float, ...] = ()

    def __call__(self, p: float) -> float:
        if not self.x:
            return p
        k = bisect_right(self.x, p)
        if k == 0:
            return self.y[0]
        if k == len(self.x):
            return self.y[-1]
        x0, x1, y0, y1 = self.x[k - 1], self.x[k], self.y[k - 1], self.y[k]
        return y0 + (y1 - y0) * (p - x0) / (x1 - x0)


@dataclass(frozen=True)
class ModeWeights:
    """The fitted weights of one mode (one per :data:`FEATURES` entry) and its calibration."""

    weights: np.ndarray
    calibration: Calibration


@dataclass(frozen=True)
class LocalWeights:
    """The weights file: per mode, the feature weights and the confidence calibration."""

    modes: dict[str, ModeWeights]
    fit: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The JSON document of the weights file (numbers rounded to 6 decimals)."""
        return {
            "format": WEIGHTS_FORMAT,
            "features": list(FEATURES),
            "modes": {
                mode: {
                    "weights": {name: round(float(w), 6) for name, w in zip(FEATURES, mw.weights)},
                    "calibration": {"x": [round(v, 6) for v in mw.calibration.x],
                                    "y": [round(v, 6) for v in mw.calibration.y]},
                }
                for mode, mw in self.modes.items()
            },
            "fit": self.fit,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any], source: str = "weights") -> "LocalWeights":
        """The weights of a document written by :meth:`to_json`; raises ValueError naming the field."""
        if doc.get("format") != WEIGHTS_FORMAT:
            raise ValueError(f"{source}: field 'format' must be {WEIGHTS_FORMAT!r}, got {doc.get('format')!r}")
        modes = {}
        for mode, m in (doc.get("modes") or {}).items():
            w = m.get("weights") or {}
            missing = [f for f in FEATURES if f not in w]
            if missing:
                raise ValueError(f"{source}: field 'modes.{mode}.weights' lacks {missing[0]!r}")
            cal = m.get("calibration") or {}
            modes[mode] = ModeWeights(np.array([float(w[f]) for f in FEATURES]),
                                      Calibration(tuple(cal.get("x", ())), tuple(cal.get("y", ()))))
        for mode in ("closed", "open"):
            if mode not in modes:
                raise ValueError(f"{source}: field 'modes.{mode}' is missing")
        return cls(modes, dict(doc.get("fit") or {}))


@lru_cache(maxsize=1)
def shipped_weights() -> LocalWeights:
    """The weights file shipped in the package."""
    package, name = WEIGHTS_RESOURCE
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return LocalWeights.from_json(json.loads(text), name)


# --- the router ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scored:
    """One decision of the local router before it becomes a :class:`Decision`.

    ``choice`` is a topic label, :data:`NEW` or :data:`ONEOFF`; ``probability`` the softmax share
    of the winner; ``confidence`` its calibrated chance of being right.
    """

    choice: str
    probability: float
    confidence: float


class LocalRouter:
    """The ``local`` policy (see the module docstring)."""

    policy = POLICY
    uses_model = False

    def __init__(self, weights: Optional[LocalWeights] = None):
        self.weights = weights if weights is not None else shipped_weights()
        self._weights = {mode: tuple(float(x) for x in mw.weights) for mode, mw in self.weights.modes.items()}
        self.cache = ProfileCache()

    def score(self, view: RouterView) -> Scored:
        """The winning candidate of ``view``'s pending unit, its probability and confidence."""
        cands = candidates(view, self.cache)
        # the first on a tie: topics in creation order, then new, then one-off
        k, p = best_of(cands.features, self._weights[view.mode])
        return Scored(cands.labels[k], p, self.weights.modes[view.mode].calibration(p))

    def decide_scored(self, view: RouterView) -> tuple[Decision, Scored]:
        """The decision for ``view``'s pending unit (``via: local``, with its confidence rounded to
        4 decimals) and the :class:`Scored` behind it."""
        s = self.score(view)
        text = view.pending_text()
        conf = round(s.confidence, 4)
        if s.choice == ONEOFF:
            return Decision.new(ONEOFF_TITLE_PREFIX + short_title(text), via=VIA_LOCAL, confidence=conf), s
        if s.choice == NEW:
            return Decision.new(short_title(text), via=VIA_LOCAL, confidence=conf), s
        return Decision.to_topic(s.choice, via=VIA_LOCAL, confidence=conf), s

    def decide(self, view: RouterView) -> Decision:
        """The decision for ``view``'s pending unit, with ``via: local`` and its confidence."""
        return self.decide_scored(view)[0]

    async def route(self, view: RouterView) -> Decision:
        return self.decide(view)
