"""InterleaveBench: a benchmark and toolkit for routing an interleaved chat.

One person uses one chat for several pieces of work at once; every message must reach the right
one. See README.md for the quick start and DESIGN-level reference.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def load(config: str = "v0", data_dir: str | None = None, **kwargs: Any):
    """Load a config (``v0``, ``v1``, ``mid_reply``) from local JSONL as a ``datasets.DatasetDict``.

    Builds with the package's ``GeneratorBasedBuilder`` (``interleave_bench.hub.builder``), with the
    same typed features as the published Parquet dataset.
    """
    from .hub.builder import load as _load

    return _load(config, data_dir=data_dir, **kwargs)
