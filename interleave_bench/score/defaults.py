"""The scorer's defaults, read by the scorer and by the commands' options (a module of its own, so
that building the command line loads no scorer)."""

from ..schema import SCORE_SPLITS as SPLITS

#: tune on dev, report test once: scoring defaults to the split people iterate on
DEFAULT_SPLIT = "dev"
#: resamples for the bootstrap intervals: enough for the 2.5% and 97.5% percentiles to settle
#: to about two decimals, and fast (well under a second for ten thousand sessions)
DEFAULT_BOOTSTRAP = 1000
#: fixed seed, so the same inputs print the same intervals
DEFAULT_SEED = 0

__all__ = ["DEFAULT_BOOTSTRAP", "DEFAULT_SEED", "DEFAULT_SPLIT", "SPLITS"]
