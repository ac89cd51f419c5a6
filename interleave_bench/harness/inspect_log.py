"""An inspect log of ``interleavebench/routing`` back as a predictions file (``import inspect``).

The solver keeps each session's prediction rows in its sample's store (:data:`~.names.PREDICTIONS_KEY`),
exactly as ``route`` writes them; this reads them out in the data's session order, checks each
against the prediction record, and writes them as one JSONL file that ``score``, ``compare`` and
the leaderboard take.

The log is another program's file, read by that program's reader (``read_eval_log``), which reads
JSON as Python does: ``1e400`` as infinity, a repeated key by keeping the last, a 65-bit integer as
it comes. So the fields the import takes from it (the header's task, arguments and model; each
sample's id, epoch, position, error and rows) are first read strictly from the log's own members
(:func:`~interleave_bench.strictjson.parse_strict`), and refused with one line naming the log, the
member and the field; the rest of a log (messages, events, scores: NaN is a score inspect writes)
is inspect's and left to it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, require_file
from ..io import parse_record, write_jsonl
from ..record_errors import CONTROL, loc_to_field
from ..schema import MODES, PredictionRow
from ..strictjson import ANY, parse_strict
from .names import POSITION_KEY, PREDICTIONS_KEY, TASK

#: the header fields the import reads (``header.json`` of an ``.eval`` log, the top of a ``.json`` one)
HEADER_FIELDS = [("eval", "task"), ("eval", "task_args"), ("eval", "model"), ("status",)]
#: the sample fields the import reads (each ``samples/*.json`` member, each of a ``.json`` log's ``samples``)
SAMPLE_FIELDS = [("id",), ("epoch",), ("metadata", POSITION_KEY), ("error",), ("store", PREDICTIONS_KEY)]
#: an ``.eval`` log is a zip archive; these members hold what the import reads (a run that did not
#: finish has no header yet: inspect reads the run's spec from its journal's start)
HEADER_MEMBER, START_MEMBER, SAMPLES_DIR = "header.json", "_journal/start.json", "samples/"
#: a ``.json`` log is one JSON document; any other name is read as an ``.eval`` archive (as inspect does)
JSON_SUFFIX = ".json"


@dataclass(frozen=True)
class ImportedLog:
    """What :func:`import_log` wrote: the file, its rows and sessions, and the run's options."""

    out: Path
    rows: int
    sessions: int
    mode: str
    model: str


def _shown(name: str) -> str:
    """A name from inside the log, as a message shows it: quoted when it holds a control character."""
    return repr(name) if CONTROL.search(name) else name


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _strict(path: str, member: str | None, data: bytes, only: list[tuple[Any, ...]]) -> Any:
    """Refuse what inspect's reader would read wrongly in one JSON member (or the whole ``.json`` log);
    returns the member as read (only the fields of ``only`` are to be read from it)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, None, member and _shown(member), f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return parse_strict(path, None, text, only=only)
    except InputError as exc:
        field = exc.field if member is None else f"{_shown(member)} {exc.field or '(document)'}"
        raise InputError(path, None, field, exc.message) from None


def _count(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _check_sample(path: str, where: str, sample: Any) -> None:
    """The sample fields the import reads, taken as written: inspect's records would read an epoch
    ``"1"`` or ``1.0`` as 1, a position ``"3"`` as 3. ``where`` names the sample in messages, up to
    its field's name (``samples[0].``, ``samples/ID_epoch_1.json ``)."""
    if not isinstance(sample, dict):
        raise InputError(path, None, where.rstrip(". "), f"expected a sample (a JSON object), got {type(sample).__name__}")
    sid = sample.get("id")
    if not (isinstance(sid, str) or _count(sid, 0)) or (isinstance(sid, str) and (not sid or CONTROL.search(sid))):
        raise InputError(path, None, f"{where}id", f"{sid!r} is not a session id (text without control characters)")
    if not _count(sample.get("epoch"), 1):
        raise InputError(path, None, f"{where}epoch", f"{sample.get('epoch')!r} is not an epoch (1, 2, ...)")
    metadata = sample.get("metadata")
    pos = metadata.get(POSITION_KEY, 0) if isinstance(metadata, dict) else 0
    if not _count(pos, 0):
        raise InputError(path, None, f"{where}metadata.{POSITION_KEY}", f"{pos!r} is not a position (a count)")


