"""End-to-end routing runs: coverage, the model router against the fake model, faults, resume, no gold leak."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.cli import main
from interleave_bench.io import read_predictions
from interleave_bench.route.resume import FILE_COUNTS, file_counts
from interleave_bench.route.runner import POLICIES, RouteOptions, make_router, route_session, run_route
from interleave_bench.schema import CLARIFY, ERROR, STYLES, Session

from _route_util import EN_THREADS, EN_TURNS, random_session, read_rows, session_dict, standard_sessions, write_data

MODEL_FREE = [p for p in POLICIES if p not in ("llm", "hybrid")]


def expected_keys(data: Path, split: str = "all") -> list[tuple[str, int]]:
    out = []
    for line in (data / "sessions.jsonl").read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        if split == "all" or s["split"] == split:
            out += [(s["session_id"], t["i"]) for t in s["turns"]]
    return out


def check_rows(path: Path, data: Path, mode: str, policy: str, split: str = "all") -> list[dict]:
    """Every message of the split exactly once, in session then turn order, valid rows."""
    rows = read_rows(path)
    assert [(r["session_id"], r["i"]) for r in rows] == expected_keys(data, split)
    read_predictions(path)  # schema-valid
    assert {(r["mode"], r["policy"]) for r in rows} == {(mode, policy)}
    record = path.with_suffix(".run.json")
    if record.exists():  # what the run counted as it wrote the rows is what the file holds
        counted = json.loads(record.read_text(encoding="utf-8"))["counts"]
        assert {k: counted[k] for k in FILE_COUNTS} == file_counts(path)
    return rows


@pytest.fixture
def data(tmp_path) -> Path:
    return write_data(tmp_path / "data")


@pytest.fixture
def small(tmp_path) -> Path:
    """Two short sessions (English and Chinese): enough for the model runs, quick with the fake model."""
    return write_data(tmp_path / "small", standard_sessions()[:2])


def cli(*args: str) -> int:
    return main([str(a) for a in args])


# --- coverage ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["closed", "open"])
@pytest.mark.parametrize("policy", MODEL_FREE)
def test_every_model_free_policy_covers_every_message_once(data, mode, policy, capsys):
    assert cli("route", data, "--mode", mode, "--policy", policy) == 0
    out, err = capsys.readouterr()
    path = data / "predictions" / f"{mode}-{policy}.jsonl"
    assert f"wrote {path}" in out and "done: route" in err
    rows = check_rows(path, data, mode, policy)
    assert all(r["via"] == ("local" if policy == "local" else "baseline") for r in rows)
    if mode == "open":
        assert all(r["pred"].startswith("t") for r in rows)
        assert rows[0]["pred"] == "t1"  # the system's own numbering, whatever the thread ids are
    else:
        assert all(r["pred"] in {"A", "B", "C"} or r["pred"].startswith("x") for r in rows)


def test_system_labels_ignore_thread_ids_in_open_mode_and_avoid_them_in_closed_mode():
    rename = {"A": "t1", "B": "x1", "C": "t3"}
    threads = [(rename[t[0]],) + t[1:] for t in EN_THREADS]
    turns = [(text, rename.get(th), a, st_, [rename[r] for r in refs]) for text, th, a, st_, refs in EN_TURNS]
    s = Session.model_validate(session_dict("ids", threads, turns))
    rows, _ = asyncio.run(route_session(s, make_router("always_new"), RouteOptions(mode="open", policy="always_new")))
    assert [r["pred"] for r in rows[:3]] == ["t1", "t2", "t3"]
    rows, _ = asyncio.run(route_session(s, make_router("always_new"), RouteOptions(mode="closed", policy="always_new")))
    assert [r["pred"] for r in rows[:3]] == ["x2", "x3", "x4"]  # x1 is a thread here


@pytest.mark.parametrize("split", ["dev", "test"])
def test_split_selects_sessions(data, split):
    assert cli("route", data, "--mode", "closed", "--policy", "bm25", "--split", split) == 0
    check_rows(data / "predictions" / "closed-bm25.jsonl", data, "closed", "bm25", split)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["closed", "open"]), st.sampled_from(MODEL_FREE),
       st.sampled_from(["none", "all", "adaptive"]), st.sampled_from(["one", "each"]))
def test_property_runs_cover_each_message_once_with_sane_labels(seed, mode, policy, merge, decide):
    if merge == "none":
        decide = "one"
    s = Session.model_validate(random_session(random.Random(seed), f"r{seed}", n_turns=25))
    opts = RouteOptions(mode=mode, policy=policy, merge=merge, decide=decide, same=0.7, cross=0.3, seed=seed)
    rows, counts = asyncio.run(route_session(s, make_router(policy), opts))
    assert [r["i"] for r in rows] == list(range(len(s.turns)))
    assert counts.messages == len(rows) and counts.errors == 0
    threads = set(s.thread_ids())
    for r in rows:
        if mode == "closed":
            assert r["pred"] in threads or r["pred"].startswith("x")
        else:
            assert r["pred"].startswith("t")
        if merge != "none":
            assert 1 <= r["burst"] <= 4 and isinstance(r["mixed"], bool) and isinstance(r["waited"], bool)
        else:
            assert "burst" not in r
    if policy == "oracle" and (merge == "none" or decide == "each"):
        gold = [t.gold.thread for t in s.turns]
        # the oracle's labels partition the thread messages exactly as gold does; one-offs alone
        label_of: dict = {}
        for g, r in zip(gold, rows):
            if g is None:
                assert sum(x["pred"] == r["pred"] for x in rows) == 1
            else:
                assert label_of.setdefault(g, r["pred"]) == r["pred"]
        assert len(set(label_of.values())) == len(label_of)


def test_baselines_command_writes_the_seven_files(data, capsys):
    assert cli("baselines", data) == 0
    out, err = capsys.readouterr()
    expected = ["closed-oracle", "closed-stay", "closed-bm25", "open-oracle", "open-single", "open-always_new", "open-bm25"]
    for name in expected:
        path = data / "predictions" / f"{name}.jsonl"
        assert f"wrote {path}" in out
        mode, policy = name.split("-", 1)
        check_rows(path, data, mode, policy)
        record = json.loads((data / "predictions" / f"{name}.run.json").read_text())
        assert record["complete"] and record["counts"]["messages"] == len(expected_keys(data))
    assert "done: baselines: 7 files" in err
    # baselines start over: a second run after the data changed rewrites every file
    write_data(data, standard_sessions()[:1])
    assert cli("baselines", data, "--split", "dev") == 0
    check_rows(data / "predictions" / "open-bm25.jsonl", data, "open", "bm25", "dev")


# --- the model router against the fake model ---------------------------------------------------------


@pytest.mark.parametrize("mode", ["closed", "open"])
@pytest.mark.parametrize("policy", ["llm", "hybrid"])
@pytest.mark.parametrize("merge", ["none", "all", "adaptive"])
def test_model_policies_dry_run(small, tmp_path, monkeypatch, mode, policy, merge, capsys):
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    args = ["route", small, "--mode", mode, "--policy", policy, "--dry-run", "--merge", merge]
    if merge != "none":
        args += ["--same", "0.9", "--cross", "0.5"]  # many bursts in two short sessions
    assert cli(*args) == 0
    out, err = capsys.readouterr()
    suffix = "" if merge == "none" else f"-merge{merge}"
    path = small / "predictions-dry" / f"{mode}-{policy}{suffix}-fake-model.jsonl"
    assert f"wrote {path}" in out and not (small / "predictions").exists()  # never beside real runs
    rows = check_rows(path, small, mode, policy)
    assert "model fake-model:" in err and "paid call" in err
    assert not any(r["pred"] in (ERROR, CLARIFY) for r in rows)
    vias = Counter(r["via"] for r in rows)
    assert set(vias) <= {"llm", "rule-ack", "rule-title"}
    if policy == "hybrid":
        if merge == "none":
            assert vias["rule-ack"] + vias["rule-title"] > 0
    else:
        assert set(vias) == {"llm"}
    for r in rows:
        if r["via"] == "llm":
            assert isinstance(r["elapsed_ms"], int) and r["refs"] is not None
        else:
            assert "usage" not in r and "elapsed_ms" not in r
    calls = sum("usage" in r for r in rows)
    if merge == "none":
        assert calls == vias["llm"]
    else:
        assert all(r["burst"] >= 1 for r in rows)
        assert any(r["burst"] > 1 for r in rows)
        # one request per merged burst: its rows share the decision, the first alone carries usage
        k = 0
        while k < len(rows):
            unit = rows[k:k + rows[k]["burst"]]
            assert len({(r["session_id"], r["pred"], r["via"]) for r in unit}) == 1
            assert [("usage" in r) for r in unit] == [unit[0]["via"] == "llm"] + [False] * (len(unit) - 1)
            k += len(unit)
        if merge == "all":
            assert all(r["waited"] for r in rows)
        else:
            assert any(r["waited"] for r in rows) and not all(r["waited"] for r in rows)


def test_dry_run_with_out_writes_where_told(small, tmp_path, monkeypatch):
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "mine.jsonl"
    assert cli("route", small, "--mode", "closed", "--policy", "llm", "--dry-run", "--out", out) == 0
    check_rows(out, small, "closed", "llm")
    assert not (small / "predictions").exists() and not (small / "predictions-dry").exists()


def test_fake_model_routes_better_than_chance(data, tmp_path, monkeypatch):
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    assert cli("route", data, "--mode", "closed", "--policy", "llm", "--dry-run") == 0
    gold = {}
    for line in (data / "sessions.jsonl").read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        n = len(s["threads"])
        gold.update({(s["session_id"], t["i"]): (t["gold"]["thread"], n) for t in s["turns"]})
    rows = read_rows(data / "predictions-dry" / "closed-llm-fake-model.jsonl")
    thread_rows = [r for r in rows if gold[(r["session_id"], r["i"])][0] is not None]
    right = sum(r["pred"] == gold[(r["session_id"], r["i"])][0] for r in thread_rows)
    chance = sum(1 / gold[(r["session_id"], r["i"])][1] for r in thread_rows)
    assert right > 1.5 * chance
    assert right < len(thread_rows)  # imperfect: it is a keyword matcher


def test_decide_each_in_one_call_per_burst(small, tmp_path, monkeypatch):
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    assert cli("route", small, "--mode", "open", "--policy", "llm", "--dry-run", "--merge", "all",
               "--decide", "each", "--same", "1", "--cross", "1") == 0
    rows = check_rows(small / "predictions-dry" / "open-llm-mergeall-each-fake-model.jsonl", small, "open", "llm")
    assert all(r["via"] == "llm" for r in rows)
    # same=cross=1: bursts of four; each burst pays one call (usage on its first row only)
    assert [r["burst"] for r in rows[:4]] == [4, 4, 4, 4]
    assert ["usage" in r for r in rows[:4]] == [True, False, False, False]
    assert len({r["elapsed_ms"] for r in rows[:4]}) == 1
    # the burst's messages may go to different topics
    assert len({r["pred"] for r in rows}) > 1


# --- faults: invalid answers, failed calls, fallback -------------------------------------------------


def one_session(tmp_path: Path) -> Path:
    return write_data(tmp_path / "one", [session_dict("en-0001", EN_THREADS, EN_TURNS)])


def test_invalid_answer_is_retried_once_then_error(openai_env, tmp_path, capsys):
    srv = openai_env["server"]
    data = one_session(tmp_path)
    # turn 6 is the first request mentioning ounces; it and its retry get nonsense
    srv.add_fault("garbage", times=2, match="How many grams are in an ounce")
    assert cli("route", data, "--mode", "open", "--policy", "llm", "--model", "m1") == 0
    rows = check_rows(data / "predictions" / "open-llm-m1.jsonl", data, "open", "llm")
    bad = rows[6]
    assert bad["pred"] == ERROR and bad["via"] == "llm"
    assert "invalid answer after one retry" in bad["error"] and "not valid JSON" in bad["error"]
    # both calls are charged to the row
    assert bad["usage"]["output"] == 2 * 17 and bad["usage"]["input"] > 0
    assert [r["pred"] for r in rows].count(ERROR) == 1
    retry = [log for log in srv.log if "How many grams are in an ounce" in json.dumps(log.body)][1]
    msgs = retry.body["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[2]["content"].startswith("I am not sure") and "could not be used: the answer is not valid JSON" in msgs[3]["content"]
    out, err = capsys.readouterr()
    assert "1 error," in err and openai_env["key"] not in out + err
    assert openai_env["key"] not in (data / "predictions" / "open-llm-m1.run.json").read_text()


def new_messages(log) -> list[str]:
    """The texts of the messages a routing request asks about (its payload's ``new``)."""
    return [m["text"] for m in json.loads(log.body["messages"][-1]["content"])["new"]]


def test_invalid_answers_are_not_replayed_from_the_cache(openai_env, tmp_path):
    srv = openai_env["server"]
    data = one_session(tmp_path)
    srv.add_fault("garbage", times=2, match="How many grams are in an ounce")
    args = ["route", data, "--mode", "open", "--policy", "llm", "--model", "m1"]
    assert cli(*args) == 0
    path = data / "predictions" / "open-llm-m1.jsonl"
    assert read_rows(path)[6]["pred"] == ERROR
    # the ERROR's two answers were dropped from the cache: a fresh run (no fault now) asks the model
    # again for that message, and only from there on: the six messages before it come from the cache
    srv.reset_counts()
    assert cli(*args, "--fresh") == 0
    assert srv.completions > 0
    assert any("How many grams are in an ounce" in t for t in new_messages(srv.log[0]))
    rows = read_rows(path)
    assert ERROR not in [r["pred"] for r in rows] and rows[6]["via"] == "llm"
    assert json.loads((data / "predictions" / "open-llm-m1.run.json").read_text())["usage"]["cached"] == 6


def test_a_burst_answer_that_fell_back_is_asked_again(openai_env, tmp_path):
    srv = openai_env["server"]
    data = one_session(tmp_path)
    srv.add_fault("garbage", times=1, request_kind="route-each")
    args = ["route", data, "--mode", "closed", "--policy", "llm", "--model", "m1", "--merge", "all",
            "--decide", "each", "--same", "1", "--cross", "1"]
    assert cli(*args) == 0
    other = tmp_path / "again.jsonl"
    srv.reset_counts()
    assert cli(*args, "--out", other) == 0  # a new output, no fault: the burst call is made again
    assert [log.kind for log in srv.log] == ["route-each"]  # and only it: the rest replays from the cache
    rows = read_rows(other)
    assert not any("fallback" in r for r in rows) and {r["via"] for r in rows} == {"llm"}


def test_invalid_answer_then_valid_retry(openai_env, tmp_path):
    srv = openai_env["server"]
    data = one_session(tmp_path)
    srv.add_fault("garbage", times=1, match="How many grams are in an ounce")
    assert cli("route", data, "--mode", "closed", "--policy", "llm", "--model", "m1") == 0
    rows = read_rows(data / "predictions" / "closed-llm-m1.jsonl")
    assert ERROR not in [r["pred"] for r in rows]
    assert rows[6]["via"] == "llm" and rows[6]["usage"]["output"] > 17  # garbage answer + valid retry


def test_failed_call_is_an_error_row_and_the_run_goes_on(openai_env, tmp_path):
    srv = openai_env["server"]
    data = one_session(tmp_path)
    srv.add_fault("500", times=50, match="Which day trips from Lisbon")
    assert cli("route", data, "--mode", "closed", "--policy", "llm", "--model", "m1", "--max-retries", "0", "--no-cache") == 0
    rows = check_rows(data / "predictions" / "closed-llm-m1.jsonl", data, "closed", "llm")
    bad = rows[5]
    assert bad["pred"] == ERROR and bad["via"] == "error" and "HTTP 500" in bad["error"]
    assert "usage" not in bad
    assert rows[4]["pred"] != ERROR  # earlier messages are fine


def test_a_run_whose_calls_all_fail_stops_early(openai_env, tmp_path, capsys):
    srv = openai_env["server"]
    data = one_session(tmp_path)
    srv.add_fault("500", times=1000)
    assert cli("route", data, "--mode", "closed", "--policy", "llm", "--model", "m1", "--max-retries", "0") == 2
    err = capsys.readouterr().err
    assert "the first 8 model calls all failed (last: HTTP 500" in err and len(err.strip().splitlines()) == 1
    assert srv.calls == 8
    path = data / "predictions" / "closed-llm-m1.jsonl"
    assert not path.exists() and not path.with_suffix(".run.json").exists()  # no file of no row left behind


def test_failing_decide_each_answer_falls_back_to_one_by_one(openai_env, tmp_path):
    srv = openai_env["server"]
    data = one_session(tmp_path)
    srv.add_fault("garbage", times=1, request_kind="route-each")
    assert cli("route", data, "--mode", "closed", "--policy", "llm", "--model", "m1", "--merge", "all",
               "--decide", "each", "--same", "1", "--cross", "1") == 0
    rows = check_rows(data / "predictions" / "closed-llm-mergeall-each-m1.jsonl", data, "closed", "llm")
    first = rows[:4]  # the first burst: its one call failed validation
    assert all(r["via"] == "fallback-llm" and "invalid answer" in r["fallback"] for r in first)
    assert all("usage" in r for r in first)  # each routed alone: a call each
    assert all(r["via"] == "llm" and "fallback" not in r for r in rows[4:])
    kinds = [log.kind for log in srv.log]
    assert kinds[:5] == ["route-each", "route", "route", "route", "route"]
    assert ERROR not in [r["pred"] for r in rows]


# --- no router sees gold -----------------------------------------------------------------------------


def scramble(session: dict, rng: random.Random) -> dict:
    """Nonsense (still schema-valid) in every field a router must not see: gold, judge, ambiguous,
    tags, style, fact, reply."""
    s = json.loads(json.dumps(session))
    ids = [t["id"] for t in s["threads"]]
    for t in s["turns"]:
        if rng.random() < 0.2:
            t["gold"] = {"thread": None, "action": "oneoff", "refs": []}
        else:
            t["gold"] = {"thread": rng.choice(ids), "action": rng.choice(["new", "continue", "switch", "return"]),
                         "refs": rng.sample(ids, rng.randint(0, len(ids)))}
        t["judge"] = {"thread": rng.choice(ids + ["none", "ambiguous"]), "candidates": rng.sample(ids, 1)}
        t["ambiguous"] = rng.random() < 0.5
        t["tags"] = rng.sample(["twin", "cross", "long_gap", "leak", "zzz"], 2)
        # any style, but the schema ties style "oneoff" to action "oneoff" (and only to it)
        t["style"] = "oneoff" if t["gold"]["action"] == "oneoff" else rng.choice([x for x in STYLES if x != "oneoff"])
        t["fact"] = {"key": "nonsense", "kind": "nonsense"}
        t["reply"] = "nonsense reply naming " + rng.choice(ids)
    return s


def test_no_router_sees_gold(tmp_path, monkeypatch):
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    sessions = standard_sessions()[:2]  # English and Chinese
    rng = random.Random(5)
    real = write_data(tmp_path / "real", sessions)
    fake = write_data(tmp_path / "fake", [scramble(s, rng) for s in sessions])
    for mode in ("closed", "open"):
        for policy in POLICIES:
            extra = ["--dry-run"] if policy in ("llm", "hybrid") else []
            name = f"{mode}-{policy}" + ("-fake-model" if extra else "") + ".jsonl"
            outs = []
            for d in (real, fake):
                assert cli("route", d, "--mode", mode, "--policy", policy, *extra) == 0
                outs.append((d / ("predictions-dry" if extra else "predictions") / name).read_bytes())
            if policy == "oracle":
                assert outs[0] != outs[1]  # the oracle alone reads gold: the test can tell
            else:
                assert outs[0] == outs[1], f"{mode}-{policy} changed with the gold labels"


def test_no_router_sees_gold_in_bursts_either(tmp_path, monkeypatch):
    # with --same equal to --cross the arrivals do not depend on gold, so neither may any decision;
    # only `mixed` (the simulation's own gold-based flag) may differ
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    sessions = standard_sessions()[:2]
    real = write_data(tmp_path / "real", sessions)
    fake = write_data(tmp_path / "fake", [scramble(s, random.Random(9)) for s in sessions])
    burst = ["--merge", "all", "--same", "0.6", "--cross", "0.6"]
    for mode, policy, extra in [("open", "bm25", []), ("closed", "stay", ["--decide", "each"]),
                                ("open", "llm", ["--dry-run", "--decide", "each"]), ("closed", "hybrid", ["--dry-run"])]:
        outs = []
        for d in (real, fake):
            assert cli("route", d, "--mode", mode, "--policy", policy, *burst, *extra) == 0
            folder = "predictions-dry" if "--dry-run" in extra else "predictions"
            path = next((d / folder).glob(f"{mode}-{policy}-mergeall*.jsonl"))
            outs.append([{k: v for k, v in r.items() if k != "mixed"} for r in read_rows(path)])
        assert outs[0] == outs[1], f"{mode}-{policy} changed with the gold labels"
        assert any(r["burst"] > 1 for r in outs[0])


def test_prompt_is_in_the_data_language(openai_env, tmp_path):
    srv = openai_env["server"]
    data = write_data(tmp_path / "langs", standard_sessions()[:2])  # en-0001 and zh-0001
    assert cli("route", data, "--mode", "open", "--policy", "llm", "--model", "m1") == 0
    by_session = {}
    for log in srv.log:
        payload = json.loads(log.body["messages"][1]["content"])
        lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for m in payload["new"] for ch in m["text"]) else "en"
        by_session.setdefault(lang, set()).add(log.body["messages"][0]["content"].split("\n")[0])
        assert log.kind == "route"
    assert len(by_session["zh"]) == 1 and "话题" in next(iter(by_session["zh"]))
    assert len(by_session["en"]) == 1 and next(iter(by_session["en"])).startswith("You route the messages")


