"""A corpus of forged leaderboard rows: each is refused with one line naming the file (and field), none
gives an internal error, and the honest run each is forged from is accepted by the same rules.

The rules are those ``leaderboard add`` applies before it sends anything (docs/leaderboard.md):
the run scored by the board itself, the figures a file states compared with the computed ones, the
values, intervals and completeness checked, and the board's uniqueness of runs and names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

import _board_util as b
from interleave_bench.errors import InputError, InputErrors, UsageError
from interleave_bench.hub.board_checks import (
    check_additions,
    check_complete,
    check_intervals,
    check_oracle,
    check_out_of_sample,
    check_real_model,
    check_shown,
    check_values,
)
from interleave_bench.hub.board_score import score_given
from interleave_bench.llm.server import FakeServer


def verdict(paths: list[str], existing: list[dict[str, Any]] = (), **options: Any) -> list[str]:
    """The error lines ``leaderboard add`` would print for ``paths`` against a board of ``existing`` rows
    (empty: accepted)."""
    try:
        scored = score_given(paths, **options)
        rows, where = [s.row for s in scored], [s.path for s in scored]
        check_shown(rows, where)
        check_values(rows, where)
        check_intervals(rows, where)
        check_complete([s.doc for s in scored], where)
        check_real_model([s.doc for s in scored], where)
        check_out_of_sample([s.doc for s in scored], where)
        check_additions(list(existing), rows, where)
        check_oracle([s.doc for s in scored], where)
    except InputErrors as exc:
        return [e.format() for e in exc.errors]
    except InputError as exc:
        return [exc.format()]
    except UsageError as exc:
        return [str(exc)]
    return []


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The honest material: a data folder, its baselines, a score file, a facts and a mid-reply summary."""
    root = tmp_path_factory.mktemp("forgeries")
    data, preds = b.baselines(root / "data")
    honest = b.score_file(data, preds["closed-stay"], out=root / "honest.score.json")
    return {"root": root, "data": data, "preds": preds, "score": honest,
            "facts": _facts_summary(root), "mid": _mid_reply_summary(root), "mid_model": _mid_reply_model_summary(root)}


def _facts_summary(root: Path) -> dict[str, Any]:
    """A facts run's summary as ``facts --model stand-in`` writes it: on a v1 data folder of two dev
    sessions and one test session, the real client asking the fake OpenAI-compatible server on
    loopback (a model's run to the board), the data and its fingerprint named."""
    from _facts_util import session, write_data

    from interleave_bench.cli import main

    data = write_data(root / "v1", [session("en-0001"), session("en-0002"), session("zh-0001", lang="zh", split="test")])
    with FakeServer() as srv, pytest.MonkeyPatch.context() as mp:
        mp.setenv("INTERLEAVE_CACHE", str(root / "cache"))
        mp.setenv("OPENAI_BASE_URL", srv.url)
        mp.setenv("OPENAI_API_KEY", "sk-test-stand-in")
        assert main(["facts", str(data), "--model", "stand-in", "--split", "all",
                     "--out", str(root / "facts" / "run.jsonl")]) in (0, 1)
    doc = json.loads((root / "facts" / "run.score.json").read_text(encoding="utf-8"))
    assert doc["data"]["path"] == str(data / "sessions.jsonl") and doc["split"] == "all"
    return doc


def _dry_run(w) -> Path:
    """A model-router run answered by the project's fake model (``route --dry-run``)."""
    from interleave_bench.cli import main

    out = w["root"] / "dry" / "closed-llm-fake-model.jsonl"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("INTERLEAVE_CACHE", str(w["root"] / "cache"))
        assert main(["route", str(w["data"]), "--mode", "closed", "--policy", "llm", "--dry-run", "--out", str(out)]) == 0
    return out


def _harness_dry_run(w) -> Path:
    """The same rows as a harness names the fake model (inspect's ``openai-api/fake/fake-model``,
    as ``import inspect`` writes them from a run against ``interleave-bench fake-model``)."""
    dry = _dry_run(w)
    out = dry.with_name("closed-llm-inspect-fake.jsonl")
    out.write_text(dry.read_text(encoding="utf-8").replace('"model":"fake-model"', '"model":"openai-api/fake/fake-model"'),
                   encoding="utf-8")
    assert "openai-api/fake/fake-model" in out.read_text(encoding="utf-8")
    return out


