"""Shared facts (v1): judging answers, delivery verdicts, per-strategy scoring, routing and gates.

Exact definitions of docs/facts.md#metrics. Pure functions over plain records: no files, no model, no
clock, so re-scoring a results file never calls anything and always gives the same numbers.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

from ..score.stats import wilson
from ..score.table import rounded

# --- judging an answer ------------------------------------------------------------------------------

VERDICTS = ("correct", "stale", "proposal", "missing", "wrong")
#: a number inside a value: digits with an optional decimal part
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: an answer that says the value is not settled (en and zh), matched on normalised text
UNDECIDED = re.compile(r"未确定|未定|没定|还没(有)?(确定|定)|不确定|undecided|not (yet )?(settled|decided)|unsettled|unknown")
CATEGORIES = ("stale", "proposal", "rejected", "accepted", "cross")
STRATEGIES = ("single", "own", "summary", "facts", "oracle")


def normalize(text: str) -> str:
    """NFKC, lower case, runs of white space collapsed to one space (and trimmed)."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def says(text: str, value: str) -> bool:
    """True when ``text`` says ``value``: every number of the value is one of the text's numbers
    (numbers read the same way in both, so "7000" does not say 700, nor "1.700" or "700.5"), and
    the normalised value occurs in the normalised text. An empty value is never said."""
    t, v = normalize(text), normalize(value)
    if not v:
        return False
    numbers = set(_NUMBER.findall(t))
    return all(n in numbers for n in _NUMBER.findall(v)) and v in t


def is_undecided(answer: str) -> bool:
    """True when the answer says the value is not settled (en or zh wording)."""
    return UNDECIDED.search(normalize(answer)) is not None


def decoy_said(answer: str, gold: Optional[str], decoys: Sequence[str]) -> Optional[str]:
    """The first decoy the answer says, skipping a decoy that a non-null gold itself says
    (an answer giving "700 EUR per person" must not count as the decoy "700 EUR")."""
    for d in decoys:
        if gold is not None and says(gold, d):
            continue
        if says(answer, d):
            return d
    return None


@dataclass(frozen=True)
class Judgement:
    verdict: str
    decoy: Optional[str] = None
    undecided: bool = False


def judge(answer: str, gold: Optional[str], decoys: Sequence[str], confirmed: Iterable[str]) -> Judgement:
    """The verdict of one answer (section 7a): ``correct``, ``stale``, ``proposal``, ``missing`` or
    ``wrong``. ``confirmed`` holds every value this fact was ever confirmed as at or before the probe."""
    undecided = is_undecided(answer)
    decoy = decoy_said(answer, gold, decoys)
    if gold is None:
        ok = undecided and decoy is None
    else:
        ok = says(answer, gold) and decoy is None and not undecided
    if ok:
        return Judgement("correct", None, undecided)
    if decoy is not None:
        was_confirmed = any(normalize(c) == normalize(decoy) for c in confirmed)
        return Judgement("stale" if was_confirmed else "proposal", decoy, undecided)
    return Judgement("missing" if undecided else "wrong", None, undecided)


# --- delivery verdicts ------------------------------------------------------------------------------

DELIVERY_VERDICTS = ("current", "proposal", "stale", "withdrawn", "unknown")
#: statuses of timeline events
CONFIRMED, PROPOSED, RETRACTED = "confirmed", "proposed", "retracted"
#: words naming a currency or unit that do not change an amount ("700 EUR" is "€700")
UNIT_WORDS = frozenset({
    "eur", "euro", "euros", "usd", "dollar", "dollars", "gbp", "pound", "pounds", "cny", "rmb", "yuan", "jpy",
    "yen", "chf", "francs", "元", "块", "美元", "欧元", "英镑", "日元", "人民币",
})
_AMOUNT = re.compile(r"^\d+(?:\.\d+)?$")


def _amount(value: str) -> Optional[float]:
    """The amount a value names once currency signs and unit words are dropped, else None."""
    text = "".join(ch for ch in normalize(value) if unicodedata.category(ch) != "Sc")
    for w in sorted(UNIT_WORDS, key=len, reverse=True):
        text = re.sub(rf"(?<![a-z]){re.escape(w)}(?![a-z])", " ", text)
    text = "".join(text.split()).replace(",", "")
    return float(text) if _AMOUNT.match(text) else None


def same_value(a: str, b: str) -> bool:
    """"Equals" of a delivery verdict: the same amount ignoring a currency sign or unit word, or each
    value says the other."""
    x, y = _amount(a), _amount(b)
    if x is not None and y is not None:
        return x == y
    return says(a, b) and says(b, a)


#: one fact's timeline up to the probe: ``(status, value)`` in turn order, misses left out
FactHistory = Sequence[tuple[str, Optional[str]]]


