"""The scorer's defaults, read by the scorer and by the commands' options (a module of its own, so
that building the command line loads no scorer)."""

from typing import Any, Optional

from ..errors import UsageError
from ..options import check_whole_number, whole_number
from ..schema import MODES
from ..schema import SCORE_SPLITS as SPLITS

#: tune on dev, report test once: scoring defaults to the split people iterate on
DEFAULT_SPLIT = "dev"
#: resamples for the bootstrap intervals: enough for the 2.5% and 97.5% percentiles to settle
#: to about two decimals, and fast (well under a second for ten thousand sessions)
DEFAULT_BOOTSTRAP = 1000
#: the most resamples asked for: far past where the percentiles stop moving, and within memory
#: (more ended in an out-of-memory internal error)
MAX_BOOTSTRAP = 100_000
#: the fewest resamples (other than 0, no intervals) that give a 95% percentile interval: each
#: 2.5% tail then holds at least one resample (40 x 0.025 = 1; ``score.stats.CONFIDENCE``). With
#: fewer, both ends are read off the one or two outermost resamples, and one resample gives
#: "0.6883 [0.6889, 0.6889]", an "interval" that leaves out its own estimate
MIN_BOOTSTRAP = 40
#: fixed seed, so the same inputs print the same intervals
DEFAULT_SEED = 0
#: the least seed the resamples' generator takes (none is negative)
MIN_SEED = 0



def bootstrap_problem(n: int) -> Optional[str]:
    """What is wrong with the whole number ``n`` as a number of resamples, else None: it is 0 (no
    intervals) or :data:`MIN_BOOTSTRAP` to :data:`MAX_BOOTSTRAP`."""
    if n == 0 or MIN_BOOTSTRAP <= n <= MAX_BOOTSTRAP:
        return None
    return (f"must be 0 (no intervals) or {MIN_BOOTSTRAP:,} to {MAX_BOOTSTRAP:,} (fewer resamples give no 95% "
            f"interval), got {n}")


def check_bootstrap(n: Any, name: str = "--bootstrap") -> int:
    """``n`` when it is a number of resamples the scorer takes (a whole number, :func:`bootstrap_problem`);
    raises :class:`~interleave_bench.errors.UsageError` naming ``name`` otherwise. The one check of
    every bootstrap count: the commands' ``--bootstrap``, the scorer's, ``evaluate_router``'s."""
    n = check_whole_number(n, name)
    problem = bootstrap_problem(n)
    if problem is not None:
        raise UsageError(f"{name} {problem}")
    return n


def check_seed(n: Any, name: str = "--seed") -> int:
    """``n`` when it is a seed the resamples' generator takes (0 or more, within 64 bits); raises
    :class:`~interleave_bench.errors.UsageError` naming ``name`` otherwise."""
    return check_whole_number(n, name, MIN_SEED)


def check_split(split: Any, name: str = "--split") -> str:
    """``split`` when it is one of :data:`SPLITS` (``dev``, ``test``, ``all``); raises
    :class:`~interleave_bench.errors.UsageError` naming ``name`` otherwise. The one check of every
    split scored or routed: the commands' ``--split``, the scorer's, ``evaluate_router``'s."""
    return _one_of(split, SPLITS, name)


def check_mode(mode: Any, name: str = "--mode", error: type[Exception] = UsageError) -> str:
    """``mode`` when it is one of :data:`~interleave_bench.schema.MODES` (``closed``, ``open``);
    raises ``error`` (:class:`~interleave_bench.errors.UsageError`; an evaluate module's
    ``ValueError``) naming ``name`` otherwise (``--mode``, ``evaluate_router: mode``, ``mode``)."""
    return _one_of(mode, MODES, name, error)


def _one_of(value: Any, choices: tuple[str, ...], name: str, error: type[Exception] = UsageError) -> str:
    if not isinstance(value, str) or value not in choices:
        raise error(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


#: ``--bootstrap N`` read by the command line (its one-line error, exit 2, for a bad value)
bootstrap_option = whole_number(problem=bootstrap_problem)


#: ``--seed``: 0 or more (the resamples' generator takes no negative seed)
seed_option = whole_number(MIN_SEED)


__all__ = ["DEFAULT_BOOTSTRAP", "DEFAULT_SEED", "DEFAULT_SPLIT", "MAX_BOOTSTRAP", "MIN_BOOTSTRAP", "MIN_SEED", "SPLITS",
           "bootstrap_option", "bootstrap_problem", "check_bootstrap", "check_mode", "check_seed", "check_split",
           "seed_option"]
