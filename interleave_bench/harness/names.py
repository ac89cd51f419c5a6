"""The names the harness tasks, their readers and the commands share (no harness import: cheap to read)."""

from pathlib import Path

#: the namespace of the task in inspect's registry (the ``inspect_ai`` entry point's name)
NAMESPACE = "interleavebench"
#: the task's name after its namespace
TASK_NAME = "routing"
#: what ``inspect eval`` is given, and what a log of the task names
TASK = f"{NAMESPACE}/{TASK_NAME}"
#: the sample store key holding the session's prediction rows (as ``route`` writes them)
PREDICTIONS_KEY = "interleavebench_predictions"
#: the sample metadata key of the session's place in the data (a log may hold samples in any order)
POSITION_KEY = "position"
#: the sample metadata key of the session itself
SESSION_KEY = "session"
#: the lm-evaluation-harness task folder shipped in the package, for ``lm_eval --include_path``
TASKS_DIR = Path(__file__).resolve().parent / "lm_eval_tasks"
#: where a task reads its data without a data argument (inspect's ``-T data=``, lm-eval's
#: ``--metadata data=``): the generator's output folder, the default of ``interleave_bench.load`` too
DEFAULT_DATA = Path("data") / "interleave-v0"
#: how a harness asks for open mode, for the message refusing closed mode on open-only data (the
#: CLI's ``--mode open`` is no option there): inspect's task option, and for the closed-only lm-eval
#: task the inspect task that has one
INSPECT_OPEN_MODE = "-T mode=open"
LMEVAL_OPEN_MODE = "the inspect task's -T mode=open (the lm-eval task is closed mode only)"
