"""One async client for every model call of the project (generation, routing, reading, facts, mid-reply).

Built on the ``openai`` package for the HTTP path, with its own retries turned off: this module
retries, with exponential backoff, on 429, 5xx, timeouts and dropped connections, honouring
``Retry-After`` up to :data:`RETRY_AFTER_MAX_S`, and on a 200 answer it cannot use (a body that is
not JSON, no choices, no text, text cut off at the token limit, or a ``usage`` no provider could
have counted), which the ``openai`` client would hand back as final. The waits go through an
injected ``sleep`` and the latency through an injected ``clock``, so tests never wait.

Every answer is validated at this edge before it is used or cached, and a cached answer is
validated again when it is read: one that fails is dropped and asked again. A secret of the
environment echoed inside an answer's text is replaced by ``[redacted]`` on arrival, so no run,
cache or data file keeps it, and a stored answer that holds one is asked again. Every answer is stored
with the usage and latency it had when it was paid for, and a cached answer comes back with those
same figures (flagged ``cached``), so a rerun writes byte-identical files; the run's totals count
cached answers apart, at no cost. The first answer stored for a request is the one kept: a call
that finds another's answer stored on its return (another run sharing the cache paid for the same
request at once) hands back the kept one, so its rows are what a rerun replays. Within one run, a
request identical to one being paid for waits for it and takes its answer from the cache: it is paid
once, and the call that waited counts as a cache hit, as it does when the run is replayed.

An answer marked as the project's fake model's (``system_fingerprint``
:data:`~.provider.FAKE_FINGERPRINT`, which ``interleave-bench fake-model`` puts on every answer)
under a model name that is not the fake model's is counted (``fake_answers``; kept with the answer
in the cache, so a rerun from the cache counts it again): the run goes on, as tests and trials point
the client at the fake server under any name, but its usage record and
:meth:`RunStats.fake_line` say whose answers they were.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping, Optional

from ..errors import InterleaveError, clip, json_kind
from ..redaction import redact, redact_secrets
from ..schema import more_cached_than_sent
from .cache import ResponseCache, cache_key
from .prices import ENV_SOURCE, PRICES_AS_OF, Price, price_for
from .provider import FAKE_FINGERPRINT, FAKE_MODEL, Provider, is_fake_model

if TYPE_CHECKING:
    import openai

#: simultaneous requests in flight by default: enough to hide latency, few enough for rate limits
DEFAULT_CONCURRENCY = 8
#: sessions a run keeps in flight per allowed concurrent request (route's model policies, facts):
#: enough to keep the request pipe full while sessions, sequential inside, wait on their calls,
#: few enough that sessions finish (and are written) one after another rather than all at the end
SESSIONS_PER_SLOT = 2
#: retries of one request after the first try (429, 5xx, timeouts, dropped connections)
DEFAULT_MAX_RETRIES = 5
#: seconds one HTTP request may take before it counts as a timeout and is retried
DEFAULT_TIMEOUT_S = 120.0
#: first wait before asking again (after a 5xx, a timeout, a dropped connection or an unreadable
#: answer), doubled on each retry (the ``openai`` client's own schedule)
UNREADABLE_RETRY_DELAY_S = 0.5
#: the longest backoff between two tries (the ``openai`` client's own cap)
UNREADABLE_RETRY_MAX_S = 8.0
#: the longest wait a ``Retry-After`` is honoured for: a provider asking for more (100000 s) is
#: asked again after this, so a run neither stalls for a day nor gives up on a rate limit
RETRY_AFTER_MAX_S = 60.0
#: HTTP statuses asked again: request timeout, conflict, rate limit (and every 5xx)
RETRY_STATUSES = frozenset({408, 409, 429})
#: the most tokens one call may report in a usage count: no model reads or writes more in one
#: call, so a larger (or negative) count is a broken answer, not a cost
USAGE_MAX_TOKENS = 100_000_000
#: the finish reason of an answer cut off at the token limit: its text is not the whole answer
FINISH_CUT = "length"
#: the header telling the fake model which kind of request this is; real providers ignore it
KIND_HEADER = "X-Interleave-Kind"


class ModelCallError(InterleaveError):
    """A model call that still failed after every retry; names the request and the reason."""

    def __init__(self, kind: str, what: str, reason: str):
        self.kind = kind
        self.what = what
        self.reason = redact(reason)  # a provider's error text may echo the key: never kept
        super().__init__(f"model call failed ({kind}{': ' + what if what else ''}): {self.reason}")


@dataclass
class Usage:
    input: int = 0  # prompt tokens, cached ones included
    cached_input: int = 0  # prompt tokens the provider served from its prompt cache
    output: int = 0
    #: calls whose answer reported no token counts (no ``usage``, or one without ``prompt_tokens``
    #: or ``completion_tokens``): their tokens are unknown, not in the counts above, and so is the cost
    unreported: int = 0

    def add(self, other: "Usage") -> None:
        self.input += other.input
        self.cached_input += other.cached_input
        self.output += other.output
        self.unreported += other.unreported

    def as_row(self) -> dict[str, int]:
        """The prediction-row form (README.md#file-formats): ``{input, output, cache_hit}``, and
        ``unreported`` when a call's tokens are unknown."""
        row = {"input": self.input, "output": self.output, "cache_hit": self.cached_input}
        if self.unreported:
            row["unreported"] = self.unreported
        return row


@dataclass
class Reply:
    text: str
    usage: Usage
    elapsed_ms: int  # latency of the call when it was paid for (stored with the answer)
    cached: bool  # served from the response cache: no call made now, nothing spent
    model: str
    finish_reason: str | None = None
    cache_key: str | None = None  # where the answer is stored, for :meth:`LLM.reject`
    fake: bool = False  # marked as the project's fake model's answer (:data:`~.provider.FAKE_FINGERPRINT`)


#: the counts of a usage record (:func:`usage_record`): they add up across the runs that wrote one file.
#: ``fake_answers``: answers (paid or from the cache) the project's fake model gave under another
#: model's name (:attr:`RunStats.fake_answers`)
#: ``unreported``: paid calls whose answer reported no token counts (:attr:`Usage.unreported`)
USAGE_COUNTS = ("calls", "cached", "failed", "input_tokens", "cached_input_tokens", "output_tokens", "fake_answers",
                "unreported")


def usage_record(counts: Mapping[str, int], price: Price | None, model: str | None, *,
                 uncounted: bool = False) -> dict[str, Any]:
    """Model usage as every file records it (run record, manifest, summaries): the
    :data:`USAGE_COUNTS`, ``cost_usd`` (:func:`spent_usd`: paid calls at an unknown price cost
    ``None``, never 0.0) and ``price``, the figures used and where they came from (``None`` when unknown).
    ``uncounted`` (a run record's ``usage.uncounted``; given only when true): calls were paid that
    the counts leave out, so the cost is unknown."""
    out: dict[str, Any] = {k: int(counts.get(k, 0)) for k in USAGE_COUNTS}
    cost = spent_usd(price, out["calls"], out["input_tokens"], out["cached_input_tokens"], out["output_tokens"])
    out["cost_usd"] = None if cost is None or uncounted or out["unreported"] else round(cost, 6)
    out["price"] = None if price is None else price.record(model)
    if uncounted:
        out["uncounted"] = True
    return out


def spent_usd(price: Price | None, calls: int, input_tokens: int, cached_input_tokens: int,
              output_tokens: int) -> float | None:
    """What ``calls`` paid calls with these tokens cost at ``price``: 0.0 when no call was paid
    (whatever the price), ``None`` when calls were paid at a price that is unknown."""
    if not calls:
        return 0.0
    return None if price is None else price.cost(input_tokens, cached_input_tokens, output_tokens)


@dataclass
class RunStats:
    """What a run's model calls cost: paid calls, cache hits, failures, tokens and USD."""

    calls: int = 0
    cached: int = 0
    failed: int = 0
    paid: Usage = field(default_factory=Usage)
    #: the price of the run's model (``None``: unknown, and so is the cost)
    price: Price | None = None
    model: str | None = None
    #: answers, paid or from the cache, marked as the project's fake model's under a model name
    #: that is not the fake model's (an ``OPENAI_BASE_URL`` pointing at ``interleave-bench fake-model``)
    fake_answers: int = 0

    @property
    def cost_usd(self) -> float | None:
        """USD the paid calls cost at the run's price (:func:`spent_usd`); ``None`` too when a paid
        call's tokens are unknown (:attr:`Usage.unreported`)."""
        if self.paid.unreported:
            return None
        return spent_usd(self.price, self.calls, self.paid.input, self.paid.cached_input, self.paid.output)

    def counts(self) -> dict[str, int]:
        """The :data:`USAGE_COUNTS` so far."""
        return {"calls": self.calls, "cached": self.cached, "failed": self.failed, "input_tokens": self.paid.input,
                "cached_input_tokens": self.paid.cached_input, "output_tokens": self.paid.output,
                "fake_answers": self.fake_answers, "unreported": self.paid.unreported}

    def as_manifest(self) -> dict[str, Any]:
        """The run's usage as files record it (:func:`usage_record`)."""
        return usage_record(self.counts(), self.price, self.model)

    def line(self, model: str) -> str:
        """The cost line printed at the end of every command that calls a model: one statement of
        what was spent and at which prices (``EVAL_PRICES``, or the dated table), or that the price
        of ``model`` is unknown."""
        n = self.paid.unreported
        if n:
            cost = f"unknown (the provider reported no token counts for {n:,} call{'s' if n != 1 else ''})"
        elif self.cost_usd is None:
            cost = f"unknown ({model} is not in the price table of {PRICES_AS_OF}: set {ENV_SOURCE})"
        elif self.price is None:
            cost = f"${self.cost_usd:.4f} (no paid call)"
        elif is_fake_model(model):
            cost = f"${self.cost_usd:.4f} (the fake model is free: nothing spent)"
        elif self.price.source == ENV_SOURCE:
            cost = f"${self.cost_usd:.4f} (prices from {ENV_SOURCE})"
        else:
            cost = f"${self.cost_usd:.4f} (prices as of {PRICES_AS_OF}; {ENV_SOURCE} sets others)"
        return (
            f"model {model}: {self.calls:,} paid call{'s' if self.calls != 1 else ''}, {self.cached:,} from cache, "
            f"{self.failed:,} failed; {self.tokens_text(cached=True)}; cost {cost}"
        )

    def tokens_text(self, *, cached: bool = False) -> str:
        """``tokens 1,200 in / 300 out`` (with ``(200 cached)`` after the input when ``cached``):
        ``tokens unknown`` when no paid call reported its counts, and the reported calls' counts
        with how many went unreported when some did (:attr:`Usage.unreported`: unknown, never 0)."""
        n = self.paid.unreported
        if n and n >= self.calls:
            return "tokens unknown"
        text = (f"tokens {self.paid.input:,} in" + (f" ({self.paid.cached_input:,} cached)" if cached else "")
                + f" / {self.paid.output:,} out")
        return text + (f" (and {n:,} call{'s' if n != 1 else ''} unreported)" if n else "")

    def fake_line(self, model: str) -> str | None:
        """The line saying that answers under ``model``'s name came from the project's fake model
        (``None`` when none did): their figures are its keyword matching, not ``model``'s."""
        n = self.fake_answers
        if not n:
            return None
        return (f"warning: {n:,} answer{'s' if n != 1 else ''} came from the project's fake model ({FAKE_MODEL}: "
                f"its server marks each one), not from {model}: the figures are its keyword matching; a route run's "
                "record counts them (usage.fake_answers), and the leaderboard refuses the run")


def limits_problem(concurrency: int, timeout: float, max_retries: int) -> Optional[tuple[str, str]]:
    """``(setting, what is wrong)`` for the first of a client's limits out of range, else None: at
    least one request in flight, a timeout that is a positive number of seconds (not infinite: a
    slow server is a failed call, never a hung run), no negative retry count."""
    if concurrency < 1:
        return "concurrency", "must be at least 1"
    if not (isinstance(timeout, (int, float)) and 0 < timeout < math.inf):
        return "timeout", "must be a positive number of seconds"
    if max_retries < 0:
        return "max_retries", "must be 0 or more"
    return None


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
        sleep: Optional[Callable[[float], Awaitable[Any]]] = None,
        clock: Callable[[], float] = time.perf_counter,
        wall_clock: Callable[[], float] = time.time,
    ):
        problem = limits_problem(concurrency, timeout, max_retries)
        if problem is not None:
            raise ValueError(f"{problem[0]} {problem[1]}")
        self.provider = provider
        self.cache = cache
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_delay = retry_delay  # first backoff before a retry
        self.sleep = sleep or asyncio.sleep  # how a retry waits (tests hand in one that records)
        self.clock = clock  # seconds, for a call's latency
        self.wall_clock = wall_clock  # the time of day, for a Retry-After given as a date
        self.price: Price | None = price_for(provider.model)
        self.stats = RunStats(price=self.price, model=provider.model)
        self._client: openai.AsyncOpenAI | None = None
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: cache keys of the requests being paid for now, each with the event set once it is done
        self._paying: dict[str, asyncio.Event] = {}

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
                max_retries=0,  # retried here, where waits and answers are checked
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
        if self.cache is None:
            return await self._pay(key, kind, what, messages, extra, params)
        while True:
            hit = self.cache.get(key)
            cached = _cached_reply(hit, self.model, key) if hit is not None else None
            if cached is not None:
                self.stats.cached += 1
                self._count_fake(cached.fake)
                return cached
            if hit is not None:
                self.cache.delete(key)  # stored before answers were checked, and fails the check: ask again
            paying = self._paying.get(key)
            if paying is None:
                break
            await paying.wait()  # the same request is being paid for: its answer, once stored, is this one's
        self._paying[key] = paying = asyncio.Event()
        try:
            return await self._pay(key, kind, what, messages, extra, params)
        finally:
            del self._paying[key]
            paying.set()

    async def _pay(self, key: str, kind: str, what: str, messages: list[dict[str, Any]], extra: dict[str, Any],
                   params: dict[str, Any]) -> Reply:
        """The paid call of :meth:`complete`, its answer stored in the cache."""
        client, sem = self._ensure_client()
        async with sem:
            start = self.clock()
            choice, text, usage, fake = await self._ask(client, kind, what, messages, extra, params)
            elapsed_ms = max(0, int(round((self.clock() - start) * 1000)))
        self.stats.calls += 1
        self.stats.paid.add(usage)
        self._count_fake(fake)
        if self.cache is not None:
            stored = {
                "text": text,
                "usage": {"input": usage.input, "cached_input": usage.cached_input, "output": usage.output,
                          **({"unreported": usage.unreported} if usage.unreported else {})},
                "elapsed_ms": elapsed_ms,
                "finish_reason": choice.finish_reason,
            }
            if fake:  # kept with the answer: a rerun served from the cache says whose it was too
                stored["fake"] = True
            # the answer the cache keeps, which may be another run's paid for at the same time: the
            # reply carries its text, usage and latency, as a rerun from the cache replays them
            kept = _cached_reply(self.cache.put(key, self.model, kind, stored), self.model, key)
            if kept is not None:
                return replace(kept, cached=False)
        return Reply(text, usage, elapsed_ms, False, self.model, choice.finish_reason, key if self.cache else None, fake)

    def _count_fake(self, fake: bool) -> None:
        """Count an answer of the fake model given under another model's name (:attr:`RunStats.fake_answers`)."""
        if fake and not is_fake_model(self.model):
            self.stats.fake_answers += 1

    async def _ask(self, client: Any, kind: str, what: str, messages: list[dict[str, Any]],
                   extra: dict[str, Any], params: dict[str, Any]) -> tuple[Any, str, Usage, bool]:
        """One request with its retries; returns ``(first choice, its text, its usage, whether the
        fake model's mark is on it)``, checked.

        429, 408, 409 and 5xx answers, timeouts, dropped connections and unusable 200 answers are
        asked again up to ``max_retries`` times, each after :meth:`_wait`; any other HTTP error
        fails at once. Raises :class:`ModelCallError` once the tries are spent.
        """
        import openai  # already loaded by _ensure_client

        tries = self.max_retries + 1
        for attempt in range(tries):
            headers: Mapping[str, str] = {}
            try:
                raw = await client.chat.completions.with_raw_response.create(
                    model=self.model,
                    messages=messages,
                    extra_body=extra or None,
                    extra_headers={KIND_HEADER: kind},
                    **params,
                )
                resp = raw.parse()
                # the usage as sent: the parsed one reads ``true`` as 1 token, ``2.0`` as 2
                body = raw.http_response.json()
            except openai.APIStatusError as exc:
                headers = exc.response.headers
                problem = f"HTTP {exc.status_code}: {_brief(exc.message)}"
                if not _retryable(exc.status_code, headers):
                    self.stats.failed += 1
                    raise ModelCallError(kind, what, problem) from None
            except openai.APITimeoutError:
                problem = f"timed out after {tries} tries"
            except openai.APIConnectionError as exc:
                problem = f"connection failed after {tries} tries: {_brief(str(exc))}"
            except (openai.OpenAIError, ValueError) as exc:
                problem = f"unreadable answer: {_brief(str(exc))}"
            else:
                try:
                    return _checked(resp, body.get("usage") if isinstance(body, dict) else None)
                except Unreadable as exc:
                    problem = f"unreadable answer: {exc}"
            if attempt < self.max_retries:
                await self.sleep(self._wait(attempt, headers))
        self.stats.failed += 1
        if problem.startswith(("unreadable", "HTTP")):
            problem = f"{problem} ({tries} tries)"
        raise ModelCallError(kind, what, problem)

    def _wait(self, attempt: int, headers: Mapping[str, str]) -> float:
        """Seconds before try ``attempt + 2``: what ``Retry-After`` asks (capped at
        :data:`RETRY_AFTER_MAX_S`), else the backoff, doubled per retry up to its cap."""
        asked = retry_after(headers, self.wall_clock())
        if asked is not None:
            return min(asked, RETRY_AFTER_MAX_S)
        return min(self.retry_delay * 2**attempt, UNREADABLE_RETRY_MAX_S)

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

    def fake_line(self) -> str | None:
        """:meth:`RunStats.fake_line` of this run's model."""
        return self.stats.fake_line(self.model)


