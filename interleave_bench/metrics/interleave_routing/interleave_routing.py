"""InterleaveBench routing metrics as an ``evaluate`` module: a thin wrapper over ``interleave_bench.score``."""

import datasets
import evaluate

from interleave_bench.score.bcubed import CITATION
from interleave_bench.score.labels import complete_turn
from interleave_bench.score.labels import score_labels
from interleave_bench.score.table import family

_CITATION = """\
@misc{interleavebench,
  title  = {InterleaveBench: routing an interleaved chat},
  note   = {Routing metrics: outcomes judged by what the chosen topic held before each message}
}
""" + CITATION

_DESCRIPTION = """\
Scores a router of an interleaved chat: one person works on several threads in one chat, and
every message must reach its thread's topic. Outcomes are judged by what the chosen topic held
before the message (sending a message into a topic that holds another thread pollutes it):
strict and lenient accuracy, weighted error (pollution costs 3, a needless topic, a question
back or a failure 1), one-offs sent into a topic, switch precision/recall/F1, topics per thread
and threads per topic, B-cubed precision/recall/F1, refs recall, and cost per message. In closed
mode labels are thread ids; in open mode the system's own labels are matched one-to-one to
threads (Hungarian matching). The numbers equal those of `interleave-bench score --json`.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: one list per session: the label routed for each message, in order: a thread id
        (closed mode), the system's own topic label (open mode), "CLARIFY", "ERROR", or None for
        a message with no prediction (counts as ERROR).
    references: one list per session: its gold turns, as in the data (`gold` with `thread`,
        `action`, `refs`; `ambiguous`; `judge` with `thread`; `style`; `tags`; `i`; `text`). Only
        `gold` is required.
    mode: "closed" (default) or "open".
    threads: optional, one list of thread ids per session (default: the ids its turns name; give
        them when a thread has no message).
    session_ids, langs: optional, one per session (used in the breakdowns only).
    predicted_refs: optional, per session and message, the related topics the router named.
Returns:
    A dict of every routing and cost metric of the metric table (interleave_bench/score/table.py),
    None where undefined (e.g. no one-offs):
{returns}
    In open mode also the conversation-disentanglement metrics pooled over sessions (the table's
    ``cluster`` family): one_to_one, vi_scaled, ari, shen_f1, exact_precision, exact_recall, exact_f1.
Examples:
    >>> import evaluate
    >>> import interleave_bench
    >>> routing = evaluate.load(interleave_bench.metric_path("interleave_routing"))
    >>> gold = [
    ...     {"gold": {"thread": "t1", "action": "new"}},
    ...     {"gold": {"thread": "t2", "action": "new"}},
    ...     {"gold": {"thread": "t1", "action": "switch"}},
    ...     {"gold": {"thread": None, "action": "oneoff"}},
    ... ]
    >>> results = routing.compute(predictions=[["t1", "t2", "t2", "t1"]], references=[gold])
    >>> results["accuracy"], results["weighted_error"], results["oneoff_into_topic"]
    (0.6667, 1.0, 1.0)
    >>> results = routing.compute(predictions=[["a", "b", "a", "c"]], references=[gold], mode="open")
    >>> results["accuracy"], results["bcubed_f1"], results["oneoff_into_topic"]
    (1.0, 1.0, 0.0)
    >>> results["one_to_one"], results["ari"]
    (1.0, 1.0)
"""


def _returns() -> str:
    """One line per metric the module returns, from the metric table: key, meaning, decimals, direction."""
    lines = []
    for m in (*family("routing"), *family("cost")):
        if m.key == "cost_usd_per_message":
            continue  # needs a price: the score document has it, the evaluate module does not
        decimals = "as measured" if m.decimals is None else f"{m.decimals} decimals"
        better = {True: ", higher is better", False: ", lower is better", None: ""}[m.higher_is_better]
        lines.append(f"        {m.key}: {m.meaning} ({decimals}{better})")
    return "\n".join(lines)


_KWARGS_DESCRIPTION = _KWARGS_DESCRIPTION.replace("{returns}", _returns())


def _turn_features():
    return {
        "i": datasets.Value("int64"),
        "text": datasets.Value("string"),
        "gold": {
            "thread": datasets.Value("string"),
            "action": datasets.Value("string"),
            "refs": datasets.List(datasets.Value("string")),
        },
        "style": datasets.Value("string"),
        "tags": datasets.List(datasets.Value("string")),
        "judge": {"thread": datasets.Value("string"), "candidates": datasets.List(datasets.Value("string"))},
        "ambiguous": datasets.Value("bool"),
    }


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class InterleaveRouting(evaluate.Metric):
    """Routing metrics of InterleaveBench (docs/score.md#the-metrics-exactly)."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.List(datasets.Value("string")),
                    "references": datasets.List(_turn_features()),
                }
            ),
            reference_urls=["https://doi.org/10.3115/980845.980859"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of sessions (labels and gold turns); absent turn keys are filled with nulls."""
        # evaluate encodes nested inputs only when every declared key is present; fill the absent
        # ones with nulls so that only `gold` is required of a turn
        if references is not None:
            references = [[complete_turn(t) for t in turns] if isinstance(turns, list) else turns
                          for turns in references]
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one session (labels and gold turns); absent turn keys are filled with nulls."""
        if isinstance(reference, list):
            reference = [complete_turn(t) for t in reference]
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def _compute(
        self,
        predictions,
        references,
        mode="closed",
        threads=None,
        session_ids=None,
        langs=None,
        predicted_refs=None,
    ):
        result = score_labels(
            references,
            predictions,
            mode=mode,
            threads=threads,
            session_ids=session_ids,
            langs=langs,
            predicted_refs=predicted_refs,
        )
        cluster = result.get("cluster")  # open mode: the field's conversation metrics beside ours
        return {**result["metrics"], **(cluster["metrics"] if cluster else {})}
