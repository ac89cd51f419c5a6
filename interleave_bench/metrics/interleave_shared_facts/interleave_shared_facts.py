"""InterleaveBench shared-facts metric: does topic B get topic A's value as it stands now?

A thin wrapper over :func:`interleave_bench.facts.results.score_rows`, the same function
``interleave-bench score-facts`` uses, so both give the same numbers and gates.
"""

import datasets
import evaluate

from interleave_bench.errors import InputError
from interleave_bench.facts.results import parse_lines
from interleave_bench.facts.results import score_rows
from interleave_bench.hub.metric_inputs import KnownArguments
from interleave_bench.hub.metric_inputs import NullsAreMissing
from interleave_bench.hub.metric_inputs import row_error
from interleave_bench.hub.metric_values import text
from interleave_bench.hub.metric_values import texts

_CITATION = """\
@misc{interleavebench,
  title  = {InterleaveBench: routing an interleaved chat},
  author = {InterleaveBench contributors},
  year   = {2025},
  note   = {Shared facts (v1) metrics and gates}
}
"""

_DESCRIPTION = """\
One person works on several topics in one chat. When topic B needs a value settled in topic A (a
budget, a date, an owner), does it get the value as it stands now, and never one that was only
proposed, turned down or withdrawn? A facts run asks each probe once per strategy (single, own,
summary, facts, oracle) and writes result rows (`answer`, `delivery`, `route`, `session`,
`error`). This metric scores those rows exactly as `interleave-bench score-facts` does: per
strategy accuracy with a Wilson 95% interval, verdict counts, accuracy by category and language,
stale and proposal answers, context tokens and notes characters; facts vs summary on the same
probes; delivered-line verdicts; routing with and without facts offered; tokens spent; and the
four gates (beats_summary, stale_answers, proposals_shared, routing_unchanged). An answer row
without a verdict is judged again from its answer and probe fields; no model is called.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): the result rows of a facts run, one JSON object per item (the
        lines of a `facts/<model>.jsonl` file).
Returns:
    `strategies` (per strategy: `n`, `answer_accuracy` `{"value", "k", "n", "ci95"}`, `verdicts`,
    `by_category`, `by_lang`, `stale_answers`, `proposal_answers`, `context_tokens`, `notes_chars`),
    `paired`, `delivery`, `routing`, `tokens`, `errors`, `duplicates`, `missing`, `gates` (each
    `{"passed", "why"}`) and `passed`.
Examples:
    >>> import json
    >>> import evaluate
    >>> import interleave_bench
    >>> metric = evaluate.load(interleave_bench.metric_path("interleave_shared_facts"))
    >>> def answer(probe, strategy, verdict, category):
    ...     return json.dumps({"kind": "answer", "session_id": "s1", "probe": probe, "strategy": strategy,
    ...                        "category": category, "lang": "en", "verdict": verdict})
    >>> rows = [
    ...     answer("p1", "facts", "correct", "stale"), answer("p2", "facts", "correct", "proposal"),
    ...     answer("p1", "summary", "stale", "stale"), answer("p2", "summary", "correct", "proposal"),
    ...     json.dumps({"kind": "delivery", "session_id": "s1", "probe": "p1", "source": "a", "key": "budget",
    ...                 "value": "900 EUR", "verdict": "current"}),
    ...     json.dumps({"kind": "route", "session_id": "s1", "turn": 4, "gold": "b", "without": "b", "with": "b",
    ...                 "offered": 1, "imports": ["a/budget"]}),
    ... ]
    >>> results = metric.compute(predictions=rows)
    >>> results["strategies"]["facts"]["answer_accuracy"]
    {'value': 1.0, 'k': 2, 'n': 2, 'ci95': [0.3424, 1.0]}
    >>> results["strategies"]["summary"]["stale_answers"]["value"]
    1.0
    >>> results["paired"]["facts_only_right"], results["paired"]["summary_only_right"]
    (1, 0)
    >>> {name: gate["passed"] for name, gate in results["gates"].items()}
    {'beats_summary': True, 'stale_answers': True, 'proposals_shared': True, 'routing_unchanged': True}
    >>> results["passed"]
    True

    A delivered line whose value was only ever proposed fails `proposals_shared`, and the run:

    >>> rows.append(json.dumps({"kind": "delivery", "session_id": "s1", "probe": "p2", "source": "a",
    ...                         "key": "deposit", "value": "300 EUR", "verdict": "proposal"}))
    >>> results = metric.compute(predictions=rows)
    >>> results["gates"]["proposals_shared"]["passed"], results["passed"]
    (False, False)
"""


#: what a prediction is, as an error names it
ROW = "a result row (one JSON object, as a line of facts/<model>.jsonl)"
#: where the rows' problems are said to be, before they are named as the input's
SOURCE = "<predictions>"


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class InterleaveSharedFacts(KnownArguments, NullsAreMissing, evaluate.Metric):
    """Shared-facts strategies, deliveries, routing with and without facts, and the four gates."""

    def _info(self):
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("string")}),
        )

    def add_batch(self, *, predictions=None, **kwargs):
        """Add result rows: one JSON object as text each."""
        return super().add_batch(predictions=texts(predictions, "predictions", ROW), **kwargs)

    def add(self, *, prediction=None, **kwargs):
        """Add one result row."""
        return super().add(prediction=text(prediction, "prediction", ROW), **kwargs)

    def _compute(self, predictions):
        try:
            return score_rows(parse_lines(predictions, SOURCE), SOURCE)
        except InputError as exc:
            if exc.path != SOURCE:
                raise
            raise row_error(exc, "predictions") from None
