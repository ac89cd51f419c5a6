"""One static, self-contained HTML page for people: tables, intervals and plots of scored runs.

:func:`report_page` renders score documents (``interleave-score-v1``) and, optionally, a
comparison document (``interleave-compare-v1``): the main table, accuracy with its 95% interval
per system, accuracy against cost per message, accuracy by gold action and by message style, and
the flipped messages of the comparison. :func:`board_page` renders leaderboard tables the same
way. Plots are drawn with matplotlib (the optional extra ``plots``) and embedded as base64 PNG, so
the page is one file with no outside reference; without matplotlib the page says so plainly and
keeps every table. Nothing here reads or writes files.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from ..score.table import HEADLINE, metric
from .tables import (CALIBRATION_HEADER, PARTIAL_MARK, WITH_INTERVAL, calibration_rows, cost_cell, cost_unknown_why, fmt,
                     fmt_interval, mcnemar_text, partial_note, system_cell)

#: how many flipped messages the comparison section lists (most telling first)
FLIPS_SHOWN = 25
#: the breakdowns the page shows, with their headings
BREAKDOWNS = (("action", "by gold action"), ("style", "by message style"))
#: what the page says when matplotlib is missing
NO_PLOTS = ("Plots are not drawn: matplotlib is not installed. Install the optional extra "
            "(<code>pip install 'interleave-bench[plots]'</code>) and run the command again; every table is below.")
#: how a comma inside a numeric cell is written, so the cell wraps only at its other spaces
NBSP_AFTER_COMMA = ",&nbsp;"
#: plot size in inches and resolution: readable on a laptop screen, small enough to embed
FIG_WIDTH, ROW_HEIGHT, DPI = 7.5, 0.42, 110

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; color: #222; }
.table { overflow-x: auto; max-width: 100%; margin: 0.5rem 0 1.5rem; }
table { border-collapse: collapse; font-size: 0.8rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.4rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { background: #fff6d5; border: 1px solid #e5c75c; padding: 0.5rem 0.75rem; }
img { max-width: 100%; }
"""


@dataclass(frozen=True)
class Point:
    """One system on a plot: its label, value, interval and cost per message (any may be missing)."""

    label: str
    value: Optional[float]
    lo: Optional[float] = None
    hi: Optional[float] = None
    cost: Optional[float] = None
    why: Optional[str] = None  # why the cost is missing, as a table says it (:func:`.tables.cost_unknown_why`)


def have_matplotlib() -> bool:
    """Whether the optional plotting library can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def esc(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def table_html(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric_from: int = 0) -> str:
    """An HTML table; cells from column ``numeric_from`` on are right-aligned when it is > 0."""
    head = "".join(f"<th>{esc(h).replace('/', '/<wbr>')}</th>" for h in header)  # "topics/thread" may wrap
    body = []
    for row in rows:
        # an interval breaks only before its bracket: "0.606" over "[0.540, 0.668]", never mid-interval
        cells = "".join(f"<td class=\"num\">{esc(c).replace(', ', NBSP_AFTER_COMMA)}</td>" if numeric_from and k >= numeric_from
                        else f"<td>{esc(c)}</td>" for k, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    # a wide table scrolls inside its own box rather than running past the page's column
    return f"<div class=\"table\"><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"


def _png(fig: Any, alt: str) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{data}">'


def _figure(rows: int) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(FIG_WIDTH, max(2.0, 1.0 + ROW_HEIGHT * rows)))


def interval_plot(points: Sequence[Point], title: str) -> str:
    """A horizontal plot of each system's value with its interval; an ``<img>`` (or the no-plots note)."""
    if not have_matplotlib():
        return f'<p class="note">{NO_PLOTS}</p>'
    shown = [p for p in points if p.value is not None]
    fig = _figure(len(shown))
    ax = fig.add_subplot()
    ys = list(range(len(shown)))[::-1]
    for y, p in zip(ys, shown):
        if p.lo is not None and p.hi is not None:
            ax.errorbar([p.value], [y], xerr=[[p.value - p.lo], [p.hi - p.value]], fmt="o", capsize=4, color="#1f5fa8")
        else:
            ax.plot([p.value], [y], "o", color="#1f5fa8")
    ax.set_yticks(ys, [p.label for p in shown])
    ax.set_xlim(0, 1.02)  # a perfect score stays visible at the edge
    ax.set_xlabel(f"{title} (95% interval)")
    ax.grid(axis="x", alpha=0.3)
    return _png(fig, f"{title} with its 95% interval per system")