def _check_members(path: str) -> None:
    """Read strictly the fields the import takes from the log at ``path`` (see the module)."""
    if path.endswith(JSON_SUFFIX):
        doc = _strict(path, None, Path(path).read_bytes(), HEADER_FIELDS + [("samples", ANY, *f) for f in SAMPLE_FIELDS])
        samples = doc.get("samples") if isinstance(doc, dict) else None
        for k, sample in enumerate(samples if isinstance(samples, list) else []):
            _check_sample(path, f"samples[{k}].", sample)
        return
    import zipfile

    import inspect_ai.log  # noqa: F401 - teaches ``zipfile`` the zstd compression inspect writes

    try:
        with zipfile.ZipFile(path) as zf:
            # a member written twice is read as its last entry, as inspect reads it
            names = list(dict.fromkeys(zf.namelist()))
            header = next((n for n in (HEADER_MEMBER, START_MEMBER) if n in names), None)
            if header is None:
                raise InputError(path, None, None, f"not an inspect log: the archive has no {HEADER_MEMBER} "
                                                   f"(nor {START_MEMBER})")
            for name in [header, *(n for n in names if n.startswith(SAMPLES_DIR) and n.endswith(".json"))]:
                try:
                    data = zf.read(name)
                except Exception as exc:  # noqa: BLE001 - a damaged member, whatever the decompressor says
                    raise InputError(path, None, _shown(name), f"cannot be read: {_first_line(exc)}") from None
                doc = _strict(path, name, data, HEADER_FIELDS if name == header else SAMPLE_FIELDS)
                if name != header:
                    _check_sample(path, f"{_shown(name)} ", doc)
    except zipfile.BadZipFile as exc:
        raise InputError(path, None, None, f"not an inspect log (an .eval log is a zip archive): {_first_line(exc)}") from None


def _read(path: str) -> Any:
    from inspect_ai.log import read_eval_log
    from pydantic import ValidationError

    require_file(path)
    if Path(path).stat().st_size == 0:
        raise InputError(path, None, None, "an empty file: not an inspect log")
    _check_members(path)
    try:
        return read_eval_log(path)
    except ValidationError as exc:  # a field inspect's own records refuse: name it
        err = exc.errors()[0]
        raise InputError(path, None, f"{exc.title} {loc_to_field(tuple(err['loc']))}",
                         f"not an inspect log: {err['msg']}") from None
    except Exception as exc:  # noqa: BLE001 - whatever inspect raises, the file is not a log it can read
        raise InputError(path, None, None, f"not an inspect log: {_first_line(exc)}") from None


def _text_field(name: str, field: str, value: Any) -> str:
    """A header text the import prints (the model): text, on one line."""
    if not isinstance(value, str) or not value or CONTROL.search(value):
        raise InputError(name, None, field, f"{value!r} is not a name (text without control characters)")
    return value


def _run_mode(name: str, log: Any) -> str | None:
    mode = (log.eval.task_args or {}).get("mode")
    if mode is not None and mode not in MODES:
        raise InputError(name, None, "eval.task_args.mode", f"{mode!r} is not a mode ({', '.join(MODES)})")
    return mode


def _position(sample: Any) -> int:
    """The sample's place in the data (its metadata's :data:`~.names.POSITION_KEY`; 0 when absent),
    a count by :func:`_check_sample`."""
    return (sample.metadata or {}).get(POSITION_KEY, 0)


def log_rows(path: str | os.PathLike) -> tuple[list[dict[str, Any]], Any]:
    """The prediction rows of the log at ``path`` (session order, then turn order) and the log.

    Raises :class:`InputError` naming the log, the sample and the field for a log of another task,
    a sample that failed or holds no rows, a row that is not a prediction row, a row of another
    session than its sample's or of another mode than the run's, and a turn given twice.
    """
    name = str(path)
    log = _read(name)
    if log.eval.task != TASK:
        raise InputError(name, None, "eval.task", f"a log of {log.eval.task!r}, not of {TASK}")
    _text_field(name, "eval.model", log.eval.model)
    mode = _run_mode(name, log)
    if not log.samples:
        raise InputError(name, None, "samples", f"no samples (log status {log.status})")
    firsts = [s for s in log.samples if s.epoch == 1]  # one prediction per message
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, int], str] = {}
    for sample in sorted(firsts, key=_position):
        where = f"samples[{sample.id}]"
        if sample.error is not None:
            failed = (sample.error.message.strip().splitlines() or ["error"])[0]
            raise InputError(name, None, where, f"the sample failed: {failed}")
        got = (sample.store or {}).get(PREDICTIONS_KEY)
        if not isinstance(got, list):
            raise InputError(name, None, f"{where}.store", f"no {PREDICTIONS_KEY!r} rows")
        for k, raw in enumerate(got):
            at = f"{name} {where}.store.{PREDICTIONS_KEY}[{k}]"
            row = parse_record(at, None, raw, PredictionRow)
            if row.session_id != str(sample.id):
                raise InputError(at, None, "session_id", f"{row.session_id!r}, but the sample is session {sample.id!r}: "
                                                         "a sample holds its own session's rows")
            if mode is not None and row.mode is not None and row.mode != mode:
                raise InputError(at, None, "mode", f"{row.mode!r}, but the run is in {mode!r} mode (eval.task_args.mode)")
            first = seen.setdefault((row.session_id, row.i), at)
            if first != at:
                raise InputError(at, None, "i", f"turn {row.i} of session {row.session_id!r} twice (first at {first})")
            rows.append(row.dump())
    if not rows:
        raise InputError(name, None, "samples", f"no prediction rows in any sample of epoch 1 (log status {log.status})")
    return rows, log


def import_log(path: str | os.PathLike, out: str | os.PathLike) -> ImportedLog:
    """Write the predictions of the inspect log at ``path`` to ``out``; returns what was written."""
    rows, log = log_rows(path)
    write_jsonl(out, rows)
    return ImportedLog(Path(out), len(rows), len({r["session_id"] for r in rows}), _run_mode(str(path), log) or "",
                       str(log.eval.model))

