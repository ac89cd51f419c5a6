"""The fake model: deterministic answers to every kind of request this project makes.

Each part of the project answers its own request kinds in a ``fake`` module of its own
(``generate/fake.py``, ``route/fake.py``, ...) whose handlers register with :func:`fake_handler`
when it is imported, so the fake model knows the same prompts and answer formats as the real code
paths. This layer never names those modules: a command imports its part's ``fake`` module before it
starts a dry run (the tests import them in ``conftest.py``), or hands handlers in with
:func:`register`. ``--dry-run`` and the tests reach the fake model over real HTTP through
:mod:`interleave_bench.llm.server`.

A handler gets the request's messages and body and returns the answer text. The same request
always gets the same answer.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Mapping

Handler = Callable[[list[dict[str, Any]], dict[str, Any]], str]

#: the fake model's answer to each request kind, as registered by the parts of the project
HANDLERS: dict[str, Handler] = {}


def fake_handler(kind: str) -> Callable[[Handler], Handler]:
    """Register ``fn`` as the fake model's answer to requests of ``kind``."""

    def deco(fn: Handler) -> Handler:
        HANDLERS[kind] = fn
        return fn

    return deco


def register(handlers: Mapping[str, Handler]) -> None:
    """Register several handlers at once: ``{kind: handler}`` (a later registration of a kind wins)."""
    HANDLERS.update(handlers)


def stable_hash(*parts: Any) -> int:
    """A hash that is the same in every process (unlike ``hash()``), for deterministic choices."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return int.from_bytes(hashlib.sha256(blob.encode("utf-8")).digest()[:8], "big")


def count_tokens(text: str) -> int:
    """The fake model's token count: about four characters a token, at least one."""
    return max(1, (len(text) + 3) // 4)


def answer(kind: str | None, messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """The fake model's answer to one request (a deterministic echo for a kind nobody registered)."""
    handler = HANDLERS.get(kind or "")
    if handler is not None:
        return handler(messages, body)
    # An unknown kind gets a deterministic echo, so generic clients (and tests) still get an answer.
    last = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    return json.dumps({"echo": str(last)[:200], "hash": stable_hash(messages) % 10_000}, ensure_ascii=False)
