"""The fake model: deterministic answers to every kind of request this project makes.

Each part of the project registers the handler for its own request kinds with
:func:`fake_handler` in a ``fake`` module of its own (listed in :data:`HANDLER_MODULES`), so the
fake model knows the same prompts and answer formats as the real code paths. ``--dry-run`` and the
tests reach it over real HTTP through :mod:`interleave_bench.llm.server`.

A handler gets the request's messages and body and returns the answer text. The same request
always gets the same answer.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
from typing import Any, Callable

Handler = Callable[[list[dict[str, Any]], dict[str, Any]], str]

#: the modules that register handlers; each is imported on first use, if present
HANDLER_MODULES = (
    "interleave_bench.generate.fake",
    "interleave_bench.route.fake",
    "interleave_bench.midreply.fake",
    "interleave_bench.facts.fake",
)

HANDLERS: dict[str, Handler] = {}
_loaded = False


def fake_handler(kind: str) -> Callable[[Handler], Handler]:
    """Register ``fn`` as the fake model's answer to requests of ``kind``."""

    def deco(fn: Handler) -> Handler:
        HANDLERS[kind] = fn
        return fn

    return deco


def _load_handlers() -> None:
    global _loaded
    if _loaded:
        return
    for name in HANDLER_MODULES:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)
    _loaded = True


def stable_hash(*parts: Any) -> int:
    """A hash that is the same in every process (unlike ``hash()``), for deterministic choices."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return int.from_bytes(hashlib.sha256(blob.encode("utf-8")).digest()[:8], "big")


def count_tokens(text: str) -> int:
    """The fake model's token count: about four characters a token, at least one."""
    return max(1, (len(text) + 3) // 4)


def answer(kind: str | None, messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """The fake model's answer to one request."""
    _load_handlers()
    handler = HANDLERS.get(kind or "")
    if handler is not None:
        return handler(messages, body)
    # An unknown kind gets a deterministic echo, so generic clients (and tests) still get an answer.
    last = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    return json.dumps({"echo": str(last)[:200], "hash": stable_hash(messages) % 10_000}, ensure_ascii=False)
