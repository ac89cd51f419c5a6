"""The seeded plan: the ground truth of a session, drawn before any message is written.

Two pure functions of a seed: :func:`draw_shape` (how many turns and threads, which domains, whether
there is a twin, which facts will change) and :func:`plan_session` (what every turn does: which
thread, which action and style, which fact it states or changes, which other thread it draws on).
Every parameter is a field of :class:`PlanOptions` at its documented default, so a run can
change one and record it in its manifest. Nothing here reads a file, the clock or the network.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import random
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import UsageError
from ..options import read_whole_number
from ..schema import Fact, Thread

#: the work domains a session's threads are drawn from (each has an offline pack in data/offline)
DOMAINS = ("career", "code", "events", "finance", "fitness", "home", "paperwork", "shopping", "study", "travel")
#: styles a thread message may take, and which of them make sense for a move to another thread
THREAD_STYLES = ("explicit", "cue", "pronoun", "implicit")
#: an implicit message ("ok, next?") cannot announce a change of thread
MOVE_STYLES = ("explicit", "cue", "pronoun")
#: the fact event kinds a turn may carry (``turn.fact.kind``)
FACT_STATE = "state"
FACT_UPDATE = "update"
#: the twin is the third thread and shadows the second (``twinOf: "t2"``), as in the reference data
TWIN_INDEX = 2
TWIN_OF_INDEX = 1


@dataclass(frozen=True)
class PlanOptions:
    """Every parameter of the session shape and the plan, at its documented default (docs/generate.md)."""

    #: shortest session, in turns: long enough for returns after a gap of ``return_gap`` turns
    min_turns: int = 40
    #: longest session, in turns
    max_turns: int = 60
    #: fewest threads of a session, in all (a twin counts toward it)
    min_threads: int = 3
    #: most threads of a session, in all (a twin counts toward it)
    max_threads: int = 5
    #: share of sessions with :data:`TWIN_INDEX` + 1 or more threads that get a twin: that thread
    #: takes the domain of the one before it
    twin_p: float = 0.5
    #: concrete facts per thread
    facts_per_thread: int = 3
    #: chance that a fact has a later value (``update``); "for some" facts, as documented
    fact_update_share: float = 0.4
    #: threads after the first start within this share of the session
    start_window: float = 0.6
    #: thread starts are at least this many turns apart
    start_spacing: int = 2
    #: no thread starts in the last this-many turns
    start_tail: int = 4
    #: chance that a turn (not a start) is a one-off question
    oneoff_p: float = 0.05
    #: chance that a turn (not a start) moves to another started thread
    move_p: float = 0.30
    #: weight of the k-th most recently used other thread is ``recency_decay ** k``: recent ones are
    #: picked more often, old ones can still return
    recency_decay: float = 0.6
    #: a move to a thread whose last message is this many turns back (or more) is a ``return``
    return_gap: int = 12
    #: style of a ``continue`` message
    continue_styles: tuple[tuple[str, float], ...] = (("implicit", 0.45), ("pronoun", 0.25), ("explicit", 0.30))
    #: style of a ``switch`` or ``return`` message
    move_styles: tuple[tuple[str, float], ...] = (("explicit", 0.55), ("cue", 0.30), ("pronoun", 0.15))
    #: chance that a thread message also draws on another started thread (``refs``, tag ``cross``)
    cross_p: float = 0.12
    #: chance that a later turn of a thread states its next pending fact
    fact_later_p: float = 0.35
    #: chance that a stated fact with an update changes at an eligible turn
    update_p: float = 0.25
    #: an update comes at least this many turns after the fact was stated
    update_gap: int = 10
    #: the domains threads are drawn from
    domains: tuple[str, ...] = DOMAINS

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise UsageError(f"plan option {problems[0]}")

    def problems(self) -> list[str]:
        """Every inconsistency of these options, as ``name: why`` (empty when they are usable)."""
        out: list[str] = []
        for name in ("twin_p", "fact_update_share", "start_window", "oneoff_p", "move_p", "recency_decay",
                     "cross_p", "fact_later_p", "update_p"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                out.append(f"{name}: must be between 0 and 1, got {v}")
        if self.oneoff_p + self.move_p > 1.0:
            out.append(f"oneoff_p + move_p: must be at most 1, got {self.oneoff_p + self.move_p:g}")
        if self.recency_decay <= 0:
            out.append("recency_decay: must be above 0")
        if not 1 <= self.min_threads <= self.max_threads:
            out.append(f"min_threads/max_threads: need 1 <= min <= max, got {self.min_threads}/{self.max_threads}")
        if self.max_threads > len(self.domains):
            out.append(f"max_threads: {self.max_threads} threads need as many domains, only {len(self.domains)} given")
        if len(set(self.domains)) != len(self.domains) or not all(isinstance(d, str) and d for d in self.domains):
            out.append("domains: must be distinct non-empty names")
        if self.facts_per_thread < 1:
            out.append("facts_per_thread: must be at least 1")
        for name in ("start_spacing", "start_tail", "return_gap", "update_gap"):
            if getattr(self, name) < 1:
                out.append(f"{name}: must be at least 1")
        if not 1 <= self.min_turns <= self.max_turns:
            out.append(f"min_turns/max_turns: need 1 <= min <= max, got {self.min_turns}/{self.max_turns}")
        elif 0.0 <= self.start_window <= 1.0:  # (a window out of range, inf or nan is named above)
            # every thread (twin included) must fit in the start window with its spacing
            most = self.max_threads
            last = _last_start(self.min_turns, self)
            if most > 1 and (last - self.start_spacing) // self.start_spacing + 1 < most - 1:
                out.append(
                    f"min_turns: {self.min_turns} turns leave no room to start {most} threads "
                    f"{self.start_spacing} turns apart within the first {self.start_window:.0%}"
                )
        for name, allowed in (("continue_styles", THREAD_STYLES), ("move_styles", MOVE_STYLES)):
            weights = getattr(self, name)
            styles = [s for s, _ in weights]
            if not weights or any(s not in allowed for s in styles) or len(set(styles)) != len(styles):
                out.append(f"{name}: styles must be distinct, from {', '.join(allowed)}")
            elif (any(not math.isfinite(w) or w < 0 for _, w in weights)
                  or abs(sum(w for _, w in weights) - 1.0) > 1e-6):
                out.append(f"{name}: weights must be finite, non-negative and sum to 1")
        return out

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON form (style weights as objects) for manifests."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name.endswith("_styles"):
                v = {s: w for s, w in v}
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return out

    @classmethod
    def from_overrides(cls, items: Sequence[str], base: "PlanOptions | None" = None) -> "PlanOptions":
        """Options with ``NAME=VALUE`` overrides applied (the CLI's ``--plan``).

        Style weights read ``implicit:0.5,pronoun:0.2,explicit:0.3``; domains read ``code,travel,...``.
        Raises :class:`UsageError` naming the bad item.
        """
        base = base or cls()
        changes: dict[str, Any] = {}
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for item in items:
            name, sep, raw = item.partition("=")
            name = name.strip().replace("-", "_")
            if not sep or name not in fields:
                raise UsageError(f"--plan {item!r}: expected NAME=VALUE with NAME one of {', '.join(fields)}")
            current = getattr(base, name)
            try:
                if name.endswith("_styles"):
                    pairs = []
                    for part in raw.split(","):
                        style, _, w = part.partition(":")
                        pairs.append((style.strip(), float(w)))
                    value: Any = tuple(pairs)
                elif name == "domains":
                    value = tuple(d.strip() for d in raw.split(",") if d.strip())
                elif isinstance(current, bool):
                    raise ValueError
                elif isinstance(current, int):  # held to 64 bits, as the manifest that records it is read
                    try:
                        value = read_whole_number(raw)
                    except ValueError as exc:
                        raise UsageError(f"--plan {item!r}: {name}: {exc}") from None
                else:
                    value = float(raw)
            except ValueError:
                raise UsageError(f"--plan {item!r}: {raw!r} is not a valid value for {name}") from None
            changes[name] = value
        return dataclasses.replace(base, **changes)


def _last_start(n_turns: int, o: PlanOptions) -> int:
    """The latest turn a thread may start at: inside the start window and not in the tail."""
    window_last = -(-round(o.start_window * n_turns * 1000) // 1000) - 1  # ceil(window * n) - 1
    return min(window_last, n_turns - o.start_tail - 1)


def derive_seed(seed: int, index: int, purpose: str) -> int:
    """A 64-bit seed for one purpose of one session, the same in every process and run.

    Separate streams per purpose mean changing the writer never changes the plan.
    """
    blob = json.dumps([seed, index, purpose]).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big")


@dataclass(frozen=True)
class SessionShape:
    """What a session's threads look like before any content is written.

    ``domains[k]`` is thread k's domain, in start order; ``twin`` is the index of the twin thread
    and ``twin_of`` the index of the thread it shadows (both None without a twin); ``updates[k][j]``
    says whether fact j of thread k gets a later value.
    """

    n_turns: int
    domains: tuple[str, ...]
    twin: int | None
    twin_of: int | None
    updates: tuple[tuple[bool, ...], ...]

    @property
    def n_threads(self) -> int:
        return len(self.domains)


def draw_shape(seed: int, options: PlanOptions | None = None) -> SessionShape:
    """The seeded shape of one session: length, thread domains, twin, which facts change.

    A session has ``min_threads`` to ``max_threads`` threads in all; with a twin (chance
    ``twin_p`` when there are at least three) the third thread takes the second's domain.
    """
    o = options or PlanOptions()
    rng = random.Random(seed)
    n_turns = rng.randint(o.min_turns, o.max_turns)
    n_threads = rng.randint(o.min_threads, o.max_threads)
    twin = twin_of = None
    if n_threads > TWIN_INDEX and rng.random() < o.twin_p:
        twin, twin_of = TWIN_INDEX, TWIN_OF_INDEX
    domains = rng.sample(list(o.domains), n_threads - (1 if twin is not None else 0))
    if twin is not None and twin_of is not None:
        domains.insert(twin, domains[twin_of])
    updates = tuple(tuple(rng.random() < o.fact_update_share for _ in range(o.facts_per_thread)) for _ in domains)
    return SessionShape(n_turns, tuple(domains), twin, twin_of, updates)


def skeleton_threads(shape: SessionShape) -> list[Thread]:
    """Threads with placeholder content for a shape (ids ``t1``...): enough to draw a plan from."""
    out = []
    for k, d in enumerate(shape.domains):
        facts = [
            Fact(key=f"f{j + 1}", value=f"v{k + 1}.{j + 1}", update=f"u{k + 1}.{j + 1}" if up else None)
            for j, up in enumerate(shape.updates[k])
        ]
        out.append(
            Thread(id=f"t{k + 1}", title=f"{d} {k + 1}", domain=d, facts=facts,
                   twinOf=f"t{shape.twin_of + 1}" if k == shape.twin and shape.twin_of is not None else None)
        )
    return out


@dataclass(frozen=True)
class FactEvent:
    """A fact a turn states (``kind`` state: ``value``) or changes (update: ``previous`` -> ``value``).

    In v1 ``kind`` is the episode step (``intro``, ``propose``, ``accept``...); ``value`` is None for
    a retraction, and ``previous`` is the value a change, a retraction or a refusal replaces.
    """

    key: str
    kind: str
    value: str | None
    previous: str | None = None


@dataclass(frozen=True)
class Detail:
    """A fact of a thread as it stands at some turn: what a cue or a cross reference mentions."""

    thread: str
    key: str
    value: str


@dataclass(frozen=True)
class PlanRow:
    """What turn ``i`` must do. ``thread`` is None only for a one-off.

    ``cue`` is the stated fact a ``cue`` message mentions; ``ref_details`` one stated fact of each
    thread in ``refs``; ``gap`` the turns since the thread's previous message (moves only).
    """

    i: int
    thread: str | None
    action: str
    style: str
    refs: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    fact: FactEvent | None = None
    cue: Detail | None = None
    ref_details: tuple[Detail, ...] = ()
    gap: int | None = None

    def to_payload(self) -> dict[str, Any]:
        """The row as the model writer's prompt shows it (and the fake model reads it back)."""
        out: dict[str, Any] = {"i": self.i, "thread": self.thread, "action": self.action, "style": self.style}
        if self.fact is not None:
            out["fact"] = {"key": self.fact.key, "kind": self.fact.kind, "value": self.fact.value}
            if self.fact.previous is not None:
                out["fact"]["previous"] = self.fact.previous
        if self.cue is not None:
            out["cue"] = {"key": self.cue.key, "value": self.cue.value}
        if self.ref_details:
            out["refs"] = [{"thread": d.thread, "key": d.key, "value": d.value} for d in self.ref_details]
        return out

    @classmethod
    def from_payload(cls, d: dict[str, Any]) -> "PlanRow":
        """The inverse of :meth:`to_payload` (tags and gap are not part of it)."""
        fact = d.get("fact")
        cue = d.get("cue")
        details = tuple(Detail(r["thread"], r["key"], r["value"]) for r in d.get("refs") or [])
        return cls(
            i=int(d["i"]),
            thread=d.get("thread"),
            action=d["action"],
            style=d["style"],
            refs=tuple(x.thread for x in details),
            fact=FactEvent(fact["key"], fact["kind"], fact["value"], fact.get("previous")) if fact else None,
            cue=Detail(d.get("thread") or "", cue["key"], cue["value"]) if cue else None,
            ref_details=details,
        )


def pick_weighted(rng: random.Random, weights: tuple[tuple[str, float], ...]) -> str:
    """One name of ``weights`` (``(name, probability)`` pairs), drawn with one ``rng.random()``;
    the last name when rounding leaves the probabilities a little short of 1."""
    u = rng.random()
    acc = 0.0
    for name, w in weights:
        acc += w
        if u < acc:
            return name
    return weights[-1][0]


def _start_turns(rng: random.Random, n_turns: int, n_later: int, o: PlanOptions) -> list[int]:
    """Sorted start turns for the threads after the first: in the window, ``start_spacing`` apart."""
    if n_later == 0:
        return []
    last = _last_start(n_turns, o)
    # Choose gaps uniformly: place n_later starts in [spacing, last] with minimum spacing by
    # sampling from a compressed range and stretching it back (uniform over valid placements).
    slack = last - o.start_spacing - (n_later - 1) * o.start_spacing
    if slack < 0:
        raise UsageError(f"plan: {n_turns} turns leave no room to start {n_later + 1} threads; raise min_turns")
    picks = sorted(rng.sample(range(slack + n_later), n_later))
    return [o.start_spacing + p + k * (o.start_spacing - 1) for k, p in enumerate(picks)]


def plan_session(threads: Sequence[Thread], n_turns: int, seed: int, options: PlanOptions | None = None) -> list[PlanRow]:
    """The plan rows of one session (docs/generate.md#the-plan-interleave_benchgenerateplanpy).

    ``threads`` are in start order (the first starts at turn 0); their facts, in order, are the ones
    the plan states, and a fact's ``update`` is the value it may later change to. Returns
    ``n_turns`` rows. The same arguments always give the same rows.
    """
    o = options or PlanOptions()
    if not threads:
        raise ValueError("a plan needs at least one thread")
    rng = random.Random(seed)
    ids = [t.id for t in threads]
    twins = {t.id for t in threads if t.twinOf} | {t.twinOf for t in threads if t.twinOf}
    starts = dict(zip(_start_turns(rng, n_turns, len(threads) - 1, o), ids[1:]))
    starts[0] = ids[0]
    facts = {t.id: list(t.facts) for t in threads}
    pending = {t.id: list(range(len(t.facts))) for t in threads}  # fact indexes not yet stated
    stated: dict[str, dict[int, int]] = {t.id: {} for t in threads}  # fact index -> turn stated
    current_value: dict[str, dict[int, str]] = {t.id: {} for t in threads}
    updated: dict[str, set[int]] = {t.id: set() for t in threads}
    last_used: dict[str, int] = {}
    started: list[str] = []
    current: str | None = None
    rows: list[PlanRow] = []

    def others_by_recency(exclude: str) -> list[str]:
        return sorted((t for t in started if t != exclude), key=lambda t: -last_used[t])

    def recency_choice(cands: list[str]) -> str:
        weights = [o.recency_decay**k for k in range(len(cands))]
        return rng.choices(cands, weights=weights)[0]

    def detail(tid: str, idx: int) -> Detail:
        return Detail(tid, facts[tid][idx].key, current_value[tid][idx])

    for i in range(n_turns):
        gap = None
        if i in starts:
            thread, action, style = starts[i], "new", "explicit"
            started.append(thread)
        else:
            u = rng.random()
            if u < o.oneoff_p:
                rows.append(PlanRow(i, None, "oneoff", "oneoff", tags=("oneoff",)))
                continue
            if u < o.oneoff_p + o.move_p and len(started) >= 2:
                assert current is not None
                thread = recency_choice(others_by_recency(current))
                gap = i - last_used[thread]
                action = "return" if gap >= o.return_gap else "switch"
                style = pick_weighted(rng, o.move_styles)
            else:
                assert current is not None
                thread, action = current, "continue"
                style = pick_weighted(rng, o.continue_styles)
        # a cross reference: this message also draws on another started thread
        refs: tuple[str, ...] = ()
        ref_details: tuple[Detail, ...] = ()
        others = others_by_recency(thread)
        if others and rng.random() < o.cross_p:
            ref = recency_choice(others)
            if stated[ref]:
                refs = (ref,)
                ref_details = (detail(ref, rng.choice(sorted(stated[ref]))),)
        # the fact this turn states or changes
        event: FactEvent | None = None
        if action == "new":
            if pending[thread]:
                event = _state(thread, pending, stated, current_value, facts, i)
        else:
            if pending[thread] and rng.random() < o.fact_later_p:
                event = _state(thread, pending, stated, current_value, facts, i)
            else:
                eligible = [
                    j for j, at in sorted(stated[thread].items())
                    if facts[thread][j].update and j not in updated[thread] and i - at >= o.update_gap
                ]
                if eligible and rng.random() < o.update_p:
                    j = rng.choice(eligible)
                    f = facts[thread][j]
                    event = FactEvent(f.key, FACT_UPDATE, f.update or "", current_value[thread][j])
                    current_value[thread][j] = f.update or ""
                    updated[thread].add(j)
        # a cue names a detail stated earlier (never the one this very turn introduces)
        cue = None
        if style == "cue":
            known = sorted(j for j, at in stated[thread].items() if at < i)
            if known:
                j = rng.choice(known)
                value = current_value[thread][j]
                if event is not None and event.kind == FACT_UPDATE and event.key == facts[thread][j].key:
                    value = event.previous or value  # the cue points at what was known before
                cue = Detail(thread, facts[thread][j].key, value)
            else:
                style = "explicit"  # nothing concrete is known yet: name the subject instead
        tags = [style]
        if thread in twins:
            tags.append("twin")
        if refs:
            tags.append("cross")
        if action == "return":
            tags.append("long_gap")
        rows.append(PlanRow(i, thread, action, style, refs, tuple(tags), event, cue, ref_details, gap))
        last_used[thread] = i
        current = thread
    return rows


def _state(thread: str, pending: dict[str, list[int]], stated: dict[str, dict[int, int]],
           current_value: dict[str, dict[int, str]], facts: dict[str, list[Fact]], i: int) -> FactEvent:
    j = pending[thread].pop(0)
    stated[thread][j] = i
    f = facts[thread][j]
    current_value[thread][j] = f.value
    return FactEvent(f.key, FACT_STATE, f.value)
