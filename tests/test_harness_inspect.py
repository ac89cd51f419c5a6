"""The inspect_ai task ``interleavebench/routing`` (docs/harness.md#inspect_ai), end to end.

``inspect eval`` runs as a command line (the task is found through the entry point, as a user's
install finds it); against the fake OpenAI-compatible server it must route as
``route --policy llm --dry-run`` does, and the log's figures must be ``score``'s on the predictions
``import inspect`` writes from it.
"""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("inspect_ai")

from interleave_bench.cli import main  # noqa: E402
from interleave_bench.score.routing import POOLED  # noqa: E402

from _harness_util import inspect_eval, read_rows, small_data, small_sessions  # noqa: E402

#: the fields a routing decision is made of (latency and token counts are the transport's)
DECISION = ("session_id", "i", "pred", "mode", "policy", "refs", "via", "error")


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def log_metrics(log: Path) -> dict[str, float | None]:
    from inspect_ai.log import read_eval_log

    got = read_eval_log(str(log), header_only=True)
    (scores,) = got.results.scores
    return {k: (None if math.isnan(m.value) else m.value) for k, m in scores.metrics.items()}


def scored(capsys, data: Path, pred: Path, mode: str) -> dict[str, float | None]:
    code, _, err = cli(capsys, "score", data, pred, "--mode", mode, "--bootstrap", 0)
    assert code == 0, err
    return json.loads(pred.with_suffix(".score.json").read_text())["metrics"]


def import_log(capsys, log: Path, out: Path) -> list[dict]:
    code, printed, err = cli(capsys, "import", "inspect", log, "--out", out)
    assert code == 0, err
    assert printed.startswith(f"wrote {out}")
    return read_rows(out)


def decisions(rows: list[dict]) -> list[tuple]:
    return [tuple(r.get(k) for k in DECISION) for r in rows]


def test_mockllm_run_exits_0_and_its_figures_are_score_s(tmp_path, capsys):
    data = small_data(tmp_path / "data")
    log = inspect_eval(tmp_path, data, "closed", "mockllm/model")
    rows = import_log(capsys, log, tmp_path / "mock.jsonl")
    # the dev split, one row per message, in session then turn order
    sessions = [json.loads(x) for x in (data / "sessions.jsonl").read_text().splitlines()]
    dev = [(s["session_id"], t["i"]) for s in sessions if s["split"] == "dev" for t in s["turns"]]
    assert [(r["session_id"], r["i"]) for r in rows] == dev
    # the mock model's answer is no routing answer: every message is an ERROR after one retry
    assert {r["pred"] for r in rows} == {"ERROR"}
    assert all(r["error"].startswith("invalid answer after one retry") for r in rows)
    figures, score = log_metrics(log), scored(capsys, data, tmp_path / "mock.jsonl", "closed")
    assert figures["accuracy"] == score["accuracy"] == 0.0
    assert figures["weighted_error"] == score["weighted_error"] == 1.0


@pytest.mark.parametrize("mode", ["closed", "open"])
def test_against_the_fake_server_it_routes_as_route_dry_run(tmp_path, capsys, fake_server, mode):
    data = small_data(tmp_path / "data")
    code, _, err = cli(capsys, "route", data, "--mode", mode, "--policy", "llm", "--dry-run", "--split", "dev",
                       "--out", tmp_path / "route.jsonl", "--no-cache")
    assert code == 0, err
    want = read_rows(tmp_path / "route.jsonl")

    key = "sk-test-SECRET-harness-0123456789"
    env = {"FAKE_BASE_URL": fake_server.url, "FAKE_API_KEY": key}
    log = inspect_eval(tmp_path, data, mode, "openai-api/fake/fake-model", env=env)
    got = import_log(capsys, log, tmp_path / "inspect.jsonl")
    with zipfile.ZipFile(log) as z:  # the key reached the server and nothing the run wrote
        assert all(key.encode() not in z.read(name) for name in z.namelist())
    assert key not in (tmp_path / "inspect.jsonl").read_text()
    assert all(entry.headers.get("authorization") == f"Bearer {key}" for entry in fake_server.log)

    assert decisions(got) == decisions(want)
    # every routing request carried the project's prompt and kind header
    assert fake_server.completions == sum(1 for r in want if "usage" in r)
    assert {entry.kind for entry in fake_server.log} == {"route"}
    assert {r["model"] for r in got} == {"openai-api/fake/fake-model"}
    figures, score = log_metrics(log), scored(capsys, data, tmp_path / "inspect.jsonl", mode)
    assert score["accuracy"] > 0.5  # the fake model routes far better than chance: a real comparison
    for m in POOLED:
        assert figures[m.key] == score[m.key], m.key


