"""No text the leaderboard shows may forge its output: a line break, a line or paragraph separator
or a bidi control in a row's model or policy, or in ``--model``, is refused as in a system name
(one line naming the file and field, exit 2), before anything is published (docs/leaderboard.md)."""

from __future__ import annotations

import json

import pytest

import _board_util as b
import _hub_util as u
from _hub_util import hub  # noqa: F401  (the fixture)

BOARD = "org/shown-leaderboard"
REFUSED = "a name may not hold control characters"


@pytest.fixture
def runs(tmp_path):
    return b.baselines(tmp_path / "data")


def _rows_with(pred, out, **fields):
    """A copy of the predictions ``pred`` whose every row has ``fields``."""
    rows = [json.loads(line) for line in pred.read_text(encoding="utf-8").splitlines()]
    return b.write(out, "".join(json.dumps({**r, **fields}) + "\n" for r in rows))


@pytest.mark.parametrize("field, value, char", [
    ("model", "gpt-4o\n| 1 | fake | x |", "U+000A"),  # a row of its own in the README's table
    ("model", "gpt-4o\u2029| 1 | fake | x |", "U+2029"),
    ("model", "gpt-4o\u2028x", "U+2028"),
    ("model", "gpt\u202e4o", "U+202E"),  # a right-to-left override
    ("model", "gpt-4o\r", "U+000D"),
    ("policy", "bm25\n| 1 | fake | x |", "U+000A"),
    ("policy", "bm\u200f25", "U+200F"),  # a right-to-left mark
])
def test_a_row_whose_shown_text_would_forge_output_is_refused(hub, runs, tmp_path, capsys, field, value, char):
    data, preds = runs
    forged = _rows_with(preds["open-bm25"], tmp_path / "forge" / "forged.jsonl", **{field: value})
    code, out, err = u.cli(["leaderboard", "add", forged, "--data", str(data), "--repo", BOARD], capsys)
    assert code == 2, out + err
    assert err.strip().splitlines() == [f"error: {forged}: {field}: {REFUSED} ({char}): a line break would forge a line "
                                        "of output, a bidi control reorder it"]
    assert ("dataset", BOARD) not in hub.repos


def test_a_model_given_on_the_command_line_is_held_to_the_same_rule(hub, runs, capsys):
    data, preds = runs
    code, _, err = u.cli(["leaderboard", "add", str(preds["open-bm25"]), "--data", str(data), "--repo", BOARD,
                          "--model", "gpt-4o\n| 1 | fake |"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and f"--model: {REFUSED} (U+000A)" in err, err
    assert ("dataset", BOARD) not in hub.repos


def test_a_plain_model_name_is_published_as_given(hub, runs, tmp_path, capsys):
    data, preds = runs
    plain = _rows_with(preds["open-bm25"], tmp_path / "plain" / "plain.jsonl", model="gpt-4o (2024-08-06) — é")
    code, out, err = u.cli(["leaderboard", "add", plain, "--data", str(data), "--repo", BOARD], capsys)
    assert code == 0, err
    readme = hub.files(BOARD)["README.md"].decode()
    assert "| 1 | plain | bm25 | gpt-4o (2024-08-06) — é |" in readme
