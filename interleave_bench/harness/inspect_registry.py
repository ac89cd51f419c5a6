"""The tasks inspect_ai finds through the ``inspect_ai`` entry point (docs/harness.md#inspect_ai).

inspect loads this module when it is asked for a task of the namespace ``interleavebench/`` (the
entry point's name) and looks the task up by that name. It names a task after the import package
that defines it (here ``interleave_bench/routing``), so the task is registered under
``interleavebench/routing`` as well; the task it builds carries that name into its logs.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai._util.error import PrerequisiteError
from inspect_ai._util.registry import RegistryInfo, registry_add, registry_info

from ..errors import InterleaveError
from ..score.defaults import DEFAULT_SPLIT
from .inspect_task import routing_task
from .data import problem_lines
from .names import DEFAULT_DATA, TASK, TASK_NAME


@task(name=TASK_NAME)
def routing(data: str = str(DEFAULT_DATA), mode: str = "closed", split: str = DEFAULT_SPLIT) -> Task:
    """InterleaveBench routing: every message of each session routed in order by the model.

    Args:
        data: a data folder, an exported dataset folder, or ``hub:ORG/NAME@REV`` (default
            ``data/interleave-v0``, where ``generate`` writes).
        mode: ``closed`` (thread cards given) or ``open`` (topics made on the way).
        split: ``dev``, ``test`` or ``all``.
    """
    try:
        return routing_task(data, mode=mode, split=split)
    except InterleaveError as exc:
        # bad data or options: the project's one line per problem, as inspect shows a task that
        # cannot start (no traceback)
        raise PrerequisiteError("\n".join(problem_lines(exc))) from None


registry_add(routing, RegistryInfo(type="task", name=TASK, metadata=registry_info(routing).metadata))
