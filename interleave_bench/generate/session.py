"""One session from its parts: identity (id, language, split), plan, messages and reading.

:func:`offline_session` and :func:`model_session_record` run the whole pipeline for one session
index; both are deterministic functions of (options, seed, index) plus, on the model path, the
model's (cached) answers. They return the session as plain JSON data in the canonical form the
generator writes: declared fields in schema order, ``facts[].update`` always present (null when the
fact never changes), ``twinOf``, ``fact`` and ``judge.candidates`` only where they apply.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ..errors import InterleaveError
from ..llm import LLM
from ..schema import CONFIG_VERSIONS, FACT_MISS_TAG, Session, check_session
from .facts import FactOptions, build_probes, build_timeline, first_turns, lay_facts
from .model_writer import write_v1_with_model, write_with_model
from .offline_writer import Written, write_offline
from .plan import PlanOptions, PlanRow, derive_seed, draw_shape, plan_session
from .reader import Label, RuleReader, read_with_model
from .threads import ThreadSet, model_threads, offline_threads, render_persona, thread_data

#: every TEST_EVERY-th session (index % TEST_EVERY == TEST_EVERY - 1) is in the ``test`` split
TEST_EVERY = 5
#: the session ``version`` of each dataset config this generator writes
VERSIONS = {config: CONFIG_VERSIONS[config] for config in ("v0", "v1")}
#: the session version that carries replies, fact episodes, a timeline and probes
V1 = VERSIONS["v1"]


@dataclass(frozen=True)
class SessionIdentity:
    index: int
    session_id: str
    lang: str
    split: str


def identity(index: int, langs: tuple[str, ...]) -> SessionIdentity:
    """Session ``index`` (0-based): language by index across ``langs``, id ``<lang>-<index+1:04d>``."""
    lang = langs[index % len(langs)]
    split = "test" if index % TEST_EVERY == TEST_EVERY - 1 else "dev"
    return SessionIdentity(index, f"{lang}-{index + 1:04d}", lang, split)


def index_of(session_id: str) -> int | None:
    """The index a session id encodes (``en-0003`` -> 2), or None for an id of another form."""
    _, sep, num = session_id.rpartition("-")
    return int(num) - 1 if sep and num.isdigit() and int(num) >= 1 else None


@dataclass(frozen=True)
class FactParts:
    """What v1 adds to a session: the facts' types and the seed of its probes."""

    fact_types: dict[str, dict[str, str]]
    probe_seed: int


def assemble(
    ident: SessionIdentity,
    version: str,
    threadset: ThreadSet,
    rows: list[PlanRow],
    written: list[Written],
    labels: list[Label],
    v1: FactParts | None = None,
) -> dict[str, Any]:
    """The session record as JSON data, validated against the schema and its cross-field checks.

    With ``v1`` the turns carry their replies (``assistant``) and fact steps with values, a step a
    writer missed tags its turn ``fact-miss`` and takes its fact out of the probes, and the session
    gets ``fact_types``, ``timeline`` and ``probes``.
    """
    missed = {(r.thread, r.fact.key) for r, w in zip(rows, written) if w.miss and r.fact is not None and r.thread}
    turns = []
    for row, w, label in zip(rows, written, labels, strict=True):
        tags = list(row.tags) + (["leak"] if w.leak else []) + ([FACT_MISS_TAG] if v1 and w.miss and row.fact else [])
        turn: dict[str, Any] = {
            "i": row.i,
            "text": w.text,
            "gold": {"thread": row.thread, "action": row.action, "refs": list(row.refs)},
            "style": row.style,
            "tags": tags,
        }
        if row.fact is not None:
            turn["fact"] = {"key": row.fact.key, "kind": row.fact.kind}
            if v1 is not None:
                turn["fact"]["value"] = row.fact.value
        turn["judge"] = label.judge()
        turn["ambiguous"] = not label.agrees_with(row.thread)
        if v1 is not None:
            turn["assistant"] = w.assistant or ""
        turns.append(turn)
    threads = [thread_data(t) for t in threadset.threads]
    data = {
        "session_id": ident.session_id,
        "version": version,
        "split": ident.split,
        "lang": ident.lang,
        "persona": threadset.persona,
        "threads": threads,
        "turns": turns,
    }
    if v1 is not None:
        timeline = build_timeline(rows, missed)
        data["fact_types"] = v1.fact_types
        data["timeline"] = timeline
        data["probes"] = build_probes(ident.session_id, ident.lang, threadset.threads, first_turns(rows), timeline,
                                      len(rows), v1.probe_seed)
    session = Session.model_validate(data)
    problems = check_session(session)
    if problems:  # a generator bug, never bad input: say exactly where
        field, msg = problems[0]
        raise InterleaveError(f"generated session {ident.session_id} is invalid: {field}: {msg}")
    return session.dump()


def v1_rows(rows: list[PlanRow], threadset: ThreadSet, seed: int, index: int,
            facts: FactOptions | None = None) -> tuple[list[PlanRow], FactParts]:
    """The plan rows with the v1 fact episodes laid over them, and the session's v1 parts."""
    laid, types = lay_facts(rows, threadset.threads, derive_seed(seed, index, "facts"), facts)
    return laid, FactParts(types, derive_seed(seed, index, "probes"))


def offline_session(ident: SessionIdentity, seed: int, plan: PlanOptions, version: str,
                    facts: FactOptions | None = None) -> dict[str, Any]:
    """One session from the domain packs, the plan, the offline writer and the rule reader."""
    v1 = version == V1
    shape = draw_shape(derive_seed(seed, ident.index, "shape"), plan)
    threadset = offline_threads(shape, ident.lang, random.Random(derive_seed(seed, ident.index, "threads")), alternatives=v1)
    rows = plan_session(threadset.threads, shape.n_turns, derive_seed(seed, ident.index, "plan"), plan)
    parts = None
    reply_rng = None
    if v1:
        rows, parts = v1_rows(rows, threadset, seed, ident.index, facts)
        reply_rng = random.Random(derive_seed(seed, ident.index, "reply"))
    written = write_offline(rows, threadset, ident.lang, random.Random(derive_seed(seed, ident.index, "write")), reply_rng)
    labels = RuleReader(threadset.threads, ident.lang).read_all(w.text for w in written)
    return assemble(ident, version, threadset, rows, written, labels, parts)


async def model_session_record(llm: LLM, ident: SessionIdentity, seed: int, plan: PlanOptions, version: str,
                               facts: FactOptions | None = None) -> dict[str, Any]:
    """One session through the model path: threads, writer, leak rewrites, reading.

    Raises :class:`~interleave_bench.generate.ask.SessionFailed` when a step's answers stay unusable.
    """
    v1 = version == V1
    shape = draw_shape(derive_seed(seed, ident.index, "shape"), plan)
    hint = render_persona(ident.lang, random.Random(derive_seed(seed, ident.index, "persona")))
    threadset = await model_threads(llm, ident.session_id, ident.lang, shape, hint, alternatives=v1)
    rows = plan_session(threadset.threads, shape.n_turns, derive_seed(seed, ident.index, "plan"), plan)
    parts = None
    if v1:
        rows, parts = v1_rows(rows, threadset, seed, ident.index, facts)
        written = await write_v1_with_model(llm, ident.session_id, ident.lang, threadset, rows)
    else:
        written = await write_with_model(llm, ident.session_id, ident.lang, threadset, rows)
    labels = await read_with_model(llm, ident.session_id, ident.lang, threadset, [w.text for w in written])
    return assemble(ident, version, threadset, rows, written, labels, parts)
