"""Fitting the ``local`` router: a refit whatever the thread setting."""

from __future__ import annotations

import json
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


def test_a_message_should_go_to_the_topic_holding_most_of_its_thread_hand_computed():
    from collections import Counter

    from interleave_bench.route.local import NEW, ONEOFF
    from interleave_bench.route.local_fit import _target

    # t1 has held A twice and B once; t2 B once; t3 B then A (a tie: the thread it held first, B)
    held = {"t1": Counter({"A": 2, "B": 1}), "t2": Counter({"B": 1}), "t3": Counter({"B": 1, "A": 1})}
    labels = ("t1", "t2", "t3", NEW)
    assert _target(held, labels, "A", "open") == "t1"
    assert _target(held, labels, "B", "open") == "t2"  # t2 and t3 hold one B each: the earliest
    assert _target(held, ("t1", "t3", NEW), "B", "open") == "t3"
    assert _target(held, labels, "C", "open") == NEW  # no topic has held C most
    assert _target({"t1": Counter({"A": 1, "B": 1})}, ("t1", NEW), "B", "open") == NEW
    assert _target(held, labels, None, "open") == ONEOFF
    assert _target(held, ("A", "B"), "A", "closed") == "A"  # closed mode: the thread's card


def test_own_history_is_the_one_the_router_makes_and_gold_history_the_threads(tmp_path):
    import numpy as np

    from interleave_bench.io import iter_sessions
    from interleave_bench.route.local import FEATURES
    from interleave_bench.route.local_fit import bm25_prior, gold_examples, own_examples

    sessions = [s for s in iter_sessions(generate_offline(12, tmp_path / "d"))
                if s.split == "dev" and all(t.gold.thread is not None for t in s.turns)]
    turns = sessions[0].turns
    # weights that open a new topic for every message: message k sees k topics, each holding one
    # earlier message, and should go to the topic of its thread's first message, else a new one
    w = bm25_prior()
    w[FEATURES.index("new.bias")] = 100.0
    own = own_examples(sessions[:1], "open", w)
    sizes = np.bincount(own.group)
    assert len(sizes) == len(turns)
    assert all(sizes[k] - k in (1, 2) for k in range(len(turns)))  # k topics, new, perhaps a one-off
    first: dict[str, int] = {}
    for k, t in enumerate(turns):
        want = first.setdefault(t.gold.thread, k)
        assert own.target[k] - int(np.flatnonzero(own.group == k)[0]) == want  # t<want+1>, or new after k topics
    # in gold history message k sees one topic per thread started before it, and goes to its own
    gold = gold_examples(sessions[:1], "open")
    threads: list[str] = []
    for k, t in enumerate(turns):
        assert np.count_nonzero(gold.group == k) - len(threads) in (1, 2)
        want = threads.index(t.gold.thread) if t.gold.thread in threads else len(threads)
        assert gold.target[k] - int(np.flatnonzero(gold.group == k)[0]) == want
        if t.gold.thread not in threads:
            threads.append(t.gold.thread)


def test_the_fit_records_the_blas_kernel_it_ran_on():
    import platform

    import pytest

    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("OPENBLAS_CORETYPE names x86 kernels")
    # the kernel an OpenBLAS picks orders a product's sums its own way, so the record must name the
    # one the fit ran on, whichever the processor (or OPENBLAS_CORETYPE) chose
    code = "import json; from interleave_bench.route.local_corpora import blas_kernels; print(json.dumps(blas_kernels()))"
    env = {**os.environ, "OPENBLAS_CORETYPE": "Sandybridge", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True, text=True)
    kernels = json.loads(done.stdout)
    assert kernels and all(k.startswith("openblas ") and k.endswith(" Sandybridge") for k in kernels)
