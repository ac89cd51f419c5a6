"""``interleave-bench validate FILE...``: check data, prediction, manifest and mid-reply case files.

Prints a one-line summary per good file, or every error found (file, line, field), exit 0 or 2.
A sessions file also gets a ``warning:`` line on stderr per kind of label that contradicts the rules
labels are written by (:func:`~interleave_bench.session_checks.doubts`: ``ambiguous`` against the
independent reading, an action against where its message stands), naming the first and counting them;
warnings leave the exit code alone.
The kind of a file is told from its content: a JSONL file's first record by the rule every reader
goes by (:func:`~interleave_bench.file_kinds.record_kind`: ``turns`` and ``threads`` for sessions,
``i`` and ``pred`` for predictions, both refused as ambiguous); a JSON document with ``cases`` is a mid-reply case file, with ``writer`` a manifest.
Prediction rows must be unique per (session, turn), each read as ``score`` reads it (a number as a
label is read as its text, as the README says, in JSONL and Parquet alike). ``validate DATA PRED...`` also
checks each predictions file against the data given before it (unknown sessions and turns). A
folder stands for what ``score`` reads in it: a data folder's ``sessions.jsonl`` and
``manifest.json``, a predictions folder's ``*.jsonl`` and ``*.parquet`` files.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Iterator

from ..errors import InputError, InputErrors, error_line, located, shown
from ..file_kinds import AMBIGUOUS, DOCUMENT_KEYS, ambiguous, document_words, record_kind
from ..io import (MANIFEST_FILE, SESSIONS_FILE, iter_json_lines, parse_json, read_case_file, read_json, read_manifest,
                  read_records_with_lines, sessions_with_lines)
from ..schema import ERROR, PredictionRow, Session
from ..session_checks import doubts, doubts_named, session_arrays
from ..score.labels import ThreadLabels
from ..score.routing import DEFAULT_MODE, ambiguity_counts, ambiguous_share
from ..score.rows import mode_error

#: the turns and thread ids of each session of a data file: what predictions are checked against
Turns = dict[str, tuple[int, frozenset[str]]]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check files and summarise them", description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", metavar="FILE", help="sessions.jsonl, predictions, manifest.json, a mid-reply case file, or a data folder")
    p.set_defaults(func=run)


def sniff(path: str) -> str:
    """``sessions``, ``predictions``, ``cases`` or ``manifest`` from a file's first record."""
    p = Path(path)
    if p.suffix == ".parquet":
        return "predictions"  # Parquet holds prediction rows only (as ``score`` reads them)
    if p.suffix == ".json":
        data = read_json(path)
        words = document_words(data)
        checked = {DOCUMENT_KEYS["cases"]: "cases", DOCUMENT_KEYS["writer"]: "manifest"}.get(words)
        if checked is not None:
            return checked
        raise InputError(path, None, None, f"{words}: validate checks sessions and predictions (JSON Lines), "
                                           "manifests (with 'writer') and mid-reply case files (with 'cases')")
    for line, text in iter_json_lines(path):
        try:
            first = parse_json(path, None, text)
        except InputError:
            continue
        kind = record_kind(first)  # as every reader tells it
        if kind == AMBIGUOUS:
            raise ambiguous(path, line)
        return "predictions" if kind == "predictions" else "sessions"  # (the sessions reader names what else it is)
    for _ in iter_json_lines(path):
        return "sessions"  # only broken lines: the sessions reader names each one
    raise InputError(path, None, None, "no records: the file is empty")


#: sessions whose labels are checked together (:func:`~..session_checks.doubts`)
DOUBT_BLOCK = 1000


