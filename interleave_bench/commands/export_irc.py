"""``interleave-bench export-irc PRED --out DIR``: a run's conversations in the IRC corpus's formats.

Writes ``DIR/clusters.txt`` (one predicted conversation a line, ``<date>.annotation.txt:<message
numbers>``) and ``DIR/links.txt`` (``<date>.annotation.txt:<message> <message it joins> -``), so a
run on data written by ``import irc`` can be checked with the corpus's own evaluation scripts.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import InputError, InputErrors, require_apart_from_corpus, require_file
from ..io import MANIFEST_FILE, read_json, sessions_file
from ..progress import Timer, print_summary
from ..documents import run_record_path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export-irc", help="write a run's conversations in the IRC corpus's formats",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("predictions", metavar="PRED", help="a predictions file (.jsonl) of a run on imported IRC data")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for clusters.txt and links.txt")
    p.add_argument("--data", metavar="DATA",
                   help="the data the run routed (default: the data its .run.json names, else the folder above predictions/)")
    p.set_defaults(func=run)


def data_of(pred: Path) -> Path:
    """The data a predictions file was routed from: its run record's ``data``, else ``<pred>/../..``."""
    record = run_record_path(pred)
    if record.is_file():
        doc = read_json(record)
        data = doc.get("data") if isinstance(doc, dict) else None
        if isinstance(data, str) and Path(data).exists():
            return Path(data)
    return pred.parent.parent


def corpus_of(data: Path) -> str | None:
    """The corpus folder the data was imported from, as its manifest records it (``options.source``,
    written by ``import irc``); ``None`` without one."""
    manifest = data.parent / MANIFEST_FILE
    if not manifest.is_file():
        return None
    doc = read_json(manifest)
    options = doc.get("options") if isinstance(doc, dict) else None
    source = options.get("source") if isinstance(options, dict) else None
    return source if isinstance(source, str) and source else None


def run(args: argparse.Namespace) -> int:
    from ..irc.export import CLUSTERS_FILE, LINKS_FILE, write_corpus_clusters
    from ..route.selection import check_mode_applies
    from ..score.read import other_kind, read_predictions_fast, read_sessions_fast
    from ..score.rows import index_rows, mode_errors

    timer = Timer()
    pred = Path(args.predictions)
    require_file(pred)
    # a sessions file or a score file given as the run: said before the data is looked for
    other_kind(pred, "predictions", data_goes="it is the data, given with --data (or found beside the run)")
    data = sessions_file(args.data if args.data else data_of(pred))
    if not data.is_file():
        raise InputError(str(data), None, None, "no such file (give the data the run routed with --data)")
    source = corpus_of(data)
    if source is not None:  # as import refuses it: the corpus is read, never written
        require_apart_from_corpus(args.out, source, "export-irc", f"export-irc writes {CLUSTERS_FILE} and "
                                  f"{LINKS_FILE} apart from the corpus the data was imported from")
    sessions = read_sessions_fast(data)
    rows, lines = read_predictions_fast(pred)
    index = index_rows(rows, {s.session_id: s for s in sessions}, source=str(pred), lines=lines)
    wrong_mode = mode_errors(rows, index.resolved_mode(), str(pred), lines)  # one run is one mode, as score reads it
    if wrong_mode:
        raise InputErrors(wrong_mode)
    # IRC data is open-only: a run in closed mode routed against conversations it could not know
    check_mode_applies(data, sessions, index.resolved_mode(), f"a run routed with --mode open, not {pred}")
    if rows and not index.by_session:
        raise InputError(str(pred), None, None, f"none of its {len(rows):,} rows is for a session of {data}: "
                                                "the run routed other data (give that data with --data)")
    result = write_corpus_clusters(sessions, index.by_session, args.out, source=str(data))
    print(f"wrote {result.clusters_path} ({result.conversations:,} conversations)")
    print(f"wrote {result.links_path} ({result.links:,} links)")
    if result.skipped:
        print(f"not exported: {len(result.skipped):,} sessions without rows ({', '.join(result.skipped[:5])}"
              f"{', ...' if len(result.skipped) > 5 else ''})")
    unknown = len(index.unknown_sessions) + len(index.unknown_turns)
    if unknown:  # as score names them on its `not scored:` line
        print(f"not exported: {unknown:,} rows for sessions or turns the data does not hold")
    print_summary("export-irc", {"sessions": result.sessions, "conversations": result.conversations,
                                      "links": result.links}, timer.seconds)
    return 0
