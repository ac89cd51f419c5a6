"""The data file's pass (:class:`~.datafile.DataPass`) in a forked process of its own, so that the
data file is read on one core while the predictions are read and scored on the other
(docs/score.md#how-it-reads-and-scores-at-scale): the blocks come over a pipe, which a thread
drains as fast as it fills."""

from __future__ import annotations

import collections
import io
import os
import pickle
import signal
import threading
from typing import Any, Iterable, Iterator

from ..schema import Session
from .datafile import Bad, DataColumns, DataPass, whole_line_blocks
from .keys import names_twice_strictly


class Forked:
    """:meth:`DataPass.blocks` run in a forked process: iterate it for the blocks (in order,
    read ahead by at most what the pipe holds), then read :attr:`fingerprint`. What the pass
    raises (:class:`Bad` at a defect) is raised here; the process is ended when the iteration
    ends or is left."""

    def __init__(self, run: DataPass) -> None:
        self.fingerprint: str | None = None
        read_fd, write_fd = os.pipe()
        _widen(write_fd)
        pid = os.fork()
        if pid == 0:  # the child: send every block, then the fingerprint; never return
            os.close(read_fd)
            code = 0
            try:
                with os.fdopen(write_fd, "wb") as out:
                    try:
                        for cols in run.blocks():
                            pickle.dump(("block", cols), out, protocol=pickle.HIGHEST_PROTOCOL)
                        pickle.dump(("done", run.fingerprint), out, protocol=pickle.HIGHEST_PROTOCOL)
                    except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
                        try:  # as it was (Bad, the project's errors and OSError pickle whole)
                            told = pickle.dumps(("raise", exc), protocol=pickle.HIGHEST_PROTOCOL)
                        except Exception:  # noqa: BLE001 - an exception that does not pickle: its text
                            told = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
                        out.write(told)
            except BaseException:  # noqa: BLE001 - the parent left: nothing to tell
                code = 1
            finally:
                os._exit(code)
        os.close(write_fd)
        self._pid = pid
        self._in = io.BufferedReader(_Drained(read_fd), PIPE_BYTES)

    def __iter__(self) -> Iterator[DataColumns]:
        try:
            while True:
                try:
                    kind, value = pickle.load(self._in)
                except EOFError:
                    raise RuntimeError("the data file's reader ended without a word") from None
                if kind == "block":
                    yield value
                elif kind == "done":
                    self.fingerprint = value
                    return
                elif kind == "raise":
                    raise value
                else:
                    raise RuntimeError(f"the data file's reader failed: {value}")
        finally:
            self.close()

    def close(self) -> None:
        if self._pid:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self._pid, 0)
            self._pid = 0
            self._in.close()


#: how many bytes of blocks the reading process may be ahead of the scorer (the pipe's size)
PIPE_BYTES = 1 << 20
#: how many bytes of blocks a drained pipe may hold beside it
DRAINED_BYTES = 16 << 20


class _Drained(io.RawIOBase):
    """The read end of a pipe, drained by a thread as fast as the writer fills it (up to
    :data:`DRAINED_BYTES` held), so that the writer never waits on a reader busy elsewhere; read
    as a file. The thread spends its time in ``os.read``, which lets go of the interpreter."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._chunks: collections.deque[bytes] = collections.deque()
        self._held = 0
        self._view = memoryview(b"")
        self._ended = False
        self._stop = False
        self._room = threading.Condition()
        self._thread = threading.Thread(target=self._drain, name="data-pass-pipe", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while True:
                with self._room:
                    while self._held >= DRAINED_BYTES and not self._stop:
                        self._room.wait()
                    if self._stop:
                        return
                try:
                    chunk = os.read(self._fd, PIPE_BYTES)
                except OSError:
                    chunk = b""
                with self._room:
                    if chunk:
                        self._chunks.append(chunk)
                        self._held += len(chunk)
                    else:
                        self._ended = True
                    self._room.notify_all()
                if not chunk:
                    return
        finally:
            os.close(self._fd)

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        """Stop draining (the writer is gone or no longer heard)."""
        with self._room:
            self._stop = True
            self._room.notify_all()
        super().close()

    def readinto(self, buffer: Any) -> int:
        if not len(self._view):
            with self._room:
                while not self._chunks and not self._ended:
                    self._room.wait()
                if not self._chunks:
                    return 0
                chunk = self._chunks.popleft()
                self._held -= len(chunk)
                self._room.notify_all()
            self._view = memoryview(chunk)
        n = min(len(buffer), len(self._view))
        buffer[:n] = self._view[:n]
        self._view = self._view[n:]
        return n


def _widen(fd: int) -> None:
    """Let the pipe hold :data:`PIPE_BYTES` (a few blocks), so that neither process waits for
    the other while both have work; the system's default and bound hold where it refuses."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


class KeysPass:
    """The look for a key named twice in a session line, apart from the rest of the pass (which
    then runs with ``keys=False``): iterating it yields nothing and raises :class:`Bad` at a
    block that names a key twice (the strict reader then names the file's first defect).

    Run in a process of its own beside the pass (:func:`~.datafile.data_pass`), it takes a third
    of the pass's work off the pass's core, onto the one the scorer leaves idle while it waits for
    blocks (docs/score.md#how-it-reads-and-scores-at-scale)."""

    fingerprint = None

    def __init__(self, path: str | os.PathLike, block_bytes: int | None = None) -> None:
        self.path = path
        self.block_bytes = block_bytes

    def blocks(self) -> Iterator[DataColumns]:
        for block in whole_line_blocks(self.path, self.block_bytes):
            if names_twice_strictly(block, Session):
                raise Bad("a key named twice")
        return
        yield


def then(forked: Iterable[DataColumns], keys: Any) -> Iterator[DataColumns]:
    """The blocks of ``forked``, then the verdict of ``keys`` (:class:`Bad` at a key named twice);
    ``keys`` is ended however the iteration ends."""
    try:
        yield from forked
        for _ in keys:
            pass
    finally:
        keys.close()
