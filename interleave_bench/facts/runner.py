"""The facts run: replay each v1 session in turn order and ask its probes once per strategy.

Topics follow gold labels. After every exchange of a topic the shared-facts system observes it; at
each probe the probe is routed twice (without and with the system's candidates offered), the facts
strategy gets the system's delivery (and the router's imports), and every strategy answers the
question from its own history of the asking topic (its earlier probe exchanges and notes
included, as a live assistant would keep them). A seeded sample of turns that had candidates is
routed twice as well.

A session's rows are appended together when it finishes; a session whose model call failed gets an
``error`` row instead and is replayed on the next run (its answered calls come from the cache). At
the end the file is rewritten in data order, so a rerun over cached answers writes the same bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from ..errors import UsageError
from ..io import JsonlAppender, truncate_partial_line, write_jsonl
from ..llm import LLM, ModelCallError, Reply
from ..llm.client import SESSIONS_PER_SLOT
from ..progress import progress
from ..schema import Session, Turn, read_probe_question
from .guard import GuardedSystem, SystemFailure
from .metrics import CONFIRMED, STRATEGIES, delivery_verdict, judge
from .prompts import (
    ANSWER_KIND,
    EXTRACT_KIND,
    PROMPT_VERSION,
    ROUTE_KIND,
    SUMMARY_KIND,
    TEMPERATURE,
    answer_messages,
    parse_route,
    route_messages,
    summary_messages,
)
from .protocol import Exchange, FactLine, Request, SystemContext, Topic, briefing
from .records import (
    AnswerRow,
    DeliveryRow,
    ErrorRow,
    Probe,
    RouteRow,
    SessionRow,
    fact_histories,
    probes_of,
    row_dict,
)
from .results import read_rows

#: turns with candidates routed twice per session, besides the probes (``--route-turns``)
DEFAULT_ROUTE_TURNS = 6
#: messages before a request that the router and the candidates see
RECENT_MESSAGES = 2
#: asks per routing request when the answer names no topic: one fresh retry, as the route command does
ROUTE_ATTEMPTS = 2
#: what each request kind is spent on, in the tokens-spent table
PURPOSES = {EXTRACT_KIND: "extract", SUMMARY_KIND: "summary", ANSWER_KIND: "answer", ROUTE_KIND: "route"}


def assistant_text(turn: Turn) -> str:
    """The assistant's reply of a v1 turn (``assistant``; ``reply`` in older files; empty if none)."""
    return str(getattr(turn, "assistant", None) or turn.reply or "")


class MeteredLLM:
    """The run's client for one session: counts each call's tokens by purpose (cached answers
    count their original usage, so a rerun writes the same figures)."""

    def __init__(self, llm: LLM):
        self.llm = llm
        self.model = llm.model
        self.usage: dict[str, Counter] = defaultdict(Counter)

    async def complete(self, kind: str, messages: list[dict[str, Any]], **kw: Any) -> Reply:
        reply = await self.llm.complete(kind, messages, **kw)
        u = self.usage[PURPOSES.get(kind, kind)]
        u.update({"calls": 1, "input": reply.usage.input, "cached_input": reply.usage.cached_input,
                  "output": reply.usage.output})
        return reply

    def reject(self, reply: Reply) -> None:
        self.llm.reject(reply)


@dataclass(frozen=True)
class RunOptions:
    strategies: tuple[str, ...] = STRATEGIES
    system: str = "reference"
    system_name: str = "reference"
    route_turns: int = DEFAULT_ROUTE_TURNS
    seed: int = 0
    model: str = ""


