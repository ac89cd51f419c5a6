"""The leaderboard's ranking and its markdown, README and HTML renderings: pure functions of the rows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .. import __version__
from ..score.table import metric, rank_key
from . import card as cardlib
from .board_checks import current_revision
from .board_rows import BOARD_FILE, BOARD_SPLIT, COLUMN_METRICS, HEADLINE_METRICS, KIND_RATES, KIND_ROUTING, RANK_METRICS, board_features

#: the metrics the ranking table of routing runs shows (headers are their display names)
TABLE_METRICS = ("accuracy", "weighted_error", "accuracy_lenient", "bcubed_f1", "switch_f1", "oneoff_into_topic")


@dataclass
class Group:
    split: str
    mode: str
    rows: list[dict[str, Any]]
    #: the data config the rows were scored on, when the rows name one (configs are ranked apart)
    config: Optional[str] = None

    @property
    def title(self) -> str:
        """``config v1, split dev, mode closed`` (the config only when known)."""
        return self.heading("")

    def heading(self, mark: str = "`") -> str:
        """:attr:`title` with ``mark`` around each name (markdown code by default)."""
        where = f"config {mark}{self.config}{mark}, " if self.config else ""
        return f"{where}split {mark}{self.split}{mark}, mode {mark}{self.mode}{mark}"


def rank(rows: list[dict[str, Any]], data_revision: Optional[str] = None) -> tuple[Optional[str], list[Group], int]:
    """``(revision, groups, left_out)``: the rows on one data revision (default: the current one),
    grouped by config, split and mode and sorted by :data:`RANK_METRICS`; ``left_out`` counts rows on others.
    Missing values sort last.
    """
    rev = data_revision or current_revision(rows)
    on = [r for r in rows if r.get("data_revision") == rev]
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in on:
        groups.setdefault((r.get("data_config") or "", r.get("split") or "", r.get("mode") or ""), []).append(r)

    def key(r: dict[str, Any]) -> tuple:
        out = [x for m in RANK_METRICS for x in rank_key(m, r.get(m))]
        return (*out, r.get("system") or "", r.get("policy") or "", r.get("model") or "")

    out = [Group(s, m, sorted(g, key=key), c or None) for (c, s, m), g in sorted(groups.items())]
    return rev, out, len(rows) - len(on)


def fmt_value(v: Optional[float], digits: int) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def digits_of(row: dict[str, Any], column: str) -> int:
    """The decimals a board table shows of ``column`` in ``row``: its metric's table decimals
    (the board holds what the score file holds, so a cell is never that value rounded again); a
    column every kind of row has (tokens, cost) is a metric of its own name."""
    return metric(COLUMN_METRICS[row.get("kind") or KIND_ROUTING].get(column, column)).shown


def fmt_interval(row: dict[str, Any], column: str) -> str:
    """``0.7341 [0.7020, 0.7652]``, or the bare value when the run has no interval for it."""
    v, lo, hi = row.get(column), row.get(f"{column}_lo"), row.get(f"{column}_hi")
    digits = digits_of(row, column)
    if v is None:
        return "n/a"
    if lo is None or hi is None:
        return fmt_value(v, digits)
    return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def fmt_cost(row: dict[str, Any]) -> str:
    """A row's cost per message in dollars, ``n/a`` when its price is unknown."""
    cost = row.get("cost_usd_per_message")
    return "n/a" if cost is None else f"${fmt_value(cost, digits_of(row, 'cost_usd_per_message'))}"


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
        cells = [
            str(k),
            r.get("system") or "",
            r.get("policy") or "-",
            r.get("model") or "-",
            *(fmt_interval(r, m) for m, _ in shown),
            fmt_value(r.get("input_tokens_per_message"), digits_of(r, "input_tokens_per_message")),
            fmt_cost(r),
            r.get("publication") or "-",
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def render_markdown(rows: list[dict[str, Any]], data_revision: Optional[str] = None) -> tuple[str, str, int]:
    """``(revision, tables, left_out)``: the ranking tables, one per split and mode, in markdown."""
    rev, groups, left_out = rank(rows, data_revision)
    if not groups:
        return rev or "none", "No runs on this data revision yet.", left_out
    parts = [f"### {g.heading()}\n\n{render_table(g)}" for g in groups]
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


def board_html(repo_id: str, state: BoardState, at: str, data_revision: Optional[str] = None) -> str:
    """The board as one self-contained HTML page (:func:`interleave_bench.reports.page.board_page`):
    per split and mode, the ranking table, accuracy with its interval and accuracy against cost."""
    from ..reports.page import BoardTable, Point, board_page

    rev, groups, left_out = rank(state.rows, data_revision)
    tables = []
    for g in groups:
        shown = table_metrics(g.rows[0].get("kind") if g.rows else None)
        header = ["rank", "system", "policy", "model", *(h for _, h in shown), "cost / msg", "published"]
        rows = [[str(k), r.get("system") or "", r.get("policy") or "-", r.get("model") or "-",
                 *(fmt_interval(r, m) for m, _ in shown),
                 fmt_cost(r),
                 r.get("publication") or "-"] for k, r in enumerate(g.rows, start=1)]
        points = [Point(r.get("system") or "", r.get("accuracy"), r.get("accuracy_lo"), r.get("accuracy_hi"),
                        r.get("cost_usd_per_message")) for r in g.rows]
        tables.append(BoardTable(g.title, header, rows, points))
    intro = (f"{repo_id} at {at}; data revision {rev or 'none'}; {len(state.rows) - left_out} runs ranked"
             + (f", {left_out} on other data revisions not shown" if left_out else ""))
    return board_page(page_title(repo_id), intro, tables)


#: what a board's page title ends with; a repo named so already says it (no "...-leaderboard leaderboard")
BOARD_WORD = "leaderboard"


def page_title(repo_id: str) -> str:
    """The board page's title: the repo id, with " leaderboard" unless its name already ends so."""
    return repo_id if repo_id.lower().rstrip("/").endswith(BOARD_WORD) else f"{repo_id} {BOARD_WORD}"
