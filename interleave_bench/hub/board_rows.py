"""The leaderboard's rows: their columns, the kinds of run, and a row from a score or summary document.

A row is a flat record (:class:`~interleave_bench.documents.LeaderboardRow`): a run's identity and
provenance, and one column per headline metric with its interval (``<m>``, ``<m>_lo``, ``<m>_hi``)
and per cost figure. Which metrics, their ranges and their directions come from the metric table
(:mod:`interleave_bench.score.table`). See docs/leaderboard.md.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ..errors import InputError, InputErrors
from ..documents import FACTS_SUMMARY_KIND, LeaderboardRow, read_score_document
from ..score.table import HEADLINE, family, metric

BOARD_FILE = "data/leaderboard.parquet"
BOARD_SPLIT = "runs"
#: the metrics a row carries with their intervals (``<m>``, ``<m>_lo``, ``<m>_hi``)
HEADLINE_METRICS = HEADLINE
#: cost figures a row carries as they are (the cost in USD included)
COST_FIELDS = tuple(m.key for m in family("cost"))
#: rank order: strict accuracy first (the benchmark's headline), weighted error breaks ties because
#: it separates polluting mistakes (cost 3) from asking or failing (cost 1); each sorts in its
#: table entry's direction
RANK_METRICS = ("accuracy", "weighted_error")
#: the kinds of rows: a routing score, a mid-reply summary, a shared-facts summary
KIND_ROUTING = "routing"
KIND_MID_REPLY = "mid_reply"
KIND_SHARED_FACTS = "shared_facts"
#: the ``kind`` a summary document declares -> the kind of its row (``interleave-bench mid-reply``
#: and ``interleave-bench score-facts`` write them)
SUMMARY_KINDS = {"mid-reply": KIND_MID_REPLY, FACTS_SUMMARY_KIND: KIND_SHARED_FACTS}
#: a facts summary ranks the shared-facts strategy: its rates, under the board's column names
FACTS_STRATEGY = "facts"
FACTS_RATES = {"accuracy": "answer_accuracy", "stale": "stale_answers", "proposal": "proposal_answers"}
#: the rates a summary of each kind carries (``{"value", "k", "n", "ci95"}`` each), as board columns
KIND_RATES = {
    KIND_MID_REPLY: ("accuracy", "right_side", "mixed_in", "split_off", "wrong_elsewhere"),
    KIND_SHARED_FACTS: ("accuracy", "stale", "proposal"),
}
#: every interval-carrying column of the board: the routing headline, then the summaries' own rates
INTERVAL_COLUMNS = HEADLINE_METRICS + tuple(
    dict.fromkeys(m for rates in KIND_RATES.values() for m in rates if m not in HEADLINE_METRICS))
#: the metric-table entry behind each board column, per kind of row: the routing headline and cost
#: figures are table keys themselves; a summary's rates are those of its own family
COLUMN_METRICS: dict[str, dict[str, str]] = {
    KIND_ROUTING: {**{m: m for m in HEADLINE_METRICS}, **{c: c for c in COST_FIELDS}},
    KIND_MID_REPLY: {m: f"mid_reply_{m}" for m in KIND_RATES[KIND_MID_REPLY]},
    KIND_SHARED_FACTS: dict(FACTS_RATES),
}
#: an interval may miss its value by this much (float noise; both are rounded the same way)
INTERVAL_SLACK = 1e-9


def value_range(kind: Optional[str], column: str) -> Optional[tuple[float, float]]:
    """``(lo, hi)`` of a board column in a row of ``kind``: its metric-table entry's range (``hi``
    may be infinite); None for a column no metric of that kind fills. A value (or an interval end)
    outside it cannot come from an honest run."""
    key = COLUMN_METRICS.get(kind or KIND_ROUTING, {}).get(column)
    if key is None:
        return None
    m = metric(key)
    return m.lo, m.hi


def board_features():
    """The board's ``datasets.Features`` (flat, so the Hub viewer can sort every column)."""
    from datasets import Features, Value

    cols: dict[str, Any] = {
        name: Value("string")
        for name in ("kind", "system", "policy", "model", "mode", "split", "data_repo", "data_revision", "data_commit",
                     "data_config", "data_sha256", "predictions_sha256", "rows_sha256", "decisions_sha256")
    }
    for m in INTERVAL_COLUMNS:
        cols[m] = Value("float64")
        cols[f"{m}_lo"] = Value("float64")
        cols[f"{m}_hi"] = Value("float64")
    for c in COST_FIELDS:
        cols[c] = Value("float64")
    cols["sessions"] = Value("int64")
    cols["messages"] = Value("int64")
    for name in ("package_version", "git_commit", "scored", "provenance", "date", "publication", "format"):
        cols[name] = Value("string")
    return Features(cols)


# --- score files -> rows -------------------------------------------------------------------------------


