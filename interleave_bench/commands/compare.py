"""``interleave-bench compare DATA A.jsonl B.jsonl``: a paired comparison of two runs on the same data.

Prints the change in every headline metric, per-message wins and losses on strict messages,
McNemar's exact p-value, the paired bootstrap interval of the accuracy difference, and the
messages that flipped, most telling first. ``--fail-on-regression`` exits 1 when B is
significantly worse than A at the 5% level (a regression gate for CI).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..progress import Timer, print_summary
from ..score.compare import compare_predictions
from ..heap import paused_gc
from ..options import whole_number
from ..score.read import DATA_FIRST, read_predictions_fast, read_sessions_fast
from ..reports.tables import compare_report, mcnemar_text, warn_in_sample
from ..score.run import require_recorded_mode, system_name
from .score import add_scoring_arguments, routing_warnings

#: flipped messages printed by default (all of them are in the JSON)
DEFAULT_SHOW = 20


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="paired comparison of two runs", description=__doc__.split("\n\n")[0])
    p.add_argument("data", metavar="DATA", help="sessions.jsonl, or the data folder that holds it")
    p.add_argument("a", metavar="A", help="predictions of the baseline run")
    p.add_argument("b", metavar="B", help="predictions of the candidate run")
    add_scoring_arguments(p)
    p.add_argument("--show", type=whole_number(), default=DEFAULT_SHOW, metavar="N",
                   help=f"flipped messages to print (default {DEFAULT_SHOW}; 0: their count alone)")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when B is significantly worse than A (McNemar exact, 5%%)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import UsageError, require_file, require_given_once
    from ..io import sessions_file
    from ..fingerprints import records_fingerprint, sha256_file
    from ..provenance import provenance
    from ..route.digest import refuse_other_data

    if args.show < 0:
        raise UsageError("--show must be 0 or more")
    timer = Timer()
    data_path = sessions_file(args.data)
    paths = (Path(args.a), Path(args.b))
    for path in paths:
        require_file(path)  # as score does: a FIFO would be waited on for ever
        require_recorded_mode(path, args.mode)  # as score does: a run is scored in the mode it was routed in
    unchecked = refuse_other_data(data_path, paths, args.split, writes_own=False)  # as score does: on the sessions it routed
    # records are built by the hundred thousand: keep the cyclic collector off meanwhile
    with paused_gc():
        sessions = read_sessions_fast(data_path, DATA_FIRST)
        # as score does (after the data's own check: a run given as the data is said so first)
        require_given_once(paths, "compare:", "predictions file")  # a run against itself has no flips
        (rows_a, lines_a), (rows_b, lines_b) = (read_predictions_fast(p) for p in paths)
        doc = compare_predictions(
            sessions, rows_a, rows_b,
            names=(system_name(paths[0]), system_name(paths[1])),
            sources=(str(paths[0]), str(paths[1])),
            lines=(lines_a, lines_b), data_file=str(data_path),
            mode=args.mode, split=args.split, bootstrap=args.bootstrap, seed=args.seed,
            allow_duplicates=args.allow_duplicates,
        )
    from ..route.local_sample import fit_sample
    from ..score.in_sample import in_sample_of

    sample = fit_sample(data_path, args.split)  # each run marked as score marks it (docs/score.md#in-sample)
    for side, path in zip(("a", "b"), paths):
        doc[side]["in_sample"] = in_sample_of(sample, path, doc[side]["policy"])
    doc["provenance"] = provenance(
        data_file=str(data_path), data_sha256=records_fingerprint(sessions),
        a_file=str(paths[0]), a_sha256=sha256_file(paths[0]),
        b_file=str(paths[1]), b_sha256=sha256_file(paths[1]),
        bootstrap=args.bootstrap, seed=args.seed,
    )
    if args.json:
        print(json.dumps(doc, ensure_ascii=False, indent=2))
        for line in doc["not_scored_notices"]:  # on stderr, as score --json says them
            print(line, file=sys.stderr)
    else:
        print(compare_report(doc, args.show))
    for line in routing_warnings(unchecked, [args.a, args.b], args.mode):
        print(line, file=sys.stderr)
    warn_in_sample([doc["a"], doc["b"]], sys.stderr)
    print_summary("compare", {"sessions": doc["sessions"], "strict messages": doc["strict_messages"],
                                   "flips": len(doc["flips"])}, timer.seconds)
    if args.fail_on_regression and doc["regression"]:
        print(f"regression: {doc['b']['system']} is significantly worse than {doc['a']['system']} "
              f"(accuracy {doc['accuracy_diff']:+.4f}, {mcnemar_text(doc)})", file=sys.stderr)
        return 1
    return 0
