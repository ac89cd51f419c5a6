"""InterleaveBench mid-reply metric: where did a message sent while a reply ran end up?

A thin wrapper over :func:`interleave_bench.midreply.metrics.mid_reply_scores`, the same function
``interleave-bench mid-reply`` uses, so both give the same numbers.
"""

import datasets
import evaluate

from interleave_bench.hub.metric_inputs import KnownArguments
from interleave_bench.hub.metric_inputs import NullsAreMissing
from interleave_bench.hub.metric_inputs import mid_reply_columns
from interleave_bench.hub.metric_values import expected_destination
from interleave_bench.hub.metric_values import expected_destinations
from interleave_bench.hub.metric_values import plain
from interleave_bench.hub.metric_values import text
from interleave_bench.hub.metric_values import texts
from interleave_bench.midreply.metrics import mid_reply_scores
from interleave_bench.score.table import family

_CITATION = """\
@misc{interleavebench,
  title  = {InterleaveBench: routing an interleaved chat},
  author = {InterleaveBench contributors},
  year   = {2025},
  note   = {Mid-reply cases and metrics}
}
"""

_DESCRIPTION = """\
A reply is running in one topic of a chat and the user sends one more message (an interjection
while the reply is written, or queued for after it). Each message belongs with the running work
(`running`), with another topic (its id), or with a new topic (`new`). This metric compares
decided destinations with expected ones and reports, each with a 95% Wilson interval:
exact destination accuracy; right side (kept with the running work exactly when it belongs
there); mixed in (over the cases that belong elsewhere, the share kept in the running reply);
split off (over the cases that belong with the running work, the share sent elsewhere); and
wrong elsewhere (over the cases that belong elsewhere, the share sent to the wrong other place).
Optional per-case language, how and tags add breakdowns; breakdowns by expect kind are always given.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): decided destinations: `running`, a topic id, or `new`
        (final decisions, after any rule; anything else counts as sent elsewhere).
    references (`list` of `str`): expected destinations, same vocabulary (never empty, as a case
        file's `expect`).
    running (`list` of `str`, optional): each case's running topic id, or its `running` row as
        `load_dataset` gives it (`{topicId, ...}`); a prediction or reference naming it counts as
        `running`.
    lang (`list` of `str`, optional): each case's language, for `by_lang`.
    how (`list` of `str`, optional): `interjection` or `queued` per case (or the `ClassLabel`
        indices of a `load_dataset` column), for `by_how`.
    tags (`list` of `list` of `str`, optional): each case's tags, for `by_tag` (a case counts under
        each of its tags).
Returns:
    `n`, `n_running`, `n_elsewhere` (counts), and one rate per mid-reply metric of the metric
    table (interleave_bench/score/table.py), each `{"value", "k", "n", "ci95"}` (value and
    interval are None over no cases):
{returns}
    then `by_lang`, `by_how`, `by_expect`, `by_tag` with the same entries per group.
Examples:
    The published cases as `datasets.load_dataset("ORG/interleavebench", "mid_reply")` gives them
    are passed column by column (`references=ds["test"]["expect"]`, `running=ds["test"]["running"]`,
    `how=ds["test"]["how"]`, ...); here, by hand:

    >>> import evaluate
    >>> import interleave_bench
    >>> metric = evaluate.load(interleave_bench.metric_path("interleave_mid_reply"))
    >>> results = metric.compute(
    ...     predictions=["running", "running", "lisbon-trip", "new", "running"],
    ...     references=["running", "q3-review", "lisbon-trip", "running", "running"],
    ... )
    >>> results["accuracy"]["value"], results["right_side"]["value"]
    (0.6, 0.6)
    >>> results["mixed_in"]
    {'value': 0.5, 'k': 1, 'n': 2, 'ci95': [0.0945, 0.9055]}
    >>> results["split_off"]["value"], results["split_off"]["k"], results["split_off"]["n"]
    (0.3333, 1, 3)

    A destination naming the running topic counts as `running`; breakdowns follow the optional
    columns:

    >>> results = metric.compute(
    ...     predictions=["q3-review", "new", "running"],
    ...     references=["running", "new", "lisbon-trip"],
    ...     running=["q3-review", "q3-review", "q3-review"],
    ...     lang=["en", "en", "zh"],
    ... )
    >>> results["accuracy"]["value"], results["mixed_in"]["k"]
    (0.6667, 1)
    >>> {lang: group["accuracy"]["value"] for lang, group in results["by_lang"].items()}
    {'en': 1.0, 'zh': 0.0}

    Rows as `load_dataset` gives them: `running` rows and `how` label indices.

    >>> results = metric.compute(predictions=["running", "new"], references=["running", "running"],
    ...                          running=[{"topicId": "q3", "request": "", "progress": "", "extra": None}] * 2,
    ...                          how=[0, 1])
    >>> sorted(results["by_how"]), results["accuracy"]["value"]
    (['interjection', 'queued'], 0.5)
"""


def _returns() -> str:
    """One line per rate, from the metric table: key, meaning, decimals, direction."""
    lines = []
    for m in family("mid_reply"):
        better = "higher is better" if m.higher_is_better else "lower is better"
        lines.append(f"        `{m.json_key}`: {m.meaning} ({m.decimals} decimals, {better})")
    return "\n".join(lines)


_KWARGS_DESCRIPTION = _KWARGS_DESCRIPTION.replace("{returns}", _returns())

#: what a prediction or reference is, as an error names it
DESTINATION = "a destination (running, a topic id or new)"


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class InterleaveMidReply(KnownArguments, NullsAreMissing, evaluate.Metric):
    """Mid-reply destination accuracy, right side, mixed in and split off, with intervals."""

    def _info(self):
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("string"),
                    "references": datasets.Value("string"),
                }
            ),
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add cases: one destination (text) each."""
        predictions = texts(predictions, "predictions", DESTINATION, nulls=True)  # None: no decision, a miss
        references = expected_destinations(references, "references", DESTINATION)
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one case."""
        prediction = text(prediction, "prediction", DESTINATION, nulls=True)
        reference = expected_destination(reference, "reference", DESTINATION)
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def _compute(self, predictions, references, running=None, lang=None, how=None, tags=None):
        columns = mid_reply_columns(running, lang, how, tags)
        return mid_reply_scores(plain(predictions), plain(references), **columns)
