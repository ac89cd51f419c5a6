"""A forged calibration section is refused by the board as every recomputed part is: one line naming
its field, what the file says and what the board's own scoring gives (docs/leaderboard.md)."""

from __future__ import annotations

import json

import _board_util as b
from test_board_forgeries import verdict


def test_a_forged_calibration_is_refused_as_differing_from_the_recomputed_one(tmp_path):
    """A calibration section whose figures no longer add up was refused by the score file's form,
    with advice about provenance; it is refused as every recomputed part is, naming its field."""
    from interleave_bench.cli import main

    data, _ = b.baselines(tmp_path / "data")
    out = tmp_path / "local" / "closed-local.jsonl"
    assert main(["route", str(data), "--mode", "closed", "--policy", "local", "--out", str(out)]) == 0
    honest = b.score_file(data, out, out=tmp_path / "local" / "honest.score.json")
    cal = honest["calibration"]
    full = max(range(len(cal["reliability"])), key=lambda k: cal["reliability"][k]["n"])
    n = cal["reliability"][full]["n"]
    source = f"the board's scoring of {out} on {data / 'sessions.jsonl'}"
    disagrees = "the board publishes what it computes, and refuses a file that disagrees"
    forgeries = {  # what is changed, the field named, what the file says and what the board computes
        "a bin's count": (lambda c: c["reliability"][full].update(n=n + 1), f"calibration.reliability[{full}].n", n + 1, n),
        "the bins": (lambda c: c.update(bins=20), "calibration.bins", 20, 10),
        "more messages than strict": (lambda c: c.update(messages=c["strict"] + 1), "calibration.messages",
                                      cal["strict"] + 1, cal["messages"]),
    }
    assert verdict([str(tmp_path / "local" / "honest.score.json")]) == []
    for name, (change, field, said, got) in forgeries.items():
        doc = json.loads(json.dumps(honest))
        change(doc["calibration"])
        path = b.write(tmp_path / "local" / f"{name.replace(' ', '_')}.score.json", json.dumps(doc))
        lines = verdict([path])
        assert len(lines) == 1 and lines[0].startswith(f"{path}: {field}: the file says {said}, but {source} gives {got}"), name
        assert lines[0].endswith(disagrees) and "provenance" not in lines[0], name
