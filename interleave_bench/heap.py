"""Handing memory a long pass has freed back to the system, and pausing the cyclic collector.

The C allocator (glibc's) keeps the pages of freed blocks that lie between blocks still in use, so
a pass that builds and drops arrays and records block after block, while it keeps a few small
results of each, grows the process's resident memory well past what it holds.
:func:`release` asks the allocator to return those pages (``malloc_trim``); elsewhere it does
nothing. Passes call it every :data:`EVERY` blocks and once at their end.

:func:`paused_gc` pauses the cyclic garbage collector while a command builds records by the
hundred thousand (none of them forms a cycle, and the collector's repeated passes over a growing
heap otherwise cost more than building them).
"""

from __future__ import annotations

import ctypes
import gc
from contextlib import contextmanager
from typing import Callable, Iterator

#: blocks between two calls of :func:`release` in a long pass
EVERY = 32


def _trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to ask
        return None


_TRIM = _trim()


def release() -> None:
    """Return freed memory to the system where the allocator allows it."""
    if _TRIM is not None:
        _TRIM(0)


#: objects created while paused above which they are frozen (``gc.freeze``) rather than handed back
#: to the collector: walking half a million fresh records on the next collection costs seconds
FREEZE_ABOVE = 100_000


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for a block that builds many acyclic objects.

    On leaving, if the block created many objects, they are moved to the collector's permanent
    generation (``gc.freeze``) so later collections do not walk them again; reference counting
    still frees them when they are dropped. Nested uses leave the work to the outermost.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_count()[0] > FREEZE_ABOVE:
                gc.freeze()
            gc.enable()
