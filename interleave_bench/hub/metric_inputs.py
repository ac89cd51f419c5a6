"""The evaluate modules' inputs as users hand them in, made plain: ``load_dataset`` rows included.

A split loaded with ``datasets.load_dataset`` gives ``ds["dev"]["turns"]`` as a ``Column`` of
sessions, each a list of turn rows whose ``gold.action`` and ``style`` are ``ClassLabel`` indices,
with ``extra`` cells and nested nulls (docs/hub.md#round-trip). :func:`session_turns` turns that,
or turns as the JSONL holds them, into plain turns through :func:`~.features.from_row`, the one
row-to-record conversion; :func:`check_sessions_form` says in one line when an input is not one
list per session (as when ``evaluate.combine`` hands a flat list to a per-session module).
:func:`score_labels` scores per-session gold turns and predicted labels with the CLI's scorer.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence

from ..errors import InputError
from ..schema import JUDGE_AMBIGUOUS, JUDGE_NONE, PredictionRow, Session
from ..score.rows import as_sessions
from ..score.run import score_predictions
from .features import TURN_V1, from_row

#: the prediction-row fields the cost metrics read, as the evaluate modules take them (one list
#: per session, one entry per message, None where a row has none)
COST_FIELDS = ("usage", "elapsed_ms", "via")


def plain(value: Any) -> Any:
    """A ``datasets`` ``Column`` (or any iterable but text and mappings) as a list, else ``value``."""
    if value is None or isinstance(value, (str, bytes, Mapping, list)):
        return value
    if isinstance(value, Iterable):
        return list(value)
    return value


def is_session_list(value: Any) -> bool:
    """True when ``value`` is one list (or sequence) per session, not one item per message."""
    value = plain(value)
    return isinstance(value, list) and all(isinstance(plain(v), list) for v in value)


def check_sessions_form(module: str, predictions: Any, references: Any) -> None:
    """Raise ``ValueError`` in one line unless both inputs hold one list per session."""
    for name, value in (("predictions", predictions), ("references", references)):
        if value is not None and not is_session_list(value):
            raise ValueError(
                f"{module}: {name} must hold one list per session (labels, or gold turns such as "
                f"load_dataset(...)['dev']['turns']); got {_kind(value)}: interleave_bcubed and "
                "interleave_mid_reply take one item per message"
            )


def _kind(value: Any) -> str:
    value = plain(value)
    if isinstance(value, list):
        first = next((plain(v) for v in value if not isinstance(plain(v), list)), None)
        return f"a list holding {type(first).__name__}" if value else "an empty list"
    return type(value).__name__


def plain_turn(turn: Any) -> Any:
    """One turn as plain JSON data: a ``load_dataset`` row decoded (labels by name, ``extra``
    merged), a JSONL turn kept as it is; anything that is not a mapping is left for the check."""
    if not isinstance(turn, Mapping):
        return turn
    if "extra" in turn or isinstance((turn.get("gold") or {}).get("action"), int) or isinstance(turn.get("style"), int):
        return from_row(dict(turn), TURN_V1)
    return turn


def session_turns(references: Any) -> Any:
    """Every session's turns made plain (:func:`plain_turn`); other shapes are handed on as they are."""
    references = plain(references)
    if not isinstance(references, list):
        return references
    return [[plain_turn(t) for t in plain(turns)] if isinstance(plain(turns), list) else turns
            for turns in references]


def thread_ids(threads: Any) -> Optional[list[list[str]]]:
    """Each session's thread ids, from ids or from thread rows (``ds["dev"]["threads"]``)."""
    threads = plain(threads)
    if threads is None:
        return None
    return [[t["id"] if isinstance(t, Mapping) else t for t in plain(ts)] for ts in threads]


def row_fields(n_sessions: int, **columns: Any) -> Optional[list[Optional[list[Optional[dict[str, Any]]]]]]:
    """Per session and message, the prediction-row fields given as one list per session each
    (``usage=``, ``elapsed_ms=``, ``via=``); None when none is given. Raises ``ValueError`` when a
    column has another number of sessions."""
    given = {name: plain(col) for name, col in columns.items() if col is not None}
    if not given:
        return None
    for name, col in given.items():
        if not is_session_list(col) or len(col) != n_sessions:
            raise ValueError(f"{name} must hold one list per session ({n_sessions}), one entry per message")
    out: list[Optional[list[Optional[dict[str, Any]]]]] = []
    for k in range(n_sessions):
        cols = {name: plain(col[k]) for name, col in given.items()}
        n = max(len(c) for c in cols.values())
        for name, c in cols.items():
            if len(c) != n:
                raise ValueError(f"session {k}: {name} has {len(c)} entries, other inputs {n}")
        rows: list[Optional[dict[str, Any]]] = []
        for j in range(n):
            fields = {name: c[j] for name, c in cols.items() if c[j] is not None}
            if "usage" in fields and isinstance(fields["usage"], Mapping):
                fields["usage"] = {key: v for key, v in fields["usage"].items() if v is not None}
            rows.append(fields or None)
        out.append(rows)
    return out



