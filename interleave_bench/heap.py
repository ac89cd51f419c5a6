"""Keeping the cyclic garbage collector off work that cannot free anything.

- :func:`paused_gc`: paused while a command builds records by the hundred thousand. None of those
  records forms a cycle, and the collector's repeated passes over a growing heap otherwise cost
  more than building them: ``benchmarks/bench_score.py --sessions 2000 --mode closed`` scores at
  1.13x the messages per second with the collector paused (0.88 s against 0.99 s, one run).
- :func:`settled`: what is loaded before a long loop (a data file's sessions) kept out of the
  collector's passes during it, while the loop's own objects are collected as usual: routing the
  offline dev sessions with ``local``, ``benchmarks/bench_route.py --corpus offline --repeat 5
  --against OLD`` routes 1.10x the messages per CPU second closed and 1.17x open (one run; see
  ``docs/local_history.md#freezing-the-loaded-data``).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

#: objects created while paused above which they are frozen (``gc.freeze``) rather than handed back
#: to the collector: walking half a million fresh records on the next collection costs seconds
FREEZE_ABOVE = 100_000


@contextmanager
def paused_gc(freeze: bool = True) -> Iterator[None]:
    """Pause the cyclic garbage collector for a block that builds many acyclic objects.

    On leaving, if the block created many objects and ``freeze`` is true, they are moved to the
    collector's permanent generation (``gc.freeze``) so later collections do not walk them again;
    reference counting still frees them when they are dropped. That is for a command, whose process
    ends with its work: everything alive at that moment is frozen for good, so a cycle among those
    objects that dies later is never freed. Library code a long process calls again and again
    passes ``freeze=False``: the objects then go to the oldest generation (frozen and at once
    unfrozen, when nothing else is frozen), which full collections alone walk, and a cycle there is
    freed by the next one, rather than being walked by the very next young collections. A full
    collection does walk them, which a freeze spared: reading the 200 sessions of
    ``benchmarks/bench_route.py`` and then allocating 220,000 objects took 0.16 s of CPU against
    0.10 s frozen. ``route`` loses nothing by it, since the runner keeps what it read out of the
    collector's passes while it routes (:func:`settled`): routing those sessions with ``local``
    took 0.97 to 1.01 s closed either way (best of 5). Nested uses leave the work to the outermost.
    """
    was_enabled = gc.isenabled()
    frozen_before = gc.get_freeze_count()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_count()[0] > FREEZE_ABOVE and (freeze or not frozen_before):
                gc.freeze()
                if not freeze:
                    gc.unfreeze()
            gc.enable()


@contextmanager
def settled() -> Iterator[None]:
    """Keep every object alive on entry (the data a loop reads) out of the collector's passes
    until the block ends (``gc.freeze``, then ``gc.unfreeze``).

    The collector walks every object it tracks at each full pass, so a loop over loaded data pays
    for that data again and again although none of it can become garbage while the loop holds it;
    objects created inside the block are collected as usual. Reference counting frees frozen
    objects as usual; only a cycle among them waits until the block ends.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
