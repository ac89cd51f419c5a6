"""The response cache: every model answer stored in SQLite, so no paid call is ever made twice.

The key is a SHA-256 over (endpoint identity, model, messages, every generation parameter, extra
body, attempt). It never includes the API key. A cache shared by two models or two endpoints can
never answer for the wrong one, because both are in the key. WAL mode and a busy timeout make it
safe for several processes writing at once; the first answer stored under a key is the one kept.

A cache file SQLite cannot use (not a database, damaged, a folder, locked past the busy timeout) is
an :class:`~..errors.InputError` naming the file and how a run goes on without it, whether found as
the cache opens or on a later read or write (a damaged page shows only when one reaches it).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

from ..errors import InputError, UsageError

#: default folder of the cache, relative to where a command runs (override with --cache or INTERLEAVE_CACHE)
DEFAULT_CACHE_DIR = ".cache"
CACHE_FILE = "llm.sqlite"
#: how long a writer waits for another process's write lock before giving up
BUSY_TIMEOUT_S = 30.0
#: how a run goes on without a cache file it cannot use
WITHOUT_IT = "run with --no-cache, or give another folder with --cache"

_T = TypeVar("_T")


def cache_key(identity: str, model: str, messages: list[dict[str, Any]], params: dict[str, Any],
              extra_body: dict[str, Any], attempt: int = 0) -> str:
    payload = {
        "endpoint": identity,
        "model": model,
        "messages": messages,
        "params": params,
        "extra_body": extra_body,
    }
    if attempt:
        payload["attempt"] = attempt
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """A SQLite file of answers by key. Thread-safe; one connection per thread."""

    def __init__(self, folder: str | Path = DEFAULT_CACHE_DIR, named: str | None = None):
        self.folder = Path(folder)
        self._need_folder(named or str(self.folder))
        self.path = self.folder / CACHE_FILE
        self._local = threading.local()
        self._use(lambda conn: conn.execute(
            "CREATE TABLE IF NOT EXISTS answers ("
            " key TEXT PRIMARY KEY, model TEXT NOT NULL, kind TEXT, answer TEXT NOT NULL, created REAL NOT NULL)"
        ))

    def _need_folder(self, named: str) -> None:
        """Make the cache folder, or say in one line why it cannot hold the cache: ``named`` is how
        it was given (``--cache DIR``, ``INTERLEAVE_CACHE=DIR``, the default folder)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            problem = None if os.access(self.folder, os.W_OK | os.X_OK) else "is a folder that cannot be written"
        except (FileExistsError, NotADirectoryError):
            problem = "is not a folder (a file or device is there, or on its path)"
        except OSError as exc:
            why = exc.strerror or str(exc)
            problem = f"cannot be made a folder ({why[:1].lower()}{why[1:]})"
        if problem is not None:
            raise UsageError(f"{named}: {problem}, so it cannot hold the response cache: {WITHOUT_IT}")

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            except BaseException:
                conn.close()
                raise
            self._local.conn = conn
        return conn

    def _use(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """``work`` on this thread's connection; a file SQLite cannot use is an :class:`InputError`
        naming it."""
        try:
            return work(self._conn())
        except sqlite3.Error as exc:
            what = "is a folder, not a file" if self.path.is_dir() else f"cannot be used as the response cache ({exc})"
            raise InputError(str(self.path), None, None, f"{what}: {WITHOUT_IT}") from None

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._use(lambda conn: conn.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone())
        if not row:
            return None
        try:
            return json.loads(row[0])
        except (TypeError, ValueError, RecursionError):
            return {}  # unreadable: no answer the client will take, so it is asked again

    def put(self, key: str, model: str, kind: str, answer: dict[str, Any]) -> dict[str, Any]:
        """Store ``answer`` under ``key`` unless an answer is there already, and return the one
        stored: the first answer kept wins. Two runs sharing the cache that paid for the same
        request at once (a request in flight in each) both use the answer kept, so every row made
        from the request carries what a rerun from the cache replays."""
        row = (key, model, kind, json.dumps(answer, ensure_ascii=False), time.time())

        def store(conn: sqlite3.Connection) -> Any:
            with conn:  # one transaction, so the answer read back is the one kept
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("INSERT OR IGNORE INTO answers (key, model, kind, answer, created) VALUES (?, ?, ?, ?, ?)",
                             row)
                return conn.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()

        kept = self._use(store)
        try:
            return json.loads(kept[0])
        except (TypeError, ValueError, RecursionError):
            return {}  # unreadable: the caller keeps its own answer

    def delete(self, key: str) -> None:
        self._use(lambda conn: conn.execute("DELETE FROM answers WHERE key = ?", (key,)))

    def __len__(self) -> int:
        return self._use(lambda conn: conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
