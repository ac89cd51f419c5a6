"""The mid-reply markdown table: headline rates and every breakdown, one row per group.

Each cell is a percentage with its 95% Wilson interval; the two mistakes also show ``k/n`` so a
reader sees how many cases a rate stands on. A rate over no cases is shown as an en dash.
"""

from __future__ import annotations

from typing import Any

from ..score.stats import wilson
from ..score.table import family
from .metrics import BREAKDOWNS

#: the rates the table shows (``wrong_elsewhere`` is the rest of the cases sent elsewhere and
#: would crowd it): ``(key in the summary, heading)`` from the metric table, in table order
SHOWN = ("accuracy", "right_side", "mixed_in", "split_off")
COLUMNS = tuple((m.json_key, m.display) for m in family("mid_reply") if m.json_key in SHOWN)
#: rates whose cell also shows k/n
WITH_COUNTS = ("mixed_in", "split_off")
#: the row label of each breakdown
DIMENSION_LABELS = {"lang": "lang", "how": "how", "expect": "expect", "tag": "tag"}


def cell(r: dict[str, Any], counts: bool = False) -> str:
    """``71.7% [59.2–81.5]`` (with ``(k/n)`` before the interval when ``counts``); ``–`` when undefined."""
    if r["value"] is None:
        return "–"
    # from k and n, not the 4-decimal figures, so a bound is rounded once (9.45% -> 9.5%, not 9.4%)
    lo, hi = wilson(r["k"], r["n"])
    text = f"{100 * r['k'] / r['n']:.1f}%"
    if counts:
        text += f" ({r['k']}/{r['n']})"
    return f"{text} [{100 * lo:.1f}–{100 * hi:.1f}]"


def _row(label: str, h: dict[str, Any]) -> str:
    cells = [label, str(h["n"])] + [cell(h[key], key in WITH_COUNTS) for key, _ in COLUMNS]
    return "| " + " | ".join(cells) + " |"


def markdown_table(summary: dict[str, Any]) -> str:
    """The table for a :func:`~interleave_bench.midreply.metrics.summarize` result (no trailing newline)."""
    head = ["group", "n"] + [title for _, title in COLUMNS]
    lines = [
        "| " + " | ".join(head) + " |",
        "|" + "|".join(["---", "--:"] + ["--:"] * len(COLUMNS)) + "|",
        _row("**all**", summary),
    ]
    for dim in BREAKDOWNS:
        for name, h in summary.get(f"by_{dim}", {}).items():
            lines.append(_row(f"{DIMENSION_LABELS[dim]}={name}", h))
    return "\n".join(lines)


def decisions_line(vias: dict[str, int]) -> str:
    """``decided by: classifier 44, ack 5, unsure 3, ...`` (non-zero counts, largest first)."""
    parts = [f"{k} {v}" for k, v in sorted(vias.items(), key=lambda kv: (-kv[1], kv[0])) if v]
    return "decided by: " + (", ".join(parts) if parts else "nothing")
