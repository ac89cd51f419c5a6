#!/usr/bin/env python
"""Fit the ``local`` router across corpora and print how it does on the one left out.

    python scripts/fit_local.py --sgd DIR --irc DIR            # offline data generated here, seed 1
    python scripts/fit_local.py --offline data/interleave-v1-offline --sgd DIR --irc DIR --out /tmp/w.json

Corpora (dev sessions only: ``test`` is never read): offline data (v0 sessions generated here with
the offline writer, ``--sessions`` and ``--seed``, unless ``--offline DIR`` names a data folder), the
Schema-Guided Dialogue dev split (``--sgd``) and the IRC disentanglement dev logs (``--irc``),
each given as the corpus's own folder (imported here) or as a data folder written by ``import sgd``
/ ``import irc``. Each corpus weighs the same in the fit, whatever its size; IRC, a real chat log,
fits the open mode only.

Prints the leave-one-corpus-out table (fitted on the others, measured on the one left out:
accuracy in both modes, 1-1 in open mode, expected calibration error, and bm25 on the same
sessions for comparison; penalty, weights and calibration chosen and fitted without the corpus
reported; a corpus that shows the assistant's replies once more with them hidden, as a writer's
plain chat), the same in domain (each session routed by weights fitted on the other folds of every
corpus), then the reliability table of the shipped calibration (each kind of chat's map cross-fitted
as ``local_corpora.CALIBRATE_BY`` says: by corpus, each corpus routed by weights fitted without
it, or by session fold). Writes ``interleave_bench/data/local/weights.json`` (or ``--out``); the same
corpora give a byte-identical file whatever the thread setting (the fit runs on one thread:
``local_corpora.FIT_THREADS``). It takes about 45 minutes on two cores; on a terminal a bar on stderr
counts the weights fitted and names the stage. Exit codes: 0 written, 2 bad input (one line on stderr). docs/local.md
explains the fit and gives its tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from interleave_bench.errors import InterleaveError  # noqa: E402
from interleave_bench.generate.runner import generate_offline  # noqa: E402
from interleave_bench.io import atomic_write_text, iter_sessions, read_json, sessions_file  # noqa: E402
from interleave_bench.fingerprints import sha256_file  # noqa: E402
from interleave_bench.irc import import_irc  # noqa: E402
from interleave_bench.sgd import import_sgd  # noqa: E402
from interleave_bench.progress import Timer, summary_line  # noqa: E402
from interleave_bench.route.bm25 import Bm25Router  # noqa: E402
from interleave_bench.route.local_corpora import Corpus, fit_corpora, router_scores, without_replies  # noqa: E402
from interleave_bench.route.local_sample import FIT_SPLIT  # noqa: E402
from interleave_bench.route.local_fit import MODES, RELIABILITY_MIN_N, RELIABILITY_TOLERANCE, reliability_holds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "interleave_bench" / "data" / "local" / "weights.json"
#: offline sessions generated for the fit (four in five are dev): thousands of dev messages, as
#: many as the other corpora hold, so no corpus's calibration steps rest on a handful
DEFAULT_SESSIONS = 300
#: not the demo's seed (0): the demo's sessions stay out of the fit, so its `local` rows are
#: figures on data the fit never saw
DEFAULT_SEED = 1
#: the offline data set generated: v0, the format routing is measured on (SGD brings the replies)
DEFAULT_DATASET = "v0"


#: the importer of each corpus whose own folder may be given instead of a data folder; with
#: "offline", the corpora ``local_sample.fit_corpora`` names and tells a data folder of by its
#: manifest's writer (``score`` marks a run of the weights on their fit's data as in-sample)
IMPORTERS = {"irc": import_irc, "sgd": import_sgd}


def _load(name: str, path: Path, tmp: Path) -> Corpus:
    """The dev sessions of a data folder (or of the corpus's own folder, imported first)."""
    if name in IMPORTERS and path.is_dir() and not (path / "sessions.jsonl").exists():
        IMPORTERS[name](path, tmp / name)
        path = tmp / name
    file = Path(sessions_file(path))
    dev = [s for s in iter_sessions(file) if s.split == FIT_SPLIT]
    if not dev:
        raise InterleaveError(f"fit_local: {file}: no {FIT_SPLIT} sessions")
    return Corpus(name, dev, {"sessions_sha256": sha256_file(file)})


def _offline(args: argparse.Namespace, tmp: Path) -> Corpus:
    if args.offline:
        corpus = _load("offline", Path(args.offline), tmp)
        return Corpus("offline", corpus.sessions, {"data": "given", **corpus.source})
    path = generate_offline(args.sessions, tmp / "offline", seed=args.seed, dataset=DEFAULT_DATASET)
    config = read_json(Path(path).parent / "manifest.json")["options"]["config"]
    dev = [s for s in iter_sessions(path) if s.split == FIT_SPLIT]
    # the writer's version and content fingerprint say when a refit is due
    return Corpus("offline", dev, {"data": "generated", "dataset": DEFAULT_DATASET, "generated_sessions": args.sessions,
                                   "seed": args.seed, "generator": config.get("generator"),
                                   "content": config.get("content")})


def _cell(x: Optional[float]) -> str:
    return "–" if x is None else f"{x:.3f}"


def held_out_table(corpora: Sequence[Corpus], held: dict[str, Any], bm25: dict[str, Any], first: str = "left out") -> list[str]:
    """A per-corpus table (left out, with the penalty chosen without it; or in domain) as Markdown lines."""
    penalty = first == "left out"
    out = [f"| {first} | mode | messages | local | bm25 | local 1-1 | bm25 1-1 | ECE |"
           + (" penalty |" if penalty else " ECE, folds held out |"), "|---|---|---|---|---|---|---|---|---|"]
    names = [n for c in corpora for n in (c.name, without_replies(c.name))]
    for name in (n for n in names if n in held):
        for mode in MODES:
            r = held[name].get(mode)
            if r is None:
                continue
            b = bm25[name][mode]
            out.append(f"| {name} | {mode} | {r['strict_messages']:,} | {_cell(r['accuracy'])} | {_cell(b['accuracy'])} "
                       f"| {_cell(r.get('one_to_one'))} | {_cell(b.get('one_to_one'))} | {_cell(r['ece'])} |"
                       + (f" {r['penalty']:g} |" if penalty else f" {_cell(r['ece_held_out'])} |"))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS, help=f"offline sessions to generate (default {DEFAULT_SESSIONS})")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"seed of the offline writer (default {DEFAULT_SEED})")
    ap.add_argument("--offline", metavar="DIR", help="the offline corpus: this data folder's dev sessions instead of generating")
    ap.add_argument("--sgd", metavar="DIR", help="the SGD corpus: its folder (dev/ dialogues) or a data folder of `import sgd`")
    ap.add_argument("--irc", metavar="DIR", help="the IRC corpus: its folder (dev/ logs) or a data folder of `import irc`")
    ap.add_argument("--out", metavar="FILE", default=str(DEFAULT_OUT), help="where to write the weights")
    args = ap.parse_args(argv)
    if not args.offline and args.sessions < 5:
        print(f"fit_local: --sessions must be at least 5, got {args.sessions}", file=sys.stderr)
        return 2
    timer = Timer()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            corpora = [_offline(args, Path(tmp))]
            for name in ("sgd", "irc"):
                if getattr(args, name):
                    corpora.append(_load(name, Path(getattr(args, name)), Path(tmp)))
        weights, report = fit_corpora(corpora)
        bm25 = {c.name: {m: router_scores(c.sessions, m, Bm25Router()) for m in c.modes()} for c in corpora}
        bm25.update({without_replies(c.name): {m: router_scores(c.plain, m, Bm25Router()) for m in c.modes()}
                     for c in corpora if c.plain is not None})
    except (InterleaveError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(weights.to_json(), ensure_ascii=False, indent=1) + "\n")
    tried = ", ".join(f"{p} {_cell(v)}" for p, v in report["penalty"]["left_out_accuracy"].items())
    print(f"penalty {report['penalty']['chosen']:g}, chosen by the mean left-out accuracy of those tried ({tried})")
    print("fitted on the other corpora (penalty chosen on them), measured on the one left out (dev sessions):")
    print("\n".join(held_out_table(corpora, report["held_out"], bm25)))
    print("in domain: each session routed by weights fitted on the other folds of every corpus, with the shipped "
          "calibration (ECE), and with maps fitted without the session's fold (ECE, folds held out):")
    print("\n".join(held_out_table(corpora, report["in_domain"], bm25, "corpus")))
    for mode, r in report["fit"].items():
        print(f"{mode}: fitted on {', '.join(f'{c} ({n:,} examples)' for c, n in r['examples'].items())}; "
              f"confidence cross-fitted by {', '.join(f'{k} {v}' for k, v in r['calibrated_by'].items())} "
              f"(each routed by weights that never saw it): ECE {_cell(r['ece'])}")
        print("  bin        n  confidence  accuracy    gap")
        for row in r["reliability"]:
            flag = "" if row["n"] < RELIABILITY_MIN_N or row["gap"] <= RELIABILITY_TOLERANCE else \
                f"  <- over {RELIABILITY_TOLERANCE}"
            print(f"  {row['lo']:.1f}-{row['hi']:.1f} {row['n']:6d}  {row['confidence']:10.4f}  {row['accuracy']:8.4f}  "
                  f"{row['gap']:.4f}{flag}")
        print(f"  calibrated within {RELIABILITY_TOLERANCE} in every bin of {RELIABILITY_MIN_N}+ messages: "
              f"{'yes' if reliability_holds(r['reliability']) else 'NO'}")
    print(f"wrote {out}")
    print(summary_line("fit_local", {"corpora": len(corpora), "dev sessions": sum(len(c.sessions) for c in corpora)},
                       timer.seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
