"""Markdown for people: the comparison table, the burst table, the cluster table, the per-session
table, a paired comparison. Reads score documents only (``interleave-score-v1``), so a table can be
made from files scored earlier.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..documents import COST_NULL_REASONS
from ..errors import clip
from ..text import escape_unshown
from ..score.in_sample import in_sample_note
from ..score.rows import EXAMPLES_SHOWN
from ..score.table import HEADLINE, RATE, family, metric

#: what stands in a cell for an undefined number
MISSING = "–"
#: headline metrics the main table shows with their interval (the others would crowd it)
WITH_INTERVAL = frozenset({"accuracy", "accuracy_lenient", "weighted_error"})


def fmt(value: float | None, decimals: int = RATE) -> str:
    """A number for a table cell (``–`` when undefined), by default a rate as its document holds it."""
    return MISSING if value is None else f"{value:.{decimals}f}"


def fmt_interval(value: float | None, interval: Sequence[float] | None, decimals: int = RATE) -> str:
    """``0.7341 [0.7020, 0.7652]``, or the bare value when there is no interval."""
    if value is None:
        return MISSING
    if not interval:
        return fmt(value, decimals)
    return f"{value:.{decimals}f} [{interval[0]:.{decimals}f}, {interval[1]:.{decimals}f}]"


def cost_unknown_why(result: Mapping[str, Any]) -> str:
    """Why a run's cost per message is null, as a table says it (its ``cost_null_reason``;
    ``cost unknown`` for a file written before it existed)."""
    return COST_NULL_REASONS.get(result.get("cost_null_reason") or "", "cost unknown")


def cost_cell(result: Mapping[str, Any], decimals: int) -> str:
    """A run's cost per message for a table cell: the number, or ``– (why it is unknown)``."""
    cost = result.get("cost_usd_per_message")
    return fmt(cost, decimals) if cost is not None else f"{MISSING} ({cost_unknown_why(result)})"


def cell(value: object) -> str:
    """``value`` as a markdown table's cell shows it: a line break or tab as a space, any other
    character no text is shown with (:func:`~interleave_bench.text.is_unshown`: an escape sequence
    recolours a terminal, a carriage return overwrites the row, a bidi control reorders it) as its
    escape (``\\x1b``, ``\\u2028``), ``|`` escaped. A message's text in a table (``compare``'s
    flips) is data, which may hold any of them."""
    return escape_unshown(str(value).replace("\n", " ").replace("\t", " ")).replace("|", "\\|")


def table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """A markdown table, every cell a :func:`cell`."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


#: what follows the name of a run scored on part of its split, in every table of runs, and
#: begins the note below the table that says why
PARTIAL_MARK = "*"


def is_partial(result: Mapping[str, Any]) -> bool:
    """Whether a run has no row for some sessions of its split."""
    return bool(result["counts"].get("sessions_without_rows"))


def partial_note(results: Iterable[Mapping[str, Any]]) -> str | None:
    """``scored on part of the split: ...`` naming each run with no row for some sessions of its
    split (``None`` when every run covers its split): such a run's figures are over other sessions
    than a complete run's, so a table ranking them says so (below it, after :data:`PARTIAL_MARK`)
    and the commands warn."""
    parts = [f"{r['system']} {r['counts']['sessions']:,} of {r['counts']['sessions'] + r['counts']['sessions_without_rows']:,} "
             f"sessions of the {r['split']} split" for r in results if is_partial(r)]
    if not parts:
        return None
    return (f"scored on part of the split ({'; '.join(parts)}): not comparable with a run over all of it "
            "(compare pairs runs on the sessions both cover; --require-complete refuses such a run)")


def warn_partial(results: Iterable[Mapping[str, Any]], file: Any) -> None:
    """Print :func:`partial_note` as a ``warning:`` line to ``file`` when a run covers part of its split."""
    note = partial_note(results)
    if note is not None:
        print(f"warning: {note}", file=file)


#: what follows the name of a run scored on data its weights' fit read (``in_sample``), in every
#: table of runs; the note below the main table says which (:func:`~..score.in_sample.in_sample_note`)
IN_SAMPLE_MARK = "(in-sample)"


def system_cell(result: Mapping[str, Any]) -> str:
    """A run's name in a table, marked when it covers part of its split (:func:`partial_note`) and
    when it is scored on data its weights' fit read (:data:`IN_SAMPLE_MARK`)."""
    return (result["system"] + (f" {PARTIAL_MARK}" if is_partial(result) else "")
            + (f" {IN_SAMPLE_MARK}" if result.get("in_sample") else ""))


def warn_in_sample(results: Iterable[Mapping[str, Any]], file: Any) -> None:
    """Print the in-sample note as one ``warning:`` line to ``file`` when a run is marked so."""
    note = in_sample_note(results)
    if note is not None:
        print(f"warning: in-sample: {note}", file=file)


