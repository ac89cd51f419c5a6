"""The built wheel carries both harness tasks: the lm-eval task folder and the inspect_ai entry point."""

from __future__ import annotations

import configparser
import zipfile
from pathlib import Path

from interleave_bench.harness.names import NAMESPACE, TASKS_DIR

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_ships_the_task_folder_and_registers_the_inspect_entry_point(built_wheel):
    with zipfile.ZipFile(built_wheel) as z:
        names = set(z.namelist())
        [entry_txt] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        entries = configparser.ConfigParser()
        entries.read_string(z.read(entry_txt).decode())
    task_files = {p.relative_to(ROOT).as_posix() for p in TASKS_DIR.rglob("*") if p.is_file()
                  and "__pycache__" not in p.parts}
    assert {"interleave_bench/harness/lm_eval_tasks/interleavebench/interleavebench_closed.yaml",
            "interleave_bench/harness/lm_eval_tasks/interleavebench/utils.py"} <= task_files <= names
    assert entries["inspect_ai"][NAMESPACE] == "interleave_bench.harness.inspect_registry"
    assert "interleave_bench/harness/inspect_registry.py" in names
