"""Answers of the project's fake model under another model's name: the fake server marks each one,
the client counts them, the run record keeps the count, and the board refuses such a run."""

from __future__ import annotations

import asyncio

import openai

from interleave_bench.llm.provider import FAKE_FINGERPRINT


def test_the_fake_server_marks_every_answer_and_echoes_the_model_asked_for(fake_server):
    async def ask(model: str):
        client = openai.AsyncOpenAI(api_key="any-key", base_url=fake_server.url, max_retries=0)
        try:
            return await client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": "hello"}], extra_headers={"X-Interleave-Kind": "test"})
        finally:
            await client.close()

    for model in ("gpt-4o-mini", "fake-model"):
        resp = asyncio.run(ask(model))
        assert resp.model == model  # the echo is kept: a client shows the name it asked for
        assert resp.system_fingerprint == FAKE_FINGERPRINT  # the field the openai client exposes says whose answer it is
