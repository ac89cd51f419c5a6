"""The lm-evaluation-harness task ``interleavebench_closed``: the functions its YAML names.

The task folder ships in the package (:data:`~.names.TASKS_DIR`; ``interleave-bench lm-eval-tasks``
prints it, for ``--include_path``). Its data is any ``DATA`` the project reads (a data folder, an
exported dataset folder, ``hub:ORG/NAME@REV``), given as ``--metadata data=DATA``, with
``split=dev|test|all`` (default the scorer's). The documents and their scoring are
:mod:`.closed`'s; this module only hands them to lm-eval.
"""

from __future__ import annotations

import sys
from typing import Any

from ..score.defaults import DEFAULT_SPLIT
from . import closed
from ..errors import InterleaveError
from .data import load, problem_lines
from .names import DEFAULT_DATA, LMEVAL_OPEN_MODE

#: the split name lm-eval reads the documents from (the task's ``test_split``)
DOC_SPLIT = "test"


def load_docs(data: str | None = None, split: str = DEFAULT_SPLIT, **_: Any) -> Any:
    """The task's ``custom_dataset``: ``DatasetDict({"test": documents})`` of ``data``'s ``split``.

    lm-eval passes the task metadata and ``--metadata`` as keywords (and, merged in, the model's
    arguments: those are not ours and are ignored).
    """
    import datasets

    try:
        got = load(data or DEFAULT_DATA, split, closed.MODE, open_option=LMEVAL_OPEN_MODE)
    except InterleaveError as exc:
        # bad data or options: the project's one line per problem and exit 2, not lm-eval's traceback
        print("\n".join(problem_lines(exc)), file=sys.stderr)
        raise SystemExit(2) from None
    return datasets.DatasetDict({DOC_SPLIT: datasets.Dataset.from_list(closed.documents(got.sessions))})


def doc_to_text(doc: dict[str, Any]) -> str:
    """The user message of the routing request (the system message is the task's ``description``)."""
    return doc["user"]


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """``accuracy`` (1 when the answer is the gold thread) and ``weighted_error`` (the outcome's
    cost) of the generated answer: their means are ``score``'s pooled figures."""
    verdict = closed.judge(doc, results[0] if results else "")
    return {"accuracy": float(verdict.correct), "weighted_error": float(verdict.cost)}
