"""Fitting the ``local`` router: a refit whatever the thread setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from interleave_bench.generate.runner import generate_offline

ROOT = Path(__file__).resolve().parents[1]

#: a fit in a process of its own: the weights file on stdout, then the BLAS threads seen by the
#: weight fits on stderr
FIT = """
import json, sys
import threadpoolctl
from interleave_bench.io import iter_sessions
from interleave_bench.route import local_corpora

seen = set()
fit_weights = local_corpora.fit_weights

def counting(ex, l2, mode):
    seen.update(p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas")
    return fit_weights(ex, l2, mode)

local_corpora.fit_weights = counting
dev = [s for s in iter_sessions(sys.argv[1]) if s.split == "dev"]
weights, _ = local_corpora.fit_local(dev)
sys.stdout.write(json.dumps(weights.to_json(), indent=1))
sys.stderr.write(json.dumps(sorted(seen)))
"""


def _fit_in(threads: int, sessions: Path) -> tuple[bytes, str]:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads),
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", FIT, str(sessions)], env=env, capture_output=True, check=True)
    return done.stdout, done.stderr.decode().strip().splitlines()[-1]


def test_a_refit_is_byte_for_byte_whatever_the_thread_setting(tmp_path):
    sessions = generate_offline(12, tmp_path / "d")
    one, seen_one = _fit_in(1, sessions)
    two, seen_two = _fit_in(2, sessions)
    assert one == two and b'"weights"' in one
    # the fit limits BLAS to one thread itself: on data this small two threads would give the same
    # bytes anyway, but on the IRC dev logs they moved weights by up to 0.06
    assert seen_one == seen_two == "[1]"



def test_a_fold_is_judged_by_maps_fitted_without_it_hand_computed():
    import numpy as np

    from interleave_bench.route.local_fit import (MIN_STEP_MESSAGES, Judged, calibration_error, confidence_by_fold,
                                                  fit_calibrations)

    # fold a: every decision at p 0.9 right; fold b: every one wrong. One map over both says 0.5, and
    # half are right: in sample the error is 0; each fold told by the other's map 0 (a) and 1 (b): 1
    n = MIN_STEP_MESSAGES
    judged = ([Judged(0.9, 0, True, "en", "explicit", "plain", f"a{k}") for k in range(n)]
              + [Judged(0.9, 0, False, "en", "explicit", "plain", f"b{k}") for k in range(n)])
    folds = [frozenset(f"a{k}" for k in range(n)), frozenset(f"b{k}" for k in range(n))]
    w = np.zeros(3)
    maps = [fit_calibrations([j for j in judged if j.session not in fold], w) for fold in folds]
    ok = [j.correct for j in judged]
    both = fit_calibrations(judged, w)
    assert calibration_error([both.confidence(j.probability, j.kind) for j in judged], ok) < 1e-12
    held = confidence_by_fold(judged, folds, maps)
    assert held == [0.0] * n + [1.0] * n
    assert calibration_error(held, ok) == 1.0