# --- resume ------------------------------------------------------------------------------------------


class Crash(Exception):
    pass


class CrashAfter:
    """Wraps a router and raises at the start of session ``n + 1``: an interrupted run."""

    def __init__(self, inner, n: int):
        self.inner, self.n, self.seen = inner, n, 0
        self.policy, self.uses_model = inner.policy, inner.uses_model

    async def route(self, view):
        if not view.history:
            self.seen += 1
            if self.seen > self.n:
                raise Crash
        return await self.inner.route(view)


def test_interrupted_run_resumes_byte_identical(data, tmp_path):
    opts = RouteOptions(mode="open", policy="bm25", merge="adaptive")
    whole = run_route(data, opts, out=tmp_path / "whole.jsonl").path.read_bytes()
    out = tmp_path / "cut.jsonl"
    with pytest.raises(Crash):
        run_route(data, opts, out=out, router=CrashAfter(make_router("bm25"), 2))
    first = out.read_bytes()
    assert first and whole.startswith(first) and first != whole
    # a crash mid-write: a partial session and half a line after the finished ones
    lines = whole.decode().splitlines(keepends=True)
    n_done = len(first.decode().splitlines())
    out.write_bytes(first + "".join(lines[n_done:n_done + 2]).encode() + lines[n_done + 2][:15].encode())
    result = run_route(data, opts, out=out)
    assert result.resumed == 2 and result.sessions == 3
    assert out.read_bytes() == whole


