"""A run on the board is its routing decisions: the same decisions relabelled (policy, via, model, usage,
name) are refused as the run already there, and the gold's decisions are ranked only as the oracle
baseline, against the Hub stand-in (docs/leaderboard.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

import _board_util as b
import _hub_util as u
from _hub_util import hub  # noqa: F401  (the fixture)
from interleave_bench.errors import InputErrors
from interleave_bench.hub.board_checks import check_additions
from interleave_bench.hub.board_score import score_given
from interleave_bench.schema import PredictionRow
from interleave_bench.score.routing import decisions_fingerprint

BOARD = "me/fresh"


@pytest.fixture
def runs(tmp_path):
    """``(data folder, {run: predictions file})`` of the baselines on ten sessions."""
    return b.baselines(tmp_path / "data")


def _add(capsys, *args: str) -> tuple[int, str, str]:
    return u.cli(["leaderboard", "add", *args, "--repo", BOARD], capsys)


def _rewritten(src: Path, out: Path, edit: Callable[[dict[str, Any]], dict[str, Any]]) -> str:
    """``src``'s rows each rewritten by ``edit``, as a predictions file of its own."""
    rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines() if line.strip()]
    out.write_text("".join(json.dumps(edit(r)) + "\n" for r in rows), encoding="utf-8")
    return str(out)


def _refused_as(capsys, path: str, data: Path, system: str, already: str, publication: str = "board-1") -> None:
    """``path`` added as ``system`` is refused in one line as the decisions of ``already``."""
    code, _, err = _add(capsys, path, "--data", str(data), "--system", system)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {path}: decisions_sha256: duplicate: the same routing decisions"), err
    assert f"already on the board as {already} (published in {publication})" in err, err


def test_a_run_relabelled_is_refused_naming_the_run_already_on_the_board(hub, runs, tmp_path, capsys):
    data, preds = runs
    code, _, err = _add(capsys, str(preds["closed-bm25"]), str(preds["open-oracle"]), "--data", str(data), "--new-board")
    assert code == 0, err
    bm25, oracle = "closed-bm25 (closed, bm25, no model, dev)", "open-oracle (open, oracle, no model, dev)"
    # the policy renamed: the same decisions ranked twice
    mine = _rewritten(preds["closed-bm25"], tmp_path / "mine.jsonl", lambda r: {**r, "policy": "mine"})
    _refused_as(capsys, mine, data, "my router", bm25)
    # the gold oracle declared an llm run of a model
    llm = _rewritten(preds["open-oracle"], tmp_path / "llm.jsonl", lambda r: {**r, "policy": "llm", "model": "gpt-9"})
    _refused_as(capsys, llm, data, "gpt-9 router", oracle)
    # what the scorer reads only for costs and times is not a decision
    costed = _rewritten(preds["closed-bm25"], tmp_path / "costed.jsonl", lambda r: {
        **r, "via": "llm", "elapsed_ms": 120, "usage": {"input_tokens": 900, "output_tokens": 5}})
    _refused_as(capsys, costed, data, "costed router", bm25)
    # in open mode a label is only a name: the same grouping under other names is the same decisions
    renamed = _rewritten(preds["open-oracle"], tmp_path / "renamed.jsonl",
                         lambda r: {**r, "pred": f"topic-{r['pred']}", "refs": [f"topic-{x}" for x in r.get("refs") or []]})
    _refused_as(capsys, renamed, data, "renamed router", oracle)
    assert sorted(hub.tags(BOARD)) == ["board-1"] and len(hub.commits(BOARD)) == 2
    # refs are decisions: the same labels with refs are another run, accepted beside them
    reffed = _rewritten(preds["closed-bm25"], tmp_path / "reffed.jsonl", lambda r: {**r, "refs": ["t2", "t1"]})
    code, out, err = _add(capsys, reffed, "--data", str(data), "--system", "reffed router")
    assert code == 0 and "added reffed router (closed, bm25" in out, err
    # refs in another order, or named twice, are the same refs
    again = _rewritten(Path(reffed), tmp_path / "again.jsonl", lambda r: {**r, "refs": ["t1", "t2", "t1"]})
    _refused_as(capsys, again, data, "again router", "reffed router (closed, bm25, no model, dev)", "board-2")


def _oracle_refused(capsys, path: str, data: Path, said: str) -> None:
    code, _, err = _add(capsys, path, "--data", str(data), "--system", "my router")
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {path}: policy: {said}, but every one of the 24 strict messages the ranking counts "
                          "is routed where its gold puts it (accuracy 1)"), err
    assert "the board ranks it only as the oracle (policy 'oracle')" in err


