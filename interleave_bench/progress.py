"""Progress bars and the summary line that ends every long command.

Bars go to stderr (so piped stdout stays clean) and switch themselves off when stderr is not a
terminal or ``INTERLEAVE_NO_PROGRESS`` is set. Every long command ends with one summary line:
counts, tokens, cost, time.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Iterable, TypeVar

T = TypeVar("T")


def progress_enabled() -> bool:
    return not os.environ.get("INTERLEAVE_NO_PROGRESS") and sys.stderr.isatty()


class _Off:
    """What :func:`progress` gives when bars are off: the part of a tqdm bar the commands use,
    doing nothing. Importing tqdm takes about 38 ms, 4% of ``score`` on the 2,000 sessions of
    ``benchmarks/bench_score.py``, and a command off a terminal never draws a bar."""

    def __init__(self, iterable: Iterable[T] | None) -> None:
        self._iterable = iterable

    def __iter__(self) -> Any:
        return iter(() if self._iterable is None else self._iterable)

    def __enter__(self) -> "_Off":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: float = 1) -> None:
        return None

    def set_postfix(self, *args: Any, **kwargs: Any) -> None:
        return None

    def close(self) -> None:
        return None


def progress(iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str = "", unit: str = "it") -> Any:
    """A tqdm bar on stderr; off a terminal (or with ``INTERLEAVE_NO_PROGRESS``) one that draws
    nothing and needs no tqdm."""
    if not progress_enabled():
        return _Off(iterable)
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=False)


def note(line: str) -> None:
    """One line on stderr while a bar may be drawn there: above the bar, which is drawn again below it."""
    if progress_enabled() and "tqdm" in sys.modules:
        from tqdm import tqdm

        tqdm.write(line, file=sys.stderr)
    else:
        print(line, file=sys.stderr)


class Timer:
    """Wall time since creation, for the summary line."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start


def summary_line(what: str, counts: dict[str, Any], seconds: float, llm: Any = None, *,
                 rate: tuple[str, int] | None = None) -> str:
    """``done: generate: 50 sessions, 2,480 messages, 0 failed; 41.2s`` plus the model's token and cost figures.

    ``llm`` is an :class:`~interleave_bench.llm.LLM` (or None for commands that call no model).
    ``rate`` (a noun and how many of it the command handled now) adds that many a second of the
    time taken, ``41.2s, 60 messages/s``, when there were any.
    """
    parts = []
    for k, v in counts.items():
        parts.append(f"{v:,} {_singular(k) if v == 1 else k}" if isinstance(v, int) else f"{v} {k}")
    line = f"done: {what}: {', '.join(parts)}; {seconds:.1f}s"
    if rate is not None and rate[1] > 0 and seconds > 0:
        line += f", {rate[1] / seconds:,.0f} {rate[0]}/s"
    if llm is not None:
        s = llm.stats
        cost = "cost unknown" if s.cost_usd is None else f"${s.cost_usd:.4f}"
        line += f"; {s.calls:,} paid calls, {s.cached:,} cached, {s.failed:,} failed; {s.tokens_text()}; {cost}"
    return line


def print_summary(what: str, counts: dict[str, Any], seconds: float, llm: Any = None, *,
                  rate: tuple[str, int] | None = None) -> None:
    """Print :func:`summary_line` on stderr, where every command's summary goes: stdout holds what the
    command makes (a table, a document, the files it wrote), so ``stats A B > profile.md`` or
    ``compare A B > diff.md`` keeps the summary out of the file."""
    print(summary_line(what, counts, seconds, llm, rate=rate), file=sys.stderr)


def _singular(label: str) -> str:
    """``runs scored`` -> ``run scored``: the count's noun (the first word) for a count of one."""
    head, _, rest = label.partition(" ")
    if head.endswith("s") and not head.endswith(("ss", "us")):
        head = head[:-1]
    return f"{head} {rest}" if rest else head