def cost_plot(points: Sequence[Point], title: str) -> str:
    """Each system's value against its cost per message (USD); systems without a cost are listed under it."""
    if not have_matplotlib():
        return f'<p class="note">{NO_PLOTS}</p>'
    shown = [p for p in points if p.value is not None and p.cost is not None]
    unpriced = [p.label + (f", {p.why}" if p.why else "") for p in points if p.cost is None]
    missing = f"<p>No known cost: {esc('; '.join(unpriced))}.</p>" if unpriced else ""
    costs = {p.cost for p in shown}
    if len(shown) > 1 and len(costs) == 1:
        # one cost for every system (all free, typically): a plot would stack every label on one x
        return (f"<p>Every system here costs the same, {fmt(next(iter(costs)), metric('cost_usd_per_message').shown)} USD per message, so there is "
                f"no trade-off to plot; {esc(title)} is in the results table.</p>" + missing)
    fig = _figure(4)
    ax = fig.add_subplot()
    for p in shown:
        ax.plot([p.cost], [p.value], "o", color="#b3541e")
        ax.annotate(p.label, (p.cost, p.value), textcoords="offset points", xytext=(5, 3), fontsize=8)
    ax.set_xlabel("cost per message (USD)")
    ax.set_ylabel(title)
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    return _png(fig, f"{title} against cost per message") + missing


def breakdown_plot(dimension: str, keys: Sequence[str], series: Mapping[str, Sequence[Optional[float]]]) -> str:
    """Grouped bars: accuracy per ``keys`` value of ``dimension``, one bar per system."""
    if not have_matplotlib():
        return f'<p class="note">{NO_PLOTS}</p>'
    fig = _figure(max(4, len(keys)))
    ax = fig.add_subplot()
    n = max(1, len(series))
    width = 0.8 / n
    for k, (name, values) in enumerate(series.items()):
        xs = [x + k * width for x in range(len(keys))]
        ax.bar(xs, [v if v is not None else 0.0 for v in values], width=width, label=name)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(keys))], list(keys), rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy (strict messages)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _png(fig, f"accuracy by {dimension}")


