"""B-cubed precision, recall and F1 of any clustering, as an ``evaluate`` module (thin over ``interleave_bench.score``)."""

import datasets
import evaluate

from interleave_bench.hub.metric_inputs import KnownArguments
from interleave_bench.hub.metric_inputs import NullsAreMissing
from interleave_bench.hub.metric_inputs import check_sessions_form
from interleave_bench.hub.metric_inputs import encodable_labels
from interleave_bench.hub.metric_inputs import encodable_turns
from interleave_bench.hub.metric_inputs import is_empty
from interleave_bench.hub.metric_inputs import is_session_list
from interleave_bench.hub.metric_inputs import session_features
from interleave_bench.hub.metric_inputs import SESSION_ARGUMENTS
from interleave_bench.hub.metric_inputs import check_mode
from interleave_bench.hub.metric_values import cluster_label
from interleave_bench.hub.metric_values import cluster_labels
from interleave_bench.score.bcubed import CITATION
from interleave_bench.score.bcubed import bcubed
from interleave_bench.hub.metric_inputs import score_sessions
from interleave_bench.score.routing import rounded

#: what a per-session input of one of its arguments asks of the other
BOTH_FORMS = "give both one list per session, or both one label per item"

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
    predictions: the predicted cluster label of each item (text, not empty, or an integer read as
        its text as `interleave-bench score` reads it: 1 is "1"; a float such as 1.0, or a bool,
        is refused); or, as `interleave_routing` takes them, one list of labels per session.
    references: the reference cluster label of each item (same type as predictions); or one list
        of gold turns per session (`load_dataset(...)["dev"]["turns"]` or JSONL turns): the items
        are then the thread messages routed to a topic, clustered by gold thread within their
        session, exactly as `interleave_routing` computes `bcubed_*`, so that
        `evaluate.combine([routing, bcubed])` takes one set of inputs.
    groups: optional, a group id per item; clusters never span groups (per-session inputs: the
        sessions are the groups).
    mode, threads, session_ids, langs, predicted_refs, usage, elapsed_ms, via: accepted for
        per-session inputs (as `evaluate.combine` hands every module the same arguments) and checked
        as `interleave_routing` checks them (a bad one is the same ValueError); they do not change
        B-cubed. One label per item takes none of them but mode.
Returns:
    precision, recall, f1: floats in [0, 1], rounded to 4 decimals as `interleave-bench score`
    rounds `bcubed_precision`, `bcubed_recall` and `bcubed_f1`; None each for no items, undefined
    (per session: with no thread message routed to a topic), as the score file's null.
Examples:
    >>> import evaluate
    >>> import interleave_bench
    >>> b3 = evaluate.load(interleave_bench.metric_path("interleave_bcubed"))
    >>> b3.compute(predictions=["x", "x", "x"], references=["a", "a", "b"])
    {'precision': 0.5556, 'recall': 1.0, 'f1': 0.7143}
    >>> b3.compute(predictions=[1, 1], references=[7, 8], groups=["s1", "s2"])
    {'precision': 1.0, 'recall': 1.0, 'f1': 1.0}

    Per session, as the routing metric takes its inputs (a one-off is no thread message):

    >>> gold = [{"gold": {"thread": "t1", "action": "new"}}, {"gold": {"thread": "t2", "action": "new"}},
    ...         {"gold": {"thread": "t1", "action": "switch"}}, {"gold": {"thread": None, "action": "oneoff"}}]
    >>> b3.compute(predictions=[["a", "a", "a", "b"]], references=[gold])
    {'precision': 0.5556, 'recall': 1.0, 'f1': 0.7143}
    >>> both = evaluate.combine([evaluate.load(interleave_bench.metric_path("interleave_routing")), b3])
    >>> results = both.compute(predictions=[["a", "a", "a", "b"]], references=[gold], mode="open")
    >>> results["bcubed_f1"] == results["f1"]
    True
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class InterleaveBcubed(KnownArguments, NullsAreMissing, evaluate.Metric):
    """B-cubed precision, recall and F1 with optional groups."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
                datasets.Features({"predictions": datasets.Value("int64"), "references": datasets.Value("int64")}),
                session_features(),
            ],
            reference_urls=["https://doi.org/10.3115/980845.980859"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add items (one label each), or sessions as `interleave_routing` takes them."""
        if is_session_list(predictions) or is_session_list(references):
            check_sessions_form(self.name, predictions, references, BOTH_FORMS)
            predictions, references = encodable_labels(predictions), encodable_turns(references)
        elif is_empty(predictions) and is_empty(references):
            return None  # no item to add (and none to read the inputs' format from)
        else:
            predictions, references = cluster_labels(predictions, "predictions"), cluster_labels(references, "references")
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, predictions=None, references=None, **kwargs):
        """Add one item, or one session (by the singular or the plural names)."""
        prediction = predictions if prediction is None else prediction
        reference = references if reference is None else reference
        if is_session_list([prediction]) or is_session_list([reference]):
            check_sessions_form(self.name, None if prediction is None else [prediction],
                                None if reference is None else [reference], BOTH_FORMS)
            prediction, reference = encodable_labels([prediction])[0], encodable_turns([reference])[0]
        else:
            prediction, reference = cluster_label(prediction, "prediction"), cluster_label(reference, "reference")
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """As `evaluate` computes, and for no items at all B-cubed's undefined value (None each),
        as `interleave_routing` gives for no messages."""
        if self.writer is None and is_empty(predictions) and is_empty(references):
            self.check_arguments(kwargs)
            return self._compute([], [], **kwargs)
        return super().compute(predictions=predictions, references=references, **kwargs)

    def _compute(self, predictions, references, groups=None, mode="closed", threads=None, session_ids=None,
                 langs=None, predicted_refs=None, usage=None, elapsed_ms=None, via=None):
        session_arguments = dict(threads=threads, session_ids=session_ids, langs=langs, predicted_refs=predicted_refs,
                                 usage=usage, elapsed_ms=elapsed_ms, via=via)
        given = [name for name in SESSION_ARGUMENTS if session_arguments[name] is not None]
        if (references and isinstance(references[0], list)) or (not references and given):
            if groups is not None:
                raise ValueError("interleave_bcubed: groups apply to one label per item; per-session inputs "
                                 "are grouped by session")
            # checked as interleave_routing checks them, though B-cubed reads none but threads
            metrics = score_sessions(references, predictions, mode=mode, **session_arguments)["metrics"]
            return {"precision": metrics["bcubed_precision"], "recall": metrics["bcubed_recall"],
                    "f1": metrics["bcubed_f1"]}
        check_mode(mode)
        if given:
            raise ValueError(f"interleave_bcubed: {given[0]} applies to per-session inputs (one list of labels and "
                             "one of gold turns per session); one label per item takes only groups and mode")
        precision, recall, f1 = bcubed(references, predictions, cluster_labels(groups, "groups", "a group id"))
        return {
            "precision": rounded("bcubed_precision", precision),
            "recall": rounded("bcubed_recall", recall),
            "f1": rounded("bcubed_f1", f1),
        }
