"""The project's error types.

Every problem with input a user gave us is an :class:`InputError` whose message names the file, the
line and the field, so the CLI can print it as one line and exit 2. Anything else that stops a run on
purpose (a missing key, a model that keeps failing) is a :class:`UsageError`, also exit 2.
"""

from __future__ import annotations

import os as _os
import re as _re
import stat as _stat
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

from .redaction import redact


class InterleaveError(Exception):
    """Base class of the errors the CLI reports as one line with exit code 2."""


class InputError(InterleaveError):
    """Bad input: ``file:line: field: what is wrong``.

    ``line`` is 1-based for JSONL files and ``None`` where a file has no meaningful line (a JSON
    document, a whole-file problem). ``field`` is a dotted path such as ``turns[3].gold.action``.
    """

    def __init__(self, path: str, line: int | None, field: str | None, message: str):
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        super().__init__(self.format())

    def __reduce__(self):
        # rebuilt field by field (its constructor's arguments are not its ``args``), so an error
        # raised in a worker process reaches the command as it was
        return (_restore, (type(self), self.args, self.__dict__))

    def format(self) -> str:
        return located(self.path, self.line, self.field, self.message)


def located(path: str, line: int | None, field: str | None, message: str) -> str:
    """``file:line: field: message`` on one line (no line or field where there is none): what an
    :class:`InputError` says, and a ``validate`` warning."""
    where = path if line is None else f"{path}:{line}"
    return one_line(f"{where}: {field}: {message}" if field else f"{where}: {message}")


#: a line break and the blanks around it, in a message that must be one line
_BREAK = _re.compile(r"\s*[\r\n]+\s*")


def one_line(text: str) -> str:
    """``text`` as one line: each line break (a library's message may hold some) and the blanks
    around it become one space, and trailing blanks go."""
    return _BREAK.sub(" ", text).strip() if "\n" in text or "\r" in text else text


def exc_text(exc: BaseException) -> str:
    """What a library's exception says, as one line for a message of ours (:func:`one_line`), or its
    type's name when it says nothing, or when what it says cannot be read (a ``__str__`` that raises)."""
    return _said(exc) or type(exc).__name__


def exc_said(exc: BaseException) -> str:
    """``Type: what it says`` of an exception raised by code not ours (a plug-in router's), as one
    line; its type's name alone when it says nothing, or when what it says cannot be read."""
    said = _said(exc)
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def _said(exc: BaseException) -> str:
    """``str(exc)`` as one line, empty when its ``__str__`` raises: a message about the exception
    must not fail in turn."""
    try:
        return one_line(str(exc).strip())
    except Exception:  # noqa: BLE001 - any failure of code not ours: the type's name says what is known
        return ""


def _restore(cls: type, args: tuple, state: dict) -> InputError:
    """An :class:`InputError` rebuilt from its ``args`` and attributes (unpickling)."""
    err = cls.__new__(cls)
    err.args = args
    err.__dict__.update(state)
    return err


class InputErrors(InputError):
    """Several input errors found in one pass; ``str()`` is the first, ``errors`` holds all."""

    def __init__(self, errors: list[InputError]):
        assert errors
        self.errors = errors
        first = errors[0]
        super().__init__(first.path, first.line, first.field, first.message)
        extra = len(errors) - 1
        if extra:
            self.message = f"{first.message} (and {extra} more error{'s' if extra > 1 else ''})"
            self.args = (self.format(),)

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.args[0]


class UsageError(InterleaveError):
    """A run cannot go on for a reason the user can fix (missing key, bad option, failed model)."""


@contextmanager
def writing(path: "str | _os.PathLike") -> "Iterator[None]":
    """Run a block writing the file ``path``: a write the system refuses in it (a full disk, a file
    past its size limit, an I/O error) is the one line of :func:`cannot_write` naming ``path`` (a
    temporary file's name, or none at all, would be what the error says)."""
    try:
        yield
    except OSError as exc:
        raise cannot_write(path, exc) from exc


def cannot_write(what: "str | _os.PathLike", exc: OSError) -> UsageError:
    """The one line of a write the system refused (a full disk, a file grown past its limit, an I/O
    error): ``{what}: cannot write: {reason}``, ``what`` naming the file or ``standard output``.
    A full disk is the user's to fix, as bad input is: exit 2, whatever was written before kept."""
    reason = exc.strerror or exc_text(exc)
    return UsageError(f"{_os.fspath(what)}: cannot write: {reason[:1].lower()}{reason[1:]}")


