"""Shared pieces of the SGD tests: the committed slice of the corpus, the CLI, an imported copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from interleave_bench.cli import main
from interleave_bench.sgd import import_sgd

#: five dev dialogues copied unchanged, with their schema entries (tests/data/sgd/README.md)
FIXTURE = Path(__file__).parent / "data" / "sgd"


def run_cli(capsys, *argv):
    """``(exit code, stdout, stderr)`` of one command."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def imported(tmp_path):
    """The fixture imported into ``tmp_path/data/sgd``."""
    out = tmp_path / "data" / "sgd"
    import_sgd(FIXTURE, out)
    return out
