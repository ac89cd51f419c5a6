"""The evaluate modules' inputs as users hand them in, made plain: ``load_dataset`` rows included.

A split loaded with ``datasets.load_dataset`` gives ``ds["dev"]["turns"]`` as a ``Column`` of
sessions, each a list of turn rows whose ``gold.action`` and ``style`` are ``ClassLabel`` indices,
with ``extra`` cells and nested nulls (docs/hub.md#round-trip). :func:`session_turns` turns that,
or turns as the JSONL holds them, into plain turns through :func:`~.features.from_row`, the one
row-to-record conversion; :func:`check_sessions_form` says in one line when an input is not one
list per session (as when ``evaluate.combine`` hands a flat list to a per-session module).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from ..schema import PredictionRow
from ..score.labels import complete_turn
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
