"""Answers checked at the model layer's edge, over real HTTP (the real `openai` client against the
fake server on loopback): usage no provider counts, empty or cut text, capped Retry-After, stored
answers that fail the checks, and provider error texts that echo the key. No test sleeps: the
client's sleeper and clocks are handed in."""

from __future__ import annotations

import asyncio
import json
from email.utils import formatdate

import pytest

from interleave_bench.errors import json_kind
from interleave_bench.llm import LLM, ModelCallError, ResponseCache, model_session
from interleave_bench.llm.cache import cache_key
from interleave_bench.llm.client import RETRY_AFTER_MAX_S, USAGE_MAX_TOKENS, Unreadable, retry_after, usage_of
from interleave_bench.llm.provider import Provider

from test_llm import msgs, no_waits, run_batch


@pytest.mark.parametrize("kind", ["usage", "null", "length"])
def test_an_unusable_answer_is_asked_again_and_never_cached(openai_env, kind):
    srv = openai_env["server"]
    srv.add_fault(kind, times=2)
    with model_session(model="m1") as llm:
        waits = no_waits(llm)
        [reply] = run_batch(llm, ["check me"])
        assert llm.stats.calls == 1 and llm.stats.failed == 0 and len(waits) == 2
        assert reply.usage.input > 0 and reply.finish_reason == "stop"
    assert [e.status for e in srv.log] == [kind, kind, 200]
    assert json.loads(reply.text)["echo"] == "check me"
    with model_session(model="m1") as llm:
        [again] = run_batch(llm, ["check me"])
        assert again.cached and again.text == reply.text and again.usage == reply.usage


def test_json_kind_names_what_a_value_is():
    assert [json_kind(v) for v in (None, True, 42, 4.2, "x", [1], {"a": 1})] == [
        "null", "true or false", "a number", "a number", "text", "a list", "an object"]


@pytest.mark.parametrize("kind,words", [
    ("usage", "usage prompt_tokens is -"),
    ("null", "it has no text (content is null or empty)"),
    ("number", "its content is a number, not text"),  # (not "null or empty": it says 42)
    ("length", "cut off at the token limit (finish_reason length)"),
])
def test_an_answer_unusable_on_every_try_fails_the_call_naming_why(openai_env, kind, words):
    srv = openai_env["server"]
    srv.add_fault(kind, times=3)
    with model_session(model="m1", max_retries=2) as llm:
        no_waits(llm)
        with pytest.raises(ModelCallError) as exc:
            llm.run(llm.complete("route", msgs("x"), what="session en-0001 turn 2"))
        assert llm.stats.failed == 1 and llm.stats.calls == 0
    assert words in str(exc.value) and "(3 tries)" in str(exc.value)
    with model_session(model="m1") as llm:  # nothing was stored: asked again
        run_batch(llm, ["x"])
        assert llm.stats.calls == 1 and llm.stats.cached == 0


def test_a_stored_answer_that_fails_the_checks_is_dropped_and_asked_again(openai_env):
    srv = openai_env["server"]
    cache = ResponseCache(openai_env["cache"])
    provider = Provider("openai-compatible", srv.url, "m1", "sk-x")
    key = cache_key(provider.identity, "m1", msgs("old"), {"temperature": 0.0}, {})
    cache.put(key, "m1", "test", {"text": "stale", "usage": {"input": -4, "cached_input": 0, "output": 3},
                                  "elapsed_ms": 5, "finish_reason": "stop"})
    llm = LLM(provider, cache=cache)
    [reply] = run_batch(llm, ["old"])
    assert not reply.cached and reply.text != "stale" and srv.completions == 1
    assert cache.get(key)["usage"]["input"] == reply.usage.input > 0  # the good answer replaced it
    llm = LLM(provider, cache=cache)
    [again] = run_batch(llm, ["old"])
    assert again.cached and srv.completions == 1
    cache.close()


def test_retry_after_beyond_the_cap_waits_the_cap_then_asks_again(openai_env):
    srv = openai_env["server"]
    srv.add_fault("429", retry_after=100000)
    with model_session(model="m1", use_cache=False) as llm:
        waits = no_waits(llm)
        [reply] = run_batch(llm, ["rate me"])
    assert waits == [RETRY_AFTER_MAX_S] and [e.status for e in srv.log] == [429, 200]
    assert json.loads(reply.text)["echo"] == "rate me"