def _served_run(w) -> Path:
    """A model-router run answered by ``interleave-bench fake-model`` under a model's name
    (``OPENAI_BASE_URL`` at its server, ``--model gpt-4o-mini``): rows say gpt-4o-mini, and the run
    record beside them counts the answers the server marked as the fake model's."""
    from interleave_bench.cli import main

    out = w["root"] / "served" / "closed-llm-gpt-4o-mini.jsonl"
    with FakeServer() as srv, pytest.MonkeyPatch.context() as mp:
        mp.setenv("INTERLEAVE_CACHE", str(w["root"] / "cache"))
        mp.setenv("OPENAI_BASE_URL", srv.url)
        mp.setenv("OPENAI_API_KEY", "sk-test-stand-in")
        assert main(["route", str(w["data"]), "--mode", "closed", "--policy", "llm", "--model", "gpt-4o-mini",
                     "--out", str(out)]) == 0
    return out


def _facts_dev_only(w) -> dict[str, Any]:
    """The honest facts run's rows of its dev sessions only, honestly summarised but claimed as a test run."""
    from interleave_bench.commands.score_facts import score_and_write

    src = Path(w["facts"]["results"]["path"])
    out = w["root"] / "facts" / "dev-only.jsonl"
    out.write_text("".join(line + "\n" for line in src.read_text(encoding="utf-8").splitlines()
                           if '"zh-0001"' not in line), encoding="utf-8")
    doc = score_and_write(out, Path(w["facts"]["data"]["path"])).model_dump(mode="json")
    assert doc["split"] == "dev"
    return b.forged(doc, split="test")


def _facts_answers_forged(w) -> dict[str, Any]:
    """Every answer of the honest run replaced by one word, each marked correct, summarised without the data
    (so the verdicts are taken as written), then given the honest summary's data claim."""
    from interleave_bench.commands.score_facts import score_and_write

    src = Path(w["facts"]["results"]["path"])
    rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in rows:
        if r["kind"] == "answer":
            r.update(answer="banana", verdict="correct")
    out = w["root"] / "facts" / "banana.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    doc = score_and_write(out).model_dump(mode="json")
    assert doc["metrics"]["strategies"]["facts"]["answer_accuracy"]["value"] == 1.0
    return b.forged(doc, data=w["facts"]["data"], provenance__data_sha256=w["facts"]["data"]["sha256"])


def _facts_delivery_forged(w, name: str, judged: str, **changes: Any) -> dict[str, Any]:
    """The honest run with its first delivered line judged ``judged`` changed, summarised without the
    data (so verdicts are taken as written), then given the honest summary's data claim."""
    from interleave_bench.commands.score_facts import score_and_write

    src = Path(w["facts"]["results"]["path"])
    rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines() if line.strip()]
    row = next(r for r in rows if r["kind"] == "delivery" and r["verdict"] == judged)
    row.update(changes)
    out = w["root"] / "facts" / f"{name}.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    doc = score_and_write(out).model_dump(mode="json")
    return b.forged(doc, data=w["facts"]["data"], provenance__data_sha256=w["facts"]["data"]["sha256"])


def _mid_reply_summary(root: Path) -> dict[str, Any]:
    """A rule-only mid-reply run's summary (results written under ``root``)."""
    import os

    from interleave_bench.cli import main

    here = os.getcwd()
    os.chdir(root)
    try:
        assert main(["mid-reply", "--rule-only", "--out", str(root / "mid" / "mid-reply-rule.jsonl")]) == 0
    finally:
        os.chdir(here)
    summary = next((root / "mid").glob("*.score.json"))
    doc = json.loads(summary.read_text(encoding="utf-8"))
    doc["results"]["path"] = str(root / "mid" / Path(doc["results"]["path"]).name)
    return doc


def _mid_reply_model_summary(root: Path) -> dict[str, Any]:
    """A classifier mid-reply run's summary as ``mid-reply --model stand-in`` writes it: every
    packaged case, the real client asking the fake OpenAI-compatible server on loopback."""
    from interleave_bench.cli import main

    out = root / "mid" / "mid-reply-classifier-stand-in.jsonl"
    with FakeServer() as srv, pytest.MonkeyPatch.context() as mp:
        mp.setenv("INTERLEAVE_CACHE", str(root / "cache"))
        mp.setenv("OPENAI_BASE_URL", srv.url)
        mp.setenv("OPENAI_API_KEY", "sk-test-stand-in")
        assert main(["mid-reply", "--model", "stand-in", "--out", str(out)]) == 0
    doc = json.loads(out.with_name("mid-reply-classifier-stand-in.score.json").read_text(encoding="utf-8"))
    assert doc["decisions"]["classifier"] > 0 and 0 < doc["metrics"]["accuracy"]["value"] < 1
    return doc