def test_the_oracle_relabelled_is_refused_and_ranked_only_as_the_oracle(hub, runs, tmp_path, capsys):
    data, preds = runs
    # the gold oracle declared an llm run of a model, on a board that does not hold the oracle
    llm = _rewritten(preds["open-oracle"], tmp_path / "llm.jsonl", lambda r: {**r, "policy": "llm", "model": "gpt-9"})
    # its open labels renamed and its refs left out; the closed oracle under another policy
    bare = _rewritten(preds["open-oracle"], tmp_path / "bare.jsonl",
                      lambda r: {**{k: v for k, v in r.items() if k != "refs"}, "pred": "x" + r["pred"], "policy": "mine"})
    closed = _rewritten(preds["closed-oracle"], tmp_path / "closed.jsonl", lambda r: {**r, "policy": "bm25"})
    for path, said in ((llm, "'llm'"), (bare, "'mine'"), (closed, "'bm25'")):
        _oracle_refused(capsys, path, data, said)
    assert hub.tags(BOARD) == {}
    # declared as the oracle, the same rows are ranked as what they are
    code, out, err = _add(capsys, str(preds["open-oracle"]), "--data", str(data))
    assert code == 0 and "added open-oracle (open, oracle, no model, dev)" in out, err


def test_the_oracle_edited_where_the_ranking_does_not_read_is_still_the_oracle(hub, runs, tmp_path, capsys):
    """Accuracy and weighted error, what the board ranks on, count the strict messages alone: the
    oracle's rows with an ambiguous message or a one-off sent elsewhere and the refs left out hold
    the oracle's place all the same."""
    data, preds = runs

    def edited(r: dict[str, Any], moved: dict[int, str]) -> dict[str, Any]:
        out = {**{k: v for k, v in r.items() if k != "refs"}, "policy": "cleverbot", "via": "router"}
        return {**out, "pred": moved[r["i"]]} if r["session_id"] == "en-0000" and r["i"] in moved else out

    # turn 3 of each session is an ambiguous t2 message, turn 2 a one-off
    ambiguous = _rewritten(preds["closed-oracle"], tmp_path / "ambiguous.jsonl", lambda r: edited(r, {3: "t1"}))
    oneoff = _rewritten(preds["closed-oracle"], tmp_path / "oneoff.jsonl", lambda r: edited(r, {2: "t1", 3: "t3"}))
    opened = _rewritten(preds["open-oracle"], tmp_path / "opened.jsonl", lambda r: edited(r, {3: "t1"}))
    for path in (ambiguous, oneoff, opened):
        _oracle_refused(capsys, path, data, "'cleverbot'")
    # one strict message routed elsewhere is a run of its own (a router right on all but one is no oracle)
    strict = _rewritten(preds["closed-oracle"], tmp_path / "strict.jsonl", lambda r: edited(r, {4: "t2"}))
    code, out, err = _add(capsys, strict, "--data", str(data), "--system", "almost")
    assert code == 0 and "added almost (closed, cleverbot, no model, dev)" in out, err
    assert "| 1 | almost | cleverbot | - | 0.9583 [" in out


def _fingerprint(rows: list[dict[str, Any]], mode: str, sessions=("s1",)) -> str:
    from interleave_bench.schema import Session

    data = {sid: Session.model_validate(u.session(sid)) for sid in sessions}
    return decisions_fingerprint([PredictionRow.model_validate(r) for r in rows], mode, data)


#: the test session's turns: t1, t2, a one-off, t2 (ambiguous), t3 drawing on t2 (its gold refs)
OPEN_ROWS = [{"session_id": "s1", "i": 0, "pred": "a"}, {"session_id": "s1", "i": 1, "pred": "b"},
             {"session_id": "s1", "i": 2, "pred": "CLARIFY"}, {"session_id": "s1", "i": 3, "pred": "b"},
             {"session_id": "s1", "i": 4, "pred": "c", "refs": ["b"]}]


def _with(rows: list[dict[str, Any]], i: int, **changes: Any) -> list[dict[str, Any]]:
    return [{**r, **changes} if r["i"] == i else r for r in rows]


def test_the_decisions_are_labels_per_turn_and_an_open_label_is_only_a_name():
    fp = _fingerprint(OPEN_ROWS, "open")
    names = {"a": "x", "b": "y", "c": "z"}
    renamed = [{**r, "pred": names.get(r["pred"], r["pred"]), **({"refs": ["y", "nowhere"]} if r.get("refs") else {})}
               for r in OPEN_ROWS]
    assert _fingerprint(renamed[::-1], "open") == fp  # another order, other names, a ref to no label
    assert _fingerprint(_with(OPEN_ROWS, 3, pred="a"), "open") != fp  # another grouping
    assert _fingerprint([*OPEN_ROWS, {"session_id": "s2", "i": 0, "pred": "z"}], "open") == fp  # a session not scored
    relabelled = [{**r, "policy": "llm", "via": "llm", "elapsed_ms": 3, "usage": {"input_tokens": 9}} for r in OPEN_ROWS]
    assert _fingerprint(relabelled, "open") == fp
    closed = [{**r, "pred": {"a": "t1", "b": "t2", "c": "t3"}.get(r["pred"], r["pred"])} for r in OPEN_ROWS]
    assert _fingerprint(closed, "closed") != _fingerprint(_with(closed, 1, pred="t3"), "closed")  # a closed label names a thread
    # a closed label that names no thread is only a name too: its messages are grouped, never matched
    assert _fingerprint(_with(closed, 2, pred="x1"), "closed") == _fingerprint(_with(closed, 2, pred="side"), "closed")
    assert _fingerprint(_with(closed, 2, pred="x1"), "closed") != _fingerprint(closed, "closed")


