"""Shared pieces of the SGD tests: the committed slice of the corpus, the CLI, an imported copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from _cli_util import run_cli  # noqa: F401  (the SGD tests import it from here)
from interleave_bench.sgd import import_sgd

#: five dev dialogues copied unchanged, with their schema entries (tests/data/sgd/README.md)
FIXTURE = Path(__file__).parent / "data" / "sgd"


@pytest.fixture
def imported(tmp_path):
    """The fixture imported into ``tmp_path/data/sgd``."""
    out = tmp_path / "data" / "sgd"
    import_sgd(FIXTURE, out)
    return out