class Unreadable(ValueError):
    """An answer that came back but cannot be used: it is asked again, never cached."""


def _retryable(status: int, headers: Mapping[str, str]) -> bool:
    """Whether an HTTP error is worth asking again: the provider's ``x-should-retry`` when it says,
    else 408, 409, 429 and every 5xx."""
    said = str(headers.get("x-should-retry", "")).lower()
    if said in ("true", "false"):
        return said == "true"
    return status in RETRY_STATUSES or status >= 500


def retry_after(headers: Mapping[str, str], now: float) -> Optional[float]:
    """The wait a provider asked for, in seconds (``retry-after-ms``, or ``Retry-After`` as
    seconds or as an HTTP date, against ``now``), or ``None`` when it asked for none it can mean."""
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            value = float(ms) / 1000
            return value if math.isfinite(value) and value > 0 else None
        raw = headers.get("retry-after")
        if raw is None:
            return None
        try:
            value = float(raw)
        except ValueError:
            when = email.utils.parsedate_to_datetime(raw)
            value = when.timestamp() - now
        return value if math.isfinite(value) and value > 0 else None
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


def _count(value: Any, name: str) -> int:
    """A token count of an answer's usage, checked: absent is 0; else a whole number (not a
    boolean, not a float) in 0..:data:`USAGE_MAX_TOKENS`."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise Unreadable(f"usage {name} is {_brief(repr(value), 40)}, not a whole number")
    if not 0 <= value <= USAGE_MAX_TOKENS:
        raise Unreadable(f"usage {name} is {_brief(str(value), 40)}, outside 0..{USAGE_MAX_TOKENS:,}")
    return value


def usage_of(u: Any) -> Usage:
    """The usage block of an answer (an object or a dict), checked: raises :class:`Unreadable` for
    a count no provider could have made (negative, absurd, not a number, more cached than sent).
    An answer with no usage, or one without ``prompt_tokens`` or ``completion_tokens``, reported
    none: its tokens are unknown (``Usage(unreported=1)``), never 0."""
    if u is None:
        return Usage(unreported=1)
    if not isinstance(u, dict) and callable(getattr(u, "model_dump", None)):
        u = u.model_dump()
    get = u.get if isinstance(u, dict) else (lambda k: getattr(u, k, None))
    if get("prompt_tokens") is None or get("completion_tokens") is None:
        return Usage(unreported=1)
    prompt = _count(get("prompt_tokens"), "prompt_tokens")
    output = _count(get("completion_tokens"), "completion_tokens")
    cached = 0
    details = get("prompt_tokens_details")
    if details is not None:
        found = details.get("cached_tokens") if isinstance(details, dict) else getattr(details, "cached_tokens", None)
        cached = _count(found, "prompt_tokens_details.cached_tokens")
    extra = (u if isinstance(u, dict) else getattr(u, "model_extra", None)) or {}  # DeepSeek's prompt_cache_hit_tokens
    if not cached and extra.get("prompt_cache_hit_tokens") is not None:
        cached = _count(extra.get("prompt_cache_hit_tokens"), "prompt_cache_hit_tokens")
    if more_cached_than_sent(prompt, cached):
        raise Unreadable(f"usage says {cached} cached of {prompt} prompt tokens")
    return Usage(prompt, cached, output)


def _checked(resp: Any, usage: Any = None) -> tuple[Any, str, Usage, bool]:
    """``(first choice, its text, usage, marked)`` of an answer, ``marked`` when its
    ``system_fingerprint`` is the fake model's (:data:`~.provider.FAKE_FINGERPRINT`); raises
    :class:`Unreadable` when there is no choice, no text (``content: null`` or empty), text cut off
    at the token limit, or a usage no provider could have counted. ``usage``: the answer's usage as
    sent (the JSON body's), checked instead of the parsed one's."""
    try:
        choice = resp.choices[0]
        text = choice.message.content
    except (AttributeError, IndexError, TypeError, KeyError):
        raise Unreadable("it has no choices") from None
    if not isinstance(text, str) or not text.strip():  # (42 or a list is no empty text: it says what it is)
        raise Unreadable("it has no text (content is null or empty)" if text is None or isinstance(text, str)
                         else f"its content is {json_kind(text)}, not text")
    if choice.finish_reason == FINISH_CUT:
        raise Unreadable("its text was cut off at the token limit (finish_reason length)")
    # a provider that echoes the key inside an answer: never kept (cache, rows, data); other text is unchanged
    marked = getattr(resp, "system_fingerprint", None) == FAKE_FINGERPRINT
    return choice, redact_secrets(text), usage_of(usage if usage is not None else getattr(resp, "usage", None)), marked


def _cached_reply(hit: Any, model: str, key: str) -> Optional[Reply]:
    """The stored answer as a :class:`Reply`, or ``None`` when it fails the checks an answer from
    the provider must pass (it was stored before they existed, or the file was edited)."""
    if not isinstance(hit, dict):
        return None
    try:
        text, stored, elapsed = hit["text"], hit["usage"], hit["elapsed_ms"]
        if not isinstance(text, str) or not text.strip() or hit.get("finish_reason") == FINISH_CUT:
            return None
        if redact_secrets(text) != text:  # stored before answers were redacted: ask again, never replay a key
            return None
        usage = Usage(_count(stored["input"], "input"), _count(stored["cached_input"], "cached_input"),
                      _count(stored["output"], "output"), _count(stored.get("unreported"), "unreported"))
        if usage.cached_input > usage.input or isinstance(elapsed, bool) or not isinstance(elapsed, int) or elapsed < 0:
            return None
    except (Unreadable, KeyError, TypeError):
        return None
    return Reply(text=text, usage=usage, elapsed_ms=elapsed, cached=True, model=model,
                 finish_reason=hit.get("finish_reason"), cache_key=key, fake=hit.get("fake") is True)


def _brief(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut to ``limit`` characters once redacted: a key cut short first would
    no longer be found, and its first part would be kept."""
    return clip(" ".join(redact(str(text)).split()), limit)