def _score(w, **changes) -> dict[str, Any]:
    return b.forged(w["score"], **changes)


def _raw(w, old: str, new: str) -> str:
    """The honest score file's text with ``old`` replaced once by ``new`` (forgeries JSON cannot hold)."""
    text = json.dumps(w["score"])
    assert old in text
    return text.replace(old, new, 1)


def _partial_predictions(w) -> dict[str, Any]:
    """A run that left one session of its split unrouted, with a score file that says so."""
    pred = w["preds"]["closed-stay"]
    lines = pred.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])["session_id"]
    cut = w["root"] / "partial" / "closed-stay.jsonl"
    cut.parent.mkdir(exist_ok=True)
    cut.write_text("".join(line + "\n" for line in lines if json.loads(line)["session_id"] != first), encoding="utf-8")
    return b.score_file(w["data"], cut)


def _other_run(w, run: str) -> dict[str, Any]:
    return b.score_file(w["data"], w["preds"][run])


def _predictions(w, name: str, edit: Callable[[list[str]], list[str]]) -> Path:
    """The honest predictions file with its lines edited, as a predictions file of its own."""
    lines = w["preds"]["closed-stay"].read_text(encoding="utf-8").splitlines()
    out = w["root"] / "preds" / f"{name}.jsonl"
    out.parent.mkdir(exist_ok=True)
    out.write_text("".join(line + "\n" for line in edit(lines)), encoding="utf-8")
    return out


def _edit_row(line: str, **changes: Any) -> str:
    """A predictions line with fields changed (``None``: the field left out)."""
    row = {**json.loads(line), **changes}
    return json.dumps({k: v for k, v in row.items() if v is not None})


def _rescored(w, run: str, mode: str) -> dict[str, Any]:
    """The score file of a run rescored in the other mode: consistent figures for a table the run was not routed
    in (``score --mode`` refuses a run whose record states another mode, so its rows are scored without the
    record, then named where they are)."""
    import shutil

    from interleave_bench.score.run import score_files

    bare = w["root"] / "rescored" / Path(w["preds"][run]).name
    bare.parent.mkdir(exist_ok=True)
    shutil.copy(w["preds"][run], bare)
    result = score_files(w["data"], [bare], mode=mode, bootstrap=b.BOOT, write=False)[0].result
    result["provenance"]["predictions_file"] = str(w["preds"][run])
    return result


def _facts_rows(w, name: str, pattern: str, new: str) -> dict[str, Any]:
    """The honest facts summary, naming result rows edited (the first match of ``pattern``; its hash taken of
    the edited rows)."""
    import re

    from interleave_bench.fingerprints import sha256_file

    src = Path(w["facts"]["results"]["path"])
    text = src.read_text(encoding="utf-8")
    assert re.search(pattern, text)
    out = w["root"] / "facts" / f"{name}.jsonl"
    out.write_text(re.sub(pattern, new, text, count=1), encoding="utf-8")
    sha = sha256_file(out)
    return b.forged(w["facts"], results__path=str(out), results__sha256=sha, provenance__predictions_sha256=sha)


def _own_metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mid-reply figures from the rows' own copies of their cases, as a forger states them."""
    from interleave_bench.midreply.metrics import mid_reply_scores

    return mid_reply_scores([r["destination"] for r in rows], [r["expect"] for r in rows],
                            running=[r["running"] for r in rows], lang=[r["lang"] for r in rows],
                            how=[r["how"] for r in rows], tags=[r["tags"] for r in rows])


def _mid_rows(w, name: str, rows: list[dict[str, Any]], base: str = "mid", **changes: Any) -> dict[str, Any]:
    """The honest mid-reply summary (``base``: the rule-only run, or ``mid_model`` the classifier's)
    naming ``rows`` written as a results file of their own, its figures re-stated from the rows' own fields."""
    from interleave_bench.fingerprints import sha256_file

    out = w["root"] / "mid" / f"{name}.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    sha = sha256_file(out)
    return b.forged(w[base], results__path=str(out), results__sha256=sha, provenance__predictions_sha256=sha,
                    metrics=_own_metrics(rows), **changes)


