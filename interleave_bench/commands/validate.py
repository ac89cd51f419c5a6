"""``interleave-bench validate FILE...``: check data, prediction, manifest and mid-reply case files.

Prints a one-line summary per good file, or every error found (file, line, field), exit 0 or 2.
The kind of a file is told from its content: JSONL rows with ``turns`` are sessions, with ``pred``
predictions; a JSON document with ``cases`` is a mid-reply case file, with ``writer`` a manifest.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from ..errors import InputError, InputErrors
from ..io import MANIFEST_FILE, SESSIONS_FILE, iter_json_lines, iter_sessions, read_case_file, read_json, read_manifest, read_predictions


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check files and summarise them", description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", metavar="FILE", help="sessions.jsonl, predictions, manifest.json, a mid-reply case file, or a data folder")
    p.set_defaults(func=run)


def sniff(path: str) -> str:
    """``sessions``, ``predictions``, ``cases`` or ``manifest`` from a file's first record."""
    p = Path(path)
    if p.suffix == ".json":
        data = read_json(path)
        if isinstance(data, dict) and "cases" in data:
            return "cases"
        if isinstance(data, dict) and "writer" in data:
            return "manifest"
        raise InputError(path, None, None, "a JSON file must be a mid-reply case file (with 'cases') or a manifest (with 'writer')")
    for _, text in iter_json_lines(path):
        try:
            first = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(first, dict) and "pred" in first:
            return "predictions"
        return "sessions"
    for _ in iter_json_lines(path):
        return "sessions"  # only broken lines: the sessions reader names each one
    raise InputError(path, None, None, "no records: the file is empty")


def summarise_sessions(path: str) -> tuple[str, list[InputError]]:
    n_sessions = n_messages = n_amb = 0
    leaks: Counter[str] = Counter()
    langs: Counter[str] = Counter()
    errors: list[InputError] = []
    try:
        for s in iter_sessions(path, collect=True):
            n_sessions += 1
            n_messages += len(s.turns)
            langs[s.lang] += 1
            for t in s.turns:
                n_amb += t.ambiguous
                if "leak" in t.tags:
                    leaks[s.lang] += 1
    except InputErrors as exc:
        errors = exc.errors
    except InputError as exc:
        errors = [exc]
    share = f" ({n_amb / n_messages:.1%})" if n_messages else ""
    leak_text = ", ".join(f"{lang} {leaks.get(lang, 0)}" for lang in sorted(langs)) or "none"
    lang_text = ", ".join(f"{k} {v}" for k, v in sorted(langs.items()))
    line = (
        f"{path}: ok: {n_sessions:,} sessions ({lang_text}), {n_messages:,} messages, {n_amb:,} ambiguous{share}, "
        f"leaks by language: {leak_text}"
    )
    return line, errors


def summarise_predictions(path: str) -> tuple[str, list[InputError]]:
    rows = 0
    sessions: set[str] = set()
    policies: Counter[str] = Counter()
    errors: list[InputError] = []
    try:
        for r in read_predictions(path, collect=True):
            rows += 1
            sessions.add(r.session_id)
            policies[f"{r.mode or '?'}/{r.policy or '?'}"] += 1
    except InputErrors as exc:
        errors = exc.errors
    except InputError as exc:
        errors = [exc]
    kinds = ", ".join(sorted(policies)) or "none"
    return f"{path}: ok: {rows:,} prediction rows over {len(sessions):,} sessions ({kinds})", errors


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
    """A data folder stands for its ``sessions.jsonl`` and ``manifest.json``."""
    out: list[str] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found = [str(p / name) for name in (SESSIONS_FILE, MANIFEST_FILE) if (p / name).exists()]
            out.extend(found or [path])
        else:
            out.append(path)
    return out


def run(args: argparse.Namespace) -> int:
    bad = 0
    for path in expand(args.files):
        try:
            kind = sniff(path)
            line, errors = SUMMARISERS[kind](path)
        except InputErrors as exc:
            line, errors = "", exc.errors
        except InputError as exc:
            line, errors = "", [exc]
        if errors:
            bad += 1
            for err in errors:
                print(f"error: {err.format()}", file=sys.stderr)
            print(f"{path}: {len(errors)} error{'s' if len(errors) != 1 else ''}", file=sys.stderr)
        else:
            print(line)
    return 2 if bad else 0
