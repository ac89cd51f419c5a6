"""``interleave-bench score-facts RESULTS.jsonl...``: score facts runs, never calling a model.

Prints per run the strategy table (accuracy with a Wilson 95% interval, verdicts, stale and
proposal answers, context tokens, notes characters), accuracy by category and language, facts vs
summary on the same probes, delivered-line verdicts, routing with and without facts offered, tokens
spent and the four gates, and writes ``<results>.score.json`` beside each file. With ``--data``,
each answer's verdict is judged again from its text and the data's probe, each delivered line's
from the session's timeline, each route row's gold is checked against the data's topic, and a row
that disagrees is refused. Exits 1 unless every run has no error rows, no missing or duplicate
answers and passes every gate; 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from ..errors import InputError, require_one_each, require_output
from ..facts.report import report
from ..facts.results import FactsSummary, is_summary_head, read_rows, rejudge, score_rows, split_of
from ..facts.records import SessionRow
from ..io import read_sessions, sessions_file, write_json
from ..locks import exclusive_output
from ..fingerprints import records_fingerprint, sha256_file
from ..progress import Timer, print_summary
from ..provenance import provenance
from ..schema import Session

SUMMARY_SUFFIX = ".score.json"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score-facts", help="score shared-facts runs: strategies, deliveries, routing, gates",
                       description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("results", nargs="+", metavar="RESULTS", help="facts results files (.jsonl)")
    p.add_argument("--data", metavar="DATA",
                   help="the v1 data the runs answered (sessions.jsonl or its folder): every answer is judged again "
                        "from its text and the probe, every delivered line from the timeline, every route's gold "
                        "checked against the data, and a row that disagrees is refused")
    p.add_argument("--json", action="store_true", help="print the score document(s) instead of the tables")
    p.set_defaults(func=run)


def summary_path(results: Path) -> Path:
    """``<results without .jsonl>.score.json``."""
    name = results.name[: -len(".jsonl")] if results.name.endswith(".jsonl") else results.name
    return results.with_name(name + SUMMARY_SUFFIX)


def require_summary_outputs(results: Sequence[Path], data: Path | None, option: str) -> None:
    """Refuse (one line, before any work) a summary beside one of ``results`` (:func:`summary_path`)
    that is an input (a results file, the data's sessions) or a file of another kind, or that two
    of them would both write (one of them given twice)."""
    inputs = [*((r, "a results file") for r in results), *([(data, "the sessions file")] if data is not None else [])]
    require_one_each([(r, summary_path(r)) for r in results], option, "results file", "summary", "rename one")
    for r in results:
        require_output(summary_path(r), inputs, is_summary_head, "a facts summary",
                       f"{option} {r} has its summary beside it, and")


def summary_document(results: Path, rows: list, metrics: dict[str, Any], data: Path | None = None,
                     data_sha: str | None = None, split: str | None = None) -> FactsSummary:
    """The typed score document of one results file (``data``: the sessions file, when known, with
    ``data_sha`` its fingerprint on the records, as score files, the card and the leaderboard
    compute it; ``split``: the split its rows' sessions are of there)."""
    sessions = [r for _, r in rows if isinstance(r, SessionRow)]
    results_sha = sha256_file(results)
    return FactsSummary(
        results={"path": str(results), "sha256": results_sha},
        # the data's whole path, so a later score-facts finds it from any folder
        data={"path": os.path.abspath(data), "sha256": data_sha} if data is not None else None,
        split=split,
        system=next((s.system for s in sessions if s.system), None),
        model=next((s.model for s in sessions if s.model), None),
        passed=metrics["passed"],
        metrics=metrics,
        provenance=provenance(results=results_sha, predictions_sha256=results_sha,
                              **({"data_sha256": data_sha} if data_sha is not None else {})),
    )


def _named_data(results: Path) -> tuple[Path, str | None] | None:
    """The data the summary already beside ``results`` names (``data.path``) and the fingerprint it
    states, so scoring again keeps it; None when there is no summary, or it names no data. Refused
    when the file it names is gone (a rescore would drop the claim)."""
    summary = summary_path(results)
    if not summary.is_file():
        return None
    try:
        doc = json.loads(summary.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # not a summary this command could keep anything of: it is written anew
    named = doc.get("data") if isinstance(doc, dict) and isinstance(doc.get("data"), dict) else {}
    path, stated = named.get("path"), named.get("sha256")
    if not isinstance(path, str) or not path:
        return None
    found = next((c for c in (Path(path), summary.parent / path) if c.is_file()), None)
    if found is None:
        raise InputError(str(summary), None, "data.path", f"{path}: no such file; scoring again would drop the "
                                                         "data this summary was judged on: give it with --data")
    return found, stated


def score_and_write(results: Path, data: Path | None = None, sessions: Sequence[Session] | None = None,
                    require_rows: bool = False) -> FactsSummary:
    """Score one results file and write its ``.score.json``, holding that file's lock meanwhile;
    returns the document. Given ``data`` (else the data the summary already there names, refused
    when its sessions are no longer the ones that summary was judged on), every answer is judged
    again against its sessions (``sessions``: those of ``data``, when already read:
    :func:`~interleave_bench.facts.results.rejudge`) and the summary carries the data, its
    fingerprint and the split answered. ``require_rows``: refuse a file with no rows (a file given
    to score, not a run's own file)."""
    with exclusive_output(summary_path(results), "score-facts"):
        rows = read_rows(results, require_rows=require_rows)
        split = data_sha = stated = None
        if data is None:
            data, stated = _named_data(results) or (None, None)
        if data is not None:
            loaded = read_sessions(data) if sessions is None else sessions
            data_sha = records_fingerprint(loaded)
            if stated is not None and data_sha != stated:
                raise InputError(str(summary_path(results)), None, "data.sha256",
                                 f"the sessions of {data} are no longer the ones this summary was judged on: "
                                 "give the data with --data")
            by_id = {s.session_id: s for s in loaded}
            rows = rejudge(rows, by_id, str(results), str(data))
            split = split_of(rows, by_id)
        doc = summary_document(results, rows, score_rows(rows, str(results)), data, data_sha, split)
        write_json(summary_path(results), doc.model_dump(mode="json"))
    return doc


def exit_code(docs: Sequence[FactsSummary]) -> int:
    """The exit code of a facts run or of scoring runs, so a CI gate can rely on it: 0 when every
    run in ``docs`` passed (``passed``: no error rows, no duplicate or missing answers, every gate
    passed), else 1. ``score-facts`` and ``facts`` both return it; bad input is exit 2 before it."""
    return 0 if all(d.passed for d in docs) else 1


def run(args: argparse.Namespace) -> int:
    timer = Timer()
    data = sessions_file(args.data) if args.data else None
    require_summary_outputs([Path(p) for p in args.results], data, "score-facts:")
    sessions = read_sessions(data) if data is not None else None  # read once for every file
    docs = [score_and_write(Path(p), data, sessions, require_rows=True) for p in args.results]
    if args.json:
        payload = [d.model_dump(mode="json") for d in docs]
        print(json.dumps(payload[0] if len(payload) == 1 else payload, ensure_ascii=False, indent=1))
    else:
        for d in docs:
            print(f"## {d.results['path']} (system {d.system or '?'}, model {d.model or '?'})")
            print()
            print(report(d.metrics))
            print()
    for d in docs:
        print(f"wrote {summary_path(Path(d.results['path']))}", file=sys.stderr)
    passed = sum(d.passed for d in docs)
    print_summary("score-facts", {"runs scored": len(docs), "passed": passed}, timer.seconds)
    return exit_code(docs)