def _mid_model_rows(w) -> list[dict[str, Any]]:
    """The honest classifier run's rows."""
    src = Path(w["mid_model"]["results"]["path"])
    return [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()]


def _mid_wrong_edited(w, name: str, **changes: Any) -> dict[str, Any]:
    """The classifier run with ``changes`` made to every row the classifier got wrong (a callable is given
    the row), its figures re-stated from the edited rows."""
    rows = _mid_model_rows(w)
    wrong = [r for r in rows if r["destination"] != r["expect"]]
    assert wrong
    for r in wrong:
        r.update({k: v(r) if callable(v) else v for k, v in changes.items()})
    return _mid_rows(w, name, rows, base="mid_model")


def _mid_subset(w) -> dict[str, Any]:
    """A mid-reply run on five cases whose summary hides it (its figures re-stated for those rows)."""
    src = Path(w["mid"]["results"]["path"])
    rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()[:5]]
    return _mid_rows(w, "subset", rows, cases__selected=5)


def _mid_expect_forged(w) -> dict[str, Any]:
    """A mid-reply run whose wrong rows say their case expected what they did (figures re-stated)."""
    src = Path(w["mid"]["results"]["path"])
    rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()]
    wrong = [r for r in rows if r["destination"] != r["expect"]]
    assert wrong
    for r in wrong:
        r["expect"] = r["destination"]
    return _mid_rows(w, "expect", rows)


def _relabelled(w, run: str, **changes: Any) -> Path:
    """Baseline ``run``'s rows with fields changed (a callable is given the row), as a predictions file of its own."""
    rows = [json.loads(line) for line in w["preds"][run].read_text(encoding="utf-8").splitlines()]
    out = w["root"] / "preds" / f"{run}-relabelled.jsonl"
    out.parent.mkdir(exist_ok=True)
    out.write_text("".join(_edit_row(json.dumps(r), **{k: v(r) if callable(v) else v for k, v in changes.items()}) + "\n"
                           for r in rows), encoding="utf-8")
    return out


def _board_row(w, **changes) -> list[dict[str, Any]]:
    """A board already holding the honest run (as published), with ``changes`` to that row."""
    row = score_given([str(w["root"] / "honest.score.json")])[0].row
    return [{**row, "publication": "board-1", **changes}]


def _open_run(w, name: str, pred: Callable[[int], Any] = str, ms: Any = 212) -> Path:
    """The open-mode baseline with its labels written by ``pred`` (``t3`` -> ``pred(3)``) and each row's
    time as ``ms``, as a predictions file of its own."""
    rows = [json.loads(line) for line in w["preds"]["open-bm25"].read_text(encoding="utf-8").splitlines()]
    out = w["root"] / "preds" / f"{name}.jsonl"
    out.parent.mkdir(exist_ok=True)
    out.write_text("".join(json.dumps({**r, "pred": pred(int(r["pred"].lstrip("t"))), "elapsed_ms": ms}) + "\n"
                           for r in rows), encoding="utf-8")
    return out


def _open_board(w) -> list[dict[str, Any]]:
    """A board already holding :func:`_open_run` with labels as text and whole milliseconds."""
    row = score_given([str(_open_run(w, "labels-as-text"))], data=str(w["data"]))[0].row
    return [{**row, "publication": "board-1"}]


