"""Runs scored on sessions their router's fit read: in-sample figures (docs/score.md#in-sample).

The ``local`` router's weights and calibration are fitted on the dev sessions of a few corpora
(docs/local.md). Scored on those sessions again, its accuracy and calibration are in-sample: IRC's
dev logs give 0.81 with IRC in the fit and 0.20 without it. Which data a fit read is the router's
to say (``interleave_bench.route.local_sample`` recognises it from the data folder's manifest and
gives a :class:`FitSample`); here a run is matched to it by the weights it was routed with.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

from ..documents import LOCAL_WEIGHTS, run_record_path
from ..errors import InterleaveError


@dataclass(frozen=True)
class FitSample:
    """Data that a fit read: the fit's name for its corpus (``corpus``), the split it read
    (``split``), the offline writer's seed where the corpus is generated data (``seed``), the
    fingerprint of the weights fitted on it (``weights``) and the policy whose rows those weights
    decide (``policy``), for a run without a run record to say its weights."""

    corpus: str
    split: str
    weights: str
    policy: str
    seed: Optional[int] = None

    def mark(self) -> dict[str, Any]:
        """The score document's ``in_sample`` for a run these weights decided."""
        return {"corpus": self.corpus, "split": self.split, "seed": self.seed, "weights": self.weights}


def routed_weights(predictions: Path) -> tuple[bool, Optional[str]]:
    """``(whether a readable run record is beside predictions, the fingerprint of the local weights
    it names or None)``."""
    from ..io import read_run_record

    path = run_record_path(Path(predictions))
    if not path.is_file():
        return False, None
    try:
        weights = read_run_record(path).options.get(LOCAL_WEIGHTS)
    except InterleaveError:  # not a run record: the rows are all there is to go by
        return False, None
    return True, weights if isinstance(weights, str) else None


def in_sample_of(sample: Optional[FitSample], predictions: Path, policy: Optional[str]) -> Optional[dict[str, Any]]:
    """The ``in_sample`` mark of the run in ``predictions`` (whose rows name ``policy``) on data
    ``sample`` says a fit read, else None: a run whose record names the weights of that fit
    (``local`` and ``hybrid --threshold``), or, without a readable record, whose rows are of the
    fit's policy. A record naming other weights is left unmarked: which data their fit read is
    not known here."""
    if sample is None:
        return None
    recorded, weights = routed_weights(predictions)
    if weights is not None:
        return sample.mark() if weights == sample.weights else None
    return sample.mark() if not recorded and policy == sample.policy else None


def in_sample_text(mark: Mapping[str, Any]) -> str:
    """``the irc dev sessions`` / ``the offline dev sessions of seed 1``: what the fit read."""
    seed = f" of seed {mark['seed']}" if mark.get("seed") is not None else ""
    return f"the {mark['corpus']} {mark['split']} sessions{seed}"


def in_sample_note(results: Any) -> Optional[str]:
    """One line naming every run of ``results`` (score documents) marked ``in_sample``, else None."""
    marked = [r for r in results if r.get("in_sample")]
    if not marked:
        return None
    parts = "; ".join(f"{r['system']} ({in_sample_text(r['in_sample'])})" for r in marked)
    return (f"scored on data the local weights were fitted on: {parts}; accuracy and calibration there are "
            "in-sample, not figures for chat the fit never saw (docs/score.md#in-sample)")
