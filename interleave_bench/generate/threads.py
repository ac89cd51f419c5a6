"""A session's persona and threads: from the offline domain packs, or written by a model.

Both paths fill the same :class:`~interleave_bench.generate.plan.SessionShape`: one thread per
domain slot (ids ``t1``, ``t2``... in start order), three concrete facts each, the facts the shape
marks getting a later ``update``, and the twin (if any) sharing its original's domain with
``twinOf`` set. Titles and fact values of a session never contain one another, so a cue or a title
points to exactly one thread.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..llm import LLM
from ..schema import Fact, Thread
from . import packs
from .ask import ask_json
from .plan import SessionShape
from .prompts import threads_messages, threads_v1_messages
from .text import AnswerError, language_problem, overlapping

#: constraints drawn per offline thread (each variant has at least this many)
CONSTRAINTS_PER_THREAD = 2
#: redraws of a session's values before giving up on making every anchor distinct
MAX_DRAWS = 200
#: temperature of the threads request: varied content across sessions
THREADS_TEMPERATURE = 0.9
#: output budget of the threads request (six threads with facts fit well inside)
THREADS_MAX_TOKENS = 3000
#: longest title the model may give: a title is a name, not a sentence
MAX_TITLE_CHARS = 80


@dataclass
class ThreadSet:
    """A session's persona and threads; ``keywords`` are the offline variants' distinctive words."""

    persona: str
    threads: list[Thread]
    keywords: dict[str, tuple[str, ...]] = field(default_factory=dict)


def thread_data(t: Thread, twin_key: str | None = "twinOf") -> dict[str, Any]:
    """A thread as plain JSON data in schema order, ``facts[].update`` always present; the twin, if
    any, goes under ``twin_key`` (``twinOf`` in a session record, ``twin_of`` in the writer's
    cards) or is left out with ``None`` (the reader must not be told)."""
    data: dict[str, Any] = {
        "id": t.id, "title": t.title, "domain": t.domain, "goal": t.goal, "description": t.description,
        "facts": [_fact_data(f) for f in t.facts],
        "constraints": list(t.constraints),
    }
    if t.twinOf and twin_key is not None:
        data[twin_key] = t.twinOf
    return data


def _fact_data(f: Fact) -> dict[str, Any]:
    """A fact in schema order; ``alternative`` only where it was set (v1 facts, null included)."""
    data: dict[str, Any] = {"key": f.key, "value": f.value, "update": f.update}
    if "alternative" in f.model_fields_set:
        data["alternative"] = f.alternative
    return data


def thread_id(k: int) -> str:
    return f"t{k + 1}"


def twin_map(shape: SessionShape) -> dict[int, int]:
    """``{twin index: original index}`` (empty without a twin)."""
    return {shape.twin: shape.twin_of} if shape.twin is not None and shape.twin_of is not None else {}


def anchors(threads: list[Thread]) -> list[tuple[str, str]]:
    """Every ``(thread id, text)`` that points to one thread: titles, values, updates, alternatives."""
    out = []
    for t in threads:
        out.append((t.id, t.title))
        for f in t.facts:
            out.append((t.id, f.value))
            if f.update:
                out.append((t.id, f.update))
            if f.alternative:
                out.append((t.id, f.alternative))
    return out


def anchor_clashes(threads: list[Thread]) -> list[str]:
    """Pairs of anchors where one contains the other (a message naming one would name both)."""
    items = anchors(threads)
    out = []
    for a in range(len(items)):
        for b in range(a + 1, len(items)):
            if overlapping(items[a][1], items[b][1]):
                out.append(f"{items[a][1]!r} and {items[b][1]!r} contain one another")
    return out


# --- offline --------------------------------------------------------------------------------------


def render_persona(lang: str, rng: random.Random) -> str:
    pools = packs.personas(lang)
    frame = rng.choice(pools["frames"])
    slots = {k: rng.choice(v) for k, v in pools.items() if k != "frames"}
    return frame.format(**slots)


def build_offline_threads(
    domains: list[str] | tuple[str, ...],
    twins: dict[int, int],
    updates: tuple[tuple[bool, ...], ...] | list[list[bool]],
    lang: str,
    rng: random.Random,
    *,
    persona_hint: str | None = None,
    alternatives: bool = False,
) -> ThreadSet:
    """Threads for the given domains from the domain packs (and a persona).

    ``twins`` maps a twin's index to its original's; ``updates[k][j]`` says whether fact j of thread
    k gets an update. A twin uses a different variant of its domain. Values are drawn so no anchor
    of the session contains another. With ``alternatives`` (v1) every fact also gets an
    ``alternative`` from its slot (null when the slot has no unused value left). Raises
    :class:`InputError` for a domain without a pack.
    """
    persona = persona_hint or render_persona(lang, rng)
    chosen: list[packs.Variant] = []
    used: dict[str, set[str]] = {}
    for k, d in enumerate(domains):
        pack = packs.domain_pack(d, lang)
        options = [v for v in pack.variants if v.title not in used.get(d, set())] or list(pack.variants)
        v = rng.choice(options)
        used.setdefault(d, set()).add(v.title)
        chosen.append(v)
    for _ in range(MAX_DRAWS):
        threads = []
        taken: set[str] = set()
        for k, v in enumerate(chosen):
            n_facts = len(updates[k])
            slots = sorted(rng.sample(range(len(v.facts)), min(n_facts, len(v.facts))))
            facts = []
            for j, s_idx in enumerate(slots):
                slot = v.facts[s_idx]
                pool = [x for x in slot.values if x not in taken]
                value = rng.choice(pool) if pool else rng.choice(slot.values)
                taken.add(value)
                update = None
                if updates[k][j]:
                    rest = [x for x in slot.values if x not in taken]
                    if rest:
                        update = rng.choice(rest)
                        taken.add(update)
                if alternatives:
                    rest = [x for x in slot.values if x not in taken]
                    alternative = rng.choice(rest) if rest else None
                    if alternative is not None:
                        taken.add(alternative)
                    facts.append(Fact(key=slot.key, value=value, update=update, alternative=alternative))
                    continue
                facts.append(Fact(key=slot.key, value=value, update=update))
            threads.append(
                Thread(
                    id=thread_id(k),
                    title=v.title,
                    domain=v.domain,
                    goal=v.goal,
                    description=v.description,
                    facts=facts,
                    constraints=sorted(rng.sample(list(v.constraints), CONSTRAINTS_PER_THREAD), key=v.constraints.index),
                    twinOf=thread_id(twins[k]) if k in twins else None,
                )
            )
        if not anchor_clashes(threads):
            break
    keywords = {thread_id(k): v.keywords for k, v in enumerate(chosen)}
    return ThreadSet(persona, threads, keywords)


def offline_threads(shape: SessionShape, lang: str, rng: random.Random, *, alternatives: bool = False) -> ThreadSet:
    """The offline threads of a session shape (v1: with ``alternative`` values)."""
    return build_offline_threads(shape.domains, twin_map(shape), shape.updates, lang, rng, alternatives=alternatives)


# --- model ----------------------------------------------------------------------------------------


def threads_payload(session_id: str, lang: str, shape: SessionShape, persona_hint: str,
                    alternatives: bool = False) -> dict[str, Any]:
    """The specification the model fills in (also what the fake model reads back); v1 asks for an
    ``alternative`` per fact."""
    twins = twin_map(shape)
    spec = []
    for k, d in enumerate(shape.domains):
        entry: dict[str, Any] = {"id": thread_id(k), "domain": d, "about": _about(d, lang)}
        if k in twins:
            entry["twin_of"] = thread_id(twins[k])
        entry["updates"] = list(shape.updates[k])
        spec.append(entry)
    out = {"session": session_id, "language": lang, "persona_hint": persona_hint, "threads": spec}
    if alternatives:
        out["alternatives"] = True
    return out


def _about(domain: str, lang: str) -> str:
    try:
        return packs.domain_pack(domain, lang).about
    except InputError:  # a custom domain has no pack: its name is all the model gets
        return domain


def check_threads_answer(obj: dict[str, Any], payload: dict[str, Any], lang: str) -> ThreadSet:
    """The model's threads as records, or :class:`AnswerError` listing everything wrong."""
    problems: list[str] = []
    persona = obj.get("persona")
    if not isinstance(persona, str) or not persona.strip():
        problems.append('"persona" must be a non-empty string')
    got = obj.get("threads")
    spec = payload["threads"]
    if not isinstance(got, list):
        raise AnswerError(problems + ['"threads" must be a list'])
    by_id = {t["id"]: t for t in got if isinstance(t, dict) and isinstance(t.get("id"), str)}
    if len(got) != len(spec) or set(by_id) != {s["id"] for s in spec}:
        problems.append(f'"threads" must have exactly the ids {", ".join(s["id"] for s in spec)}')
        raise AnswerError(problems)
    threads: list[Thread] = []
    titles: list[str] = []
    for s in spec:
        t = by_id[s["id"]]
        tid = s["id"]
        title = t.get("title")
        if not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE_CHARS:
            problems.append(f"{tid}: title must be a non-empty string of at most {MAX_TITLE_CHARS} characters")
            title = str(title or "")
        elif (lp := language_problem(f"{title} {t.get('description') or ''}", lang)) is not None:
            problems.append(f"{tid}: title and description are {lp}")
        if title.strip().casefold() in (x.casefold() for x in titles):
            problems.append(f"{tid}: title {title!r} repeats another thread's title")
        titles.append(title.strip())
        for f in ("goal", "description"):
            if not isinstance(t.get(f), str):
                problems.append(f"{tid}: {f} must be a string")
        facts_in = t.get("facts")
        want = len(s["updates"])
        facts: list[Fact] = []
        if not isinstance(facts_in, list) or len(facts_in) != want:
            problems.append(f"{tid}: facts must be a list of exactly {want}")
        else:
            keys = set()
            for j, (f, needs_update) in enumerate(zip(facts_in, s["updates"])):
                if not isinstance(f, dict) or not all(isinstance(f.get(x), str) and f.get(x).strip() for x in ("key", "value")):
                    problems.append(f"{tid}: facts[{j}] needs a non-empty key and value")
                    continue
                if f["key"] in keys:
                    problems.append(f"{tid}: fact key {f['key']!r} repeats")
                keys.add(f["key"])
                update = f.get("update")
                if needs_update:
                    if not isinstance(update, str) or not update.strip() or update.strip() == f["value"].strip():
                        problems.append(f"{tid}: facts[{j}] needs an update different from its value")
                        update = None
                else:
                    update = None  # only the facts the plan will change carry an update
                fact = Fact(key=f["key"].strip(), value=f["value"].strip(), update=update.strip() if update else None)
                if payload.get("alternatives"):
                    alt = f.get("alternative")
                    if alt is not None and (not isinstance(alt, str) or not alt.strip()
                                            or alt.strip() in (fact.value, fact.update)):
                        problems.append(f"{tid}: facts[{j}] needs an alternative different from its value and update, or null")
                        alt = None
                    fact.alternative = alt.strip() if alt else None
                facts.append(fact)
        cons = t.get("constraints")
        if not isinstance(cons, list) or not all(isinstance(c, str) for c in cons):
            problems.append(f"{tid}: constraints must be a list of strings")
            cons = []
        threads.append(
            Thread(
                id=tid,
                title=title.strip(),
                domain=s["domain"],
                goal=str(t.get("goal") or "").strip(),
                description=str(t.get("description") or "").strip(),
                facts=facts,
                constraints=[c.strip() for c in cons if c.strip()],
                twinOf=s.get("twin_of"),
            )
        )
    if not problems:
        problems += anchor_clashes(threads)[:3]
    if problems:
        raise AnswerError(problems)
    return ThreadSet(persona.strip(), threads)


async def model_threads(llm: LLM, session_id: str, lang: str, shape: SessionShape, persona_hint: str,
                        *, alternatives: bool = False) -> ThreadSet:
    """The model's persona and threads for a shape (v1: with alternatives); raises
    :class:`SessionFailed` if it cannot."""
    payload = threads_payload(session_id, lang, shape, persona_hint, alternatives)
    n_facts = len(shape.updates[0]) if shape.updates else 0
    ask = threads_v1_messages if alternatives else threads_messages
    return await ask_json(
        llm, "threads", ask(lang, payload, n_facts),
        lambda obj: check_threads_answer(obj, payload, lang),
        lang=lang, stage="threads", what=f"{session_id} threads",
        temperature=THREADS_TEMPERATURE, max_tokens=THREADS_MAX_TOKENS,
    )