def reliability_plot(results: Sequence[Mapping[str, Any]]) -> str:
    """Each run's reliability diagram: accuracy against mean confidence per bin of its
    ``calibration`` (a calibrated run lies on the diagonal); an ``<img>`` (or the no-plots note)."""
    if not have_matplotlib():
        return f'<p class="note">{NO_PLOTS}</p>'
    fig = _figure(6)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], "--", color="#999", linewidth=1, label="calibrated")
    for r in results:
        bins = [b for b in r["calibration"]["reliability"] if b["n"]]
        ax.plot([b["confidence"] for b in bins], [b["accuracy"] for b in bins], "o-",
                label=f"{r['system']} (ECE {fmt(r['calibration']['ece'], metric('ece').shown)})")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("mean confidence of the bin")
    ax.set_ylabel("accuracy (strict messages)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    return _png(fig, "accuracy against confidence per bin of each run with a confidence")


def _calibration(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """The calibration section: for runs whose rows carry a ``confidence``, the reliability
    diagram and the table of docs/score.md#calibration (nothing when no run has one)."""
    shown = [r for r in results if r.get("calibration")]
    if not shown:
        return []
    return ["<h2>Calibration of the confidence</h2>",
            "<p>Over the strict messages whose row carries a confidence, in 10 equal-width bins: a bin's "
            "accuracy against its mean confidence. ECE is the gap weighted by each bin's messages.</p>",
            reliability_plot(shown), table_html(CALIBRATION_HEADER, calibration_rows(shown), numeric_from=1)]


#: how every page this module writes begins
PAGE_HEAD = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"


def is_page_head(head: bytes) -> bool:
    """Whether a file's first bytes are those of a page :func:`page` wrote: what ``report --html``
    may write over (:func:`~interleave_bench.errors.require_replaceable`)."""
    return head.startswith(PAGE_HEAD.encode("utf-8"))


def page(title: str, sections: Sequence[str]) -> str:
    """The whole document: one ``<html>`` with its style inline and the sections in order."""
    note = "" if have_matplotlib() else f'<p class="note">{NO_PLOTS}</p>'
    return (PAGE_HEAD +
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>{esc(title)}</h1>{note}{''.join(sections)}</body></html>\n")


def _points(results: Sequence[Mapping[str, Any]]) -> list[Point]:
    out = []
    for r in results:
        iv = (r.get("intervals") or {}).get("accuracy") or [None, None]
        cost = r.get("cost_usd_per_message")
        out.append(Point(f"{r['system']} ({r['mode']})", r["metrics"].get("accuracy"), iv[0], iv[1], cost,
                         None if cost is not None else cost_unknown_why(r)))
    return out


def _main_table(results: Sequence[Mapping[str, Any]]) -> str:
    header = ["system", "mode", *(metric(key).display for key in HEADLINE), "input tok/msg", "cost/msg (USD)",
              "sessions", "messages"]
    rows = []
    for r in results:
        m, iv = r["metrics"], r.get("intervals") or {}
        cells: list[Any] = [system_cell(r), r["mode"]]
        for name in HEADLINE:
            shown = metric(name).shown
            cells.append(fmt_interval(m.get(name), iv.get(name), shown) if name in WITH_INTERVAL else fmt(m.get(name), shown))
        cells += [fmt(m.get("input_tokens_per_message"), metric("input_tokens_per_message").shown),
                  cost_cell(r, metric("cost_usd_per_message").shown),
                  r["counts"]["sessions"], r["counts"]["messages"]]
        rows.append(cells)
    note = partial_note(results)
    return table_html(header, rows, numeric_from=2) + ("" if note is None else f"<p>{esc(PARTIAL_MARK)} {esc(note)}</p>")


def _breakdown(results: Sequence[Mapping[str, Any]], dimension: str, heading: str) -> str:
    keys = sorted({k for r in results for k in (r.get("breakdowns") or {}).get(dimension, {})})
    if not keys:
        return ""
    series: dict[str, list[Optional[float]]] = {}
    rows = []
    for r in results:
        cells = (r.get("breakdowns") or {}).get(dimension, {})
        label = f"{system_cell(r)} ({r['mode']})"
        series[label] = [cells.get(k, {}).get("accuracy") for k in keys]
        rows.append([label, *(fmt_interval(cells[k]["accuracy"], cells[k].get("interval")) + f" (n={cells[k]['n']})"
                              if k in cells else "–" for k in keys)])
    return (f"<h3>Accuracy {esc(heading)}</h3>" + breakdown_plot(dimension, keys, series)
            + table_html(["system", *keys], rows, numeric_from=1))


def _outcomes(results: Sequence[Mapping[str, Any]]) -> str:
    names = list(dict.fromkeys(k for r in results for k in r.get("outcomes") or {}))
    rows = [[f"{system_cell(r)} ({r['mode']})", *((r.get("outcomes") or {}).get(k, 0) for k in names)] for r in results]
    return table_html(["system", *names], rows, numeric_from=1)


def _flips(doc: Mapping[str, Any]) -> str:
    a, b = doc["a"]["system"], doc["b"]["system"]
    diff, iv = doc.get("accuracy_diff"), doc.get("accuracy_diff_interval")
    summary = (f"<p>{esc(b)} against {esc(a)} on {doc['sessions']} sessions ({doc['strict_messages']} strict messages): "
               f"{doc['wins']} wins, {doc['losses']} losses, accuracy difference "
               f"{esc(fmt_interval(diff, iv, metric('accuracy').shown))}, {esc(mcnemar_text(doc))}"
               f"{' (significant at 5%)' if doc.get('significant') else ''}.</p>")
    flips = doc.get("flips") or []
    rows = [[f["change"], f["session_id"], f["i"], f["text"], f["gold"], f"{f['a']} ({f['a_outcome']})",
             f"{f['b']} ({f['b_outcome']})"] for f in flips[:FLIPS_SHOWN]]
    more = f"<p>{len(flips) - FLIPS_SHOWN} more flipped messages not listed.</p>" if len(flips) > FLIPS_SHOWN else ""
    return (summary + table_html(["change", "session", "turn", "message", "gold", f"A: {a}", f"B: {b}"], rows)
            + more)


def report_page(results: Sequence[Mapping[str, Any]], comparison: Optional[Mapping[str, Any]] = None,
                title: str = "InterleaveBench report") -> str:
    """The report of scored runs (and of one comparison) as one self-contained HTML document."""
    points = _points(results)
    sections = [
        "<h2>Results</h2>", _main_table(results),
        "<h2>Accuracy with its 95% interval</h2>", interval_plot(points, "accuracy"),
        "<h2>Accuracy against cost per message</h2>", cost_plot(points, "accuracy"),
        "<h2>Outcomes</h2>", _outcomes(results),
        *(_breakdown(results, dim, heading) for dim, heading in BREAKDOWNS),
        *_calibration(results),
    ]
    if comparison is not None:
        sections += ["<h2>Flipped messages</h2>", _flips(comparison)]
    return page(title, sections)


@dataclass
class BoardTable:
    """One ranking table of a board: its heading, header, rows (cells as text) and plot points."""

    heading: str
    header: list[str]
    rows: list[list[str]]
    points: list[Point]


def board_page(title: str, intro: str, tables: Sequence[BoardTable]) -> str:
    """A leaderboard as one self-contained HTML document: per table, the ranking and its two plots."""
    sections = [f"<p>{esc(intro)}</p>"]
    for t in tables:
        sections += [f"<h2>{esc(t.heading)}</h2>", table_html(t.header, t.rows),
                     interval_plot(t.points, "accuracy"), cost_plot(t.points, "accuracy")]
    if not tables:
        sections.append("<p>No runs on this data revision yet.</p>")
    return page(title, sections)