def session_fingerprint(s: Session, opts: RunOptions) -> str:
    """What a session's rows depend on: the session, strategies, system, sample size, seed, prompts."""
    blob = json.dumps([s.dump(), list(opts.strategies), opts.system_name, opts.route_turns, opts.seed,
                       PROMPT_VERSION], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


@dataclass
class _ProbeExchange:
    after: int
    seq: int
    thread: str
    user: str
    assistant: str


@dataclass
class _Replay:
    """The state of one session's replay."""

    session: Session
    llm: MeteredLLM
    opts: RunOptions
    system: Any
    titles: dict[str, str]
    asked: dict[str, list[_ProbeExchange]] = field(default_factory=lambda: defaultdict(list))
    rows: list[dict[str, Any]] = field(default_factory=list)
    pool: list[tuple[int, Request]] = field(default_factory=list)

    def history(self, strategy: str, thread: str, after: int) -> list[dict[str, str]]:
        events: list[tuple[tuple, str, str]] = []
        for t in self.session.turns[: after + 1]:
            if strategy == "single" or t.gold.thread == thread:
                events.append(((t.i, 0, 0), t.text, assistant_text(t)))
        for x in self.asked[strategy]:
            if strategy == "single" or x.thread == thread:
                events.append(((x.after, 1, x.seq), x.user, x.assistant))
        out: list[dict[str, str]] = []
        for _, user, assistant in sorted(events, key=lambda e: e[0]):
            out.append({"role": "user", "content": user})
            if assistant:
                out.append({"role": "assistant", "content": assistant})
        return out

    def request(self, text: str, after: int) -> Request:
        before = self.session.turns[: after + 1]
        current = next((t.gold.thread for t in reversed(before) if t.gold.thread), None)
        return Request(text, after, current, tuple(t.text for t in before[-RECENT_MESSAGES:]))

    async def route(self, req: Request, gold: Optional[str], probe: Optional[str],
                    offered: list[FactLine]) -> tuple[RouteRow, list[FactLine]]:
        topics = [{"id": t.id, "title": t.title} for t in self.session.threads]
        ids = [t["id"] for t in topics]
        facts = [{"source": self.titles.get(f.source, f.source), "key": f.key, "value": f.value} for f in offered]
        what = f"{self.session.session_id} turn {req.turn}"
        without, _ = await self.ask_route(route_messages(topics, req.current, req.recent, req.text, None), ids, 0, what)
        with_, imports = without, []
        if offered:
            with_, imports = await self.ask_route(route_messages(topics, req.current, req.recent, req.text, facts),
                                                  ids, len(offered), what)
        error = None if without is not None and with_ is not None else "the router's answer names no topic"
        imported = [offered[n - 1] for n in imports]
        row = RouteRow(session_id=self.session.session_id, turn=req.turn, probe=probe, gold=gold, without=without,
                       with_=with_, offered=len(offered), imports=[f"{f.source}/{f.key}" for f in imported], error=error)
        return row, imported

    async def ask_route(self, messages: list[dict[str, str]], ids: list[str], offered: int,
                        what: str) -> tuple[Optional[str], list[int]]:
        """The routed topic (None when no answer named one) and the imports; an answer naming no
        topic is asked once more, and answers given up on leave the cache so a later run asks again."""
        replies: list[Reply] = []
        for attempt in range(ROUTE_ATTEMPTS):
            replies.append(await self.llm.complete(ROUTE_KIND, messages, temperature=TEMPERATURE, attempt=attempt,
                                                   what=what))
            topic, imports = parse_route(replies[-1].text, ids, offered)
            if topic is not None:
                return topic, imports
        for reply in replies:
            self.llm.reject(reply)
        return None, []

    async def notes(self, strategy: str, p: Probe, req: Request, imported: list[FactLine]) -> str:
        if strategy == "summary":
            exchanges = [{"user": t.text, "assistant": assistant_text(t)}
                         for t in self.session.turns[: p.after + 1] if t.gold.thread == p.source]
            r = await self.llm.complete(SUMMARY_KIND, summary_messages(self.titles.get(p.source, p.source), exchanges),
                                        temperature=TEMPERATURE, what=f"{p.id} summary")
            return f'Summary of "{self.titles.get(p.source, p.source)}":\n{r.text.strip()}'
        if strategy == "oracle":
            value = p.gold if p.gold is not None else "undecided (not settled)"
            asked = read_probe_question(p.question)  # the fact as the question names it
            return briefing([FactLine(p.source, asked.label if asked else p.key, value)], self.titles)
        if strategy == "facts":
            lines = await self.system.deliver(p.thread, req, imported)
            facts = fact_histories(self.session, p.after)
            for ln in lines:
                self.rows.append(row_dict(DeliveryRow(
                    session_id=self.session.session_id, probe=p.id, thread=p.thread, source=ln.source, key=ln.key,
                    value=ln.value, notice=ln.notice, verdict=delivery_verdict(ln.source, ln.key, ln.value, facts))))
            render = getattr(self.system, "briefing", None)
            return render(lines) if callable(render) else briefing(lines, self.titles)
        return ""

    async def answer(self, strategy: str, p: Probe, notes: str, seq: int) -> dict[str, Any]:
        title = self.titles.get(p.thread, p.thread)
        messages = answer_messages(title, self.history(strategy, p.thread, p.after), notes, p.question)
        r = await self.llm.complete(ANSWER_KIND, messages, temperature=TEMPERATURE, what=f"{p.id} {strategy}")
        confirmed = [v for s, v in fact_histories(self.session, p.after).get(p.source, {}).get(p.key, [])
                     if s == CONFIRMED and v is not None]
        text = r.text.strip()
        self.asked[strategy].append(_ProbeExchange(p.after, seq, p.thread, messages[-1]["content"], text))
        return row_dict(AnswerRow(
            session_id=self.session.session_id, probe=p.id, strategy=strategy, category=p.category,
            lang=self.session.lang, thread=p.thread, source=p.source, key=p.key, after=p.after, gold=p.gold,
            decoys=list(p.decoys), confirmed=confirmed, answer=text,
            verdict=judge(text, p.gold, p.decoys, confirmed).verdict,
            context_tokens=r.usage.input, notes_chars=len(notes)))

    async def probe(self, p: Probe, seq: int) -> None:
        req = self.request(p.question, p.after)
        imported: list[FactLine] = []
        if self.system is not None:
            offered = list(await self.system.candidates(req))
            route_row, imported = await self.route(req, p.thread, p.id, offered)
            self.rows.append(row_dict(route_row))
        for strategy in self.opts.strategies:
            notes = await self.notes(strategy, p, req, imported)
            self.rows.append(await self.answer(strategy, p, notes, seq))


async def replay_session(s: Session, llm: LLM, system_cls: Optional[type], opts: RunOptions) -> list[dict[str, Any]]:
    """Every row of one session, in order: per probe its route row, delivery and answer rows; then
    the sampled turns' route rows; then the session row. Raises :class:`ModelCallError` when a
    call fails after the client's retries, :class:`~.guard.SystemFailure` when the system breaks the
    protocol's contract (raises, or returns what it must not)."""
    metered = MeteredLLM(llm)
    titles = {t.id: t.title for t in s.threads}
    system = None
    if system_cls is not None and "facts" in opts.strategies:
        system = GuardedSystem(system_cls, SystemContext(metered, s.session_id, s.lang,
                                                         tuple(Topic(t.id, t.title) for t in s.threads)),
                               opts.system_name or system_cls.__name__)
    r = _Replay(s, metered, opts, system, titles)
    probes = probes_of(s)
    by_after: dict[int, list[Probe]] = defaultdict(list)
    for p in probes:
        by_after[p.after].append(p)
    seq = 0
    for t in s.turns:
        if system is not None and t.gold.thread is not None:
            req = r.request(t.text, t.i - 1) if t.i > 0 else Request(t.text, -1)
            # a sampled turn's route row names the turn its request follows: the first follows none
            if await system.candidates(req) and t.i > 0:
                r.pool.append((t.i, req))
            await system.observe(Exchange(t.gold.thread, t.i, t.text, assistant_text(t)))
        for p in by_after.get(t.i, []):
            seq += 1
            await r.probe(p, seq)
    if system is not None and opts.route_turns > 0 and r.pool:
        rng = random.Random(f"{opts.seed}/{s.session_id}")
        picked = sorted(rng.sample(r.pool, min(opts.route_turns, len(r.pool))), key=lambda x: x[0])
        for i, req in picked:
            offered = list(await system.candidates(req))  # the state has moved on: offer what it holds now
            row, _ = await r.route(req, s.turns[i].gold.thread, None, offered)
            r.rows.append(row_dict(row))
    usage = {k: dict(sorted(v.items())) for k, v in sorted(metered.usage.items())}
    r.rows.append(row_dict(SessionRow(
        session_id=s.session_id, lang=s.lang, probes=[p.id for p in probes], strategies=list(opts.strategies),
        system=opts.system_name, model=opts.model, usage=usage, fingerprint=session_fingerprint(s, opts))))
    return r.rows


def _unrouted(rows: list[dict[str, Any]]) -> bool:
    """Whether a session's rows hold a routing answer that named no topic (a rerun asks again)."""
    return any(r.get("kind") == "route" and r.get("error") for r in rows)


@dataclass
class Plan:
    """What a run has to do: finished sessions' rows it keeps, sessions still to replay, how many
    earlier sessions are replayed because they failed, changed or were cut off, and rows of
    sessions outside this selection (kept in the file)."""

    kept: dict[str, list[dict[str, Any]]]
    todo: list[Session]
    redone: int = 0
    other: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


class FactsRun:
    """One facts run of a system and model over selected sessions into one results file."""

    def __init__(self, sessions: Sequence[Session], out: str | os.PathLike, opts: RunOptions,
                 system_cls: Optional[type], all_ids: Sequence[str] = ()):
        self.sessions = list(sessions)
        self.order = list(all_ids) or [s.session_id for s in self.sessions]
        self.out = Path(out)
        self.opts = opts
        self.system_cls = system_cls
        self.plan: Optional[Plan] = None
        self.fresh: dict[str, list[dict[str, Any]]] = {}
        self.failed: dict[str, str] = {}

    def prepare(self) -> Plan:
        """Read what an earlier run left: finished sessions whose fingerprint still matches are kept;
        failed, stale or unfinished ones are redone, and so are sessions holding a routing answer that
        named no topic (:meth:`_Replay.ask_route` took those answers out of the cache, so a rerun asks
        again). Refuses a file of another model or system."""
        truncate_partial_line(self.out)
        by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
        finished: dict[str, SessionRow] = {}
        unrouted: set[str] = set()
        if self.out.exists():
            for _, row in read_rows(self.out):
                if isinstance(row, SessionRow):
                    if (row.model or "") != self.opts.model or (row.system or "") != self.opts.system_name:
                        raise UsageError(
                            f"{self.out}: holds results of model {row.model!r} with system {row.system!r}, not of this "
                            f"run (model {self.opts.model!r}, system {self.opts.system_name!r}): choose another --out")
                    finished[row.session_id] = row
                if isinstance(row, RouteRow) and row.failed:
                    unrouted.add(row.session_id)
                if not isinstance(row, ErrorRow):
                    by_session[row.session_id].append(row_dict(row))
        want = {s.session_id: s for s in self.sessions}
        kept: dict[str, list[dict[str, Any]]] = {}
        other: dict[str, list[dict[str, Any]]] = {}
        redone = 0
        for sid, rows in by_session.items():
            row = finished.get(sid)
            if row is None or sid in unrouted:  # unfinished, or a routing answer given up on: asked again
                redone += 1
                continue
            if sid in want:
                if row.fingerprint != session_fingerprint(want[sid], self.opts):
                    redone += 1
                    continue
                kept[sid] = rows
            else:
                other[sid] = rows
        todo = [s for s in self.sessions if s.session_id not in kept]
        self.plan = Plan(kept, todo, redone, other)
        self._rewrite()
        return self.plan

    async def run(self, llm: LLM) -> None:
        """Replay every remaining session, :data:`~..llm.client.SESSIONS_PER_SLOT` sessions per
        allowed concurrent request at once, in order (the client bounds the calls): each session's
        rows are written when it ends, so Ctrl-C keeps every finished one. With every session in
        flight at once they all ended together, at the end, and an interrupted run kept none."""
        plan = self._need_plan()
        bar = progress(total=len(plan.todo), desc="facts", unit="session")
        in_flight = asyncio.Semaphore(max(1, llm.concurrency * SESSIONS_PER_SLOT))
        with JsonlAppender(self.out) as out:

            async def one(s: Session) -> None:
                try:
                    async with in_flight:
                        rows = await replay_session(s, llm, self.system_cls, self.opts)
                except (ModelCallError, SystemFailure) as exc:  # the session's error row; the run goes on
                    self.failed[s.session_id] = str(exc)
                    rows = [row_dict(ErrorRow(session_id=s.session_id, problem=str(exc)))]
                out.append_many(rows)
                self.fresh[s.session_id] = rows
                bar.update(1)

            try:
                await asyncio.gather(*(one(s) for s in plan.todo))
            finally:
                bar.close()

    def unrouted(self) -> int:
        """Sessions of this run holding a routing answer that named no topic (a rerun asks again)."""
        return sum(map(_unrouted, self.fresh.values()))

    def finished(self) -> int:
        """Selected sessions whose rows the file holds and a rerun keeps: kept from earlier runs, or
        replayed now, neither failed nor holding a routing answer that named no topic."""
        now = sum(1 for sid, rows in self.fresh.items() if sid not in self.failed and not _unrouted(rows))
        return len(self._need_plan().kept) + now

    def finish(self) -> list[dict[str, Any]]:
        """Rewrite the file in data order; returns the rows of the selected sessions."""
        self._rewrite()
        plan = self._need_plan()
        rows: list[dict[str, Any]] = []
        for s in self.sessions:
            rows.extend(self.fresh.get(s.session_id) or plan.kept.get(s.session_id) or [])
        return rows

    def _rewrite(self) -> None:
        plan = self._need_plan()
        merged = {**plan.other, **plan.kept, **self.fresh}
        order = self.order + sorted(set(merged) - set(self.order))
        write_jsonl(self.out, [row for sid in order for row in merged.get(sid, [])])

    def _need_plan(self) -> Plan:
        if self.plan is None:
            raise RuntimeError("call prepare() first")
        return self.plan
