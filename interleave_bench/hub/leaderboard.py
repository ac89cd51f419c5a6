"""The leaderboard: a dataset of one row per scored run, published one tagged commit per addition.

The board computes, never trusts: a row comes from a run's predictions and the data revision it
was routed on, scored here with the project's scorer (:mod:`.board_score`); a score file or
summary may come along, and each figure it states must equal the computed one. The board is a
dataset repo holding ``data/leaderboard.parquet`` and a README whose YAML declares its features,
so ``load_dataset("<org>/<name>-leaderboard", split="runs")`` loads it with types; the README's
prose is the current ranking. Every ``add`` is one commit tagged ``board-1``, ``board-2``..., so
any earlier state of the board stays citable (and no tag reads like a data config such as ``v1``;
boards published before this naming keep their ``v<n>`` tags, counted on).

The jobs, one file each: the rows and their columns (:mod:`.board_rows`), the scoring of what is
given (:mod:`.board_score`), the rules a new row must satisfy (:mod:`.board_checks`), the ranking
and its renderings (:mod:`.board_render`); this module is the Hub side (read, publish, show) and
keeps every name other modules import. The rules are listed in
docs/leaderboard.md.
"""

from __future__ import annotations

import datetime as dt
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .. import __version__
from ..errors import InputError, UsageError, exc_text, shown
from . import client
from .outgoing import refuse_secret_files
from .source import HUB_PREFIX
from .board_checks import (  # noqa: F401 - the board's rules, importable from here as before
    KIND_CONFIGS,
    LEGACY_TAG_PREFIX,
    RUN_KEY,
    TAG_PREFIX,
    _pub_number,
    align_revisions,
    check_additions,
    check_complete,
    check_data_revisions,
    check_intervals,
    check_oracle,
    check_out_of_sample,
    check_real_model,
    check_shown,
    check_values,
    current_revision,
    describe,
    next_tag,
    run_key,
)
from .board_render import (  # noqa: F401 - the ranking and its renderings, importable from here as before
    TABLE_METRICS,
    Group,
    board_card,
    board_html,
    fmt_interval,
    fmt_value,
    rank,
    render_markdown,
    render_table,
    table_metrics,
)
from .board_score import score_given
from .board_rows import (  # noqa: F401 - the rows, importable from here as before
    BOARD_FILE,
    BOARD_SPLIT,
    COST_FIELDS,
    FACTS_RATES,
    FACTS_STRATEGY,
    HEADLINE_METRICS,
    INTERVAL_COLUMNS,
    KIND_MID_REPLY,
    KIND_RATES,
    KIND_ROUTING,
    KIND_SHARED_FACTS,
    RANK_METRICS,
    SUMMARY_KINDS,
    board_features,
    row_from_score,
    row_from_summary,
    value_range,
)

# --- the Hub side --------------------------------------------------------------------------------------------


@dataclass
class BoardState:
    head: Optional[str]
    tags: dict[str, str]
    rows: list[dict[str, Any]]


def _read_rows(path: str, label: Optional[str] = None) -> list[dict[str, Any]]:
    """The board's rows; columns an older version did not write come back as null.

    ``label`` names the file in messages (``hub:ORG/NAME@REV/data/leaderboard.parquet``). A board
    with columns this version does not know was written by a newer version: re-publishing it here
    would drop them, so it is refused. Every row must be a :class:`LeaderboardRow` with finite
    numbers (a board edited by hand may hold anything): one line names the first row and column
    at fault.
    """
    import math

    import pyarrow.parquet as pq
    from pydantic import ValidationError

    from ..documents import LeaderboardRow, document_problem

    label = label or path
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:  # pyarrow's own errors are these: a file it cannot read as a table
        said = exc_text(exc).replace(path, Path(path).name)
        raise InputError(label, None, None, f"not a Parquet file the board can read ({said})") from None
    names = list(board_features())
    unknown = [c for c in table.column_names if c not in names]
    if unknown:
        raise UsageError(f"{label}: the board has columns this interleave-bench ({__version__}) does not know "
                         f"({', '.join(unknown)}): upgrade the package before adding to it")
    rows = [{n: r.get(n) for n in names} for r in table.to_pylist()]
    kinds = {n: f.dtype for n, f in board_features().items()}
    for k, row in enumerate(rows, start=1):
        for col, v in row.items():
            if v is None:
                continue
            if not isinstance(v, _TYPES[kinds[col]]) or isinstance(v, bool):
                raise InputError(label, k, col, f"{shown(v, 40)} is not of the column's type ({kinds[col]})")
            if isinstance(v, float) and not math.isfinite(v):
                raise InputError(label, k, col, f"{v} is not a number the board publishes (a value must be finite)")
        try:
            LeaderboardRow.model_validate(row)
        except ValidationError as exc:
            bad = document_problem(label, exc, "a row of the board")
            raise InputError(label, k, bad.field, bad.message) from None
    return rows