#: name -> (what to submit, given the honest world); a dict is a score file, a str its raw text, a
#: Path a predictions file, a tuple (document, board rows) a submission to a board already holding rows
FORGERIES: dict[str, Callable[[dict[str, Any]], Any]] = {
    # metrics that contradict the run's own counts, or any value the scorer would not give
    "accuracy raised": lambda w: _score(w, metrics__accuracy=0.95),
    "accuracy null": lambda w: _score(w, metrics__accuracy=None),
    "accuracy a string": lambda w: _score(w, metrics__accuracy="0.95"),
    "accuracy above 1": lambda w: _score(w, metrics__accuracy=2.5),
    "accuracy negative": lambda w: _score(w, metrics__accuracy=-0.1),
    "accuracy infinite": lambda w: _raw(w, '"accuracy": ' + json.dumps(w["score"]["metrics"]["accuracy"]), '"accuracy": 1e400'),
    "accuracy NaN": lambda w: _raw(w, '"accuracy": ' + json.dumps(w["score"]["metrics"]["accuracy"]), '"accuracy": NaN'),
    "accuracy a flag": lambda w: _score(w, metrics__accuracy=True),
    "weighted error zeroed": lambda w: _score(w, metrics__weighted_error=0.0),
    "lenient accuracy nudged": lambda w: _score(w, metrics__accuracy_lenient=w["score"]["metrics"]["accuracy_lenient"] - 0.01),
    "B-cubed F1 raised": lambda w: _score(w, metrics__bcubed_f1=0.99),
    "switch F1 raised": lambda w: _score(w, metrics__switch_f1=0.99),
    "topics per thread below 1": lambda w: _score(w, metrics__topics_per_thread=0.5),
    "tokens per message negative": lambda w: _score(w, metrics__input_tokens_per_message=-1.0),
    "a metric dropped": lambda w: {**w["score"], "metrics": {k: v for k, v in w["score"]["metrics"].items() if k != "switch_f1"}},
    # intervals
    "interval widened": lambda w: _score(w, intervals__accuracy=[0.0, 1.0]),
    "interval removed": lambda w: _score(w, intervals__accuracy=None),
    "interval shifted": lambda w: _score(w, intervals__weighted_error=[x + 0.01 for x in w["score"]["intervals"]["weighted_error"]]),
    "no intervals at all (bootstrap 0)": lambda w: _score(w, provenance__bootstrap=0, intervals={}),
    "bootstrap negative": lambda w: _score(w, provenance__bootstrap=-1),
    "bootstrap too few for a 95% interval": lambda w: _score(w, provenance__bootstrap=2),
    "bootstrap of a billion (the board would redraw them)": lambda w: _score(w, provenance__bootstrap=10 ** 9),
    "seed not a number": lambda w: _score(w, provenance__seed="x"),
    # counts: contradicting, negative, zero, too long to read
    "strict count raised": lambda w: _score(w, counts__strict=371),
    "strict count negative": lambda w: _score(w, counts__strict=-5),
    "sessions zero": lambda w: _score(w, counts__sessions=0),
    "messages zero": lambda w: _score(w, counts__messages=0),
    "messages a 5,000-digit number": lambda w: _raw(w, f'"messages": {w["score"]["counts"]["messages"]}', '"messages": ' + "9" * 5000),
    "outcome count raised": lambda w: _score(w, outcomes__correct=w["score"]["outcomes"]["correct"] + 100),
    "partial run hidden": lambda w: b.forged(_partial_predictions(w), counts__sessions_without_rows=0, not_scored=[]),
    "partial run as it is": lambda w: _partial_predictions(w),
    "predictions with a 5,000-digit turn": lambda w: _predictions(
        w, "digits", lambda ls: [ls[0].replace('"i":0', '"i":' + "9" * 5000, 1), *ls[1:]]),
    "predictions for sessions the data lacks": lambda w: _predictions(
        w, "elsewhere", lambda ls: [line.replace('"session_id":"', '"session_id":"x-') for line in ls]),
    # rows the data does not hold, amid the honest ones: the scorer lists and skips them, the board refuses
    "a row for a session the data lacks": lambda w: _predictions(
        w, "one-elsewhere", lambda ls: [*ls, ls[2].replace('"session_id":"', '"session_id":"x-', 1)]),
    "a row for a turn past the session's last": lambda w: _predictions(
        w, "past-last", lambda ls: [*ls, _edit_row(ls[2], i=999)]),
    "the same turn twice": lambda w: _predictions(w, "twice", lambda ls: [*ls, ls[2]]),
    "the same turn twice, another answer the second time": lambda w: _predictions(
        w, "twice-other", lambda ls: [*ls, _edit_row(ls[2], pred="t9")]),
    # the mode: a run is ranked in the table of the mode its rows were routed in
    "closed rows scored as open": lambda w: _rescored(w, "closed-stay", "open"),
    "open rows scored as closed": lambda w: _rescored(w, "open-bm25", "closed"),
    "rows naming no mode": lambda w: _predictions(w, "no-mode", lambda ls: [_edit_row(x, mode=None) for x in ls]),
    "one row of another mode": lambda w: _predictions(w, "one-open", lambda ls: [*ls[:3], _edit_row(ls[3], mode="open"), *ls[4:]]),
    "closed rows saying open mode": lambda w: _relabelled(w, "closed-oracle", mode="open", policy="mine"),
    "closed rows saying open mode, a thread named ahead": lambda w: _relabelled(
        w, "closed-stay", mode="open", pred=lambda r: "t3" if r["i"] == 1 else r["pred"]),
    # fingerprints
    "data fingerprint not a hash": lambda w: _score(w, provenance__data_sha256="abc"),
    "predictions fingerprint not a hash": lambda w: _score(w, provenance__predictions_sha256="deadbeef"),
    "predictions fingerprint of another file": lambda w: _score(w, provenance__predictions_sha256="sha256:" + "0" * 64),
    "data fingerprint of other data": lambda w: _score(w, provenance__data_sha256="sha256:" + "1" * 64),
    "no provenance": lambda w: {k: v for k, v in w["score"].items() if k != "provenance"},
    "predictions file gone": lambda w: _score(w, provenance__predictions_file=str(w["root"] / "nowhere.jsonl")),
    "another run's predictions": lambda w: _score(w, provenance__predictions_file=str(w["preds"]["closed-oracle"])),
    # what the run was
    "split claimed test": lambda w: _score(w, split="test"),
    "mode claimed open": lambda w: _score(w, mode="open"),
    "policy claimed llm": lambda w: _score(w, policy="llm"),
    "model claimed": lambda w: _score(w, model="gpt-x"),
    "another format": lambda w: _score(w, format="interleave-score-v2"),
    "not an object": lambda w: "[1, 2, 3]",
    # names
    "a line break in the name": lambda w: _score(w, system="stay\nerror: forged line"),
    "an empty name": lambda w: _score(w, system="   "),
    "a right-to-left override in the name": lambda w: _score(w, system="stay\u202emiws"),
    "a name of 200 letters": lambda w: _score(w, system="s" * 200),
    # the board's uniqueness
    "the same run under another name": lambda w: (_score(w, system="renamed"), _board_row(w)),
    "the same rows reordered under another name": lambda w: (_predictions(w, "reordered", lambda ls: ls[::-1]), _board_row(w)),
    "the same rows reformatted under another name": lambda w: (
        _predictions(w, "reformatted", lambda ls: [json.dumps(json.loads(line), indent=None, separators=(", ", ": "))
                                                   for line in ls]), _board_row(w)),
    "a dry run of the fake model": lambda w: _dry_run(w),
    "a harness run of the fake model": lambda w: _harness_dry_run(w),
    "the fake server's answers under a model's name": lambda w: _served_run(w),
    "a dry-run facts summary": lambda w: b.forged(w["facts"], model="fake-model"),
    "the same rows with a field added under another name": lambda w: (
        _predictions(w, "field-added", lambda ls: [json.dumps({**json.loads(line), "note": "x"}) for line in ls]),
        _board_row(w)),
    "the same rows with labels written as numbers": lambda w: (_open_run(w, "labels-as-numbers", pred=int), _open_board(w)),
    "the same rows with whole milliseconds as decimals": lambda w: (_open_run(w, "ms-as-decimals", ms=212.0), _open_board(w)),
    "the same decisions under another policy and name": lambda w: (
        _predictions(w, "relabelled", lambda ls: [_edit_row(x, policy="mine", via="llm", elapsed_ms=90) for x in ls]),
        _board_row(w)),
    "the same open decisions under other labels": lambda w: (_open_run(w, "labels-renamed", pred=lambda n: f"x{n}"),
                                                             _open_board(w)),
    "the oracle's decisions under another policy": lambda w: _relabelled(w, "closed-oracle", policy="llm", model="gpt-x"),
    "the open oracle's decisions under other labels, without refs": lambda w: _relabelled(
        w, "open-oracle", policy="bm25", refs=None, pred=lambda r: "x" + r["pred"]),
    "the oracle with an ambiguous message sent elsewhere, without refs": lambda w: _relabelled(
        w, "closed-oracle", policy="cleverbot", via="router", refs=None,
        pred=lambda r: "t1" if (r["session_id"], r["i"]) == ("en-0000", 3) else r["pred"]),
    "a name differing by case": lambda w: (_other_run(w, "closed-bm25") | {"system": "CLOSED-STAY"}, _board_row(w)),
    "a name differing by a trailing space": lambda w: (_other_run(w, "closed-bm25") | {"system": "closed-stay "}, _board_row(w)),
    # facts summaries: re-scored from their result rows
    "facts passed forged": lambda w: b.forged(w["facts"], passed=not w["facts"]["passed"]),
    "facts accuracy raised": lambda w: b.forged(w["facts"], metrics__strategies__facts__answer_accuracy__value=0.99),
    "facts count raised": lambda w: b.forged(w["facts"], metrics__strategies__facts__answer_accuracy__k=4),
    "facts results of other rows": lambda w: b.forged(w["facts"], results__sha256="sha256:" + "2" * 64),
    "facts claimed on other data": lambda w: b.forged(w["facts"], data__path=str(w["data"] / "sessions.jsonl")),
    "facts results gone": lambda w: b.forged(w["facts"], results__path=str(w["root"] / "none.jsonl")),
    "facts gates forged": lambda w: b.forged(
        w["facts"], metrics__gates__beats_summary__passed=not w["facts"]["metrics"]["gates"]["beats_summary"]["passed"]),
    "facts rows with a 5,000-digit count": lambda w: _facts_rows(w, "digits", r'"context_tokens": ?[0-9]+',
                                                                   '"context_tokens": ' + "9" * 5000),
    "facts answers replaced and marked correct": _facts_answers_forged,
    "facts run on dev sessions claimed as a test run": _facts_dev_only,
    "facts without the data it names": lambda w: b.forged(w["facts"], data__path=str(w["root"] / "gone" / "sessions.jsonl")),
    "facts rows of a session not in its data": lambda w: _facts_rows(w, "stranger", '"en-0002"', '"en-0009"'),
    "facts delivered current line said to be a proposal": lambda w: _facts_delivery_forged(
        w, "current-proposal", "current", verdict="proposal"),
    "facts delivered line's value replaced": lambda w: _facts_delivery_forged(
        w, "nonsense", "current", value="99 Nonsense"),
    # mid-reply summaries: re-scored from their result rows
    "mid-reply accuracy raised": lambda w: b.forged(w["mid"], metrics__accuracy__value=0.99),
    "mid-reply count raised": lambda w: b.forged(w["mid"], metrics__accuracy__k=w["mid"]["metrics"]["accuracy"]["k"] + 1),
    "mid-reply interval widened": lambda w: b.forged(w["mid"], metrics__accuracy__ci95=[0.0, 1.0]),
    "mid-reply cases cut": lambda w: b.forged(w["mid"], cases__limit=5),
    "mid-reply rows of a few cases, claimed whole": lambda w: _mid_subset(w),
    "mid-reply rows saying their case expected what they did": _mid_expect_forged,
    "mid-reply claimed on other cases": lambda w: b.forged(w["mid"], provenance__data_sha256="sha256:" + "4" * 64),
    "mid-reply destinations set to what their case expects": lambda w: _mid_wrong_edited(
        w, "dest-expect", destination=lambda r: r["expect"]),
    "mid-reply wrong answers said undecided": lambda w: _mid_wrong_edited(
        w, "unsure", destination="running", via="unsure", classifier="unsure"),
    "mid-reply wrong answers said to be failed calls": lambda w: _mid_wrong_edited(
        w, "failed", destination="running", via="error", classifier=None, answer=None, usage=None, problem="HTTP 500"),
    "mid-reply messages said to be bare acknowledgements": lambda w: _mid_wrong_edited(
        w, "acks", destination="running", via="ack", classifier=None, answer=None, usage=None),
    "routing breakdown forged": lambda w: _score(w, breakdowns__lang__en__correct=w["score"]["breakdowns"]["lang"]["en"]["n"]),
    "mid-reply results of other rows": lambda w: b.forged(w["mid"], results__sha256="sha256:" + "3" * 64),
}


