"""A predictions file lined up with a split's sessions, as the routing ``evaluate`` modules take it.

The modules take one list per session, one entry per message, in the order of the sessions given
(``ds["dev"]``): the labels, and for the cost metrics each row's ``usage``, ``elapsed_ms`` and
``via``. A run's prediction rows are keyed by session and message instead, in any order.
:func:`routing_inputs` does the lining up once, so that::

    routing.compute(**interleave_bench.routing_inputs("predictions/closed-local.jsonl", ds["dev"]))

gives the figures ``interleave-bench score --json`` gives for that run on those sessions.
Given a predictions file whose run record holds session digests (``route`` writes them), it
refuses, as ``score`` does, sessions other than the ones routed under the same ids
(:func:`~interleave_bench.route.digest.conversation_digest`); rows handed in directly have no
record, and cannot be checked.
"""

from __future__ import annotations

import os
from typing import Any, Collection, Iterable, Mapping, Optional

from pydantic import ValidationError

from ..errors import InputError, one_line
from ..schema import Session
from ..score.read import read_predictions_fast
from ..score.routing import DEFAULT_MODE
from ..score.rows import as_rows
from .metric_inputs import plain_turn
from .metric_values import plain


def _rows(predictions: Any) -> list:
    """Prediction rows from a file (JSONL, or Parquet by its name) or from rows in memory."""
    try:
        if isinstance(predictions, (str, os.PathLike)):
            return read_predictions_fast(predictions)[0]
        return as_rows(plain(predictions), "predictions")
    except InputError as exc:
        raise ValueError(exc.format().removeprefix("error: ")) from None


def _column(sessions: Any, name: str, required: bool = True) -> Optional[list]:
    """One column of the sessions: of a ``datasets`` split (by name) or of a list of session mappings."""
    if isinstance(sessions, Mapping) or isinstance(sessions, (str, bytes)):
        raise ValueError("sessions: expected a split (ds[\"dev\"]) or a list of sessions, one mapping each")
    names = getattr(sessions, "column_names", None)
    if names is not None:
        if name not in names:
            if required:
                raise ValueError(f"sessions: the split has no {name!r} column")
            return None
        return list(sessions[name])
    out = []
    for k, s in enumerate(plain(sessions)):
        if not isinstance(s, Mapping):
            raise ValueError(f"sessions[{k}]: expected a session (a mapping), got {type(s).__name__}")
        if name not in s and required:
            raise ValueError(f"sessions[{k}]: no {name!r}")
        out.append(s.get(name))
    return out


def _as_sessions(sessions: Any, wanted: Collection[str]) -> list[Session]:
    """The sessions whose id ``wanted`` holds, as :class:`Session` objects: ``load_dataset`` rows turned
    back by :func:`~.features.row_to_session` (a split, or a list of its rows), JSONL sessions as they are."""
    from .features import CONFIG_VERSIONS, features_for, row_to_session

    names = getattr(sessions, "column_names", None)
    rows = [plain(s) for s in (sessions.to_list() if names is not None else plain(sessions))]
    configs = {tuple(sorted(features_for(c))): c for c in CONFIG_VERSIONS}
    out = []
    for k, row in enumerate(rows):
        if not isinstance(row, Mapping) or str(row.get("session_id")) not in wanted:
            continue
        config = configs.get(tuple(sorted(row)))
        try:
            out.append(Session.model_validate(row_to_session(dict(row), config) if config else row))
        except (ValidationError, ValueError, TypeError) as exc:
            raise ValueError(one_line(f"sessions[{k}]: not a session ({exc})")) from None
    return out


def _require_routed_on(path: str | os.PathLike, sessions: Any, named: set[str]) -> None:
    """Raise ``ValueError`` in one line when the run record of the predictions file ``path`` lists
    digests and a session of ``sessions`` with a listed id, or one its rows name (``named``) and
    the record does not list, is not the one routed; a file without a record, or with a record of
    an older version (no digests), is not checked."""
    from ..route.digest import DIGESTS_FIELD, digest_mismatch, mismatch_text, recorded_digests
    from ..score.paths import run_record

    found = run_record(path)
    digests = recorded_digests(found[1]) if found is not None else None
    if digests is None:
        return
    mismatch = digest_mismatch(digests, _as_sessions(sessions, set(digests) | named), named)
    if mismatch is not None:
        raise ValueError(f"{found[0]}: {DIGESTS_FIELD}: "  # type: ignore[index]
                         + mismatch_text(path, "the sessions given", mismatch)
                         + ": line the run up with the sessions it was routed on, or route it again on these")


