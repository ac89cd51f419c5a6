"""The scorer's defaults, read by the scorer and by the commands' options (a module of its own, so
that building the command line loads no scorer)."""

from ..errors import UsageError
from ..options import range_problem, whole_number
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



def check_bootstrap(n: int) -> int:
    """``n`` when it is a number of resamples the scorer takes (0 to :data:`MAX_BOOTSTRAP`; 0 is no
    intervals); raises :class:`UsageError` otherwise."""
    why = range_problem(n, 0, MAX_BOOTSTRAP)
    if why is not None:
        raise UsageError(f"--bootstrap {why}")
    return n


#: ``--bootstrap N`` read by the command line (its one-line error, exit 2, for a bad value)
bootstrap_option = whole_number(0, MAX_BOOTSTRAP)


__all__ = ["DEFAULT_BOOTSTRAP", "DEFAULT_SEED", "DEFAULT_SPLIT", "MAX_BOOTSTRAP", "SPLITS", "bootstrap_option", "check_bootstrap"]
