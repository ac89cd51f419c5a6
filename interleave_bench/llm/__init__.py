"""The model layer: one async OpenAI-compatible client with cache, concurrency, retries and cost.

Commands open a model session with :func:`model_session` (real provider from the environment, or
the fake model on loopback for ``--dry-run``) and call ``await llm.complete(kind, messages)``.
"""

from __future__ import annotations

from typing import Any

#: what the package offers, and the module of each (loaded when first asked for: a command that
#: only reads prices, such as ``score``, loads neither the client nor its event loop)
_WHERE = {
    "LLM": "client", "ModelCallError": "client", "Reply": "client", "RunStats": "client", "Usage": "client",
    "DEFAULT_CONCURRENCY": "client", "DEFAULT_MAX_RETRIES": "client", "DEFAULT_TIMEOUT_S": "client",
    "Provider": "provider", "fake_provider": "provider", "resolve_provider": "provider",
    "ResponseCache": "cache", "DEFAULT_CACHE_DIR": "cache",
    "model_session": "session", "add_model_arguments": "session", "model_session_from_args": "session",
    "cache_dir_from": "session", "model_options_given": "session",
}

__all__ = [
    "LLM", "ModelCallError", "Reply", "RunStats", "Usage", "Provider", "ResponseCache",
    "model_session", "add_model_arguments", "model_session_from_args", "cache_dir_from", "model_options_given",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