def _submit(w, name: str) -> tuple[list[str], str]:
    made = FORGERIES[name](w)
    doc, board = made if isinstance(made, tuple) else (made, [])
    if isinstance(doc, Path):  # a predictions file, scored on the honest data
        return verdict([str(doc)], board, data=str(w["data"])), str(doc)
    path = w["root"] / "forged" / f"{name.replace(' ', '_').replace(',', '')}.score.json"
    b.write(path, doc if isinstance(doc, str) else json.dumps(doc))
    return verdict([str(path)], board), str(path)


def test_the_honest_runs_are_accepted(world):
    assert verdict([str(world["root"] / "honest.score.json")]) == []
    assert verdict([str(world["preds"]["closed-bm25"])], data=str(world["data"])) == []
    assert verdict([str(world["preds"]["closed-oracle"])], data=str(world["data"])) == []  # the oracle, as itself
    opened = b.score_file(world["data"], world["preds"]["open-bm25"], out=world["root"] / "open.score.json")
    assert opened["cluster"] and verdict([str(world["root"] / "open.score.json")]) == []
    for kind in ("facts", "mid", "mid_model"):
        path = b.write(world["root"] / f"{kind}.honest.score.json", world[kind])
        assert verdict([path]) == [], kind


def test_a_facts_summary_naming_no_data_is_judged_on_data_given_and_refused_without(world):
    doc = json.loads(json.dumps(world["facts"]))
    data = Path(doc.pop("data")["path"]).parent
    del doc["provenance"]["data_sha256"], doc["split"]
    path = b.write(world["root"] / "facts.nodata.score.json", doc)
    lines = verdict([path])
    assert len(lines) == 1 and lines[0].startswith(f"{path}: data.path: missing") and "--data" in lines[0], lines
    assert verdict([path], data=str(data)) == []
    (scored,) = score_given([path], data=str(data))
    assert scored.row["split"] == "all" and scored.row["data_sha256"] == world["facts"]["data"]["sha256"]


