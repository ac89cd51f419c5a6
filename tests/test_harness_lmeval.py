"""The lm-evaluation-harness task ``interleavebench_closed`` (docs/harness.md#lm-evaluation-harness).

``lm_eval`` runs as a command line with the task folder ``interleave-bench lm-eval-tasks`` prints.
Against the fake OpenAI-compatible server its figures must be the project's for the same answers:
here computed by hand from the fake model's answer to each document's request, read by the model
router's validation (accuracy: the gold thread; weighted error: 0 right, 3 for another declared
thread, which pollutes it, 1 for anything else).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("lm_eval")

from interleave_bench.cli import main  # noqa: E402
from interleave_bench.harness import closed  # noqa: E402
from interleave_bench.io import read_sessions  # noqa: E402
from interleave_bench.llm import fake  # noqa: E402
from interleave_bench.route.answer import AnswerError, parse_one  # noqa: E402

from _harness_util import run, small_data, small_sessions  # noqa: E402


def tasks_dir(capsys) -> str:
    assert main(["lm-eval-tasks"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return out.strip()


def lm_eval(cwd: Path, include: str, *argv: str) -> dict:
    """``lm_eval ... --tasks interleavebench_closed``; returns the task's results."""
    out = cwd / "out"
    done = run([sys.executable, "-m", "lm_eval", "--tasks", "interleavebench_closed", "--include_path", include,
                "--output_path", out, *argv], cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    (found,) = out.rglob("results_*.json")
    return json.loads(found.read_text())["results"]["interleavebench_closed"]


def test_dummy_model_with_limit_exits_0(tmp_path, capsys):
    small_data(tmp_path / "data" / "interleave-v0")  # the default data folder, relative to where it runs
    got = lm_eval(tmp_path, tasks_dir(capsys), "--model", "dummy", "--limit", "20")
    # the dummy model's answer is no JSON: every document is an unusable answer, which costs 1
    assert got["accuracy,none"] == 0.0
    assert got["weighted_error,none"] == 1.0


def hand_figures(sessions) -> tuple[float, float, int]:
    """Accuracy and weighted error of the fake model's answers, computed from the rules alone."""
    right = cost = n = 0
    for s in sessions:
        declared = set(s.thread_ids())
        for step in closed.replay(s):
            if not closed.is_strict(s, step.k):
                continue
            system, user = closed.build_messages(step.view, each=False)
            answer = fake.answer("route", [system, user], {})
            try:
                d = parse_one(answer, step.view)
                label = d.label if d.kind == "topic" else d.kind
            except AnswerError:
                label = "ERROR"
            gold = s.turns[step.k].gold.thread
            n += 1
            right += label == gold
            cost += 0 if label == gold else 3 if label in declared else 1
    return right / n, cost / n, n


def test_against_the_fake_server_the_figures_are_the_project_s(tmp_path, capsys, fake_server):
    data = small_data(tmp_path / "data")
    model_args = {"model": "fake-model", "base_url": f"{fake_server.url}/chat/completions", "num_concurrent": 1,
                  "tokenized_requests": False, "header": {"X-Interleave-Kind": "route"}}
    got = lm_eval(tmp_path, tasks_dir(capsys), "--model", "local-chat-completions", "--apply_chat_template",
                  "--model_args", json.dumps(model_args), "--metadata", json.dumps({"data": str(data)}))
    accuracy, weighted, n = hand_figures([s for s in read_sessions(data / "sessions.jsonl") if s.split == "dev"])
    assert fake_server.completions == n  # one request per strict message of the dev split
    assert 0.5 < accuracy < 1.0  # the fake model is good, not perfect: both kinds of answer are judged
    assert got["accuracy,none"] == pytest.approx(accuracy)
    assert got["weighted_error,none"] == pytest.approx(weighted)
    # each request is the model router's own: the system prompt in the data's language, then the payload
    first = fake_server.log[0].body["messages"]
    assert [m["role"] for m in first] == ["system", "user"]
    assert json.loads(first[1]["content"])["mode"] == "closed"


def test_documents_are_the_strict_messages_on_the_gold_history():
    sessions = [s for s in read_sessions_of(small_sessions())]
    docs = closed.documents(sessions)
    strict = [(s.session_id, t.i) for s in sessions for t in s.turns if t.gold.thread is not None and not t.ambiguous]
    assert [(d["session_id"], d["i"]) for d in docs] == strict
    # the history shown is gold: the message before a thread message sits in its gold thread's topic
    en = [d for d in docs if d["session_id"] == "en-0001"]
    payload = json.loads(en[2]["user"])
    assert payload["current"] == "A" and [c["topic"] for c in payload["conversation"]] == ["A", "A"]
    # a one-off of the history went to a side topic of its own, never into a thread
    after_oneoff = json.loads(next(d for d in en if d["i"] == 7)["user"])
    assert after_oneoff["conversation"][-1]["topic"] == "x1"


def test_judge_gives_the_scorer_s_outcomes():
    (s,) = read_sessions_of(small_sessions()[:1])
    doc = closed.documents([s])[3]  # turn 3 opens B (Lisbon) while A (kitchen) is the current topic
    assert doc["thread"] == "B"
    assert closed.judge(doc, '{"topic": "B"}') == closed.Judged("B", "correct", True, 0)
    assert closed.judge(doc, '{"topic": "A"}').cost == 3  # into another thread: pollution
    assert closed.judge(doc, '{"topic": "new", "title": "trip"}') == closed.Judged("x1", "spurious_new", False, 1)
    assert closed.judge(doc, '{"topic": "Z"}').pred == "ERROR"
    assert closed.judge(doc, '{"topic": "B", "clarify": true}').outcome == "clarify"


def read_sessions_of(rows):
    from interleave_bench.schema import Session

    return [Session.model_validate(r) for r in rows]


@pytest.mark.parametrize("metadata, line", [
    ({"data": "nowhere"}, "error: nowhere: no such file or folder"),
    ({"data": "DATA", "split": "validation"}, "error: split must be one of dev, test, all, got 'validation'"),
])
def test_bad_data_is_the_project_s_one_line_and_exit_2(tmp_path, capsys, metadata, line):
    data = small_data(tmp_path / "data")
    meta = {k: (str(data) if v == "DATA" else v) for k, v in metadata.items()}
    done = run([sys.executable, "-m", "lm_eval", "--tasks", "interleavebench_closed", "--include_path",
                tasks_dir(capsys), "--model", "dummy", "--metadata", json.dumps(meta)], tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.rstrip().splitlines()[-1] == line
    assert "Traceback" not in done.stderr