def test_the_log_names_the_task_data_and_prompt(tmp_path):
    from inspect_ai.log import read_eval_log

    from interleave_bench.io import read_sessions
    from interleave_bench.fingerprints import records_fingerprint
    from interleave_bench.route.prompt import prompt_fingerprint

    data = small_data(tmp_path / "data")
    log = read_eval_log(str(inspect_eval(tmp_path, data, "open", "mockllm/model", "-T", "split=all")), header_only=True)
    assert log.eval.task == "interleavebench/routing"
    assert log.eval.metadata["prompt"] == prompt_fingerprint()
    assert log.eval.metadata["data_fingerprint"] == records_fingerprint(read_sessions(data / "sessions.jsonl"))
    assert log.eval.metadata["split"] == "all" and log.eval.metadata["mode"] == "open"
    assert log.results.total_samples == 4


def test_import_of_what_is_not_a_log_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.eval"
    bad.write_text("not a zip")
    for path in (bad, tmp_path / "missing.eval"):
        code, out, err = cli(capsys, "import", "inspect", path, "--out", tmp_path / "p.jsonl")
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and str(path) in err
    assert not (tmp_path / "p.jsonl").exists()


@pytest.mark.parametrize("arg, message", [
    ("mode=sideways", "error: mode must be one of closed, open, got 'sideways'"),
    ("split=train", "error: split must be one of dev, test, all, got 'train'"),
    ("data=nowhere", "error: nowhere: no such file or folder"),
])
def test_bad_task_arguments_are_one_line_before_any_call(tmp_path, arg, message):
    from _harness_util import INSPECT, run
    import sys

    data = small_data(tmp_path / "data")
    done = run([sys.executable, INSPECT, "eval", "interleavebench/routing", "-T", f"data={data}", "-T", arg,
                "--model", "mockllm/model", "--log-dir", tmp_path / "logs"], tmp_path)
    assert done.returncode != 0
    assert [line for line in done.stdout.splitlines() if line.strip()] == [message]
    assert "Traceback" not in done.stderr and not (tmp_path / "logs").exists()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_the_task_s_metrics_pool_as_score_does_on_any_predictions(data):
    """Whatever the decisions, the inspect metrics over per-session scores equal ``score``'s figures."""
    from inspect_ai.scorer import SampleScore

    from interleave_bench.harness.inspect_task import METRICS, session_score
    from interleave_bench.schema import Session
    from interleave_bench.score.run import score_predictions

    from _route_util import standard_sessions

    mode = data.draw(st.sampled_from(["closed", "open"]))
    sessions = [Session.model_validate(s) for s in standard_sessions() if s["split"] == "dev"]
    labels = st.sampled_from(["A", "B", "C", "D", "t1", "t2", "t3", "x1", "CLARIFY", "ERROR"])
    rows = [{"session_id": s.session_id, "i": t.i, "pred": data.draw(labels), "mode": mode, "policy": "llm",
             "refs": data.draw(st.lists(labels, max_size=1))}
            for s in sessions for t in s.turns]
    by_session = [[r for r in rows if r["session_id"] == s.session_id] for s in sessions]
    samples = [SampleScore(score=session_score(s, got, mode), sample_id=s.session_id)
               for s, got in zip(sessions, by_session)]
    want = score_predictions(sessions, rows, mode=mode, bootstrap=0).result["metrics"]
    for key, make in METRICS.items():
        value = make()(samples)
        assert (None if math.isnan(value) else value) == want[key], key


# --- hostile logs: what inspect's reader would read wrongly is refused where it enters ----------------


def _hostile():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import hostile_inspect

    return hostile_inspect


def _import_changed(tmp_path, capsys, member: str, change) -> tuple[int, str]:
    """``import inspect`` on the valid log with one member changed: ``(exit code, stderr)``."""
    h = _hostile()
    members = {**h.base_log()["members"], member: change(json.loads(h.base_log()["members"][member]))}
    log = h._archive(tmp_path / "run.eval", members)
    code, _, err = cli(capsys, "import", "inspect", log, "--out", tmp_path / "p.jsonl")
    return code, err


@pytest.mark.parametrize("change, words", [
    # Python's JSON reader keeps the last of a repeated key, reads 1e400 as infinity, takes a 65-bit integer
    (lambda t: t.replace('"interleavebench_predictions": ', '"interleavebench_predictions": [], "interleavebench_predictions": ', 1),
     "store.interleavebench_predictions: the key 'interleavebench_predictions' appears twice"),
    (lambda t: t.replace('"i": 2,', '"i": 1e400,', 1), "store.interleavebench_predictions[2].i: the number 1e400 is outside"),
    (lambda t: t.replace('"i": 2,', f'"i": {2 ** 64},', 1), "interleavebench_predictions[2].i: the integer 18446744073709551616"),
    (lambda t: t.replace('"epoch": 1', '"epoch": "1"', 1), "epoch: '1' is not an epoch"),
    (lambda t: t.replace('"id": "en-0001"', '"id": "en-0001\\nerror: forged"', 1), "id: 'en-0001\\nerror: forged' is not a session id"),
    (lambda t: t.replace('"session_id": "en-0001", "i": 3', '"session_id": "en-0002", "i": 3', 1),
     "session_id: 'en-0002', but the sample is session 'en-0001'"),
    (lambda t: t.replace('"i": 3,', '"i": 2,', 1), "i: turn 2 of session 'en-0001' twice"),
    (lambda t: t.replace('"mode": "closed"', '"mode": "open"', 1), "mode: 'open', but the run is in 'closed' mode"),
])
def test_a_hostile_value_in_a_sample_is_one_line_naming_the_field(tmp_path, capsys, change, words):
    h = _hostile()
    code, err = _import_changed(tmp_path, capsys, h.SAMPLE, lambda s: change(json.dumps(s)))
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ") and words in err, err
    assert not (tmp_path / "p.jsonl").exists()


