"""The ``local`` policy: a model-free router with a calibrated confidence for every decision.

For each message it scores every candidate (each topic it may go to, a new topic in open mode, and
a one-off in both modes) with signals that carry from one chat to another, weighs them with
weights fitted across corpora (``interleave_bench/data/local/weights.json``, written by
``scripts/fit_local.py``), and picks the best candidate. The signals:

- lexical overlap of the message with each topic's card, routed messages and the assistant's
  replies to them: BM25 over the bm25 baseline's tokens (:func:`~.text.tokens`), the share of a
  card's title (its character 3-grams) and words the message has; the first sentence (where
  people name what they are talking about) is scored apart from the rest, and sentences that
  point elsewhere apart again;
- tokens that only one topic has seen (the values of its facts: a date, an amount, a name);
- the bm25 baseline's own evidence (:func:`plain_bm25`, :func:`~.bm25.choice`): the candidate it
  would pick, whether it would move, each topic's score as a share of the best; with the lexical
  overlaps also as shares of the message's best, and the length as against the chat's latest
  messages, so no signal rests on one corpus's magnitudes (message and reply lengths, vocabulary);
- recency and gaps: the current topic, the one before it, turns since a topic's last message,
  how many topics have been heard from since;
- dialogue acts (:mod:`.local_text`): an acknowledgement, a short carry-on, a vague follow-up, a
  pointer back, a request or a new-subject opener, a one-off opener; a short answer right after the
  assistant asked something, or a message after a reply that asked nothing;
- in multi-party chat (messages with a ``speaker``): the topic of the speaker's latest message, of
  the latest messages of the participants the message names, and of the latest message that named
  the speaker; a first message of a new speaker; a system line (nobody wrote it).

Signals that fire in one kind of chat only (:data:`KIND_FEATURES`: with the assistant's replies,
with several people) carry that kind's habits without reaching another kind. The fit draws the
weights towards bm25's choice (``local_fit.bm25_prior``). The winning candidate's probability (a
softmax over the candidates) is mapped through a monotone calibration per kind of chat, fitted on
runs like those the kind will be met on (``local_corpora.CALIBRATE_BY``: plain chat on each corpus
judged by weights fitted without it, a corpus with replies also with them hidden; chat with replies
or several speakers on session folds of its public corpus), so ``confidence`` reads as the chance
the decision is right. A one-off is offered only when
there is a current topic and no topic alone shares :data:`WORK_TERMS` words with the first
sentence. One-off topics are titled with :data:`~.local_profile.ONEOFF_TITLE_PREFIX`; they are
never offered as a place for a later message and never count as the current topic.

The router sees only the :class:`~.base.RouterView` (gold-blind, like every router here).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from operator import add, attrgetter
from importlib import resources
from typing import Any, Optional

import numpy as np

from ..errors import InputError, shown
from ..io import read_json
from .base import Decision, RouterView
from .bm25 import MOVE_THRESHOLD, bm25_tokens, choice as bm25_choice, first_best
from ..text import is_bare_ack
from .local_background import EMPTY, Background, weighed_count
from .local_profile import ONEOFF_TITLE_PREFIX, ProfileCache, part_bm25, plain_bm25, typical_length
from .local_rows import (  # noqa: F401 - the features and their rows, importable from here as before
    BM25_CHOICE_FEATURES, CHAT_KINDS, FEATURES, KIND_FEATURES, NEW_FEATURES, NEW_LAYOUT, ONEOFF_FEATURES, ONEOFF_LAYOUT,
    TOPIC_FEATURES, TOPIC_LAYOUT, Candidates, best_of, split_weights,
)
from .local_text import NOBODY, asks, body, char_grams, people, says, split_message, starts_with_lead
from .text import seems_to_go_on, short_title, title_mentioned, tokens

POLICY = "local"
#: ``via`` of a decision made by this router
VIA_LOCAL = "local"
#: decimals of the confidence a decision carries (and ``hybrid --threshold`` compares)
CONFIDENCE_DECIMALS = 4
#: the weights file shipped in the package
WEIGHTS_RESOURCE = ("interleave_bench", "data/local/weights.json")
#: format tag of the weights file, bumped whenever the feature list changes meaning
WEIGHTS_FORMAT = "interleave-local-8"
#: a message of at most this many tokens can be a short answer ("yes", "the 3rd at 5pm", "两个人")
SHORT_ANSWER_TOKENS = 6
#: in multi-party chat in open mode, a conversation silent for more than this many turns is over
#: for a message whose speaker is not tied to it (:meth:`~.local_text.People.ties`): it is no longer
#: a candidate. In the IRC dev logs 53 of 2,006 messages continue a conversation silent longer, each
#: from a speaker tied to it (at 15 turns one is not). Open mode only (there a new topic is always a
#: candidate); a chat of one person keeps every topic, however long ago it was heard from
QUIET_TURNS = 20
#: first-sentence terms that one topic alone has seen which make a message that topic's work, never
#: a one-off (one such word can be chance; two are a subject)
WORK_TERMS = 2

# --- features --------------------------------------------------------------------------------------------

#: the candidates beside the topics: a new topic and a one-off, named so that no topic is (an id
#: holds no control character), so a thread called "oneoff" is a topic like any other
NEW = "\x00new"
ONEOFF = "\x00oneoff"
#: the modes whose topic overlaps weigh each term by how common it is in chat at large
#: (:mod:`.local_background`): both. Closed mode first, where it helped both single-user corpora
#: left out of the fit; open mode since a refit with it lifted every open-mode row of the
#: leave-one-corpus-out table (the offline writer's data 0.509 -> 0.514, SGD 0.667 -> 0.685, IRC
#: 1-1 0.197 -> 0.202) and of the in-domain one (docs/local_history.md#the-background)
BACKGROUND_IN = ("closed", "open")
#: the modes whose messages are read from their first sentence that does more than acknowledge
#: (:func:`~.local_text.split_message`: "Thanks a lot. Can you find me a cab?" names its subject in
#: its second). Closed mode only: left out, it lifted every closed-mode corpus (the offline writer's
#: data 0.813 -> 0.820, SGD 0.705 -> 0.738), and in open mode it lowered both single-user corpora
#: (0.508 -> 0.502, 0.667 -> 0.662) while it lifted IRC
#: (docs/local_history.md#passing-over-a-first-sentence-that-only-acknowledges)
SKIP_ACKS_IN = ("closed",)
#: the modes whose topics read the share of the first sentence's words each has seen
#: (``topic.head_seen``): closed mode, where it lifted both single-user corpora left out of the
#: fit; in open mode it moved them in opposite directions
#: (docs/local_history.md#the-share-of-the-first-sentence-seen)
HEAD_SEEN_IN = ("closed",)


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


def candidates(view: RouterView, cache: ProfileCache, background: Background = EMPTY) -> Candidates:
    """The candidates of ``view``'s pending unit with their feature rows (see :data:`FEATURES`);
    in the modes of :data:`BACKGROUND_IN` a term's overlap weighs as common as ``background`` says."""
    text = "\n".join(body(m.text, m.speaker) for m in view.pending)
    parts = split_message(text, view.mode in SKIP_ACKS_IN)
    index = cache.topics(view)
    everyone = index.everyone  # what a speaker's messages may have gone to
    kind = chat_kind(view)
    at = view.pending[0].i
    who = people(view, text, cache.speakers(view, everyone)) if everyone else NOBODY
    if kind == "multi" and view.mode == "open":
        topics = index.near(at, QUIET_TURNS, who.ties())
        allowed = {t.label for t in topics}  # the topics this message may go to
    else:
        topics, allowed = index.open_topics(), everyone
    labels = [t.label for t in topics]
    profs = cache.profiles(view, topics)
    n = len(topics)
    head_q, ref_q, rest_q = set(tokens(parts.head)), set(tokens(parts.refs)), set(tokens(parts.rest))
    all_q = head_q | ref_q | rest_q

    ack = 1.0 if is_bare_ack(text) else 0.0
    short = 1.0 if seems_to_go_on(text) else 0.0
    anaphora = 1.0 if says("anaphora", parts.lowered_head) else 0.0
    lead = 1.0 if starts_with_lead(parts.lowered) else 0.0
    other = 1.0 if says("other", parts.lowered_head) else 0.0
    new_opener = 1.0 if says("new", parts.lowered_head) else 0.0
    request = 1.0 if says("request", parts.lowered_head) else 0.0
    oneoff_opener = 1.0 if says("oneoff", parts.lowered_head) else 0.0
    vague = 1.0 if ack or short or anaphora or lead else 0.0  # (each 0.0 or 1.0: their max)
    length = math.log1p(len(all_q)) - typical_length(view)
    brief = 1.0 if len(all_q) <= SHORT_ANSWER_TOKENS else 0.0
    last = view.history[-1] if view.history else None
    replies = 1.0 if kind == "replies" else 0.0
    in_multi = 1.0 if kind == "multi" else 0.0

    rows: list[list[float]] = []
    layouts: list[int] = []
    plain_q = bm25_tokens(view.pending_text())
    bm25_new = 1.0
    current = previous = None
    work_terms = 0
    head_bm_max = tail_bm_max = 0.0
    seen = 0  # distinct words of the message that some topic has seen
    if n:
        common = background.lookup if view.mode in BACKGROUND_IN else None
        sums, seen = part_bm25(all_q, head_q, ref_q, rest_q, profs, common)
        # the first sentence's character 3-grams, for the share of a card's title it has
        grams = frozenset(char_grams(parts.head)) if any(p.title_grams for p in profs) else frozenset()
        head_bm, ref_bm, rest_bm, head_alone = list(zip(*sums))[:4]
        best = first_best(head_bm)
        head_bm_max = math.log1p(head_bm[best])
        tail_bm_max = math.log1p(max(map(add, ref_bm, rest_bm)))
        work_terms = max(head_alone)
        current, previous = _recency(view, allowed)
        plain = plain_bm25(plain_q, profs)
        plain_top = max(plain)
        pick = bm25_choice(plain, labels.index(current) if current is not None else None, view.mode, len(plain_q))
        bm25_new = 1.0 if pick is None else 0.0
        plain_best = first_best(plain)
        head_top = head_bm[best]
        multi = 1.0 if who.multi else 0.0  # many people in one chat: conversations run side by side
        # the assistant's latest reply asked something: a short message answers it
        asked = 1.0 if last is not None and last.label == current and asks(last.reply) else 0.0
        # ... or it answered without asking anything: that piece of work may be done
        done = 1.0 if last is not None and last.label == current and bool(last.reply) and not asked else 0.0
        later = sorted(-t.messages[-1].i for t in topics if t.messages)  # bisect: topics heard from since
        log1p = math.log1p
        # the current topic's features that are this message's values (each product with a 0/1 factor
        # written out: 2.6% fewer instructions routing IRC dev, 2.2% offline dev closed, by valgrind's
        # count, the predictions byte for byte the same)
        cur_on = (1.0, ack, short, anaphora, lead, other)
        cur_tail = (request, asked, asked * brief, done)
        head_n = len(head_q)
        # the first sentence's words as the card's share counts them: each weighing as common as it is
        head_weight = weighed_count(head_q, common)
        head_seen = view.mode in HEAD_SEEN_IN and head_n > 0
        head, refs, rest = parts.head, parts.refs, parts.rest
        mine, spoke, addressed, named_in, named_me = who.mine, who.spoke, who.addressed, who.named_in, who.named_me
        # a row holds only the features that may be other than 0 (:data:`~.local_rows.LAYOUTS`): the
        # later sentences' overlaps only where they have terms, the current topic's features only in
        # its row, the features of several people and of a kind of chat only in such a chat
        parted = bool(ref_q or rest_q)
        lay_other = TOPIC_LAYOUT[parted, False, bool(multi), kind]
        lay_current = TOPIC_LAYOUT[parted, True, bool(multi), kind]
        # below, ``1.0 if c else 0.0`` for float(c), and ``log1p(x) if x else 0.0`` for a count or
        # sum that is mostly 0 (log1p(0) is 0.0): no call where the value is known (a float() call
        # took 0.42 us to the test's 0.10 us, a log1p(0) call 0.46 us to 0.13 us; the same values)
        for k, (t, prof, (hb, rb, tb, ho, ro, to, hs)) in enumerate(zip(topics, profs, sums)):
            card = t.card
            if card is not None:  # its title's words and grams from the profile, worked out once per card
                title, need, title_grams = card.title, prof.title_terms, prof.title_grams
                # a title is mentioned only where every one of its words is (the cheap test first)
                head_title = 1.0 if need and need <= head_q and title_mentioned(title, head) else 0.0
                if parted:
                    ref_title = 1.0 if need and need <= ref_q and title_mentioned(title, refs) else 0.0
                    rest_title = 1.0 if need and need <= rest_q and title_mentioned(title, rest) else 0.0
                title_share = len(grams.intersection(title_grams)) / len(title_grams) if title and title_grams else 0.0
                shared = prof.card_terms.intersection(head_q)  # (none: a share of 0.0, not worked out)
                card_share = weighed_count(shared, common) / head_weight if shared else 0.0
            else:
                head_title = ref_title = rest_title = title_share = card_share = 0.0
            msgs = t.messages
            if msgs:
                last_i = msgs[-1].i
                gap = log1p(at - last_i)
                rank = log1p(bisect_left(later, -last_i))
                unheard = 0.0
            else:
                gap = rank = 0.0  # unseen: its own feature
                unheard = 1.0
            lab = t.label
            cur = lab == current
            prev = 1.0 if lab == previous else 0.0
            lhb = log1p(hb) if hb else 0.0
            picked = 1.0 if k == pick else 0.0
            row = [lhb, 1.0 if k == best and hb > 0 else 0.0, head_title, log1p(ho) if ho else 0.0]  # in FEATURES order
            if parted:
                row += (log1p(rb) if rb else 0.0, ref_title, log1p(ro) if ro else 0.0,
                        log1p(tb) if tb else 0.0, rest_title, log1p(to) if to else 0.0)
            if cur:
                row += cur_on
                row.append(0.0 if head_title or ho > 0 else 1.0)  # unnamed: neither its title nor a word only it has
                row += cur_tail
            row += (
                title_share, card_share, hs / head_n if head_seen else 0.0,
                prev, prev * other, gap, gap * other, rank, unheard,
            )
            if multi:
                said, named = spoke.get(lab, 0), named_in.get(lab, 0)
                row += (
                    1.0 if lab == mine else 0.0, log1p(said) if said else 0.0, 1.0 if lab in addressed else 0.0,
                    log1p(named) if named else 0.0, 1.0 if lab == named_me else 0.0, gap, rank, lhb,
                )
            row += (
                picked, 1.0 if k == plain_best and plain_top >= MOVE_THRESHOLD else 0.0,
                plain[k] / plain_top if plain_top else 0.0, hb / head_top if head_top else 0.0,
            )
            if replies:
                row += (1.0, prev, unheard, lhb, picked) if cur else (prev, unheard, lhb, picked)
            elif in_multi:
                row += (1.0, picked) if cur else (picked,)
            rows.append(row)
            layouts.append(lay_current if cur else lay_other)
    out_labels = list(labels)
    if view.mode == "open":
        # the share of the message's words that no topic has seen: a new subject's words are new
        unseen = 1.0 - seen / len(all_q) if all_q else 0.0
        rows.append([  # in NEW_FEATURES order
            1.0, new_opener, request, head_bm_max, vague, length, oneoff_opener,
            1.0 if who.multi and who.speaker is not None and who.mine is None else 0.0,
            1.0 if who.multi and who.speaker is None else 0.0, 1.0 if who.names_someone else 0.0,
            1.0 if who.multi else 0.0, bm25_new,
            replies, replies * length, unseen,
        ])
        out_labels.append(NEW)
        layouts.append(NEW_LAYOUT)
    # a one-off is a question off the work in progress: with no current topic there is nothing to
    # be off from, and a first sentence sharing several words with one topic alone is that work
    if current is not None and work_terms < WORK_TERMS:
        rows.append([  # in ONEOFF_FEATURES order
            1.0, oneoff_opener, head_bm_max, tail_bm_max, vague, new_opener, length, request,
            replies, in_multi,
        ])
        out_labels.append(ONEOFF)
        layouts.append(ONEOFF_LAYOUT)
    return Candidates(tuple(out_labels), tuple(layouts), rows, kind)


