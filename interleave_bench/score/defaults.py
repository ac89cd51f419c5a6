"""The scorer's defaults, read by the scorer and by the commands' options (a module of its own, so
that building the command line loads no scorer)."""

from ..errors import UsageError
from ..schema import SCORE_SPLITS as SPLITS

#: tune on dev, report test once: scoring defaults to the split people iterate on
DEFAULT_SPLIT = "dev"
#: resamples for the bootstrap intervals: enough for the 2.5% and 97.5% percentiles to settle
#: to about two decimals, and fast (well under a second for ten thousand sessions)
DEFAULT_BOOTSTRAP = 1000
#: the most resamples asked for: far past where the percentiles stop moving, and within memory
#: (more ended in an out-of-memory internal error)
MAX_BOOTSTRAP = 100_000
#: fixed seed, so the same inputs print the same intervals
DEFAULT_SEED = 0



def _out_of_range(n: int) -> str | None:
    return None if 0 <= n <= MAX_BOOTSTRAP else f"must be 0 to {MAX_BOOTSTRAP:,}, got {n}"


def check_bootstrap(n: int) -> int:
    """``n`` when it is a number of resamples the scorer takes (0 to :data:`MAX_BOOTSTRAP`; 0 is no
    intervals); raises :class:`UsageError` otherwise."""
    why = _out_of_range(n)
    if why is not None:
        raise UsageError(f"--bootstrap {why}")
    return n


def bootstrap_option(text: str) -> int:
    """``--bootstrap N`` read by the command line (its one-line error, exit 2, for a bad value)."""
    import argparse

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    why = _out_of_range(n)
    if why is not None:
        raise argparse.ArgumentTypeError(why)
    return n


__all__ = ["DEFAULT_BOOTSTRAP", "DEFAULT_SEED", "DEFAULT_SPLIT", "MAX_BOOTSTRAP", "SPLITS", "bootstrap_option", "check_bootstrap"]
