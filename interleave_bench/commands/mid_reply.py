"""``interleave-bench mid-reply [CASES]``: where does a message sent while a reply runs belong?

Runs the shipped policy (the classifier, one model call per message, inside the rule that keeps
acknowledgements, undecided answers and failures with the running work) or, with --rule-only,
the rule alone (the baseline: everything stays), over a mid-reply case file (the packaged cases by
default). Writes one JSONL row per case and a JSON summary beside it, and prints the table of
exact accuracy, right side, mixed in and split off with 95% intervals, by language, how, expect
kind and tag. A rerun resumes: decided cases are kept, and model answers come from the cache.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError, require_output
from ..documents import MidReplySummary, is_mid_reply_head
from ..interrupted import kept_in, note_kept
from ..io import write_json
from ..locks import exclusive_output
from ..options import whole_number
from ..fingerprints import records_fingerprint, sha256_file
from ..llm import add_model_arguments, model_session_from_args
from ..llm.provider import run_model
from ..midreply.cases import load_cases, packaged_cases_path
from ..midreply.metrics import summarize
from ..midreply.prompt import PROMPT_VERSION
from ..midreply.report import decisions_line, markdown_table
from ..midreply.results import POLICY_CLASSIFIER, POLICY_RULE, RESULTS_HEAD
from ..midreply.rule import RULE_VERSION, VIA_ERROR, VIA_UNPARSABLE, VIA_UNSURE
from ..midreply.runner import MidReplyRun, items_for, select_cases, via_counts
from ..progress import Timer, print_summary
from ..provenance import provenance

#: where results go unless --out says otherwise (relative to the working folder)
DEFAULT_RESULTS_DIR = "results"
#: the summary file sits beside the results file, with this suffix instead of .jsonl
SUMMARY_SUFFIX = ".score.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mid-reply",
        help="route messages sent while a reply runs (hand-written cases), and score it",
        description=__doc__.split("\n\n")[1].replace("\n", " "),
    )
    p.add_argument("cases", nargs="?", metavar="CASES", help="a mid-reply case file (default: the packaged cases)")
    p.add_argument("--rule-only", action="store_true", help="the rule with no model: every message stays with the running work (baseline)")
    p.add_argument("--out", metavar="FILE", help="results JSONL (default: results/mid-reply[-<cases>]-<policy>[-<model>][-dry].jsonl)")
    p.add_argument("--lang", action="append", metavar="LANG", help="only cases of this language (repeatable)")
    p.add_argument("--limit", type=whole_number(), metavar="N", help="only the first N selected cases (a smoke test)")
    add_model_arguments(p)
    p.set_defaults(func=run)


def _slug(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("_") or "x"


def default_out(policy: str, model: str | None, dry_run: bool, cases_stem: str | None = None) -> Path:
    """``results/mid-reply[-<cases>]-<policy>[-<model>][-dry].jsonl`` (``<cases>`` only for a
    case file other than the packaged one, so two case sets never share a results file)."""
    parts = ["mid-reply"]
    if cases_stem:
        parts.append(_slug(cases_stem))
    parts.append(policy)
    if model:
        parts.append(_slug(model))
    if dry_run:
        parts.append("dry")
    return Path(DEFAULT_RESULTS_DIR) / ("-".join(parts) + ".jsonl")


def summary_path(out: Path) -> Path:
    """The JSON summary's path: the results path with ``.score.json`` for ``.jsonl``."""
    name = out.name[: -len(".jsonl")] if out.name.endswith(".jsonl") else out.name
    return out.with_name(name + SUMMARY_SUFFIX)


def _is_packaged(path: str) -> bool:
    with packaged_cases_path() as p:
        try:
            return Path(path).resolve() == p.resolve()
        except OSError:
            return False


def _check_options(args: argparse.Namespace) -> None:
    if args.rule_only and (args.model or args.dry_run):
        raise UsageError("--rule-only calls no model: drop --model/--dry-run, or drop --rule-only")
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit must be at least 1, got {args.limit}")


def run(args: argparse.Namespace) -> int:
    timer = Timer()
    _check_options(args)
    case_file = load_cases(args.cases)
    cases_label = args.cases or "packaged cases"
    if args.lang:
        missing = sorted(set(args.lang) - {c.lang for c in case_file.cases})
        if missing:
            have = ", ".join(sorted({c.lang for c in case_file.cases}))
            raise UsageError(f"--lang {', '.join(missing)}: no such cases in {cases_label} (languages: {have})")
    cases = select_cases(case_file, args.lang, args.limit)

    policy = POLICY_RULE if args.rule_only else POLICY_CLASSIFIER
    model: str | None = None
    if policy == POLICY_CLASSIFIER:
        model = run_model(args.model, bool(args.dry_run))
    stem = Path(args.cases).stem if args.cases and not _is_packaged(args.cases) else None
    out = Path(args.out) if args.out else default_out(policy, model, bool(args.dry_run), stem)
    # before any work: a results file is resumed, and nothing else is ever cut or replaced
    inputs = [(args.cases, "the case file")] if args.cases else []
    require_output(out, inputs, RESULTS_HEAD, "a mid-reply results file", "mid-reply: --out")
    require_output(summary_path(out), inputs, is_mid_reply_head, "a mid-reply summary",
                   f"mid-reply: --out {out} writes its summary beside it, and")
    with exclusive_output(out, f"mid-reply --policy {policy}"):
        return _run_into(args, timer, case_file, cases, cases_label, policy, model, out)