def test_refs_are_decisions_only_where_refs_recall_reads_them():
    """Refs score on a thread message with gold refs, and only when one of them, mapped as labels
    are, is a gold ref: a ref anywhere else, or one that misses, is no other run."""
    fp = _fingerprint(OPEN_ROWS, "open")
    missed = _fingerprint(_with(OPEN_ROWS, 4, refs=None), "open")
    assert missed != fp  # the ref that scores, left out
    for refs in (["a"], ["c"], ["CLARIFY"], ["zz9"], []):  # another thread, its own, special, no label, none
        assert _fingerprint(_with(OPEN_ROWS, 4, refs=refs), "open") == missed, refs
    assert _fingerprint(_with(OPEN_ROWS, 4, refs=["a", "b", "b"]), "open") == fp  # one more beside one that scores
    for i in (0, 2, 3):  # a message without gold refs, the one-off, the ambiguous message
        assert _fingerprint(_with(OPEN_ROWS, i, refs=["a", "b", "c"]), "open") == fp, i
    closed = [{**r, "pred": {"a": "t1", "b": "t2", "c": "t3"}.get(r["pred"], r["pred"]),
               **({"refs": ["t2"]} if r.get("refs") else {})} for r in OPEN_ROWS]
    cfp = _fingerprint(closed, "closed")
    cmissed = _fingerprint(_with(closed, 4, refs=None), "closed")
    assert cmissed != cfp
    for refs in (["t1"], ["t3"], ["CLARIFY"], ["zz9"], ["b"]):
        assert _fingerprint(_with(closed, 4, refs=refs), "closed") == cmissed, refs
    assert _fingerprint(_with(closed, 2, refs=["t2"]), "closed") == cfp


def test_a_run_given_refs_no_figure_reads_is_the_run_already_on_the_board(hub, runs, tmp_path, capsys):
    data, preds = runs
    code, _, err = _add(capsys, str(preds["closed-bm25"]), "--data", str(data), "--new-board")
    assert code == 0, err
    bm25 = "closed-bm25 (closed, bm25, no model, dev)"
    # turn 4 of every session is a t3 message drawing on t2; turn 0 has no gold refs; turn 2 is a one-off
    for name, i, refs in (("nowhere", 4, ["zz9"]), ("clarify", 4, ["CLARIFY"]), ("own", 4, ["t3"]),
                          ("other", 4, ["t1"]), ("ungold", 0, ["t2"]), ("oneoff", 2, ["t2"])):
        path = _rewritten(preds["closed-bm25"], tmp_path / f"{name}.jsonl",
                          lambda r: {**r, "refs": refs} if r["i"] == i else r)
        _refused_as(capsys, path, data, f"{name} router", bm25)
    # a message sent to a side topic of its own is another run; the side topic renamed is not
    side = _rewritten(preds["closed-bm25"], tmp_path / "side.jsonl", lambda r: {**r, "pred": "x1"} if r["i"] == 1 else r)
    code, out, err = _add(capsys, side, "--data", str(data), "--system", "side router")
    assert code == 0 and "added side router" in out, err
    aside = _rewritten(Path(side), tmp_path / "aside.jsonl", lambda r: {**r, "pred": "aside"} if r["i"] == 1 else r)
    _refused_as(capsys, aside, data, "aside router", "side router (closed, bm25, no model, dev)", "board-2")
    # a ref that scores is another run, and the board shows it
    hit = _rewritten(preds["closed-bm25"], tmp_path / "hit.jsonl", lambda r: {**r, "refs": ["zz9", "t2"]} if r["i"] == 4 else r)
    code, out, err = _add(capsys, hit, "--data", str(data), "--system", "hit router")
    assert code == 0 and "added hit router" in out, err
    assert sorted(hub.tags(BOARD)) == ["board-1", "board-2", "board-3"]


def test_a_board_published_before_decisions_were_recorded_still_compares_its_rows(runs, tmp_path):
    data, preds = runs
    (row,) = [s.row for s in score_given([str(preds["closed-bm25"])], data=str(data))]
    old = {**row, "decisions_sha256": None, "publication": "board-1"}  # as a board written before holds it
    reordered = tmp_path / "reordered.jsonl"
    reordered.write_text("".join(reversed(preds["closed-bm25"].read_text(encoding="utf-8").splitlines(True))),
                         encoding="utf-8")
    (new,) = [s.row for s in score_given([str(reordered)], data=str(data), system="reordered")]
    with pytest.raises(InputErrors) as exc:
        check_additions([old], [new], [str(reordered)])
    assert "rows_sha256: duplicate: the same rows, in another order or layout" in exc.value.errors[0].format()
