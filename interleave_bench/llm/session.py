"""Model sessions: one :class:`~.client.LLM` for a run, configured from the environment and the options."""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from .cache import DEFAULT_CACHE_DIR, ResponseCache
from .client import DEFAULT_CONCURRENCY, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_S, LLM, limits_problem
from .provider import dry_run_model, extra_body_from_env, fake_provider, resolve_provider
from ..interrupted import note_answers
from ..options import read_number, whole_number


def cache_dir_from(value: str | None) -> str:
    """The cache folder: ``--cache``, else ``INTERLEAVE_CACHE``, else ``.cache/``."""
    return cache_dir_named(value)[0]


def cache_dir_named(value: str | None) -> tuple[str, str]:
    """The cache folder (:func:`cache_dir_from`) and how a message names it: ``--cache DIR``,
    ``INTERLEAVE_CACHE=DIR``, or the default folder's name."""
    if value:
        return value, f"--cache {value}"
    env = os.environ.get("INTERLEAVE_CACHE")
    return (env, f"INTERLEAVE_CACHE={env}") if env else (DEFAULT_CACHE_DIR, DEFAULT_CACHE_DIR)


@contextmanager
def model_session(
    *,
    model: str | None = None,
    dry_run: bool = False,
    cache_dir: str | None = None,
    use_cache: bool = True,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> Iterator[LLM]:
    """An :class:`LLM` for one run. ``dry_run`` serves the fake model on loopback for the run's length.

    A run that stops early (Ctrl-C, or an error that ends it) after paying for calls still prints
    its cost line on stderr, as a finished run does: what was spent is never left unsaid; Ctrl-C's
    line then says where the answers paid for are kept (:func:`~..interrupted.note_answers`). A run
    given answers of the project's fake model under another model's name ends, stopped or not, with
    the line saying so on stderr (:meth:`~.client.RunStats.fake_line`)."""
    problem = limits_problem(concurrency, timeout, max_retries)
    if problem is not None:  # before anything is started that would have to be stopped
        raise ValueError(f"{problem[0]} {problem[1]}")
    if dry_run:
        dry_run_model(model)  # before the server starts
        extra = extra_body_from_env()  # likewise
    else:
        provider = resolve_provider(model)
    # a cache file it cannot use is refused here, before the server starts
    cache = ResponseCache(*cache_dir_named(cache_dir)) if use_cache else None
    server = None
    try:
        if dry_run:
            from .server import FakeServer

            server = FakeServer().start()
            provider = fake_provider(server.url, extra_body=extra)
        llm = LLM(provider, cache=cache, concurrency=concurrency, timeout=timeout, max_retries=max_retries)
        try:
            yield llm
        except BaseException as exc:
            if llm.stats.calls:  # paid for something (a run whose calls all failed spent nothing: its error says it)
                print(llm.cost_line(), file=sys.stderr)
                if isinstance(exc, KeyboardInterrupt):  # the line Ctrl-C ends with says where its answers are
                    note_answers(exc, cache.folder if cache is not None else None)
            raise
        finally:
            fake = llm.fake_line()
            if fake is not None:  # after the cost line: whose answers the figures are
                print(fake, file=sys.stderr)
    finally:
        if cache is not None:
            cache.close()
        if server is not None:
            server.stop()


#: where a parsed namespace keeps the model options given on the command line (their flags)
_GIVEN = "model_options_given"


class _Given(argparse.Action):
    """Store the value, and note the flag as given: a run that calls no model can then refuse an
    option it would ignore, even one given at its default value."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: ANN001 - argparse's protocol
        setattr(namespace, self.dest, True if self.nargs == 0 else values)
        given = list(getattr(namespace, _GIVEN, None) or ())
        if option_string not in given:
            given.append(option_string)
        setattr(namespace, _GIVEN, given)


def _limit(setting: str, read: Callable[[str], Any]) -> Callable[[str], Any]:
    """The ``type`` of a client limit's option: read, then held to :func:`~.client.limits_problem`'s
    range as it is read, so every command refuses a value out of range in one line before it opens
    an output or finds its work already done."""
    defaults = {"concurrency": DEFAULT_CONCURRENCY, "timeout": DEFAULT_TIMEOUT_S, "max_retries": DEFAULT_MAX_RETRIES}

    def limit(text: str) -> Any:
        try:
            value = read(text)
        except ValueError:  # (read_number's: the whole-number type says its own)
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        problem = limits_problem(**{**defaults, setting: value})
        if problem is not None:
            raise argparse.ArgumentTypeError(f"{problem[1]}, got {text}")
        return value

    return limit


def add_model_arguments(p: argparse.ArgumentParser, *, dry_run: bool = True) -> None:
    """The options every model-calling command shares (:func:`model_options_given` says which a
    command line gave)."""
    g = p.add_argument_group("model")
    flag = {"action": _Given, "nargs": 0, "default": False}
    g.add_argument("--model", action=_Given, help="model name (default: deepseek-chat with DEEPSEEK_API_KEY; required with OPENAI_BASE_URL)")
    if dry_run:
        g.add_argument("--dry-run", **flag, help="answer with the fake model on loopback: nothing is spent")
    g.add_argument("--concurrency", action=_Given, type=_limit("concurrency", whole_number()), default=DEFAULT_CONCURRENCY, help=f"requests in flight at once (default {DEFAULT_CONCURRENCY})")
    g.add_argument("--cache", action=_Given, metavar="DIR", help="response cache folder (default: $INTERLEAVE_CACHE or .cache/)")
    g.add_argument("--no-cache", **flag, help="neither read nor write the response cache")
    g.add_argument("--timeout", action=_Given, type=_limit("timeout", read_number), default=DEFAULT_TIMEOUT_S, help=f"seconds per request (default {DEFAULT_TIMEOUT_S:g})")
    g.add_argument("--max-retries", action=_Given, type=_limit("max_retries", whole_number()), default=DEFAULT_MAX_RETRIES, help=f"retries per request on 429/5xx/timeouts (default {DEFAULT_MAX_RETRIES})")


def model_options_given(args: argparse.Namespace) -> list[str]:
    """The flags of :func:`add_model_arguments` that the command line gave, in the order given."""
    return list(getattr(args, _GIVEN, None) or ())


def model_session_from_args(args: argparse.Namespace):
    """:func:`model_session` configured from :func:`add_model_arguments` options."""
    from ..errors import UsageError

    problem = limits_problem(args.concurrency, args.timeout, args.max_retries)
    if problem is not None:
        raise UsageError(f"--{problem[0].replace('_', '-')} {problem[1]}")
    return model_session(
        model=args.model,
        dry_run=getattr(args, "dry_run", False),
        cache_dir=args.cache,
        use_cache=not args.no_cache,
        concurrency=args.concurrency,
        timeout=args.timeout,
        max_retries=args.max_retries,
    )
