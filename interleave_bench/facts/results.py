"""Reading a facts results file and scoring it: rows -> judged items -> the figures and gates.

One implementation for ``interleave-bench score-facts``, the facts run's own summary and the
``interleave_shared_facts`` evaluate module. Rows are read strictly (:func:`~..strictjson.parse_strict`
and the typed rows of :mod:`.records`). An answer row without a verdict is judged again from its
``answer`` and probe fields (``gold``, ``decoys``, ``confirmed``); given the data, every answer is
judged again from its text and the session's probe, and every delivered line from the session's
timeline (:func:`rejudge`), and a verdict that disagrees is refused. No model is ever called.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, Optional, Sequence

from pydantic import Field

from ..documents import FACTS_SUMMARY_KIND, document_head_of
from ..errors import InputError, InputErrors, shown
from ..file_kinds import refuse_document
from ..io import iter_json_lines, parse_record
from ..schema import Probe, Record, Session
from ..strictjson import parse_strict
from .metrics import (
    CONFIRMED,
    AnswerItem,
    DeliveryItem,
    RouteItem,
    SessionItem,
    decoy_said,
    delivery_verdict,
    judge,
    score_facts,
)
from .records import (
    ROW_TYPES,
    AnswerRow,
    DeliveryRow,
    ErrorRow,
    RouteRow,
    SessionRow,
    fact_histories,
    probes_of,
    row_identity,
)

#: version of the facts summary document; bumped when its layout changes
SUMMARY_FORMAT = 1


def parse_row(path: str, line: Optional[int], text_or_obj: Any) -> Record:
    """One result row, typed by its ``kind``; raises :class:`InputError` naming file, line and field."""
    obj = parse_strict(path, line, text_or_obj) if isinstance(text_or_obj, str) else text_or_obj
    if not isinstance(obj, dict):
        raise InputError(path, line, None, f"expected a JSON object, got {type(obj).__name__}")
    kind = obj.get("kind")
    model = ROW_TYPES.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise InputError(path, line, "kind", f"expected one of {', '.join(ROW_TYPES)}, got {shown(kind, SHOWN_CHARS)}")
    return parse_record(path, line, obj, model)


#: characters of an unknown ``kind`` an error shows
SHOWN_CHARS = 40


def read_rows(path: str | os.PathLike, *, require_rows: bool = False) -> list[tuple[int, Record]]:
    """Every row of a results file with its line number; raises on the first bad line, on a second
    row of what a file holds one row of (:func:`refuse_repeated_rows`), and with ``require_rows``
    for a file with no rows (a file given to be scored: nothing to score is not a score of nothing;
    a run resuming its own file may find it empty). A JSON document (its summary, a score file) is
    refused in one line naming what it is (:func:`~interleave_bench.file_kinds.refuse_document`)."""
    refuse_document(path, "facts results")
    rows = [(line, parse_row(str(path), line, text)) for line, text in iter_json_lines(path)]
    if require_rows and not rows:
        raise InputError(str(path), None, None, "holds no result rows")
    return refuse_repeated_rows(rows, str(path))


def parse_lines(lines: Iterable[Any], path: str = "<rows>") -> list[tuple[int, Record]]:
    """Rows given as JSON texts or objects (the evaluate module's input), numbered from 1, read as
    :func:`read_rows` reads a file's."""
    return refuse_repeated_rows([(n, parse_row(path, n, x)) for n, x in enumerate(lines, start=1)], path)


def refuse_repeated_rows(rows: list[tuple[int, Record]], path: str) -> list[tuple[int, Record]]:
    """``rows`` unchanged; raises :class:`InputErrors` naming every row of an identity an earlier
    row already has (:func:`~.records.row_identity`: an answer to a probe its strategy already
    answered, a second route row of one probe or sampled turn, a second session row of a session)
    and the line of the first: each counts once, so a repeated row would be counted twice in every
    figure (a session row's tokens, a route row's routing). Every reader of results rows
    (``score-facts``, a facts run resuming its file, the board, the evaluate module) reads them
    through here; a run never writes one (a redone session's rows replace its earlier ones)."""
    first: dict[tuple[str, str], int] = {}
    problems: list[InputError] = []
    for line, r in rows:
        identity = row_identity(r)
        if identity is None:
            continue
        if identity in first:
            field, words = identity
            problems.append(InputError(path, line, field, f"second {words} (first on line {first[identity]}); remove it"))
        else:
            first[identity] = line
    if problems:
        raise InputErrors(problems)
    return rows


def _answer_item(path: str, line: int, r: AnswerRow) -> AnswerItem:
    verdict = r.verdict
    if verdict is None:
        if r.answer is None:
            raise InputError(path, line, "answer", "an answer row needs a verdict, or an answer to judge")
        if r.confirmed is None and decoy_said(r.answer, r.gold, r.decoys) is not None:
            raise InputError(path, line, "confirmed",
                             "the answer says a decoy: judging stale vs proposal needs the confirmed values (or a verdict)")
        verdict = judge(r.answer, r.gold, r.decoys, r.confirmed or []).verdict
    return AnswerItem(r.session_id, r.probe, r.strategy, r.category, r.lang, verdict, r.context_tokens, r.notes_chars)


def items_of(rows: Iterable[tuple[int, Record]], path: str = "<rows>") -> dict[str, list]:
    """The scorer's inputs from typed rows: ``answers``, ``deliveries``, ``routes``, ``sessions``, ``errors``.

    An error row counts only while its session has no session row (a later rerun finished it).
    """
    out: dict[str, list] = {"answers": [], "deliveries": [], "routes": [], "sessions": [], "errors": []}
    errors: list[tuple[str, str]] = []
    problems: list[InputError] = []
    for line, r in rows:
        try:
            if isinstance(r, AnswerRow):
                out["answers"].append(_answer_item(path, line, r))
            elif isinstance(r, DeliveryRow):
                out["deliveries"].append(DeliveryItem(r.session_id, r.probe, r.verdict))
            elif isinstance(r, RouteRow):
                out["routes"].append(RouteItem(r.session_id, r.turn, r.gold, r.without, r.with_, r.offered,
                                               r.import_count, r.failed))
            elif isinstance(r, SessionRow):
                usage = {purpose: u if isinstance(u, dict) else {"tokens": u} for purpose, u in r.usage.items()}
                ids, count = (tuple(r.probes), None) if isinstance(r.probes, list) else ((), r.probes)
                out["sessions"].append(SessionItem(r.session_id, ids, tuple(r.strategies), usage, count))
            elif isinstance(r, ErrorRow):
                errors.append((r.session_id, f"{r.step}: {r.problem}" if r.step else r.problem))
        except InputError as exc:
            problems.append(exc)
    if problems:
        raise InputErrors(problems)
    finished = {s.session_id for s in out["sessions"]}
    out["errors"] = [f"{sid}: {problem}" for sid, problem in errors if sid not in finished]
    return out


def confirmed_values(s: Session, p: Probe) -> list[str]:
    """Every value the probed fact was confirmed as at or before the probe (what tells a stale
    answer from a proposal), from the session's timeline."""
    history = fact_histories(s, p.after).get(p.source, {}).get(p.key, [])
    return [v for status, v in history if status == CONFIRMED and v is not None]


def route_problem(path: str, line: int, row: RouteRow, s: Session, probes: Mapping[str, Probe],
                  data: str) -> Optional[InputError]:
    """What is wrong with a route row's ``gold`` against its session ``s`` in ``data`` (``probes``:
    the session's, by id), or None. The gold is what a facts run derives it from: for a probe's
    route, the probe's asking topic; for a sampled turn's (no probe), the topic of the turn routed,
    the one after ``turn`` (``turn`` is the turn the request follows, as a probe's is its ``after``)."""
    if row.probe is not None:
        p = probes.get(row.probe) if isinstance(row.probe, str) else None
        if p is None:
            return InputError(path, line, "probe", f"{row.probe!r} is not a probe of session {s.session_id!r} in {data}")
        gold, where = p.thread, f"probe {p.id!r}"
    else:
        turn = next((t for t in s.turns if t.i == row.turn + 1), None)
        if turn is None or turn.gold.thread is None:
            return InputError(path, line, "turn", f"turn {row.turn + 1} (the one after it) of session {s.session_id!r} "
                              f"in {data} is {'missing' if turn is None else 'a one-off'}: no run routes it")
        gold, where = turn.gold.thread, f"turn {turn.i}"
    if row.gold != gold:
        return InputError(path, line, "gold", f"says {row.gold!r}, but the topic of {where} of session {s.session_id!r} "
                          f"in {data} is {gold!r}")
    return None


def delivery_problem(path: str, line: int, row: DeliveryRow, s: Session, probes: Mapping[str, Probe],
                     data: str) -> Optional[InputError]:
    """What is wrong with a delivery row's ``verdict`` against its session ``s`` in ``data``
    (``probes``: the session's, by id), or None. The verdict is what a facts run gives the delivered
    line: :func:`~.metrics.delivery_verdict` of its ``source``, ``key`` and ``value`` against the
    source's timeline up to the probe's ``after``; a line without a value is a withdrawal notice."""
    p = probes.get(row.probe)
    if p is None:
        return InputError(path, line, "probe", f"{row.probe!r} is not a probe of session {s.session_id!r} in {data}")
    judged = delivery_verdict(row.source, row.key, row.value, fact_histories(s, p.after))
    if row.verdict == judged:
        return None
    named = f"{row.source}/{row.key}" if row.source and row.key else "(without a source and key)"
    said = repr(row.value) if row.value is not None else "without a value (a withdrawal notice)"
    return InputError(path, line, "verdict", f"says {row.verdict!r}, but the line {named} {said} judged against "
                      f"the timeline of session {s.session_id!r} up to turn {p.after} (probe {p.id!r}) in {data} "
                      f"is {judged!r}")


def rejudge(rows: Sequence[tuple[int, Record]], sessions: Mapping[str, Session], path: str,
            data: str) -> list[tuple[int, Record]]:
    """The rows with every answer judged again from its text and the session's probe in ``data``;
    raises :class:`InputErrors` naming each row whose session is not in the data, each answer
    row whose verdict disagrees with the judge, whose probe is not in the data, or which has no
    text to judge, each delivery row whose verdict is not the one its line gets against the
    session's timeline, or whose probe is not in the data (:func:`delivery_problem`), and each
    route row whose ``gold`` is not the topic the data gives it, or whose probe or turn is not in
    the data (:func:`route_problem`)."""
    by_session = {sid: {p.id: p for p in probes_of(s)} for sid, s in sessions.items()}
    out: list[tuple[int, Record]] = []
    problems: list[InputError] = []
    for line, r in rows:
        if r.session_id not in sessions:
            problems.append(InputError(path, line, "session_id", f"{r.session_id!r} is not a session of {data}"))
            continue
        if isinstance(r, (RouteRow, DeliveryRow)):
            check = route_problem if isinstance(r, RouteRow) else delivery_problem
            problem = check(path, line, r, sessions[r.session_id], by_session[r.session_id], data)
            if problem is not None:
                problems.append(problem)
            else:
                out.append((line, r))
            continue
        if not isinstance(r, AnswerRow):
            out.append((line, r))
            continue
        p = by_session[r.session_id].get(r.probe)
        if p is None:
            problems.append(InputError(path, line, "probe", f"{r.probe!r} is not a probe of session {r.session_id!r} in {data}"))
            continue
        if r.answer is None:
            problems.append(InputError(path, line, "answer", "no answer text to judge against the probe in the data"))
            continue
        s = sessions[r.session_id]
        if r.category != p.category:
            problems.append(InputError(path, line, "category", f"says {r.category!r}, but probe {p.id!r} of the data "
                                       f"is {p.category!r}"))
            continue
        judged = judge(r.answer, p.gold, p.decoys, confirmed_values(s, p)).verdict
        if r.verdict is not None and r.verdict != judged:
            problems.append(InputError(path, line, "verdict", f"says {r.verdict!r}, but the answer judged against probe "
                                       f"{p.id!r} of the data is {judged!r}"))
            continue
        out.append((line, r.model_copy(update={"verdict": judged})))
    if problems:
        raise InputErrors(problems)
    return out


def split_of(rows: Iterable[tuple[int, Record]], sessions: Mapping[str, Session]) -> Optional[str]:
    """The split a run answered, from its rows' sessions in the data: ``dev`` or ``test`` when
    every one is of that split, ``all`` when both are there, None for no row (each row's session
    in ``sessions``: :func:`rejudge` refuses any other)."""
    splits = {sessions[r.session_id].split for _, r in rows}
    return next(iter(splits)) if len(splits) == 1 else ("all" if splits else None)


def score_rows(rows: Iterable[tuple[int, Record]], path: str = "<rows>") -> dict[str, Any]:
    """Every figure and gate of a facts run (see :func:`interleave_bench.facts.metrics.score_facts`)."""
    return score_facts(**items_of(rows, path))


def score_file(path: str | os.PathLike) -> dict[str, Any]:
    """:func:`score_rows` of a results file."""
    return score_rows(read_rows(path), str(path))


#: whether a file's first bytes are those of a facts summary (a JSON object of kind ``facts``):
#: what ``score-facts`` and ``facts`` may write over (:func:`~interleave_bench.errors.require_output`)
is_summary_head = document_head_of(FACTS_SUMMARY_KIND, field="kind")


class FactsSummary(Record):
    """The ``.score.json`` of a facts run: figures, gates and where they came from."""

    format: int = SUMMARY_FORMAT
    kind: str = FACTS_SUMMARY_KIND
    results: dict[str, Any] = Field(default_factory=dict)  # {path, sha256}
    data: Optional[dict[str, Any]] = None  # {path, sha256} when the run knows its data
    split: Optional[str] = None  # the split its rows' sessions are of (split_of), when the data is known
    system: Optional[str] = None
    model: Optional[str] = None
    passed: bool = False
    metrics: dict[str, Any] = Field(default_factory=dict)
    provenance: dict[str, Any] = Field(default_factory=dict)
