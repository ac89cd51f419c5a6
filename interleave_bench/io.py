"""Reading and writing the project's files: JSONL streams, JSON documents, atomic writes, appends.

Readers validate each line once against its record type (``schema.py``) and raise
:class:`~interleave_bench.errors.InputError` naming file, line and field. ``collect=True`` readers
gather every error of a file instead of stopping at the first (``interleave-bench validate``).
Writers never leave a half-written file: whole files go through a temporary file and a rename;
appends write whole lines and flush them (and sync them to disk within a second), so an
interrupted run leaves only complete records.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import secrets
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TypeVar

import msgspec
from pydantic import ValidationError

from .errors import (InputError, InputErrors, UsageError, require_apart_from_corpus, require_file, require_output_file,
                     shown, writing)
from .redaction import redact_secrets
from .file_kinds import other_kind
from .heap import paused_gc
from .locks import exclusive_output, hold_file, real_output
from .json_text import NEWLINE_BYTE, is_blank, needs_strict_parse, open_lines, parse_json  # noqa: F401 - read from here too
from .schema import (Manifest, MidReplyCaseFile, PredictionRow, Record, Session, check_case_file, check_session,
                     validation_problems)

R = TypeVar("R", bound=Record)

#: the files of a data folder: the sessions, and the manifest the generator writes beside them
SESSIONS_FILE = "sessions.jsonl"
MANIFEST_FILE = "manifest.json"
#: the longest a record appended to a JSONL file waits to be synced to disk (:class:`JsonlAppender`)
SYNC_SECONDS = 1.0


def dumps_line(obj: Any) -> str:
    """One JSONL line: compact, UTF-8 characters kept as they are, key order preserved."""
    if isinstance(obj, Record):
        obj = obj.dump()
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def iter_json_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for every non-blank line of a UTF-8 JSONL file, lines broken
    at ``\\n`` alone (:data:`~interleave_bench.json_text.NEWLINE`)."""
    name = str(path)
    require_file(path)
    with open_lines(path) as fh:
        n = 0
        try:
            for n, text in enumerate(fh, start=1):
                if not is_blank(text):
                    yield n, text
        except UnicodeDecodeError as exc:
            # text is decoded a block at a time, ahead of the lines handed out: find the line itself
            raise InputError(name, line_of_bad_utf8(path) or n + 1, None, f"not UTF-8 text ({exc.reason})") from None


#: bytes read at a time when looking for the line of a byte that is not UTF-8
_SCAN_BYTES = 1 << 20


