"""The columnar scorer (score/columnar.py) against the replay: same documents to the last digit,
the same one-line errors, Parquet predictions, and ``--jobs`` results equal to one process's."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pyarrow.json as pj
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interleave_bench.cli import main as cli_main
from interleave_bench.errors import InputError, InputErrors
from interleave_bench.score.columnar import score_run_blocks
from interleave_bench.score.read import read_parquet_rows, read_predictions_fast, read_sessions_fast
from interleave_bench.score.run import score_files, score_predictions, system_name

from _score_util import many_sessions, rows, session, turn, write_jsonl

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
SPECIAL = ("CLARIFY", "ERROR")


def without_provenance(doc: dict) -> str:
    return json.dumps({k: v for k, v in doc.items() if k != "provenance"}, ensure_ascii=False)


def replay(data: Path, pred: Path, split: str, bootstrap: int, thread_labels: bool = False) -> dict:
    rows_, lines = read_predictions_fast(pred)
    return score_predictions(read_sessions_fast(data), rows_, system=system_name(pred), split=split,
                             bootstrap=bootstrap, source=str(pred), lines=lines, thread_labels=thread_labels).result


@st.composite
def closed_runs(draw):
    """Random sessions of both splits and closed-mode rows with every optional field the scorer reads."""
    ss = []
    for k in range(draw(st.integers(1, 4))):
        ids = [f"t{j}" for j in range(1, draw(st.integers(1, 3)) + 1)]
        ts = []
        for i in range(draw(st.integers(1, 10))):
            gold = draw(st.one_of(st.none(), st.sampled_from(ids)))
            ambiguous = gold is not None and draw(st.booleans())
            judge = draw(st.sampled_from(ids + ["none", "ambiguous"])) if ambiguous else None
            refs = draw(st.lists(st.sampled_from(ids), max_size=2, unique=True)) if gold else []
            tags = draw(st.lists(st.sampled_from(["explicit", "cross", "twin"]), max_size=3))
            ts.append(turn(i, gold, ambiguous=ambiguous, judge=judge, refs=refs, tags=tags))
        ss.append(session(f"s{k}", ids, ts, split=draw(st.sampled_from(["dev", "test"])),
                          lang=draw(st.sampled_from(["en", "zh"]))))
    pool = ["t1", "t2", "t3", *SPECIAL]
    all_rows = []
    for s in ss:
        n = len(s["turns"])
        labels = [draw(st.one_of(st.none(), st.sampled_from([t["id"] for t in s["threads"]] + list(SPECIAL))))
                  for _ in range(n)]
        extra = {
            "refs": {i: draw(st.lists(st.sampled_from(pool), max_size=2)) for i in range(n) if draw(st.booleans())},
            "usage": {i: draw(st.sampled_from([{}, {"input": 5}, {"input": 9, "output": 2, "cache_hit": 4}]))
                      for i in range(n) if draw(st.booleans())},
            "elapsed_ms": {i: draw(st.integers(0, 900)) for i in range(n) if draw(st.booleans())},
            "via": {i: draw(st.sampled_from(["llm", "rule"])) for i in range(n) if draw(st.booleans())},
            "burst": {i: draw(st.integers(1, 3)) for i in range(n) if draw(st.booleans())},
            "mixed": {i: draw(st.booleans()) for i in range(n) if draw(st.booleans())},
            "waited": {i: draw(st.booleans()) for i in range(n) if draw(st.booleans())},
        }
        all_rows += rows(s["session_id"], labels, draw(st.sampled_from(["closed", None])), **extra)
    return ss, all_rows


@SETTINGS
@given(closed_runs(), st.sampled_from(["dev", "test", "all"]))
def test_columnar_documents_equal_the_replay(run, split):
    ss, all_rows = run
    with tempfile.TemporaryDirectory() as tmp:
        data = write_jsonl(Path(tmp) / "sessions.jsonl", ss)
        pred = write_jsonl(Path(tmp) / "closed-x.jsonl", all_rows)
        if not all_rows:  # both paths refuse a file without rows
            with pytest.raises(InputError, match="nothing to score"):
                score_files(data, [pred], split=split, bootstrap=40, write=False)
            return
        assert score_run_blocks(data, [pred], split, None)[0][0] is not None  # the columnar path scored it
        in_split = {s["session_id"] for s in ss if split == "all" or s["split"] == split}
        if not in_split & {r["session_id"] for r in all_rows}:  # a file scores no session: refused
            assert replay(data, pred, split, 40)["counts"]["sessions"] == 0
            with pytest.raises(InputError, match=f"no row is for a session of the {split} split .*: nothing to score"):
                score_files(data, [pred], split=split, bootstrap=40, write=False)
            return
        (fast,) = score_files(data, [pred], split=split, bootstrap=40, write=False)
        assert without_provenance(fast.result) == without_provenance(replay(data, pred, split, 40))


@SETTINGS
@given(closed_runs(), st.sampled_from(["dev", "all"]), st.sampled_from(["open", "closed"]),
       st.dictionaries(st.sampled_from(["t1", "t2", "t3"]), st.sampled_from(["x", "y", "t2", "10", "9", "nowhere"])))
def test_any_mode_and_any_label_on_arrays_equal_the_replay(run, split, mode, relabel):
    """Labels renamed (merged, split, numbered, naming no thread) in open or closed mode: the
    arrays' document equals the replay's, cluster metrics and the matching's ties included; a
    closed-mode run none of whose labels names a thread is refused by both in the same line."""
    ss, all_rows = run
    if not all_rows:
        return
    all_rows = [{**r, "pred": relabel.get(r["pred"], r["pred"]), "refs": [relabel.get(x, x) for x in r.get("refs", [])],
                 "mode": mode} for r in all_rows]
    with tempfile.TemporaryDirectory() as tmp:
        data = write_jsonl(Path(tmp) / "sessions.jsonl", ss)
        pred = write_jsonl(Path(tmp) / "run-x.jsonl", all_rows)
        assert score_run_blocks(data, [pred], split, None)[0][0] is not None  # scored on the arrays
        if not {s["session_id"] for s in ss if split == "all" or s["split"] == split} & {r["session_id"] for r in all_rows}:
            return  # a file that scores no session is refused (the test above)
        try:
            expected = replay(data, pred, split, 40, thread_labels=True)
        except InputError as exc:
            assert mode == "closed" and "labels names a thread of its session" in str(exc)
            with pytest.raises(InputError) as refused:
                score_files(data, [pred], split=split, bootstrap=40, write=False)
            assert str(refused.value) == str(exc)
            return
        (fast,) = score_files(data, [pred], split=split, bootstrap=40, write=False)
        assert without_provenance(fast.result) == without_provenance(expected)


def test_many_sessions_over_many_blocks(tmp_path, monkeypatch):
    from interleave_bench.score import datafile, pool

    monkeypatch.setattr(datafile, "BLOCK_BYTES", 4096)  # a few sessions a block: rows wait for theirs
    monkeypatch.setattr(pool, "CHUNK_VALUES", 7)  # latencies over many chunks
    ss = many_sessions(60, turns=14, split_every=3)
    labels = {s["session_id"]: [t["gold"]["thread"] or "CLARIFY" for t in s["turns"]] for s in ss}
    for k, s in enumerate(ss):  # some wrong, some missing
        labels[s["session_id"]][k % 14] = None if k % 2 else s["threads"][0]["id"]
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    pred = write_jsonl(tmp_path / "closed-many.jsonl",
                       [r for s in ss for r in rows(s["session_id"], labels[s["session_id"]], "closed",
                                                     elapsed_ms={i: 100 + i for i in range(14)})])
    assert score_run_blocks(data, [pred], "dev", None)[0][0] is not None
    (fast,) = score_files(data, [pred], split="dev", bootstrap=50, write=False)
    assert without_provenance(fast.result) == without_provenance(replay(data, pred, "dev", 50))


def test_rows_that_name_rare_fields_from_some_block_on_score_as_the_replay(tmp_path, monkeypatch):
    """The lean reader takes the blocks before the first row naming ``burst``, ``mixed``,
    ``waited`` or an unknown field; the full reader the rest, rows of both in one take included."""
    import hashlib

    from interleave_bench.score import columnar, datafile

    monkeypatch.setattr(datafile, "BLOCK_BYTES", 2048)
    ss = many_sessions(40, turns=10, split_every=4)
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    all_rows = []
    for k, s in enumerate(ss):
        labels = [t["gold"]["thread"] or "CLARIFY" for t in s["turns"]]
        labels[k % 10] = s["threads"][0]["id"]
        extra = {}
        if k >= 25:  # later sessions' rows name rare fields, one of them the model too
            extra = {"burst": {i: 1 + i % 3 for i in range(10)}, "mixed": {i: i % 2 == 0 for i in range(0, 10, 3)},
                     "waited": {4: True}}
        made = rows(s["session_id"], labels, "closed", elapsed_ms={i: 50 + i for i in range(10)}, **extra)
        if k == 30:
            made[0]["model"] = "some-model"
        all_rows += made
    pred = write_jsonl(tmp_path / "closed-rare.jsonl", all_rows)
    kinds = [columnar._is_lean(b[0]) for b, _ in columnar.numbered_blocks(pred, hashlib.sha256()) if b]
    assert kinds[0] and not kinds[-1] and kinds == sorted(kinds, reverse=True)  # lean, then full to the end
    assert score_run_blocks(data, [pred], "all", None)[0][0] is not None
    for split in ("dev", "all"):
        (fast,) = score_files(data, [pred], split=split, bootstrap=40, write=False)
        assert without_provenance(fast.result) == without_provenance(replay(data, pred, split, 40))
        assert fast.result["model"] == "some-model"


@pytest.mark.parametrize("case", ["unknown label", "duplicate", "unknown session", "unknown turn", "open", "numbered",
                                  "nulls and unknown fields", "a long number"])
def test_what_the_replay_decides_scores_the_same(tmp_path, case):
    ss = many_sessions(3, turns=6)
    all_rows = [r for s in ss for r in rows(s["session_id"], [t["gold"]["thread"] or "ERROR" for t in s["turns"]])]
    allow = False
    if case == "unknown label":
        all_rows[2]["pred"] = "nowhere"
    elif case == "duplicate":
        all_rows.append(dict(all_rows[0]))
        allow = True
    elif case == "unknown session":
        all_rows.append({"session_id": "elsewhere", "i": 0, "pred": "t1"})
    elif case == "unknown turn":
        all_rows.append({"session_id": ss[0]["session_id"], "i": 99, "pred": "t1"})
    elif case == "open":
        for r in all_rows:
            r["mode"] = "open"
    elif case == "nulls and unknown fields":  # the quote marks cannot tell: the keys are read again
        all_rows[1].update(burst=None, refs=[], mixed=None, note={"a": "b"})
    elif case == "a long number":  # in range, but as long as one that is not: the record type judges it
        all_rows[1]["seed"] = 1234567890123456789
    else:
        all_rows[0]["pred"] = 1  # a number as a label: the record type reads it as text
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    pred = write_jsonl(tmp_path / "run.jsonl", all_rows)
    # all are scored on the arrays, rows left out listed as the index lists them, a number as a
    # label read by the record type (as text) and put in the arrays as the compiled reader holds it
    assert score_run_blocks(data, [pred], "dev", None, allow_duplicates=allow)[0][0] is not None
    (fast,) = score_files(data, [pred], split="dev", bootstrap=40, write=False, allow_duplicates=allow)
    rows_, lines = read_predictions_fast(pred)
    old = score_predictions(read_sessions_fast(data), rows_, system="run", split="dev", bootstrap=40,
                            source=str(pred), lines=lines, allow_duplicates=allow).result
    assert without_provenance(fast.result) == without_provenance(old)


@pytest.mark.parametrize("allow", [True, False])
def test_rows_left_out_are_listed_on_the_arrays_with_their_lines_past_blank_lines(tmp_path, monkeypatch, allow):
    from interleave_bench.score import datafile

    monkeypatch.setattr(datafile, "BLOCK_BYTES", 512)  # many blocks, some with blank lines in them
    ss = many_sessions(12, turns=5)
    all_rows = [r for s in ss for r in rows(s["session_id"], [t["gold"]["thread"] or "ERROR" for t in s["turns"]])]
    all_rows.insert(7, {"session_id": ss[1]["session_id"], "i": 9, "pred": "t1"})  # an unknown turn
    all_rows.insert(8, {"session_id": ss[1]["session_id"], "i": 9, "pred": "t2"})  # and again
    all_rows.insert(20, {"session_id": "elsewhere", "i": 0, "pred": "t1"})
    all_rows.insert(33, dict(all_rows[30], pred="t2"))  # a second row for a turn, then a third
    all_rows.append(dict(all_rows[30], pred="t1"))
    pred = tmp_path / "run.jsonl"
    lines = [json.dumps(r) for r in all_rows]
    for at in (3, 11, 12, 26, 40):
        lines.insert(at, "  " if at % 2 else "")
    pred.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    (run,), _ = score_run_blocks(data, [pred], "dev", None, allow_duplicates=allow)
    assert run is not None  # scored on the arrays
    rows_, numbers = read_predictions_fast(pred)
    try:
        old = score_predictions(read_sessions_fast(data), rows_, system="run", split="dev", bootstrap=40,
                                source=str(pred), lines=numbers, allow_duplicates=allow).result
    except InputErrors as exc:
        assert not allow
        with pytest.raises(InputErrors) as got:
            score_files(data, [pred], split="dev", bootstrap=40, write=False)
        assert [str(e) for e in got.value.errors] == [str(e) for e in exc.errors]
        return
    assert allow
    (fast,) = score_files(data, [pred], split="dev", bootstrap=40, write=False, allow_duplicates=True)
    assert len(old["not_scored"]) >= 5, old["not_scored"]
    assert without_provenance(fast.result) == without_provenance(old)


BAD_ROWS = [
    ('{"session_id": "s0", "i": "1", "pred": "t1"}', "i"),
    ('{"session_id": "s0", "i": -1, "pred": "t1"}', "i"),
    ('{"session_id": "s0", "i": 1, "pred": null}', "pred"),
    ('{"session_id": "s0", "i": 1, "pred": "t1", "mode": "half"}', "mode"),
    ('{"session_id": "s0", "i": 1, "pred": "t1", "burst": 0}', "burst"),
    ('{"session_id": "s0", "i": 1, "pred": "t1", "mixed": "yes"}', "mixed"),
    ('{"session_id": "s0", "i": 1, "pred": "t1", "usage": {"input": -3}}', "usage.input"),
    ('{"session_id": "s0", "i": 1, "pred": "t1", "refs": [null]}', "refs[0]"),
    ('{"session_id": "s0", "i": 1, "pred": "t1"', None),
]


@pytest.mark.parametrize("line, field", BAD_ROWS)
def test_a_bad_row_is_the_same_one_line_error(tmp_path, capsys, line, field):
    ss = many_sessions(2, turns=4)
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    pred = tmp_path / "run.jsonl"
    good = [json.dumps(r) for r in rows("s0", ["t1", "t1", "t2", "t2"])]
    pred.write_text("\n".join([good[0], line, *good[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as got:
        read_predictions_fast(pred)
    assert cli_main(["score", str(data), str(pred)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {got.value}"]
    assert f"{pred}:2:" in str(got.value) and (field is None or f": {field}:" in str(got.value))


BAD_SESSIONS = [
    (lambda s: s["turns"][1]["gold"].update(thread="t9"), "turns[1].gold.thread"),
    (lambda s: s["turns"][1].update(i=5), "turns[1].i"),
    (lambda s: s["turns"][1].update(ambiguous=1), "turns[1].ambiguous"),
    (lambda s: s["turns"][1]["judge"].update(thread="t9"), "turns[1].judge.thread"),
    (lambda s: s["threads"].append(dict(s["threads"][0])), "threads[3].id"),
    (lambda s: s.update(split="train"), "split"),
    (lambda s: s["turns"][0]["gold"].update(refs=["t7"]), "turns[0].gold.refs[0]"),
]


@pytest.mark.parametrize("spoil, field", BAD_SESSIONS)
def test_a_bad_session_is_the_same_one_line_error(tmp_path, capsys, spoil, field):
    ss = many_sessions(3, turns=5)
    spoil(ss[1])
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    pred = write_jsonl(tmp_path / "run.jsonl", rows("s0", ["t1"] * 5))
    with pytest.raises(InputError) as got:
        read_sessions_fast(data)
    assert cli_main(["score", str(data), str(pred)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {got.value}"]
    assert f"{data}:2: {field}:" in str(got.value)


def test_parquet_predictions_score_as_their_jsonl(tmp_path):
    ss = many_sessions(4, turns=8)
    all_rows = [r for s in ss for r in rows(s["session_id"], [t["gold"]["thread"] or "CLARIFY" for t in s["turns"]],
                                             usage={0: {"input": 3, "output": 1}}, elapsed_ms={1: 40})]
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    jsonl = write_jsonl(tmp_path / "a" / "closed-p.jsonl", all_rows)
    parquet = tmp_path / "b" / "closed-p.parquet"
    parquet.parent.mkdir()

    def as_parquet(items: list[dict]) -> None:  # every field a column, as DuckDB or Spark writes it
        pq.write_table(pj.read_json(write_jsonl(tmp_path / "rows.jsonl", items)), parquet)

    as_parquet(all_rows)
    a, b = score_files(data, [jsonl, tmp_path / "b"], split="dev", bootstrap=40)
    assert b.system == "closed-p" and b.score_file == tmp_path / "b" / "closed-p.score.json"
    assert without_provenance(a.result) == without_provenance(b.result)
    # an unknown label is scored as any label; a bad row is named as the strict reader names it
    all_rows[3]["pred"] = "nowhere"
    as_parquet(all_rows)
    (c,) = score_files(data, [parquet], split="dev", bootstrap=0, write=False)
    assert c.result["counts"]["rows"] == len(all_rows)
    all_rows[4]["i"] = -2
    as_parquet(all_rows)
    with pytest.raises(InputError, match=r"closed-p\.parquet:5: i:"):
        score_files(data, [parquet], split="dev", bootstrap=0, write=False)


@pytest.mark.parametrize("case", ["rows left out", "another order", "other column types", "a usage of its own"])
def test_parquet_the_column_checks_cannot_vouch_for_scores_on_the_arrays_as_the_replay(tmp_path, monkeypatch, case):
    """Parquet rows left out (unknown sessions and turns, second rows), in another order than the
    data's, in other column types the record type reads, or with a usage naming fields of its own:
    each scored on the arrays, block by block, to the replay's document."""
    import pyarrow as pa

    from interleave_bench.score import datafile, parquet as parquet_module

    monkeypatch.setattr(datafile, "BLOCK_BYTES", 900)  # a few sessions a block
    monkeypatch.setattr(parquet_module, "BATCH_ROWS", 7)
    ss = many_sessions(9, turns=6)
    all_rows = [r for s in ss for r in rows(s["session_id"], [t["gold"]["thread"] or "CLARIFY" for t in s["turns"]],
                                             usage={0: {"input": 3, "output": 1}}, elapsed_ms={1: 40})]
    allow = False
    if case == "rows left out":
        all_rows[4:4] = [{"session_id": "elsewhere", "i": 0, "pred": "t1"}, {**all_rows[3], "pred": "t2"},
                         {"session_id": ss[0]["session_id"], "i": 99, "pred": "t1"}]
        allow = True
    elif case == "another order":
        all_rows.reverse()
    elif case == "a usage of its own":
        all_rows[2]["usage"] = {"reasoning": 7}  # a model call of no tokens the record type knows
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    table = pj.read_json(write_jsonl(tmp_path / "rows.jsonl", all_rows))
    if case == "other column types":
        table = table.set_column(table.column_names.index("i"), "i", table.column("i").cast(pa.int32()))
    pred = tmp_path / "closed-p.parquet"
    pq.write_table(table, pred)
    (run,), _ = score_run_blocks(data, [pred], "dev", None, allow_duplicates=allow)
    assert run is not None  # scored on the arrays
    (got,) = score_files(data, [pred], split="dev", bootstrap=40, write=False, allow_duplicates=allow)
    rows_, lines = read_parquet_rows(pred)
    old = score_predictions(read_sessions_fast(data), rows_, system="closed-p", split="dev", bootstrap=40,
                            source=str(pred), lines=lines, allow_duplicates=allow).result
    assert without_provenance(got.result) == without_provenance(old)