def turn_features() -> dict[str, Any]:
    """The ``datasets`` features of one gold turn as the per-session evaluate modules declare it."""
    from datasets import List, Value

    return {
        "i": Value("int64"),
        "text": Value("string"),
        "gold": {"thread": Value("string"), "action": Value("string"), "refs": List(Value("string"))},
        "style": Value("string"),
        "tags": List(Value("string")),
        "judge": {"thread": Value("string"), "candidates": List(Value("string"))},
        "ambiguous": Value("bool"),
    }


def session_features() -> Any:
    """The per-session inputs' features: one list of labels and one list of gold turns per session."""
    from datasets import Features, List, Value

    return Features({"predictions": List(Value("string")), "references": List(turn_features())})


def encodable_labels(predictions: Any) -> Any:
    """One list of labels per session (``datasets`` columns made lists), or one label per message;
    a label is text, and a number its text, as a prediction row reads it (open-mode systems
    elsewhere number their topics); ``None`` is a message without a row. Raises ``ValueError`` in
    one line naming a label that is none of these."""
    predictions = plain(predictions)
    if not isinstance(predictions, list):
        return predictions
    out: list[Any] = []
    for k, p in enumerate(map(plain, predictions)):
        out.append([_label(v, f"predictions[{k}][{j}]") for j, v in enumerate(p)] if isinstance(p, list)
                   else _label(p, f"predictions[{k}]"))
    return out


def _label(value: Any, where: str) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return PredictionRow.model_validate({"session_id": "s", "i": 0, "pred": value}).pred
    raise ValueError(f"{where}: a label is text, a number (read as its text) or None (no row), got "
                     f"{type(value).__name__} {value!r}")


def encodable_turns(references: Any) -> Any:
    """Every session's turns made plain and given every declared key (missing ones null), as
    ``evaluate`` needs to encode them: it encodes nested inputs only when every declared key is there."""
    turns = session_turns(references)
    if not isinstance(turns, list):
        return turns
    return [[complete_turn(t) for t in ts] if isinstance(ts, list) else ts for ts in turns]


def mid_reply_columns(running: Any, lang: Any, how: Any, tags: Any) -> dict[str, Any]:
    """The mid-reply module's optional columns made plain: ``running`` rows (``{topicId, ...}``) as
    their topic ids, ``how`` ``ClassLabel`` indices as their names, ``datasets`` columns as lists."""
    from ..schema import MID_REPLY_HOW

    running, lang, how, tags = plain(running), plain(lang), plain(how), plain(tags)
    if isinstance(running, list):
        running = [r.get("topicId") if isinstance(r, Mapping) else r for r in running]
    if isinstance(how, list):
        how = [MID_REPLY_HOW[h] if isinstance(h, int) and not isinstance(h, bool) and 0 <= h < len(MID_REPLY_HOW)
               else h for h in how]
    if isinstance(tags, list):
        tags = [plain(t) for t in tags]
    return {"running": running, "lang": lang, "how": how, "tags": tags}


# --- the routing metrics from plain per-session inputs: gold turns and predicted labels ---------------
#
# What the ``interleave_routing`` and ``interleave_bcubed`` modules compute with: the same records
# the CLI reads (a Session per session, a PredictionRow per label), scored by the same function, so
# for the same inputs the metrics equal those of ``interleave-bench score --json``.

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
    bootstrap: int = 0,
    seed: int = 0,
    **inputs: Any,
) -> dict[str, Any]:
    """The score document for per-session gold turns and labels; ``inputs`` are
    :func:`build_inputs`'s (``threads``, ``session_ids``, ``langs``, ``predicted_refs``,
    ``row_fields``).

    Every session is scored (there is no split here); a session whose labels are all ``None`` has
    no rows and is left out, as the CLI leaves out a session without predictions.
    """
    sessions, rows = build_inputs(references, predictions, mode=mode, **inputs)
    run = score_predictions(sessions, rows, system="evaluate", mode=mode, split="all", bootstrap=bootstrap,
                            seed=seed, source="<predictions>")
    return run.result