def line_of_bad_utf8(path: str | os.PathLike, block_bytes: int = _SCAN_BYTES) -> int | None:
    """The line (from 1, lines broken at ``\\n`` alone, as :func:`iter_json_lines` breaks them) of the
    first byte of ``path`` that is not UTF-8; None when every byte is. Reads the file ``block_bytes``
    at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    with open(path, "rb") as fh:
        while True:
            block = raw = fh.read(block_bytes)
            pending = len(decoder.getstate()[0])  # bytes of a character begun in the block before
            bad = False
            try:
                decoder.decode(block, final=not block)
            except UnicodeDecodeError as exc:
                block, bad = block[:max(0, exc.start - pending)], True
            line += block.count(NEWLINE_BYTE)
            if bad:
                return line
            if not raw:
                return None


def parse_record(
    path: str,
    line: int | None,
    text_or_obj: Any,
    model: type[R],
    check: Callable[[R], list[tuple[str, str]]] | None = None,
) -> R:
    """Validate one JSON line (or already parsed object) as ``model``, then with ``check`` across its
    fields (``check_session``...); raises :class:`InputErrors` naming all its problems at once."""
    try:
        obj = parse_json(path, line, text_or_obj) if isinstance(text_or_obj, str) else text_or_obj
        if not isinstance(obj, dict):
            raise InputError(path, line, None, f"expected a JSON object, got {type(obj).__name__}")
        rec = model.model_validate(obj)
    except RecursionError:
        raise InputError(path, line, None, "JSON nested too deeply to read") from None
    except ValidationError as exc:
        errs = [InputError(path, line, f, m) for f, m in validation_problems(exc, model)]
        raise InputErrors(errs) from None
    problems = check(rec) if check else []
    if problems:
        raise InputErrors([InputError(path, line, f, m) for f, m in problems])
    return rec


# --- generic readers -------------------------------------------------------------------------------


def read_records_with_lines(
    path: str | os.PathLike,
    model: type[R],
    *,
    check: Callable[[R], list[tuple[str, str]]] | None = None,
    collect: bool = False,
) -> Iterator[tuple[int, R]]:
    """Stream ``(line, record)`` for a JSONL file, validated as ``model`` (and ``check`` across fields).

    With ``collect=False`` the first bad line raises. With ``collect=True`` reading goes on and an
    :class:`InputErrors` listing every problem is raised at the end (good records are still yielded
    first, so a caller that counts them sees the whole file).
    """
    name = str(path)
    errors: list[InputError] = []
    for line, text in iter_json_lines(path):
        try:
            rec = parse_record(name, line, text, model, check)
        except InputError as exc:
            if not collect:
                raise
            errors.extend(exc.errors if isinstance(exc, InputErrors) else [exc])
            continue
        yield line, rec
    if errors:
        raise InputErrors(errors)


def read_records(path: str | os.PathLike, model: type[R], **kw: Any) -> Iterator[R]:
    """Stream the validated records of a JSONL file (see :func:`read_records_with_lines`)."""
    for _, rec in read_records_with_lines(path, model, **kw):
        yield rec


def sessions_with_lines(path: str | os.PathLike, *, collect: bool = False,
                        data_goes: str | None = None) -> Iterator[tuple[int, Session]]:
    """Stream ``(line, session)``, validated; session ids must be unique within the file, and a file of another kind
    is refused in one line (:func:`~interleave_bench.file_kinds.other_kind`, with ``data_goes``). With ``collect=True``
    duplicates are found from every line's id, valid or not, so a repeated id is reported even when its first line
    has other defects."""
    other_kind(path, "sessions", data_goes)
    if collect:
        dup_errors = _duplicate_ids(path)
        dup_lines = {e.line for e in dup_errors}
        try:
            for line, s in read_records_with_lines(path, Session, check=check_session, collect=True):
                if line not in dup_lines:
                    yield line, s
        except InputErrors as exc:
            raise InputErrors(sorted(exc.errors + dup_errors, key=lambda e: e.line or 0)) from None
        if dup_errors:
            raise InputErrors(dup_errors)
        return
    first_line: dict[str, int] = {}
    for line, s in read_records_with_lines(path, Session, check=check_session):
        if s.session_id in first_line:
            raise InputError(str(path), line, "session_id",
                             f"duplicate session id {shown(s.session_id)} (first on line {first_line[s.session_id]})")
        first_line[s.session_id] = line
        yield line, s


def iter_sessions(path: str | os.PathLike, **kw: Any) -> Iterator[Session]:
    """Stream validated sessions: :func:`sessions_with_lines` without the lines."""
    return (s for _, s in sessions_with_lines(path, **kw))


def _duplicate_ids(path: str | os.PathLike) -> list[InputError]:
    """An error for every line whose ``session_id`` an earlier line already had."""
    first_line: dict[str, int] = {}
    errors: list[InputError] = []
    for line, text in iter_json_lines(path):
        try:
            sid = parse_json(str(path), line, text).get("session_id")
        except (InputError, AttributeError):
            continue  # (named where the line is read)
        if isinstance(sid, str) and first_line.setdefault(sid, line) != line:  # (an earlier line has it)
            errors.append(InputError(str(path), line, "session_id",
                                     f"duplicate session id {shown(sid)} (first on line {first_line[sid]})"))
    return errors


def sessions_file(path: str | os.PathLike) -> Path:
    """The sessions file of ``DATA``: the file itself, or ``sessions.jsonl`` inside a data folder."""
    p = Path(path)
    if p.is_dir():
        p = p / SESSIONS_FILE
        if not os.path.lexists(p):
            raise InputError(str(path), None, None, f"no {SESSIONS_FILE} in this folder")
        require_file(p)  # a folder or FIFO by that name is named as one, not as missing
    else:
        require_file(p, missing="no such file or folder")  # a FIFO is named as one, not as missing
    return p


def read_sessions(path: str | os.PathLike, where: Callable[[Session], bool] | None = None, *,
                  data_goes: str | None = None) -> list[Session]:
    """All sessions of a file (with ``where``, those it holds true of; the others are dropped as they
    are read), validated; raises on the first defect (``data_goes``: :func:`iter_sessions`).

    Read with the cyclic garbage collector paused (:func:`~interleave_bench.heap.paused_gc`): a session is a
    record per turn, and the collector's passes over a heap growing by the thousand records cost as much as
    validating them (200 synthetic sessions of 40 turns: 0.16 s to read, 0.09 s paused). Nothing is left frozen
    (``freeze=False``): a notebook or a harness reads file after file; a freeze would keep every cycle alive."""
    with paused_gc(freeze=False):
        sessions = iter_sessions(path, data_goes=data_goes)
        return list(sessions if where is None else filter(where, sessions))


def read_predictions(path: str | os.PathLike, *, collect: bool = False) -> list[PredictionRow]:
    """All prediction rows of a file, validated (duplicates are the scorer's business)."""
    return list(read_records(path, PredictionRow, collect=collect))


def read_text(path: str | os.PathLike, missing: str = "no such file") -> str:
    """A whole UTF-8 text file, with a one-line error (``missing`` when it is not there) for a
    missing, folder or non-UTF-8 path."""
    name = str(path)
    require_file(path, missing)
    try:
        with open(path, "r", encoding="utf-8") as fh:
            return fh.read()
    except UnicodeDecodeError as exc:
        raise InputError(name, None, None, f"not UTF-8 text ({exc.reason})") from None


def read_json(path: str | os.PathLike) -> Any:
    """A whole JSON document, with a one-line error for a missing or broken file."""
    return parse_json(str(path), None, read_text(path))


def read_run_record(path: str | os.PathLike) -> Any:
    """The :class:`~interleave_bench.documents.RunRecord` at ``path``; one line naming the file and
    field for one that is not a run record."""
    from .documents import RunRecord, validate_document

    return validate_document(RunRecord, read_json(path), str(path), "a run record")


def require_own_data_folder(folder: str | os.PathLike, writer: str, command: str,
                            source: str | os.PathLike) -> None:
    """Raise :class:`UsageError` when the data folder ``folder`` is a file, is the corpus folder
    ``source`` or lies inside it, or holds a data set ``writer`` did not write (its manifest names
    another writer, or it has sessions and no manifest): an importer rewrites its own data in
    place, never the corpus it reads, another data set (generated data, another corpus) or the runs
    beside it."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{command}: --out {folder} is a file: --out names the data folder that "
                         f"{SESSIONS_FILE} and {MANIFEST_FILE} are written into")
    require_apart_from_corpus(folder, source, command, "an import writes its data set apart from the corpus it reads")
    manifest = folder / MANIFEST_FILE
    if manifest.is_file():
        try:
            doc = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            doc = None
        found = doc.get("writer") if isinstance(doc, dict) else None
        if found == writer:
            return
        what = f"a data set written by {found!r}" if isinstance(found, str) else f"a {MANIFEST_FILE} of no data set it wrote"
    elif (folder / SESSIONS_FILE).exists():
        what = f"a {SESSIONS_FILE} with no {MANIFEST_FILE} (written by no importer)"
    else:
        return
    raise UsageError(f"{command}: --out {folder} holds {what}: importing would replace it; choose another folder "
                     "(or remove it)")


def read_manifest(path: str | os.PathLike) -> Manifest:
    return parse_record(str(path), None, read_json(path), Manifest)


def read_case_file(path: str | os.PathLike, known_tags: tuple[str, ...] | None = None) -> MidReplyCaseFile:
    """A mid-reply case file, validated; errors name the case (by index and id) and the field."""
    name = str(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(name, None, None, "expected a JSON object with 'catalogs' and 'cases'")
    try:
        f = parse_record(name, None, data, MidReplyCaseFile)
    except InputErrors as exc:
        raise InputErrors([_name_case(e, data) for e in exc.errors]) from None
    problems = check_case_file(f, known_tags)
    if problems:
        raise InputErrors([InputError(name, None, fld, msg) for fld, msg in problems])
    return f


_CASE_FIELD = re.compile(r"^cases\[(\d+)\]")


def _name_case(err: InputError, data: dict[str, Any]) -> InputError:
    """``cases[5].how`` -> ``cases[5] (id 'en-06').how``: record-level errors name the case by id too."""
    m = _CASE_FIELD.match(err.field or "")
    cases = data.get("cases")
    if m is None or not isinstance(cases, list):
        return err
    k = int(m.group(1))
    case = cases[k] if k < len(cases) else None
    if not isinstance(case, dict) or not isinstance(case.get("id"), str):
        return err
    field = f"cases[{k}] (id {case['id']!r})" + (err.field or "")[m.end():]
    return InputError(err.path, err.line, field, err.message)


# --- writers -----------------------------------------------------------------------------------------


#: what a new file's mode starts from before the umask takes its bits away (as ``open`` and the
#: shell create files): a temporary file made by ``tempfile`` would be 0600 whatever the umask
NEW_FILE_MODE = 0o666
#: random bytes in a temporary file's name: a clash with another writer's is never met in practice
TEMP_NAME_BYTES = 6


def _new_temp(folder: Path, name: str) -> tuple[int, Path]:
    """A new, empty temporary file beside ``name`` in ``folder`` (open for writing), created with
    the mode the umask gives; returns its descriptor and path."""
    while True:
        tmp = folder / f".{name}.{secrets.token_hex(TEMP_NAME_BYTES)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, NEW_FILE_MODE), tmp
        except FileExistsError:
            continue


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write a whole file through a temporary file in the same folder and a rename."""
    atomic_write_parts(path, [text])


def atomic_write_parts(path: str | os.PathLike, parts: Iterable[str]) -> None:
    """Write a whole file of text ``parts`` (written as they come, never joined whole) through a
    temporary file in the same folder and a rename, holding the output's lock
    (:func:`exclusive_output`) meanwhile.

    A symlink is followed: the file it names is the one replaced (and locked), and the link stays.
    The new file gets the mode the umask gives, as a file made by ``open`` would. Every text
    written passes through :func:`~interleave_bench.redaction.redact`, so no secret of the
    environment reaches a file.
    """
    real = real_output(path)
    require_output_file(real)
    real.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_output(real), writing(path):
        fd, tmp = _new_temp(real.parent, real.name)
        try:
            hold_file(real, fd)  # the file put in its place stays locked under every name it gets
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                for part in parts:
                    fh.write(redact_secrets(part))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, real)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise


