"""What a model call costs: one documented, dated default price table, overridable per run.

Prices are USD per million tokens as ``(input, cached_input, output)``. ``EVAL_PRICES="in,cached,out"``
overrides the table for every model of a run but the project's fake model, which is free whatever
the override (a dry run spends nothing, and no file says it did). A model missing from the table
has no price: its cost is unknown (``None`` in every file, "cost unknown" in every line), never a
made-up number. A scored run is costed at the price its run record says it was paid at
(:func:`price_of_run`) unless ``EVAL_PRICES`` is set.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Union

from ..errors import InputError, UsageError
from ..schema import more_cached_than_sent
from .provider import FAKE_MODEL, is_fake_model

#: the day the default table was copied from the providers' published price pages
PRICES_AS_OF = "2025-09-29"
#: the highest price (USD per million tokens, of each of the three figures) any reader of a price
#: takes: well above every published price (the dearest models ask hundreds), far below any
#: that could make a cost overflow (a run of a billion calls of the most tokens a call may report,
#: ``client.USAGE_MAX_TOKENS``, costs about 1e21 USD at it)
MAX_PRICE_PER_MILLION = 10_000.0


def price_problem(values: "tuple[Any, ...] | list[Any]") -> str | None:
    """Why three figures ``(input, cached_input, output)`` are no price (``None`` when they are
    one): each a finite number, not a boolean, from 0 to :data:`MAX_PRICE_PER_MILLION` USD per
    million tokens."""
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"{value!r} is not a finite number"
        if not 0 <= value <= MAX_PRICE_PER_MILLION:
            return f"{value:g} is outside 0..{MAX_PRICE_PER_MILLION:g} USD per million tokens"
    return None


@dataclass(frozen=True)
class Price:
    input: float  # USD per million input tokens not served from the provider's prompt cache
    cached_input: float  # USD per million input tokens served from the provider's prompt cache
    output: float  # USD per million output tokens
    #: where the figures came from (recorded beside every cost computed with them)
    source: str = field(default="", compare=False)

    def cost(self, input_tokens: int, cached_input_tokens: int, output_tokens: int) -> float | None:
        """USD these tokens cost; ``None`` (unknown, never ``inf``) for counts beyond any a float
        can price, which only a hand-made file holds (a price is at most :data:`MAX_PRICE_PER_MILLION`).
        Counts of more cached tokens than sent (:func:`more_cached_than_sent`) have no cost: every
        reader refuses them before, so this raises :class:`ValueError` rather than price them."""
        if more_cached_than_sent(input_tokens, cached_input_tokens):
            raise ValueError(f"{cached_input_tokens} cached of {input_tokens} input tokens: no cost")
        fresh = input_tokens - cached_input_tokens
        try:
            usd = (fresh * self.input + cached_input_tokens * self.cached_input + output_tokens * self.output) / 1e6
        except OverflowError:  # a count beyond a float's range
            return None
        return usd if math.isfinite(usd) else None

    def record(self, model: str | None) -> dict[str, object]:
        """The price as a file records it beside a cost (``documents.Price``): the three figures,
        the ``model`` priced and where the figures came from."""
        return {"model": model, "input": self.input, "cached_input": self.cached_input, "output": self.output,
                "source": self.source}

    @classmethod
    def of_record(cls, recorded: Any, path: "Path | str", field_name: str = "usage.price") -> "Price":
        """The price a file recorded (a ``documents.Price``, what :meth:`record` wrote) at
        ``field_name`` of ``path``; one that is no price (:func:`price_problem`) is refused in one
        line naming the file and field."""
        figures = (recorded.input, recorded.cached_input, recorded.output)
        problem = price_problem(figures)
        if problem is not None:
            names = ("input", "cached_input", "output")
            bad = next(n for n, v in zip(names, figures) if price_problem((v,)) is not None)
            raise InputError(str(path), None, f"{field_name}.{bad}", problem)
        return cls(*figures, source=recorded.source)


#: how the default table names itself as a price's source
DEFAULT_SOURCE = f"default table as of {PRICES_AS_OF}"
#: how an override names itself as a price's source
ENV_SOURCE = "EVAL_PRICES"

#: DeepSeek's published prices (V3.2 for both model names) and the project's fake model, which is free.
DEFAULT_PRICES: dict[str, Price] = {
    "deepseek-chat": Price(0.28, 0.028, 0.42, DEFAULT_SOURCE),
    "deepseek-reasoner": Price(0.28, 0.028, 0.42, DEFAULT_SOURCE),
    FAKE_MODEL: Price(0.0, 0.0, 0.0, DEFAULT_SOURCE),
}


def table_price(model: str | None) -> Price | None:
    """The default table's price of ``model`` (``None`` when it is not in the table; the fake model
    under any name a harness gives it, :func:`~.provider.is_fake_model`, is the fake model); reads no environment."""
    return DEFAULT_PRICES.get(FAKE_MODEL if is_fake_model(model) else model or "")


def price_for(model: str | None, env: Mapping[str, str] | None = None) -> Price | None:
    """The price of ``model``: ``EVAL_PRICES`` when set (the fake model is free whatever it says),
    else the default table, else ``None``.

    Commands call this at their edge (``env`` defaults to the process environment) and hand the
    result down; library code takes a price, it never reads the environment.
    """
    env = os.environ if env is None else env
    raw = env.get("EVAL_PRICES", "").strip()
    override = _override(raw)
    return table_price(model) if override is None or is_fake_model(model) else override


def _override(raw: str) -> Price | None:
    """The price ``EVAL_PRICES`` (its value ``raw``) sets, ``None`` when it is not set."""
    if raw:
        parts = [p.strip() for p in raw.split(",")]
        try:
            if len(parts) != 3:
                raise ValueError
            values = [float(p) for p in parts]
            if price_problem(values) is not None:  # NaN would print a cost of $nan, 1e308 one of $inf
                raise ValueError
        except ValueError:
            raise UsageError(
                f"EVAL_PRICES: expected three numbers 'in,cached,out' from 0 to {MAX_PRICE_PER_MILLION:g} "
                f"(USD per million tokens), got {raw!r}"
            ) from None
        return Price(*values, source=ENV_SOURCE)
    return None


def prices_from(env: Mapping[str, str]) -> "Callable[[str | None], Price | None]":
    """The run's price lookup, read from ``env`` once (at a command's edge): ``model -> Price | None``.

    ``EVAL_PRICES`` is parsed here, so a malformed value fails before any work starts.
    """
    override = _override(env.get("EVAL_PRICES", "").strip())
    if override is not None:
        return functools.partial(_always, override)  # (a partial pickles: --jobs hands it to workers)
    return table_price


def _always(price: Price, model: str | None) -> Price | None:
    """``price`` whatever the model, but the fake model's own (free)."""
    return table_price(model) if is_fake_model(model) else price