def current_value(history: FactHistory) -> Optional[str]:
    """The fact's state after its events: the last confirmed value, null after a retraction or
    before any confirmation (proposals change nothing)."""
    value: Optional[str] = None
    for status, v in history:
        if status == CONFIRMED:
            value = v
        elif status == RETRACTED:
            value = None
    return value


def delivery_verdict(
    source: Optional[str], key: Optional[str], value: Optional[str],
    facts: Mapping[str, Mapping[str, FactHistory]],
) -> str:
    """The verdict of one delivered line: ``withdrawn`` (no value: a withdrawal notice), ``unknown``
    (no such source thread, or no key), else judged among the source's values up to the probe (the
    fact the key names, or all of the source's facts when it names none): ``current``, ``stale``
    (confirmed once, superseded), ``proposal`` (only ever proposed), else ``unknown``.

    ``facts`` maps thread id -> fact key -> that fact's history up to the probe.
    """
    if value is None:
        return "withdrawn"
    if not source or source not in facts or not key:
        return "unknown"
    own = facts[source]
    histories = [own[key]] if key in own else list(own.values())
    currents = [c for c in (current_value(h) for h in histories) if c is not None]
    if any(same_value(value, c) for c in currents):
        return "current"
    confirmed = [v for h in histories for s, v in h if s == CONFIRMED and v is not None]
    if any(same_value(value, c) for c in confirmed):
        return "stale"
    proposed = [v for h in histories for s, v in h if s == PROPOSED and v is not None]
    if any(same_value(value, p) for p in proposed):
        return "proposal"
    return "unknown"


# --- scoring ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnswerItem:
    """One judged answer: a probe answered by a strategy."""

    session_id: str
    probe: str
    strategy: str
    category: str
    lang: str
    verdict: str
    context_tokens: int = 0
    notes_chars: int = 0


@dataclass(frozen=True)
class DeliveryItem:
    session_id: str
    probe: str
    verdict: str


@dataclass(frozen=True)
class RouteItem:
    """One request routed twice: without and with facts offered. ``error`` when either failed."""

    session_id: str
    turn: int
    gold: Optional[str]
    without: Optional[str]
    with_: Optional[str]
    offered: int
    imports: int
    error: bool = False


@dataclass(frozen=True)
class SessionItem:
    """What a finished session promised: its probes, answered by each of its strategies."""

    session_id: str
    probes: tuple[str, ...]
    strategies: tuple[str, ...]
    usage: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    #: how many probes the session has, where a file gives a count instead of the ids (the
    #: reference's session rows): each strategy that answered in the file must answer that many
    probe_count: Optional[int] = None


#: the gates' thresholds (section 7a)
STALE_MAX = 0.05  # under 5% of stale probes answered with the superseded value
CHANGED_MAX = 0.02  # offering facts must not move more than 2% of requests to another topic
ROUTE_ERROR_MAX = 0.01  # under 1% of routing requests may fail
GATES = ("beats_summary", "stale_answers", "proposals_shared", "routing_unchanged")
#: the strategy the gates are about, and the one it must beat
GATED, BASELINE = "facts", "summary"


def _rate(key: str, k: int, n: int) -> dict:
    value = k / n if n else None
    lo, hi = wilson(k, n) if n else (None, None)
    return {"value": rounded(key, value), "k": k, "n": n,
            "ci95": None if lo is None else [rounded(key, lo), rounded(key, hi)]}


def _mean(key: str, total: float, n: int) -> Optional[float]:
    return rounded(key, total / n) if n else None


def _order(values: Iterable[str], known: Sequence[str]) -> list[str]:
    present = set(values)
    return [v for v in known if v in present] + sorted(present - set(known))


def strategy_scores(items: Sequence[AnswerItem]) -> dict:
    """The figures of one strategy's answers: n, accuracy (Wilson), verdict counts, accuracy by
    category and language, stale answers (stale verdicts on stale probes / stale probes), proposal
    answers (proposal verdicts / n), mean context tokens and notes characters."""
    n = len(items)
    verdicts = Counter(a.verdict for a in items)
    stale_probes = [a for a in items if a.category == "stale"]
    by_cat = {c: _rate("answer_accuracy", sum(a.verdict == "correct" for a in items if a.category == c),
                       sum(a.category == c for a in items))
              for c in _order((a.category for a in items), CATEGORIES)}
    by_lang = {lang: _rate("answer_accuracy", sum(a.verdict == "correct" for a in items if a.lang == lang),
                           sum(a.lang == lang for a in items))
               for lang in sorted({a.lang for a in items})}
    return {
        "n": n,
        "answer_accuracy": _rate("answer_accuracy", verdicts["correct"], n),
        "verdicts": {v: verdicts[v] for v in VERDICTS},
        "by_category": by_cat,
        "by_lang": by_lang,
        "stale_answers": _rate("stale_answers", sum(a.verdict == "stale" for a in stale_probes), len(stale_probes)),
        "proposal_answers": _rate("proposal_answers", verdicts["proposal"], n),
        "context_tokens": _mean("context_tokens", sum(a.context_tokens for a in items), n),
        "notes_chars": _mean("notes_chars", sum(a.notes_chars for a in items), n),
    }


