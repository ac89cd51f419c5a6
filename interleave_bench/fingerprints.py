"""Fingerprints of the project's files: a file's SHA-256, and the data fingerprint of its records.

The data fingerprint is defined on the records, not on file bytes, so the same sessions give the
same fingerprint whatever holds them (docs/score.md, the score file's ``data``).
"""

from __future__ import annotations

import hashlib
import os
from typing import Callable, Iterable, TypeVar

from .errors import UsageError
from .schema import Record

T = TypeVar("T")


def sha256_file(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes, as ``sha256:<hex>``."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def read_unchanged(path: str | os.PathLike, read: Callable[[], T]) -> tuple[T, str]:
    """What ``read()`` reads from ``path``, and the SHA-256 (:func:`sha256_file`) of the bytes it
    read: the file is hashed before and after, and one replaced or written meanwhile (another
    ``generate`` into the folder) is refused, so a record never pairs one file's hash with what
    was read from another."""
    before = sha256_file(path)
    got = read()
    if sha256_file(path) != before:
        raise UsageError(f"{path} changed while it was being read: run again once whatever writes it is done")
    return got, before


def records_fingerprint(records: Iterable[Record]) -> str:
    """The data fingerprint, ``sha256:<hex>``, defined on the records rather than on file bytes.

    Each record is dumped as JSON by its model (every field, defaults included, in the schema's
    order; unknown fields after them in the order they were written), the lines are sorted and
    hashed. So the same sessions give the same fingerprint whatever holds them: a JSONL file in any
    session order or formatting, or the Parquet files of a published config (which keep unknown
    fields in their order). Returns the fingerprint of no records for an empty input. About a
    second of CPU for 500,000 messages (the model dumps in Rust).
    """
    return sorted_lines_fingerprint(sorted(r.model_dump_json() for r in records))


def sorted_lines_fingerprint(lines: Iterable[str | bytes]) -> str:
    """:func:`records_fingerprint` from the records' JSON lines, given already sorted (each hashed
    as it comes: a reader that meets them in order need not hold them); returns ``sha256:<hex>``."""
    h = LinesHash()
    for line in lines:
        h.update(line)
    return h.result()


class LinesHash:
    """The hash of :func:`records_fingerprint`, fed one record line at a time, in sorted order."""

    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def update(self, line: str | bytes) -> None:
        self._h.update(line.encode("utf-8") if isinstance(line, str) else line)
        self._h.update(b"\n")

    def update_lines(self, lines: bytes) -> None:
        """Lines already joined, each followed by ``\\n`` (UTF-8), in sorted order."""
        self._h.update(lines)

    def result(self) -> str:
        return "sha256:" + self._h.hexdigest()
