"""Fitting the ``local`` router: its weights across corpora, its calibration and reliability table, and a
refit byte for byte whatever the thread setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.generate.runner import generate_offline
from interleave_bench.io import iter_sessions
from interleave_bench.route.local import FEATURES, Calibration, LocalWeights, shipped_weights
from interleave_bench.route.local_corpora import fit_local
from interleave_bench.route.local_fit import (
    fit_calibration,
    pav,
    reliability_holds,
)
from interleave_bench.score.calibration import calibration_error, reliability_table

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

    from interleave_bench.route.local_fit import (MIN_STEP_MESSAGES, Judged, confidence_by_fold,
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

    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("OPENBLAS_CORETYPE names x86 kernels")
    # the kernel an OpenBLAS picks orders a product's sums its own way, so the record must name the
    # one the fit ran on, whichever the processor (or OPENBLAS_CORETYPE) chose
    code = "import json; from interleave_bench.route.local_corpora import blas_kernels; print(json.dumps(blas_kernels()))"
    env = {**os.environ, "OPENBLAS_CORETYPE": "Sandybridge", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True, text=True)
    kernels = json.loads(done.stdout)
    assert kernels and all(k.startswith("openblas ") and k.endswith(" Sandybridge") for k in kernels)


def test_pav_and_calibration_hand_computed():
    # points (0.1, 0) (0.2, 1) (0.3, 0) (0.4, 1): the middle pair violates order and pools to 0.5
    x, y, n = pav([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    assert list(n) == [1, 2, 1] and list(y) == [0.0, 0.5, 1.0] and x[1] == pytest.approx(0.25)
    cal = Calibration((0.2, 0.6), (0.5, 0.9))
    assert cal(0.1) == 0.5 and cal(0.4) == pytest.approx(0.7) and cal(0.9) == 0.9
    assert Calibration()(0.37) == 0.37
    # too few messages for a step of its own: one pooled step
    one = fit_calibration([0.5, 0.6, 0.7], [True, False, True])
    assert one.y == (pytest.approx(2 / 3),)


def test_reliability_table_hand_computed():
    table = reliability_table([0.05, 0.15, 0.18, 1.0], [False, True, False, True], bins=10)
    assert [(r["lo"], r["n"], r["accuracy"]) for r in table] == [(0.0, 1, 0.0), (0.1, 2, 0.5), (0.9, 1, 1.0)]
    assert table[1]["confidence"] == 0.165 and table[1]["gap"] == 0.335
    assert reliability_holds(table)  # no bin has 100 messages
    assert not reliability_holds(table, min_n=2)


def test_calibration_error_hand_computed():
    # bin 0.9-1.0: confidence 0.95, accuracy 0.5 (gap 0.45, 2 messages); bin 0.1-0.2: 0.15 vs 0 (gap
    # 0.15, 2 messages); a confidence of exactly 1 falls in the top bin
    assert calibration_error([0.95, 0.95, 0.15, 0.15], [True, False, False, False]) == pytest.approx(0.3)
    assert calibration_error([1.0, 1.0], [True, True]) == 0.0
    assert calibration_error([], []) is None


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=60))
def test_calibration_error_is_a_weighted_mean_of_bin_gaps(pairs):
    conf, ok = zip(*pairs)
    ece = calibration_error(conf, ok)
    table = reliability_table(conf, ok)
    assert 0.0 <= ece <= 1.0
    assert ece == pytest.approx(sum(r["n"] * r["gap"] for r in table) / len(conf), abs=1e-3)


def test_pooled_corpora_weigh_the_same_whatever_their_size():
    import numpy as np
    from interleave_bench.route.local_fit import Examples, pooled

    def ex(n):  # n messages of two candidates each
        return Examples(np.ones((2 * n, len(FEATURES))), np.repeat(np.arange(n), 2), np.arange(0, 2 * n, 2))

    both = pooled([ex(1), ex(3)])
    assert list(both.weight) == pytest.approx([2.0, 2 / 3, 2 / 3, 2 / 3])  # 4 messages in all, half each
    assert list(both.target) == [0, 2, 4, 6] and list(both.group) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_fit_across_corpora_leaves_each_out_and_refits_byte_for_byte(tmp_path, capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("fit_local", Path(__file__).resolve().parents[1] / "scripts/fit_local.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    irc = Path(__file__).parent / "data" / "irc"
    outs = []
    for k in range(2):
        out = tmp_path / f"w{k}.json"
        assert script.main(["--sessions", "8", "--irc", str(irc), "--out", str(out)]) == 0
        outs.append(out.read_bytes())
    printed = capsys.readouterr().out
    assert outs[0] == outs[1]
    assert "| left out | mode |" in printed and "| irc | open |" in printed and "| offline | open |" in printed
    doc = json.loads(outs[0])
    assert set(doc["fit"]["corpora"]) == {"offline", "irc"} and doc["fit"]["split"] == "dev"
    assert set(doc["fit"]["held_out"]["irc"]) == {"open"}  # a chat log is never routed closed
    assert LocalWeights.from_json(doc).modes["open"].calibration.x
    # the penalty is the one whose weights did best on the corpora left out of their fit
    from interleave_bench.route.local_fit import L2_GRID
    tried = {float(p): v for p, v in doc["fit"]["penalty"]["left_out_accuracy"].items()}
    assert set(tried) == set(L2_GRID) and doc["fit"]["penalty"]["chosen"] == max(tried, key=lambda p: (tried[p], -p))
    # open mode has two corpora: plain chat and the fallback cross-fitted by corpus, the kinds a
    # public corpus brings by session; closed mode has one corpus, so all by session
    assert doc["fit"]["cross_fitted"]["open"]["by"] == {"overall": "corpus", "plain": "corpus",
                                                         "replies": "session", "multi": "session"}
    assert set(doc["fit"]["cross_fitted"]["closed"]["by"].values()) == {"session"}
    assert doc["fit"]["held_out"]["irc"]["open"]["penalty"] in L2_GRID
    assert script.main(["--offline", str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err


def test_closed_mode_holds_the_phrasing_features_at_bm25s_level_and_open_mode_learns_them(tmp_path):
    from interleave_bench.route.local_fit import (HABIT_FEATURES, PHRASING_FEATURES, bm25_prior, fit_weights,
                                                  gold_examples, held_features)

    dev = [s for s in iter_sessions(generate_offline(40, tmp_path / "d")) if s.split == "dev"]
    prior = bm25_prior()
    at = {f: FEATURES.index(f) for f in PHRASING_FEATURES}
    moved = {}
    for mode in ("closed", "open"):
        w = fit_weights(gold_examples(dev, mode), 3.0, mode)
        moved[mode] = {f: abs(w[k] - prior[k]) for f, k in at.items()}
        # held: a penalty a thousand times the others' lets them move by hundredths at most
        assert all(abs(w[FEATURES.index(f)] - prior[FEATURES.index(f)]) < 0.05 for f in HABIT_FEATURES)
    assert max(moved["closed"].values()) < 0.05
    # the same features fitted freely do move: the hold is what keeps them in closed mode
    assert max(moved["open"].values()) > 0.5
    assert set(held_features("closed")) == set(HABIT_FEATURES) | set(PHRASING_FEATURES)
    assert held_features("open") == HABIT_FEATURES
    # the weights file says what each mode held
    doc = shipped_weights().fit
    assert doc["held_at_bm25"] == {m: list(held_features(m)) for m in ("closed", "open")}
    assert set(doc["libraries"]) == {"numpy", "scipy", "blas"} and doc["libraries"]["blas"]
    assert doc["own_history"] == ["open"]


def test_fit_refuses_test_sessions_and_is_deterministic(tmp_path):
    path = generate_offline(10, tmp_path / "d")
    sessions = list(iter_sessions(path))
    with pytest.raises(ValueError, match="dev only"):
        fit_local(sessions)
    dev = [s for s in sessions if s.split == "dev"][:4]
    a, _ = fit_local(dev)
    b, _ = fit_local(dev)
    assert json.dumps(a.to_json()) == json.dumps(b.to_json())
    # with the assistant's replies: learnt from and calibrated on both views, the same bytes again
    shown = [s for s in iter_sessions(generate_offline(6, tmp_path / "v1", dataset="v1")) if s.split == "dev"][:4]
    a, report = fit_local(shown)
    b, _ = fit_local(shown)
    assert json.dumps(a.to_json()) == json.dumps(b.to_json())
    assert "data without replies" in report["in_domain"] and a.fit["corpora"]["data"]["views"] == ("as given", "replies hidden")


def _dev(tmp_path: Path, name: str, dataset: str, seed: int) -> list:
    """Dev sessions of the offline writer, their ids prefixed with ``name`` (one id names one session)."""
    path = generate_offline(5, tmp_path / name, seed=seed, dataset=dataset)
    return [s.model_copy(update={"session_id": f"{name}-{s.session_id}"}) for s in iter_sessions(path) if s.split == "dev"]


def test_replies_hidden_keeps_everything_but_the_replies(tmp_path):
    from interleave_bench.route.local_corpora import Corpus, replies_hidden

    shown = _dev(tmp_path, "r", "v1", 3)
    hidden = replies_hidden(shown)
    assert sum(1 for s in shown for t in s.turns if t.assistant) > 0
    assert all(t.assistant is None for s in hidden for t in s.turns)
    back = [s.model_copy(update={"turns": [t.model_copy(update={"assistant": u.assistant}) for t, u in zip(s.turns, o.turns)]})
            for s, o in zip(hidden, shown)]
    assert back == shown  # nothing else moved
    assert Corpus("r", shown, {}).plain == hidden
    assert Corpus("p", _dev(tmp_path, "p", "v0", 2), {}).plain is None  # no reply to hide


def test_plain_chat_is_calibrated_on_every_writer_replies_hidden_too(tmp_path):
    """The plain map is fitted on the plain messages of the left-out runs and on the same runs of
    every corpus with replies, those hidden; the tables give that corpus's row with them hidden."""
    from interleave_bench.route.local_corpora import (
        Corpus, FitData, _calibrated, _fit, choose_penalty, fit_corpora, l2_of, without_replies,
    )

    plain = Corpus("p", _dev(tmp_path, "p", "v0", 2), {})
    shown = Corpus("r", _dev(tmp_path, "r", "v1", 3), {})
    corpora = [plain, shown]
    data = FitData()
    search = choose_penalty(corpora, data)
    left = search.runs["closed"]
    assert set(left.plain) == {"r"} and left.plain["r"]  # routed with replies hidden, by weights without it
    assert all(j.kind == "plain" for j in left.plain["r"])
    assert len(left.plain["r"]) == len(left.judged["r"])  # the same strict messages, routed again
    w, _ = _fit(corpora, "closed", data, l2_of("closed", search.penalty))
    _, judged, how, _ = _calibrated(corpora, "closed", data, search, w)
    assert how["plain"] == "corpus"
    in_plain_map = [j for j in judged if j.kind == "plain"]
    expected = [j for j in left.pooled() if j.kind == "plain"] + left.pooled_plain()
    assert in_plain_map == expected
    weights, report = fit_corpora(corpora)
    recorded = json.loads(json.dumps(weights.to_json()))["fit"]["corpora"]
    assert recorded["r"]["views"] == ["as given", "replies hidden"] and recorded["p"]["views"] == ["as given"]
    row = without_replies("r")
    assert set(report["held_out"][row]) == {"closed", "open"} and set(report["in_domain"][row]) == {"closed", "open"}
    assert report["held_out"][row]["closed"]["strict_messages"] == report["held_out"]["r"]["closed"]["strict_messages"]
    assert without_replies("p") not in report["held_out"]
    # a corpus named as another's rows with replies hidden would overwrite them: refused
    with pytest.raises(ValueError, match="'r without replies'"):
        fit_corpora([Corpus(row, plain.sessions, {}), shown])


