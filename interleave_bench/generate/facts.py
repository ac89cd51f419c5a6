"""Shared facts, part 1 (docs/generate.md#v1-replies-fact-episodes-timeline-and-probes): fact episodes laid over the plan, timeline, probes.

Three pure, seeded functions, each a step of a v1 session:

- :func:`lay_facts` draws each fact's type (``stated``, ``accepted``, ``rejected``, ``withdrawn``)
  and walks the v0 plan, giving thread turns the episodes' steps (``intro``, ``update``,
  ``propose``, ``accept``, ``reject``, ``retract``). Which thread speaks when does not change; a
  cue or a cross reference is re-pointed at a value the v1 facts have confirmed by then.
- :func:`build_timeline` turns the rows' steps into the session's ``timeline`` events, marking the
  facts a writer missed.
- :func:`build_probes` asks other threads about each fact at the moments 7a names, and selects at
  most :data:`MAX_PROBES` of them by category quota.

Nothing here reads a file, the clock or the network: the same arguments give the same answer.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..errors import UsageError
from ..schema import (
    FACT_TYPES,
    PROBE_CATEGORIES,
    STEP_STATUS,
    STATUS_CONFIRMED,
    STATUS_PROPOSED,
    Thread,
    TimelineEvent,
    fact_state,
    probe_question,
)
from . import packs
from .plan import Detail, FactEvent, PlanRow, pick_weighted

#: the steps that answer a proposal, at the thread's very next message
ANSWER_STEPS = ("accept", "reject")
#: the steps that change a confirmed value, after a gap
CHANGE_STEPS = ("update", "retract")
#: probes per session at most: enough to cover every category, few enough to answer per strategy
MAX_PROBES = 8
#: probes taken per category before any category gets more (cross has no quota)
PROBE_QUOTAS = {"stale": 2, "proposal": 2, "rejected": 2, "accepted": 2, "cross": None}
#: a stale probe comes this many turns after the change (drawn uniformly, capped at the last turn)
STALE_DELAY = (1, 3)
#: a cross probe of a fact that never changes comes this many turns after its confirmation
CROSS_DELAY = (1, 5)
#: an accepted or rejected probe comes this many turns after the answer (capped at the last turn)
ANSWER_DELAY = 1
@dataclass(frozen=True)
class FactOptions:
    """Every parameter of the fact episodes, at its documented default (docs/generate.md#v1-replies-fact-episodes-timeline-and-probes)."""

    #: chance of each episode type (a ``rejected`` fact without an alternative becomes ``stated``)
    type_weights: tuple[tuple[str, float], ...] = (
        ("stated", 0.45), ("accepted", 0.20), ("rejected", 0.20), ("withdrawn", 0.15),
    )
    #: chance that a thread turn (not a start, no answer due) takes a fact's next step
    step_p: float = 0.35
    #: an update or a retraction comes at least this many turns after the step before it
    change_gap: int = 8

    def __post_init__(self) -> None:
        names = [n for n, _ in self.type_weights]
        if sorted(names) != sorted(FACT_TYPES) or any(w < 0 for _, w in self.type_weights) \
                or abs(sum(w for _, w in self.type_weights) - 1.0) > 1e-6:
            raise UsageError(f"fact option type_weights: one non-negative weight per type of {', '.join(FACT_TYPES)}, summing to 1")
        if not 0.0 <= self.step_p <= 1.0:
            raise UsageError(f"fact option step_p: must be between 0 and 1, got {self.step_p}")
        if self.change_gap < 1:
            raise UsageError(f"fact option change_gap: must be at least 1, got {self.change_gap}")

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON form for manifests."""
        return {"type_weights": dict(self.type_weights), "step_p": self.step_p, "change_gap": self.change_gap}


def episode_steps(fact_type: str, value: str, update: str | None, alternative: str | None) -> list[tuple[str, str | None]]:
    """The ``(step, value)`` list of one fact's episode (section 7a)."""
    if fact_type == "stated":
        return [("intro", value)] + ([("update", update)] if update else [])
    if fact_type == "accepted":
        return [("propose", value), ("accept", value)]
    if fact_type == "rejected":
        return [("propose", alternative), ("reject", value)]
    if fact_type == "withdrawn":
        return [("intro", value), ("retract", None)]
    raise ValueError(f"unknown fact type {fact_type!r}")


def draw_fact_types(threads: Sequence[Thread], rng: random.Random, options: FactOptions | None = None) -> dict[str, dict[str, str]]:
    """``{thread id: {fact key: type}}``, one draw per fact in thread and fact order."""
    o = options or FactOptions()
    out: dict[str, dict[str, str]] = {}
    for t in threads:
        out[t.id] = {}
        for f in t.facts:
            kind = pick_weighted(rng, o.type_weights)
            if kind == "rejected" and not f.alternative:
                kind = "stated"  # nothing to propose and turn down
            out[t.id][f.key] = kind
    return out


def _rng(seed: int | random.Random) -> random.Random:
    """A generator for ``seed``, or the given generator itself (tests hand in one whose draws they know)."""
    return seed if isinstance(seed, random.Random) else random.Random(seed)


def lay_facts(
    rows: Sequence[PlanRow],
    threads: Sequence[Thread],
    seed: int | random.Random,
    options: FactOptions | None = None,
    types: dict[str, dict[str, str]] | None = None,
) -> tuple[list[PlanRow], dict[str, dict[str, str]]]:
    """The plan rows with v1 fact steps, and the facts' types (``fact_types``).

    ``types`` gives the facts' types instead of drawing them (a rejected fact still needs an
    alternative).
    At a thread's turn a fact waiting for its answer takes it; otherwise, on the thread's first
    turn or with chance ``step_p``, the first fact (in order) with steps left whose gap is met takes
    its next step; at most one step a turn, none at a one-off. Each row's ``fact`` is replaced by
    its step (``previous``: the value a change or a refusal replaces). A cue or a cross reference
    points at a value confirmed before the turn; a cue row with none becomes explicit, a cross
    reference with none is dropped.
    """
    o = options or FactOptions()
    rng = _rng(seed)
    types = draw_fact_types(threads, rng, o) if types is None else types
    facts = {t.id: list(t.facts) for t in threads}
    steps = {
        t.id: [episode_steps(types[t.id][f.key], f.value, f.update, f.alternative) for f in t.facts] for t in threads
    }
    done = {t.id: [0] * len(t.facts) for t in threads}  # steps taken per fact
    last = {t.id: [-1] * len(t.facts) for t in threads}  # turn of the last step per fact
    confirmed: dict[tuple[str, str], str | None] = {}  # the state before the current turn
    out: list[PlanRow] = []
    for row in rows:
        if row.thread is None:
            out.append(dataclasses.replace(row, fact=None))
            continue
        tid, i = row.thread, row.i
        # re-point the cue and the cross reference at values known before this turn
        style, tags = row.style, list(row.tags)
        cue = None
        if style == "cue":
            known = [f for f in facts[tid] if confirmed.get((tid, f.key)) is not None]
            if known:
                f = rng.choice(known)
                cue = Detail(tid, f.key, confirmed[(tid, f.key)] or "")
            else:
                style = "explicit"
                tags[tags.index("cue")] = "explicit"
        refs: list[str] = []
        details: list[Detail] = []
        for d in row.ref_details:
            known = [f for f in facts[d.thread] if confirmed.get((d.thread, f.key)) is not None]
            if known:
                f = rng.choice(known)
                refs.append(d.thread)
                details.append(Detail(d.thread, f.key, confirmed[(d.thread, f.key)] or ""))
        if not refs and "cross" in tags:
            tags.remove("cross")
        # the step this turn takes
        j: int | None = None
        waiting = [k for k, n in enumerate(done[tid]) if 0 < n < len(steps[tid][k]) and steps[tid][k][n][0] in ANSWER_STEPS]
        if waiting:
            j = waiting[0]
        elif row.action == "new" or rng.random() < o.step_p:
            for k, n in enumerate(done[tid]):
                if n >= len(steps[tid][k]):
                    continue
                step = steps[tid][k][n][0]
                if step in CHANGE_STEPS and i - last[tid][k] < o.change_gap:
                    continue
                j = k
                break
        event = None
        if j is not None:
            step, value = steps[tid][j][done[tid][j]]
            key = facts[tid][j].key
            before = confirmed.get((tid, key))
            previous = {"update": before, "retract": before, "reject": steps[tid][j][0][1]}.get(step)
            event = FactEvent(key, step, value, previous)
            done[tid][j] += 1
            last[tid][j] = i
        out.append(dataclasses.replace(
            row, style=style, tags=tuple(tags), fact=event, cue=cue, refs=tuple(refs), ref_details=tuple(details),
        ))
        if event is not None:  # the state after this turn, for the cues of later turns
            status = STEP_STATUS[event.kind]
            if status == STATUS_CONFIRMED:
                confirmed[(tid, event.key)] = event.value
            elif status != STATUS_PROPOSED:
                confirmed[(tid, event.key)] = None
    return out, types


def build_timeline(rows: Iterable[PlanRow], missed: Iterable[tuple[str, str]] = ()) -> list[dict[str, Any]]:
    """The ``timeline`` of a session: one event per fact step, in turn order.

    ``missed`` names the ``(thread, key)`` facts whose steps a writer could not get right: all
    their events carry ``miss: true`` (and count for nothing).
    """
    missed_set = set(missed)
    out = []
    for r in rows:
        if r.fact is None or r.thread is None:
            continue
        e: dict[str, Any] = {"thread": r.thread, "key": r.fact.key, "turn": r.i, "kind": r.fact.kind,
                             "status": STEP_STATUS[r.fact.kind], "value": r.fact.value}
        if (r.thread, r.fact.key) in missed_set:
            e["miss"] = True
        out.append(e)
    return out


@dataclass(frozen=True)
class _Candidate:
    order: int
    after: int
    thread: str
    source: str
    key: str
    category: str
    pair: int | None = None  # a stale probe's cross probe (its ``order``)


def question(lang: str, thread_title: str, source_title: str, key: str) -> str:
    """A probe's question in ``lang`` (:func:`~interleave_bench.schema.probe_question`), naming the
    fact by its label in that language."""
    return probe_question(lang, thread_title, source_title, packs.label_for(key, lang))


def build_probes(
    session_id: str,
    lang: str,
    threads: Sequence[Thread],
    starts: dict[str, int],
    timeline: Sequence[dict[str, Any]],
    n_turns: int,
    seed: int | random.Random,
) -> list[dict[str, Any]]:
    """The session's ``probes`` (section 7a), in ``after`` order, ids ``<session>-p1``...

    ``starts`` maps each thread to its first turn. Facts with a ``miss`` event are left out. Per
    fact: a confirmation later updated or retracted gives a ``cross`` probe between the two and a
    ``stale`` probe by the same asking thread 1 to 3 turns after the change; else a proposal gives
    a ``proposal`` probe at its turn and an ``accepted``/``rejected`` probe one turn after its
    answer; else a confirmation gives a ``cross`` probe 1 to 5 turns after it. The asking thread
    is drawn among the other threads started by then. Selection: :data:`PROBE_QUOTAS` in
    :data:`~interleave_bench.schema.PROBE_CATEGORIES` order, then the rest in that order, at most
    :data:`MAX_PROBES`; a stale probe brings its cross probe.
    """
    rng = _rng(seed)
    events = [TimelineEvent.model_validate(e) for e in timeline]
    last_turn = n_turns - 1
    missed = {(e.thread, e.key) for e in events if e.miss}
    cands: list[_Candidate] = []

    def asker(source: str, after: int) -> str | None:
        pool = [t.id for t in threads if t.id != source and starts.get(t.id, n_turns) <= after]
        return rng.choice(pool) if pool else None

    def add(after: int, thread: str, source: str, key: str, category: str, pair: int | None = None) -> int:
        cands.append(_Candidate(len(cands), after, thread, source, key, category, pair))
        return len(cands) - 1

    for t in threads:
        for f in t.facts:
            if (t.id, f.key) in missed:
                continue
            evs = [e for e in events if e.thread == t.id and e.key == f.key]
            conf = [e for e in evs if e.status == STATUS_CONFIRMED]
            change = next((e for e in evs if conf and e.turn > conf[0].turn and e.kind in CHANGE_STEPS), None)
            proposal = next((e for e in evs if e.status == STATUS_PROPOSED), None)
            if conf and change is not None:
                after = rng.randint(conf[0].turn, change.turn - 1)
                who = asker(t.id, after)
                if who is not None:
                    cross = add(after, who, t.id, f.key, "cross")
                    add(min(change.turn + rng.randint(*STALE_DELAY), last_turn), who, t.id, f.key, "stale", cross)
            elif proposal is not None:
                who = asker(t.id, proposal.turn)
                if who is not None:
                    add(proposal.turn, who, t.id, f.key, "proposal")
                answer = next((e for e in evs if e.turn > proposal.turn and e.kind in ANSWER_STEPS), None)
                if answer is not None:
                    after = min(answer.turn + ANSWER_DELAY, last_turn)
                    who = asker(t.id, after)
                    if who is not None:
                        add(after, who, t.id, f.key, "accepted" if answer.kind == "accept" else "rejected")
            elif conf:
                after = min(conf[0].turn + rng.randint(*CROSS_DELAY), last_turn)
                who = asker(t.id, after)
                if who is not None:
                    add(after, who, t.id, f.key, "cross")
    chosen = select_probes(cands)
    titles = {t.id: t.title for t in threads}
    out = []
    for n, c in enumerate(sorted((cands[k] for k in chosen), key=lambda c: (c.after, c.order))):
        gold = fact_state(events, c.source, c.key, c.after)
        decoys: list[str] = []
        for e in events:
            if e.thread == c.source and e.key == c.key and e.turn <= c.after and not e.miss:
                if e.value is not None and e.value != gold and e.value not in decoys:
                    decoys.append(e.value)
        out.append({
            "id": f"{session_id}-p{n + 1}", "after": c.after, "thread": c.thread, "source": c.source, "key": c.key,
            "category": c.category, "gold": gold, "decoys": decoys,
            "question": question(lang, titles[c.thread], titles[c.source], c.key),
        })
    return out


def select_probes(cands: Sequence[_Candidate]) -> list[int]:
    """The ``order`` of the candidates kept: quotas first, then the rest, never over :data:`MAX_PROBES`."""
    chosen: list[int] = []
    taken = set()

    def take(c: _Candidate) -> None:
        need = [c.order] + ([c.pair] if c.pair is not None and c.pair not in taken else [])
        if len(chosen) + len(need) <= MAX_PROBES:
            chosen.extend(need)
            taken.update(need)

    for quotas in (True, False):
        for cat in PROBE_CATEGORIES:
            for c in cands:
                if c.category != cat or c.order in taken:
                    continue
                quota = PROBE_QUOTAS[cat]
                if quotas and quota is not None and sum(cands[k].category == cat for k in chosen) >= quota:
                    break
                take(c)
    return chosen


def first_turns(rows: Iterable[PlanRow]) -> dict[str, int]:
    """``{thread id: its first turn}``."""
    out: dict[str, int] = {}
    for r in rows:
        if r.thread is not None:
            out.setdefault(r.thread, r.i)
    return out


__all__ = [
    "FACT_TYPES", "FactOptions", "episode_steps", "draw_fact_types", "lay_facts", "build_timeline",
    "build_probes", "select_probes", "question", "first_turns", "MAX_PROBES", "PROBE_QUOTAS",
]
