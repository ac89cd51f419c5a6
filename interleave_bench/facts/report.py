"""Printing a facts run's figures: the strategy table, breakdowns, pairing, deliveries, routing,
tokens spent and the gates. Rates print with 3 decimals, as the reference prints them, taken from
their counts (the JSON's figures are rounded to 4 already, and rounding those again could be off)."""

from __future__ import annotations

from typing import Any, Optional

from ..reports.tables import fmt
from ..score.stats import wilson
from ..score.table import metric
from .metrics import CATEGORIES, VERDICTS

#: decimals of rates in printed tables (the JSON keeps the table's decimals)
PRINT_DECIMALS = 3


def _exact(entry: Optional[dict[str, Any]]) -> Optional[tuple[float, int, int]]:
    """A rate entry's value from its counts, unrounded (None when it has none)."""
    if not entry or entry.get("value") is None or not entry.get("n"):
        return None
    return entry["k"] / entry["n"], entry["k"], entry["n"]


def _r(entry: Optional[dict[str, Any]]) -> str:
    exact = _exact(entry)
    if exact is None:
        return "-"
    value, k, n = exact
    lo, hi = wilson(k, n)
    return f"{value:.{PRINT_DECIMALS}f} [{lo:.{PRINT_DECIMALS}f}, {hi:.{PRINT_DECIMALS}f}]"


def _v(entry: Optional[dict[str, Any]]) -> str:
    exact = _exact(entry)
    if exact is None:
        return "-"
    value, k, n = exact
    return f"{value:.{PRINT_DECIMALS}f} ({k}/{n})"


def report(m: dict[str, Any]) -> str:
    """The whole printed report of one run's figures (``score_facts`` output)."""
    out = ["| strategy | n | accuracy | " + " | ".join(VERDICTS) + " | stale answers | proposal answers | context tokens | notes chars |",
           "|---|---:|---|" + "---:|" * len(VERDICTS) + "---|---|---:|---:|"]
    for name, s in m["strategies"].items():
        out.append(f"| {name} | {s['n']} | {_r(s['answer_accuracy'])} | "
                   + " | ".join(str(s["verdicts"][v]) for v in VERDICTS)
                   + f" | {_v(s['stale_answers'])} | {_v(s['proposal_answers'])} | "
                   f"{'-' if s['context_tokens'] is None else s['context_tokens']} | "
                   f"{'-' if s['notes_chars'] is None else s['notes_chars']} |")
    cats = [c for c in CATEGORIES if any(c in s["by_category"] for s in m["strategies"].values())]
    langs = sorted({lang for s in m["strategies"].values() for lang in s["by_lang"]})
    if cats or langs:
        cols = cats + [f"lang {x}" for x in langs]
        out += ["", "| strategy | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
        for name, s in m["strategies"].items():
            cells = [_v(s["by_category"].get(c)) for c in cats] + [_v(s["by_lang"].get(x)) for x in langs]
            out.append(f"| {name} | " + " | ".join(cells) + " |")
    p = m["paired"]
    out += ["", f"facts vs summary on {p['probes']} probes both answered: facts-only right {p['facts_only_right']}, "
                f"summary-only right {p['summary_only_right']}, both right {p['both_right']}, both wrong {p['both_wrong']}"]
    d = m["delivery"]
    out.append(f"delivered lines: {d['lines']} (" + ", ".join(f"{k} {v}" for k, v in d["verdicts"].items()) + ")")
    r = m["routing"]
    out.append(f"routing: {r['requests']} requests, {r['errors']} errors, {r['offered']} offered facts; changed "
               f"{_v(r['route_changed'])}; accuracy without {_v(r['route_accuracy_without'])}, with "
               f"{_v(r['route_accuracy_with'])}; imports per request "
               f"{'-' if r['imports_per_request'] is None else fmt(r['imports_per_request'], metric('imports_per_request').shown)}")
    t = m["tokens"].get("total", {})
    per = "; ".join(f"{k} {v.get('calls', 0)} calls, {v.get('input', 0):,} in / {v.get('output', 0):,} out"
                    for k, v in m["tokens"].items() if k != "total")
    # what the answers took, answers read from the cache included (the cost line counts paid calls only)
    out.append(f"tokens of the answers, cached ones included: {t.get('input', 0):,} in / {t.get('output', 0):,} out"
               + (f" ({per})" if per else ""))
    out.append("")
    for name, g in m["gates"].items():
        out.append(f"gate {name}: {'PASS' if g['passed'] else 'FAIL'} ({g['why']})")
    for what in ("errors", "duplicates", "missing"):
        if m[what]:
            shown = ", ".join(m[what][:5]) + (f" and {len(m[what]) - 5} more" if len(m[what]) > 5 else "")
            out.append(f"{what}: {len(m[what])} ({shown})")
    out.append(f"passed: {'yes' if m['passed'] else 'no'}")
    return "\n".join(out)