def test_a_corpus_with_replies_is_learnt_from_shown_and_hidden(tmp_path):
    """Its gold examples hold each message twice, once as shown (replies in view) and once with
    the replies hidden, in the same session fold; a corpus without replies once."""
    from interleave_bench.route.local_corpora import Corpus, FitData, _folds
    from interleave_bench.route.local_fit import gold_examples

    shown = Corpus("r", _dev(tmp_path, "r", "v1", 3), {})
    plain = Corpus("p", _dev(tmp_path, "p", "v0", 2), {})
    data = FitData()
    background = data.background_of([shown, plain], "open")  # the fit's, as its examples are built with
    for fold in range(3):
        got = data.examples([shown, plain], "open", shown, fold)
        alone = gold_examples(_folds(shown.sessions)[fold], "open", background)
        hidden = gold_examples(_folds(shown.plain)[fold], "open", background)
        assert len(got.target) == len(alone.target) + len(hidden.target) > 0
        assert got.rows.tolist() == alone.rows.tolist() + hidden.rows.tolist()
        assert got.rows.tolist() != alone.rows.tolist() + alone.rows.tolist()  # the replies hidden move the rows
        assert len(data.examples([shown, plain], "open", plain, fold).target) == len(
            gold_examples(_folds(plain.sessions)[fold], "open").target)


def test_the_fit_counts_every_weight_fit_on_its_progress_bar(tmp_path, monkeypatch):
    """A fit runs for minutes: its bar counts each set of weights fitted and names the stage."""
    from interleave_bench.route import local_corpora

    class Bar:
        def __init__(self, **kwargs):
            self.n, self.stages = 0, []

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def update(self, n=1):
            self.n += n

        def set_postfix(self, **kwargs):
            self.stages.append(kwargs["stage"])

    bars, fits = [], []
    fit_weights = local_corpora.fit_weights

    def counting(ex, l2, mode):
        fits.append(mode)
        return fit_weights(ex, l2, mode)

    monkeypatch.setattr(local_corpora, "progress", lambda **kw: bars.append(Bar(**kw)) or bars[-1])
    monkeypatch.setattr(local_corpora, "fit_weights", counting)
    corpora = [local_corpora.Corpus("p", _dev(tmp_path, "p", "v0", 2), {}),
               local_corpora.Corpus("r", _dev(tmp_path, "r", "v1", 3), {})]
    local_corpora.fit_corpora(corpora)
    assert len(bars) == 1 and bars[0].n == len(fits) > 0
    assert bars[0].stages == ["penalty", "closed mode", "open mode", "p left out", "r left out"]
