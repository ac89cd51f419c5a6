"""The leaderboard: a dataset of one row per scored run, published one tagged commit per addition.

Rows come from the ``score.json`` files the scorer writes (format ``interleave-score-v1``). The
board is a dataset repo holding ``data/leaderboard.parquet`` and a README whose YAML declares its
features, so ``load_dataset("<org>/<name>-leaderboard", split="runs")`` loads it with types; the
README's prose is the current ranking. Every ``add`` is one commit tagged ``v1``, ``v2``..., so
any earlier state of the board stays citable.

What is refused (exit 2, nothing published): a score without provenance (no data or predictions
fingerprint); a run already on the board (same system, mode, policy, model, split and data
revision, or the same predictions fingerprint); a run on another data revision than the one the
board ranks, unless ``--new-board`` starts a new ranking (earlier rows stay, unranked).

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
#: publications are tagged v1, v2, ... in order
TAG_PREFIX = "v"
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
#: the metrics the ranking table shows (headers are their display names)
TABLE_METRICS = ("accuracy", "weighted_error", "accuracy_lenient", "bcubed_f1", "switch_f1", "oneoff_into_topic")


def board_features():
    """The board's ``datasets.Features`` (flat, so the Hub viewer can sort every column)."""
    from datasets import Features, Value

    cols: dict[str, Any] = {
        name: Value("string")
        for name in ("system", "policy", "model", "mode", "split", "data_repo", "data_revision", "data_sha256",
                     "predictions_sha256")
    }
    for m in HEADLINE_METRICS:
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
        "system": doc.system.strip(),
        "policy": doc.policy,
        "model": model if model is not None else doc.model,
        "mode": doc.mode,
        "split": doc.split,
        "data_repo": data_repo,
        "data_revision": data_revision or prov.data_sha256,
        "data_sha256": prov.data_sha256,
        "predictions_sha256": prov.predictions_sha256,
    }
    for m in HEADLINE_METRICS:
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


def read_score_rows(paths: Iterable[str], **kw: Any) -> list[dict[str, Any]]:
    """Rows from score files; every file's problems are collected before raising."""
    rows, errs = [], []
    for p in paths:
        try:
            rows.append(row_from_score(p, read_json(p), **kw))
        except InputErrors as exc:
            errs += exc.errors
        except InputError as exc:
            errs.append(exc)
    if errs:
        raise InputErrors(errs)
    return rows


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
    m = re.fullmatch(rf"{TAG_PREFIX}(\d+)", tag or "")
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
    """``v<n+1>`` after the highest ``v<n>`` tag (``v1`` on a new board)."""
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


def render_table(group: Group) -> str:
    """One ranking table in markdown."""
    tokens, cost_m = metric("input_tokens_per_message"), metric("cost_usd_per_message")
    head = ["rank", "system", "policy", "model", *(metric(m).display for m in TABLE_METRICS), tokens.display,
            cost_m.display, "published"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k, r in enumerate(group.rows, start=1):
        cost = r.get("cost_usd_per_message")
        cells = [
            str(k),
            r.get("system") or "",
            r.get("policy") or "-",
            r.get("model") or "-",
            *(fmt_interval(r, m, metric(m).shown) for m in TABLE_METRICS),
            fmt_value(r.get(tokens.key), 1),
            "n/a" if cost is None else f"${cost:.{cost_m.shown}f}",
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
    new = read_score_rows(score_paths, system=system, model=model, data_repo=data_repo, data_revision=data_revision)
    client.require_token()
    api = client.hub_api()
    what = f"leaderboard add to {repo_id}"
    with client.hub_errors(what):
        api.create_repo(repo_id, repo_type=client.REPO_TYPE, private=private, exist_ok=True)
        state = fetch_board(api, repo_id)
    if data_revision is None:
        align_revisions(state.rows, new)
    check_additions(state.rows, new, list(score_paths), new_board=new_board)
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


def show(repo_id: str, *, revision: Optional[str] = None, data_revision: Optional[str] = None) -> str:
    """The board at ``revision`` (default: latest) as markdown: a heading and the ranking tables."""
    client.check_repo_id(repo_id)
    api = client.hub_api()
    with client.hub_errors(f"leaderboard show {repo_id}"):
        state = fetch_board(api, repo_id, revision)
    rev, tables, left_out = render_markdown(state.rows, data_revision)
    at = revision or "main"
    commit = state.tags.get(at) or (state.head if at == "main" else at)
    tags_here = sorted((t for t, c in state.tags.items() if c == commit), key=_pub_number)
    title = f"# {repo_id} at {at}" + (f" ({', '.join(tags_here)})" if tags_here and at not in tags_here else "")
    ranked = len(state.rows) - left_out
    lines = [title, "", f"data revision: `{rev}`; {ranked} run{'s' if ranked != 1 else ''} ranked"
             + (f", {left_out} on other data revisions not shown" if left_out else ""), "", tables]
    return "\n".join(lines)
