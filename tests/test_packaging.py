"""A wheel (not just a checkout) carries everything the commands read at run time."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_ships_data_prompts_and_card_templates(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    [wheel] = list(tmp_path.glob("*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped_data = {p.relative_to(ROOT).as_posix() for p in (ROOT / "interleave_bench" / "data").rglob("*") if p.is_file()
                    and "__pycache__" not in p.parts}
    assert shipped_data and shipped_data <= names, sorted(shipped_data - names)
    cards = {p.name for p in (ROOT / "dataset_card").iterdir() if p.is_file()}
    in_wheel = {n.rsplit("/", 1)[-1] for n in names if "/share/interleave-bench/dataset_card/" in n}
    assert cards and cards == in_wheel