def paired(items: Sequence[AnswerItem], a: str = GATED, b: str = BASELINE) -> dict:
    """``a`` vs ``b`` on the probes both answered (first answer of each): ``<a>_only_right``, ``<b>_only_right``,
    both right, both wrong, and the probes only one of them answered."""
    first: dict[tuple[str, str, str], AnswerItem] = {}
    for it in items:
        first.setdefault((it.session_id, it.probe, it.strategy), it)
    pa = {(s, p): x for (s, p, st), x in first.items() if st == a}
    pb = {(s, p): x for (s, p, st), x in first.items() if st == b}
    both = sorted(set(pa) & set(pb))
    ra = [pa[k].verdict == "correct" for k in both]
    rb = [pb[k].verdict == "correct" for k in both]
    return {
        "probes": len(both),
        f"{a}_only_right": sum(x and not y for x, y in zip(ra, rb)),
        f"{b}_only_right": sum(y and not x for x, y in zip(ra, rb)),
        "both_right": sum(x and y for x, y in zip(ra, rb)),
        "both_wrong": sum(not x and not y for x, y in zip(ra, rb)),
        f"only_{a}_answered": len(set(pa) - set(pb)),
        f"only_{b}_answered": len(set(pb) - set(pa)),
    }


def delivery_scores(items: Sequence[DeliveryItem]) -> dict:
    """Counts of delivered-line verdicts and the shares of current and proposal lines."""
    c = Counter(d.verdict for d in items)
    n = len(items)
    return {
        "lines": n,
        "verdicts": {v: c[v] for v in _order(c, DELIVERY_VERDICTS)} if n else {v: 0 for v in DELIVERY_VERDICTS},
        "delivered_current": _rate("delivered_current", c["current"], n),
        "delivered_proposal": _rate("delivered_proposal", c["proposal"], n),
    }


def routing_scores(items: Sequence[RouteItem]) -> dict:
    """Routing with and without facts offered: requests, errors, offered, changed (share of offered
    requests whose topic changed), accuracy without and with (a failed decision is wrong),
    imports per request."""
    n = len(items)
    offered = [r for r in items if r.offered > 0]
    changed = sum(r.without != r.with_ for r in offered)
    imports = sum(r.imports for r in items)
    return {
        "requests": n,
        "errors": sum(r.error for r in items),
        "offered": len(offered),
        "route_error_rate": _rate("route_error_rate", sum(r.error for r in items), n),
        "route_changed": _rate("route_changed", changed, len(offered)),
        "route_accuracy_without": _rate("route_accuracy_without", sum(r.without == r.gold and not r.error for r in items), n),
        "route_accuracy_with": _rate("route_accuracy_with", sum(r.with_ == r.gold and not r.error for r in items), n),
        "imports": imports,
        "imports_per_request": _mean("imports_per_request", imports, n),
    }


def completeness(answers: Sequence[AnswerItem], sessions: Sequence[SessionItem]) -> dict:
    """Duplicate answers (a probe answered twice by one strategy) and missing ones (a probe a
    finished session promised, not answered by one of its strategies), each as sorted
    ``"<session>/<probe>/<strategy>"`` strings."""
    seen = Counter((a.session_id, a.probe, a.strategy) for a in answers)
    dup = sorted("/".join(k) for k, c in seen.items() if c > 1)
    missing = sorted(
        f"{s.session_id}/{p}/{st}" for s in sessions for p in s.probes for st in s.strategies
        if (s.session_id, p, st) not in seen
    )
    answered = Counter((sid, st) for sid, _, st in seen)
    strategies = _order({a.strategy for a in answers}, STRATEGIES)
    for s in sessions:
        if s.probe_count is not None:
            for st in s.strategies or strategies:
                short = s.probe_count - answered[(s.session_id, st)]
                if short > 0:
                    missing.append(f"{s.session_id}/{short} of {s.probe_count} probes/{st}")
    return {"duplicates": dup, "missing": sorted(missing)}