def test_a_mid_reply_destination_its_own_answer_does_not_give_is_refused_naming_line_and_field(world):
    # the rows of a classifier run with each wrong destination set to the case's expect: the
    # figures re-stated (accuracy 1.0) agree with those rows, their case copies with the case file
    doc = FORGERIES["mid-reply destinations set to what their case expects"](world)
    assert doc["metrics"]["accuracy"]["value"] == 1.0
    path = b.write(world["root"] / "forged" / "dest-expect.score.json", doc)
    rows = _mid_model_rows(world)
    wrong = [(n, r) for n, r in enumerate(rows, start=1) if r["destination"] != r["expect"]]
    results = doc["results"]["path"]
    assert verdict([path]) == [
        f"{results}:{n}: destination: says {r['expect']!r}, but the rule gives {r['destination']!r} from the "
        f"row's own answer, read as {r['classifier']!r}" for n, r in wrong]
    # a failed call decides nothing: the board refuses it rather than count it as staying
    doc = FORGERIES["mid-reply wrong answers said to be failed calls"](world)
    lines = verdict([b.write(world["root"] / "forged" / "failed.score.json", doc)])
    assert len(lines) == 1 and lines[0].startswith(f"{doc['results']['path']}:{wrong[0][0]}: via: 'error': "), lines