#: what a scorer is given to price a run's rows with: a price, a lookup by model, or the table (None)
PriceArgument = Union[Price, Callable[[Union[str, None]], Union[Price, None]], None]


def recorded_price(predictions: Path, model: str | None) -> Price | None:
    """The price the run record beside ``predictions``
    (:func:`~interleave_bench.documents.run_record_path`) says the run's calls were paid at, when it
    priced ``model``; ``None`` with no record, no price in it (unknown when the run was made) or
    another model's. A record that is not a run record is refused in one line naming its field."""
    from ..documents import run_record_path
    from ..io import read_run_record

    path = run_record_path(predictions)
    if not path.is_file():
        return None
    usage = read_run_record(path).usage
    paid = usage.price if usage is not None else None
    if paid is None or paid.model != model:
        return None
    return replace(Price.of_record(paid, path), source=f"run record ({paid.source})")


def price_of_run(price: PriceArgument, model: str | None, predictions: Path | None = None) -> Price | None:
    """The price to cost a run of ``model`` at: ``price`` itself, or what a lookup gives ``model``
    (``None``: the table). Given the run's ``predictions`` file, a lookup that holds no
    ``EVAL_PRICES`` (:func:`prices_from`) yields first to the price its run record says the calls
    were paid at (:func:`recorded_price`): the price a run was made at is what it cost."""
    if isinstance(price, Price):
        return price
    lookup = table_price if price is None else price
    overridden = isinstance(lookup, functools.partial) and lookup.func is _always
    recorded = recorded_price(predictions, model) if predictions is not None and not overridden else None
    return recorded if recorded is not None else lookup(model)