def gates(strategies: Mapping[str, dict], pair: dict, delivery: dict, routing: dict, complete: dict,
          answers: Sequence[AnswerItem]) -> dict:
    """The four gates on ``facts``, each ``{"passed": bool, "why": str}`` (the figures it read)."""
    facts = [a for a in answers if a.strategy == GATED]
    summ = [a for a in answers if a.strategy == BASELINE]
    fp = {(a.session_id, a.probe) for a in facts}
    sp = {(a.session_id, a.probe) for a in summ}
    dup_fs = [d for d in complete["duplicates"] if d.rsplit("/", 1)[1] in (GATED, BASELINE)]
    fo, so = pair[f"{GATED}_only_right"], pair[f"{BASELINE}_only_right"]
    beats = bool(fp) and fp == sp and not dup_fs and fo > so
    beats_why = (f"{GATED}-only right {fo} vs {BASELINE}-only right {so}; probes answered by {GATED} {len(fp)}, "
                 f"by {BASELINE} {len(sp)}, by both {len(fp & sp)}; duplicates {len(dup_fs)}")

    st = strategies.get(GATED, {}).get("stale_answers") or {"k": 0, "n": 0, "value": None}
    stale_ok = st["n"] > 0 and st["k"] / st["n"] < STALE_MAX
    stale_why = f"{st['k']} of {st['n']} stale probes answered stale (must be under {STALE_MAX:.0%}, and some must exist)"

    prop_probes = sum(a.category in ("proposal", "rejected") for a in facts)
    delivered_prop = delivery["delivered_proposal"]["k"]
    props_ok = routing["imports"] > 0 and prop_probes > 0 and delivered_prop == 0
    props_why = (f"imports {routing['imports']}, proposal/rejected probes {prop_probes}, "
                 f"delivered lines judged proposal {delivered_prop}")

    ch, er = routing["route_changed"], routing["route_error_rate"]
    aw, ax = routing["route_accuracy_with"], routing["route_accuracy_without"]
    changed_share = ch["k"] / ch["n"] if ch["n"] else 0.0
    error_share = er["k"] / er["n"] if er["n"] else 0.0
    acc_with = aw["k"] / aw["n"] if aw["n"] else 0.0
    acc_without = ax["k"] / ax["n"] if ax["n"] else 0.0
    route_ok = routing["offered"] > 0 and changed_share < CHANGED_MAX and error_share < ROUTE_ERROR_MAX and acc_with >= acc_without
    route_why = (f"offered {routing['offered']}, changed {changed_share:.3f} (under {CHANGED_MAX:.0%}), "
                 f"errors {error_share:.3f} (under {ROUTE_ERROR_MAX:.0%}), accuracy with {acc_with:.3f} "
                 f"vs without {acc_without:.3f}")
    return {
        "beats_summary": {"passed": beats, "why": beats_why},
        "stale_answers": {"passed": stale_ok, "why": stale_why},
        "proposals_shared": {"passed": props_ok, "why": props_why},
        "routing_unchanged": {"passed": route_ok, "why": route_why},
    }


def _sum_usage(sessions: Sequence[SessionItem]) -> dict:
    total: dict[str, Counter] = defaultdict(Counter)
    for s in sessions:
        for purpose, u in s.usage.items():
            total[purpose].update({k: int(v) for k, v in u.items() if isinstance(v, int)})
    out = {p: dict(sorted(c.items())) for p, c in sorted(total.items())}
    all_ = Counter()
    for c in total.values():
        all_.update(c)
    out["total"] = dict(sorted(all_.items()))
    return out


def score_facts(
    answers: Sequence[AnswerItem],
    deliveries: Sequence[DeliveryItem] = (),
    routes: Sequence[RouteItem] = (),
    sessions: Sequence[SessionItem] = (),
    errors: Sequence[str] = (),
) -> dict:
    """Every figure of a shared-facts run: per strategy, paired facts vs summary, deliveries,
    routing, tokens spent, completeness, the four gates and ``passed`` (no error rows, no duplicate
    or missing answers, every gate passed)."""
    strategies = {s: strategy_scores([a for a in answers if a.strategy == s])
                  for s in _order((a.strategy for a in answers), STRATEGIES)}
    pair = paired(answers)
    delivery = delivery_scores(deliveries)
    routing = routing_scores(routes)
    complete = completeness(answers, sessions)
    g = gates(strategies, pair, delivery, routing, complete, answers)
    passed = not errors and not complete["duplicates"] and not complete["missing"] and all(x["passed"] for x in g.values())
    return {
        "sessions": len({a.session_id for a in answers} | {s.session_id for s in sessions}),
        "probes": len({(a.session_id, a.probe) for a in answers}),
        "strategies": strategies,
        "paired": pair,
        "delivery": delivery,
        "routing": routing,
        "tokens": _sum_usage(sessions),
        "errors": list(errors),
        "duplicates": complete["duplicates"],
        "missing": complete["missing"],
        "gates": g,
        "passed": passed,
    }
