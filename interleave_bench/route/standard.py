"""The standard model-free baselines: the seven prediction files every data set is first measured with.

Closed mode ``oracle``, ``stay`` and ``bm25``; open mode ``oracle``, ``single``, ``always_new`` and
``bm25``. The ``baselines`` and ``demo`` commands and the release's baseline table all use this one list.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence

from ..schema import Session
from .runner import DEFAULT_SPLIT, RouteOptions, RouteResult, output_name, run_route

#: the standard set: (mode, policy), in the order the files are written
STANDARD_BASELINES = (
    ("closed", "oracle"),
    ("closed", "stay"),
    ("closed", "bm25"),
    ("open", "oracle"),
    ("open", "single"),
    ("open", "always_new"),
    ("open", "bm25"),
)


def write_baselines(data: str | os.PathLike, split: str = DEFAULT_SPLIT,
                    out_dir: Optional[str | os.PathLike] = None, mode: Optional[str] = None,
                    sessions: Optional[Sequence[Session]] = None, data_sha: Optional[str] = None) -> list[RouteResult]:
    """Route ``data`` with every standard baseline (only those of ``mode``, when given), each file
    written afresh; ``sessions``, when given, are the data file's sessions already read and
    validated, so the file is not read again for each run, and ``data_sha`` the hash of the bytes
    they were read from (:func:`~interleave_bench.fingerprints.read_unchanged`).

    Files go to ``predictions/`` beside the data, or to ``out_dir`` when given. Returns the
    :class:`RouteResult` of each file, in :data:`STANDARD_BASELINES` order.
    """
    results = []
    for m, policy in STANDARD_BASELINES:
        if mode is not None and m != mode:
            continue
        opts = RouteOptions(mode=m, policy=policy, split=split)
        out = None if out_dir is None else Path(out_dir) / output_name(opts)
        results.append(run_route(data, opts, out=out, fresh=True, sessions=sessions, data_sha=data_sha))
    return results
