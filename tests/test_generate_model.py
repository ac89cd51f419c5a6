"""The model path of generation against the fake OpenAI-compatible server, over real HTTP.

Threads, the writer in chunks of eight, the leak rewrite and the reading all go through the real
``openai`` client; the fake model answers from ``interleave_bench/generate/fake.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interleave_bench.cli import main
from interleave_bench.generate.model_writer import WRITE_CHUNK, check_write_answer
from interleave_bench.generate.plan import FactEvent, PlanRow
from interleave_bench.generate.prompts import SYSTEM, extract_payload
from interleave_bench.generate.reader import READ_CHUNK, RuleReader, check_read_answer
from interleave_bench.generate.text import AnswerError, contains, language_problem, parse_json_object
from interleave_bench.generate.threads import check_threads_answer
from interleave_bench.io import read_manifest, read_sessions
from interleave_bench.llm.server import FakeServer
from interleave_bench.schema import Thread


def run_cli(*args: str) -> int:
    return main(["generate", "--model", "fake-model", *args])


def sessions_of(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]


def requests(server: FakeServer, kind: str) -> list[dict]:
    """The payloads of the completed requests of one kind, with the message count of each."""
    out = []
    for entry in server.log:
        if entry.kind == kind and entry.status == 200:
            msgs = entry.body["messages"]
            p = extract_payload(msgs)
            p["_n_messages"] = len(msgs)
            p["_system"] = msgs[0]["content"]
            out.append(p)
    return out


def test_full_model_path_writes_valid_data(openai_env, tmp_path, capsys):
    server = openai_env["server"]
    out = tmp_path / "out"
    assert run_cli("--sessions", "4", "--out", str(out), "--concurrency", "4") == 0
    printed = capsys.readouterr().err
    assert "model fake-model:" in printed and "done: generate: 4 sessions" in printed
    data = read_sessions(out / "sessions.jsonl")
    assert [s.session_id for s in data] == ["en-0001", "zh-0002", "en-0003", "zh-0004"]
    assert main(["validate", str(out)]) == 0
    m = read_manifest(out / "manifest.json")
    assert m.writer == "model:fake-model" and m.model == "fake-model" and m.counts.sessions == 4
    assert m.usage.calls == server.completions > 0 and m.usage.cached == 0 and m.usage.input_tokens > 0
    raw = sessions_of(out)

    # threads: one request per session, in the session's language
    threads = requests(server, "threads")
    assert sorted(p["session"] for p in threads) == ["en-0001", "en-0003", "zh-0002", "zh-0004"]
    for p in threads:
        assert p["_system"] == SYSTEM[p["language"]] and p["language"] == p["session"][:2]

    # the writer: chunks of at most eight consecutive rows covering every turn once
    rows_by_session: dict[str, list[int]] = defaultdict(list)
    for p in requests(server, "write"):
        idx = [r["i"] for r in p["rows"]]
        assert 1 <= len(idx) <= WRITE_CHUNK and idx == list(range(idx[0], idx[0] + len(idx))) and idx[0] % WRITE_CHUNK == 0
        assert [e["i"] for e in p["earlier"]] == list(range(max(0, idx[0] - 12), idx[0]))
        rows_by_session[p["session"]] += idx
    for s in raw:
        assert sorted(rows_by_session[s["session_id"]]) == list(range(len(s["turns"])))

    # leak rewrites happened, and the final messages no longer carry what was forbidden
    rewrites = requests(server, "rewrite")
    assert rewrites
    by_id = {s["session_id"]: s for s in raw}
    for p in rewrites:
        s = by_id[p["session"]]
        turn = s["turns"][p["i"]]
        assert turn["text"] != p["text"] and turn["style"] in ("pronoun", "implicit")
        assert not any(contains(turn["text"], f, s["lang"]) for f in p["forbidden"])
        assert "leak" not in turn["tags"]

    # the reading: chunks of at most eight, each seeing every earlier message with its label
    for p in requests(server, "read"):
        idx = [m["i"] for m in p["messages"]]
        assert len(idx) <= READ_CHUNK and [e["i"] for e in p["earlier"]] == list(range(idx[0]))
        s = by_id[p["session"]]
        assert [e["label"] for e in p["earlier"]] == [s["turns"][e["i"]]["judge"]["thread"] for e in p["earlier"]]
        assert "gold" not in json.dumps(p) and "action" not in json.dumps(p["messages"])
    # the key never reaches a file the run writes
    for f in out.iterdir():
        assert openai_env["key"] not in f.read_text(encoding="utf-8")


def test_second_run_is_served_from_the_cache(openai_env, tmp_path, capsys):
    server = openai_env["server"]
    assert run_cli("--sessions", "3", "--out", str(tmp_path / "a")) == 0
    assert server.calls > 0
    server.reset_counts()
    assert run_cli("--sessions", "3", "--out", str(tmp_path / "b")) == 0
    assert server.calls == 0
    m = read_manifest(tmp_path / "b" / "manifest.json")
    assert m.usage.calls == 0 and m.usage.cached > 0
    assert "0 paid calls" in capsys.readouterr().err
    assert (tmp_path / "a" / "sessions.jsonl").read_bytes() == (tmp_path / "b" / "sessions.jsonl").read_bytes()


def test_concurrency_does_not_change_the_output(openai_env, tmp_path):
    server = openai_env["server"]
    assert run_cli("--sessions", "3", "--out", str(tmp_path / "one"), "--concurrency", "1", "--cache", str(tmp_path / "c1")) == 0
    assert server.max_in_flight == 1
    server.reset_counts()
    # a barrier, not timing: requests wait until two are in flight at once, which only a client
    # that really sends them concurrently achieves (a sequential one would be held until the gate
    # times out, and fail below)
    server.hold_until(lambda s: s.max_in_flight >= 2)
    assert run_cli("--sessions", "3", "--out", str(tmp_path / "four"), "--concurrency", "3", "--cache", str(tmp_path / "c4")) == 0
    server.open_gate()
    assert server.max_in_flight > 1
    assert (tmp_path / "one" / "sessions.jsonl").read_bytes() == (tmp_path / "four" / "sessions.jsonl").read_bytes()


def test_killed_run_resumes_to_a_byte_identical_file(openai_env, tmp_path, capsys):
    server = openai_env["server"]
    out = tmp_path / "killed"
    work = out / ".sessions.work.jsonl"

    def one_session_written(_server) -> bool:
        return work.exists() and len(work.read_text(encoding="utf-8").splitlines()) >= 2  # header + 1 session

    # a barrier, not timing: once the first session is on disk, the next request is held, so the
    # process is certainly between sessions (waiting on that answer) when it is killed
    server.hold_until(lambda s: not one_session_written(s))
    proc = subprocess.Popen(
        [sys.executable, "-m", "interleave_bench", "generate", "--model", "fake-model", "--sessions", "3",
         "--concurrency", "1", "--out", str(out)],
        env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        assert server.wait_for(lambda s: s.held >= 1), "no request reached the server after the first session"
        assert proc.poll() is None, "the run ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        server.open_gate()
        if proc.poll() is None:
            proc.kill()
    assert not (out / "sessions.jsonl").exists()
    assert run_cli("--sessions", "3", "--concurrency", "1", "--out", str(out)) == 0
    assert "taken from an earlier run" in capsys.readouterr().out
    ref = tmp_path / "ref"
    assert run_cli("--sessions", "3", "--out", str(ref)) == 0  # uninterrupted, from the same answers
    assert (out / "sessions.jsonl").read_bytes() == (ref / "sessions.jsonl").read_bytes()
    assert not work.exists()


def test_garbage_answers_fail_one_session_and_the_rest_completes(openai_env, tmp_path, capsys):
    server = openai_env["server"]
    server.add_fault("garbage", times=2, match='en-0003')
    out = tmp_path / "out"
    assert run_cli("--sessions", "4", "--out", str(out), "--concurrency", "2") == 0
    err = capsys.readouterr().err
    assert "failed: en-0003: threads:" in err and "run the same command again" in err
    m = read_manifest(out / "manifest.json")
    assert m.counts.failed == 1 and m.counts.sessions == 3
    assert m.failed == [{"session_id": "en-0003",
                         "reason": "threads: the answer is not a JSON object (still wrong after one corrective retry)"}]
    assert [s.session_id for s in read_sessions(out / "sessions.jsonl")] == ["en-0001", "zh-0002", "zh-0004"]
    tries = [e for e in server.log if e.kind == "threads" and "en-0003" in json.dumps(e.body)]
    assert [len(e.body["messages"]) for e in tries] == [2, 4]  # the retry carries the correction
    assert "could not be used" in tries[1].body["messages"][3]["content"]
    # the unusable answers were dropped from the cache: a plain rerun asks the model again for the
    # failed session alone and (the fault is used up) fills it in
    server.reset_counts()
    assert run_cli("--sessions", "4", "--out", str(out)) == 0
    assert server.completions > 0
    assert {e.body["messages"][1]["content"].count("en-0003") > 0 for e in server.log} == {True}
    m = read_manifest(out / "manifest.json")
    assert m.counts.failed == 0 and m.counts.sessions == 4 and m.failed == []
    # the sessions that succeeded the first time are still answered from the cache: the whole run
    # again into a new folder makes no paid call and writes the same sessions
    server.reset_counts()
    again = tmp_path / "again"
    assert run_cli("--sessions", "4", "--out", str(again)) == 0
    assert server.calls == 0 and read_manifest(again / "manifest.json").usage.calls == 0
    assert (again / "sessions.jsonl").read_bytes() == (out / "sessions.jsonl").read_bytes()


def test_one_bad_answer_is_fixed_by_the_corrective_retry(openai_env, tmp_path):
    server = openai_env["server"]
    server.add_fault("garbage", times=1, match="zh-0002", request_kind="write")
    out = tmp_path / "out"
    assert run_cli("--sessions", "2", "--out", str(out)) == 0
    assert read_manifest(out / "manifest.json").counts.failed == 0
    tries = [e for e in requests(server, "write") if e["session"] == "zh-0002" and e["rows"][0]["i"] == 0]
    assert [t["_n_messages"] for t in tries] == [2, 4]


def test_a_failed_rewrite_keeps_the_message_and_tags_it_leak(openai_env, tmp_path, capsys):
    server = openai_env["server"]
    server.add_fault("garbage", times=10_000, request_kind="rewrite")
    out = tmp_path / "out"
    assert run_cli("--sessions", "3", "--out", str(out)) == 0
    data = sessions_of(out)
    leaky = [(s, t) for s in data for t in s["turns"] if "leak" in t["tags"]]
    assert leaky and read_manifest(out / "manifest.json").counts.leaks == len(leaky)
    for s, t in leaky:
        title = next(th["title"] for th in s["threads"] if th["id"] == t["gold"]["thread"])
        assert t["style"] in ("pronoun", "implicit") and contains(t["text"], title, s["lang"])
    assert main(["validate", str(out / "sessions.jsonl")]) == 0
    assert "leaks by language" in capsys.readouterr().out


def test_dry_run_uses_the_in_process_fake_and_the_dry_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    assert main(["generate", "--dry-run", "--sessions", "2", "--langs", "en"]) == 0
    path = tmp_path / "data" / "interleave-v0-dry" / "sessions.jsonl"
    assert [s.session_id for s in read_sessions(path)] == ["en-0001", "en-0002"]
    m = read_manifest(path.parent / "manifest.json")
    assert m.writer == "model:fake-model" and m.usage.calls > 0
    assert "model fake-model:" in capsys.readouterr().err


# --- the checks of each model answer -----------------------------------------------------------------


def _rows() -> list[PlanRow]:
    return [
        PlanRow(0, "t1", "new", "explicit", fact=FactEvent("budget", "state", "$1,850")),
        PlanRow(1, "t1", "continue", "implicit"),
    ]


def test_write_answer_checks():
    good = {"messages": [{"i": 0, "text": "Starting the trip plan, budget $1,850."}, {"i": 1, "text": "ok, next?"}]}
    assert check_write_answer(good, _rows(), "en")[1] == "ok, next?"
    cases = [
        ({"messages": good["messages"][:1]}, "expected 2 messages"),
        ({"messages": [good["messages"][0], {"i": 5, "text": "x"}]}, "i must be one of"),
        ({"messages": [{"i": 0, "text": "Trip plan, budget $1,850."}, {"i": 1, "text": "好的，下一步？"}]}, "contains CJK"),
        ({"messages": [{"i": 0, "text": "Trip plan, budget $1,800."}, {"i": 1, "text": "ok"}]}, "must state the budget value '$1,850'"),
        ({"messages": [{"i": 0, "text": "ok $1,850"}, {"i": 1, "text": "ok $1,850"}]}, "identical"),
        ({"text": "hi"}, '"messages" must be a list'),
    ]
    for answer, problem in cases:
        with pytest.raises(AnswerError) as exc:
            check_write_answer(answer, _rows(), "en")
        assert any(problem in p for p in exc.value.problems), (problem, exc.value.problems)
    assert language_problem("好的，下一步做什么？", "zh") is None and language_problem("ok next", "zh")


def test_read_answer_checks():
    ids = ["t1", "t2", "t3"]
    got = check_read_answer({"labels": [{"i": 4, "thread": "t2"}, {"i": 5, "thread": "ambiguous", "candidates": ["t1", "t3"]},
                                        {"i": 6, "thread": "none"}]}, [4, 5, 6], ids)
    assert [g.judge() for g in got] == [{"thread": "t2"}, {"thread": "ambiguous", "candidates": ["t1", "t3"]}, {"thread": "none"}]
    for answer, problem in [
        ({"labels": [{"i": 4, "thread": "t9"}]}, "must be a thread id"),
        ({"labels": [{"i": 4, "thread": "ambiguous", "candidates": ["t1"]}]}, "two or more thread ids"),
        ({"labels": [{"i": 4, "thread": "t1"}]}, "no label for i=5"),
        ({"labels": [{"i": 4, "thread": "t1"}, {"i": 4, "thread": "t1"}]}, "labelled twice"),
    ]:
        with pytest.raises(AnswerError) as exc:
            check_read_answer(answer, [4, 5], ids)
        assert any(problem in p for p in exc.value.problems), (problem, exc.value.problems)


def test_threads_answer_checks():
    payload = {"threads": [{"id": "t1", "domain": "travel", "updates": [True, False]},
                           {"id": "t2", "domain": "travel", "twin_of": "t1", "updates": [False, False]}]}

    def thread(tid, title, facts):
        return {"id": tid, "title": title, "goal": "g", "description": "d", "constraints": ["c"], "facts": facts}

    good = {"persona": "Ana, 30.", "threads": [
        thread("t1", "Lisbon trip", [{"key": "date", "value": "3 May", "update": "9 May"}, {"key": "hotel", "value": "Baixa House", "update": "x"}]),
        thread("t2", "Porto trip", [{"key": "date", "value": "4 June", "update": None}, {"key": "hotel", "value": "Ribeira Inn"}]),
    ]}
    ts = check_threads_answer(good, payload, "en")
    assert ts.threads[1].twinOf == "t1" and ts.threads[0].facts[1].update is None and ts.threads[0].facts[0].update == "9 May"
    bad = json.loads(json.dumps(good))
    bad["threads"][0]["facts"][0]["update"] = None
    bad["threads"][1]["title"] = "lisbon trip"
    bad["threads"][1]["facts"] = bad["threads"][1]["facts"][:1]
    with pytest.raises(AnswerError) as exc:
        check_threads_answer(bad, payload, "en")
    text = " | ".join(exc.value.problems)
    assert "needs an update" in text and "repeats another thread's title" in text and "exactly 2" in text
    clash = json.loads(json.dumps(good))
    clash["threads"][1]["facts"][1]["value"] = "Baixa House annex"
    with pytest.raises(AnswerError, match="contain one another"):
        check_threads_answer(clash, payload, "en")


def test_parse_json_object_tolerates_fences_and_words():
    assert parse_json_object('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_object('Sure! Here it is: {"a": [1, 2]} Hope that helps.') == {"a": [1, 2]}
    with pytest.raises(AnswerError):
        parse_json_object("I am not sure what you mean. Here is a poem instead: roses are red.")


def test_rule_reader_hand_cases():
    a = Thread(id="t1", title="Kyoto family trip", domain="travel", facts=[{"key": "budget", "value": "$2,400"}])
    b = Thread(id="t2", title="Tax return", domain="paperwork", facts=[{"key": "deadline", "value": "14 March"}])
    c = Thread(id="t3", title="Gym restart", domain="fitness", facts=[{"key": "slot", "value": "Monday evenings"}])
    r = RuleReader([a, b, c], "en")
    cases = [
        ("Let's plan the Kyoto family trip. Where to stay?", "t1"),
        ("Thinking about the tax return now.", "t2"),
        ("ok, next step?", "t2"),                                   # continues the current thread
        ("About $2,400: is that enough?", "t1"),                    # a fact value points to its thread
        ("Gym restart: plan it alongside Tax return.", "t3"),       # the reference is not the subject
        ("Sure, and check against 14 March on the other side.", "t3"),
        ("What's the capital of Peru?", "none"),                    # a general question
        ("Back to the other one: what's left?", "ambiguous"),       # two other recent threads
    ]
    for text, want in cases:
        label = r.read(text)
        assert label.thread == want, (text, label)
    assert set(label.candidates) == {"t1", "t2"}
    r2 = RuleReader([a, b], "en")
    r2.observe("t1"), r2.observe("t2")
    assert r2.read("And the other thing, how far along is it?").thread == "t1"  # the only other one
    z = RuleReader([Thread(id="t1", title="京都亲子游", domain="travel", facts=[{"key": "b", "value": "1.5万元"}]),
                    Thread(id="t2", title="护照换发", domain="paperwork", facts=[{"key": "d", "value": "3月14日"}])], "zh")
    assert [z.read(x).thread for x in ("关于京都亲子游：怎么订酒店？", "好的，下一步呢？", "3月14日那个安排下，要带什么？", "鲸鲨是哺乳动物吗？")] == [
        "t1", "t1", "t2", "none"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 70) | st.text(max_size=12) | st.sampled_from(["t1", "t2", "none", "ambiguous"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
        ["i", "text", "thread", "candidates", "labels", "messages", "threads", "id", "title", "facts", "key", "value",
         "update", "persona", "goal", "description", "constraints"]), inner, max_size=5),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=st.dictionaries(st.sampled_from(["labels", "messages", "threads", "persona", "text"]), json_values, max_size=3))
def test_answer_checks_reject_any_malformed_answer_cleanly(obj):
    # Whatever a model answers, a check either accepts it or raises AnswerError (then the retry
    # or the session's failure takes over): never another exception.
    payload = {"threads": [{"id": "t1", "domain": "travel", "updates": [True]}, {"id": "t2", "domain": "code", "updates": [False]}]}
    for check in (
        lambda o: check_write_answer(o, _rows(), "en"),
        lambda o: check_read_answer(o, [0, 1], ["t1", "t2"]),
        lambda o: check_threads_answer(o, payload, "en"),
    ):
        try:
            check(obj)
        except AnswerError:
            pass


@settings(max_examples=100, deadline=None)
@given(payload=st.dictionaries(st.text(min_size=1, max_size=8), json_values, max_size=5))
def test_payload_block_round_trips(payload):
    from interleave_bench.generate.prompts import payload_block

    text = "Instructions.\n\n" + payload_block(payload) + "\n"
    assert extract_payload([{"role": "system", "content": "x"}, {"role": "user", "content": text}]) == payload


def test_a_number_as_the_answer_s_content_is_named_as_such(openai_env, tmp_path, capsys):
    """The hostile repro: ``content: 42`` was told as "content is null or empty"."""
    openai_env["server"].add_fault("number", times=10_000, match="en-0003")
    out = tmp_path / "out"
    code = run_cli("--sessions", "4", "--out", str(out), "--concurrency", "2")
    err = capsys.readouterr().err
    assert "failed: en-0003: threads: unreadable answer: its content is a number, not text" in err, err
    assert "null or empty" not in err and code == 0 and read_manifest(out / "manifest.json").counts.failed == 1