#: what a value of each board column type may be once read (an int64 count reads as int)
_TYPES = {"string": (str,), "float64": (float, int), "int64": (int,)}


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
                rows = _read_rows(path, f"{HUB_PREFIX}{repo_id}@{_short_rev(rev)}/{BOARD_FILE}")
            except EntryNotFoundError:
                rows = []
    return BoardState(head, tags, rows)


def _short_rev(rev: str) -> str:
    """A revision for messages: a commit as its first 12 digits, a tag or branch as named."""
    return rev[:12] if re.fullmatch(r"[0-9a-f]{40}", rev) else rev


@dataclass
class AddResult:
    repo_id: str
    tag: str
    commit: str
    added: list[dict[str, Any]]
    rows: list[dict[str, Any]]


def add_runs(
    paths: list[str],
    repo_id: str,
    *,
    data: Optional[str] = None,
    system: Optional[str] = None,
    model: Optional[str] = None,
    data_repo: Optional[str] = None,
    data_revision: Optional[str] = None,
    split: Optional[str] = None,
    new_board: bool = False,
    private: bool = False,
    now: Optional[dt.datetime] = None,
) -> AddResult:
    """Score each run given and add one row per run to the board ``repo_id``, published as one commit plus a tag.

    ``paths`` are predictions files (scored on ``data``) or score files and summaries (recomputed
    from the files they name, :func:`~.board_score.score_given`); every row holds what the board
    computed. Every check runs before anything is written. Returns the tag, commit and rows now on
    the board.
    """
    client.check_repo_id(repo_id)
    scored = score_given(list(paths), data=data, system=system, model=model, data_repo=data_repo,
                         data_revision=data_revision, split=split)
    new, docs, where = [secret_free(s.row) for s in scored], [s.doc for s in scored], [s.path for s in scored]
    check_shown(new, where)
    check_values(new, where)
    check_intervals(new, where)
    check_complete(docs, where)
    check_real_model(docs, where)
    check_out_of_sample(docs, where)
    client.require_token()
    api = client.hub_api()
    what = f"leaderboard add to {repo_id}"
    with client.hub_errors(what):
        api.create_repo(repo_id, repo_type=client.REPO_TYPE, private=private, exist_ok=True)
        state = fetch_board(api, repo_id)
    check_data_revisions(api, new, where, state.rows)
    align_revisions(state.rows, new)
    pending = finish_publication(api, repo_id, state)
    if pending is not None and (same := _same_runs(pending, new, state.rows)) is not None:
        return AddResult(repo_id, pending, state.head, same, state.rows)
    check_additions(state.rows, new, where, new_board=new_board)
    check_oracle(docs, where)  # after the duplicates: a copy of the oracle on the board is named as such
    tag = next_tag(state.tags)
    stamp = (now or dt.datetime.now(dt.timezone.utc)).replace(microsecond=0).isoformat()
    for r in new:
        r["date"] = stamp
        r["publication"] = tag
    rows = state.rows + new
    names = ", ".join(describe(r) for r in new)
    with tempfile.TemporaryDirectory(prefix="interleave-board-") as tmp:
        files = write_board(Path(tmp), repo_id, rows, tag)
        try:
            info = _publish_commit(api, repo_id, Path(tmp), files, f"Add {names} ({tag})", state.head)
        except UsageError as exc:
            raise UsageError(f"{exc}; {_left_at(api, repo_id, state.head)}") from None
    _publish_tag(api, repo_id, tag, info.oid, names, f"commit {info.oid[:12]} is on main but was not tagged {tag!r}: "
                                                     "run the add again to tag it")
    return AddResult(repo_id, tag, info.oid, new, rows)


# --- what the board sends to the Hub: every upload passes here ------------------------------------------------
#
# Nothing the board publishes holds a secret (docs/leaderboard.md#secrets): the rows are written
# redacted (:func:`write_board`), the texts sent (a commit's title and description, a tag's message)
# are redacted here, and every file is read back before it is sent: one that still holds a secret
# (a field or file added later that no writer redacts) is refused, and nothing is published.


