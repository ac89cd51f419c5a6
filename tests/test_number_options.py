"""Number options (``--threshold``, ``--sweep-threshold``, ``--same``, ``--cross``, ``--timeout``) are
read by one strict parser (:func:`~interleave_bench.options.read_number`): ``-0`` is 0 (one file,
one curve point), and Python's other forms (``0_5``, which ``float`` reads as 5; ``nan``;
``inf``) are refused in one line echoing what was typed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interleave_bench.cli import COMMAND_MODULES, build_parser, main
from interleave_bench.generate.runner import generate_offline
from interleave_bench.options import read_number

from _cli_util import run_cli

HYBRID = ("route", "--mode", "closed", "--policy", "hybrid", "--dry-run")


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    return generate_offline(3, tmp_path / "data").parent


@pytest.mark.parametrize("text, value", [("0", 0.0), ("-0", 0.0), ("-0.0", 0.0), ("+0", 0.0), ("0.5", 0.5), (".5", 0.5),
                                         ("5e-1", 0.5), ("1", 1.0), ("1.", 1.0), ("-2.25", -2.25)])
def test_plain_numbers_are_read(text, value):
    got = read_number(text)
    assert got == value and str(got) == str(value)  # -0 reads as 0.0, never -0.0


@pytest.mark.parametrize("text", ["0_5", "1_000", "nan", "NaN", "inf", "-inf", "1e999", "0x1", " 1", "1 ", "", "--1",
                                  "1e", ".", "½", "٣"])
def test_other_forms_are_refused_echoing_the_text(text):
    with pytest.raises(ValueError) as refused:
        read_number(text)
    assert repr(text) in str(refused.value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_as_python_writes_it_reads_back_the_same(x):
    assert read_number(repr(x)) == x and (x != 0 or str(read_number(repr(x))) == "0.0")


def test_no_option_is_read_by_float_itself():
    """``type=float`` takes ``0_5`` as 5 and ``-0`` as -0.0: every number option reads through ``number()``."""
    floats = []
    for command in sorted({m.replace("_", "-") for m in COMMAND_MODULES}):
        sub = next(a for a in build_parser([command])._actions if a.dest == "command").choices[command]
        floats += [(command, a.option_strings) for a in sub._actions if a.type is float]
    assert floats == []


@pytest.mark.parametrize("option, line", [
    ("--threshold", "argument --threshold: must be a number, got {v!r}"),
    ("--same", "argument --same: must be a number, got {v!r}"),
    ("--cross", "argument --cross: must be a number, got {v!r}"),
    ("--timeout", "argument --timeout: expected a number, got {v!r}"),
])
@pytest.mark.parametrize("value", ["0_5", "nan", "inf"])
def test_an_odd_number_is_one_line_naming_the_option_and_echoing_it(option, line, value, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([*HYBRID, "no-such-data", "--merge", "all", option, value])
    err = capsys.readouterr().err.strip()
    assert stopped.value.code == 2 and "\n" not in err and line.format(v=value) in err, err


def test_a_sweep_threshold_of_an_odd_form_is_refused_echoing_it(capsys):
    code, _, err = run_cli(capsys, *HYBRID, "no-such-data", "--sweep-threshold", "0.5,0_5")
    assert code == 2 and err.strip() == "error: --sweep-threshold: '0_5' is not a number", err
    code, _, err = run_cli(capsys, *HYBRID, "no-such-data", "--sweep-threshold", "0.5,1.50")
    assert code == 2 and err.strip() == "error: --sweep-threshold: 1.50 is not a confidence between 0 and 1", err


def test_a_threshold_of_minus_zero_is_the_sweeps_point_at_zero(data, capsys):
    """``--threshold -0`` wrote ``closed-hybrid-t-0-...``, a second file beside the sweep's ``t0``, and the
    curve showed ``| -0 |`` with that file's predictions."""
    code, _, err = run_cli(capsys, *HYBRID, data, "--threshold", "-0")
    assert code == 0, err
    folder = data / "predictions-dry"
    assert sorted(p.name for p in folder.iterdir()) == ["closed-hybrid-t0-fake-model.jsonl",
                                                         "closed-hybrid-t0-fake-model.run.json"]
    assert json.loads((folder / "closed-hybrid-t0-fake-model.run.json").read_text())["options"]["threshold"] == 0.0
    code, out, err = run_cli(capsys, *HYBRID, data, "--sweep-threshold=-0,1")
    assert code == 0, err
    assert ": 1 threshold, 1 already done, 2 on the curve," in err  # the -0 run is the sweep's point at 0
    doc = json.loads((folder / "closed-hybrid-sweep-fake-model.sweep.json").read_text())
    assert [(p["threshold"], p["predictions"]) for p in doc["curve"]] == [
        (0.0, "closed-hybrid-t0-fake-model.jsonl"), (1.0, "closed-hybrid-t1-fake-model.jsonl")]
    assert "| -0 |" not in out and "t-0" not in out + err


def test_a_run_an_older_version_named_t_minus_0_stays_off_the_curve(data, capsys):
    assert run_cli(capsys, *HYBRID, data, "--sweep-threshold", "0")[0] == 0
    folder = data / "predictions-dry"
    shutil.copy(folder / "closed-hybrid-t0-fake-model.jsonl", folder / "closed-hybrid-t-0-fake-model.jsonl")
    record = json.loads((folder / "closed-hybrid-t0-fake-model.run.json").read_text())
    record["options"]["threshold"] = -0.0
    record["predictions"] = "closed-hybrid-t-0-fake-model.jsonl"
    (folder / "closed-hybrid-t-0-fake-model.run.json").write_text(json.dumps(record))
    code, out, err = run_cli(capsys, *HYBRID, data, "--sweep-threshold", "1")
    assert code == 0, err
    doc = json.loads((folder / "closed-hybrid-sweep-fake-model.sweep.json").read_text())
    assert [p["predictions"] for p in doc["curve"]] == ["closed-hybrid-t0-fake-model.jsonl",
                                                        "closed-hybrid-t1-fake-model.jsonl"]
    assert f"not on the curve: {folder / 'closed-hybrid-t-0-fake-model.jsonl'}" in err and "| -0 |" not in out
