"""Identical requests in flight at once, over real HTTP (the real `openai` client against the fake
server on loopback): every answer made from one request carries what the response cache keeps for
it (text, usage, latency), so a rerun through the cache replays each of them byte for byte. The
server holds the requests at a barrier until both are in flight; the latencies come from clocks
handed in, never from the wall clock."""

from __future__ import annotations

import asyncio
from typing import Iterator

from interleave_bench.llm import LLM, ResponseCache
from interleave_bench.llm.provider import Provider

from test_llm import msgs

QUESTION = msgs("the same question, asked twice at once")


def ticking(*seconds: float):
    """A clock that reads ``seconds`` in turn: a call's latency is the gap between two reads."""
    reads: Iterator[float] = iter(seconds)
    return lambda: next(reads)


def answer_of(reply) -> tuple:
    """What a row made from ``reply`` keeps of it."""
    return reply.text, reply.usage.as_row(), reply.elapsed_ms, reply.finish_reason


def test_two_runs_sharing_a_cache_that_pay_for_one_request_at_once_both_use_the_answer_kept(fake_server, tmp_path):
    srv = fake_server
    srv.hold_until(lambda s: s.calls >= 2)  # neither answer leaves before both requests arrived
    provider = Provider("openai-compatible", srv.url, "m1", "sk-x")
    # two runs, each with its own connection to the cache, as two processes have; 58 and 70 ms
    first = LLM(provider, cache=ResponseCache(tmp_path), clock=ticking(0.0, 0.058))
    second = LLM(provider, cache=ResponseCache(tmp_path), clock=ticking(0.0, 0.070))

    async def both():
        try:
            return await asyncio.gather(first.complete("test", QUESTION), second.complete("test", QUESTION))
        finally:
            await first.aclose()
            await second.aclose()

    a, b = asyncio.run(both())
    assert srv.calls == 2 and srv.held == 0
    assert first.stats.calls == second.stats.calls == 1  # each paid for its call: both are counted
    assert not a.cached and not b.cached
    assert answer_of(a) == answer_of(b) and a.elapsed_ms in (58, 70)
    stored = ResponseCache(tmp_path).get(a.cache_key)
    assert stored["elapsed_ms"] == a.elapsed_ms

    replay = LLM(provider, cache=ResponseCache(tmp_path))
    again = replay.run(replay.complete("test", QUESTION))
    assert again.cached and srv.calls == 2 and answer_of(again) == answer_of(a)


def test_identical_requests_in_flight_at_once_in_one_run_are_paid_once(fake_server, tmp_path):
    srv = fake_server
    srv.hold_until(lambda s: s.calls >= 2)  # two requests sent at once leave together; one waits for the test
    provider = Provider("openai-compatible", srv.url, "m1", "sk-x")
    llm = LLM(provider, cache=ResponseCache(tmp_path), clock=ticking(0.0, 0.058, 0.070, 0.075))

    async def both():
        try:
            calls = asyncio.gather(llm.complete("test", QUESTION), llm.complete("test", QUESTION))
            # the first request is held at the server; the second call began before it was sent
            assert await asyncio.to_thread(srv.wait_for, lambda s: s.held >= 1 or s.calls >= 2)
            srv.open_gate()
            return await calls
        finally:
            await llm.aclose()

    a, b = asyncio.run(both())
    assert srv.calls == 1  # one request reached the server
    assert (llm.stats.calls, llm.stats.cached) == (1, 1)  # paid once; the call that waited is a cache hit
    assert not a.cached and b.cached and answer_of(a) == answer_of(b) and a.elapsed_ms == 58

    replay = LLM(provider, cache=ResponseCache(tmp_path))

    async def again_both():
        return await asyncio.gather(replay.complete("test", QUESTION), replay.complete("test", QUESTION))

    again = replay.run(again_both())
    assert srv.calls == 1 and (replay.stats.calls, replay.stats.cached) == (0, 2)
    assert [answer_of(r) for r in again] == [answer_of(a), answer_of(b)]