def row_from_score(
    path: str,
    score: Any,
    *,
    system: Optional[str] = None,
    model: Optional[str] = None,
    data_repo: Optional[str] = None,
    data_revision: Optional[str] = None,
) -> dict[str, Any]:
    """One board row from a score file's content (``date`` and ``publication`` left empty).

    The content is validated as a :class:`~interleave_bench.documents.TracedScore` (a score
    document with its data and predictions fingerprints); ``system`` replaces the document's.
    Raises one :class:`InputError` naming the file and the field at fault.
    """
    if isinstance(score, dict) and system is not None:
        score = {**score, "system": system.strip()}
    doc = read_score_document(path, score, traced=True)
    missing = [m for m in RANK_METRICS if m not in doc.metrics]
    if missing:
        raise InputError(path, None, f"metrics.{missing[0]}", "missing: the board ranks on it")
    prov = doc.provenance
    row: dict[str, Any] = {
        "kind": KIND_ROUTING,
        "system": doc.system.strip(),
        "policy": doc.policy,
        "model": model if model is not None else doc.model,
        "mode": doc.mode,
        "split": doc.split,
        "data_repo": data_repo,
        "data_revision": data_revision or prov.data_sha256,
        "data_commit": None,
        "data_config": None,
        "data_sha256": prov.data_sha256,
        "predictions_sha256": prov.predictions_sha256,
        "rows_sha256": None,
        "decisions_sha256": None,
    }
    for m in INTERVAL_COLUMNS:
        iv = doc.intervals.get(m)
        row[m] = doc.metrics.get(m)
        row[f"{m}_lo"], row[f"{m}_hi"] = (iv[0], iv[1]) if iv is not None and len(iv) == 2 else (None, None)
    for c in COST_FIELDS:
        row[c] = doc.cost_usd_per_message if c == "cost_usd_per_message" else doc.metrics.get(c)
    row.update(
        sessions=doc.counts.sessions,
        messages=doc.counts.messages,
        package_version=prov.package_version,
        git_commit=prov.git_commit,
        scored=getattr(prov, "created", None),
        provenance=json.dumps(prov.dump(), ensure_ascii=False, sort_keys=True),
        date=None,
        publication=None,
    )
    return LeaderboardRow.model_validate(row).dump()


def _number(x: Any) -> Optional[float]:
    """``x`` as a float when it is a number (not a flag), else None."""
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def row_from_summary(
    path: str,
    doc: dict[str, Any],
    *,
    system: Optional[str] = None,
    model: Optional[str] = None,
    data_repo: Optional[str] = None,
    data_revision: Optional[str] = None,
) -> dict[str, Any]:
    """One board row of its own kind from a mid-reply or facts summary document.

    The headline is ``metrics.accuracy`` (a facts summary: the ``facts`` strategy's
    ``answer_accuracy``); the kind's other rates (:data:`KIND_RATES`) fill their columns with their
    intervals. The data fingerprint is ``provenance.data_sha256`` (else ``cases.sha256`` or
    ``data.sha256``), the predictions fingerprint ``provenance.predictions_sha256`` (else
    ``results.sha256``). Raises :class:`InputErrors` naming the file and field of every problem.
    """
    kind = SUMMARY_KINDS[doc["kind"]]
    errs: list[InputError] = []
    metrics = doc.get("metrics") if isinstance(doc.get("metrics"), dict) else {}
    if kind == KIND_SHARED_FACTS:  # the facts strategy's rates, under the board's names
        mine = (metrics.get("strategies") or {}).get(FACTS_STRATEGY) or {}
        metrics = {col: mine.get(key) for col, key in FACTS_RATES.items()}
    prov = doc.get("provenance") if isinstance(doc.get("provenance"), dict) else {}
    if not prov:
        errs.append(InputError(path, None, "provenance", "missing: the leaderboard only ranks runs it can trace"))
    data_sha = prov.get("data_sha256") or (doc.get("cases") or doc.get("data") or {}).get("sha256")
    pred_sha = prov.get("predictions_sha256") or (doc.get("results") or {}).get("sha256")
    if not isinstance(data_sha, str) or not isinstance(pred_sha, str):
        errs.append(InputError(path, None, "provenance.data_sha256",
                               "missing: the leaderboard needs the data and predictions (results) fingerprints"))
    head = metrics.get("accuracy")
    if not isinstance(head, dict) or "value" not in head:
        errs.append(InputError(path, None, "metrics.accuracy", "missing: the board ranks on it"))
    policy = doc.get("policy") or (FACTS_STRATEGY if kind == KIND_SHARED_FACTS else None)
    run_model = model if model is not None else doc.get("model")
    name = system or doc.get("system") or "-".join(dict.fromkeys(str(x) for x in (doc["kind"], policy, run_model) if x))
    if errs:
        raise InputErrors(errs)
    row: dict[str, Any] = {n: None for n in board_features()}
    row.update({
        "kind": kind, "system": name, "policy": policy, "model": run_model, "mode": doc["kind"],
        "split": doc.get("split") or "test", "data_repo": data_repo, "data_revision": data_revision or data_sha,
        "data_sha256": data_sha, "predictions_sha256": pred_sha,
        "messages": head.get("n") if isinstance(head.get("n"), int) else None,
        "package_version": prov.get("package_version"), "git_commit": prov.get("git_commit"),
        "scored": prov.get("created"), "provenance": json.dumps(prov, ensure_ascii=False, sort_keys=True),
    })
    for m in KIND_RATES[kind]:
        rate = metrics.get(m)
        if isinstance(rate, dict):
            ci = rate.get("ci95")
            row[m] = _number(rate.get("value"))
            row[f"{m}_lo"], row[f"{m}_hi"] = (_number(ci[0]), _number(ci[1])) if isinstance(ci, list) and len(ci) == 2 else (None, None)
    row.pop("format", None)  # the row's own format, set by the record
    return LeaderboardRow.model_validate(row).dump()
