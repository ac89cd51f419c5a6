"""One writer per output: an exclusive lock on the real file, taken before any work and held by the
process that writes it (:func:`exclusive_output`)."""

from __future__ import annotations

import fcntl
import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import UsageError, redact, require_not_folder


def real_output(path: str | os.PathLike) -> Path:
    """The file an output path names once every symlink is resolved (the file itself when it is
    no link): what is locked and what is replaced, so a link to an output is that output."""
    return Path(os.path.realpath(path))


#: outputs this process holds the lock of (real path -> how many blocks hold it), so a command that
#: holds its output's lock can still write it, and so can a worker it forked
_HELD: dict[str, int] = {}
_HELD_GUARD = threading.Lock()


def lock_path(path: str | os.PathLike) -> Path:
    """The lock file of an output: ``.<name>.lock`` beside the real file (symlinks resolved), there
    only while a writer holds it (hidden, so exports and pushes skip it)."""
    real = real_output(path)
    return real.with_name(f".{real.name}.lock")


def _default_command() -> str:
    return " ".join(["interleave-bench", *sys.argv[1:]]) if sys.argv else "interleave-bench"


@contextmanager
def exclusive_output(path: str | os.PathLike, command: str | None = None) -> Iterator[Path]:
    """Hold the exclusive lock of the output ``path`` for the block; yields the lock file's path.

    The lock is on the real file (symlinks resolved), so two paths to one file are one output. A
    second process asking for the same output gets a :class:`UsageError` at once (no waiting)
    naming the holder's pid and ``command`` (default: this process's command line), which the lock
    file records. Within one process the lock is taken again at no cost (a command holding its
    output's lock writes it through the atomic writer, which takes it too). The lock is an
    ``flock``, so it goes with its process: a run killed with -9 leaves no stale lock behind, only
    the file, which the next writer reuses and removes. On release the lock file is removed while
    still locked, and a writer that locked a removed file tries again, so removing it never lets
    two writers in at once.
    """
    real = real_output(path)
    require_not_folder(path)  # an output named by a folder is refused before any work, in one line
    key = str(real)
    with _HELD_GUARD:
        held = key in _HELD
        if held:
            _HELD[key] += 1
    lock = real.with_name(f".{real.name}.lock")
    if held:
        try:
            yield lock
        finally:
            with _HELD_GUARD:
                _HELD[key] -= 1
        return
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 1000, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise UsageError(f"{path}: another run is writing it ({holder}); let it finish, or write elsewhere") from None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # its holder removed it between our open and our lock: take the new one
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: {redact(command or _default_command())}\n".encode("utf-8"), 0)
        with _HELD_GUARD:
            _HELD[key] = 1
        try:
            yield lock
        finally:
            with _HELD_GUARD:
                del _HELD[key]
            try:
                os.unlink(lock)
            except FileNotFoundError:
                pass
    finally:
        os.close(fd)  # closing the descriptor releases the lock
