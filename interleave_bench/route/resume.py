"""Resuming a routing run: what of its output file is already done, read back as strictly as any
predictions file (a run's file a user may have edited is a user's file); what a run that
stopped before its first row takes away again (:class:`NewOutputs`), so it leaves nothing to resume
but the record of the model calls it paid (:func:`paid_before_rows`), which its rerun adds to;
where a ``--fresh`` run writes until its first row (:func:`rows_file`), and the score files of the
rows it replaces then, which it removes (:func:`remove_stale_scores`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from collections import Counter
from typing import TYPE_CHECKING, Any, Optional, Sequence

from ..errors import UsageError, jsonl_head_of
from ..io import iter_json_lines, parse_record, truncate_partial_line
from ..schema import CLARIFY, ERROR, PredictionRow, Session
from ..score.read import KIND_FIELDS

if TYPE_CHECKING:
    from ..documents import RunRecord
    from .runner import RouteOptions

#: what a refusal to resume another run's output says to do, in the command's options, and in
#: :func:`~.plugin.evaluate_router`'s arguments (each caller of :func:`~.runner.run_route` passes its own)
START_OVER = "pass --fresh to start over, or --out FILE to write elsewhere"
START_OVER_FROM_PYTHON = "pass fresh=True to start over, or out=PATH to write elsewhere"


#: whether a file's first bytes are a predictions file's: its first line a JSON object holding a
#: session, a turn and a prediction, or, as the file's only line, the start of one cut off by a
#: crash. Not a manifest, a run record or a score file, nor another kind of JSON Lines (a sessions
#: file, results), nor Parquet: what ``route --out``, ``evaluate_router(out=)`` and ``import
#: inspect --out`` may resume or write over (:func:`~interleave_bench.errors.require_replaceable`)
is_rows_head = jsonl_head_of(KIND_FIELDS["predictions"])


def require_route_outputs(data: "str | Path", out: "str | Path", source: "Optional[str | Path]", option: str) -> None:
    """Refuse (one line, before any work) an output ``out`` of a routing run whose predictions file
    or run record (:func:`~interleave_bench.documents.run_record_path`) is an input (the data's sessions file, the
    plug-in router's ``source`` file), is no regular file, or is already there as a file of
    another kind (a manifest, a score file, a sessions file: ``--fresh`` would replace it).
    ``option`` names the output as the caller takes it (``route: --out``, ``evaluate_router: out=``)."""
    from ..documents import is_run_head, run_record_path
    from ..errors import require_output
    from ..score.read import data_inputs

    inputs = data_inputs(data) + ([(source, "the router's source file")] if source is not None else [])
    require_output(out, inputs, is_rows_head, "a predictions file", option)
    require_output(run_record_path(Path(out)), inputs, is_run_head, "a run record",
                   f"{option} {out} writes its run record beside it, and")


def require_own_record(out: Path, record: Path) -> None:
    """Refuse (one line) the output ``out`` when its run record ``record`` is there and is another
    output's: ``x`` and ``x.jsonl`` both keep theirs in ``x.run.json``, and a record names its
    predictions file. A run of ``out`` would write over (or, stopped, remove) that run's record."""
    from ..documents import run_record_path
    from ..errors import InterleaveError
    from ..io import read_json

    if not record.is_file():
        return
    try:
        named = read_json(record).get("predictions")
    except (InterleaveError, AttributeError):
        return  # no run record to speak of: what reads it refuses it
    if (isinstance(named, str) and named and named != out.name and Path(named).name == named
            and run_record_path(out.with_name(named)) == record):
        raise UsageError(f"{record} is the run record of {named}, and {out.name} would keep its own there "
                         f"too; write {out.name} elsewhere")


def paid_before_rows(record: "RunRecord") -> bool:
    """Whether ``record`` is what a run stopped (Ctrl-C, an error) before its first row left of the
    model calls it had paid: not complete, its counts holding no message, its usage those calls
    (:func:`no_rows_record`). A rerun of the same run adds its own calls to them."""
    return not record.complete and record.counts is not None and not record.counts.messages and record.usage is not None


def no_rows_record(record: "RunRecord", sessions: int, usage: Any) -> "RunRecord":
    """``record`` of a run stopped before its first row that had paid model calls (``usage``): what
    :func:`paid_before_rows` recognises, beside no output."""
    from ..documents import RunCounts

    counts = RunCounts(sessions=sessions, resumed_sessions=0, messages=0, errors=0, clarify=0, fallback=0, rules=0)
    return record.model_copy(update={"complete": False, "counts": counts, "usage": usage})


def previous_record(out: Path, record: Path) -> "Optional[RunRecord]":
    """The run record a (not ``--fresh``) run of ``out`` resumes: the one beside its output, or,
    with no output, one holding the calls a run stopped before its first row paid
    (:func:`paid_before_rows`). Any other record beside no output (its predictions moved away, say)
    is none to resume: the run writes its own there at its first row."""
    from ..errors import InterleaveError
    from ..io import read_run_record

    if not record.exists():
        return None
    if out.exists():
        return read_run_record(record)
    try:
        found = read_run_record(record)
    except InterleaveError:
        return None
    return found if paid_before_rows(found) else None


@dataclass(frozen=True)
class NewOutputs:
    """What a run is about to make: of the files its output and the paths beside it (its run
    record) name (a symlink's target, not the link), those not there yet, and the folders it will
    make for them, deepest first.

    A run that stops (an error, Ctrl-C) before its output holds a row leaves no trace:
    :meth:`remove_files`, then, once its lock files are gone, :meth:`remove_folders`. Each file is
    taken on its own: one that was there before the run began is never removed (a link to an
    output, an empty output, a record beside a new one), one the run made is, and none while the
    output holds anything (resume needs its rows).
    """

    output: Path
    files: tuple[Path, ...]
    folders: tuple[Path, ...]

    @classmethod
    def before(cls, output: Path, *beside: Path) -> "NewOutputs":
        """Taken before the run touches ``output`` or the files ``beside`` it."""
        from ..locks import real_output

        paths = (output, *beside)
        reals = tuple(real_output(p) for p in paths)
        folders = set()
        for path in (*paths, *reals):  # a link's folder, and its target's (its lock file is beside that)
            folder = path.absolute().parent
            while not folder.exists():
                folders.add(folder)
                folder = folder.parent
        deepest_first = tuple(sorted(folders, key=lambda f: len(f.parts), reverse=True))
        return cls(reals[0], tuple(r for r in reals if not os.path.lexists(r)), deepest_first)

    def remove_files(self, keep: Optional[Path] = None) -> None:
        """Remove each file the run made but ``keep`` (the record of calls it paid,
        :func:`paid_before_rows`), when its output holds nothing."""
        try:
            if self.output.stat().st_size:
                return
        except FileNotFoundError:
            pass
        from ..locks import real_output

        for p in self.files:
            if keep is None or p != real_output(keep):
                p.unlink(missing_ok=True)

    def remove_folders(self) -> None:
        """Remove the folders the run made that are empty (none is while it left a file in it)."""
        for folder in self.folders:
            try:
                folder.rmdir()
            except OSError:
                continue


def rows_file(out: Path, fresh: bool) -> Path:
    """Where a run holding the lock of ``out`` appends its rows: ``out`` itself, or for a ``fresh``
    run a hidden stand-in beside the file ``out`` names (``.NAME.fresh``) that the run puts in its
    place at its first row (:func:`~.runner.run_route`), so the run it starts over from stays whole
    until the new one holds a row; a run stopped before one removes it. A stand-in (and its lock
    file) a killed ``--fresh`` run left is removed first: it held no row of the output."""
    from ..locks import lock_path, real_output

    real = real_output(out)
    stand_in = real.with_name(f".{real.name}.fresh")
    for p in (stand_in, lock_path(stand_in)):
        p.unlink(missing_ok=True)
    return stand_in if fresh else out


def stale_scores(out: Path) -> list[Path]:
    """The score files of the rows ``out`` holds now: of the names score gives them
    (:func:`~interleave_bench.score.paths.score_paths`: every split's, in every mode), those that
    are there and are score documents scored from these very rows: their provenance's
    ``predictions_sha256`` is the SHA-256 of ``out`` (hashed once, here, before the rows are
    replaced, and only if such a document is there), or, in one that records no SHA-256, its
    ``predictions_file`` is ``out`` itself (:func:`~interleave_bench.errors.same_path`). Nothing
    else: not a file of another kind by such a name, nor a score of another file written there
    (``score --out``, or ``x.parquet`` beside ``x.jsonl``, which score into one name), whatever
    that file's name."""
    from ..documents import is_score_head
    from ..errors import InterleaveError, same_path
    from ..fingerprints import sha256_file
    from ..io import read_json
    from ..score.paths import score_paths

    replaced: list[Optional[str]] = []  # the SHA-256 of out, once hashed

    def rows_sha() -> Optional[str]:
        if not replaced:
            try:
                replaced.append(sha256_file(out))
            except OSError:
                replaced.append(None)  # no rows there: no score file is theirs by its SHA-256
        return replaced[0]

    found = []
    for path in score_paths(out):
        try:
            with open(path, "rb") as fh:
                if not is_score_head(fh.read(4096)):
                    continue
            facts = read_json(path).get("provenance", {})
            sha, scored = facts.get("predictions_sha256"), facts.get("predictions_file")
        except (OSError, InterleaveError, AttributeError):
            continue  # not there, or no score document to speak of
        if isinstance(sha, str) and sha:
            if sha == rows_sha():
                found.append(path)
        elif isinstance(scored, str) and scored and same_path(scored, out):
            found.append(path)
    return found


def stale_scores_line(removed: Sequence[Path]) -> str:
    """The line a command prints of the score files fresh runs removed (:func:`remove_stale_scores`)."""
    return f"removed {len(removed)} stale score file(s) of the earlier run: {', '.join(map(str, removed))}"


def remove_stale_scores(out: Path) -> list[Path]:
    """Remove the score files of the rows in ``out`` (:func:`stale_scores`), as a ``--fresh`` run
    puts its own rows in their place: their figures are the earlier run's. Returns those removed,
    which the run's result carries for its command to name (:func:`stale_scores_line`); says on
    stderr at once which it could not remove, if any."""
    from ..progress import note

    removed, kept = [], []
    for path in stale_scores(out):
        try:
            path.unlink()
            removed.append(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            kept.append(f"{path} ({exc.strerror or exc})")
    if kept:
        note(f"warning: could not remove {len(kept)} stale score file(s) of the earlier run, whose figures are not "
             f"this run's: {', '.join(kept)}")
    return removed


def prepare_resume(out: Path, sessions: Sequence[Session], opts: "RouteOptions", start_over: str = START_OVER,
                   model: Optional[str] = None) -> set[str]:
    """The sessions already complete in ``out``; cuts off a session left incomplete by a crash.

    The file must be a prefix of this run's output: the selected sessions in order, each with one
    row per message, with this run's mode, policy and model (``model``: the router's, as its rows
    name it, None for a router of no model). Anything else is a different run's file and raises
    :class:`UsageError` (whose advice is ``start_over``) rather than mixing two runs in one file.
    """
    if not out.exists():
        return set()
    truncate_partial_line(out)
    expected = [(s.session_id, len(s.turns)) for s in sessions]
    turns = [frozenset(t.i for t in s.turns) for s in sessions]
    seen: set[int] = set()  # the turns of the current session with a row
    done: set[str] = set()
    pos = 0  # index into expected
    current: Optional[str] = None
    current_rows = 0
    current_start = 0
    offset = 0

    def mismatch(why: str) -> UsageError:
        return UsageError(f"{out}: {why}; it was written by a different run ({start_over})")

    failed_at: Optional[int] = None  # start of the first session holding an ERROR row
    with open(out, "rb") as fh:
        for line_no, raw in enumerate(fh, start=1):
            try:
                row = json.loads(raw)
                sid = row["session_id"]
            except (ValueError, KeyError, TypeError, RecursionError):
                raise mismatch(f"line {line_no} is not a prediction row") from None
            if row.get("mode") != opts.mode or row.get("policy") != opts.policy:
                held = f"{row.get('mode') or '?'}/{row.get('policy') or '?'}"  # an open/..., a closed/...
                raise mismatch(f"line {line_no} is {'an' if held[:1].lower() in 'aeiou' else 'a'} {held} row")
            if row.get("model") != model:
                raise mismatch(f"line {line_no} is a row of model {row.get('model')!r}, not {model!r}")
            # a row this run kept is read as strictly as any predictions file (1e400, a repeated key)
            parse_record(str(out), line_no, raw.decode("utf-8", "replace"), PredictionRow)
            if sid != current:
                if current is not None:
                    if current_rows != expected[pos][1]:
                        raise mismatch(f"session {current!r} has {current_rows} rows, not {expected[pos][1]}")
                    if failed_at is not None:
                        break
                    done.add(current)
                    pos += 1
                if pos >= len(expected) or expected[pos][0] != sid:
                    raise mismatch(f"line {line_no}: session {sid!r} is not the next session of this run")
                current, current_rows, current_start = sid, 0, offset
                seen = set()
            if row["i"] not in turns[pos] or row["i"] in seen:
                raise mismatch(f"line {line_no}: turn {row['i']} of session {sid!r} is "
                               f"{'given twice' if row['i'] in seen else 'not a turn of it'}")
            seen.add(row["i"])
            if row.get("pred") == ERROR and failed_at is None:
                failed_at = current_start
            current_rows += 1
            offset += len(raw)
    if failed_at is not None:
        # a session with ERROR rows is routed again from its start, and every later one with it (the
        # file stays a prefix of the run): the cache replays what was paid for, so only the failed
        # requests, and the ones after them in their session that saw the ERROR, are asked again
        with open(out, "rb+") as fh:
            fh.truncate(failed_at)
    elif current is not None:
        if current_rows == expected[pos][1]:
            done.add(current)
        elif current_rows < expected[pos][1]:
            # a crash between two rows of a session: route that session again from its start
            with open(out, "rb+") as fh:
                fh.truncate(current_start)
        else:
            raise mismatch(f"session {current!r} has {current_rows} rows, not {expected[pos][1]}")
    return done


#: what a run record counts of its rows (:class:`~interleave_bench.documents.RunCounts`)
FILE_COUNTS = ("messages", "errors", "clarify", "fallback", "rules")


def file_counts(path: Path) -> dict[str, int]:
    """Rows, errors, clarifications, fallbacks and rule decisions in a predictions file."""
    c: Counter[str] = Counter()
    for _, text in iter_json_lines(path):
        row = json.loads(text)
        c["messages"] += 1
        c["errors"] += row["pred"] == ERROR
        c["clarify"] += row["pred"] == CLARIFY
        c["fallback"] += "fallback" in row
        c["rules"] += "rule-" in row.get("via", "")
    return {k: c[k] for k in FILE_COUNTS}
