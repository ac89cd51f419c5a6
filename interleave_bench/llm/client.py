"""One async client for every model call of the project (generation, routing, reading, facts, mid-reply).

Built on the ``openai`` package. Retries with exponential backoff and jitter on 429, 5xx, timeouts
and dropped connections, honouring ``Retry-After``, are the ``openai`` client's own machinery,
configured here through ``max_retries`` and ``timeout``; this module adds the same retries for a
200 answer whose body cannot be read (truncated JSON, garbage, no choices), which the ``openai``
client would hand back as final, plus the response cache, bounded concurrency, and usage and cost
accounting. An unreadable body is never cached.

Every answer is stored with the usage and latency it had when it was paid for, and a cached answer
comes back with those same figures (flagged ``cached``), so a rerun writes byte-identical files; the
run's totals count cached answers apart, at no cost.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InterleaveError
from .cache import ResponseCache, cache_key
from .prices import PRICES_AS_OF, Price, price_for
from .provider import Provider

if TYPE_CHECKING:
    import openai

#: simultaneous requests in flight by default: enough to hide latency, few enough for rate limits
DEFAULT_CONCURRENCY = 8
#: retries of one request after the first try (429, 5xx, timeouts, dropped connections)
DEFAULT_MAX_RETRIES = 5
#: seconds one HTTP request may take before it counts as a timeout and is retried
DEFAULT_TIMEOUT_S = 120.0
#: first wait before asking again after an unreadable body, doubled on each retry (the ``openai``
#: client's own schedule for 5xx answers)
UNREADABLE_RETRY_DELAY_S = 0.5
#: the longest wait between two tries after unreadable bodies (the ``openai`` client's own cap)
UNREADABLE_RETRY_MAX_S = 8.0
#: the header telling the fake model which kind of request this is; real providers ignore it
KIND_HEADER = "X-Interleave-Kind"


class ModelCallError(InterleaveError):
    """A model call that still failed after every retry; names the request and the reason."""

    def __init__(self, kind: str, what: str, reason: str):
        self.kind = kind
        self.what = what
        self.reason = reason
        super().__init__(f"model call failed ({kind}{': ' + what if what else ''}): {reason}")


@dataclass
class Usage:
    input: int = 0  # prompt tokens, cached ones included
    cached_input: int = 0  # prompt tokens the provider served from its prompt cache
    output: int = 0

    def add(self, other: "Usage") -> None:
        self.input += other.input
        self.cached_input += other.cached_input
        self.output += other.output

    def as_row(self) -> dict[str, int]:
        """The prediction-row form (README.md#file-formats): ``{input, output, cache_hit}``."""
        return {"input": self.input, "output": self.output, "cache_hit": self.cached_input}


@dataclass
class Reply:
    text: str
    usage: Usage
    elapsed_ms: int  # latency of the call when it was paid for (stored with the answer)
    cached: bool  # served from the response cache: no call made now, nothing spent
    model: str
    finish_reason: str | None = None
    cache_key: str | None = None  # where the answer is stored, for :meth:`LLM.reject`


@dataclass
class RunStats:
    """What a run's model calls cost: paid calls, cache hits, failures, tokens and USD."""

    calls: int = 0
    cached: int = 0
    failed: int = 0
    paid: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    price_known: bool = True

    def as_manifest(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cached": self.cached,
            "failed": self.failed,
            "input_tokens": self.paid.input,
            "cached_input_tokens": self.paid.cached_input,
            "output_tokens": self.paid.output,
            "cost_usd": round(self.cost_usd, 6),
        }

    def line(self, model: str) -> str:
        """The cost line printed at the end of every command that calls a model."""
        cost = f"${self.cost_usd:.4f}" if self.price_known else "unknown (set EVAL_PRICES)"
        return (
            f"model {model}: {self.calls} paid call{'s' if self.calls != 1 else ''}, {self.cached} from cache, "
            f"{self.failed} failed; tokens {self.paid.input:,} in ({self.paid.cached_input:,} cached) / "
            f"{self.paid.output:,} out; cost {cost} (prices as of {PRICES_AS_OF} unless EVAL_PRICES is set)"
        )


class LLM:
    """The project's model client. Create once per run; ``await complete(...)`` from any task.

    ``cache=None`` disables caching (tests of the HTTP path). The underlying ``openai`` client is made
    on first use inside the running event loop.
    """

    def __init__(
        self,
        provider: Provider,
        *,
        cache: ResponseCache | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        retry_delay: float = UNREADABLE_RETRY_DELAY_S,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.provider = provider
        self.cache = cache
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_delay = retry_delay  # first backoff after an unreadable body (0 in tests)
        self.stats = RunStats()
        self.price: Price | None = price_for(provider.model)
        self.stats.price_known = self.price is not None
        self._client: openai.AsyncOpenAI | None = None
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def model(self) -> str:
        return self.provider.model

    def _ensure_client(self) -> tuple[openai.AsyncOpenAI, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            import openai  # here, not at the top: importing it takes a second every command would pay

            self._client = openai.AsyncOpenAI(
                api_key=self.provider.api_key,
                base_url=self.provider.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
            self._sem = asyncio.Semaphore(self.concurrency)
            self._loop = loop
        assert self._sem is not None
        return self._client, self._sem

    async def complete(
        self,
        kind: str,
        messages: list[dict[str, Any]],
        *,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        response_format: dict[str, Any] | None = None,
        attempt: int = 0,
        what: str = "",
    ) -> Reply:
        """One chat completion (or its cached answer).

        ``kind`` names the request type (``route``, ``write``, ...) for the fake model and the cache
        table; ``attempt`` > 0 asks for a fresh answer to the same messages (it is part of the cache
        key, not of the request); ``what`` describes the request in error messages (a session id, a
        turn). Raises :class:`ModelCallError` when the call still fails after all retries.
        """
        params: dict[str, Any] = {}
        if temperature is not None:
            params["temperature"] = temperature
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        if seed is not None:
            params["seed"] = seed
        if response_format is not None:
            params["response_format"] = response_format
        extra = self.provider.extra_body
        key = cache_key(self.provider.identity, self.model, messages, params, extra, attempt)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cached += 1
                return Reply(
                    text=hit["text"],
                    usage=Usage(**hit["usage"]),
                    elapsed_ms=hit["elapsed_ms"],
                    cached=True,
                    model=self.model,
                    finish_reason=hit.get("finish_reason"),
                    cache_key=key,
                )
        client, sem = self._ensure_client()
        async with sem:
            start = time.perf_counter()
            resp, choice, text = await self._ask(client, kind, what, messages, extra, params)
            elapsed_ms = int(round((time.perf_counter() - start) * 1000))
        usage = _usage_of(resp)
        self.stats.calls += 1
        self.stats.paid.add(usage)
        if self.price is not None:
            self.stats.cost_usd += self.price.cost(usage.input, usage.cached_input, usage.output)
        if self.cache is not None:
            self.cache.put(
                key,
                self.model,
                kind,
                {
                    "text": text,
                    "usage": {"input": usage.input, "cached_input": usage.cached_input, "output": usage.output},
                    "elapsed_ms": elapsed_ms,
                    "finish_reason": choice.finish_reason,
                },
            )
        return Reply(text, usage, elapsed_ms, False, self.model, choice.finish_reason, key if self.cache else None)

    async def _ask(self, client: Any, kind: str, what: str, messages: list[dict[str, Any]],
                   extra: dict[str, Any], params: dict[str, Any]) -> tuple[Any, Any, str]:
        """One request with its retries; returns ``(response, first choice, its text)``.

        HTTP errors, timeouts and dropped connections are retried by the ``openai`` client itself; an
        answer whose body cannot be read is retried here, with the same backoff, within the same
        ``max_retries``. Raises :class:`ModelCallError` once the tries are spent.
        """
        import openai  # already loaded by _ensure_client

        for attempt in range(self.max_retries + 1):
            try:
                resp = await client.chat.completions.create(
                    model=self.model,
                    messages=messages,
                    extra_body=extra or None,
                    extra_headers={KIND_HEADER: kind},
                    **params,
                )
            except openai.APIStatusError as exc:
                self.stats.failed += 1
                raise ModelCallError(kind, what, f"HTTP {exc.status_code}: {_brief(exc.message)}") from None
            except openai.APITimeoutError:
                self.stats.failed += 1
                raise ModelCallError(kind, what, f"timed out after {self.max_retries + 1} tries") from None
            except openai.APIConnectionError as exc:
                self.stats.failed += 1
                raise ModelCallError(kind, what, f"connection failed after {self.max_retries + 1} tries: {_brief(str(exc))}") from None
            except (openai.OpenAIError, ValueError) as exc:
                problem = f"unreadable answer: {_brief(str(exc))}"
            else:
                try:
                    choice = resp.choices[0]
                    return resp, choice, choice.message.content or ""
                except (AttributeError, IndexError, TypeError):
                    problem = "unreadable answer: it has no choices"
            if attempt < self.max_retries:
                await asyncio.sleep(min(self.retry_delay * 2**attempt, UNREADABLE_RETRY_MAX_S))
        self.stats.failed += 1
        raise ModelCallError(kind, what, f"{problem} ({self.max_retries + 1} tries)")

    def reject(self, reply: Reply) -> None:
        """Forget an answer its caller found unusable (bad JSON, wrong count...).

        Call it once the answer has been given up on, after any corrective retry: a later run then
        asks the model again instead of replaying the same unusable answer from the cache.
        """
        if self.cache is not None and reply.cache_key:
            self.cache.delete(reply.cache_key)

    def run(self, coro: Any) -> Any:
        """Run a coroutine to completion on a fresh event loop, closing the HTTP client after."""

        async def _main() -> Any:
            try:
                return await coro
            finally:
                await self.aclose()

        return asyncio.run(_main())

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    def cost_line(self) -> str:
        return self.stats.line(self.model)


def _usage_of(resp: Any) -> Usage:
    u = getattr(resp, "usage", None)
    if u is None:
        return Usage()
    cached = 0
    details = getattr(u, "prompt_tokens_details", None)
    if details is not None and getattr(details, "cached_tokens", None):
        cached = int(details.cached_tokens)
    # DeepSeek reports its prompt cache as prompt_cache_hit_tokens
    extra = getattr(u, "model_extra", None) or {}
    if not cached and extra.get("prompt_cache_hit_tokens"):
        cached = int(extra["prompt_cache_hit_tokens"])
    return Usage(int(u.prompt_tokens or 0), cached, int(u.completion_tokens or 0))


def _brief(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
