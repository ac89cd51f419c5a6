"""Vetting files: every string of every JSON/JSONL file, scanned by :func:`~.vet.scan_text`.

:func:`vet_paths` walks the files given (a folder stands for the JSON and JSONL files under it) and
returns one :class:`Finding` per match, naming file, line, field (a JSON path such as
``turns[3].text``) and kind, with the match masked. Files are read strictly
(:func:`~.strictjson.parse_strict`): a 5,000-digit integer, ``1e400``, a repeated key or
100,000-deep nesting make the file unreadable (one line naming file, line and field, exit 2), never
an internal error. Every walk is iterative and every step linear in the file's size.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple, Optional

from .errors import InputError
from .file_kinds import document_in
from .heap import paused_gc
from .io import iter_json_lines, read_text
from .strictjson import parse_strict
from .vet import (DEFAULT_ALLOWLIST, KINDS, VETTED_SUFFIXES, AllowRule, is_digest, make_record, mask, names_digests,
                  read_allowlist, scan_text)


class Finding(NamedTuple):
    """One finding: where (file, line, JSON path) and what (kind, masked text, allowed by which rule)."""

    path: str
    line: Optional[int]
    field: str
    kind: str
    masked: str
    allowed_by: Optional[str] = None  # the allowlist's "file:line (reason)" when it accepts this

    def format(self) -> str:
        """``file:line: field: kind: masked`` (the project's error-line shape)."""
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        tail = f" (allowed by {self.allowed_by})" if self.allowed_by else ""
        return f"{where}: {self.field}: {self.kind}: {self.masked}{tail}"


@dataclass
class VetReport:
    """What :func:`vet_paths` found: findings (allowed ones included), what it read, and what it could not."""

    findings: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    records: int = 0
    strings: int = 0
    errors: list[InputError] = field(default_factory=list)
    unused_rules: list[AllowRule] = field(default_factory=list)

    @property
    def blocking(self) -> list[Finding]:
        """The findings no allowlist rule accepts."""
        return [f for f in self.findings if f.allowed_by is None]

    @property
    def allowed(self) -> list[Finding]:
        return [f for f in self.findings if f.allowed_by is not None]

    @property
    def clean(self) -> bool:
        """True when every file was read and nothing blocking was found."""
        return not self.errors and not self.blocking

    def by_kind(self) -> dict[str, int]:
        """Blocking findings per kind, in :data:`KINDS` order."""
        c = Counter(f.kind for f in self.blocking)
        return {k: c[k] for k in KINDS if c[k]}

    def summary(self) -> str:
        """One line: files, records and strings read, findings (by kind) and allowed ones."""
        kinds = ", ".join(f"{k} {n}" for k, n in self.by_kind().items())
        found = f"{len(self.blocking)} finding{'s' if len(self.blocking) != 1 else ''}" + (f" ({kinds})" if kinds else "")
        return (f"{len(self.files)} file{'s' if len(self.files) != 1 else ''}, {self.records:,} records, "
                f"{self.strings:,} text fields: {found}, {len(self.allowed)} allowed")


#: what follows the path of an object's key, as vet reads it: a key is text that is published too
KEY_MARK = " (key)"


@functools.lru_cache(maxsize=4096)
def _key_findings(key: str) -> tuple:
    """:func:`~.vet.scan_text` of an object key, once per distinct key: a file repeats the same few
    keys in every record."""
    return tuple(scan_text(key))


def _shown_key(key: str) -> str:
    """``key`` as a path shows it: masked when it holds a finding itself, so no report repeats it."""
    return mask(key) if _key_findings(key) else key


def _key_path(prefix: str, key: str) -> str:
    shown = _shown_key(key)
    return f"{prefix}.{shown}" if prefix else shown


def iter_strings(obj: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """``(JSON path, string)`` for every string in a parsed JSON value, in document order: every
    string value but a digest (:func:`~.vet.is_digest`), and every object key (its path ends in
    :data:`KEY_MARK`): a key is published as surely as a value (an unknown field's name goes into
    the dataset's ``extra`` column).

    Paths read like the project's error fields: ``turns[3].text``, ``threads[0].facts[1].value``;
    a key that holds a finding is masked in every path. Iterative: no nesting depth can exhaust
    the stack.
    """
    stack: list[tuple[str, Any, bool]] = [(prefix, obj, False)]  # path, value, in a field of digests
    while stack:
        where, value, digests = stack.pop()
        if isinstance(value, str):
            if not is_digest(value, digests):
                yield where or "(value)", value
        elif isinstance(value, dict):
            for k, v in reversed(list(value.items())):
                path = _key_path(where, str(k))
                stack.append((path, v, digests or names_digests(str(k))))
                stack.append((path + KEY_MARK, str(k), False))  # popped first: the key, then its value
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", v, digests) for i, v in reversed(list(enumerate(value))))


def iter_document_strings(text: str, path: str) -> Iterator[tuple[int, str, str]]:
    """``(line, JSON path, string)`` for every string of a JSON document (values but digests, and
    keys, as :func:`iter_strings` reads them), with its line.

    A JSON document (a mid-reply case file, a manifest) spans many lines; naming the line of each
    string lets an editor jump to a finding. Raises :class:`InputError` for text that is not JSON.
    """
    parse_strict(path, None, text)  # refused here, so the walk below meets only JSON it can read
    ws = re.compile(r"[ \t\r\n]*")
    scalar = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
    line_at = _LineCounter(text)

    def skip(pos: int) -> int:
        return ws.match(text, pos).end()  # type: ignore[union-attr]

    def value(pos: int, where: str, out: list[tuple[int, str, str]], digests: bool = False) -> int:
        pos = skip(pos)
        ch = text[pos]
        if ch == '"':
            s, end = json.decoder.scanstring(text, pos + 1)
            if not is_digest(s, digests):
                out.append((line_at(pos), where or "(value)", s))
            return end
        if ch == "{":
            pos = skip(pos + 1)
            if text[pos] == "}":
                return pos + 1
            while True:
                at = skip(pos)
                key, pos = json.decoder.scanstring(text, at + 1)
                path = _key_path(where, key)
                out.append((line_at(at), path + KEY_MARK, key))
                pos = skip(pos) + 1  # the colon
                pos = skip(value(pos, path, out, digests or names_digests(key)))
                if text[pos] == "}":
                    return pos + 1
                pos += 1  # the comma
        if ch == "[":
            pos = skip(pos + 1)
            if text[pos] == "]":
                return pos + 1
            k = 0
            while True:
                pos = skip(value(pos, f"{where}[{k}]", out, digests))
                k += 1
                if text[pos] == "]":
                    return pos + 1
                pos += 1
        m = scalar.match(text, pos)
        assert m is not None  # json.loads accepted the text
        return m.end()

    out: list[tuple[int, str, str]] = []
    try:
        value(0, "", out)
    except RecursionError:  # deeper than this walk goes, though ``json`` read it
        raise InputError(path, None, None, "JSON nested too deeply to read") from None
    yield from out


class _LineCounter:
    """Line numbers of increasing offsets in one text, without rescanning from the start."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.line = 1

    def __call__(self, pos: int) -> int:
        if pos < self.pos:
            self.pos, self.line = 0, 1
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def expand_paths(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """The files to vet: files as given; a folder stands for the JSON and JSONL files under it.

    Hidden files and folders (a generator's work file, ``.git``, caches) are left out.
    """
    out: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found = sorted(
                q for q in p.rglob("*")
                if q.is_file() and q.suffix in VETTED_SUFFIXES
                and not any(part.startswith(".") for part in q.relative_to(p).parts)
            )
            out.extend(found)
        else:
            out.append(p)
    return out


def _vet_strings(report: VetReport, rules: list[AllowRule], path: str, items: Iterable[tuple[Optional[int], str, str]]) -> None:
    for line, where, s in items:
        if where.endswith(KEY_MARK):  # read all the same, but the summary counts text fields
            found = list(_key_findings(s))
        else:
            report.strings += 1
            found = scan_text(s)
        if not found:
            continue
        if not rules:  # one comprehension step per finding: a line may hold a million
            report.findings += [make_record(Finding, (path, line, where, m.kind, mask(m.text), None)) for m in found]
            continue
        for m in found:
            rule = next((r for r in rules if r.accepts(m.kind, m.text)), None)
            allowed = None
            if rule is not None:
                rule.used += 1
                allowed = f"{rule.path}:{rule.line} ({rule.reason})"
            report.findings.append(Finding(path, line, where, m.kind, mask(m.text), allowed))


def vet_file(path: Path, report: VetReport, rules: list[AllowRule]) -> None:
    """Vet one file into ``report``; raises :class:`InputError` when it cannot be read."""
    name = str(path)
    if path.suffix == ".jsonl":
        document = document_in(path)  # a document over several lines: no line of it is a record
        if document is not None:
            raise InputError(name, None, None, f"{document} in a .jsonl file: vet reads a .jsonl file as JSON Lines, "
                                               "one record a line, and a JSON document from a .json file")
        items: list[tuple[Optional[int], str, str]] = []
        for line, text in iter_json_lines(path):
            obj = parse_strict(name, line, text)
            report.records += 1
            items.extend((line, where, s) for where, s in iter_strings(obj))
        _vet_strings(report, rules, name, items)
        return
    text = read_text(path, missing="no such file or folder")
    if path.suffix != ".json":
        raise InputError(name, None, None, "not a JSON or JSONL file (vet reads .json and .jsonl)")
    report.records += 1
    _vet_strings(report, rules, name, iter_document_strings(text, name))


def vet_paths(
    paths: Iterable[str | os.PathLike],
    *,
    allowlist: Optional[str | os.PathLike] = None,
    progress_bar: Any = None,
) -> VetReport:
    """Vet every string of every file under ``paths``; returns the findings and what was read.

    ``allowlist`` names a ``vet-allow.txt`` (see :func:`read_allowlist`); an unreadable allowlist
    raises :class:`InputError`. A file that cannot be read (missing, not UTF-8, not JSON) is
    recorded in ``errors`` and the others are still vetted. ``progress_bar`` wraps the file list.
    """
    rules = read_allowlist(allowlist) if allowlist is not None else []
    report = VetReport()
    paths = list(paths)
    for p in paths:
        if Path(p).is_dir() and not expand_paths([p]):
            report.errors.append(InputError(str(p), None, None, f"no {' or '.join(VETTED_SUFFIXES)} files in this folder"))
    files = expand_paths(paths)
    for p in (progress_bar(files) if progress_bar else files):
        if not p.exists():
            report.errors.append(InputError(str(p), None, None, "no such file or folder"))
            continue
        try:
            with paused_gc():  # findings are tuples of strings and numbers: a line may make a million
                vet_file(p, report, rules)
        except InputError as exc:
            report.errors.append(exc)
            continue
        report.files.append(str(p))
    report.unused_rules = [r for r in rules if r.used == 0]
    return report


def default_allowlist() -> Optional[Path]:
    """``vet-allow.txt`` in the current folder when there is one, else None."""
    p = Path(DEFAULT_ALLOWLIST)
    return p if p.is_file() else None
