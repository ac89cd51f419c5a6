"""A paired comparison of two runs on the same data (docs/score.md#interleave-bench-compare-data-ajsonl-bjsonl).

Both runs are scored on the sessions both cover, message by message, so the test can use the
pairing: on strict messages, *wins* are messages B routes right and A wrong, *losses* the other
way round. McNemar's exact test asks whether wins and losses differ more than chance would; the
paired bootstrap over sessions gives an interval for the accuracy difference. The flipped
messages are listed most telling first: the ones whose outcome cost changed most (a message
newly sent into another thread's context before one that merely asked back), losses before wins.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..schema import Session
from .block import SessionScore
from .routing import METRICS, OUTCOME_COST
from .run import RunScore
from .stats import mcnemar_exact, paired_bootstrap_diff
from .table import RATE, rounded

#: the format tag of a comparison document
COMPARE_FORMAT = "interleave-compare-v1"
#: significance level of the regression gate: the conventional 5%
ALPHA = 0.05
#: decimals of the exact log10 p kept in the comparison document
LOG10_DECIMALS = 2


def common_session_ids(a: RunScore, b: RunScore) -> tuple[list[str], list[dict[str, str]]]:
    """Ids of the sessions both runs scored (in data order), and those only one of them did."""
    in_a = {sc.session_id for sc in a.scores}
    in_b = {sc.session_id for sc in b.scores}
    order = [s.session_id for s in a.sessions] + [s.session_id for s in b.sessions if s.session_id not in in_a]
    common = [sid for sid in order if sid in in_a and sid in in_b]
    only = [{"session_id": sid, "reason": "scored only in A" if sid in in_a else "scored only in B"}
            for sid in order if (sid in in_a) != (sid in in_b)]
    return common, only


def _delta(name: str, a: RunScore, b: RunScore) -> float | None:
    """B minus A of metric ``name``, taken on the unrounded figures where the runs have them (so
    accuracy's equals ``accuracy_diff``) and rounded once; None where either is undefined."""
    if name in a.exact and name in b.exact:
        return rounded(name, b.exact[name] - a.exact[name])
    va, vb = a.result["metrics"].get(name), b.result["metrics"].get(name)
    return None if va is None or vb is None else rounded(name, vb - va)


def _describe(run: RunScore) -> dict[str, Any]:
    r = run.result
    return {"system": r["system"], "mode": r["mode"], "policy": r["policy"], "model": r["model"]}


def compare(a: RunScore, b: RunScore, *, bootstrap: int, seed: int, not_compared: Sequence[dict] = ()) -> dict[str, Any]:
    """The comparison document of two runs scored on the same sessions (same ids, same order).

    Assumes ``a`` and ``b`` came from :func:`~interleave_bench.score.run.score_predictions` on the
    same sessions (``only_sessions`` set to the common ones). ``accuracy_diff`` and its interval
    are B minus A; ``regression`` is true when B is less accurate and McNemar's p is below
    :data:`ALPHA`.
    """
    scores_b = b.scores_by_id()
    wins = losses = both_right = both_wrong = 0
    a_ok: list[int] = []
    b_ok: list[int] = []
    strict_n: list[int] = []
    flips: list[tuple[tuple, dict[str, Any]]] = []
    for order, (session, sa) in enumerate(zip(a.sessions, a.scores)):
        sb: SessionScore = scores_b[sa.session_id]
        ka = kb = n = 0
        for k, turn in enumerate(session.turns):
            if turn.gold.thread is None or turn.ambiguous:
                continue
            ra, rb = sa.correct[k], sb.correct[k]
            n += 1
            ka += ra
            kb += rb
            if ra and rb:
                both_right += 1
            elif not ra and not rb:
                both_wrong += 1
            else:
                if rb:
                    wins += 1
                else:
                    losses += 1
                cost_a, cost_b = OUTCOME_COST[sa.outcomes[k]], OUTCOME_COST[sb.outcomes[k]]
                key = (-abs(cost_b - cost_a), 0 if ra else 1, order, k)
                flips.append((key, {
                    "session_id": session.session_id,
                    "i": turn.i,
                    "text": turn.text,
                    "gold": turn.gold.thread,
                    "a": sa.labels[k],
                    "b": sb.labels[k],
                    "a_outcome": sa.outcomes[k],
                    "b_outcome": sb.outcomes[k],
                    "change": "win" if rb else "loss",
                }))
        a_ok.append(ka)
        b_ok.append(kb)
        strict_n.append(n)
    flips.sort(key=lambda x: x[0])
    total = sum(strict_n)
    p = mcnemar_exact(losses, wins)
    diff = (sum(b_ok) - sum(a_ok)) / total if total else None
    interval = None
    if bootstrap > 0 and total:
        iv = paired_bootstrap_diff(np.array(a_ok), np.array(b_ok), np.array(strict_n), bootstrap, seed)
        interval = None if iv is None else [round(iv[0], RATE), round(iv[1], RATE)]
    ma, mb = a.result["metrics"], b.result["metrics"]
    return {
        "format": COMPARE_FORMAT,
        "a": _describe(a),
        "b": _describe(b),
        "split": a.split,
        "sessions": len(a.scores),
        "strict_messages": total,
        "wins": wins,
        "losses": losses,
        "both_right": both_right,
        "both_wrong": both_wrong,
        "mcnemar_p": p,
        "mcnemar_log10_p": round(mcnemar_log10(losses, wins), LOG10_DECIMALS),
        "accuracy_diff": rounded("accuracy", diff),
        "accuracy_diff_interval": interval,
        "alpha": ALPHA,
        "significant": p < ALPHA,
        "regression": bool(diff is not None and diff < 0 and p < ALPHA),
        "metrics": {name: {"a": ma.get(name), "b": mb.get(name), "delta": _delta(name, a, b)}
                    for name in METRICS},
        "intervals": {"a": a.result["intervals"], "b": b.result["intervals"]},
        # each run's calibration (docs/score.md#calibration), null for a run without confidences
        "calibration": {"a": a.result.get("calibration"), "b": b.result.get("calibration")},
        "flips": [f for _, f in flips],
        "not_compared": list(not_compared),
        "provenance": {"bootstrap": bootstrap, "seed": seed},
    }


def compare_predictions(
    sessions: Sequence[Session],
    rows_a: Sequence[Any],
    rows_b: Sequence[Any],
    *,
    names: tuple[str, str] = ("A", "B"),
    sources: tuple[str, str] = ("<A>", "<B>"),
    lines: tuple[Sequence[int] | None, Sequence[int] | None] = (None, None),
    data_file: str = "<sessions>",
    mode: str | None = None,
    split: str = "dev",
    bootstrap: int = 1000,
    seed: int = 0,
    allow_duplicates: bool = False,
) -> dict[str, Any]:
    """Score two runs on the sessions both cover and compare them (:func:`compare`).

    Each run is scored on its own first; when one covers sessions the other lacks, both are
    scored again on the common sessions, and the others are listed in ``not_compared``. The
    document also carries each run's ``not_scored`` list and ``not_scored_line`` (what ``score``
    says of the run: what it left out, and its turns without a row, each scored as ``ERROR``), and
    ``not_scored_notices``, those lines of the runs that left something out (what is printed).
    Two runs scored in different modes are refused (:func:`modes_differ`): no paired comparison of
    one task. A closed-mode run none of whose labels names a thread is refused, as ``score`` refuses it, and
    so is a run none of whose rows is for a session of ``split`` (``score``'s own line, naming
    ``data_file``); when no session, or no strict message, is scored in both runs,
    :class:`~interleave_bench.errors.InputError` (:func:`nothing_compared`): a comparison of
    nothing has no verdict, and a regression gate on it could never fail.
    """
    from .rows import not_scored_notice
    from .run import nothing_scored, score_predictions

    def score(k: int, rows: Sequence[Any], keep: set[str] | None, resamples: int) -> RunScore:
        return score_predictions(
            sessions, rows, system=names[k], mode=mode, split=split, bootstrap=resamples, seed=seed,
            allow_duplicates=allow_duplicates, source=sources[k], lines=lines[k], only_sessions=keep,
            thread_labels=True,
        )

    run_a = score(0, rows_a, None, bootstrap)
    run_b = score(1, rows_b, None, bootstrap)
    if run_a.mode != run_b.mode:
        raise modes_differ(sources, (run_a.mode, run_b.mode), rows_b, lines[1])
    for k, run in enumerate((run_a, run_b)):  # as score refuses the file on its own
        if not run.scores:
            outside = run.result["counts"]["rows_outside_split"]
            raise nothing_scored(Path(sources[k]), Path(data_file), split, run.not_scored, outside)
    not_scored = {"a": run_a.result["not_scored"], "b": run_b.result["not_scored"]}
    said = {"a": run_a.result["not_scored_line"], "b": run_b.result["not_scored_line"]}
    notices = [line for line in map(not_scored_notice, (run_a.result, run_b.result)) if line]
    common, only = common_session_ids(run_a, run_b)
    if not common:
        raise nothing_compared(sources, data_file, split, (len(run_a.scores), len(run_b.scores)))
    if only:
        keep = set(common)
        run_a = score(0, rows_a, keep, bootstrap)
        run_b = score(1, rows_b, keep, bootstrap)
    doc = compare(run_a, run_b, bootstrap=bootstrap, seed=seed, not_compared=only)
    if not doc["strict_messages"]:
        raise nothing_compared(sources, data_file, split, (len(run_a.scores), len(run_b.scores)), common=len(common))
    doc["not_scored"] = not_scored
    doc["not_scored_line"] = said
    doc["not_scored_notices"] = notices  # the lines printed: those of a run that left something out
    return doc


def nothing_compared(sources: tuple[str, str], data_file: str, split: str, scored: tuple[int, int],
                     common: int = 0) -> InputError:
    """The one-line error for two runs that have rows for no session of the split in common
    (``common`` 0; ``scored`` is how many sessions each has rows for), or whose ``common``
    sessions hold no strict message: the paired test would count nothing, and its verdict, and
    the regression gate on it, would say nothing."""
    a, b = sources
    if common:
        what = (f"the {_sessions(common)} of the {split} split that A ({a}) and B ({b}) both have rows for "
                f"hold{'s' if common == 1 else ''} no strict message (a thread message whose independent reading "
                "agrees with the plan)")
    else:
        what = (f"A ({a}) and B ({b}) have rows for no session of the {split} split in common "
                f"(A for {_sessions(scored[0])}, B for {scored[1]:,} other{'' if scored[1] == 1 else 's'})")
    return InputError(data_file, None, None, f"{what}: nothing to compare")


def modes_differ(sources: tuple[str, str], modes: tuple[str, str], rows_b: Sequence[Any],
                 lines_b: Sequence[int] | None) -> InputError:
    """The one-line error for two runs scored in two modes (at B's first row naming its mode, if
    one does): a closed-mode router is shown the threads and an open-mode one is not, so theirs is
    no paired comparison of one task, whatever the verdict would say."""
    named = [k for k, row in enumerate(rows_b) if _mode_of(row) is not None][:1]
    line = (lines_b[named[0]] if lines_b is not None else named[0] + 1) if named else None
    return InputError(sources[1], line, "mode" if named else None,
                      f"B is {_a(modes[1])}-mode run and A ({sources[0]}) {_a(modes[0])}-mode one: a closed-mode router "
                      "is shown the threads and an open-mode one is not, so a paired comparison is of two runs of "
                      "one mode")


def _a(mode: str) -> str:
    return f"{'an' if mode[0] in 'aeiou' else 'a'} {mode}"


def _mode_of(row: Any) -> Any:
    return row.get("mode") if isinstance(row, Mapping) else getattr(row, "mode", None)


def _sessions(n: int) -> str:
    return f"{n:,} session{'' if n == 1 else 's'}"


def mcnemar_log10(b: int, c: int) -> float:
    """log10 of :func:`~.stats.mcnemar_exact`'s p, computed in log space so it stays exact where
    the p-value itself underflows to 0.0 (thousands of discordant pairs, nearly all one way)."""
    n, k = b + c, min(b, c)
    if n == 0:
        return 0.0
    terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(k + 1)]
    top = max(terms)
    log_tail = top + math.log(sum(math.exp(t - top) for t in terms)) - n * math.log(2)
    return min(0.0, (log_tail + math.log(2)) / math.log(10))