def test_retry_after_as_a_date_is_read_against_the_injected_wall_clock():
    now = 1_700_000_000.0
    assert retry_after({"retry-after": formatdate(now + 30, usegmt=True)}, now) == pytest.approx(30.0)
    assert retry_after({"retry-after-ms": "1500"}, now) == 1.5
    assert retry_after({"retry-after": "soon"}, now) is None
    assert retry_after({"retry-after": "-3"}, now) is None
    assert retry_after({"retry-after": "nan"}, now) is None
    assert retry_after({}, now) is None


def test_latency_comes_from_the_injected_clock(openai_env):
    srv = openai_env["server"]
    ticks = iter([10.0, 10.25])
    llm = LLM(Provider("openai-compatible", srv.url, "m1", "sk-x"), clock=lambda: next(ticks))
    [reply] = run_batch(llm, ["time me"])
    assert reply.elapsed_ms == 250


@pytest.mark.parametrize("usage,words", [
    ({"prompt_tokens": -1, "completion_tokens": 2}, "prompt_tokens is -1"),
    ({"prompt_tokens": 3, "completion_tokens": USAGE_MAX_TOKENS + 1}, "outside 0.."),
    ({"prompt_tokens": "12", "completion_tokens": 2}, "not a whole number"),
    ({"prompt_tokens": 1.5, "completion_tokens": 2}, "not a whole number"),
    ({"prompt_tokens": 3, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 9}}, "9 cached of 3"),
    ({"prompt_tokens": True, "completion_tokens": 2}, "not a whole number"),
])
def test_usage_no_provider_counts_is_unreadable(usage, words):
    with pytest.raises(Unreadable, match=words):
        usage_of(usage)


def test_usage_a_provider_counts_is_read():
    got = usage_of({"prompt_tokens": 30, "completion_tokens": 4, "prompt_cache_hit_tokens": 10})
    assert (got.input, got.cached_input, got.output) == (30, 10, 4)
    assert got.as_row() == {"input": 30, "output": 4, "cache_hit": 10}
    # no usage reported: its tokens are unknown, counted as one unreported call, never as 0 tokens
    assert usage_of(None).as_row() == {"input": 0, "output": 0, "cache_hit": 0, "unreported": 1}


def test_an_error_text_echoing_the_key_is_redacted_and_not_retried(openai_env):
    srv, key = openai_env["server"], openai_env["key"]
    srv.add_fault("echo", times=1)
    with model_session(model="m1", use_cache=False) as llm:
        waits = no_waits(llm)
        with pytest.raises(ModelCallError) as exc:
            llm.run(llm.complete("route", msgs("x")))
    assert waits == [] and srv.calls == 1  # a 401 is not asked again
    text = str(exc.value)
    assert "HTTP 401" in text and key not in text and "[redacted]" in text
    assert key[-8:] not in text  # nor a piece of it


def test_a_route_run_with_an_unusable_answer_finishes_without_error_rows(openai_env, tmp_path):
    from interleave_bench.cli import main
    from _route_util import read_rows, standard_sessions, write_data

    srv = openai_env["server"]
    data = write_data(tmp_path / "data", standard_sessions()[:1])
    srv.add_fault("usage", times=1)
    args = ["route", str(data), "--mode", "closed", "--policy", "llm", "--model", "m1", "--split", "all"]
    assert main(args) == 0
    rows = read_rows(data / "predictions" / "closed-llm-m1.jsonl")
    assert "ERROR" not in [r["pred"] for r in rows]
    assert all(r["usage"]["input"] >= 0 for r in rows if "usage" in r)
    srv.reset_counts()
    assert main(args + ["--out", str(tmp_path / "again.jsonl")]) == 0  # the rerun reads the cache cleanly
    assert srv.completions == 0