def _publish_commit(api: Any, repo_id: str, folder: Path, files: list[str], title: str, parent: Optional[str]) -> Any:
    """Commit ``files`` (relative to ``folder``) to the board with ``title``, on top of ``parent``; the
    only commit the board makes. Refuses a file that holds a secret, as ``push`` does
    (:func:`~.outgoing.refuse_secret_files`: its path, its bytes and every Parquet value)."""
    from huggingface_hub import CommitOperationAdd

    refuse_secret_files([(folder / rel, rel, rel) for rel in files])
    ops = [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(folder / rel)) for rel in files]
    with client.hub_errors(f"leaderboard add to {repo_id}"):
        return api.create_commit(repo_id, ops, commit_message=client.scrub(title),
                                 commit_description=client.scrub(f"interleave-bench {__version__}"),
                                 repo_type=client.REPO_TYPE, parent_commit=parent)


def _publish_tag(api: Any, repo_id: str, tag: str, commit: str, names: str, after: str) -> None:
    """Tag ``commit`` as the publication ``tag`` of the runs ``names``; the only tag the board makes."""
    with client.hub_errors(f"leaderboard add to {repo_id}", after=after):
        api.create_tag(repo_id, tag=tag, revision=commit, repo_type=client.REPO_TYPE,
                       tag_message=client.scrub(f"leaderboard publication {tag}: {names}"))


def secret_free(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with every secret in its text redacted (:func:`~.client.scrub`): a model named by a URL
    with its key (``gpt-4o@https://host/v1?api_key=...``), a path holding a token. Numbers are as they were."""
    return {k: client.scrub(v) if isinstance(v, str) else v for k, v in row.items()}


def unfinished_publication(state: BoardState) -> Optional[str]:
    """The tag of a publication the board's head holds but that was never tagged, else None.

    An add commits the board and then tags the commit; one stopped in between (Ctrl-C, a failed
    tag request) leaves rows naming a publication newer than every tag.
    """
    latest = max((r.get("publication") for r in state.rows if r.get("publication")), key=_pub_number, default=None)
    if state.head is None or latest is None or latest in state.tags:
        return None
    if _pub_number(latest) <= max((_pub_number(t) for t in state.tags), default=0):
        return None
    return latest


def finish_publication(api: Any, repo_id: str, state: BoardState) -> Optional[str]:
    """Tag the head with the publication an interrupted add committed but did not tag
    (:func:`unfinished_publication`); returns that tag, or None when every publication is tagged.
    Says so on stderr, naming the rows it holds."""
    import sys

    tag = unfinished_publication(state)
    if tag is None:
        return None
    names = ", ".join(describe(r) for r in state.rows if r.get("publication") == tag)
    _publish_tag(api, repo_id, tag, state.head, names, f"commit {state.head[:12]} is on main but was not tagged {tag!r}")
    state.tags[tag] = state.head
    print(f"tagged {tag} ({names}): commit {state.head[:12]}, published by an add that stopped before tagging it",
          file=sys.stderr)
    return tag


def _same_runs(tag: str, new: list[dict[str, Any]], board: list[dict[str, Any]]) -> Optional[list[dict[str, Any]]]:
    """The board's rows of publication ``tag`` when ``new`` are exactly those runs (the interrupted add
    run again), else None."""
    theirs = [r for r in board if r.get("publication") == tag]
    key = lambda r: (run_key(r), r.get("predictions_sha256"))  # noqa: E731
    if sorted(map(key, theirs)) != sorted(map(key, new)):
        return None
    order = {key(r): r for r in theirs}
    return [order[key(r)] for r in new]


def _left_at(api: Any, repo_id: str, read: Optional[str]) -> str:
    """What a failed publication left: the board's current head, read again (another add may have
    moved it since this one read the board at ``read``)."""
    try:
        refs = api.list_repo_refs(repo_id, repo_type=client.REPO_TYPE)
        head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
    except Exception:  # noqa: BLE001 - the Hub failing again: say what this add read, as such
        head = None
    if head is None:
        return f"nothing was published; the board was at {read and read[:12]} when this add read it"
    if head != read:
        return (f"nothing was published; the board is at {head[:12]}, moved by another publication since this add "
                f"read it at {read and read[:12]}: run the add again")
    return f"nothing was published; the board is still at {head[:12]}"


def write_board(folder: Path, repo_id: str, rows: list[dict[str, Any]], publication: str) -> list[str]:
    """Write the board's Parquet file and README into ``folder``; returns their relative paths.

    Every row is written :func:`secret_free` (the board's earlier rows too), and the README is made
    from those rows."""
    import datasets

    from .export import quiet_datasets

    rows = [secret_free(r) for r in rows]
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
    files = eval_results_files(mine, lambda tag: client.repo_url(repo_id, tag or at))
    if not files:
        raise UsageError(f"{repo_id}: no row of model {model!r} on the ranked data revision reports on a task "
                         "(tasks are on the test split and need --data-repo on the row)")
    return files


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
