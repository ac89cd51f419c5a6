"""Bootstrap counts and seeds: one check (``score.defaults``) read by the commands, the scorer,
``evaluate_router`` and the board. A count too small to give a 95% percentile interval (one
resample gave "0.6883 [0.6889, 0.6889]", an interval leaving out its estimate) is refused in one
line naming the option or argument, as a bad seed or flag from Python is (no numpy error)."""

from __future__ import annotations

import pytest

import interleave_bench
from interleave_bench.cli import main
from interleave_bench.errors import UsageError
from interleave_bench.score.defaults import MAX_BOOTSTRAP, MIN_BOOTSTRAP, bootstrap_problem, check_bootstrap, check_seed
from interleave_bench.score.stats import CONFIDENCE


def test_the_least_count_is_the_first_whose_tails_each_hold_a_resample():
    tail = (1 - CONFIDENCE) / 2
    assert round(MIN_BOOTSTRAP * tail, 9) >= 1 > round((MIN_BOOTSTRAP - 1) * tail, 9)


@pytest.mark.parametrize("n, ok", [(0, True), (1, False), (2, False), (MIN_BOOTSTRAP - 1, False), (MIN_BOOTSTRAP, True),
                                   (1000, True), (MAX_BOOTSTRAP, True), (MAX_BOOTSTRAP + 1, False), (-1, False)])
def test_which_counts_are_taken(n, ok):
    assert (bootstrap_problem(n) is None) is ok


@pytest.mark.parametrize("command", ["score", "compare", "report", "demo"])
@pytest.mark.parametrize("value", ["1", "2", "39"])
def test_a_count_too_small_for_an_interval_is_one_line_naming_bootstrap(command, value, capsys):
    runs = {"compare": ["a.jsonl", "b.jsonl"], "demo": []}.get(command, ["no-such-data", "a.jsonl"])
    with pytest.raises(SystemExit) as stopped:
        main([command, *runs, "--bootstrap", value])
    err = capsys.readouterr().err.strip()
    assert stopped.value.code == 2 and "\n" not in err, err
    assert f"argument --bootstrap: must be 0 (no intervals) or {MIN_BOOTSTRAP} to 100,000" in err
    assert err.endswith(f"got {value} (see interleave-bench {command} --help)"), err


def test_the_scorer_refuses_a_count_too_small_before_reading():
    from interleave_bench.score.run import score_files

    with pytest.raises(UsageError, match=r"^--bootstrap must be 0 \(no intervals\) or 40 .*, got 1$"):
        score_files("no-such-data", ["a.jsonl"], bootstrap=1)
    with pytest.raises(UsageError, match=r"^--seed must be 0 or more, got -1$"):
        score_files("no-such-data", ["a.jsonl"], bootstrap=0, seed=-1)


class R:
    policy = "r"

    def route(self, view):
        return {"kind": "new", "title": "x"}


@pytest.mark.parametrize("kwargs, line", [
    ({"bootstrap": True}, "evaluate_router: bootstrap must be a whole number, got True"),
    ({"bootstrap": 1.5}, "evaluate_router: bootstrap must be a whole number, got 1.5"),
    ({"bootstrap": 1}, "evaluate_router: bootstrap must be 0 (no intervals) or 40 to 100,000 (fewer resamples give no "
                       "95% interval), got 1"),
    ({"bootstrap": -1}, "evaluate_router: bootstrap must be 0 (no intervals) or 40 to 100,000 (fewer resamples give "
                        "no 95% interval), got -1"),
    ({"seed": float("nan")}, "evaluate_router: seed must be a whole number, got nan"),
    ({"seed": -1}, "evaluate_router: seed must be 0 or more, got -1"),
    ({"seed": 2 ** 64}, "evaluate_router: seed must be within 64 bits, got 18446744073709551616"),
    ({"seed": "3"}, "evaluate_router: seed must be a whole number, got '3'"),
    ({"fresh": "yes"}, "evaluate_router: fresh must be True or False, got 'yes'"),
    # the route's and the scorer's checks, in this function's keywords, never the command's --mode
    ({"mode": "shut"}, "evaluate_router: mode must be one of closed, open, got 'shut'"),
    ({"mode": None}, "evaluate_router: mode must be one of closed, open, got None"),
    ({"split": "shut"}, "evaluate_router: split must be one of dev, test, all, got 'shut'"),
])
def test_evaluate_router_checks_its_keywords_as_the_command_line_does(tmp_path, monkeypatch, kwargs, line):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as refused:
        interleave_bench.evaluate_router(R(), "d0", **kwargs)
    assert str(refused.value) == line
    assert list(tmp_path.iterdir()) == []  # refused before anything was routed or written


def test_the_command_line_and_run_route_still_name_the_options():
    """One check of a mode and of a split, each caller naming the option as its user spells it."""
    from interleave_bench.route.runner import RouteOptions
    from interleave_bench.score.run import select_split

    with pytest.raises(UsageError, match=r"^--mode must be one of closed, open, got 'shut'$"):
        RouteOptions(mode="shut", policy="bm25").check()
    with pytest.raises(UsageError, match=r"^--split must be one of dev, test, all, got 'shut'$"):
        RouteOptions(mode="open", policy="bm25", split="shut").check()
    with pytest.raises(UsageError, match=r"^--split must be one of dev, test, all, got 'shut'$"):
        select_split([], "shut")


def test_a_numpy_whole_number_is_a_whole_number():
    np = pytest.importorskip("numpy")
    assert check_bootstrap(np.int64(40)) == 40 and check_seed(np.uint8(3)) == 3