# --- weights and calibration ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    """A monotone map from the winning candidate's probability to the chance it is right.

    ``x`` and ``y`` (both non-decreasing, in [0, 1]) are the knots; between them the map is linear,
    beyond them flat. Two knots at one ``x`` are a step (the fit keeps knots ``KNOT_GAP`` apart,
    which the file's 6 decimals can tie). With no knots it is the identity.
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


_SPEAKER, _REPLY = attrgetter("speaker"), attrgetter("reply")
#: latest messages that say what kind of chat a view is
KIND_WINDOW = 8


def chat_kind(view: RouterView) -> str:
    """The :data:`CHAT_KINDS` entry of ``view``, read from its pending and latest messages."""
    recent = view.history[-KIND_WINDOW:]
    if any(map(_SPEAKER, view.pending)) or any(map(_SPEAKER, recent)):
        return "multi"
    return "replies" if any(map(_REPLY, recent)) else "plain"


@dataclass(frozen=True)
class ModeWeights:
    """The fitted weights of one mode (one per :data:`FEATURES` entry) and its calibration: one
    map per kind of chat the fit saw enough of (:data:`CHAT_KINDS`), ``calibration`` for the rest."""

    weights: np.ndarray
    calibration: Calibration
    by_kind: dict[str, Calibration] = field(default_factory=dict)

    def confidence(self, probability: float, kind: str) -> float:
        """The calibrated chance that a decision of winning ``probability`` in a ``kind`` chat is right."""
        return self.by_kind.get(kind, self.calibration)(probability)


def _cal_json(c: Calibration) -> dict[str, list[float]]:
    return {"x": [round(v, 6) for v in c.x], "y": [round(v, 6) for v in c.y]}


#: the largest weight a weights file may hold (the fit's are under 10): a weight past it could make
#: a candidate's score overflow to inf, and every decision the first candidate's at confidence 1, as
#: a NaN weight would
MAX_WEIGHT = 1e6


def _finite(value: Any) -> bool:
    """Whether ``value`` is a JSON number (not a bool) that is finite."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _object(value: Any, source: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(source, None, where, f"must be an object, got {type(value).__name__}")
    return value


def _cal_of(doc: Any, source: str, where: str) -> Calibration:
    """The :class:`Calibration` of ``doc`` (``{"x": [...], "y": [...]}``) as the class requires it:
    as many ``y`` as ``x``, each a number in [0, 1], both non-decreasing; raises
    :class:`InputError` naming ``source`` and the field."""
    doc = _object(doc, source, where)
    knots = {}
    for axis in ("x", "y"):
        values = doc.get(axis)
        if not isinstance(values, list):
            raise InputError(source, None, f"{where}.{axis}", f"must be a list of numbers, got {values!r}")
        for k, v in enumerate(values):
            if not _finite(v) or not 0.0 <= v <= 1.0:
                raise InputError(source, None, f"{where}.{axis}[{k}]", f"must be a number in [0, 1], got {v!r}")
        knots[axis] = tuple(float(v) for v in values)
    x, y = knots["x"], knots["y"]
    if len(x) != len(y):
        raise InputError(source, None, where, f"has {len(x)} x and {len(y)} y: one y per x")
    for k in range(1, len(x)):
        if x[k] < x[k - 1]:
            raise InputError(source, None, f"{where}.x[{k}]", f"must not be below the one before ({x[k - 1]!r}), got {x[k]!r}")
        if y[k] < y[k - 1]:
            raise InputError(source, None, f"{where}.y[{k}]", f"must not be below the one before ({y[k - 1]!r}), got {y[k]!r}")
    return Calibration(x, y)


def _mode_of(m: Any, source: str, where: str) -> ModeWeights:
    """One mode's weights and calibration maps; raises :class:`InputError` naming the field."""
    m = _object(m, source, where)
    w = _object(m.get("weights"), source, f"{where}.weights")
    missing = [f for f in FEATURES if f not in w]
    if missing:
        raise InputError(source, None, f"{where}.weights", f"lacks {missing[0]!r}")
    for f in FEATURES:
        if not _finite(w[f]) or abs(w[f]) > MAX_WEIGHT:
            raise InputError(source, None, f"{where}.weights.{f}",
                             f"must be a number from -{MAX_WEIGHT:g} to {MAX_WEIGHT:g}, got {shown(w[f])}")
    kinds = _object(m.get("calibration_by_chat", {}), source, f"{where}.calibration_by_chat")
    unknown = [k for k in kinds if k not in CHAT_KINDS]
    if unknown:
        raise InputError(source, None, f"{where}.calibration_by_chat", f"has unknown kind {unknown[0]!r}")
    return ModeWeights(np.array([float(w[f]) for f in FEATURES]), _cal_of(m.get("calibration"), source, f"{where}.calibration"),
                       {k: _cal_of(c, source, f"{where}.calibration_by_chat.{k}") for k, c in kinds.items()})


@dataclass(frozen=True)
class LocalWeights:
    """The weights file: per mode, the feature weights and the confidence calibration; the
    background of the fit (:mod:`.local_background`)."""

    modes: dict[str, ModeWeights]
    fit: dict[str, Any]
    background: Background = EMPTY

    def to_json(self) -> dict[str, Any]:
        """The JSON document of the weights file (numbers rounded to 6 decimals)."""
        return {
            "format": WEIGHTS_FORMAT,
            "features": list(FEATURES),
            "modes": {
                mode: {
                    "weights": {name: round(float(w), 6) for name, w in zip(FEATURES, mw.weights)},
                    "calibration": _cal_json(mw.calibration),
                    "calibration_by_chat": {k: _cal_json(c) for k, c in sorted(mw.by_kind.items())},
                }
                for mode, mw in self.modes.items()
            },
            "background": self.background.to_json(),
            "fit": self.fit,
        }

    def fingerprint(self) -> str:
        """SHA-256 (``sha256:<hex>``) of :meth:`to_json` as canonical JSON: the run record keeps it,
        so a resume with other weights (a refit, another release) is another run. Worked out once
        (weights never change once made; it took 9 ms, at every run of the router)."""
        done = self.__dict__.get("_fingerprint")
        if done is None:
            text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            done = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
            object.__setattr__(self, "_fingerprint", done)  # (a frozen dataclass)
        return done

    @classmethod
    def from_json(cls, doc: Any, source: str = "weights") -> "LocalWeights":
        """The weights of a document written by :meth:`to_json`; raises :class:`InputError` naming
        ``source`` (the weights file) and the field: every weight a finite number, every calibration
        map one :class:`Calibration` takes (:func:`_cal_of`), the background one
        :meth:`Background.from_json` takes. A weight NaN would make every candidate's score NaN
        and the first candidate win every message, with a confidence of 1."""
        doc = _object(doc, source, "(document)")
        if doc.get("format") != WEIGHTS_FORMAT:
            raise InputError(source, None, "format", f"must be {WEIGHTS_FORMAT!r}, got {doc.get('format')!r}")
        modes = {mode: _mode_of(m, source, f"modes.{mode}")
                 for mode, m in _object(doc.get("modes"), source, "modes").items()}
        for mode in ("closed", "open"):
            if mode not in modes:
                raise InputError(source, None, f"modes.{mode}", "is missing")
        fit = _object(doc.get("fit", {}), source, "fit")
        return cls(modes, dict(fit), Background.from_json(doc.get("background"), source))


def read_weights(path: str | os.PathLike) -> LocalWeights:
    """The weights file at ``path``; one line naming the file and the field (broken JSON, NaN, a
    weight or a calibration knot that is no number, ...) for one that is not a weights file."""
    return LocalWeights.from_json(read_json(path), str(path))


@lru_cache(maxsize=1)
def shipped_weights() -> LocalWeights:
    """The weights file shipped in the package (a broken one named by its path: the user's install)."""
    package, name = WEIGHTS_RESOURCE
    with resources.as_file(resources.files(package).joinpath(name)) as path:
        return read_weights(path)


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


def threshold_problem(threshold: float) -> Optional[str]:
    """What is wrong with ``threshold`` as ``hybrid``'s threshold on this router's confidence, else
    None: it is a confidence (0 to 1) of at most :data:`CONFIDENCE_DECIMALS` decimals. A finer one
    selects nothing a coarser one does not (the confidence it meets is rounded), and would share
    its run's file name (``-t0.3``) with another (0.30000000000000004 and 0.3)."""
    if not 0.0 <= threshold <= 1.0:
        return f"must be a confidence between 0 and 1, got {threshold:g}"
    if round(threshold, CONFIDENCE_DECIMALS) != threshold:
        return (f"must have at most {CONFIDENCE_DECIMALS} decimal places, as local's confidence has, "
                f"got {threshold!r}")
    return None


class LocalRouter:
    """The ``local`` policy (see the module docstring)."""

    policy = POLICY
    uses_model = False

    def __init__(self, weights: Optional[LocalWeights] = None):
        self.weights = weights if weights is not None else shipped_weights()
        self._weights = {mode: split_weights(mw.weights) for mode, mw in self.weights.modes.items()}
        self.cache = ProfileCache()

    def score(self, view: RouterView) -> Scored:
        """The winning candidate of ``view``'s pending unit, its probability and confidence."""
        cands = candidates(view, self.cache, self.weights.background)
        # the first on a tie: topics in creation order, then new, then one-off
        k, p = best_of(cands, self._weights[view.mode])
        return Scored(cands.labels[k], p, self.weights.modes[view.mode].confidence(p, cands.kind))

    def decide_scored(self, view: RouterView) -> tuple[Decision, Scored]:
        """The decision for ``view``'s pending unit (``via: local``, with its confidence rounded to
        :data:`CONFIDENCE_DECIMALS` decimals) and the :class:`Scored` behind it."""
        s = self.score(view)
        conf = round(s.confidence, CONFIDENCE_DECIMALS)
        if s.choice in (ONEOFF, NEW):  # (the text only for a new topic's title: most decisions name a topic)
            title = short_title(view.pending_text())
            return Decision.new(ONEOFF_TITLE_PREFIX + title if s.choice == ONEOFF else title, via=VIA_LOCAL,
                                confidence=conf), s
        return Decision.to_topic(s.choice, via=VIA_LOCAL, confidence=conf), s

    def decide(self, view: RouterView) -> Decision:
        """The decision for ``view``'s pending unit, with ``via: local`` and its confidence."""
        return self.decide_scored(view)[0]

    async def route(self, view: RouterView) -> Decision:
        return self.decide(view)
