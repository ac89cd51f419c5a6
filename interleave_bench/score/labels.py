"""The routing metrics from plain per-session inputs: gold turns and predicted labels.

This is what the ``interleave_routing`` evaluate module computes with. It builds the same records
the CLI reads (a :class:`~interleave_bench.schema.Session` per session, a
:class:`~interleave_bench.schema.PredictionRow` per label) and scores them with the same
function, so for the same inputs the metrics equal those of ``interleave-bench score --json``.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import InputError
from ..schema import JUDGE_AMBIGUOUS, JUDGE_NONE, Session
from .rows import as_sessions
from .run import score_predictions

#: the language recorded for a session when none is given ("undetermined", ISO 639)
UNKNOWN_LANG = "und"
#: where an evaluate input's problems are said to be
SOURCE = "<references>"
#: a session must list at least one thread: one made only of one-offs lists this stand-in
PLACEHOLDER_THREAD = {"id": "(no thread)", "title": "", "domain": ""}


def _thread_ids_of(turns: Sequence[Mapping[str, Any]]) -> list[str]:
    """Thread ids named anywhere in the turns (gold, refs, the reading), in order of first mention."""
    seen: dict[str, None] = {}
    for t in turns:
        gold = t.get("gold") or {}
        judge = t.get("judge") or {}
        named = [gold.get("thread"), *(gold.get("refs") or []), judge.get("thread"), *(judge.get("candidates") or [])]
        for tid in named:
            if tid and tid not in (JUDGE_NONE, JUDGE_AMBIGUOUS):
                seen.setdefault(tid, None)
    return list(seen)


#: the keys of a turn as the evaluate module's features declare them (nested dicts: their keys)
TURN_KEYS = {"i": None, "text": None, "gold": ("thread", "action", "refs"), "style": None, "tags": None,
             "judge": ("thread", "candidates"), "ambiguous": None}


def complete_turn(t: Any) -> Any:
    """A turn with every declared key present (missing ones null), as ``evaluate`` needs to encode it.

    Anything that is not a dict is returned as is, for validation to report.
    """
    if not isinstance(t, Mapping):
        return t
    out: dict[str, Any] = {}
    for key, sub in TURN_KEYS.items():
        value = t.get(key)
        if sub is not None and isinstance(value, Mapping):
            value = {k: value.get(k) for k in sub}
        out[key] = value
    return out


def _turn(k: int, t: Mapping[str, Any]) -> dict[str, Any]:
    """A turn record from an evaluate input, filling what only breakdowns or lenient accuracy use.

    ``gold`` is required. Missing (or null) ``i`` means the turn's position, ``text`` is empty,
    ``style`` is ``oneoff`` for a one-off and ``explicit`` otherwise, ``tags`` empty, ``judge``
    ``none`` (no independent reading), ``ambiguous`` false.
    """
    if not isinstance(t, Mapping):
        raise InputError(SOURCE, None, f"turns[{k}]", f"expected an object, got {type(t).__name__}")
    gold = dict(t.get("gold") or {})
    if gold.get("refs") is None:
        gold["refs"] = []
    judge = dict(t.get("judge") or {"thread": "none"})
    if judge.get("candidates") is None:
        judge.pop("candidates", None)
    if judge.get("thread") is None:
        judge["thread"] = "none"
    style = t.get("style") or ("oneoff" if gold.get("thread") is None else "explicit")
    return {
        "i": k if t.get("i") is None else t["i"],
        "text": t.get("text") or "",
        "gold": gold,
        "style": style,
        "tags": list(t.get("tags") or []),
        "judge": judge,
        "ambiguous": bool(t.get("ambiguous") or False),
    }


def build_inputs(
    references: Sequence[Sequence[Mapping[str, Any]]],
    predictions: Sequence[Sequence[str | None]],
    *,
    mode: str = "closed",
    threads: Sequence[Sequence[str]] | None = None,
    session_ids: Sequence[str] | None = None,
    langs: Sequence[str] | None = None,
    predicted_refs: Sequence[Sequence[Sequence[str] | None]] | None = None,
    row_fields: Sequence[Sequence[Mapping[str, Any] | None]] | None = None,
) -> tuple[list[Session], list[dict[str, Any]]]:
    """Sessions and prediction rows from per-session gold turns and labels (``None`` = no row).

    ``threads`` gives each session's thread ids (default: those its turns name; give them when a
    thread has no message, for exactly the CLI's numbers). ``row_fields`` adds, per session and
    message, prediction-row fields such as ``usage``, ``elapsed_ms`` and ``via`` (the cost metrics'
    inputs, docs/score.md#input-tokens-per-message). Raises ``ValueError`` when lengths
    differ and :class:`~interleave_bench.errors.InputError` when a turn is not valid.
    """
    n = len(references)
    if len(predictions) != n:
        raise ValueError(f"{n} sessions of references but {len(predictions)} of predictions")
    for name, extra in (("threads", threads), ("session_ids", session_ids), ("langs", langs),
                        ("predicted_refs", predicted_refs), ("row_fields", row_fields)):
        if extra is not None and len(extra) != n:
            raise ValueError(f"{n} sessions of references but {len(extra)} of {name}")
    sessions: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for k, (turns, labels) in enumerate(zip(references, predictions)):
        if len(turns) != len(labels):
            raise ValueError(f"session {k}: {len(turns)} turns but {len(labels)} predicted labels")
        sid = session_ids[k] if session_ids is not None else f"session-{k:05d}"
        records = [_turn(j, t) for j, t in enumerate(turns)]
        ids = list(threads[k]) if threads is not None else _thread_ids_of(records)
        sessions.append({
            "session_id": sid,
            "version": "interleave-v0",
            "split": "dev",
            "lang": (langs[k] if langs is not None else None) or UNKNOWN_LANG,
            "threads": [{"id": tid, "title": tid, "domain": ""} for tid in ids] or [PLACEHOLDER_THREAD],
            "turns": records,
        })
        for j, label in enumerate(labels):
            if label is None:
                continue
            row: dict[str, Any] = {"session_id": sid, "i": records[j]["i"], "pred": label, "mode": mode}
            if predicted_refs is not None and predicted_refs[k] is not None and predicted_refs[k][j] is not None:
                row["refs"] = list(predicted_refs[k][j])
            if row_fields is not None and row_fields[k] is not None and row_fields[k][j] is not None:
                row.update(row_fields[k][j])
            rows.append(row)
    return as_sessions(sessions, SOURCE), rows


def score_labels(
    references: Sequence[Sequence[Mapping[str, Any]]],
    predictions: Sequence[Sequence[str | None]],
    *,
    mode: str = "closed",
    threads: Sequence[Sequence[str]] | None = None,
    session_ids: Sequence[str] | None = None,
    langs: Sequence[str] | None = None,
    predicted_refs: Sequence[Sequence[Sequence[str] | None]] | None = None,
    row_fields: Sequence[Sequence[Mapping[str, Any] | None]] | None = None,
    bootstrap: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """The score document for per-session gold turns and labels (see :func:`build_inputs`).

    Every session is scored (there is no split here); a session whose labels are all ``None`` has
    no rows and is left out, as the CLI leaves out a session without predictions.
    """
    sessions, rows = build_inputs(references, predictions, mode=mode, threads=threads, session_ids=session_ids,
                                  langs=langs, predicted_refs=predicted_refs, row_fields=row_fields)
    run = score_predictions(sessions, rows, system="evaluate", mode=mode, split="all", bootstrap=bootstrap,
                            seed=seed, source="<predictions>")
    return run.result