def require_not_folder(path: "str | _os.PathLike") -> None:
    """Raise :class:`InputError` ``is a folder, not a file`` when ``path``, where a file is wanted
    (one to read, or an output to write), is a folder."""
    if _os.path.isdir(path):
        raise InputError(str(path), None, None, "is a folder, not a file")


def require_file(path: "str | _os.PathLike", missing: str = "no such file") -> None:
    """Raise :class:`InputError` unless ``path`` is a file: ``missing`` (``no such file``), ``is a
    folder, not a file`` for a folder where a file is wanted, or ``is not a regular file`` for a
    FIFO, socket or device (whose opening could wait for a writer for ever)."""
    require_not_folder(path)
    try:
        mode = _os.stat(path).st_mode
    except FileNotFoundError:  # (another reason, a symlink loop say, is the CLI's one line naming the file)
        raise InputError(str(path), None, None, missing) from None
    if not _stat.S_ISREG(mode):
        raise InputError(str(path), None, None, "is not a regular file (a FIFO, socket or device)")


#: the byte order mark an editor may put at the start of a UTF-8 file
UTF8_BOM = b"\xef\xbb\xbf"


def require_no_bom(path: "str | _os.PathLike", head: bytes) -> None:
    """Raise :class:`InputError` ``FILE:1: starts with a UTF-8 byte order mark`` when ``head``, the
    first bytes of the text file ``path``, begins with one. The project reads its text inputs as
    UTF-8 without a mark: a JSON or JSONL file with one is refused (its first line is no JSON), and
    a file read a line at a time (an IRC log, its annotations) is refused the same way, rather
    than read with the mark taken for the first line's text."""
    if head.startswith(UTF8_BOM):
        raise InputError(str(path), 1, None, "starts with a UTF-8 byte order mark (BOM): save it as UTF-8 without one")


def require_output_file(path: "str | _os.PathLike") -> None:
    """Raise :class:`InputError` when the output ``path`` is there but is no regular file: ``is a
    folder, not a file``, or for a FIFO, socket or device ``is not a regular file``, which a new
    file renamed into its place would replace (a device among them)."""
    require_not_folder(path)
    try:
        mode = _os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not _stat.S_ISREG(mode):
        raise InputError(str(path), None, None, "is not a regular file (a FIFO, socket or device): "
                                                "an output is written as a new file in its place; give a file's path")


def require_folder(path: "str | _os.PathLike") -> None:
    """Raise :class:`InputError` unless ``path`` is a folder: ``no such folder``, ``is a file, not
    a folder``, or ``is not a folder`` for a FIFO, socket or device."""
    try:
        mode = _os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(str(path), None, None, "no such folder") from None
    if _stat.S_ISREG(mode):
        raise InputError(str(path), None, None, "is a file, not a folder")
    if not _stat.S_ISDIR(mode):
        raise InputError(str(path), None, None, "is not a folder (a FIFO, socket or device)")



def same_path(a: "str | _os.PathLike", b: "str | _os.PathLike") -> bool:
    """Whether ``a`` and ``b`` name one file or folder: the same path once symlinks, ``.`` and
    ``..`` are resolved, or (both there) one file reached by two names (a hard link)."""
    return not set(path_keys(a)).isdisjoint(path_keys(b))


def path_keys(path: "str | _os.PathLike") -> "tuple[object, ...]":
    """What :func:`same_path` compares of ``path``: its resolved path, and, when it is there, the
    file it reaches (device and inode); two paths share a key when they name one file."""
    try:
        st = _os.stat(path)
    except OSError:  # not there (yet): its resolved path says it
        return (_os.path.realpath(path),)
    return (_os.path.realpath(path), (st.st_dev, st.st_ino))


def require_not_input(out: "str | _os.PathLike", inputs: "Iterable[tuple[str | _os.PathLike, str]]",
                      option: str) -> None:
    """Raise :class:`UsageError` ``{option} {out} is one of the inputs ({what}); choose another
    path`` when the output ``out`` names the same file (:func:`same_path`) as one of ``inputs``,
    ``(path, what it is)`` pairs; ``option`` names the output as the message says it, command
    first (``score: --out``). Called before any work, so an input is never written over."""
    for path, what in inputs:
        if same_path(out, path):
            raise UsageError(f"{option} {out} is one of the inputs ({what}); choose another path")