def test_model_run_resume_is_byte_identical_and_free(small, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    args = ["route", small, "--mode", "open", "--policy", "hybrid", "--dry-run", "--merge", "all", "--decide", "each"]
    assert cli(*args) == 0
    path = small / "predictions-dry" / "open-hybrid-mergeall-each-fake-model.jsonl"
    whole = path.read_bytes()
    lines = whole.decode().splitlines(keepends=True)
    path.write_bytes("".join(lines[:5]).encode() + lines[5][:10].encode())  # cut inside the first session
    capsys.readouterr()
    assert cli(*args) == 0
    assert path.read_bytes() == whole
    assert "0 paid calls" in capsys.readouterr().err  # every answer came from the cache
    # nothing left to do: the file stays as it is
    assert cli(*args) == 0 and path.read_bytes() == whole


def test_resume_refuses_another_runs_file(data, capsys):
    assert cli("route", data, "--mode", "open", "--policy", "bm25", "--merge", "all") == 0
    capsys.readouterr()  # the first run's lines (its summary is on stderr too)
    assert cli("route", data, "--mode", "open", "--policy", "bm25", "--merge", "all", "--seed", "9") == 2
    err = capsys.readouterr().err
    assert "written from other options (seed: 0 now 9)" in err and "--fresh" in err and len(err.strip().splitlines()) == 1
    assert cli("route", data, "--mode", "open", "--policy", "bm25", "--merge", "all", "--seed", "9", "--fresh") == 0
    # a file whose sessions do not match this run (here: another split) is refused, not mixed
    path = data / "predictions" / "closed-stay.jsonl"
    assert cli("route", data, "--mode", "closed", "--policy", "stay", "--split", "test") == 0
    (data / "predictions" / "closed-stay.run.json").unlink()
    assert cli("route", data, "--mode", "closed", "--policy", "stay", "--split", "dev") == 2
    assert "not the next session of this run" in capsys.readouterr().err
    assert path.exists()


# --- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["--mode", "open", "--policy", "bm25", "--decide", "each"], "--decide each needs bursts"),
        (["--mode", "open", "--policy", "bm25", "--same", "0.3"], "only apply to bursts"),
        (["--mode", "open", "--policy", "bm25", "--merge", "all", "--cross", "1.5"], "between 0 and 1"),
        (["--mode", "open", "--policy", "bm25", "--model", "x"], "calls no model"),
        (["--mode", "open", "--policy", "local", "--concurrency", "4"], "the local policy calls no model: drop --concurrency"),
        (["--mode", "open", "--policy", "bm25", "--dry-run", "--max-retries", "1"], "drop --dry-run, --max-retries"),
        (["--mode", "open", "--policy", "llm"], "no model configured"),
    ],
)
def test_bad_options_exit_2_with_one_line(data, capsys, args, message):
    assert cli("route", data, *args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_bad_data_exit_2_naming_file_line_field(tmp_path, capsys):
    assert cli("route", tmp_path / "nowhere", "--mode", "open", "--policy", "bm25") == 2
    assert "no such file" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("baselines", empty) == 2
    assert "no sessions.jsonl" in capsys.readouterr().err
    bad = write_data(tmp_path / "bad", standard_sessions()[:2])
    text = (bad / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    broken = json.loads(text[1])
    broken["turns"][2]["gold"]["action"] = "wander"
    (bad / "sessions.jsonl").write_text(text[0] + "\n" + json.dumps(broken) + "\n", encoding="utf-8")
    assert cli("route", bad, "--mode", "open", "--policy", "bm25") == 2
    assert "sessions.jsonl:2: turns[2].gold.action: 'wander' is not one of" in capsys.readouterr().err
    assert cli("route", write_data(tmp_path / "devonly", standard_sessions()[:1]), "--mode", "open",
               "--policy", "bm25", "--split", "test") == 2
    assert "no sessions in split 'test'" in capsys.readouterr().err


@pytest.mark.parametrize("spelling", ["the file", "./the file", "a symlink to it", "its run record"])
def test_out_that_is_the_data_is_refused_before_any_work(tmp_path, monkeypatch, capsys, spelling):
    data = write_data(tmp_path / "data", standard_sessions()[:2])
    sessions = data / "sessions.jsonl"
    if spelling == "its run record":  # x.jsonl's run record is x.run.json: here, the sessions file
        sessions = sessions.rename(data / "x.run.json")
    monkeypatch.chdir(tmp_path)
    out = {"the file": sessions, "./the file": "./data/sessions.jsonl", "a symlink to it": tmp_path / "link.jsonl",
           "its run record": data / "x.jsonl"}[spelling]
    if spelling == "a symlink to it":
        out.symlink_to(sessions)
    before = sorted(p.name for p in data.iterdir()), sessions.read_bytes()
    assert cli("route", sessions, "--mode", "open", "--policy", "bm25", "--out", out) == 2
    err = capsys.readouterr().err
    if spelling == "its run record":
        assert err == (f"error: route: --out {out} writes its run record beside it, and {sessions} is one of the "
                       "inputs (the sessions file); choose another path\n")
    else:
        assert err == f"error: route: --out {out} is one of the inputs (the sessions file); choose another path\n"
    assert (sorted(p.name for p in data.iterdir()), sessions.read_bytes()) == before


def test_the_progress_bar_names_the_run_and_its_data_whatever_out_names(tmp_path, monkeypatch):
    """The bar of a route run names its mode and policy (and model), as its summary line does, and
    the data it routes; never the stem of an ``--out`` file."""
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    data = write_data(tmp_path / "demo", standard_sessions()[:2])
    for argv, label in (([], "route closed-stay on demo"),
                        (["--policy", "llm", "--dry-run"], "route closed-llm-fake-model on demo")):
        term = Terminal()
        monkeypatch.setattr(sys, "stderr", term)  # a terminal: the real tqdm bar is drawn
        monkeypatch.delenv("INTERLEAVE_NO_PROGRESS")
        monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
        policy = [] if argv else ["--policy", "stay"]
        assert main(["route", str(data), "--mode", "closed", *policy, *argv, "--out", str(tmp_path / f"x{len(argv)}.jsonl")]) == 0
        monkeypatch.undo()
        drawn = term.getvalue()
        assert f"{label}:" in drawn and "route x" not in drawn, drawn