def main_table(results: Iterable[Mapping[str, Any]]) -> str:
    """One row per run: system, mode, the headline metrics (with intervals), input tokens per message;
    below it, the note on runs scored on part of their split."""
    results = list(results)
    columns = [metric(key) for key in HEADLINE]
    tokens_metric = metric("input_tokens_per_message")
    header = ["system", "mode", *(c.display for c in columns), tokens_metric.display]
    rows = []
    for r in results:
        m, iv = r["metrics"], r.get("intervals") or {}
        cells = [system_cell(r), r["mode"]]
        for c in columns:
            value = m.get(c.key)
            cells.append(fmt_interval(value, iv.get(c.key), c.shown) if c.key in WITH_INTERVAL else fmt(value, c.shown))
        tokens = m.get(tokens_metric.key)
        cells.append(MISSING if tokens is None else f"{tokens:,.{tokens_metric.shown}f}")
        rows.append(cells)
    note = partial_note(results)
    marked = in_sample_note(results)
    return (table(rows, header) + ("" if note is None else f"\n\n{PARTIAL_MARK} {note}")
            + ("" if marked is None else f"\n\n{IN_SAMPLE_MARK} {marked}"))


def burst_table(results: Iterable[Mapping[str, Any]]) -> str | None:
    """Runs with burst rows: accuracy alone / in a burst / across threads, replies held, calls per message."""
    groups = [m for m in family("burst") if m.wilson_counts is not None]
    others = [m for m in family("burst") if m.wilson_counts is None]
    header = ["system", *(m.display for m in groups), *(m.display for m in others)]
    rows = []
    for r in results:
        b = r.get("burst")
        if not b:
            continue

        def acc(cell: Mapping[str, Any]) -> str:
            text = fmt_interval(cell["accuracy"], cell.get("interval"))
            return text if cell["accuracy"] is None else f"{text} (n={cell['n']:,})"

        rows.append([system_cell(r), *(acc(b[m.json_key]) for m in groups), *(fmt(b[m.json_key], m.shown) for m in others)])
    return table(rows, header) if rows else None


def cluster_table(results: Sequence[Mapping[str, Any]]) -> str | None:
    """A markdown table of the cluster metrics, one row per run that has them (``None`` if none does)."""
    metrics = family("cluster")
    rows = []
    for r in results:
        section = r.get("cluster")
        if section:
            rows.append([system_cell(r), *(fmt(section["metrics"].get(m.key), m.shown) for m in metrics),
                         f"{section['counts']['messages']:,}"])
    return table(rows, ["system", *(m.display for m in metrics), "messages"]) if rows else None


def calibration_rows(results: Iterable[Mapping[str, Any]]) -> list[list[str]]:
    """The rows of the calibration table: per run whose rows carry a ``confidence``, one row over
    all its strict messages with one (ECE, how many of the strict messages, mean confidence,
    accuracy), then one per non-empty bin of its reliability table (docs/score.md#calibration)."""
    ece = metric("ece")
    rows = []
    for r in results:
        c = r.get("calibration")
        if not c:
            continue
        rows.append([system_cell(r), fmt(c["ece"], ece.shown), "all", f"{c['messages']:,} of {c['strict']:,}",
                     fmt(c["confidence"]), fmt(c["accuracy"])])
        rows += [["", "", f"{b['lo']:.1f}–{b['hi']:.1f}", f"{b['n']:,}", fmt(b["confidence"]), fmt(b["accuracy"])]
                 for b in c["reliability"] if b["n"]]
    return rows


#: the header of the calibration table
CALIBRATION_HEADER = ("system", "ECE", "confidence", "messages", "mean confidence", "accuracy")


def calibration_table(results: Iterable[Mapping[str, Any]]) -> str | None:
    """The calibration of each run whose rows carry a ``confidence`` (:func:`calibration_rows`),
    ``None`` if none does."""
    rows = calibration_rows(results)
    return table(rows, CALIBRATION_HEADER) if rows else None


def calibration_line(doc: Mapping[str, Any]) -> str:
    """A comparison's line on the two runs' confidence: each one's ECE over its strict messages
    with a confidence (``–`` for a run without one)."""
    cal = doc.get("calibration") or {}

    def one(key: str) -> str:
        c = cal.get(key)
        if not c:
            return f"{key.upper()} – (no confidence)"
        return f"{key.upper()} {fmt(c['ece'], metric('ece').shown)} ({c['messages']:,} of {c['strict']:,} strict messages)"

    return f"calibration (ECE of the rows' confidence): {one('a')}, {one('b')}"


