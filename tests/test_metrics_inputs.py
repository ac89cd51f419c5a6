"""The evaluate modules take inputs as users have them: ``load_dataset`` rows of an exported folder,
``add``/``add_batch`` with the plural names, usage and latency for the cost metrics, and
``evaluate.combine``. Each number is checked against ``interleave-bench score --json``.

The modules run in one child process whose caches point into ``tmp_path`` (offline, loopback only),
as in test_score_evaluate.py.
"""

from __future__ import annotations

import json

import pytest

import _hub_util as u
import interleave_bench

CASES = interleave_bench.data_path("mid_reply/cases.json")

#: what the child does: every module call of this file, results printed as one JSON line
CHILD = r"""
import json, os, sys
import datasets, evaluate, interleave_bench

folder, preds_path, model_path, cases_path = sys.argv[1:5]
os.chdir(os.path.dirname(folder))
ds = datasets.load_dataset(os.path.basename(folder), "v0")   # the exported folder, as a user loads it
dev = ds["dev"]
out = {"action_type": type(dev[0]["turns"][0]["gold"]["action"]).__name__}

def by_session(path, field, ids):
    rows = {}
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        rows.setdefault(r["session_id"], {})[r["i"]] = r.get(field)
    return [[rows[sid][i] for i in sorted(rows[sid])] for sid in ids]

ids = list(dev["session_id"])
labels = by_session(preds_path, "pred", ids)
routing = evaluate.load(interleave_bench.metric_path("interleave_routing"))
bcubed = evaluate.load(interleave_bench.metric_path("interleave_bcubed"))
mid_reply = evaluate.load(interleave_bench.metric_path("interleave_mid_reply"))
kw = dict(threads=dev["threads"], session_ids=dev["session_id"], langs=dev["lang"])
out["compute"] = routing.compute(predictions=labels, references=dev["turns"], **kw)

for p, r in zip(labels, dev["turns"]):      # one session at a time, the plural names
    routing.add(predictions=p, references=r)
out["add"] = routing.compute(**kw)
routing.add_batch(predictions=labels[:2], references=dev["turns"][:2])
routing.add_batch(predictions=labels[2:], references=dev["turns"][2:])
out["add_batch"] = routing.compute(**kw)

both = evaluate.combine([routing, bcubed])
out["combine"] = both.compute(predictions=labels, references=dev["turns"], mode="closed", **kw)
for p, r in zip(labels, dev["turns"]):
    both.add(predictions=p, references=r)
out["combine_add"] = both.compute(**kw)
try:
    evaluate.combine([routing, mid_reply]).compute(predictions=["running"], references=["new"])
    out["mismatch"] = None
except ValueError as exc:
    out["mismatch"] = str(exc)

# open mode with topics numbered, as systems elsewhere number them, and a label of no kind
numbered = [[sorted(set(p), key=p.index).index(x) for x in p] for p in labels]
out["numbered"] = routing.compute(predictions=numbered, references=dev["turns"], mode="open", **kw)
out["named"] = routing.compute(predictions=[[str(x) for x in p] for p in numbered], references=dev["turns"], mode="open", **kw)
try:
    routing.compute(predictions=[p[:1] + [True] + p[2:] for p in labels], references=dev["turns"], **kw)
    out["none_label"] = None
except ValueError as exc:
    out["none_label"] = str(exc)

# a model run from the fake server: its usage and latency
m_ids = sorted({json.loads(l)["session_id"] for l in open(model_path, encoding="utf-8")})
m_sessions = {s["session_id"]: s for s in ds["dev"]} | {s["session_id"]: s for s in ds["test"]}
m_sessions = [m_sessions[sid] for sid in m_ids]
out["model"] = routing.compute(
    predictions=by_session(model_path, "pred", m_ids), references=[s["turns"] for s in m_sessions],
    threads=[s["threads"] for s in m_sessions], session_ids=m_ids, langs=[s["lang"] for s in m_sessions],
    predicted_refs=by_session(model_path, "refs", m_ids),
    usage=by_session(model_path, "usage", m_ids), elapsed_ms=by_session(model_path, "elapsed_ms", m_ids),
    via=by_session(model_path, "via", m_ids))
# the same, lined up by the package's helper: a predictions file and the split, or every split's sessions
out["helper"] = routing.compute(**interleave_bench.routing_inputs(preds_path, dev))
out["helper_model"] = routing.compute(**interleave_bench.routing_inputs(model_path, list(ds["dev"]) + list(ds["test"])))
try:
    other = [{**json.loads(l), "session_id": "other"} for l in open(preds_path, encoding="utf-8")][:1]
    interleave_bench.routing_inputs(other, dev)   # rows in memory, of no session of the split
    out["helper_none"] = None
except ValueError as exc:
    out["helper_none"] = str(exc)
cases = datasets.load_dataset(os.path.basename(folder), "mid_reply")["test"]
raw = json.load(open(cases_path, encoding="utf-8"))["cases"]
by_id = {c["id"]: c for c in raw}
guess = ["running" if k % 3 else "new" for k in range(len(cases))]
out["mid_reply_how_type"] = type(cases[0]["how"]).__name__
out["mid_reply_rows"] = mid_reply.compute(predictions=guess, references=cases["expect"], running=cases["running"],
                                          lang=cases["lang"], how=cases["how"], tags=cases["tags"])
plain = [by_id[i] for i in cases["id"]]
out["mid_reply_json"] = mid_reply.compute(predictions=guess, references=[c["expect"] for c in plain],
                                          running=[c["running"]["topicId"] for c in plain],
                                          lang=[c["lang"] for c in plain], how=[c["how"] for c in plain],
                                          tags=[c["tags"] for c in plain])
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def child(tmp_path_factory):
    """The folder, the CLI's documents and what the modules returned in the child."""
    tmp = tmp_path_factory.mktemp("inputs")
    mp = pytest.MonkeyPatch()
    mp.setenv("INTERLEAVE_CACHE", str(tmp / "cache"))
    mp.setenv("INTERLEAVE_NO_PROGRESS", "1")
    try:
        from interleave_bench.cli import main

        data = tmp / "interleave-v0-offline"
        assert main(["generate", "--sessions", "10", "--offline", "--out", str(data)]) == 0
        assert main(["baselines", str(data), "--mode", "closed"]) == 0
        assert main(["export", "--v0", str(data), "--mid-reply", CASES, "--out", str(tmp / "interleavebench")]) == 0
        assert main(["route", str(data), "--mode", "closed", "--policy", "hybrid", "--dry-run"]) == 0
    finally:
        mp.undo()
    bm25 = data / "predictions" / "closed-bm25.jsonl"
    model = data / "predictions-dry" / "closed-hybrid-fake-model.jsonl"
    env = {k: str(tmp / k.lower()) for k in ("HF_MODULES_CACHE", "HF_EVALUATE_CACHE", "HF_DATASETS_CACHE", "HF_HOME")}
    env.update(HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    import subprocess
    import sys
    import os

    full = {**os.environ, **env}
    proc = subprocess.run([sys.executable, "-c", u.LOOPBACK_GUARD + CHILD, str(tmp / "interleavebench"), str(bm25),
                           str(model), CASES], env=full, capture_output=True, text=True, timeout=600, cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"data": data, "bm25": bm25, "model": model, "out": json.loads(proc.stdout.strip().splitlines()[-1])}


def cli_json(*args) -> dict:
    import contextlib
    import io

    from interleave_bench.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main([str(a) for a in args]) == 0
    return json.loads(buf.getvalue())


def routing_metrics(doc: dict) -> dict:
    return {k: v for k, v in doc["metrics"].items() if k != "cost_usd_per_message"}


def test_load_dataset_rows_score_as_the_cli_scores_the_jsonl(child, tmp_path):
    out = child["out"]
    assert out["action_type"] == "int"  # ClassLabel indices, as load_dataset gives them
    doc = cli_json("score", child["data"], child["bm25"], "--json", "--bootstrap", "0", "--out", tmp_path / "s.json")
    expected = routing_metrics(doc)
    got = {k: v for k, v in out["compute"].items() if k in expected}
    assert got == expected
    assert expected["accuracy"] is not None and 0 < expected["accuracy"] < 1


def test_routing_inputs_line_a_predictions_file_up_with_the_split(child, tmp_path):
    """``interleave_bench.routing_inputs`` turns a predictions file into the module's inputs: the same
    numbers as the CLI, cost metrics included, and one clear line when no row belongs to the split."""
    out = child["out"]
    assert out["helper"] == out["compute"]
    doc = cli_json("score", child["data"], child["model"], "--json", "--bootstrap", "0", "--split", "all",
                   "--out", tmp_path / "m.json")
    expected = routing_metrics(doc)
    assert {k: out["helper_model"][k] for k in expected} == expected
    assert expected["input_tokens_per_message"] > 0
    assert out["helper_none"].startswith("predictions: none of the ") and "\n" not in out["helper_none"]


def test_add_and_add_batch_with_the_plural_names_give_the_same_numbers(child):
    out = child["out"]
    assert out["add"] == out["compute"] and out["add_batch"] == out["compute"]


def test_combine_routing_and_bcubed_agree_on_bcubed(child):
    out = child["out"]
    for key in ("combine", "combine_add"):
        merged = out[key]
        assert {k: merged[k] for k in out["compute"]} == out["compute"]
        assert (merged["precision"], merged["recall"], merged["f1"]) == (
            out["compute"]["bcubed_precision"], out["compute"]["bcubed_recall"], out["compute"]["bcubed_f1"])


def test_combine_with_inputs_that_do_not_agree_is_one_clear_error(child):
    message = child["out"]["mismatch"]
    assert message is not None and "\n" not in message
    assert message.startswith("interleave_routing: predictions must hold one list per session")


def test_numbered_topics_score_as_their_text_and_a_label_of_no_kind_is_one_clear_error(child):
    out = child["out"]
    assert out["numbered"] == out["named"] and out["numbered"]["accuracy"] is not None
    assert out["none_label"] == ("predictions[0][1]: a label is text, a number (read as its text) or None (no row), "
                                 "got bool True")


def test_cost_metrics_take_usage_and_latency_equal_to_the_cli_on_a_model_run(child, tmp_path):
    doc = cli_json("score", child["data"], child["model"], "--json", "--bootstrap", "0", "--split", "all",
                   "--out", tmp_path / "m.json")
    expected = routing_metrics(doc)
    got = child["out"]["model"]
    for key in ("input_tokens_per_message", "output_tokens_per_message", "cached_tokens_per_message",
                "model_calls_share", "latency_p50_ms", "latency_p90_ms"):
        assert got[key] == expected[key], key
    assert expected["input_tokens_per_message"] > 0 and expected["model_calls_share"] > 0
    assert expected["latency_p50_ms"] is not None
    assert {k: got[k] for k in expected} == expected


def test_mid_reply_takes_load_dataset_columns_as_the_case_file_gives_them(child):
    out = child["out"]
    assert out["mid_reply_how_type"] == "int"
    assert out["mid_reply_rows"] == out["mid_reply_json"]
    assert set(out["mid_reply_rows"]["by_how"]) == {"interjection", "queued"}


def test_the_packaged_example_is_valid_data(capsys):
    from interleave_bench.cli import main

    assert main(["validate", interleave_bench.data_path("examples/v0") + "/sessions.jsonl"]) == 0
    with pytest.raises(ValueError, match="no 'examples/none'"):
        interleave_bench.data_path("examples/none")
    with pytest.raises(ValueError):
        interleave_bench.data_path("../metrics")


def test_routing_inputs_refuse_what_cannot_be_lined_up(child):
    sessions = [json.loads(line) for line in (child["data"] / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [json.loads(line) for line in child["bm25"].read_text(encoding="utf-8").splitlines()]
    got = interleave_bench.routing_inputs(rows[:3], sessions)  # one session, part-way: the rest of it is ERROR
    assert got["session_ids"] == [rows[0]["session_id"]] and got["mode"] == "closed"
    assert got["predictions"][0][:3] == [r["pred"] for r in rows[:3]] and set(got["predictions"][0][3:]) == {None}
    assert "usage" not in got and "elapsed_ms" not in got  # no row has them
    for bad, message in (
        (rows[:2] + rows[:1], f"predictions: two rows for session {rows[0]['session_id']!r} message {rows[0]['i']}"),
        ([rows[0], {**rows[1], "mode": "open"}], "predictions: rows of two modes (closed, open): score one run at a time"),
        ([{**rows[0], "pred": ""}], "predictions"),
    ):
        with pytest.raises(ValueError) as exc:
            interleave_bench.routing_inputs(bad, sessions)
        assert str(exc.value).startswith(message) and "\n" not in str(exc.value), str(exc.value)
    with pytest.raises(ValueError, match=r"^sessions\[0\]: no 'turns'$"):
        interleave_bench.routing_inputs(rows, [{"session_id": "x"}])
    with pytest.raises(ValueError, match="no such file"):
        interleave_bench.routing_inputs(child["data"] / "missing.jsonl", sessions)