class Doubted:
    """The doubts of a file's valid sessions (:class:`~..session_checks.Doubts`), read block by
    block: each kind's count and the line, field and message of its first."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.block: list[tuple[int, Session]] = []
        self.counts: Counter[str] = Counter()
        self.first: dict[str, tuple[int, str, str]] = {}

    def add(self, line: int, s: Session) -> None:
        self.block.append((line, s))
        if len(self.block) == DOUBT_BLOCK:
            self.flush()

    def flush(self) -> None:
        if not self.block:
            return
        arrays = session_arrays([s for _, s in self.block])
        for kind, n, k, field, message in doubts_named(arrays, doubts(arrays)):
            self.counts[kind] += n
            self.first.setdefault(kind, (self.block[k][0], field, message))
        self.block = []

    def lines(self) -> list[str]:
        """One ``warning:`` line per kind: its first, and how many turns of the file are like it."""
        self.flush()
        return [error_line(located(self.path, line, field, f"{message} ({self.counts[kind]:,} "
                                   f"turn{'s' if self.counts[kind] != 1 else ''} like this)"), "warning")
                for kind, (line, field, message) in self.first.items()]


def summarise_sessions(path: str, turns: Turns | None = None,
                       warnings: list[str] | None = None) -> tuple[str, list[InputError]]:
    """The summary line and errors of a sessions file; fills ``turns`` (session id -> turn count,
    thread ids) and ``warnings`` (a line per kind of doubt its valid sessions raise)."""
    n_sessions = n_messages = n_amb = n_thread = 0
    leaks: Counter[str] = Counter()
    langs: Counter[str] = Counter()
    errors: list[InputError] = []
    doubted = Doubted(path)
    try:
        for line, s in sessions_with_lines(path, collect=True):
            doubted.add(line, s)
            n_sessions += 1
            n_messages += len(s.turns)
            langs[s.lang] += 1
            if turns is not None:
                turns[s.session_id] = (len(s.turns), frozenset(s.thread_ids()))
            amb, thread = ambiguity_counts(s.turns)
            n_amb += amb
            n_thread += thread
            for t in s.turns:
                if "leak" in t.tags:
                    leaks[s.lang] += 1
    except InputErrors as exc:
        errors = exc.errors
    except InputError as exc:
        errors = [exc]
    if warnings is not None:
        warnings += doubted.lines()
    share = ambiguous_share(n_amb, n_thread)  # the metric, as stats and a score document give it
    ambiguity = (f"ambiguous share {'–' if share is None else f'{share:.1%}'} "
                 f"({n_amb:,} of {n_thread:,} thread message{'' if n_thread == 1 else 's'})")
    leak_text = ", ".join(f"{lang} {leaks.get(lang, 0)}" for lang in sorted(langs)) or "none"
    lang_text = ", ".join(f"{k} {v}" for k, v in sorted(langs.items()))
    line = (
        f"{path}: ok: {n_sessions:,} sessions ({lang_text}), {n_messages:,} messages, {ambiguity}, "
        f"leaks by language: {leak_text}"
    )
    return line, errors


def _row_problems(path: str, line: int, r: PredictionRow, first: dict[tuple[str, int], int],
                  data: tuple[str, Turns] | None) -> list[InputError]:
    """What is wrong with one valid-looking row: a repeat, or a session or turn the data lacks."""
    key = (r.session_id, r.i)
    if key in first:
        return [InputError(path, line, "i", f"duplicate row for session {shown(r.session_id)} turn {r.i} (first on line {first[key]})")]
    first[key] = line
    if data is None:
        return []
    name, turns = data
    if r.session_id not in turns:
        return [InputError(path, line, "session_id", f"{shown(r.session_id)} is not a session of {name}")]
    n = turns[r.session_id][0]
    if r.i >= n:
        return [InputError(path, line, "i", f"session {shown(r.session_id)} of {name} has no turn {r.i} (turns 0-{n - 1})")]
    return []


def summarise_predictions(path: str, data: tuple[str, Turns] | None = None) -> tuple[str, list[InputError]]:
    """The summary line and errors of a predictions file, checked against ``(data file, turns)`` if
    given: closed-mode labels too, as ``score`` holds them (:class:`~..score.labels.ThreadLabels`)."""
    rows = failed = 0  # failed: ERROR rows, decisions the router could not give
    sessions: set[str] = set()
    policies: Counter[str] = Counter()
    errors: list[InputError] = []
    first: dict[tuple[str, int], int] = {}
    run_mode: str | None = None  # the first a row names: every row that names one names it
    labels = ThreadLabels()
    parquet = path.endswith(".parquet")
    try:
        for line, r in _rows_of(path, parquet):
            rows += 1
            failed += r.pred == ERROR
            sessions.add(r.session_id)
            policies[f"{r.mode or '?'}/{r.policy or '?'}"] += 1
            problems = _row_problems(path, line, r, first, data)
            errors += problems
            if data is not None and not problems:
                labels.add(line, r.pred, data[1][r.session_id][1])
            run_mode = run_mode or r.mode
            if r.mode is not None and r.mode != run_mode:
                errors.append(mode_error(path, line, r.mode, run_mode))
    except InputErrors as exc:
        errors = sorted(exc.errors + errors, key=lambda e: e.line or 0)
    except InputError as exc:
        errors = [exc]
    if not errors and (run_mode or DEFAULT_MODE) == "closed" and labels.refused:
        errors = [labels.error(path, labels.first[0])]  # type: ignore[index]
    kinds = ", ".join(sorted(policies)) or "none"
    against = f", all in {data[0]}" if data is not None else ""
    # ERROR rows are valid rows, and score counts them wrong: said, as score says it (score/rows.py)
    failed_part = f", {failed:,} of them ERROR (decisions the router could not give)" if failed else ""
    return (f"{path}: ok: {rows:,} prediction rows over {len(sessions):,} sessions ({kinds}){against}{failed_part}",
            errors)


def _rows_of(path: str, parquet: bool) -> Iterator[tuple[int, PredictionRow]]:
    """``(line, row)`` of a predictions file, JSONL or Parquet (a Parquet row's number is its line),
    read as ``score`` reads it; raises naming every bad one."""
    if not parquet:
        yield from read_records_with_lines(path, PredictionRow, collect=True)
        return
    from ..score.read import read_parquet_rows

    rows, lines = read_parquet_rows(path)
    yield from zip(lines, rows)


def summarise_cases(path: str) -> tuple[str, list[InputError]]:
    try:
        f = read_case_file(path)
    except InputErrors as exc:
        return "", exc.errors
    except InputError as exc:
        return "", [exc]
    by_lang = Counter(c.lang for c in f.cases)
    by_how = Counter(c.how for c in f.cases)
    langs = ", ".join(f"{k} {v}" for k, v in sorted(by_lang.items()))
    hows = ", ".join(f"{k} {v}" for k, v in sorted(by_how.items()))
    cats = ", ".join(f"{k} {len(v)} topics" for k, v in sorted(f.catalogs.items()))
    return f"{path}: ok: {len(f.cases)} mid-reply cases ({langs}; {hows}); catalogs: {cats}", []


def summarise_manifest(path: str) -> tuple[str, list[InputError]]:
    try:
        m = read_manifest(path)
    except InputErrors as exc:
        return "", exc.errors
    except InputError as exc:
        return "", [exc]
    c = m.counts
    return (
        f"{path}: ok: manifest of {m.version} by {m.writer}: {c.sessions:,} sessions, {c.messages:,} messages, "
        f"{c.failed} failed",
        [],
    )


SUMMARISERS = {
    "sessions": summarise_sessions,
    "predictions": summarise_predictions,
    "cases": summarise_cases,
    "manifest": summarise_manifest,
}


def expand(paths: list[str]) -> list[str]:
    """A data folder stands for its ``sessions.jsonl`` and ``manifest.json``; a folder without them,
    for its prediction files (``*.jsonl``, ``*.parquet``), as ``score`` reads a predictions folder."""
    from ..score.run import prediction_files

    out: list[str] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found = [str(p / name) for name in (SESSIONS_FILE, MANIFEST_FILE) if (p / name).exists()]
            if not found:
                try:
                    found = [str(f) for f in prediction_files([p], option=None)]  # each checked on its own
                except InputError:
                    raise InputError(path, None, None, f"no {SESSIONS_FILE}, {MANIFEST_FILE} or prediction files "
                                                       "(.jsonl, .parquet) in this folder") from None
            out.extend(found)
        else:
            out.append(path)
    return out


def run(args: argparse.Namespace) -> int:
    bad = 0
    data: tuple[str, Turns] | None = None  # the last good sessions file: later predictions are checked against it
    for path in expand(args.files):
        warnings: list[str] = []  # doubts that are no errors: printed, the exit code unchanged
        try:
            kind = sniff(path)
            if kind == "sessions":
                turns: Turns = {}
                line, errors = summarise_sessions(path, turns, warnings)
                data = None if errors else (path, turns)
            elif kind == "predictions":
                line, errors = summarise_predictions(path, data)
            else:
                line, errors = SUMMARISERS[kind](path)
        except InputErrors as exc:
            line, errors = "", exc.errors
        except InputError as exc:
            line, errors = "", [exc]
        if errors:
            bad += 1
            for err in errors:
                print(error_line(err.format()), file=sys.stderr)
            print(f"{path}: {len(errors)} error{'s' if len(errors) != 1 else ''}", file=sys.stderr)
        else:
            print(line)
        for warning in warnings:
            print(warning, file=sys.stderr)
    return 2 if bad else 0
