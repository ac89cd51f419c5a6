"""One JSON request to the model with its checks and one corrective retry.

Every model step of generation (threads, writing, rewriting, reading) goes through :func:`ask_json`:
the answer is parsed and checked; if it fails, the model's answer and a message listing the problems
are added to the conversation and the model answers once more (a new cache key, so a rerun replays
both answers from the cache). A step that is still unusable, or whose call fails after the client's
own retries, fails the session with :class:`SessionFailed`; the run goes on with the others. The
unusable answers of a step given up on are removed from the cache (:meth:`LLM.reject`), so a rerun
asks the model again instead of replaying the same failure.
"""

from __future__ import annotations

import os
from typing import Any, Callable, TypeVar

from ..llm import LLM, ModelCallError, Reply
from .prompts import correction
from .text import AnswerError, parse_json_object

T = TypeVar("T")

#: set to 0 for a server that rejects ``response_format`` (the prompts ask for JSON either way)
JSON_MODE_ENV = "INTERLEAVE_JSON_MODE"


def json_mode() -> dict[str, Any] | None:
    """The ``response_format`` of every generation request: JSON mode unless switched off."""
    return None if os.environ.get(JSON_MODE_ENV, "1").strip() in ("0", "false", "no") else {"type": "json_object"}


class SessionFailed(Exception):
    """A session that cannot be generated; ``reason`` goes into the manifest's ``failed`` list."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


async def ask_json(
    llm: LLM,
    kind: str,
    messages: list[dict[str, Any]],
    check: Callable[[dict[str, Any]], T],
    *,
    lang: str,
    stage: str,
    what: str,
    temperature: float,
    max_tokens: int,
    retry: bool = True,
) -> T:
    """The checked answer to one request; ``check`` raises :class:`AnswerError` for a bad answer.

    ``stage`` names the step in failure reasons (``"write rows 8-15"``). With ``retry=False`` a bad
    answer raises :class:`AnswerError` at once (the leak rewrite is itself the one retry) and stays
    cached, since the caller keeps the session with that outcome. Raises :class:`SessionFailed` when
    the step cannot produce a usable answer, after rejecting its unusable answers from the cache.
    """
    convo = list(messages)
    unusable: list[Reply] = []
    for attempt in range(2 if retry else 1):
        try:
            reply = await llm.complete(
                kind, convo, temperature=temperature, max_tokens=max_tokens,
                response_format=json_mode(), what=what,
            )
        except ModelCallError as exc:
            _forget(llm, unusable)
            raise SessionFailed(f"{stage}: {exc.reason}") from None
        try:
            return check(parse_json_object(reply.text))
        except AnswerError as exc:
            problems = exc.problems
            if not retry:
                raise  # the caller keeps the session with this outcome: a rerun must reproduce it
            unusable.append(reply)
        if attempt == 0:
            convo = convo + [
                {"role": "assistant", "content": reply.text},
                {"role": "user", "content": correction(lang, problems)},
            ]
    _forget(llm, unusable)
    raise SessionFailed(f"{stage}: {problems[0]} (still wrong after one corrective retry)")


def _forget(llm: LLM, replies: list[Reply]) -> None:
    """Drop the cached answers of a step given up on: replayed, they would fail the same way."""
    for reply in replies:
        llm.reject(reply)