def test_a_data_file_of_records_parted_by_lone_carriage_returns_is_one_line_refused_as_the_strict_reader_refuses_it(
        tmp_path):
    ss = many_sessions(3, turns=4)
    data = tmp_path / "sessions.jsonl"
    data.write_bytes(b"\r".join(json.dumps(s).encode("utf-8") for s in ss) + b"\r")  # lines as old Macs broke them
    pred = write_jsonl(tmp_path / "run.jsonl", [r for s in ss for r in rows(s["session_id"], ["t1"] * 4)])
    with pytest.raises(InputError) as fast:
        score_files(data, [pred], split="dev", bootstrap=40, write=False)
    with pytest.raises(InputError) as strict:
        read_sessions_fast(data)
    assert fast.value.format() == strict.value.format()
    assert strict.value.format().startswith(f"{data}:1: invalid JSON: Extra data")


def test_jobs_two_writes_the_same_files_as_one(tmp_path, capsys):
    ss = many_sessions(6, turns=9)
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    labels = {
        "closed-gold": lambda s: [t["gold"]["thread"] or "ERROR" for t in s["turns"]],
        "closed-first": lambda s: [s["threads"][0]["id"]] * len(s["turns"]),
        "open-single": lambda s: ["A"] * len(s["turns"]),
    }
    for name, f in labels.items():
        write_jsonl(tmp_path / "p" / f"{name}.jsonl",
                    [r for s in ss for r in rows(s["session_id"], f(s), name.split("-")[0])])
    written = {}
    for jobs in ("1", "2"):
        assert cli_main(["score", str(data), str(tmp_path / "p"), "--bootstrap", "40", "--jobs", jobs]) == 0
        capsys.readouterr()
        docs = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted((tmp_path / "p").glob("*.score.json"))}
        for d in docs.values():
            d["provenance"].pop("created")
        written[jobs] = json.dumps(docs, ensure_ascii=False, indent=2)
    assert len(json.loads(written["1"])) == 3
    assert written["1"] == written["2"]


