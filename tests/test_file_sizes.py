"""No file of the project's code or docs runs over :data:`MAX_LINES` lines: a longer one is split by
job. Data files (templates, weights, corpus samples) are not code and are not counted."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 600
#: the folders whose code and docs are counted, and the files at the root
FOLDERS = ("interleave_bench", "tests", "scripts", "benchmarks", "docs", "dataset_card", ".ci")
SUFFIXES = (".py", ".md", ".pyx", ".sh", ".cfg", ".toml")


def counted(root: Path) -> list[Path]:
    """The files of ``root`` whose lines are counted (code and docs; never data)."""
    files = [p for p in root.iterdir() if p.is_file() and p.suffix in SUFFIXES]
    for folder in FOLDERS:
        if (root / folder).is_dir():
            files += [p for p in (root / folder).rglob("*") if p.is_file() and p.suffix in SUFFIXES
                      and "__pycache__" not in p.parts and "data" not in p.relative_to(root).parts[1:]]
    return sorted(files)


def too_long(root: Path) -> list[str]:
    """``path: N lines`` of each counted file over :data:`MAX_LINES` lines."""
    out = []
    for p in counted(root):
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            out.append(f"{p.relative_to(root)}: {n} lines")
    return out


def test_no_file_of_code_or_docs_runs_over_600_lines():
    files = counted(ROOT)
    assert any(p.name == "local.py" for p in files) and any(p.suffix == ".md" for p in files)
    assert too_long(ROOT) == []


@pytest.mark.parametrize("lines, over", [(MAX_LINES, False), (MAX_LINES + 1, True)])
def test_the_count_finds_a_file_one_line_over(tmp_path, lines, over):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("x\n" * lines, encoding="utf-8")
    (tmp_path / "tests" / "data").mkdir(parents=True)
    (tmp_path / "tests" / "data" / "big.py").write_text("x\n" * (MAX_LINES * 2), encoding="utf-8")  # data: not counted
    assert too_long(tmp_path) == ([f"docs/page.md: {lines} lines"] if over else [])
