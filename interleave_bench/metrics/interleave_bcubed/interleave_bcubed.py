"""B-cubed precision, recall and F1 of any clustering, as an ``evaluate`` module (thin over ``interleave_bench.score``)."""

import datasets
import evaluate

from interleave_bench.score.bcubed import CITATION
from interleave_bench.score.bcubed import bcubed
from interleave_bench.score.routing import rounded

_CITATION = CITATION

_DESCRIPTION = """\
B-cubed (Bagga and Baldwin, 1998) compares a predicted clustering with a reference one item by
item: an item's precision is the share of its predicted cluster that shares its reference
cluster, its recall the share of its reference cluster that shares its predicted cluster (each
item counts itself); precision and recall are means over items and F1 their harmonic mean.
Cluster labels are arbitrary: renaming them changes nothing. With group ids, clusters never span
groups (label "a" in group 1 and in group 2 are two clusters), which is how InterleaveBench pools
each session's topics over sessions.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: the predicted cluster label of each item (strings or integers).
    references: the reference cluster label of each item (same type as predictions).
    groups: optional, a group id per item; clusters never span groups.
Returns:
    precision, recall, f1: floats in [0, 1] (null for no items: undefined), rounded to 4 decimals as
    `interleave-bench score` rounds `bcubed_precision`, `bcubed_recall` and `bcubed_f1`.
Examples:
    >>> import evaluate
    >>> import interleave_bench
    >>> b3 = evaluate.load(interleave_bench.metric_path("interleave_bcubed"))
    >>> b3.compute(predictions=["x", "x", "x"], references=["a", "a", "b"])
    {'precision': 0.5556, 'recall': 1.0, 'f1': 0.7143}
    >>> b3.compute(predictions=[1, 1], references=[7, 8], groups=["s1", "s2"])
    {'precision': 1.0, 'recall': 1.0, 'f1': 1.0}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class InterleaveBcubed(evaluate.Metric):
    """B-cubed precision, recall and F1 with optional groups."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
                datasets.Features({"predictions": datasets.Value("int64"), "references": datasets.Value("int64")}),
            ],
            reference_urls=["https://doi.org/10.3115/980845.980859"],
        )

    def _compute(self, predictions, references, groups=None):
        precision, recall, f1 = bcubed(references, predictions, groups)
        return {
            "precision": rounded("bcubed_precision", precision),
            "recall": rounded("bcubed_recall", recall),
            "f1": rounded("bcubed_f1", f1),
        }
