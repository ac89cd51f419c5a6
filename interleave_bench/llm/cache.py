"""The response cache: every model answer stored in SQLite, so no paid call is ever made twice.

The key is a SHA-256 over (endpoint identity, model, messages, every generation parameter, extra
body, attempt). It never includes the API key. A cache shared by two models or two endpoints can
never answer for the wrong one, because both are in the key. WAL mode and a busy timeout make it
safe for several processes writing at once.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

#: default folder of the cache, relative to where a command runs (override with --cache or INTERLEAVE_CACHE)
DEFAULT_CACHE_DIR = ".cache"
CACHE_FILE = "llm.sqlite"
#: how long a writer waits for another process's write lock before giving up
BUSY_TIMEOUT_S = 30.0


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

    def __init__(self, folder: str | Path = DEFAULT_CACHE_DIR):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / CACHE_FILE
        self._local = threading.local()
        with self._conn() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS answers ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, kind TEXT, answer TEXT NOT NULL, created REAL NOT NULL)"
            )

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._conn().execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        if not row:
            return None
        try:
            return json.loads(row[0])
        except (TypeError, ValueError, RecursionError):
            return {}  # unreadable: no answer the client will take, so it is asked again

    def put(self, key: str, model: str, kind: str, answer: dict[str, Any]) -> None:
        self._conn().execute(
            "INSERT OR REPLACE INTO answers (key, model, kind, answer, created) VALUES (?, ?, ?, ?, ?)",
            (key, model, kind, json.dumps(answer, ensure_ascii=False), time.time()),
        )

    def delete(self, key: str) -> None:
        self._conn().execute("DELETE FROM answers WHERE key = ?", (key,))

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