def _one_line_error(capsys, data: Path, pred: Path, strict_read) -> str:
    """The strict reader's error for a file and the command's stderr for it, checked equal."""
    with pytest.raises(InputError) as got:
        strict_read()
    assert cli_main(["score", str(data), str(pred), "--bootstrap", "0"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {got.value}"]
    return str(got.value)


@pytest.mark.parametrize("usage, refused", [
    ({"input": None, "output": 3}, True),  # an explicit null: the record type refuses it
    ({"output": 3, "cache_hit": None}, True),
    ({"output": 3}, False),  # left out: 0
    ({"input": 1}, False),  # a null elsewhere in the row (via) is no null inside usage
])
def test_a_null_inside_usage_is_refused_as_the_strict_reader_refuses_it(tmp_path, capsys, usage, refused):
    ss = many_sessions(2, turns=4)
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    all_rows = [r for s in ss for r in rows(s["session_id"], [t["gold"]["thread"] for t in s["turns"]], "closed")]
    all_rows[5]["usage"] = usage
    all_rows[5]["via"] = None
    pred = write_jsonl(tmp_path / "run.jsonl", all_rows)
    if not refused:  # (a null is for the strict reader to judge: it takes this one)
        assert cli_main(["score", str(data), str(pred), "--bootstrap", "0"]) == 0
        return
    assert score_run_blocks(data, [pred], "dev", None)[0][0] is None  # the columns alone cannot tell
    error = _one_line_error(capsys, data, pred, lambda: read_predictions_fast(pred))
    assert f"{pred}:6: usage." in error


def test_a_one_off_without_a_gold_thread_key_is_refused_as_the_strict_reader_refuses_it(tmp_path, capsys):
    ss = many_sessions(2, turns=8)
    assert ss[1]["turns"][6]["gold"]["thread"] is None  # a one-off: null is its gold thread
    del ss[1]["turns"][6]["gold"]["thread"]  # but the key is required
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    pred = write_jsonl(tmp_path / "run.jsonl", rows(ss[0]["session_id"], ["t1"] * 8, "closed"))
    with pytest.raises(InputError, match=r":2: turns\[6\]\.gold\.thread:"):  # the strict reader's error
        score_run_blocks(data, [pred], "dev", None)
    error = _one_line_error(capsys, data, pred, lambda: read_sessions_fast(data))
    assert f"{data}:2: turns[6].gold.thread:" in error


def test_the_data_fingerprint_is_the_records_fingerprint_in_any_session_order(tmp_path):
    from interleave_bench.fingerprints import records_fingerprint
    from interleave_bench.score.datafile import data_fingerprint

    ids = ["s-10", "s-9", 'q"x', "q", "q\\", "q\\x", "é", "q x"]  # escapes and prefixes sort as whole lines do
    ss = many_sessions(len(ids), turns=3)
    for s, sid in zip(ss, ids):
        s["session_id"] = sid
    ordered = write_jsonl(tmp_path / "a.jsonl", sorted(ss, key=lambda s: s["session_id"]))
    shuffled = write_jsonl(tmp_path / "b.jsonl", ss)
    want = records_fingerprint(read_sessions_fast(ordered))
    assert data_fingerprint(ordered) == data_fingerprint(shuffled) == want
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="nothing to score"):
        data_fingerprint(tmp_path / "empty.jsonl")


def test_a_score_document_is_what_its_record_type_dumps(tmp_path):
    from interleave_bench.documents import ScoreDocument

    ss = many_sessions(5, turns=9)
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    pred = write_jsonl(tmp_path / "run.jsonl", [r for s in ss for r in rows(
        s["session_id"], [t["gold"]["thread"] or "CLARIFY" for t in s["turns"]], "closed",
        elapsed_ms={i: 10 * i + 0.5 for i in range(9)})])
    (doc,) = score_files(data, [pred], bootstrap=40, write=False)
    assert len(doc.result["per_session"]) == 5
    assert json.dumps(ScoreDocument.model_validate(doc.result).dump()) == json.dumps(doc.result)


@SETTINGS
@given(st.lists(st.one_of(st.lists(st.integers(0, 60), max_size=9).map(lambda v: np.array(v, dtype=np.int64)),
                          st.lists(st.floats(0, 1e4, allow_subnormal=False), max_size=9).map(np.array)),
                max_size=5))
def test_chunked_latency_percentiles_are_those_of_the_joined_latencies(chunks):
    from interleave_bench.score.routing import chunked_latency_percentiles, latency_percentiles

    joined = np.concatenate(chunks) if chunks else np.zeros(0)
    got, want = chunked_latency_percentiles(chunks), latency_percentiles(joined)
    assert json.dumps(got) == json.dumps(want)


@pytest.mark.parametrize("case", ["open", "open labels numbered per session", "closed unknown label", "rows out of order",
                                  "unknown session", "duplicate"])
def test_open_mode_on_arrays_a_block_at_a_time_scores_as_the_whole_file_replay(tmp_path, monkeypatch, case):
    """Open-mode runs (and closed ones with labels that name no thread) are scored on the arrays a
    block of sessions at a time, over many blocks, to the replay's document; rows left out are
    listed as the whole-file index lists them, with the same document or the same error."""
    from interleave_bench.score import datafile

    monkeypatch.setattr(datafile, "BLOCK_BYTES", 4096)  # a few sessions a block
    ss = many_sessions(40, turns=9, split_every=4)
    mode = "closed" if case == "closed unknown label" else "open"
    all_rows = []
    for k, s in enumerate(ss):
        labels = [t["gold"]["thread"] or "CLARIFY" for t in s["turns"]]
        if mode == "open":
            labels = [f"topic-{x}" if x != "CLARIFY" else x for x in labels]
            if case == "open labels numbered per session":
                labels = [str(len(x)) if x != "CLARIFY" else x for x in labels]
            labels[k % 9] = labels[(k + 3) % 9]  # some merged, some split
        elif k % 5 == 0:
            labels[2] = "nowhere"
        all_rows += rows(s["session_id"], labels, mode, elapsed_ms={i: 50 + 7 * i for i in range(9)})
    if case == "rows out of order":
        all_rows.append(all_rows.pop(0))
    elif case == "unknown session":
        all_rows.insert(30, {"session_id": "elsewhere", "i": 0, "pred": "t1"})
    elif case == "duplicate":
        all_rows.insert(40, dict(all_rows[12]))
    data = write_jsonl(tmp_path / "sessions.jsonl", ss)
    pred = write_jsonl(tmp_path / "run.jsonl", all_rows)
    (run,), _ = score_run_blocks(data, [pred], "dev", None)  # rows in another order: a second pass, read whole
    assert run.scored_mode == mode and len(run.session_ids) == 30
    rows_, lines = read_predictions_fast(pred)
    try:
        old = score_predictions(read_sessions_fast(data), rows_, system="run", split="dev", bootstrap=40,
                                source=str(pred), lines=lines).result
    except InputErrors as exc:  # duplicates: the same error either way
        with pytest.raises(InputErrors) as got:
            score_files(data, [pred], split="dev", bootstrap=40, write=False)
        assert [str(e) for e in got.value.errors] == [str(e) for e in exc.errors]
        return
    (new,) = score_files(data, [pred], split="dev", bootstrap=40, write=False)
    assert without_provenance(new.result) == without_provenance(old)
    if mode == "open":
        assert new.result["cluster"]["counts"]["messages"] == 30 * 9
