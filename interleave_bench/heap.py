"""Handing memory a long pass has freed back to the system.

The C allocator (glibc's) keeps the pages of freed blocks that lie between blocks still in use, so
a pass that builds and drops arrays and records block after block, while it keeps a few small
results of each, grows the process's resident memory well past what it holds.
:func:`release` asks the allocator to return those pages (``malloc_trim``); elsewhere it does
nothing. Passes call it every :data:`EVERY` blocks and once at their end.
"""

from __future__ import annotations

import ctypes
from typing import Callable

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
