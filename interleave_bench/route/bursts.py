"""Bursts: simulated arrivals, and how a system that waits merges them into requests.

People often send several short messages before any reply. The simulation decides, for each pair
of consecutive messages of a session, whether the second arrived within the reply window after the
first: with probability ``same`` when both belong to one gold thread, ``cross`` otherwise (a
one-off belongs to no thread), never making a run of more than :data:`MAX_BURST`. It is seeded per
session (``seed`` and session id), so every run and every resume sees the same arrivals.

A system merges a message with the next one only if it waited after it: ``--merge all`` waits after
every message, ``--merge adaptive`` only after one that seems to go on
(:func:`~interleave_bench.route.text.seems_to_go_on`), ``--merge none`` never. Each merged burst is
one routing request. The simulation is the runner's business and uses gold; routers never see it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Optional, Sequence

from .text import seems_to_go_on

MERGES = ("none", "all", "adaptive")
DECIDES = ("one", "each")
#: chance a same-thread follow-up arrives within the window: people often split one thought
DEFAULT_SAME = 0.5
#: chance a message on another thread (or a one-off) arrives within the window: rarer, and the
#: case that makes merging risky
DEFAULT_CROSS = 0.15
#: the longest run of messages sent before any reply
MAX_BURST = 4
#: the default seed of the arrival simulation
DEFAULT_SEED = 0


def simulate_arrivals(
    keys: Sequence[Optional[str]], *, same: float, cross: float, seed: int, session_id: str
) -> list[bool]:
    """``follows[k]``: message k arrived within the window after message k-1 (``follows[0]`` is False).

    ``keys`` are the messages' gold threads (None for a one-off, which matches nothing). One random
    number is drawn per pair whatever happens, so the stream stays aligned across options.
    """
    rng = random.Random(f"interleave-arrivals:{seed}:{session_id}")
    follows = [False] * len(keys)
    run = 1
    for k in range(1, len(keys)):
        u = rng.random()
        same_thread = keys[k] is not None and keys[k] == keys[k - 1]
        follows[k] = u < (same if same_thread else cross) and run < MAX_BURST
        run = run + 1 if follows[k] else 1
    return follows


@dataclass(frozen=True)
class Unit:
    """One routing request: positions of the messages in it and, per message, whether the system
    held its reply (waited after it). ``waited`` is None when the run does not merge."""

    positions: tuple[int, ...]
    waited: Optional[tuple[bool, ...]] = None


def plan_units(texts: Sequence[str], follows: Sequence[bool], merge: str) -> list[Unit]:
    """Cut a session's messages into requests: a message joins the previous one's request when it
    arrived within the window and the system waited after the previous message."""
    if merge not in MERGES:
        raise ValueError(f"merge must be one of {MERGES}, got {merge!r}")
    if merge == "none":
        return [Unit((k,)) for k in range(len(texts))]
    waited = [merge == "all" or seems_to_go_on(t) for t in texts]
    units: list[list[int]] = []
    for k in range(len(texts)):
        if units and follows[k] and waited[k - 1]:
            units[-1].append(k)
        else:
            units.append([k])
    return [Unit(tuple(u), tuple(waited[k] for k in u)) for u in units]


def is_mixed(keys: Sequence[Optional[str]]) -> bool:
    """True when a burst's messages do not all belong to one gold thread (a one-off is its own)."""
    if len(keys) < 2:
        return False
    return any(k is None for k in keys) or len(set(keys)) > 1
