"""The leaderboard's rules: what a new row must satisfy before the board publishes it.

Each check takes the new rows (and the files they came from, for the messages) and raises
:class:`~interleave_bench.errors.InputErrors` naming each file and field at fault; none writes
anything. See docs/leaderboard.md.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterable, Optional

from ..documents import run_record_path
from ..io import read_run_record
from ..errors import InputError, InputErrors
from ..schema import CONFIG_VERSIONS
from . import client
from .board_score import check_shown_text, name_key
from .board_rows import (
    COST_FIELDS,
    INTERVAL_COLUMNS,
    INTERVAL_SLACK,
    KIND_MID_REPLY,
    RANK_METRICS,
    KIND_ROUTING,
    KIND_SHARED_FACTS,
    SUMMARY_KINDS,
    value_range,
)

#: publications are tagged board-1, board-2, ... in order (never v<n>, which names data configs)
TAG_PREFIX = "board-"
#: the tags of boards published before: still counted, so numbering goes on after them
LEGACY_TAG_PREFIX = "v"
#: where a row is ranked: one table per kind, data revision and config, split and mode
TABLE_KEY = ("kind", "data_revision", "data_config", "split", "mode")
#: the identity of a run: its table and its system's name (case and spacing aside, see
#: :func:`~.board_score.name_key`): a name is one row of a table
RUN_KEY = ("system", *TABLE_KEY)


def check_values(rows: list[dict[str, Any]], paths: list[str]) -> None:
    """Refuse any value outside its metric-table range (:func:`~.board_rows.value_range`), and any
    value outside its own interval.

    An interval must hold its value (``lo <= value <= hi``) and lie in the value's range; a value
    must be a finite number. Raises :class:`InputErrors` naming each file and metric.
    """
    errs: list[InputError] = []

    def outside(v: float, low: float, high: float) -> bool:
        return not math.isfinite(v) or v < low or v > high

    for p, r in zip(paths, rows):
        for m in (*INTERVAL_COLUMNS, *COST_FIELDS):
            bounds = value_range(r.get("kind"), m)
            if bounds is None:
                continue
            low, high = bounds
            # one line per metric: the first of value, interval ends, containment that is wrong
            cols = (m, f"{m}_lo", f"{m}_hi") if m in INTERVAL_COLUMNS else (m,)
            bad = next((c for c in cols if r.get(c) is not None and outside(r[c], low, high)), None)
            if bad is not None:
                span = f"[{low}, {'inf' if math.isinf(high) else high}]"
                errs.append(InputError(p, None, _field(r, bad), f"{r[bad]} is outside its range {span}: "
                                                                "not a value an honest run can give"))
                continue
            v, lo, hi = r.get(m), r.get(f"{m}_lo"), r.get(f"{m}_hi")
            if m in INTERVAL_COLUMNS and None not in (v, lo, hi) and not (lo - INTERVAL_SLACK <= v <= hi + INTERVAL_SLACK):
                errs.append(InputError(p, None, _field(r, m), f"{v} lies outside its own 95% interval [{lo}, {hi}]"))
    if errs:
        raise InputErrors(errs)


#: the columns of a row the board shows as text: in its tables (system, policy, model), their
#: headings (config, split, mode), the README's line on the data, commit titles and tag messages
SHOWN_COLUMNS = ("system", "policy", "model", "mode", "split", "data_repo", "data_revision", "data_config")


def check_shown(rows: list[dict[str, Any]], paths: list[str]) -> None:
    """Refuse a row whose shown text (:data:`SHOWN_COLUMNS`) holds a line break, a bidi control or
    another character no output may carry (:func:`~.board_score.check_shown_text`, the rule of
    system names): a model named ``gpt-4o\\n| 1 | fake |`` would add a row to the README's table.
    Raises :class:`InputErrors`, one line per file, naming its first such column."""
    errs: list[InputError] = []
    for p, r in zip(paths, rows):
        try:
            for col in SHOWN_COLUMNS:
                if isinstance(r.get(col), str):
                    check_shown_text(r[col], p, col)
        except InputError as exc:
            errs.append(exc)
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


def check_real_model(docs: list[Any], paths: list[str]) -> None:
    """Refuse a run answered by the project's fake model (``--dry-run``, or a harness run against
    ``interleave-bench fake-model``): its rows say model ``fake-model``, or a harness's name for it
    such as ``openai-api/fake/fake-model`` (:func:`~..llm.provider.is_fake_model`; a mid-reply
    summary: ``dry_run``); or a routing run whose run record, beside its predictions
    (:func:`~..documents.run_record_path`), counts answers the fake model gave under the model's
    name (``usage.fake_answers``: ``OPENAI_BASE_URL`` pointed at its server, which marks each
    answer). A dry run checks the pipeline; its figures are the fake model's keyword matching,
    which the board must not rank beside models. A predictions file without a record is judged
    by its rows alone."""
    from ..llm.provider import FAKE_MODEL, is_fake_model

    errs: list[InputError] = []
    for p, doc in zip(paths, docs):
        if is_fake_model(doc.get("model")) or doc.get("dry_run") is True:
            errs.append(InputError(p, None, "model" if is_fake_model(doc.get("model")) else "dry_run",
                                   f"a dry run (answered by the project's {FAKE_MODEL}, not a model): the board "
                                   "ranks real runs"))
            continue
        try:
            record, fake = _fake_answers(doc)
        except InputError as exc:
            errs.append(exc)
            continue
        if fake:
            errs.append(InputError(record, None, "usage.fake_answers",
                                   f"{fake:,} (answered by the project's {FAKE_MODEL}, whose server marks each answer, "
                                   f"not by {doc.get('model') or 'a model'}): the board ranks real runs"))
    if errs:
        raise InputErrors(errs)


def check_out_of_sample(docs: list[Any], paths: list[str]) -> None:
    """Refuse a routing run scored on data its weights' fit read: the board's own scoring marks it
    ``in_sample`` (:func:`~..score.in_sample.in_sample_of`, by the data's manifest and the run's
    weights, as ``score`` does; a score file saying otherwise was refused as differing). Its
    accuracy and calibration there are in-sample, not figures for chat the fit never saw, and would
    rank above every honest run (``local`` on IRC's dev logs: 0.81, against 0.20 out of sample)."""
    from ..score.in_sample import in_sample_text

    errs = [InputError(p, None, "in_sample", f"scored on {in_sample_text(doc['in_sample'])}, which the local weights "
                                             "were fitted on: its figures are in-sample (docs/score.md#in-sample), "
                                             "and the board ranks figures for data a fit never saw (add a run on "
                                             "another split or corpus)")
            for p, doc in zip(paths, docs) if doc.get("kind") not in SUMMARY_KINDS and doc.get("in_sample")]
    if errs:
        raise InputErrors(errs)


def _fake_answers(doc: dict[str, Any]) -> tuple[str, int]:
    """``(run record, its usage.fake_answers)`` of a routing run's predictions file (the file its
    computed document names); ``("", 0)`` for a summary, or predictions without a record. A record
    that is not one is refused in one line naming its field."""
    prov = doc.get("provenance") if isinstance(doc.get("provenance"), dict) else {}
    pred = prov.get("predictions_file")
    if doc.get("kind") in SUMMARY_KINDS or not isinstance(pred, str):
        return "", 0
    path = run_record_path(Path(pred))
    if not path.is_file():
        return "", 0
    usage = read_run_record(path).usage
    return str(path), usage.fake_answers if usage is not None else 0


def check_oracle(docs: list[Any], paths: list[str]) -> None:
    """Refuse a routing run that routes every strict message where its gold puts it
    (:func:`~..score.routing.routes_strict_as_gold`: accuracy exactly 1) under any policy but the
    oracle's. The strict messages are all the ranking figures (accuracy, then weighted error) count,
    so such a run holds the oracle baseline's place whatever it did with ambiguous messages,
    one-offs or refs: those are the decisions of the oracle, made by reading the gold labels, and
    ranked only as what they are (an oracle relabelled, or edited where the ranking does not read,
    would top every table). The policy is the one the rows name."""
    from ..route.baselines import OracleRouter
    from ..score.routing import routes_strict_as_gold

    oracle = OracleRouter.policy
    errs: list[InputError] = []
    for p, doc in zip(paths, docs):
        if doc.get("kind") in SUMMARY_KINDS or doc.get("policy") == oracle:
            continue
        if routes_strict_as_gold(doc):
            said = repr(doc["policy"]) if doc.get("policy") else "no policy"
            strict = doc["counts"]["strict"]
            errs.append(InputError(p, None, "policy", f"{said}, but every one of the {strict:,} strict messages the "
                                                      "ranking counts is routed where its gold puts it (accuracy 1): "
                                                      "the oracle baseline's place, which reading the gold labels "
                                                      f"gives; the board ranks it only as the oracle (policy {oracle!r})"))
    if errs:
        raise InputErrors(errs)


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


#: the data configs a row of each kind can have been scored on (routing: every session config)
KIND_CONFIGS = {KIND_ROUTING: tuple(CONFIG_VERSIONS), KIND_MID_REPLY: ("mid_reply",), KIND_SHARED_FACTS: ("v1",)}


def check_data_revisions(api: Any, rows: list[dict[str, Any]], paths: list[str], board: list[dict[str, Any]]) -> None:
    """Resolve every claimed data revision to its commit and refuse runs scored on other data.

    A row claims a revision when its ``data_revision`` is not its own data fingerprint. The data
    repo comes from the row (``--data-repo`` or the score's provenance), else from the board's
    rows on that revision. The fingerprint of every config the row's kind can use is computed from
    the Parquet files at that commit (on the records, as scoring does); the row's must be one of
    them. Sets ``data_commit`` and ``data_config`` (the config holding that data) on the rows. Raises :class:`InputErrors` naming each file.
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
        config = r.get("data_config")
        match = [c for c, fp in have.items() if fp == r["data_sha256"] and config in (None, c)]
        if match:
            r["data_config"] = match[0]
        else:
            there = ", ".join(f"{c} {fp}" for c, fp in have.items()) or f"no {'/'.join(KIND_CONFIGS[kind])} data"
            errs.append(InputError(p, None, "provenance.data_sha256",
                                   f"scored on data {r['data_sha256']}, but {repo}@{rev} (commit {commit[:12]}) holds "
                                   f"{there}: the run was not scored on that revision"))
    if errs:
        raise InputErrors(errs)


# --- the rules -----------------------------------------------------------------------------------------


def run_key(row: dict[str, Any]) -> tuple:
    """The run's identity (:data:`RUN_KEY`), its name compared case-folded; a row without a kind is a routing row."""
    return (name_key(row.get("system")), *table_key(row))


def table_key(row: dict[str, Any]) -> tuple:
    """The table a row is ranked in (:data:`TABLE_KEY`); a row without a kind is a routing row."""
    return (row.get("kind") or KIND_ROUTING, *(row.get(k) for k in TABLE_KEY[1:]))


def decisions_key(row: dict[str, Any]) -> tuple:
    """A run's decisions in its table (:data:`TABLE_KEY`): the same decisions are one run of a table."""
    return (*table_key(row), row.get("decisions_sha256"))


def check_intervals(rows: list[dict[str, Any]], paths: list[str]) -> None:
    """Refuse a row whose ranking metrics are undefined or come without their 95% interval.

    The board shows every headline number beside its interval, and ranks on :data:`RANK_METRICS`;
    a run scored without intervals (``--bootstrap 0``) or on nothing it could count is refused.
    """
    errs: list[InputError] = []
    for p, r in zip(paths, rows):
        ranked = RANK_METRICS if (r.get("kind") or KIND_ROUTING) == KIND_ROUTING else ("accuracy",)
        for m in ranked:
            if r.get(m) is None:
                errs.append(InputError(p, None, _field(r, m), "undefined (nothing to count it on): the board ranks on it"))
                break
            if r.get(f"{m}_lo") is None or r.get(f"{m}_hi") is None:
                errs.append(InputError(p, None, _field(r, f"{m}_lo"), "missing: the board shows every headline number "
                                                                      "with its 95% interval (score with --bootstrap N)"))
                break
    if errs:
        raise InputErrors(errs)


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
    """Refuse duplicates in a table (a name already there, the same predictions file, the same rows
    in another order or layout, the same routing decisions whatever else the rows say) and rows on
    another data revision; raises InputErrors naming each file. One predictions file may be ranked
    in several tables: routed on every split (``route --split all``), it is scored on dev and on test.

    Rows published before ``decisions_sha256`` was recorded have none: against them, the rows
    (``rows_sha256``) and the predictions file are what is compared."""
    errs: list[InputError] = []
    by_key = {run_key(r): r for r in existing}
    by_pred = {(*table_key(r), r.get("predictions_sha256")): r for r in existing}
    by_rows = {(*table_key(r), r["rows_sha256"]): r for r in existing if r.get("rows_sha256") is not None}
    by_decisions = {decisions_key(r): r for r in existing if r.get("decisions_sha256") is not None}
    revisions = {r["data_revision"] for r in new}
    if len(revisions) > 1:
        errs.append(InputError(paths[0], None, "provenance.data_sha256",
                               f"the runs given were scored on {len(revisions)} data revisions "
                               f"({', '.join(sorted(revisions))}); add one revision at a time"))
    board_rev = current_revision(existing)
    for p, r in zip(paths, new):
        if run_key(r) in by_key:
            old = by_key[run_key(r)]
            named = ("" if old.get("system") == r.get("system")
                     else f" as {old.get('system')} (names are one row of a table, case and spacing aside)")
            errs.append(InputError(p, None, None, f"duplicate: {describe(r)} on data revision {r['data_revision']} "
                                                  f"is already on the board{named} (published in "
                                                  f"{old.get('publication') or 'this add'})"))
        elif (*table_key(r), r["predictions_sha256"]) in by_pred:
            old = by_pred[(*table_key(r), r["predictions_sha256"])]
            errs.append(InputError(p, None, "provenance.predictions_sha256",
                                   f"duplicate: the same predictions are already on the board as {describe(old)} "
                                   f"(published in {old.get('publication') or 'this add'})"))
        elif r.get("rows_sha256") is not None and (*table_key(r), r["rows_sha256"]) in by_rows:
            old = by_rows[(*table_key(r), r["rows_sha256"])]
            errs.append(InputError(p, None, "rows_sha256",
                                   f"duplicate: the same rows, in another order or layout, are already on the board as "
                                   f"{describe(old)} (published in {old.get('publication') or 'this add'})"))
        elif r.get("decisions_sha256") is not None and decisions_key(r) in by_decisions:
            old = by_decisions[decisions_key(r)]
            errs.append(InputError(p, None, "decisions_sha256",
                                   f"duplicate: the same routing decisions (each message's label, and whether its refs "
                                   f"score) are already on the board as {describe(old)} (published in {old.get('publication') or 'this add'}): "
                                   "a run relabelled (policy, via, model, usage, name), or edited where the scorer "
                                   "does not read, is the same run"))
        elif (r["data_revision"] == board_rev and (same_config := {
                o.get("data_sha256") for o in existing
                if o.get("data_revision") == board_rev and o.get("data_config") == r.get("data_config")})
              and r["data_sha256"] not in same_config):
            errs.append(InputError(p, None, "provenance.data_sha256",
                                   f"scored on data {r['data_sha256']}, but the runs on revision {board_rev} were "
                                   "scored on other data: check --data-revision"))
        elif board_rev is not None and r["data_revision"] != board_rev and not new_board:
            errs.append(InputError(p, None, "data_revision", _other_revision(r, board_rev, existing)))
        by_key.setdefault(run_key(r), r)
        by_pred.setdefault((*table_key(r), r["predictions_sha256"]), r)
        if r.get("rows_sha256") is not None:
            by_rows.setdefault((*table_key(r), r["rows_sha256"]), r)
        if r.get("decisions_sha256") is not None:
            by_decisions.setdefault(decisions_key(r), r)
    if errs:
        raise InputErrors(errs)


def _other_revision(row: dict[str, Any], board_rev: str, existing: list[dict[str, Any]]) -> str:
    """Why ``row``, on another revision than the board's ``board_rev``, is not ranked: other data, or
    (a fingerprint of the board's rows) the same sessions under a revision that is not the board's commit."""
    rev, ranked = row["data_revision"], [o for o in existing if o.get("data_revision") == board_rev]
    same = next((o for o in ranked if o.get("data_sha256") == row["data_sha256"]), None)
    if same is None:
        return (f"scored on data revision {rev}, but the board ranks {board_rev}: runs on different data are never "
                "ranked together (use --new-board to start a new ranking on this revision)")

    def at(r: dict[str, Any]) -> str:
        return f" (commit {r['data_commit'][:12]})" if r.get("data_commit") else ""

    return (f"scored on data revision {rev}{at(row)}, not on the board's {board_rev}{at(same)}, though it holds the "
            f"same sessions: the board ranks the runs of one revision (score the run on {board_rev}, or on the data "
            f"itself, to join them, or use --new-board to start a new ranking on {rev})")


def align_revisions(existing: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    """Name new rows' data as the board does when they were scored on the very same data.

    A row whose fingerprint is that of the rows the board ranks takes the board's revision (and
    data repo) when its revision defaulted to that fingerprint (no ``--data-revision``: the same
    file), or when the revision it names resolved (:func:`check_data_revisions`) to the board's
    commit of the same repo (its commit id, or another name of that commit): the same data under
    its published name. Rows are changed in place.
    """
    board_rev = current_revision(existing)
    ranked = [r for r in existing if r.get("data_revision") == board_rev]
    by_sha = {r.get("data_sha256"): r for r in ranked}
    for r in new:
        same = by_sha.get(r["data_sha256"])
        if same is None:
            continue
        same_commit = (r.get("data_commit") is not None and r.get("data_commit") == same.get("data_commit")
                       and r.get("data_repo") == same.get("data_repo"))
        if r["data_revision"] == r["data_sha256"] or same_commit:
            r["data_revision"] = board_rev
            r["data_repo"] = r["data_repo"] or same.get("data_repo")
            r["data_config"] = r.get("data_config") or same.get("data_config")
            r["data_commit"] = r.get("data_commit") or same.get("data_commit")


def next_tag(tags: Iterable[str]) -> str:
    """``board-<n+1>`` after the highest publication tag (``board-1`` on a new board)."""
    return f"{TAG_PREFIX}{max((_pub_number(t) for t in tags), default=0) + 1}"