def per_session_table(results: Iterable[Mapping[str, Any]]) -> str:
    """One row per scored session of each run."""
    header = ["system", "session", "lang", "messages", "strict", "accuracy", "weighted error", "polluting",
              "errors", "missing rows"]
    rows = []
    for r in results:
        for s in r.get("per_session", []):
            rows.append([r["system"], s["session_id"], s["lang"], s["messages"], s["strict"], fmt(s["accuracy"], metric("accuracy").shown),
                         fmt(s["weighted_error"], metric("weighted_error").shown), s["polluting"], s["errors"], s["missing_rows"]])
    return table(rows, header)


# --- comparisons ---------------------------------------------------------------------------------

#: below this a p-value is not shown as a number: float underflow makes it 0, which it never is
SMALLEST_P_SHOWN = 1e-300


def mcnemar_text(doc: Mapping[str, Any]) -> str:
    """``McNemar exact p = 0.0312``, or ``McNemar exact p < 1e-300 (log10 p = -512.3)`` where the
    float underflows: never ``p = 0``, which a finite sample cannot give."""
    p = doc["mcnemar_p"]
    if p >= SMALLEST_P_SHOWN:
        return f"McNemar exact p = {p:.4g}"
    log10 = doc.get("mcnemar_log10_p")
    return f"McNemar exact p < {SMALLEST_P_SHOWN:.0e}" + ("" if log10 is None else f" (log10 p = {log10:.1f})")

#: characters of a message's text shown in the flips table
TEXT_SHOWN = 70


def _signed(value: float | None, decimals: int) -> str:
    return MISSING if value is None else f"{value:+.{decimals}f}"


def compare_report(doc: Mapping[str, Any], show: int) -> str:
    """The markdown of a comparison: headline deltas, the paired test, the verdict, the flips."""
    a, b = doc["a"], doc["b"]
    marked = in_sample_note([a, b])

    def name(side: Mapping[str, Any]) -> str:
        return side["system"] + (f" {IN_SAMPLE_MARK}" if side.get("in_sample") else "")

    out = [
        f"compare: A = {name(a)} ({a['mode']}) vs B = {name(b)} ({b['mode']}); {doc['split']} split, "
        f"{doc['sessions']:,} sessions, {doc['strict_messages']:,} strict messages",
        *([] if marked is None else [f"{IN_SAMPLE_MARK} {marked}"]),
        "",
    ]
    rows = []
    for name, cell in doc["metrics"].items():
        decimals = metric(name).shown
        rows.append([name, fmt(cell["a"], decimals), fmt(cell["b"], decimals), _signed(cell["delta"], decimals)])
    out.append(table(rows, ["metric", "A", "B", "B − A"]))
    out.append("")
    out.append(f"per message (strict): B wins {doc['wins']:,}, B loses {doc['losses']:,}, "
               f"both right {doc['both_right']:,}, both wrong {doc['both_wrong']:,}; "
               f"{mcnemar_text(doc)}")
    diff, iv = doc["accuracy_diff"], doc["accuracy_diff_interval"]
    shown = metric("accuracy").shown  # as compare's document holds the difference
    text = _signed(diff, shown) + (f" [{iv[0]:+.{shown}f}, {iv[1]:+.{shown}f}]" if iv else "")
    out.append(f"accuracy difference B − A: {text} (95% paired bootstrap over sessions)")
    if any((doc.get("calibration") or {}).values()):
        out.append(calibration_line(doc))
    level = f"{doc['alpha']:.0%}"
    if doc["regression"]:
        verdict = f"B is significantly worse than A at the {level} level"
    elif doc["significant"]:
        verdict = f"B is significantly better than A at the {level} level"
    else:
        verdict = f"no significant difference at the {level} level"
    out.append(f"verdict: {verdict}")
    if doc["not_compared"]:
        names = ", ".join(f"{x['session_id']} ({x['reason']})" for x in doc["not_compared"][:EXAMPLES_SHOWN])
        more = ", ..." if len(doc["not_compared"]) > EXAMPLES_SHOWN else ""
        out.append(f"not compared: {len(doc['not_compared']):,} sessions scored in one run only: {names}{more}")
    out += doc["not_scored_notices"]
    flips = doc["flips"]
    out.append("")
    if not flips:
        out.append("flipped messages: none")
    elif show == 0:  # the count alone: a table header over no row says nothing
        out.append(f"flipped messages: {len(flips):,} (--show N lists the N most telling)")
    else:
        own = ("; each run's labels are its own topics (A's t1 is not B's t1), the outcome says what its "
               "topic held" if "open" in (doc["a"]["mode"], doc["b"]["mode"]) else "")
        out.append(f"flipped messages, most telling first ({min(show, len(flips)):,} of {len(flips):,}{own}):")
        out.append("")
        rows = []
        for f in flips[:show]:
            text = clip(f["text"], TEXT_SHOWN)
            rows.append([f["session_id"], f["i"], text, f["gold"], f"{f['a']} ({f['a_outcome']})",
                         f"{f['b']} ({f['b_outcome']})"])
        out.append(table(rows, ["session", "i", "text", "gold", "A", "B"]))
    return "\n".join(out)