def _run_into(args: argparse.Namespace, timer: Timer, case_file: Any, cases: list[Any], cases_label: str,
              policy: str, model: str | None, out: Path) -> int:
    """The body of :func:`run`, run while holding the results file's lock; returns the exit code."""
    job = MidReplyRun(case_file, cases, out, policy=policy, model=model)
    plan = job.prepare()
    llm = None
    try:
        if policy == POLICY_RULE:
            job.run_rule()
        elif plan.needs_model():
            if args.dry_run:
                from ..midreply import fake  # noqa: F401  (registers the fake model's classifier)
            with model_session_from_args(args) as llm:
                llm.run(job.run_classifier(llm))
        else:  # only acknowledgements left: the rule decides them with no call
            asyncio.run(job.run_classifier(None))
    except KeyboardInterrupt as exc:  # the line Ctrl-C ends with says what the results file holds
        note_kept(exc, kept_in(job.finished(), len(cases), "case", out))
        raise
    finally:
        # what was decided is kept in case-file order, even when the run is interrupted
        rows = job.finish()

    summary = summarize(items_for(case_file, cases, rows))
    vias = via_counts(rows)
    _write_summary(args, out, summary, vias, policy, model, llm, rows, records_fingerprint(case_file.cases))

    title = f"mid-reply: policy {policy}" + (f" (model {model}{', dry run' if args.dry_run else ''})" if model else "")
    # stdout holds the table alone (``> table.md``); what it is of, and how it was decided, go to stderr
    print(f"{title}; {len(rows)} case{'s' if len(rows) != 1 else ''} from {cases_label}", file=sys.stderr)
    print(markdown_table(summary))
    print(decisions_line(vias), file=sys.stderr)

    failed = vias.get(VIA_ERROR, 0)
    attempted = sum(vias.get(v, 0) for v in ("classifier", VIA_UNSURE, VIA_UNPARSABLE, VIA_ERROR))
    print(f"results: {out}; summary: {summary_path(out)}", file=sys.stderr)
    if llm is not None:
        print(llm.cost_line(), file=sys.stderr)
    counts: dict[str, Any] = {
        "cases": len(rows),
        "decided now": len(job.fresh),
        "kept from earlier runs": len(plan.kept),
        "failed calls": failed,
    }
    if plan.redone:
        counts["stale or failed rows replaced"] = plan.redone
    print_summary("mid-reply", counts, timer.seconds, llm)
    if failed:
        if failed == attempted:
            raise UsageError(
                f"every classifier call failed ({failed}); the results say nothing about the classifier. "
                f"First failure: {next(r['problem'] for r in rows if r['via'] == VIA_ERROR)}"
            )
        print(
            f"warning: {failed} classifier call{'s' if failed != 1 else ''} failed; those cases stayed with the "
            "running work (the rule) and are tried again on the next run",
            file=sys.stderr,
        )
    return 0


def _write_summary(
    args: argparse.Namespace,
    out: Path,
    summary: dict[str, Any],
    vias: dict[str, int],
    policy: str,
    model: str | None,
    llm: Any,
    rows: list[dict[str, Any]],
    cases_fingerprint: str,
) -> None:
    if args.cases:
        cases_sha = sha256_file(args.cases)
    else:
        with packaged_cases_path() as p:
            cases_sha = sha256_file(p)
    row_usage = [r["usage"] for r in rows if r.get("usage")]
    doc = MidReplySummary.model_validate({
        "policy": policy,
        "model": model,
        "dry_run": bool(getattr(args, "dry_run", False)),
        "versions": {"prompt": PROMPT_VERSION if policy == POLICY_CLASSIFIER else None, "rule": RULE_VERSION},
        "cases": {"path": args.cases or "packaged", "sha256": cases_sha, "selected": len(rows),
                  "lang": args.lang, "limit": args.limit},
        "results": {"path": str(out), "sha256": sha256_file(out)},
        "decisions": vias,
        "metrics": summary,
        "usage": {
            "rows_with_call": len(row_usage),
            "input_tokens": sum(u["input"] for u in row_usage),
            "cached_input_tokens": sum(u["cache_hit"] for u in row_usage),
            "output_tokens": sum(u["output"] for u in row_usage),
            "this_run": llm.stats.as_manifest() if llm is not None else None,
        },
        # the case set's fingerprint on the records, as the export's card and the leaderboard compute it
        "provenance": provenance(data_sha256=cases_fingerprint, predictions_sha256=sha256_file(out)),
    })
    write_json(summary_path(out), doc.dump())
