"""One writer per output: an exclusive lock on the output, whatever name it is reached by, taken
before any work and held by the process that writes it (:func:`exclusive_output`)."""

from __future__ import annotations

import fcntl
import os
import stat
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import UsageError, require_not_folder
from .redaction import redact


def real_output(path: str | os.PathLike) -> Path:
    """The file an output path names once every symlink is resolved (the file itself when it is
    no link): what is locked and what is replaced, so a link to an output is that output."""
    return Path(os.path.realpath(path))


class _Held:
    """An output this process holds the lock of: how many blocks hold it, and a descriptor locking
    each file (by device and inode) that is, or is about to be, the output."""

    def __init__(self) -> None:
        self.count = 1
        self.files: dict[tuple[int, int], int] = {}

    def release(self) -> None:
        for fd in self.files.values():
            os.close(fd)
        self.files.clear()


#: outputs this process holds the lock of (real path -> :class:`_Held`), so a command that holds
#: its output's lock can still write it, and so can a worker it forked
_HELD: dict[str, _Held] = {}
_HELD_GUARD = threading.Lock()


def lock_path(path: str | os.PathLike) -> Path:
    """The lock file of an output: ``.<name>.lock`` beside the real file (symlinks resolved), there
    only while a writer holds it (hidden, so exports and pushes skip it)."""
    real = real_output(path)
    return real.with_name(f".{real.name}.lock")


def writer_of(path: str | os.PathLike) -> str | None:
    """Who is writing the output ``path`` now: the holder its lock file records (``pid 12: ...``)
    while a process holds its lock (:func:`exclusive_output`), else ``None``; asked at once, never
    waiting (a reader of a file being written says so rather than wait for its end). Asked by a
    shared lock taken and let go at once, so a writer starting in that instant is refused as by
    any other holder; none when no lock file is there (no writer has held it since it was removed)."""
    try:
        fd = os.open(lock_path(path), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 1000, 0).decode("utf-8", "replace").strip() or "another process"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _default_command() -> str:
    return " ".join(["interleave-bench", *sys.argv[1:]]) if sys.argv else "interleave-bench"


def _refused(path: str | os.PathLike, holder: str) -> UsageError:
    """The one line a second writer of an output gets."""
    return UsageError(f"{path}: another run is writing it ({holder}); let it finish, or write elsewhere")


#: the holder a writer refused on the file itself (not on its lock file) is told of: one writing
#: the same file under another name, a hard link to it
OTHER_NAME = "another process, through another name of this file: a hard link"


@contextmanager
def exclusive_output(path: str | os.PathLike, command: str | None = None) -> Iterator[Path]:
    """Hold the exclusive lock of the output ``path`` for the block; yields the lock file's path.

    The lock is two ``flock`` locks. One is on the lock file ``.<name>.lock`` beside the real file
    (symlinks resolved), which records the holder's pid and ``command`` (default: this process's
    command line): it makes an output that is not there yet one output by any path that reaches
    its folder (a symlink, a bind mount, a relative path). The other is on the file itself, while
    it is there (and on each file put in its place: :func:`hold_file`), so two names of one file
    (hard links) are one output too. A second process asking for the same output gets a
    :class:`UsageError` at once (no waiting) naming the holder. Within one process the lock is
    taken again at no cost (a command holding its output's lock writes it through the atomic
    writer, which takes it too). A lock goes with its process: a run killed with -9 leaves no stale
    lock behind, only the lock file, which the next writer reuses and removes. On release the lock
    file is removed while still locked, and a writer that locked a removed file tries again, so
    removing it never lets two writers in at once.
    """
    real = real_output(path)
    require_not_folder(path)  # an output named by a folder is refused before any work, in one line
    key = str(real)
    with _HELD_GUARD:
        held = _HELD.get(key)
        if held is not None:
            held.count += 1
    lock = real.with_name(f".{real.name}.lock")
    if held is not None:
        try:
            yield lock
        finally:
            with _HELD_GUARD:
                held.count -= 1
        return
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 1000, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise _refused(path, holder) from None
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
    held = _Held()
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: {redact(command or _default_command())}\n".encode("utf-8"), 0)
        with _HELD_GUARD:
            _HELD[key] = held
        try:
            _hold_file_at(real, path)
            yield lock
        finally:
            with _HELD_GUARD:
                del _HELD[key]
            held.release()
            try:
                os.unlink(lock)
            except FileNotFoundError:
                pass
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _hold_file_at(real: Path, path: str | os.PathLike) -> None:
    """Lock the regular file at ``real`` (when there is one) as the output ``path`` this process
    holds; a file replaced between its opening and its lock is opened again."""
    while True:
        try:
            if not stat.S_ISREG(os.stat(real).st_mode):
                return  # none there (yet), or a device: no file of its own to lock
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return  # not there, or not for us to open: its writer says why when it opens it
        try:
            hold_file(path, fd)
            same = os.path.samestat(os.fstat(fd), os.stat(real))
        except FileNotFoundError:
            same = False
        finally:
            os.close(fd)  # (the lock is on a copy hold_file keeps)
        if same:
            return


def hold_file(path: str | os.PathLike, fd: int) -> None:
    """Lock the file open at ``fd`` as the output ``path``, whose lock (:func:`exclusive_output`)
    this process holds, until that lock is released: the file at ``path``, or one about to be put
    in its place (a temporary file before its rename, a file just made). A writer that replaces
    its output so keeps every other name of the new file locked out as well. Raises the
    :class:`UsageError` of a second writer when another process holds that file."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return
    ident = (st.st_dev, st.st_ino)
    real = real_output(path)
    with _HELD_GUARD:
        held = _HELD[str(real)]
        if ident in held.files:
            return
        # locked by this process under another name: a copy of that descriptor shares its lock (a
        # descriptor of its own would be refused by it)
        ours = next((h.files[ident] for h in _HELD.values() if ident in h.files), None)
        mine = os.dup(fd if ours is None else ours)
        if ours is None:
            try:
                fcntl.flock(mine, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BaseException as exc:
                os.close(mine)
                if isinstance(exc, BlockingIOError):
                    raise _refused(path, OTHER_NAME) from None
                raise
        held.files[ident] = mine
        try:
            at = os.stat(real)
            now = (at.st_dev, at.st_ino)
        except OSError:
            now = None
        for gone in [i for i in held.files if i not in (ident, now)]:
            os.close(held.files.pop(gone))  # a file replaced since: no longer the output
