"""InterleaveBench routing metrics as an ``evaluate`` module: a thin wrapper over ``interleave_bench.score``."""

import evaluate

from interleave_bench.hub.metric_inputs import KnownArguments
from interleave_bench.hub.metric_inputs import NullsAreMissing
from interleave_bench.hub.metric_inputs import check_sessions_form
from interleave_bench.hub.metric_inputs import encodable_labels
from interleave_bench.hub.metric_inputs import encodable_turns
from interleave_bench.hub.metric_inputs import session_features
from interleave_bench.score.bcubed import CITATION
from interleave_bench.hub.metric_inputs import score_sessions
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
        (closed mode), the system's own topic label (open mode; a number is read as its text),
        "CLARIFY", "ERROR", or None for a message with no prediction (counts as ERROR).
    references: one list per session: its gold turns, as `load_dataset` gives them
        (`ds["dev"]["turns"]`: `ClassLabel` indices, `extra` cells and nulls are read back as the
        data holds them) or as the JSONL holds them (`gold` with `thread`, `action`, `refs`;
        `ambiguous`; `judge` with `thread`; `style`; `tags`; `i`; `text`). Only `gold` is required.
    mode: "closed" (default) or "open". Closed mode refuses labels of which not one is a thread
        id of its session (a system's own topic labels: give mode="open").
    threads: optional, one list per session of its thread ids or thread rows (`ds["dev"]["threads"]`;
        default: the ids its turns name; give them when a thread has no message).
    session_ids, langs: optional, one per session (used in the breakdowns only).
    predicted_refs: optional, per session and message, the related topics the router named.
    usage, elapsed_ms, via: optional, per session and message, the prediction rows' fields of the
        same names (`{input, output, cache_hit}` tokens, milliseconds, how it was decided), for
        the cost metrics; None where a row has none.
    `add` and `add_batch` take the same inputs (`add` one session, by `prediction`/`reference`
    or `predictions`/`references`); the optional ones are given to `compute`.
Returns:
    A dict of every routing and cost metric of the metric table (interleave_bench/score/table.py),
    None where undefined (e.g. no one-offs):
{returns}
    In open mode also the conversation-disentanglement metrics pooled over sessions (the table's
    ``cluster`` family): one_to_one, vi_scaled, ari, shen_f1, exact_precision, exact_recall, exact_f1.
Examples:
    A split as `datasets.load_dataset("ORG/interleavebench", "v0")` gives it; offline, the package's
    small example through its builder (the same typed rows: `ClassLabel` indices, `extra` cells):

    >>> import evaluate
    >>> import interleave_bench
    >>> routing = evaluate.load(interleave_bench.metric_path("interleave_routing"))
    >>> ds = interleave_bench.load("v0", data_dir=interleave_bench.data_path("examples/v0"))
    >>> dev = ds["dev"]
    >>> stay = [[s["threads"][0]["id"]] * len(s["turns"]) for s in dev]
    >>> results = routing.compute(predictions=stay, references=dev["turns"], threads=dev["threads"])
    >>> results["accuracy"], results["bcubed_f1"]
    (0.5741, 0.6608)

    Turns as the JSONL holds them, one session at a time with `add`:

    >>> gold = [
    ...     {"gold": {"thread": "t1", "action": "new"}},
    ...     {"gold": {"thread": "t2", "action": "new"}},
    ...     {"gold": {"thread": "t1", "action": "switch"}},
    ...     {"gold": {"thread": None, "action": "oneoff"}},
    ... ]
    >>> routing.add(predictions=["t1", "t2", "t2", "t1"], references=gold)
    >>> results = routing.compute()
    >>> results["accuracy"], results["weighted_error"], results["oneoff_into_topic"]
    (0.6667, 1.0, 1.0)
    >>> results = routing.compute(predictions=[["a", "b", "a", "c"]], references=[gold], mode="open")
    >>> results["accuracy"], results["bcubed_f1"], results["oneoff_into_topic"]
    (1.0, 1.0, 0.0)
    >>> results["one_to_one"], results["ari"]
    (1.0, 1.0)

    The cost metrics read each row's usage and latency:

    >>> results = routing.compute(predictions=[["t1", "t2", "t1", "t1"]], references=[gold],
    ...                           usage=[[{"input": 500, "output": 9}, None, {"input": 700, "output": 7}, None]],
    ...                           elapsed_ms=[[30, None, 50, None]], via=[["llm", "rule-ack", "llm", "rule-ack"]])
    >>> results["input_tokens_per_message"], results["model_calls_share"], results["latency_p50_ms"]
    (300.0, 0.5, 50.0)
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


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class InterleaveRouting(KnownArguments, NullsAreMissing, evaluate.Metric):
    """Routing metrics of InterleaveBench (docs/score.md#the-metrics-exactly)."""

    #: B-cubed's argument, as ``evaluate.combine([routing, bcubed])`` hands it on
    ARGUMENT_HINTS = {"groups": "interleave_bcubed's groups apply to one label per item; per-session inputs are "
                                "grouped by session"}

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=session_features(),
            reference_urls=["https://doi.org/10.3115/980845.980859"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of sessions (labels and gold turns, `load_dataset` rows or JSONL turns)."""
        check_sessions_form(self.name, predictions, references)
        return super().add_batch(predictions=encodable_labels(predictions), references=encodable_turns(references),
                                 **kwargs)

    def add(self, *, prediction=None, reference=None, predictions=None, references=None, **kwargs):
        """Add one session (its labels and gold turns), by the singular or the plural names."""
        prediction = predictions if prediction is None else prediction
        reference = references if reference is None else reference
        check_sessions_form(self.name, None if prediction is None else [prediction],
                            None if reference is None else [reference])
        turns = encodable_turns([reference])
        return super().add(prediction=encodable_labels([prediction])[0], reference=turns[0], **kwargs)

    def _compute(
        self,
        predictions,
        references,
        mode="closed",
        threads=None,
        session_ids=None,
        langs=None,
        predicted_refs=None,
        usage=None,
        elapsed_ms=None,
        via=None,
    ):
        result = score_sessions(references, predictions, mode=mode, thread_labels=True, threads=threads,
                                session_ids=session_ids, langs=langs, predicted_refs=predicted_refs, usage=usage,
                                elapsed_ms=elapsed_ms, via=via)
        cluster = result.get("cluster")  # open mode: the field's conversation metrics beside ours
        return {**result["metrics"], **(cluster["metrics"] if cluster else {})}

