"""Mid-reply metrics: pure functions from decided destinations and expected ones to rates.

Every case has an expected destination (``running``, a catalog topic id, or ``new``) and a decided
one. A case *belongs with the running work* when its expect is ``running`` and *belongs elsewhere*
otherwise; a decision *keeps* a case when it is ``running`` and *sends it elsewhere* otherwise.

- ``accuracy``: over all cases, decided == expected (exact destination: the right topic, or new).
- ``right_side``: over all cases, kept == belongs with the running work (the topic or ``new``
  chosen for a case sent elsewhere does not matter here).
- ``mixed_in``: over the cases that **belong elsewhere**, the share that was kept: another matter
  put into the running reply. Its complement splits into correct destinations and
  ``wrong_elsewhere`` (sent elsewhere, but to the wrong topic or wrongly ``new``).
- ``split_off``: over the cases that **belong with the running work**, the share sent elsewhere:
  a change to the running work that the work carries on without.

``mixed_in`` and ``split_off`` are conditional rates (each over the cases where that mistake is
possible), so neither depends on how many cases of the other kind a set holds; the counts ``k``
and ``n`` of every rate are reported beside it, and a rate over no cases is ``None``. Each rate
has a 95% Wilson interval. Breakdowns repeat all rates by language, by ``how``, by tag (a case
counts under each of its tags) and by the kind of its expect (``running``, ``topic``, ``new``).
Rates and interval bounds are rounded to 4 decimals.

A decision is compared as a string: feed final destinations (after the shipped rule, see
:mod:`interleave_bench.midreply.rule`); a raw ``unsure`` counts as sent elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ..schema import MID_REPLY_RUNNING
from ..score.stats import wilson
from ..score.table import RATE, family
from .cases import expect_kind

#: the headline rates, in report order: the mid-reply family of the metric table
RATES = tuple(m.json_key for m in family("mid_reply"))
#: breakdown dimensions, in report order
BREAKDOWNS = ("lang", "how", "expect", "tag")


@dataclass(frozen=True)
class Item:
    """One scored case: the decided and expected destinations (both already normalised so the
    running work is ``running``), and what it is broken down by."""

    pred: str
    expect: str
    lang: str | None = None
    how: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)


def normalise(destination: str, running_topic: str | None = None) -> str:
    """``running`` for the running topic's own id (when given), the destination otherwise."""
    if running_topic is not None and destination == running_topic:
        return MID_REPLY_RUNNING
    return destination


def rate(k: int, n: int) -> dict[str, Any]:
    """``{"value", "k", "n", "ci95"}`` for ``k`` of ``n``; value and interval are None when n is 0."""
    if n == 0:
        return {"value": None, "k": 0, "n": 0, "ci95": None}
    lo, hi = wilson(k, n)
    return {
        "value": round(k / n, RATE),
        "k": k,
        "n": n,
        "ci95": [round(lo, RATE), round(hi, RATE)],
    }


def counts(items: Sequence[Item]) -> dict[str, int]:
    """The named counts the mid-reply rates are formulas of (see the metric table)."""
    kept = [it.pred == MID_REPLY_RUNNING for it in items]
    belongs = [it.expect == MID_REPLY_RUNNING for it in items]
    n = len(items)
    n_running = sum(belongs)
    return {
        "n": n,
        "n_running": n_running,
        "n_elsewhere": n - n_running,
        "correct": sum(it.pred == it.expect for it in items),
        "same_side": sum(k == b for k, b in zip(kept, belongs)),
        "mixed": sum(k and not b for k, b in zip(kept, belongs)),
        "split": sum(b and not k for k, b in zip(kept, belongs)),
        "wrong_elsewhere": sum((not b) and (not k) and it.pred != it.expect for it, k, b in zip(items, kept, belongs)),
    }


def headline(items: Sequence[Item]) -> dict[str, Any]:
    """The counts and the five rates (see the module docstring) over ``items``."""
    c = counts(items)
    out: dict[str, Any] = {"n": c["n"], "n_running": c["n_running"], "n_elsewhere": c["n_elsewhere"]}
    for m in family("mid_reply"):
        k, n = m.wilson_counts
        out[m.json_key] = rate(c[k], c[n])
    return out


def _groups(items: Iterable[Item], dim: str) -> dict[str, list[Item]]:
    out: dict[str, list[Item]] = {}
    for it in items:
        if dim == "tag":
            keys: Iterable[str | None] = it.tags
        elif dim == "expect":
            keys = [expect_kind(it.expect)]
        else:
            keys = [getattr(it, dim)]
        for key in keys:
            if key is not None:
                out.setdefault(str(key), []).append(it)
    return out


#: the order of expect kinds in the ``expect`` breakdown
EXPECT_ORDER = ("running", "topic", "new")


def summarize(items: Sequence[Item]) -> dict[str, Any]:
    """Headline counts and rates over all items plus ``by_lang``, ``by_how``, ``by_expect``, ``by_tag``.

    A breakdown lists only the groups present (items without a language, how or tags add none),
    sorted by name (``by_expect`` in the order running, topic, new).
    """
    out = headline(items)
    for dim in BREAKDOWNS:
        groups = _groups(items, dim)
        if dim == "expect":
            keys = [k for k in EXPECT_ORDER if k in groups]
        else:
            keys = sorted(groups)
        out[f"by_{dim}"] = {k: headline(groups[k]) for k in keys}
    return out


def mid_reply_scores(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    running: Sequence[str | None] | None = None,
    lang: Sequence[str | None] | None = None,
    how: Sequence[str | None] | None = None,
    tags: Sequence[Sequence[str] | None] | None = None,
) -> dict[str, Any]:
    """:func:`summarize` from parallel lists (the evaluate module's entry point).

    ``predictions`` and ``references`` are destinations: ``running``, a topic id or ``new``.
    ``running`` (optional) gives each case's running topic id, so a destination naming it counts
    as ``running``. ``lang``, ``how`` and ``tags`` (optional) feed the breakdowns. Raises
    ``ValueError`` when the lists differ in length.
    """
    n = len(predictions)
    named = {"references": references, "running": running, "lang": lang, "how": how, "tags": tags}
    for name, values in named.items():
        if values is not None and len(values) != n:
            raise ValueError(f"{name} has {len(values)} entries but predictions has {n}")
    items = []
    for i in range(n):
        topic = running[i] if running is not None else None
        items.append(
            Item(
                pred=normalise(str(predictions[i]), topic),
                expect=normalise(str(references[i]), topic),
                lang=lang[i] if lang is not None else None,
                how=how[i] if how is not None else None,
                tags=tuple(tags[i] or ()) if tags is not None else (),
            )
        )
    return summarize(items)