def test_a_key_echoed_inside_an_answer_is_redacted_before_it_is_used_or_cached(openai_env):
    srv, key, cache = openai_env["server"], openai_env["key"], openai_env["cache"]
    with model_session(model="m1") as llm:
        [reply] = run_batch(llm, [f"my key is {key}, say it back"])  # the fake model echoes what it is sent
    assert key not in reply.text and json.loads(reply.text)["echo"] == "my key is [redacted], say it back"
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert files and not any(key.encode() in p.read_bytes() for p in files)
    with model_session(model="m1") as llm:  # the redacted answer replays as it was used
        [again] = run_batch(llm, [f"my key is {key}, say it back"])
        assert again.cached and again.text == reply.text
    # an answer stored with the key (before answers were redacted) is never replayed: asked again
    with model_session(model="m1") as llm:
        [other] = run_batch(llm, ["plain"])
        assert other.cache_key is not None
        llm.cache.delete(other.cache_key)  # the first answer stored is kept: make room for the planted one
        llm.cache.put(other.cache_key, "m1", "test", {"text": f'{{"echo": "{key}"}}', "elapsed_ms": 1, "finish_reason": "stop",
                                                "usage": {"input": 1, "cached_input": 0, "output": 1}})
    calls = srv.calls
    with model_session(model="m1") as llm:
        [fresh] = run_batch(llm, ["plain"])
    assert not fresh.cached and srv.calls == calls + 1 and key not in fresh.text


def test_the_key_in_use_echoed_inside_an_answer_is_cached_redacted_whatever_its_shape(openai_env, monkeypatch):
    """A key of letters only (no digit, under 20 characters) is the key in use all the same."""
    key = "correcthorsebattery"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with model_session(model="m1") as llm:
        [reply] = run_batch(llm, [f"my key is {key}, say it back"])
    assert json.loads(reply.text)["echo"] == "my key is [redacted], say it back"
    assert openai_env["server"].log[-1].headers.get("authorization") == f"Bearer {key}"
    files = [p for p in openai_env["cache"].rglob("*") if p.is_file()]
    assert files and not any(key.encode() in p.read_bytes() for p in files)


def test_a_run_stopped_after_paid_calls_still_prints_its_cost_line(openai_env, capsys):
    with pytest.raises(KeyboardInterrupt):
        with model_session(model="m1") as llm:
            run_batch(llm, ["one", "two"])
            raise KeyboardInterrupt  # Ctrl-C after two paid calls
    err = capsys.readouterr().err
    assert err.startswith("model m1: 2 paid calls, 0 from cache, 0 failed; tokens ") and err.count("\n") == 2, err
    # then whose answers they were: the fake server's, under the name m1
    assert err.splitlines()[1].startswith("warning: 2 answers came from the project's fake model"), err
    # stopped before any call: nothing was spent, and nothing is said
    with pytest.raises(KeyboardInterrupt):
        with model_session(model="m1"):
            raise KeyboardInterrupt
    assert capsys.readouterr().err == ""


def test_ctrl_c_during_a_model_route_run_ends_with_the_cost_line_then_the_resume_line(openai_env, tmp_path, capsys,
                                                                                      monkeypatch):
    from interleave_bench.cli import main
    from interleave_bench.llm import client
    from _route_util import standard_sessions, write_data

    data = write_data(tmp_path / "data", standard_sessions()[:2])
    real, seen = client.LLM.complete, []

    async def interrupted(self, *args, **kwargs):  # the third request is where the user presses Ctrl-C
        seen.append(1)
        if len(seen) == 3:
            raise KeyboardInterrupt
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(client.LLM, "complete", interrupted)
    assert main(["route", str(data), "--mode", "closed", "--policy", "llm", "--model", "m1"]) == 130
    lines = capsys.readouterr().err.strip().splitlines()
    import re

    # (requests run concurrently: one or two had come back when the third was interrupted)
    assert re.match(r"model m1: [12] paid calls?, 0 from cache, 0 failed; tokens [1-9]", lines[-3]), lines
    assert re.match(r"warning: [12] answers? came from the project's fake model .* not from m1: ", lines[-2]), lines
    # no session had finished (they progress together): none is in the file, the answers are in the cache
    out = data / "predictions" / "closed-llm-m1.jsonl"
    assert lines[-1] == (f"interrupted: 0 of 2 sessions finished, so none is kept in {out}; the model's answers so "
                         f"far are kept in the response cache ({openai_env['cache']}), so a rerun does not pay for "
                         "them again; run the same command again to resume")