def write_jsonl(path: str | os.PathLike, rows: Iterable[Any]) -> int:
    """Write a whole JSONL file atomically; returns the number of rows."""
    lines = [dumps_line(r) for r in rows]
    atomic_write_text(path, "".join(line + "\n" for line in lines))
    return len(lines)


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write a JSON document atomically, indented for people to read."""
    if isinstance(obj, Record):
        obj = obj.dump()
    atomic_write_parts(path, _json_parts(obj))


def print_json(obj: Any, file: Any = None) -> None:
    """Print a JSON document as :func:`write_json` writes it (to stdout by default), a part at a time."""
    out = sys.stdout if file is None else file
    for part in _json_parts(obj):
        out.write(part)


#: items of a long list encoded at a time: a document's text is never held whole (a score
#: document's per-session rows run to hundreds of thousands)
JSON_ITEMS = 4096


def _json_parts(obj: Any) -> Iterator[str]:
    """The text ``json.dumps(obj, ensure_ascii=False, indent=2)`` and a newline, in parts.

    Each part is encoded by the standard library's C encoder, compact, then indented by
    ``msgspec.json.format`` (which changes only the whitespace between tokens): the same text,
    several times faster than the indenting encoder, which is pure Python. Lists longer than
    :data:`JSON_ITEMS` (and the objects holding them) are written a slice at a time.
    """
    yield from _indented_parts(obj, 0)
    yield "\n"


def _indented(obj: Any, level: int) -> str:
    """``obj`` as ``json.dumps(..., indent=2)`` writes it ``level`` levels deep."""
    compact = json.dumps(obj, ensure_ascii=False)
    try:
        text = msgspec.json.format(compact, indent=2)
    except msgspec.DecodeError:  # NaN and the like: the standard library's encoder decides
        text = json.dumps(obj, ensure_ascii=False, indent=2)
    return text.replace("\n", "\n" + "  " * level) if level else text


def _long(obj: Any) -> bool:
    """Whether ``obj`` is, or directly or deeper holds in objects, a list longer than :data:`JSON_ITEMS`."""
    if isinstance(obj, list):
        return len(obj) > JSON_ITEMS
    return isinstance(obj, dict) and all(isinstance(k, str) for k in obj) and any(_long(v) for v in obj.values())


def _indented_parts(obj: Any, level: int) -> Iterator[str]:
    if not _long(obj):
        yield _indented(obj, level)
        return
    pad, inner = "\n" + "  " * level, "\n" + "  " * (level + 1)
    if isinstance(obj, dict):
        sep = "{"
        for key, value in obj.items():
            yield sep + inner + json.dumps(key, ensure_ascii=False) + ": "
            yield from _indented_parts(value, level + 1)
            sep = ","
        yield pad + "}"
        return
    sep = "["
    for at in range(0, len(obj), JSON_ITEMS):
        text = _indented(obj[at:at + JSON_ITEMS], level)  # "[<inner>item,<inner>item<pad>]"
        yield sep + text[1:len(text) - len(pad) - 1]
        sep = ","
    yield pad + "]"


def _sync_timer(delay: float, fn: Callable[[], None]) -> threading.Timer:
    """Call ``fn`` in ``delay`` seconds on a daemon thread (it never holds up the process's exit)."""
    timer = threading.Timer(delay, fn)
    timer.daemon = True
    timer.start()
    return timer


class JsonlAppender:
    """Appends whole lines to a JSONL file.

    Each append is written and flushed at once, so a run that is killed has handed every record
    it appended to the operating system. Those records reach the disk itself (``fsync``) at most
    :data:`SYNC_SECONDS` after they were appended, and all of them on close: a run of free
    routers appends a session's rows every few milliseconds, and syncing each of them took
    longer than routing them. An append a second or more after the last sync syncs at once; one
    sooner leaves a sync due a second after the last, which a timer makes if no later append has
    (a model run may append once a minute). ``clock`` (seconds, :func:`time.monotonic` by
    default) tells the appender when the last sync was; ``schedule(delay, fn)`` (a daemon
    :class:`threading.Timer` by default; its result must have ``cancel()``) makes that sync.

    On open, a trailing partial line (left by a crash mid-write) is cut off, so the file only ever
    holds complete records and a resumed run appends after the last one.
    """

    def __init__(self, path: str | os.PathLike, command: str | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 schedule: Callable[[float, Callable[[], None]], Any] = _sync_timer):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._clock = clock
        self._schedule = schedule
        self._synced = clock()  # when the file last reached the disk
        self._unsynced = False  # whether something appended since has not
        self._due: Any = None  # the sync a timer will make, while one is due
        self._guard = threading.Lock()  # between the writer and the timer's thread
        self._pid = os.getpid()  # a forked child has neither the parent's timer nor its lock's state
        # the output's lock for the appender's life (taken again at no cost by a process that holds it)
        self._lock = ExitStack()
        self._lock.enter_context(exclusive_output(self.path, command))
        fh = None
        try:
            with writing(self.path):
                truncate_partial_line(self.path)
                self._fh = fh = open(self.path, "a", encoding="utf-8", newline="\n")  # a new file: the umask's mode
            hold_file(self.path, fh.fileno())  # a file it made: locked under every name from now on
        except BaseException:
            if fh is not None:
                fh.close()
            self._lock.close()
            raise

    def append(self, obj: Any) -> None:
        self.append_many([obj])

    def append_many(self, objs: Iterable[Any]) -> None:
        """Append several records with one write (a session's rows, say)."""
        text = redact_secrets("".join(dumps_line(o) + "\n" for o in objs))
        if not text:
            return
        if self._pid != os.getpid():  # in a forked child: its own timer, its own lock
            self._pid, self._due, self._guard = os.getpid(), None, threading.Lock()
        with self._guard, writing(self.path):
            self._fh.write(text)
            self._fh.flush()
            self._unsynced = True
            wait = SYNC_SECONDS - (self._clock() - self._synced)
            if wait <= 0:
                self._sync()
            elif self._due is None:
                self._due = self._schedule(wait, self._sync_due)

    def _sync(self) -> None:
        os.fsync(self._fh.fileno())
        self._synced = self._clock()
        self._unsynced = False

    def _sync_due(self) -> None:
        """The timer's sync (on its thread): whatever is appended and not yet on disk. A failure is
        left for close, which syncs again and raises it in the writer's thread."""
        with self._guard:
            self._due = None
            if self._unsynced and not self._fh.closed:
                try:
                    self._sync()
                except OSError:
                    pass

    def close(self) -> None:
        with self._guard, writing(self.path):
            due, self._due = self._due, None
            if due is not None:
                due.cancel()
            try:
                if self._unsynced and not self._fh.closed:
                    self._sync()
            finally:
                try:
                    self._fh.close()
                finally:
                    self._lock.close()

    def __enter__(self) -> "JsonlAppender":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def truncate_partial_line(path: str | os.PathLike) -> None:
    """Cut a file back to its last newline (no-op when it ends cleanly or does not exist)."""
    path = Path(path)
    if not path.exists():
        return
    with open(path, "rb+") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        if size == 0:
            return
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        # walk back to the last newline
        pos = size - 1
        chunk = 4096
        while pos > 0:
            start = max(0, pos - chunk)
            fh.seek(start)
            data = fh.read(pos - start)
            idx = data.rfind(b"\n")
            if idx >= 0:
                fh.truncate(start + idx + 1)
                return
            pos = start
        fh.truncate(0)
