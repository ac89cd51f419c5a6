"""``interleave-bench compare`` on runs that leave it nothing to compare: refused in one line, exit 2,
with or without ``--fail-on-regression`` (a gate on an empty comparison could never fail)."""

from __future__ import annotations

import pytest

from interleave_bench.errors import InputError
from interleave_bench.score import compare_predictions

from _cli_util import run_cli
from _score_util import many_sessions, oracle_rows, rows, session, single_rows, turn, write_jsonl

GATES = ((), ("--fail-on-regression",), ("--json",))


def errors(err: str) -> list[str]:
    return [x for x in err.splitlines() if x.startswith("error:")]


@pytest.fixture
def data(tmp_path):
    ss = many_sessions(10, split_every=5)  # s-004 and s-009 are test, the other 8 dev
    return write_jsonl(tmp_path / "sessions.jsonl", ss), ss


def test_a_run_with_no_row_for_the_split_is_refused_as_score_refuses_it(tmp_path, capsys, data):
    path, ss = data
    a = write_jsonl(tmp_path / "closed-oracle.jsonl", oracle_rows(ss, "closed"))
    b = write_jsonl(tmp_path / "closed-test.jsonl", oracle_rows([s for s in ss if s["split"] == "test"], "closed"))
    code, out, err = run_cli(capsys, "score", path, b, "--bootstrap", 0)
    said = (f"error: {b}: no row is for a session of the dev split of {path}: 24 rows for sessions of other "
            "splits (--split): nothing to score")
    assert code == 2 and errors(err) == [said]
    for gate in GATES:
        code, out, err = run_cli(capsys, "compare", path, a, b, "--bootstrap", 0, *gate)
        assert code == 2, gate  # was exit 0: "0 sessions, 0 strict messages", "no significant difference"
        assert out == "" and errors(err) == [said], gate
        code, out, err = run_cli(capsys, "compare", path, b, a, "--bootstrap", 0, *gate)  # A's turn first
        assert code == 2 and out == "" and errors(err) == [said], gate
    # the test split has rows in both: compared
    code, out, err = run_cli(capsys, "compare", path, a, b, "--bootstrap", 0, "--split", "test")
    assert code == 0, err
    assert "test split, 2 sessions" in out


def test_runs_with_no_session_in_common_are_refused(tmp_path, capsys, data):
    path, ss = data
    dev = [s for s in ss if s["split"] == "dev"]
    a = write_jsonl(tmp_path / "a.jsonl", oracle_rows(dev[:3], "closed"))
    b = write_jsonl(tmp_path / "b.jsonl", oracle_rows(dev[3:], "closed"))
    said = (f"error: {path}: A ({a}) and B ({b}) have rows for no session of the dev split in common "
            "(A for 3 sessions, B for 5 others): nothing to compare")
    for gate in GATES:
        code, out, err = run_cli(capsys, "compare", path, a, b, "--bootstrap", 0, *gate)
        assert code == 2 and out == "" and errors(err) == [said], gate
    # the page's comparison is held to the same rule
    code, out, err = run_cli(capsys, "report", path, a, b, "--html", tmp_path / "r.html", "--compare", "a", "b",
                             "--bootstrap", 0)
    assert code == 2 and errors(err) == [said] and not (tmp_path / "r.html").exists()
    # one session in common: compared, the others named
    b1 = write_jsonl(tmp_path / "b1.jsonl", oracle_rows(dev[2:], "closed"))
    code, out, err = run_cli(capsys, "compare", path, a, b1, "--bootstrap", 0)
    assert code == 0, err
    assert out.startswith("compare: A = a (closed) vs B = b1 (closed); dev split, 1 sessions, ")
    assert "not compared: 7 sessions scored in one run only" in out


def test_sessions_in_common_without_a_strict_message_are_refused(tmp_path, capsys):
    # every thread message disputed by the independent reading, and one one-off: no strict message
    only = session("x-0", ["t1", "t2"], [turn(0, "t1", "new", ambiguous=True, judge="ambiguous"),
                                         turn(1, "t2", "new", ambiguous=True, judge="t1"), turn(2, None)])
    path = write_jsonl(tmp_path / "sessions.jsonl", [only])
    a = write_jsonl(tmp_path / "a.jsonl", rows("x-0", ["t1", "t2", "t1"]))
    b = write_jsonl(tmp_path / "b.jsonl", rows("x-0", ["t2", "t2", "t2"]))
    code, _, err = run_cli(capsys, "score", path, a, "--bootstrap", 0)
    assert code == 0, err  # a run of it is scored: its accuracy is undefined, its other figures are not
    said = (f"error: {path}: the 1 session of the dev split that A ({a}) and B ({b}) both have rows for holds no "
            "strict message (a thread message whose independent reading agrees with the plan): nothing to compare")
    for gate in GATES:
        code, out, err = run_cli(capsys, "compare", path, a, b, "--bootstrap", 0, *gate)
        assert code == 2 and out == "" and errors(err) == [said], gate


def test_the_python_api_refuses_as_the_command_does():
    ss = many_sessions(4, split_every=2)  # s-001 and s-003 are test
    a = oracle_rows(ss, "open")
    b = single_rows([s for s in ss if s["split"] == "test"])
    with pytest.raises(InputError, match=r"^<B>: no row is for a session of the dev split of <sessions>: .*nothing to score$"):
        compare_predictions(ss, a, b, bootstrap=0)
    doc = compare_predictions(ss, a, b, split="test", bootstrap=0)
    assert (doc["sessions"], doc["losses"] > 0, doc["regression"]) == (2, True, True)


@pytest.mark.parametrize("spelled", ["the same path", "a symlink", "a hard link"])
def test_one_run_given_as_both_sides_is_refused_as_score_refuses_it(tmp_path, capsys, data, spelled):
    path, ss = data
    a = write_jsonl(tmp_path / "closed-oracle.jsonl", oracle_rows(ss, "closed"))
    b = a if spelled == "the same path" else tmp_path / "closed-again.jsonl"
    if spelled == "a symlink":
        b.symlink_to(a.name)
    elif spelled == "a hard link":
        b.hardlink_to(a)
    for gate in GATES:  # was exit 0: "0 flips"
        code, out, err = run_cli(capsys, "compare", path, a, b, "--bootstrap", 0, *gate)
        assert code == 2 and out == "", gate
        assert errors(err) == [f"error: compare: {a} and {b} are one predictions file, given twice: give it once"]
    code, out, err = run_cli(capsys, "score", path, a, b, "--bootstrap", 0)  # the one check
    assert code == 2 and errors(err) == [f"error: score: {a} and {b} are one predictions file, given twice: give it once"]
    assert not list(tmp_path.glob("*.score.json"))