def test_what_inspect_writes_outside_the_rows_is_taken(tmp_path, capsys):
    # NaN is a score inspect writes (a session without strict messages); the import reads no score
    h = _hostile()
    code, err = _import_changed(tmp_path, capsys, h.SAMPLE,
                                lambda s: json.dumps(s)[:-1] + ', "scores": {"routing_scorer": {"value": NaN}}}')
    assert code == 0, err
    assert read_rows(tmp_path / "p.jsonl") == h.ROWS


def test_a_log_of_another_mode_or_model_line_is_refused_in_its_header(tmp_path, capsys):
    h = _hostile()
    for change, words in ((lambda t: t.replace('"mode": "closed"', '"mode": "sideways"', 1), "eval.task_args.mode: 'sideways'"),
                          (lambda t: t.replace('"model": "mockllm/model"', '"model": "m\\nerror: forged"', 1), "eval.model:")):
        code, err = _import_changed(tmp_path, capsys, h.HEADER, lambda d: change(json.dumps(d)))
        assert code == 2 and err.count("\n") == 1 and words in err, err


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["1", "NaN", "1e400", str(2 ** 64), "[1e400]"])),
                min_size=1, max_size=4))
def test_strict_reading_of_some_fields_refuses_what_lies_in_them_only(pairs):
    """``parse_strict(..., only=...)``, as the import reads a sample: a refused value or repeated key
    in the fields named is refused, one elsewhere is inspect's own."""
    from interleave_bench.errors import InputError
    from interleave_bench.strictjson import ANY, parse_strict

    text = '{"s": [{' + ", ".join(f'"{k}": {v}' for k, v in pairs) + "}]}"
    keys = [k for k, _ in pairs]
    bad_in_b = any(k == "b" and v != "1" for k, v in pairs) or keys.count("b") > 1
    try:
        parse_strict("f", None, text, only=[("s", ANY, "b")])
        refused = False
    except InputError as exc:
        refused = True
        assert exc.field.startswith("s[0].b"), exc.field
    assert refused == bad_in_b


@pytest.mark.parametrize("name, content", [
    ("sessions.jsonl", b'{"session_id": "en-0001", "version": "v0", "turns": []}\n'),
    ("manifest.json", b'{\n  "format": "interleave-manifest-v1"\n}\n'),
    ("dev-00000-of-00001.parquet", b"PAR1\x15\x04\x15\x10"),
    ("page.html", b"<!doctype html><html></html>\n"),
])
def test_import_never_writes_over_a_file_that_is_not_predictions(tmp_path, capsys, name, content):
    target = tmp_path / name
    target.write_bytes(content)
    code, out, err = cli(capsys, "import", "inspect", tmp_path / "any.eval", "--out", target)
    assert code == 2 and out == ""
    assert err == (f"error: import inspect: --out {target} is already there and is not a predictions file: "
                   "writing would replace it; choose another path (or remove that file)\n")
    assert target.read_bytes() == content


def test_import_never_writes_over_its_log(tmp_path, capsys):
    log = tmp_path / "run.eval"
    log.write_bytes(b"PK\x03\x04")
    code, _, err = cli(capsys, "import", "inspect", log, "--out", log)
    assert code == 2 and err == (f"error: import inspect: --out {log} is one of the inputs (the inspect log); "
                                 "choose another path\n")
    assert log.read_bytes() == b"PK\x03\x04"


def test_without_a_data_argument_the_task_reads_the_generator_s_folder(tmp_path, monkeypatch):
    """``-T data=`` may be left out, as lm-eval's ``--metadata data=``: data/interleave-v0, where
    ``generate`` writes; where that folder is missing, the one line says so."""
    from inspect_ai._util.error import PrerequisiteError

    from interleave_bench.harness.inspect_registry import routing

    monkeypatch.chdir(tmp_path)
    with pytest.raises(PrerequisiteError) as exc:
        routing(mode="closed")
    assert str(exc.value) == "error: data/interleave-v0: no such file or folder"
    small_data(tmp_path / "data" / "interleave-v0")
    task = routing(mode="closed", split="all")
    assert task.metadata["data"].endswith("interleave-v0") and len(task.dataset) == len(small_sessions())
