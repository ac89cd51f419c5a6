"""The leaderboard: a dataset of one row per scored run, published one tagged commit per addition.

Rows come from the ``score.json`` files the scorer writes (format ``interleave-score-v1``). The
board is a dataset repo holding ``data/leaderboard.parquet`` and a README whose YAML declares its
features, so ``load_dataset("<org>/<name>-leaderboard", split="runs")`` loads it with types; the
README's prose is the current ranking. Every ``add`` is one commit tagged ``board-1``,
``board-2``..., so any earlier state of the board stays citable (and no tag reads like a data
config such as ``v1``; boards published before this naming keep their ``v<n>`` tags, counted on).

Rows are of a ``kind``: ``routing`` (a score file, ``interleave-score-v1``), ``mid_reply`` and
``shared_facts`` (the summaries ``mid-reply`` and ``score-facts`` write, ``"kind": "mid-reply"`` or
``"facts"``).

What is refused (exit 2, nothing published), each by its own check: a score without provenance
(no data or predictions fingerprint); a value outside its range (:data:`VALUE_RANGES`) or outside
its own interval (:func:`check_values`); a run that left sessions of its split (or cases of the
set) unscored (:func:`check_complete`); a claimed data revision that does not resolve to a commit
of the data repo, or whose data there has another fingerprint than the run was scored on
(:func:`check_data_revisions`); a run already on the board (same system, mode, policy, model,
split and data revision, or the same predictions fingerprint); a run on another data revision
than the one the board ranks, unless ``--new-board`` starts a new ranking (earlier rows stay,
unranked).

Ranking (:func:`rank`) and rendering (:func:`render_markdown`) are pure functions of the rows.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional

from .. import __version__
from ..errors import InputError, InputErrors, UsageError
from ..io import read_json
from ..documents import LeaderboardRow, read_score_document
from ..score.table import HEADLINE, family, metric, rank_key
from . import card as cardlib
from . import client

BOARD_FILE = "data/leaderboard.parquet"
BOARD_SPLIT = "runs"
#: publications are tagged board-1, board-2, ... in order (never v<n>, which names data configs)
TAG_PREFIX = "board-"
#: the tags of boards published before: still counted, so numbering goes on after them
LEGACY_TAG_PREFIX = "v"
#: the metrics a row carries with their intervals (``<m>``, ``<m>_lo``, ``<m>_hi``)
HEADLINE_METRICS = HEADLINE
#: cost figures a row carries as they are (the cost in USD included)
COST_FIELDS = tuple(m.key for m in family("cost"))
#: rank order: strict accuracy first (the benchmark's headline), weighted error breaks ties because
#: it separates polluting mistakes (cost 3) from asking or failing (cost 1); each sorts in its
#: table entry's direction
RANK_METRICS = ("accuracy", "weighted_error")
#: the identity of a run: two rows with these equal are the same run submitted twice
RUN_KEY = ("system", "mode", "policy", "model", "split", "data_revision")
#: the kinds of rows: a routing score, a mid-reply summary, a shared-facts summary
KIND_ROUTING = "routing"
KIND_MID_REPLY = "mid_reply"
KIND_SHARED_FACTS = "shared_facts"
#: the ``kind`` a summary document declares -> the kind of its row (``interleave-bench mid-reply``
#: and ``interleave-bench score-facts`` write them)
SUMMARY_KINDS = {"mid-reply": KIND_MID_REPLY, "facts": KIND_SHARED_FACTS}
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
#: the range of every value a row carries, ``(low, high)`` with None for no bound; a value (or an
#: interval end) outside it cannot come from an honest run and is refused. Weighted error costs at
#: most 3 per message (pollution), shares lie in [0, 1], counts per message and costs are not negative.
VALUE_RANGES: dict[str, tuple[Optional[float], Optional[float]]] = {
    **{m: (0.0, 1.0) for m in INTERVAL_COLUMNS},
    "weighted_error": (0.0, 3.0),
    "topics_per_thread": (0.0, None),
    "threads_per_topic": (0.0, None),
    **{c: (0.0, None) for c in COST_FIELDS},
    "model_calls_share": (0.0, 1.0),
    "cost_usd_per_message": (0.0, None),
}
#: an interval may miss its value by this much (float noise; both are rounded the same way)
INTERVAL_SLACK = 1e-9
#: the metrics the ranking table of routing runs shows (headers are their display names)
TABLE_METRICS = ("accuracy", "weighted_error", "accuracy_lenient", "bcubed_f1", "switch_f1", "oneoff_into_topic")


def board_features():
    """The board's ``datasets.Features`` (flat, so the Hub viewer can sort every column)."""
    from datasets import Features, Value

    cols: dict[str, Any] = {
        name: Value("string")
        for name in ("kind", "system", "policy", "model", "mode", "split", "data_repo", "data_revision", "data_commit",
                     "data_sha256", "predictions_sha256")
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
        "data_sha256": prov.data_sha256,
        "predictions_sha256": prov.predictions_sha256,
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


def read_runs(
    paths: Iterable[str],
    *,
    system: Optional[str] = None,
    model: Optional[str] = None,
    data_repo: Optional[str] = None,
    data_revision: Optional[str] = None,
) -> tuple[list[dict[str, Any]], list[Any]]:
    """``(rows, documents)`` of the given files, one each; every file's problems collected before raising.

    A score whose provenance names where its data came from (``data_repo``, ``data_revision``,
    scored from ``hub:``) claims that revision unless ``--data-revision`` says otherwise.
    """
    rows, docs, errs = [], [], []
    for p in paths:
        try:
            doc = read_json(p)
            kind = doc.get("kind") if isinstance(doc, dict) else None
            prov = doc.get("provenance") if isinstance(doc, dict) and isinstance(doc.get("provenance"), dict) else {}
            rev = data_revision or prov.get("data_revision")
            repo = data_repo or (prov.get("data_repo") if data_revision is None else None)
            make = row_from_summary if kind in SUMMARY_KINDS else row_from_score
            rows.append(make(p, doc, system=system, model=model, data_repo=repo, data_revision=rev))
            docs.append(doc)
        except InputErrors as exc:
            errs += exc.errors
        except InputError as exc:
            errs.append(exc)
    if errs:
        raise InputErrors(errs)
    return rows, docs


# --- the honesty checks ---------------------------------------------------------------------------------


def check_values(rows: list[dict[str, Any]], paths: list[str]) -> None:
    """Refuse any value outside :data:`VALUE_RANGES`, and any value outside its own interval.

    An interval must hold its value (``lo <= value <= hi``) and lie in the value's range. Raises
    :class:`InputErrors` naming each file and metric.
    """
    errs: list[InputError] = []

    def outside(v: float, low: Optional[float], high: Optional[float]) -> bool:
        return v != v or (low is not None and v < low) or (high is not None and v > high)

    for p, r in zip(paths, rows):
        for m, (low, high) in VALUE_RANGES.items():
            # one line per metric: the first of value, interval ends, containment that is wrong
            cols = (m, f"{m}_lo", f"{m}_hi") if m in INTERVAL_COLUMNS else (m,)
            bad = next((c for c in cols if r.get(c) is not None and outside(r[c], low, high)), None)
            if bad is not None:
                span = f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
                errs.append(InputError(p, None, _field(r, bad), f"{r[bad]} is outside its range {span}: "
                                                                "not a value an honest run can give"))
                continue
            v, lo, hi = r.get(m), r.get(f"{m}_lo"), r.get(f"{m}_hi")
            if m in INTERVAL_COLUMNS and None not in (v, lo, hi) and not (lo - INTERVAL_SLACK <= v <= hi + INTERVAL_SLACK):
                errs.append(InputError(p, None, _field(r, m), f"{v} lies outside its own 95% interval [{lo}, {hi}]"))
    if errs:
        raise InputErrors(errs)


def _field(row: dict[str, Any], col: str) -> str:
    """Where a board column sits in the file the row came from, for messages."""
    m = col[:-3] if col.endswith(("_lo", "_hi")) else col
    if row.get("kind") not in (None, KIND_ROUTING):
        return f"metrics.{m}.ci95" if m != col else f"metrics.{m}.value"
    if col == "cost_usd_per_message":
        return col
    return f"intervals.{m}" if m != col else f"metrics.{m}"


def check_complete(docs: list[Any], paths: list[str]) -> None:
    """Refuse runs that left part of their split unscored.

    A score document with sessions of its split that had no predictions
    (``counts.sessions_without_rows`` or ``not_scored`` entries of that reason) is a partial run;
    so is a summary run on a subset of the cases (``cases.limit`` or ``cases.lang`` set).
    """
    from ..score.rows import NO_PREDICTIONS

    errs: list[InputError] = []
    for p, doc in zip(paths, docs):
        if doc.get("kind") in SUMMARY_KINDS:
            cases = doc.get("cases") or {}
            subset = {k: cases.get(k) for k in ("limit", "lang") if cases.get(k) is not None}
            if subset:
                errs.append(InputError(p, None, "cases", f"a partial run ({', '.join(f'{k} {v}' for k, v in subset.items())}): "
                                                         "the board ranks runs over the whole case set"))
            missing = (doc.get("metrics") or {}).get("missing") or []
            if missing:
                errs.append(InputError(p, None, "metrics.missing", f"a partial run: {len(missing)} probe answer"
                                                                   f"{'s' if len(missing) != 1 else ''} missing "
                                                                   f"(first {missing[0]}); finish the run before adding it"))
            continue
        counts = doc.get("counts") or {}
        left = counts.get("sessions_without_rows") or 0
        if not left:
            left = sum(1 for x in doc.get("not_scored") or [] if isinstance(x, dict) and x.get("reason") == NO_PREDICTIONS)
        if left:
            errs.append(InputError(p, None, "counts.sessions_without_rows",
                                   f"a partial run: {left} session{'s' if left != 1 else ''} of split "
                                   f"{doc.get('split')!r} had no predictions; route the whole split before adding it"))
    if errs:
        raise InputErrors(errs)


#: the data configs a row of each kind can have been scored on
KIND_CONFIGS = {KIND_ROUTING: ("v0", "v1", "irc_ubuntu", "sgd"), KIND_MID_REPLY: ("mid_reply",), KIND_SHARED_FACTS: ("v1",)}


def check_data_revisions(api: Any, rows: list[dict[str, Any]], paths: list[str], board: list[dict[str, Any]]) -> None:
    """Resolve every claimed data revision to its commit and refuse runs scored on other data.

    A row claims a revision when its ``data_revision`` is not its own data fingerprint. The data
    repo comes from the row (``--data-repo`` or the score's provenance), else from the board's
    rows on that revision. The fingerprint of every config the row's kind can use is computed from
    the Parquet files at that commit (on the records, as scoring does); the row's must be one of
    them. Sets ``data_commit`` on the rows. Raises :class:`InputErrors` naming each file.
    """
    from .source import config_fingerprint

    errs: list[InputError] = []
    resolved: dict[tuple[str, str], tuple[Optional[str], str]] = {}
    prints: dict[tuple[str, str], dict[str, Optional[str]]] = {}
    for p, r in zip(paths, rows):
        rev = r.get("data_revision")
        if rev is None or rev == r.get("data_sha256"):
            continue
        repo = r.get("data_repo") or next((b.get("data_repo") for b in board
                                           if b.get("data_revision") == rev and b.get("data_repo")), None)
        if not repo:
            errs.append(InputError(p, None, "data_revision", f"claims data revision {rev!r} but names no data repo: "
                                                             "give --data-repo ORG/NAME so the claim can be checked"))
            continue
        r["data_repo"] = repo
        key = (repo, rev)
        if key not in resolved:
            try:
                resolved[key] = (api.dataset_info(repo, revision=rev).sha, "")
            except Exception as exc:  # noqa: BLE001 - any failure to resolve is a claim that cannot stand
                resolved[key] = (None, type(exc).__name__)
        commit, reason = resolved[key]
        if commit is None:
            errs.append(InputError(p, None, "data_revision", f"{rev!r} is not a revision of {repo} on {client.endpoint()} "
                                                             f"({reason or 'not found'}): the claim cannot be checked"))
            continue
        r["data_commit"] = commit
        kind = r.get("kind") or KIND_ROUTING
        found = prints.setdefault((repo, commit), {})
        for config in KIND_CONFIGS[kind]:
            if config not in found:
                with client.hub_errors(f"read {repo}@{rev}"):
                    found[config] = config_fingerprint(api, repo, commit, config)
        have = {c: found[c] for c in KIND_CONFIGS[kind] if found.get(c)}
        if r["data_sha256"] not in have.values():
            there = ", ".join(f"{c} {fp}" for c, fp in have.items()) or f"no {'/'.join(KIND_CONFIGS[kind])} data"
            errs.append(InputError(p, None, "provenance.data_sha256",
                                   f"scored on data {r['data_sha256']}, but {repo}@{rev} (commit {commit[:12]}) holds "
                                   f"{there}: the run was not scored on that revision"))
    if errs:
        raise InputErrors(errs)


# --- the rules -----------------------------------------------------------------------------------------


def run_key(row: dict[str, Any]) -> tuple:
    return tuple(row.get(k) for k in RUN_KEY)


def describe(row: dict[str, Any]) -> str:
    """``system (mode, policy, model, split)`` for messages."""
    bits = [row.get("mode"), row.get("policy") or "no policy", row.get("model") or "no model", row.get("split")]
    return f"{row.get('system')} ({', '.join(str(b) for b in bits)})"


def current_revision(rows: list[dict[str, Any]]) -> Optional[str]:
    """The data revision the board ranks: that of its most recent publication."""
    if not rows:
        return None
    _, latest = max(enumerate(rows), key=lambda kr: (_pub_number(kr[1].get("publication")), kr[0]))
    return latest.get("data_revision")


def _pub_number(tag: Optional[str]) -> int:
    """The publication number of a board tag (``board-7`` -> 7, a legacy ``v7`` too), 0 for other tags."""
    m = re.fullmatch(rf"(?:{re.escape(TAG_PREFIX)}|{re.escape(LEGACY_TAG_PREFIX)})(\d+)", tag or "")
    return int(m.group(1)) if m else 0


def check_additions(
    existing: list[dict[str, Any]], new: list[dict[str, Any]], paths: list[str], *, new_board: bool = False
) -> None:
    """Refuse duplicates and rows on another data revision; raises InputErrors naming each file."""
    errs: list[InputError] = []
    by_key = {run_key(r): r for r in existing}
    by_pred = {r.get("predictions_sha256"): r for r in existing}
    revisions = {r["data_revision"] for r in new}
    if len(revisions) > 1:
        errs.append(InputError(paths[0], None, "provenance.data_sha256",
                               f"the runs given were scored on {len(revisions)} data revisions "
                               f"({', '.join(sorted(revisions))}); add one revision at a time"))
    board_rev = current_revision(existing)
    for p, r in zip(paths, new):
        if run_key(r) in by_key:
            old = by_key[run_key(r)]
            errs.append(InputError(p, None, None, f"duplicate: {describe(r)} on data revision {r['data_revision']} "
                                                  f"is already on the board (published in {old.get('publication') or 'this add'})"))
        elif r["predictions_sha256"] in by_pred:
            old = by_pred[r["predictions_sha256"]]
            errs.append(InputError(p, None, "provenance.predictions_sha256",
                                   f"duplicate: the same predictions are already on the board as {describe(old)} "
                                   f"(published in {old.get('publication') or 'this add'})"))
        elif (r["data_revision"] == board_rev
              and r["data_sha256"] not in {o.get("data_sha256") for o in existing if o.get("data_revision") == board_rev}):
            errs.append(InputError(p, None, "provenance.data_sha256",
                                   f"scored on data {r['data_sha256']}, but the runs on revision {board_rev} were "
                                   "scored on other data: check --data-revision"))
        elif board_rev is not None and r["data_revision"] != board_rev and not new_board:
            errs.append(InputError(p, None, "data_revision",
                                   f"scored on data revision {r['data_revision']}, but the board ranks {board_rev}: "
                                   "runs on different data are never ranked together (use --new-board to start a "
                                   "new ranking on this revision)"))
        by_key.setdefault(run_key(r), r)
        by_pred.setdefault(r["predictions_sha256"], r)
    if errs:
        raise InputErrors(errs)


def align_revisions(existing: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    """Name new rows' data as the board does when they were scored on the very same file.

    A row whose revision defaulted to its data fingerprint (no ``--data-revision``) and whose
    fingerprint is that of the rows the board ranks takes the board's revision (and data repo):
    the same data under its published name. Rows are changed in place.
    """
    board_rev = current_revision(existing)
    ranked = [r for r in existing if r.get("data_revision") == board_rev]
    by_sha = {r.get("data_sha256"): r for r in ranked}
    for r in new:
        same = by_sha.get(r["data_sha256"])
        if same is not None and r["data_revision"] == r["data_sha256"]:
            r["data_revision"] = board_rev
            r["data_repo"] = r["data_repo"] or same.get("data_repo")


def next_tag(tags: Iterable[str]) -> str:
    """``board-<n+1>`` after the highest publication tag (``board-1`` on a new board)."""
    return f"{TAG_PREFIX}{max((_pub_number(t) for t in tags), default=0) + 1}"


# --- ranking and rendering ------------------------------------------------------------------------------


@dataclass
class Group:
    split: str
    mode: str
    rows: list[dict[str, Any]]


def rank(rows: list[dict[str, Any]], data_revision: Optional[str] = None) -> tuple[Optional[str], list[Group], int]:
    """``(revision, groups, left_out)``: the rows on one data revision (default: the current one),
    grouped by split and mode and sorted by :data:`RANK_METRICS`; ``left_out`` counts rows on others.
    Missing values sort last.
    """
    rev = data_revision or current_revision(rows)
    on = [r for r in rows if r.get("data_revision") == rev]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in on:
        groups.setdefault((r.get("split") or "", r.get("mode") or ""), []).append(r)

    def key(r: dict[str, Any]) -> tuple:
        out = [x for m in RANK_METRICS for x in rank_key(m, r.get(m))]
        return (*out, r.get("system") or "", r.get("policy") or "", r.get("model") or "")

    out = [Group(s, m, sorted(g, key=key)) for (s, m), g in sorted(groups.items())]
    return rev, out, len(rows) - len(on)


def fmt_value(v: Optional[float], digits: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def fmt_interval(row: dict[str, Any], metric: str, digits: int = 3) -> str:
    """``0.734 [0.702, 0.765]``, or the bare value when the run has no interval for it."""
    v, lo, hi = row.get(metric), row.get(f"{metric}_lo"), row.get(f"{metric}_hi")
    if v is None:
        return "n/a"
    if lo is None or hi is None:
        return fmt_value(v, digits)
    return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def table_metrics(kind: Optional[str]) -> tuple[tuple[str, str], ...]:
    """The ``(column, header)`` pairs a ranking table of rows of ``kind`` shows."""
    if kind in KIND_RATES:
        return tuple((m, m.replace("_", " ")) for m in KIND_RATES[kind])
    return tuple((m, metric(m).display) for m in TABLE_METRICS)


def render_table(group: Group) -> str:
    """One ranking table in markdown."""
    shown = table_metrics(group.rows[0].get("kind") if group.rows else None)
    head = ["rank", "system", "policy", "model", *(h for _, h in shown), "tokens in / msg", "cost / msg", "published"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k, r in enumerate(group.rows, start=1):
        cost = r.get("cost_usd_per_message")
        cells = [
            str(k),
            r.get("system") or "",
            r.get("policy") or "-",
            r.get("model") or "-",
            *(fmt_interval(r, m) for m, _ in shown),
            fmt_value(r.get("input_tokens_per_message"), 1),
            "n/a" if cost is None else f"${cost:.6f}",
            r.get("publication") or "-",
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def render_markdown(rows: list[dict[str, Any]], data_revision: Optional[str] = None) -> tuple[str, str, int]:
    """``(revision, tables, left_out)``: the ranking tables, one per split and mode, in markdown."""
    rev, groups, left_out = rank(rows, data_revision)
    if not groups:
        return rev or "none", "No runs on this data revision yet.", left_out
    parts = [f"### split `{g.split}`, mode `{g.mode}`\n\n{render_table(g)}" for g in groups]
    return rev or "none", "\n\n".join(parts), left_out


def board_card(repo_id: str, rows: list[dict[str, Any]], publication: str, template_dir: Optional[Path] = None) -> str:
    """The board's README: YAML header (configs, features, licence) and the ranking."""
    from datasets import DatasetInfo
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData

    data = DatasetCardData(pretty_name=f"{cardlib.PRETTY_NAME} leaderboard", license=cardlib.LICENSE,
                           tags=["leaderboard", "interleavebench"], size_categories=[cardlib.size_category(len(rows))])
    MetadataConfigs({"default": {"data_files": [{"split": BOARD_SPLIT, "path": BOARD_FILE}]}}).to_dataset_card_data(data)
    DatasetInfosDict({"default": DatasetInfo(features=board_features())}).to_dataset_card_data(data)
    rev, tables, left_out = render_markdown(rows)
    repos = sorted({r.get("data_repo") for r in rows if r.get("data_revision") == rev and r.get("data_repo")})
    other = (f"{left_out} earlier row{'s are' if left_out != 1 else ' is'} on other data revisions and not ranked here "
             "(`interleave-bench leaderboard show --data-revision REV` ranks them)." if left_out else "")
    path, template = cardlib.load_template(cardlib.LEADERBOARD_TEMPLATE, template_dir)
    body = cardlib.render(template, {
        "board_name": f"{repo_id}",
        "publication": publication,
        "package_version": __version__,
        "data_revision": rev,
        "data_repo": f" of {', '.join(f'`{x}`' for x in repos)}" if repos else "",
        "table": tables,
        "other_revisions": other,
        "repo_id": repo_id,
        "metrics": ", ".join(f"`{m}`" for m in HEADLINE_METRICS),
    }, source=path)
    return f"---\n{data.to_yaml().rstrip()}\n---\n\n{body}"


# --- the Hub side --------------------------------------------------------------------------------------------


@dataclass
class BoardState:
    head: Optional[str]
    tags: dict[str, str]
    rows: list[dict[str, Any]]


def _read_rows(path: str) -> list[dict[str, Any]]:
    """The board's rows; columns an older version did not write come back as null.

    A board with columns this version does not know was written by a newer version: re-publishing
    it here would drop them, so it is refused.
    """
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    names = list(board_features())
    unknown = [c for c in table.column_names if c not in names]
    if unknown:
        raise UsageError(f"the board has columns this interleave-bench ({__version__}) does not know "
                         f"({', '.join(unknown)}): upgrade the package before adding to it")
    return [{n: r.get(n) for n in names} for r in table.to_pylist()]


def fetch_board(api: Any, repo_id: str, revision: Optional[str] = None) -> BoardState:
    """The board's rows at ``revision`` (default: the head of main), its head commit and tags.

    The file is downloaded to a temporary folder and read into memory (nothing is left in the
    Hugging Face cache). A repo without a board file yet gives no rows.
    """
    from huggingface_hub.errors import EntryNotFoundError

    refs = api.list_repo_refs(repo_id, repo_type=client.REPO_TYPE)
    head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
    tags = {t.name: t.target_commit for t in refs.tags}
    rev = revision or head
    rows: list[dict[str, Any]] = []
    if rev is not None:
        with tempfile.TemporaryDirectory(prefix="interleave-board-") as tmp:
            try:
                path = api.hf_hub_download(repo_id, BOARD_FILE, repo_type=client.REPO_TYPE, revision=rev, cache_dir=tmp)
                rows = _read_rows(path)
            except EntryNotFoundError:
                rows = []
    return BoardState(head, tags, rows)


@dataclass
class AddResult:
    repo_id: str
    tag: str
    commit: str
    added: list[dict[str, Any]]
    rows: list[dict[str, Any]]


def add_runs(
    score_paths: list[str],
    repo_id: str,
    *,
    system: Optional[str] = None,
    model: Optional[str] = None,
    data_repo: Optional[str] = None,
    data_revision: Optional[str] = None,
    new_board: bool = False,
    private: bool = False,
    now: Optional[dt.datetime] = None,
) -> AddResult:
    """Add one row per score file to the board ``repo_id`` and publish it as one commit plus a tag.

    Every check runs before anything is written. Returns the tag, commit and rows now on the board.
    """
    from huggingface_hub import CommitOperationAdd

    client.check_repo_id(repo_id)
    paths = list(score_paths)
    new, docs = read_runs(paths, system=system, model=model, data_repo=data_repo, data_revision=data_revision)
    check_values(new, paths)
    check_complete(docs, paths)
    client.require_token()
    api = client.hub_api()
    what = f"leaderboard add to {repo_id}"
    with client.hub_errors(what):
        api.create_repo(repo_id, repo_type=client.REPO_TYPE, private=private, exist_ok=True)
        state = fetch_board(api, repo_id)
    check_data_revisions(api, new, paths, state.rows)
    align_revisions(state.rows, new)
    check_additions(state.rows, new, paths, new_board=new_board)
    tag = next_tag(state.tags)
    stamp = (now or dt.datetime.now(dt.timezone.utc)).replace(microsecond=0).isoformat()
    for r in new:
        r["date"] = stamp
        r["publication"] = tag
    rows = state.rows + new
    with tempfile.TemporaryDirectory(prefix="interleave-board-") as tmp:
        files = write_board(Path(tmp), repo_id, rows, tag)
        ops = [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(Path(tmp) / rel)) for rel in files]
        names = ", ".join(describe(r) for r in new)
        with client.hub_errors(what, after=f"nothing was published; the board is still at {state.head and state.head[:12]}"):
            info = api.create_commit(repo_id, ops, commit_message=f"Add {names} ({tag})",
                                     commit_description=f"interleave-bench {__version__}",
                                     repo_type=client.REPO_TYPE, parent_commit=state.head)
    with client.hub_errors(what, after=f"commit {info.oid[:12]} is on main but was not tagged {tag!r}"):
        api.create_tag(repo_id, tag=tag, revision=info.oid, repo_type=client.REPO_TYPE,
                       tag_message=f"leaderboard publication {tag}: {names}")
    return AddResult(repo_id, tag, info.oid, new, rows)


def write_board(folder: Path, repo_id: str, rows: list[dict[str, Any]], publication: str) -> list[str]:
    """Write the board's Parquet file and README into ``folder``; returns their relative paths."""
    import datasets

    from .export import quiet_datasets

    (folder / BOARD_FILE).parent.mkdir(parents=True, exist_ok=True)
    with quiet_datasets():
        datasets.Dataset.from_list(rows, features=board_features()).to_parquet(str(folder / BOARD_FILE))
    (folder / "README.md").write_text(board_card(repo_id, rows, publication), encoding="utf-8", newline="\n")
    return ["README.md", BOARD_FILE]


def eval_results_for(repo_id: str, model: str, *, revision: Optional[str] = None) -> dict[str, str]:
    """The ``.eval_results/`` files of ``model`` from the board ``repo_id`` (at ``revision``, default latest).

    One file per task (:mod:`.evalresults`), from the model's best-ranked row on the board's
    current data revision; each names the data repo, task and commit, and links the publication.
    Returns ``{path: YAML text}``; raises :class:`UsageError` when the board has no row of ``model``
    that reports on a task.
    """
    from .evalresults import eval_results_files

    client.check_repo_id(repo_id)
    api = client.hub_api()
    with client.hub_errors(f"leaderboard export-eval-results {repo_id}"):
        state = fetch_board(api, repo_id, revision)
    _, groups, _ = rank(state.rows)
    mine = [r for g in groups for r in g.rows if r.get("model") == model]
    at = revision or next((r.get("publication") for r in sorted(state.rows, key=lambda r: -_pub_number(r.get("publication")))), None)
    files = eval_results_files(mine, client.repo_url(repo_id, at))
    if not files:
        raise UsageError(f"{repo_id}: no row of model {model!r} on the ranked data revision reports on a task "
                         "(tasks are on the test split and need --data-repo on the row)")
    return files


def board_html(repo_id: str, state: BoardState, at: str, data_revision: Optional[str] = None) -> str:
    """The board as one self-contained HTML page (:func:`interleave_bench.score.html.board_page`):
    per split and mode, the ranking table, accuracy with its interval and accuracy against cost."""
    from ..score.html import BoardTable, Point, board_page

    rev, groups, left_out = rank(state.rows, data_revision)
    tables = []
    for g in groups:
        shown = table_metrics(g.rows[0].get("kind") if g.rows else None)
        header = ["rank", "system", "policy", "model", *(h for _, h in shown), "cost / msg", "published"]
        rows = [[str(k), r.get("system") or "", r.get("policy") or "-", r.get("model") or "-",
                 *(fmt_interval(r, m) for m, _ in shown),
                 "n/a" if r.get("cost_usd_per_message") is None else f"${r['cost_usd_per_message']:.6f}",
                 r.get("publication") or "-"] for k, r in enumerate(g.rows, start=1)]
        points = [Point(r.get("system") or "", r.get("accuracy"), r.get("accuracy_lo"), r.get("accuracy_hi"),
                        r.get("cost_usd_per_message")) for r in g.rows]
        tables.append(BoardTable(f"split {g.split}, mode {g.mode}", header, rows, points))
    intro = (f"{repo_id} at {at}; data revision {rev or 'none'}; {len(state.rows) - left_out} runs ranked"
             + (f", {left_out} on other data revisions not shown" if left_out else ""))
    return board_page(f"{repo_id} leaderboard", intro, tables)


def show(repo_id: str, *, revision: Optional[str] = None, data_revision: Optional[str] = None,
         html: bool = False) -> str:
    """The board at ``revision`` (default: latest) as markdown (a heading and the ranking tables),
    or as one HTML page when ``html``."""
    client.check_repo_id(repo_id)
    api = client.hub_api()
    with client.hub_errors(f"leaderboard show {repo_id}"):
        state = fetch_board(api, repo_id, revision)
    if html:
        return board_html(repo_id, state, revision or "main", data_revision)
    rev, tables, left_out = render_markdown(state.rows, data_revision)
    at = revision or "main"
    commit = state.tags.get(at) or (state.head if at == "main" else at)
    tags_here = sorted((t for t, c in state.tags.items() if c == commit), key=_pub_number)
    title = f"# {repo_id} at {at}" + (f" ({', '.join(tags_here)})" if tags_here and at not in tags_here else "")
    ranked = len(state.rows) - left_out
    lines = [title, "", f"data revision: `{rev}`; {ranked} run{'s' if ranked != 1 else ''} ranked"
             + (f", {left_out} on other data revisions not shown" if left_out else ""), "", tables]
    return "\n".join(lines)