#: bytes of an existing output that :func:`require_replaceable` hands its kind test (a file's head
#: tells its kind; a large file is never read whole for it)
HEAD_BYTES = 64 * 1024


def file_head(path: "str | _os.PathLike") -> bytes:
    """The first :data:`HEAD_BYTES` bytes of the regular file ``path``; empty when it is not there,
    not a regular file, or cannot be read."""
    try:
        if not _stat.S_ISREG(_os.stat(path).st_mode):
            return b""
        with open(path, "rb") as fh:
            return fh.read(HEAD_BYTES)
    except OSError:
        return b""


def jsonl_head_of(fields: "tuple[str, ...]") -> "Callable[[bytes], bool]":
    """A test of a file's first bytes (:func:`require_replaceable`'s ``is_kind``) for JSON Lines
    whose first record is an object holding every one of ``fields``, or, as the file's only line,
    the start of one cut off by a crash (it begins with the first field, as its writer writes it).
    Not a JSON document written over several lines, another kind of JSON Lines, or Parquet."""
    import json

    start = b'{"' + fields[0].encode("utf-8") + b'"'

    def is_kind(head: bytes) -> bool:
        first, newline, _ = head.partition(b"\n")
        first = first.strip()
        if not first.startswith(b"{"):
            return False
        try:
            record = json.loads(first)
        except ValueError:
            return not newline and first.startswith(start)
        return isinstance(record, dict) and all(f in record for f in fields)

    return is_kind


def require_replaceable(out: "str | _os.PathLike", is_kind: "Callable[[bytes], bool]", what: str, option: str) -> None:
    """Raise :class:`UsageError` ``{option} {out} is already there and is not {what}: writing would
    replace it; choose another path (or remove that file)`` when the output ``out`` is a non-empty
    regular file whose first :data:`HEAD_BYTES` bytes ``is_kind`` does not take for the command's
    own kind of output (a data folder's manifest, another run's record or score file, a page).
    Called before any work, so a file of another kind is never written over."""
    head = file_head(out)  # (not there, or not a file: require_output_file names that)
    if head and not is_kind(head):
        raise UsageError(f"{option} {out} is already there and is not {what}: writing would replace it; "
                         "choose another path (or remove that file)")


def require_apart_from_corpus(folder: "str | _os.PathLike", source: "str | _os.PathLike", command: str,
                              why: str) -> None:
    """Raise :class:`UsageError` ``{command}: --out FOLDER is the corpus folder: {why}; choose
    another folder`` (or ``is inside the corpus folder SOURCE``) when the output folder ``folder``
    is the corpus folder ``source`` or lies inside it: no command writes into a corpus it reads."""
    src, out = _os.path.realpath(source), _os.path.realpath(folder)
    if out == src or out.startswith(_os.path.join(src, "")):
        where = "the corpus folder" if out == src else f"inside the corpus folder {source}"
        raise UsageError(f"{command}: --out {folder} is {where}: {why}; choose another folder")


def require_given_once(inputs: "Iterable[str | _os.PathLike]", option: str, noun: str) -> None:
    """Refuse (before any work) one input given twice, however its paths are spelled (a symlink to
    it, a hard link: :func:`same_path`), in the line ``{option} A and B are one {noun}, given
    twice: give it once``. Each path is looked up once by what :func:`same_path` compares
    (:func:`path_keys`), so a long list (a folder of many runs) is checked at once."""
    seen: dict = {}  # each key (:func:`path_keys`) of an input given, to the first input holding it (and its place)
    for place, given in enumerate(inputs):
        keys = path_keys(given)
        earlier = [seen[k] for k in keys if k in seen]
        if earlier:
            first = min(earlier, key=lambda e: e[0])[1]
            raise UsageError(f"{option} {first} and {given} are one {noun}, given twice: give it once")
        for k in keys:
            seen.setdefault(k, (place, given))


def require_one_each(pairs: "Iterable[tuple[str | _os.PathLike, str | _os.PathLike]]", option: str, noun: str,
                     written: str, advice: str) -> None:
    """Refuse (before any work) one input given twice (:func:`require_given_once`), and two inputs
    that would write one output, however their paths are spelled (``x.jsonl`` and ``x.parquet``
    both scored into ``x.score.json``: the first's would be lost). ``pairs`` are ``(input, the
    output it writes)``; the line reads ``{option} A and B would both write their {written} to
    OUT: {advice}``."""
    pairs = list(pairs)
    require_given_once((given for given, _ in pairs), option, noun)
    by_output: dict = {}
    for given, out in pairs:
        first = by_output.setdefault(_os.path.realpath(out), given)
        if first is given:
            continue
        raise UsageError(f"{option} {first} and {given} would both write their {written} to {out}: {advice}")


