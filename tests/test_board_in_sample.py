"""The board ranks no in-sample run: a ``local`` run scored on data its weights' fit read is refused,
recomputed as ``score`` marks it, whatever its score file says (docs/leaderboard.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import _hub_util as u
from _hub_util import hub  # noqa: F401  (the fixture)

IRC = Path(__file__).parent / "data" / "irc"
BOARD = "org/irc-leaderboard"
REFUSED = "which the local weights were fitted on: its figures are in-sample"


def _miss_some(pred: Path) -> None:
    """Send the last message of ``pred`` to the topic of the one before it: on these few lines
    ``local`` is right on every strict message, which the board refuses as the oracle's place (on
    IRC's full dev logs it is right on 0.81 of them)."""
    rows = [json.loads(line) for line in pred.read_text(encoding="utf-8").splitlines()]
    assert rows[-1]["pred"] != rows[-2]["pred"]
    rows[-1]["pred"] = rows[-2]["pred"]
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def irc(tmp_path, capsys):
    """IRC's dev logs imported (data the shipped fit read), routed by ``local`` and ``bm25`` in open
    mode, each scored by ``score`` into a score file."""
    from interleave_bench.irc import import_irc

    data = tmp_path / "irc"
    import_irc(IRC, data)
    for policy in ("local", "bm25"):
        assert u.cli(["route", str(data), "--mode", "open", "--policy", policy], capsys)[0] == 0
        pred = data / "predictions" / f"open-{policy}.jsonl"
        if policy == "local":
            _miss_some(pred)
        assert u.cli(["score", str(data), str(pred), "--bootstrap", "50", "--out",
                      str(pred.with_suffix(".score.json"))], capsys)[0] == 0
    return data


def _add(args, capsys):
    code, out, err = u.cli(["leaderboard", "add", *args, "--repo", BOARD], capsys)
    return code, out, err.strip().splitlines()


def _edited(src: Path, out: Path, **changes) -> str:
    doc = json.loads(src.read_text(encoding="utf-8"))
    doc.update(changes)
    for k in [k for k, v in changes.items() if v is ...]:
        del doc[k]
    return u.write_json(out, doc)


def test_an_in_sample_run_is_refused_whether_scored_here_or_in_its_score_file(hub, irc, capsys):
    pred = irc / "predictions" / "open-local.jsonl"
    score = pred.with_suffix(".score.json")
    assert json.loads(score.read_text(encoding="utf-8"))["in_sample"]["corpus"] == "irc"  # score marks it
    for args in ([str(pred), "--data", str(irc)], [str(score)]):
        code, _, lines = _add(args, capsys)
        assert code == 2 and len(lines) == 1, lines
        assert lines[0].startswith(f"error: {args[0]}: in_sample: scored on the irc dev sessions, {REFUSED}"), lines
    assert ("dataset", BOARD) not in hub.repos


def test_a_score_file_with_its_mark_edited_away_is_refused(hub, irc, tmp_path, capsys):
    score = irc / "predictions" / "open-local.score.json"
    nulled = _edited(score, irc / "predictions" / "nulled.score.json", in_sample=None)
    code, _, lines = _add([nulled], capsys)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"error: {nulled}: in_sample: the file says null, but the board's scoring of "), lines
    dropped = _edited(score, irc / "predictions" / "dropped.score.json", in_sample=...)  # as a file written before it
    code, _, lines = _add([dropped], capsys)
    assert code == 2 and len(lines) == 1 and REFUSED in lines[0] and "in_sample" in lines[0], lines
    assert ("dataset", BOARD) not in hub.repos


def test_another_router_on_the_same_data_is_ranked(hub, irc, capsys):
    score = irc / "predictions" / "open-bm25.score.json"
    assert json.loads(score.read_text(encoding="utf-8"))["in_sample"] is None
    code, out, lines = _add([str(score)], capsys)
    assert code == 0, lines
    assert "| 1 | open-bm25 | bm25 |" in out


WRAP = '''
from interleave_bench.route.local import LocalRouter


class Wrap:
    policy = "mylocal"

    def __init__(self):
        self._inner = LocalRouter()

    async def route(self, view):
        return await self._inner.route(view)
'''


def test_local_run_through_your_own_router_is_refused_as_local_is(hub, tmp_path, capsys, monkeypatch):
    from interleave_bench.generate.runner import generate_offline

    from _route_util import module_at

    data = tmp_path / "seed1"
    generate_offline(5, data, seed=1)  # the offline data the shipped fit read
    with module_at(tmp_path / "mods", "wrapr", WRAP, monkeypatch):
        assert u.cli(["route", str(data), "--mode", "closed", "--split", "dev", "--router", "wrapr:Wrap"],
                     capsys)[0] == 0
    pred = data / "predictions" / "closed-mylocal.jsonl"
    code, _, lines = _add([str(pred), "--data", str(data), "--split", "dev"], capsys)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"error: {pred}: in_sample: scored on the offline dev sessions of seed 1, {REFUSED}"), lines
    assert ("dataset", BOARD) not in hub.repos
