"""Which OpenAI-compatible endpoint and model a run talks to, read from the environment.

- ``OPENAI_BASE_URL`` + ``OPENAI_API_KEY`` with ``--model NAME``: any OpenAI-compatible server
  (a URL no HTTP client can use, ``http://host:99999``, is refused in one line before any call).
- ``DEEPSEEK_API_KEY``: DeepSeek's documented endpoint; ``--model`` defaults to ``deepseek-chat``
  (``deepseek-reasoner`` is the other documented name).
- ``--dry-run``: the project's fake model on loopback; nothing is spent.

``EVAL_EXTRA_BODY`` (a JSON object) is merged into every request; it may not set what the client
sets itself (:data:`OWN_BODY_KEYS`), nor hold what JSON has no number for (NaN, Infinity). The API key lives only in the
:class:`Provider` object in memory: it is never part of a cache key, a file, a log or a result.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError, UsageError
from ..redaction import is_key_in_use
from ..urls import require_base_url
from ..strictjson import parse_strict

DEEPSEEK_BASE_URL = "https://api.deepseek.com"
DEEPSEEK_MODELS = ("deepseek-chat", "deepseek-reasoner")
DEEPSEEK_DEFAULT_MODEL = "deepseek-chat"
#: the fake model's name; its answers are deterministic and free
FAKE_MODEL = "fake-model"
#: the cache identity of the fake model: stable across runs although its loopback port changes
FAKE_IDENTITY = "fake://interleave-bench"
#: the ``system_fingerprint`` the fake server puts on every answer (a field of OpenAI's chat
#: completion, which the openai client exposes): an answer that carries it came from the fake
#: model, whatever model name the request gave and the answer echoes
FAKE_FINGERPRINT = "fp_interleave-bench-fake-model"


def is_fake_model(name: object) -> bool:
    """Whether a run's model name is the project's fake model: ``fake-model`` itself, or as a
    harness names it through a provider (inspect's ``openai-api/fake/fake-model``, the path's last
    part). Its answers are keyword matching, never figures to rank beside a model's."""
    return isinstance(name, str) and name.rsplit("/", 1)[-1] == FAKE_MODEL
#: what the client sets itself in a request body (``LLM.complete``: the model, the prompt and each
#: request's own settings): ``EVAL_EXTRA_BODY``, merged in last, would silently override them
OWN_BODY_KEYS = ("model", "messages", "temperature", "max_tokens", "seed", "response_format")


@dataclass
class Provider:
    name: str  # "openai-compatible", "deepseek" or "dry-run"
    base_url: str
    model: str
    api_key: str = field(repr=False)
    extra_body: dict[str, Any] = field(default_factory=dict)
    identity: str = ""  # what the cache keys on instead of the URL (defaults to the URL)

    def __post_init__(self) -> None:
        if not self.identity:
            self.identity = self.base_url.rstrip("/")

    def describe(self) -> str:
        """Safe to print or store: names the endpoint and model, never the key."""
        return f"{self.model} via {self.identity}"


def extra_body_from_env(env: dict[str, str] | None = None) -> dict[str, Any]:
    env = os.environ if env is None else env
    raw = env.get("EVAL_EXTRA_BODY", "").strip()
    if not raw:
        return {}
    try:  # strictly: a NaN or Infinity, which no request body can carry, is refused before any call
        value = parse_strict("EVAL_EXTRA_BODY", None, raw)
    except InputError as exc:  # (an environment variable has no lines to name)
        raise UsageError(f"EVAL_EXTRA_BODY: {exc.field + ': ' if exc.field else ''}{exc.message}") from None
    if not isinstance(value, dict):
        raise UsageError(f"EVAL_EXTRA_BODY: expected a JSON object, got {type(value).__name__}")
    own = [k for k in value if k in OWN_BODY_KEYS]
    if own:
        hint = "; name the model with --model" if "model" in own else ""
        raise UsageError(f"EVAL_EXTRA_BODY: {', '.join(map(repr, own))} would override what interleave-bench sets in its "
                         f"requests ({', '.join(OWN_BODY_KEYS)}): drop {'it' if len(own) == 1 else 'them'}{hint}")
    return value


def _key_apart(variable: str, key: str, model: str) -> str:
    """``key``, refused in one line when the model's name holds it: every file and line keeps the key
    in use out (:func:`~interleave_bench.redaction.redact`), so the name would be written as
    ``[redacted]`` in every row and record. A server that takes any key ("lm-studio") takes another."""
    if is_key_in_use(key) and key in model:
        raise UsageError(f"{variable} is part of the model's name ({variable} is kept out of every file and line "
                         f"written, so the model would be named [redacted] in every row): give the server another key")
    return key


def resolve_provider(model: str | None = None, *, env: dict[str, str] | None = None) -> Provider:
    """The provider for a real (paid) run, from the environment; a clear error when none is set."""
    env = os.environ if env is None else env
    extra = extra_body_from_env(env)
    base = env.get("OPENAI_BASE_URL", "").strip()
    if base:
        require_base_url("OPENAI_BASE_URL", base)  # before any call: the client's own error would be no one line
        key = env.get("OPENAI_API_KEY", "").strip()
        if not key:
            raise UsageError("OPENAI_BASE_URL is set but OPENAI_API_KEY is not")
        if not model:
            raise UsageError("OPENAI_BASE_URL is set: name the model with --model NAME")
        return Provider("openai-compatible", base, model, _key_apart("OPENAI_API_KEY", key, model), extra)
    key = env.get("DEEPSEEK_API_KEY", "").strip()
    if key:
        model = model or DEEPSEEK_DEFAULT_MODEL
        return Provider("deepseek", DEEPSEEK_BASE_URL, model, _key_apart("DEEPSEEK_API_KEY", key, model), extra)
    raise UsageError(
        "no model configured: set DEEPSEEK_API_KEY, or OPENAI_BASE_URL and OPENAI_API_KEY with --model; "
        "or use --dry-run (fake model) or --offline where the command has it"
    )


def fake_provider(base_url: str, *, env: dict[str, str] | None = None,
                  extra_body: dict[str, Any] | None = None) -> Provider:
    """The dry-run provider: the fake model served on loopback at ``base_url``, with ``extra_body``
    (else the environment's, :func:`extra_body_from_env`)."""
    extra = extra_body_from_env(env) if extra_body is None else extra_body
    return Provider("dry-run", base_url, FAKE_MODEL, "dry-run-no-key", extra, identity=FAKE_IDENTITY)


def dry_run_model(model: str | None) -> str:
    """The model a dry run answers as: the fake model. A ``--model`` naming another is refused: its
    name would go on the fake model's answers (the output file, every row, the cost line's prices)
    as though that model had given them, and a facts run would resume that model's real results."""
    if model is not None and model != FAKE_MODEL:
        raise UsageError(f"--dry-run answers with the project's fake model ({FAKE_MODEL}), and --model {model} would "
                         f"put {model}'s name on its answers: drop --model, or drop --dry-run to call {model}")
    return FAKE_MODEL


def run_model(model: str | None, dry_run: bool) -> str:
    """The model a run's answers come from: the fake model for a dry run (:func:`dry_run_model`),
    else ``model`` or the one the environment configures (:func:`resolve_provider`)."""
    return dry_run_model(model) if dry_run else model or resolve_provider(None).model