def written_path(out: "str | _os.PathLike") -> str:
    """Where a writer that first makes the folders missing on the way writes ``out``: the longest
    part of the path that is there, resolved (its symlinks followed, as the system will), then the
    rest with its ``.`` and ``..`` steps taken (the folders made for it are real ones)."""
    head, rest = _os.fspath(out), []
    while head and not _os.path.lexists(head):
        head, name = _os.path.split(head)
        if not name:  # a root that is not there: nothing left to resolve
            break
        rest.insert(0, name)
    return _os.path.normpath(_os.path.join(_os.path.realpath(head or "."), *rest))


def require_output(out: "str | _os.PathLike", inputs: "Iterable[tuple[str | _os.PathLike, str]]",
                   is_kind: "Callable[[bytes], bool]", what: str, option: str) -> None:
    """Every check a file a command writes passes before any work, in one place: it is no folder,
    FIFO or device (:func:`require_output_file`), none of the ``inputs``
    (:func:`require_not_input`), and not a file of another kind than ``what`` (:func:`require_replaceable`).
    A file written beside the named output (a run record, a score file, a summary) is checked the
    same way, ``option`` then saying whose it is (``route: --out x.jsonl writes its run record
    beside it, and``). A path through a folder not made yet (``new/../x.json``) is checked where the
    writer, making that folder, will write (``x.json``)."""
    if not _os.path.isdir(_os.path.dirname(out) or "."):
        out = written_path(out)
    require_output_file(out)
    require_not_input(out, inputs, option)
    require_replaceable(out, is_kind, what, option)


#: characters of a value a message quotes (:func:`shown`), and of an error line (:func:`error_line`)
SHOWN_CHARS, ERROR_LINE_CHARS = 60, 2000
#: characters beyond what a cut keeps that are redacted with it: far more than any key, so one cut at
#: the window's edge lies past the cut (a 5 MB value was redacted whole, 1 s a MB, three times a line)
CUT_WINDOW = 8192


def _window(text: str, limit: int, tail: int = 0) -> str:
    """``text`` without what :func:`clip` would cut, :data:`CUT_WINDOW` characters aside each side."""
    if len(text) <= limit + tail + 2 * CUT_WINDOW:
        return text
    return text[:limit + CUT_WINDOW] + (text[len(text) - tail - CUT_WINDOW:] if tail else "")


def clip(text: str, limit: int = SHOWN_CHARS, tail: int = 0) -> str:
    """``text`` for a message: :func:`redact` applied to the whole of it, then cut to ``limit``
    characters, ``...`` standing for what is cut (before its last ``tail`` characters, kept). Every
    text a message cuts short is cut here: a key cut before it is redacted would leave its start,
    which no redaction knows for a key."""
    text = redact(_window(text, limit, tail))
    if len(text) <= limit:
        return text
    head = max(limit - 3 - tail, 0)
    return text[:head] + "..." + (text[len(text) - tail:] if tail else "")


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """A value as a message quotes it, :func:`clip`-ped: ``null`` for None, else its ``repr`` (a
    string's redacted first, so a key is found before the ``repr`` escapes any character of it)."""
    if value is None:
        return "null"
    return clip(repr(redact(_window(value, limit))) if isinstance(value, str) else repr(value), limit)


def json_kind(value: object) -> str:
    """What a JSON value that is not the text a message wanted is, for that message: ``null``,
    ``true or false``, ``a number``, ``a list``, ``an object`` (else its Python type's name)."""
    kinds = ((type(None), "null"), (bool, "true or false"), ((int, float), "a number"), (str, "text"),
             (list, "a list"), (dict, "an object"))
    return next((words for kind, words in kinds if isinstance(value, kind)), type(value).__name__)


def error_line(problem: str, label: str = "error") -> str:
    """``error: <problem>``, the line every command prints for a problem, :func:`clip`-ped (a
    problem quotes the input, which may hold a key, and a value of any length): at most
    :data:`ERROR_LINE_CHARS`, its start (file, line, field) and end kept. ``label`` ``warning``
    makes the line of a doubt that is no error."""
    return clip(f"{label}: {problem}", ERROR_LINE_CHARS, tail=ERROR_LINE_CHARS // 2)

