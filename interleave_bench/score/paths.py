"""Where scoring's files are: the prediction files a list of paths names, a run's name, and the
one rule for the name of its score file (:func:`score_path`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from ..errors import InputError, InterleaveError, require_given_once, shown
from ..schema import MODES, SCORE_SPLITS
from .defaults import DEFAULT_SPLIT

#: what a predictions file may be: JSONL lines, or Parquet (what DuckDB, Spark and Ray write)
PREDICTION_SUFFIXES = (".jsonl", ".parquet")


def prediction_files(paths: Iterable[str | os.PathLike], option: str | None = "score:") -> list[Path]:
    """Prediction files in the order given; a folder stands for its ``*.jsonl`` and ``*.parquet`` entries,
    sorted: every one, as if named alone, so one that is no readable file (a dangling link, a link loop,
    a FIFO, a folder) is refused in the line that names it alone, never passed over unsaid.

    One file given twice, however its paths are spelled (the same path, a symlink, a hard link, a
    folder's entry and the file named too), is refused in one line that ``option`` begins (the
    command, ``score:``, ``report:``: :func:`~interleave_bench.errors.require_given_once`): the one
    rule for every reader of runs, so it holds before anything is read, whatever they write (files
    beside the runs, ``--out``, ``--json``, a page). ``option=None`` lists them only (``validate``
    checks each file on its own)."""
    out: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found = sorted(x for x in p.iterdir() if x.suffix in PREDICTION_SUFFIXES)
            if not found:
                raise InputError(str(p), None, None, "no .jsonl or .parquet prediction files in this folder")
            out.extend(found)
        else:
            out.append(p)
    if option is not None:
        require_given_once(out, option, "predictions file")
    return out


def system_name(pred_path: Path) -> str:
    """A run's name: its predictions file name without ``.jsonl`` or ``.parquet`` (``closed-bm25``)."""
    name = pred_path.name
    for suffix in PREDICTION_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return pred_path.stem


def routed_mode(pred_path: str | os.PathLike) -> str | None:
    """The mode a predictions file's rows say they were routed in (the first mode a row names);
    ``None`` when none names one, or when the file cannot be read for it (the scorer then names
    what is wrong with it)."""
    from .columnar import named_mode
    from .datafile import Bad

    try:
        return named_mode(pred_path)
    except (Bad, OSError, ValueError, InterleaveError):
        return None


def run_record(pred_path: str | os.PathLike) -> tuple[Path, dict] | None:
    """The run record beside a predictions file (``<name>.run.json``, written by ``route``) and
    what it holds; ``None`` when there is none, or it is no readable JSON object (its rows are
    then all there is to go by)."""
    from ..documents import run_record_path
    from ..io import read_json

    record = run_record_path(Path(pred_path))
    if not record.is_file():
        return None
    try:
        doc = read_json(record)
    except InterleaveError:
        return None
    return (record, doc) if isinstance(doc, dict) else None


def recorded_mode(pred_path: str | os.PathLike) -> tuple[str, Path] | None:
    """The mode a run was routed in as its run record states it (``options.mode``), with the
    record's path; ``None`` without a record that states one."""
    found = run_record(pred_path)
    options = found[1].get("options") if found is not None else None
    mode = options.get("mode") if isinstance(options, dict) else None
    return (mode, found[0]) if found is not None and mode in MODES else None


def require_recorded_mode(pred_path: str | os.PathLike, mode: str | None) -> None:
    """Raise :class:`InputError` (one line) when the run's record states a mode (``options.mode``)
    that is no mode, or not the one its rows name (the record or the rows were edited: which is
    the run's?), or when ``mode`` (``--mode``) is not the mode it states: a closed-mode router is
    shown the threads and labels by their ids, an open-mode one makes its own topics, so rows
    scored in the other mode give a number for a task the run never did (an open-mode router's
    topics ``t1``, ``t2`` read as the thread ids they happen to spell). Nothing for a file without
    a record, or one stating no mode (its rows' mode may be overridden: :func:`other_mode`)."""
    found = run_record(pred_path)
    options = found[1].get("options") if found is not None else None
    if found is None or not isinstance(options, dict) or "mode" not in options:
        return
    routed, record = options["mode"], found[0]
    if routed not in MODES:
        raise InputError(str(record), None, "options.mode", f"expected 'closed' or 'open', got {shown(routed)}")
    rows = routed_mode(pred_path)
    if rows is not None and rows != routed:
        raise InputError(str(record), None, "options.mode",
                         f"says {pred_path} was routed in {routed} mode, and its rows say {rows} mode: a run's "
                         f"record and rows are written together, so one of them was edited; route it again")
    if mode is not None and routed != mode:
        raise InputError(str(record), None, "options.mode",
                         f"{pred_path} was routed in {routed} mode, and --mode asks to score it in {mode} mode: a run "
                         f"is scored in the mode it was routed in (leave out --mode, or route it again with --mode {mode})")


def other_mode(pred_path: str | os.PathLike, mode: str | None) -> str | None:
    """``mode`` (``--mode``) when it is not the mode the file's rows were routed in
    (:func:`routed_mode`), else ``None``: a run whose rows name no mode is its own in any mode. (A
    run whose record states its mode is never scored in another: :func:`require_recorded_mode`.)"""
    if mode is None:
        return None
    routed = routed_mode(pred_path)
    return mode if routed is not None and routed != mode else None


def score_path(pred_path: Path, split: str = DEFAULT_SPLIT, mode: str | None = None) -> Path:
    """Where a run's score document goes: beside the predictions, ``<name>.score.json`` for the
    default split in the mode its rows were routed in, with ``.<split>`` before ``.score.json`` for
    another split and then ``.<mode>`` when ``mode`` (``--mode``) asks for another mode
    (:func:`other_mode`): ``closed-bm25.test.open.score.json``. So scoring one split, or a run in
    a mode it was not routed in, never overwrites another's figures."""
    parts = [system_name(pred_path)]
    parts += [split] if split != DEFAULT_SPLIT else []
    parts += [m for m in [other_mode(pred_path, mode)] if m is not None]
    return pred_path.with_name(".".join(parts) + ".score.json")


def score_paths(pred_path: Path) -> list[Path]:
    """Every name :func:`score_path` gives a score document of ``pred_path`` as its rows stand now:
    each split's, in the mode they were routed in and in each other mode (``--mode``), in that
    order. A run's figures, for taking them away with the rows they are of."""
    return list(dict.fromkeys(score_path(pred_path, split, mode) for split in SCORE_SPLITS
                              for mode in (None, *MODES)))
