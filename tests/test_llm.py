"""The model layer over real HTTP: the real `openai` client against the fake server on loopback."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from interleave_bench.errors import InputError, UsageError
from interleave_bench.llm import LLM, ModelCallError, ResponseCache, model_session
from interleave_bench.llm.prices import PRICES_AS_OF, Price, price_for, table_price
from interleave_bench.llm.provider import DEEPSEEK_BASE_URL, Provider, resolve_provider
from interleave_bench.llm.server import FakeServer


def msgs(text: str) -> list[dict]:
    return [{"role": "system", "content": "You answer briefly."}, {"role": "user", "content": text}]


def no_waits(llm: LLM) -> list[float]:
    """Make ``llm`` record its retry waits instead of sleeping them; returns the record."""
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    llm.sleep = sleep
    return waits


def run_batch(llm: LLM, texts: list[str]):
    async def go():
        return await asyncio.gather(*(llm.complete("test", msgs(t)) for t in texts))

    return llm.run(go())


def test_second_identical_run_makes_no_http_call(openai_env):
    srv = openai_env["server"]
    texts = [f"question {k}" for k in range(12)]
    with model_session(model="m1") as llm:
        first = run_batch(llm, texts)
        assert llm.stats.calls == 12 and llm.stats.cached == 0
    assert srv.calls == 12
    with model_session(model="m1") as llm:
        second = run_batch(llm, texts)
        assert llm.stats.calls == 0 and llm.stats.cached == 12 and llm.stats.cost_usd == 0
    assert srv.calls == 12  # nothing new reached the server
    assert [r.text for r in first] == [r.text for r in second]
    assert [r.usage for r in first] == [r.usage for r in second]
    assert all(r.cached for r in second) and not any(r.cached for r in first)


def test_cache_never_answers_for_another_model_or_endpoint(openai_env, monkeypatch):
    srv = openai_env["server"]
    with model_session(model="m1") as llm:
        run_batch(llm, ["same question"])
    with model_session(model="m2") as llm:
        run_batch(llm, ["same question"])
        assert llm.stats.calls == 1
    with FakeServer() as other:
        monkeypatch.setenv("OPENAI_BASE_URL", other.url)
        with model_session(model="m1") as llm:
            run_batch(llm, ["same question"])
            assert llm.stats.calls == 1
        assert other.calls == 1
    monkeypatch.setenv("EVAL_EXTRA_BODY", '{"thinking": {"type": "disabled"}}')
    monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
    with model_session(model="m1") as llm:
        run_batch(llm, ["same question"])
        assert llm.stats.calls == 1  # extra body is part of the key
    assert srv.log[-1].body["thinking"] == {"type": "disabled"}  # and reaches the server


def test_retry_after_429_is_honoured(openai_env):
    # the sleeper is injected: the client's retry wait is recorded instead of slept, so the test
    # checks the wait the client chose, not how long the machine took
    srv = openai_env["server"]
    srv.add_fault("429", retry_after=2)
    with model_session(model="m1", use_cache=False) as llm:
        waits = no_waits(llm)
        [reply] = run_batch(llm, ["rate me"])
    assert json.loads(reply.text)["echo"] == "rate me"
    assert [e.status for e in srv.log] == [429, 200]
    assert waits == [2.0]  # exactly what Retry-After asked for


def test_two_500s_then_success(openai_env):
    srv = openai_env["server"]
    srv.add_fault("500", times=2)
    with model_session(model="m1", use_cache=False) as llm:
        waits = no_waits(llm)
        [reply] = run_batch(llm, ["try again"])
        assert waits == [0.5, 1.0]  # the backoff, doubled
        assert llm.stats.calls == 1 and llm.stats.failed == 0
    assert [e.status for e in srv.log] == [500, 500, 200]
    assert reply.text


def test_dropped_connection_is_retried(openai_env):
    srv = openai_env["server"]
    srv.add_fault("drop")
    with model_session(model="m1", use_cache=False) as llm:
        no_waits(llm)
        [reply] = run_batch(llm, ["hello"])
    assert [e.status for e in srv.log] == ["drop", 200] and reply.text


def test_failure_after_retries_names_the_request(openai_env):
    srv = openai_env["server"]
    srv.add_fault("500", times=10)
    with model_session(model="m1", use_cache=False, max_retries=1) as llm:
        no_waits(llm)
        with pytest.raises(ModelCallError) as exc:
            llm.run(llm.complete("route", msgs("x"), what="session en-0003 turn 7"))
        assert llm.stats.failed == 1
    assert "route: session en-0003 turn 7" in str(exc.value) and "HTTP 500" in str(exc.value)
    assert srv.calls == 2


def test_failed_call_keeps_earlier_answers_cached(openai_env):
    srv = openai_env["server"]
    with model_session(model="m1", max_retries=0) as llm:
        run_batch(llm, ["a", "b"])
        srv.add_fault("500", times=1)
        with pytest.raises(ModelCallError):
            run_batch(llm, ["c"])
    with model_session(model="m1") as llm:
        run_batch(llm, ["a", "b", "c"])
        assert llm.stats.cached == 2 and llm.stats.calls == 1


@pytest.mark.parametrize("limit", [1, 3])
def test_concurrency_is_bounded(limit, tmp_path):
    total = 4 * limit + 2
    with FakeServer() as srv:
        # a barrier, not a delay: each request waits until `limit` are in flight at once (or the
        # last ones have arrived), so the limit is reached on every run, however slow the machine
        srv.hold_until(lambda s: s.in_flight >= limit or s.calls >= total)
        provider = Provider("openai-compatible", srv.url, "m1", "sk-x")
        llm = LLM(provider, concurrency=limit)
        run_batch(llm, [f"q{k}" for k in range(total)])
        assert srv.held == 0 and srv.calls == total
        assert srv.max_in_flight == limit  # reached, never exceeded


def test_cost_line_matches_server_usage(openai_env, monkeypatch):
    srv = openai_env["server"]
    srv.cached_share = 0.25
    monkeypatch.setenv("EVAL_PRICES", "2,0.5,8")
    with model_session(model="m1") as llm:
        run_batch(llm, [f"a longer question number {k} " * (k + 1) for k in range(5)])
        stats = llm.stats
        line = llm.cost_line()
    u = srv.usage_total
    assert (stats.paid.input, stats.paid.cached_input, stats.paid.output) == (u["prompt_tokens"], u["cached_tokens"], u["completion_tokens"])
    expected = ((u["prompt_tokens"] - u["cached_tokens"]) * 2 + u["cached_tokens"] * 0.5 + u["completion_tokens"] * 8) / 1e6
    assert stats.cost_usd == pytest.approx(expected)
    assert f"${expected:.4f}" in line
    assert f"{u['prompt_tokens']:,} in ({u['cached_tokens']:,} cached) / {u['completion_tokens']:,} out" in line
    assert line.endswith("(prices from EVAL_PRICES)")  # the prices it used, not the table's date
    stats.price = table_price("deepseek-chat")
    assert stats.line("deepseek-chat").endswith(f"(prices as of {PRICES_AS_OF}; EVAL_PRICES sets others)")


def test_price_table_and_override():
    assert price_for("deepseek-chat", env={}) == Price(0.28, 0.028, 0.42)
    assert price_for("some-local-model", env={}) is None
    assert price_for("x", env={"EVAL_PRICES": "1, 0.1, 2"}) == Price(1.0, 0.1, 2.0)
    with pytest.raises(UsageError, match="EVAL_PRICES"):
        price_for("x", env={"EVAL_PRICES": "1,2"})
    for raw in ("nan,nan,nan", "inf,0,0", "1e400,0,0", "0,-inf,0"):  # no price: the cost line said $nan
        with pytest.raises(UsageError, match="EVAL_PRICES"):
            price_for("x", env={"EVAL_PRICES": raw})
    assert Price(1, 0.5, 2).cost(1_000_000, 400_000, 500_000) == pytest.approx(0.6 + 0.2 + 1.0)


def test_provider_resolution():
    p = resolve_provider(None, env={"DEEPSEEK_API_KEY": "k"})
    assert (p.base_url, p.model) == (DEEPSEEK_BASE_URL, "deepseek-chat")
    p = resolve_provider("deepseek-reasoner", env={"DEEPSEEK_API_KEY": "k"})
    assert p.model == "deepseek-reasoner"
    p = resolve_provider("llama", env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "k", "DEEPSEEK_API_KEY": "d"})
    assert (p.name, p.model) == ("openai-compatible", "llama")
    assert "k" not in repr(p).replace("openai-compatible", "")
    with pytest.raises(UsageError, match="--model"):
        resolve_provider(None, env={"OPENAI_BASE_URL": "http://x", "OPENAI_API_KEY": "k"})
    with pytest.raises(UsageError, match="OPENAI_API_KEY"):
        resolve_provider("m", env={"OPENAI_BASE_URL": "http://x"})
    with pytest.raises(UsageError, match="no model configured"):
        resolve_provider(None, env={})
    with pytest.raises(UsageError, match="EVAL_EXTRA_BODY"):
        resolve_provider(None, env={"DEEPSEEK_API_KEY": "k", "EVAL_EXTRA_BODY": "{bad"})


def test_dry_run_needs_no_key_and_is_free(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with model_session(dry_run=True) as llm:
        [r] = run_batch(llm, ["hi"])
        assert llm.model == "fake-model" and llm.stats.cost_usd == 0 and r.text
    with model_session(dry_run=True) as llm:  # a new port, the same cache identity
        run_batch(llm, ["hi"])
        assert llm.stats.cached == 1 and llm.stats.calls == 0
    assert (tmp_path / ".cache" / "llm.sqlite").exists()


def test_api_key_is_written_nowhere(openai_env, tmp_path):
    """The key reaches the server (as a bearer token) but no file under the cache or output folders."""
    srv, key = openai_env["server"], openai_env["key"]
    with model_session(model="m1") as llm:
        replies = run_batch(llm, [f"q{k}" for k in range(5)])
        out = tmp_path / "out"
        out.mkdir()
        (out / "answers.json").write_text(json.dumps([r.text for r in replies]))
        (out / "cost.txt").write_text(llm.cost_line() + repr(llm.provider) + llm.provider.describe())
    assert srv.log[0].headers.get("authorization") == f"Bearer {key}"
    assert_secret_absent(tmp_path, key)


def assert_secret_absent(root: Path, secret: str) -> None:
    needle = secret.encode()
    scanned = 0
    for path in Path(root).rglob("*"):
        if path.is_file():
            scanned += 1
            assert needle not in path.read_bytes(), f"secret found in {path}"
    assert scanned > 0


def test_rejected_answer_is_asked_again_next_run(openai_env):
    srv = openai_env["server"]
    with model_session(model="m1") as llm:
        [bad, good] = run_batch(llm, ["unusable", "fine"])
        llm.reject(bad)
    with model_session(model="m1") as llm:
        run_batch(llm, ["unusable", "fine"])
        assert (llm.stats.calls, llm.stats.cached) == (1, 1)
    assert srv.completions == 3


def _cache_writer(folder: str, tag: int, n: int) -> None:
    cache = ResponseCache(folder)
    for k in range(n):
        cache.put(f"{tag}-{k}", "m", "test", {"text": str(k)})
    cache.close()


def test_cache_is_safe_under_concurrent_writer_processes(tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_cache_writer, args=(str(tmp_path), tag, 200)) for tag in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    cache = ResponseCache(tmp_path)
    assert len(cache) == 600 and cache.get("2-199") == {"text": "199"}


def _damaged_cache(folder: Path, kind: str) -> Path:
    """``folder/llm.sqlite`` as ``kind``: text, a folder, a real cache cut in half, or a real cache
    whose pages past the first are overwritten (it opens; a read or write finds the damage)."""
    path = folder / "llm.sqlite"
    if kind == "text":
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text("not a database\n")
    elif kind == "folder":
        path.mkdir(parents=True)
    else:
        cache = ResponseCache(folder)
        for k in range(300):
            cache.put(f"key-{k}", "m", "test", {"text": "answer " * 40})
        cache.close()
        size = path.stat().st_size
        with open(path, "r+b") as fh:
            if kind == "truncated":
                fh.truncate(size // 2)
            else:
                fh.seek(4096)  # the first page (the schema) stays: the cache opens
                fh.write(b"\xff" * (size - 4096))
    return path


@pytest.mark.parametrize("kind, problem", [
    ("text", "cannot be used as the response cache (file is not a database)"),
    ("folder", "is a folder, not a file"),
    ("truncated", "cannot be used as the response cache (database disk image is malformed)"),
    ("pages", "cannot be used as the response cache (database disk image is malformed)"),
])
def test_a_cache_file_sqlite_cannot_use_stops_a_model_command_in_one_line(tmp_path, capsys, kind, problem):
    from interleave_bench.cli import main

    from _route_util import write_data

    data = write_data(tmp_path / "data")
    path = _damaged_cache(tmp_path / "cache", kind)
    code = main(["route", str(data), "--mode", "closed", "--policy", "llm", "--dry-run",
                 "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "p.jsonl")])
    assert code == 2
    assert capsys.readouterr().err == (f"error: {path}: {problem}: run with --no-cache, "
                                       "or give another folder with --cache\n")


@pytest.mark.parametrize("use", ["get", "put", "delete", "len"])
def test_a_damaged_cache_found_on_a_read_or_write_names_the_file(tmp_path, use):
    path = _damaged_cache(tmp_path, "pages")
    cache = ResponseCache(tmp_path)
    calls = {"get": lambda: cache.get("key-1"), "put": lambda: cache.put("new", "m", "test", {"text": "x"}),
             "delete": lambda: cache.delete("key-1"), "len": lambda: len(cache)}
    with pytest.raises(InputError) as exc:
        calls[use]()
    assert str(exc.value).startswith(f"{path}: cannot be used as the response cache (database disk image is malformed)")
    cache.close()


def test_a_dry_run_with_a_cache_it_cannot_use_starts_no_server(tmp_path):
    import threading

    _damaged_cache(tmp_path, "text")
    before = {t.ident for t in threading.enumerate()}
    with pytest.raises(InputError, match="file is not a database"):
        with model_session(dry_run=True, cache_dir=str(tmp_path)):
            pass
    assert {t.ident for t in threading.enumerate() if t.is_alive()} <= before


@pytest.mark.parametrize("kind", ["truncated", "malformed"])
def test_an_unreadable_200_body_is_retried_like_a_5xx_and_never_cached(openai_env, kind):
    srv = openai_env["server"]
    srv.add_fault(kind, times=2)
    with model_session(model="m1") as llm:
        no_waits(llm)
        [reply] = run_batch(llm, ["cut me"])
        assert llm.stats.calls == 1 and llm.stats.failed == 0
    assert [e.status for e in srv.log] == [kind, kind, 200]
    assert json.loads(reply.text)["echo"] == "cut me"
    with model_session(model="m1") as llm:
        [again] = run_batch(llm, ["cut me"])
        assert again.cached and again.text == reply.text  # the readable answer is what was stored


def test_unreadable_bodies_past_max_retries_fail_the_call_and_leave_nothing_cached(openai_env):
    srv = openai_env["server"]
    srv.add_fault("truncated", times=3)
    with model_session(model="m1", max_retries=2) as llm:
        no_waits(llm)
        with pytest.raises(ModelCallError) as exc:
            llm.run(llm.complete("route", msgs("x"), what="session en-0001 turn 2"))
        assert llm.stats.failed == 1 and llm.stats.calls == 0
    assert "unreadable answer" in str(exc.value) and "3 tries" in str(exc.value)
    assert srv.calls == 3
    with model_session(model="m1") as llm:
        run_batch(llm, ["x"])
        assert llm.stats.calls == 1 and llm.stats.cached == 0


@pytest.mark.parametrize("body, said", [
    ('{"model": "other"}', "'model' would override what interleave-bench sets in its requests (model, messages, "
                           "temperature, max_tokens, seed, response_format): drop it; name the model with --model"),
    ('{"messages": [], "thinking": {}, "seed": 1}', "'messages', 'seed' would override what interleave-bench sets in its "
                                                    "requests (model, messages, temperature, max_tokens, seed, "
                                                    "response_format): drop them"),
])
def test_extra_body_may_not_set_what_the_client_sets_itself(body, said, tmp_path, capsys, monkeypatch):
    from interleave_bench.cli import main
    from interleave_bench.llm.provider import fake_provider

    with pytest.raises(UsageError) as refused:
        resolve_provider(None, env={"DEEPSEEK_API_KEY": "k", "EVAL_EXTRA_BODY": body})
    assert str(refused.value) == f"EVAL_EXTRA_BODY: {said}"
    with pytest.raises(UsageError, match="^EVAL_EXTRA_BODY: "):
        fake_provider("http://127.0.0.1:9/v1", env={"EVAL_EXTRA_BODY": body})
    # a dry run too stops in one line, before any request
    from _score_util import many_sessions, write_jsonl

    data = write_jsonl(tmp_path / "data" / "sessions.jsonl", many_sessions(1, turns=3))
    monkeypatch.setenv("EVAL_EXTRA_BODY", body)
    code = main(["route", str(data.parent), "--mode", "closed", "--policy", "llm", "--dry-run", "--no-cache"])
    assert code == 2 and capsys.readouterr().err == f"error: EVAL_EXTRA_BODY: {said}\n"
    assert not (data.parent / "predictions-dry").exists()


@pytest.mark.parametrize("body, said", [
    ('{"top_k": NaN}', "top_k: NaN is not a JSON number (NaN and Infinity are refused)"),
    ('{"thinking": {"budget": [1, -Infinity]}}',
     "thinking.budget[1]: -Infinity is not a JSON number (NaN and Infinity are refused)"),
    ('{"top_p": 1e400}', "top_p: the number 1e400 is outside the finite range of a float"),
    ('{bad', "invalid JSON: Expecting property name enclosed in double quotes (column 2)"),
])
def test_extra_body_json_cannot_send_is_refused_before_any_server_starts(body, said, tmp_path, capsys, monkeypatch):
    import threading

    from interleave_bench.cli import main

    from _route_util import write_data

    with pytest.raises(UsageError) as refused:
        resolve_provider(None, env={"DEEPSEEK_API_KEY": "k", "EVAL_EXTRA_BODY": body})
    assert str(refused.value) == f"EVAL_EXTRA_BODY: {said}"
    monkeypatch.setenv("EVAL_EXTRA_BODY", body)
    before = {t.ident for t in threading.enumerate()}
    with pytest.raises(UsageError, match="^EVAL_EXTRA_BODY: "):
        with model_session(dry_run=True, use_cache=False):
            pass
    assert {t.ident for t in threading.enumerate() if t.is_alive()} <= before
    data = write_data(tmp_path / "data")
    code = main(["route", str(data), "--mode", "closed", "--policy", "llm", "--dry-run", "--no-cache"])
    assert code == 2 and capsys.readouterr().err == f"error: EVAL_EXTRA_BODY: {said}\n"
    assert not (data / "predictions-dry").exists()


def test_the_keys_extra_body_may_not_set_are_those_a_request_carries(openai_env):
    from interleave_bench.llm.provider import OWN_BODY_KEYS

    srv = openai_env["server"]
    with model_session(model="m1") as llm:
        llm.run(llm.complete("test", msgs("hello"), temperature=0.5, max_tokens=20, seed=3,
                             response_format={"type": "json_object"}))
    assert set(srv.log[-1].body) == set(OWN_BODY_KEYS)


@pytest.mark.parametrize("limits, problem", [
    ({"concurrency": 0}, "concurrency must be at least 1"),
    ({"timeout": 0}, "timeout must be a positive number of seconds"),
    ({"timeout": -1.5}, "timeout must be a positive number of seconds"),
    ({"timeout": float("nan")}, "timeout must be a positive number of seconds"),
    ({"timeout": float("inf")}, "timeout must be a positive number of seconds"),
    ({"max_retries": -1}, "max_retries must be 0 or more"),
])
def test_a_client_refuses_limits_out_of_range(limits, problem):
    with pytest.raises(ValueError) as exc:
        LLM(Provider("openai-compatible", "http://127.0.0.1:1/v1", "m", "k"), **limits)
    assert str(exc.value) == problem


@pytest.mark.parametrize("flag, value, said", [
    ("--max-retries", "-1", "must be 0 or more, got -1"),
    ("--timeout", "0", "must be a positive number of seconds, got 0"),
    ("--timeout", "-1", "must be a positive number of seconds, got -1"),
    ("--timeout", "nan", "expected a number, got 'nan'"),  # (no plain number: options.read_number)
    ("--timeout", "x", "expected a number, got 'x'"),
    ("--concurrency", "0", "must be at least 1, got 0"),
])
@pytest.mark.parametrize("command", ["route", "mid-reply", "facts"])
def test_a_model_command_refuses_limits_out_of_range_in_one_line_as_it_reads_them(tmp_path, capsys, monkeypatch, flag,
                                                                                   value, said, command):
    """Read with the option, before an output is opened or a finished run is found: a run with
    nothing left to do refuses them too, and no empty file is left behind."""
    from interleave_bench.cli import main

    from _route_util import write_data

    monkeypatch.chdir(tmp_path)
    data = write_data(tmp_path / "data")
    argv = {"route": ["route", str(data), "--mode", "closed", "--policy", "llm"],
            "mid-reply": ["mid-reply"], "facts": ["facts", str(data)]}[command]
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--dry-run", "--out", str(tmp_path / "out.jsonl"), flag, value])
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"error: interleave-bench {command}: argument {flag}: {said} (see interleave-bench {command} --help)\n"
    assert not (tmp_path / "out.jsonl").exists() and not (data / "predictions-dry").exists()


def test_a_dry_run_session_with_limits_out_of_range_starts_no_server():
    import threading

    before = {t.ident for t in threading.enumerate()}
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
        with model_session(dry_run=True, use_cache=False, timeout=0):
            pass
    assert {t.ident for t in threading.enumerate() if t.is_alive()} <= before