def test_a_facts_delivery_verdict_is_judged_again_on_the_board(world):
    # a delivered line marked a proposal fails proposals_shared; summarised as written, the figures agree
    doc = FORGERIES["facts delivered current line said to be a proposal"](world)
    assert world["facts"]["metrics"]["gates"]["proposals_shared"]["passed"] is True
    assert doc["metrics"]["gates"]["proposals_shared"]["passed"] is False
    results, data = doc["results"]["path"], doc["data"]["path"]
    n, row = next((n, json.loads(line)) for n, line in enumerate(Path(results).read_text(encoding="utf-8").splitlines(), 1)
                  if '"proposal"' in line and '"delivery"' in line)
    lines = verdict([b.write(world["root"] / "forged" / "current-proposal.score.json", doc)])
    assert len(lines) == 1 and lines[0].startswith(
        f"{results}:{n}: verdict: says 'proposal', but the line {row['source']}/{row['key']} {row['value']!r} judged "
        f"against the timeline of session {row['session_id']!r}"), lines
    assert lines[0].endswith(f"in {data} is 'current'"), lines


def test_the_corpus_is_large_enough():
    assert len(FORGERIES) >= 40


@pytest.mark.parametrize("name", list(FORGERIES))
def test_every_forged_row_is_refused_with_one_line(world, name):
    lines, path = _submit(world, name)
    assert lines, f"{name}: accepted"
    assert all("\n" not in line for line in lines), lines
    # each line names the file at fault: the one submitted, or the rows it names when those are bad
    named = lines[0].split(": ", 1)[0].rsplit(":", 1)[0] if not lines[0].startswith(f"{path}: ") else path
    assert Path(named).is_file(), lines
    assert "Traceback" not in lines[0] and "Exceeds the limit" not in lines[0]