def routing_inputs(predictions: str | os.PathLike | Iterable[Any], sessions: Any) -> dict[str, Any]:
    """The keyword arguments of ``interleave_routing`` (and its ``mode``) for a run on ``sessions``.

    ``predictions`` is a predictions file (JSONL, or Parquet by its name) or its rows; ``sessions``
    a split as ``load_dataset`` gives it (``ds["dev"]``) or a list of sessions as the JSONL holds
    them. Each session's messages get the label of the row with their ``session_id`` and ``i``
    (``None``, scored as ``ERROR``, where the run has none), and ``usage``, ``elapsed_ms``, ``via``
    and ``predicted_refs`` that row's fields. As ``score`` does, a session the run has no row for
    is left out (not scored), and so are rows of sessions not given. ``mode`` is the rows' own (``closed``
    when no row says). Raises ``ValueError`` in one line for a file or row that cannot be read, a
    message with two rows, rows of two modes, or rows of which none belongs to ``sessions``, and,
    for a predictions file whose run record lists session digests (``route`` writes them), a
    session of ``sessions`` other than the one routed under its id (another text, reply, speaker,
    thread card...: gold labels may differ). Rows handed in directly carry no record: nothing
    tells which sessions they were routed on, so they are not checked.
    """
    rows = _rows(predictions)
    if isinstance(predictions, (str, os.PathLike)):
        _require_routed_on(predictions, sessions, {r.session_id for r in rows})
    ids, turns = _column(sessions, "session_id"), _column(sessions, "turns")
    by_key: dict[tuple[str, int], Any] = {}
    for r in rows:
        key = (r.session_id, r.i)
        if key in by_key:
            raise ValueError(f"predictions: two rows for session {r.session_id!r} message {r.i}")
        by_key[key] = r
    modes = sorted({r.mode for r in rows if r.mode is not None})
    if len(modes) > 1:
        raise ValueError(f"predictions: rows of two modes ({', '.join(modes)}): score one run at a time")
    has_rows = {r.session_id for r in rows}
    if not has_rows.intersection(map(str, ids)):
        raise ValueError(f"predictions: none of the {len(rows):,} rows belongs to a session given "
                         f"(first row's session: {rows[0].session_id!r})" if rows else "predictions: no rows")
    kept = [k for k, sid in enumerate(ids) if str(sid) in has_rows]
    per_session: list[list[Any]] = []
    for k in kept:
        plain_turns = [plain_turn(t, f"sessions[{k}].turns[{j}]") for j, t in enumerate(plain(turns[k]) or [])]
        per_session.append([by_key.get((str(ids[k]), t.get("i", j) if isinstance(t, Mapping) else j))
                            for j, t in enumerate(plain_turns)])

    def field(get) -> Optional[list[list[Any]]]:
        values = [[None if r is None else get(r) for r in session] for session in per_session]
        return values if any(v is not None for session in values for v in session) else None

    out: dict[str, Any] = {
        "predictions": [[None if r is None else r.pred for r in session] for session in per_session],
        "references": [turns[k] for k in kept],
        "mode": modes[0] if modes else DEFAULT_MODE,
        "session_ids": [ids[k] for k in kept],
    }
    for name in ("threads", "lang"):
        column = _column(sessions, name, required=False)
        if column is not None:
            out["langs" if name == "lang" else name] = [column[k] for k in kept]
    extra = {
        "predicted_refs": field(lambda r: r.refs),
        "usage": field(lambda r: None if r.usage is None else r.usage.model_dump()),
        "elapsed_ms": field(lambda r: r.elapsed_ms),
        "via": field(lambda r: r.via),
    }
    out.update({k: v for k, v in extra.items() if v is not None})
    return out
