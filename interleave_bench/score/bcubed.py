"""B-cubed precision, recall and F1 of a clustering (Bagga and Baldwin, 1998).

Every item has a reference cluster and a predicted cluster. An item's precision is the share of
the items in its predicted cluster that share its reference cluster, its recall the share of its
reference cluster that shares its predicted cluster; each item counts itself. Precision and
recall are means over items, F1 their harmonic mean. With group ids, clusters never span groups
(the label ``a`` of group 1 and of group 2 are two clusters), which is how a router's topics,
named afresh in every session, are pooled over sessions.

The means add the items' terms one after another in item order, as the reference scorer does,
so that a value lying on a rounding boundary rounds the same way.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import reduce
from operator import add
from typing import Hashable, Iterable, Sequence

#: where B-cubed comes from (BibTeX), for the evaluate modules' cards and citations
CITATION = """\
@inproceedings{bagga1998bcubed,
  title     = {Algorithms for Scoring Coreference Chains},
  author    = {Bagga, Amit and Baldwin, Breck},
  booktitle = {The First International Conference on Language Resources and Evaluation Workshop on Linguistics Coreference},
  year      = {1998}
}
"""


def bcubed_terms(pairs: Sequence[tuple[Hashable, Hashable]]) -> tuple[list[float], list[float]]:
    """Each item's precision and recall, in item order, for ``(reference, predicted)`` cluster pairs.

    An item in a cell of ``n`` items (same reference and predicted cluster), in a predicted
    cluster of ``p`` items and a reference cluster of ``r`` items, has precision ``n / p`` and
    recall ``n / r``. Terms of disjoint groups (sessions) are independent, so a group's terms can
    be computed on their own and pooled later.
    """
    cells = Counter(pairs)
    ref_size: Counter = Counter()
    pred_size: Counter = Counter()
    for (ref, pred), n in cells.items():
        ref_size[ref] += n
        pred_size[pred] += n
    precision = [cells[pair] / pred_size[pair[1]] for pair in pairs]
    recall = [cells[pair] / ref_size[pair[0]] for pair in pairs]
    return precision, recall


def sequential_sum(values: Iterable[float]) -> float:
    """Left-to-right float sum (unlike ``math.fsum`` or Python 3.12's compensated ``sum``)."""
    return reduce(add, values, 0.0)


#: B-cubed over no items: undefined (``null`` in documents, ``–`` in tables; docs/score.md#bcubed-f1)
UNDEFINED = (math.nan, math.nan, math.nan)


def prf(precision_sum: float, recall_sum: float, items: int) -> tuple[float, float, float]:
    """Precision, recall and F1 from pooled sums; :data:`UNDEFINED` (NaN) when there are no items."""
    if items <= 0:
        return UNDEFINED
    p = precision_sum / items
    r = recall_sum / items
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def bcubed(
    references: Sequence[Hashable], predictions: Sequence[Hashable], groups: Sequence[Hashable] | None = None
) -> tuple[float, float, float]:
    """B-cubed ``(precision, recall, f1)`` of ``predictions`` against ``references``, item by item.

    ``groups`` (optional, one id per item) keeps clusters inside their group. Returns NaN for no
    items (undefined). Raises ``ValueError`` when the sequences differ in length.

    >>> [round(x, 4) for x in bcubed(["a", "a", "b"], [1, 1, 1])]
    [0.5556, 1.0, 0.7143]
    >>> bcubed(["a", "b"], ["x", "x"], groups=[1, 2])
    (1.0, 1.0, 1.0)
    """
    if len(references) != len(predictions):
        raise ValueError(f"{len(references)} references but {len(predictions)} predictions")
    if groups is None:
        pairs = list(zip(references, predictions))
    else:
        if len(groups) != len(references):
            raise ValueError(f"{len(references)} references but {len(groups)} group ids")
        pairs = [((g, r), (g, p)) for g, r, p in zip(groups, references, predictions)]
    precision, recall = bcubed_terms(pairs)
    return prf(sequential_sum(precision), sequential_sum(recall), len(pairs))
