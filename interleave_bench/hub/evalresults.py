"""The Hub's Eval Results: the dataset's ``eval.yaml`` (its tasks) and a model repo's ``.eval_results/``.

A dataset repo registers as a benchmark with an ``eval.yaml`` at its root: a name, a description,
the evaluation framework and one entry per task (``id``, ``config``, ``split``). The tasks of
InterleaveBench, each present only when its config is: ``v0-closed`` and ``v0-open`` (routing
accuracy on ``v0``), ``mid-reply`` (destination accuracy on ``mid_reply``) and ``shared-facts``
(answer accuracy on ``v1``), all on the ``test`` split.

A model repo takes one YAML file per result under ``.eval_results/``: a list of entries with
``dataset`` (``id``, ``task_id``, ``revision``), ``value``, ``date``, ``source`` (``url``,
``name``), ``evaluation_framework`` and ``notes``. :func:`eval_results_files` makes them from
leaderboard rows, so what a model page shows is what the board published.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from .. import __version__

#: the file a dataset repo registers its benchmark tasks in (the Hub validates it at push time)
EVAL_YAML = "eval.yaml"
#: the folder of a model repo that holds its evaluation results
EVAL_RESULTS_DIR = ".eval_results"
#: the evaluation framework named in eval.yaml and in each result
FRAMEWORK = "interleave-bench"
#: the split every task is reported on (tune on dev, report test)
TASK_SPLIT = "test"


@dataclass(frozen=True)
class Task:
    id: str
    config: str
    kind: str
    mode: Optional[str]
    metric: str
    meaning: str


#: the benchmark's tasks, in the order eval.yaml lists them
TASKS = (
    Task("v0-closed", "v0", "routing", "closed", "accuracy", "routing accuracy, thread list given (strict messages)"),
    Task("v0-open", "v0", "routing", "open", "accuracy", "routing accuracy, the router makes its own topics"),
    Task("mid-reply", "mid_reply", "mid_reply", None, "accuracy", "destination accuracy of messages sent mid-reply"),
    Task("shared-facts", "v1", "shared_facts", None, "accuracy", "answers with the value as it stands now"),
)


def eval_yaml(configs: Iterable[str]) -> str:
    """The ``eval.yaml`` text declaring the tasks whose config is among ``configs``."""
    import yaml

    present = set(configs)
    doc = {
        "name": "InterleaveBench",
        "description": ("Routing an interleaved chat: one person works on several threads in one chat and every "
                        "message must reach its thread's topic. Tasks: " + "; ".join(
                            f"{t.id}: {t.meaning}" for t in TASKS if t.config in present) + "."),
        "evaluation_framework": FRAMEWORK,
        "tasks": [{"id": t.id, "config": t.config, "split": TASK_SPLIT} for t in TASKS if t.config in present],
    }
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


def task_of(row: dict[str, Any]) -> Optional[Task]:
    """The task a leaderboard row reports on, or ``None`` (another split, or a kind without a task)."""
    if row.get("split") != TASK_SPLIT:
        return None
    kind = row.get("kind") or "routing"
    return next((t for t in TASKS if t.kind == kind and (t.mode is None or t.mode == row.get("mode"))), None)


def result_entry(row: dict[str, Any], task: Task, board_url: Callable[[Optional[str]], str]) -> dict[str, Any]:
    """One ``.eval_results`` entry for a board row (the value is the task's metric, in [0, 1]);
    ``board_url(tag)`` is the board at a publication tag: the source is the row's own publication,
    its link and its name alike."""
    value = row[task.metric]
    lo, hi = row.get(f"{task.metric}_lo"), row.get(f"{task.metric}_hi")
    notes = [f"system {row.get('system')}", f"policy {row.get('policy') or '-'}"]
    if lo is not None and hi is not None:
        notes.append(f"95% interval [{lo}, {hi}]")
    dataset: dict[str, Any] = {"id": row["data_repo"], "task_id": task.id}
    revision = row.get("data_commit") or row.get("data_revision")
    if revision:
        dataset["revision"] = revision
    entry: dict[str, Any] = {"dataset": dataset, "value": value}
    if row.get("date"):
        entry["date"] = str(row["date"])
    entry["source"] = {"url": board_url(row.get("publication")),
                       "name": f"InterleaveBench leaderboard {row.get('publication') or ''}".strip()}
    entry["evaluation_framework"] = FRAMEWORK
    entry["notes"] = "; ".join(notes) + f" (interleave-bench {__version__})"
    return entry


def eval_results_files(rows: list[dict[str, Any]], board_url: Callable[[Optional[str]], str]) -> dict[str, str]:
    """``{path in the model repo: YAML text}``: one file per task, from the best-ranked row of each.

    ``rows`` come ranked (best first); rows without a data repo, on another split or of no task
    are left out.
    """
    import yaml

    best: dict[str, tuple[Task, dict[str, Any]]] = {}
    for r in rows:
        task = task_of(r)
        if task is None or not r.get("data_repo") or r.get(task.metric) is None:
            continue
        best.setdefault(task.id, (task, r))
    out = {}
    for task in TASKS:
        if task.id in best:
            t, r = best[task.id]
            text = yaml.safe_dump([result_entry(r, t, board_url)], sort_keys=False, allow_unicode=True, width=100)
            out[f"{EVAL_RESULTS_DIR}/interleavebench-{task.id}.yaml"] = text
    return out
