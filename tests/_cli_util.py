"""Running ``interleave-bench`` in-process from a test."""

from __future__ import annotations

from interleave_bench.cli import main


def cli(*argv: object) -> int:
    """``interleave-bench ARGV`` in-process (each argument as a string): its exit code."""
    return main([str(a) for a in argv])


def run_cli(capsys, *argv: object) -> tuple[int, str, str]:
    """``interleave-bench ARGV`` in-process (each argument as a string): (exit code, stdout, stderr)."""
    code = cli(*argv)
    out, err = capsys.readouterr()
    return code, out, err
