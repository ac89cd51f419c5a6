"""One pass over a data file: its full check, its fingerprint and its sessions as arrays.

Each line is read by the compiled reader of the session record type
(:func:`~interleave_bench.compiled.decoder`: the same fields, types and bounds, checked in C, no
pydantic objects); a line it does not take (an unknown field, a number beyond 64 bits) is read by
the record type itself. Every check of :func:`~interleave_bench.schema.check_session` is made on
the block's arrays (:func:`check_v1` by the record type, for the v1 sessions that need it), and
session ids are checked unique over the file. Each session's fingerprint line
(:func:`~interleave_bench.compiled.canonical_line`) is hashed in order as it comes while the ids
ascend, and spooled to a temporary file in case they do not: :func:`data_fingerprint` is
:func:`~interleave_bench.fingerprints.records_fingerprint` of the file's records, bit for bit.

Every valid file is read so; a defect raises :class:`Bad`, and the caller has the strict reader
name it (:func:`~.read.refused`: every bad line, field and value, as ``validate`` names them).

:func:`data_pass` runs the pass in a forked process when asked (:mod:`.forked`), handing the
blocks over a pipe while the caller scores the last one: the data file is read on one core while
predictions are read and scored on the other, with the look for keys named twice
(:class:`~.forked.KeysPass`) in a third.
"""

from __future__ import annotations

import functools
import os
import tempfile
from array import array
from itertools import chain
from operator import attrgetter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

import msgspec
import numpy as np
from pydantic import ValidationError

from ..compiled import DecodeErrors, canonical_line, canonical_lines, decoder, encode as _ENCODE
from ..errors import InputError, writing
from ..io import parse_json
from ..json_text import NEWLINE_BYTE, is_blank, split_lines
from ..fingerprints import LinesHash
from ..record_errors import CONTROL
from ..schema import Session, check_session, check_v1
from ..session_checks import Vocab, defects, offsets, session_arrays, thread_numbers
from .keys import names_twice
from .read import refused

#: bytes of whole lines read at a time (a block is decoded, checked and scored at once): large
#: enough for the array work to outweigh its overhead, small enough to keep memory flat
BLOCK_BYTES = 1 << 20


class Bad(Exception):
    """A defect of a file the array readers read: the strict reader names it (:func:`~.read.refused`)."""


def whole_line_blocks(path: str | os.PathLike, block_bytes: int | None = None, digest: Any = None) -> Iterator[bytes]:
    """The file's bytes a block of whole lines at a time (lines end at ``\\n`` alone, as the strict
    readers break them: :data:`~interleave_bench.json_text.NEWLINE`), each checked to be UTF-8
    (else :class:`Bad`); every byte as read goes to ``digest`` (a hashlib object) when given."""
    block_bytes = block_bytes or BLOCK_BYTES
    try:
        with open(path, "rb") as fh:
            rest = b""  # the start of a line the last chunk did not end
            while True:
                chunk = fh.read(block_bytes)
                cut = chunk.rfind(NEWLINE_BYTE) + 1 if chunk else len(chunk)
                if chunk and not cut:  # no line ends in it
                    rest += chunk
                    continue
                # one copy at most: the chunk itself when it is the block
                block = b"".join((rest, memoryview(chunk)[:cut])) if rest or cut < len(chunk) else chunk
                rest = chunk[cut:]
                if block:
                    if digest is not None:
                        digest.update(block)
                    if not block.isascii():  # ASCII is UTF-8
                        block.decode("utf-8")
                    yield block
                if not chunk:
                    return
    except (OSError, UnicodeDecodeError) as exc:
        raise Bad(str(exc)) from None


#: the bytes either side of a line break between two records: a record's last and first, and a
#: break's own
_CLOSE, _OPEN, _CR, _LF = b"}{\r" + NEWLINE_BYTE
#: what JSON passes over between values, a line break aside
_JSON_BLANKS = b" \t\r"
#: a block whose lines run to this many bytes on average (sessions) has its line breaks found one
#: by one, a few finds, rather than by numpy over every byte (the predictions' short lines)
LONG_LINE = 4096


def _line_breaks(block: bytes, records: int) -> np.ndarray | None:
    """Where the line breaks of a block of ``records`` records lie; ``None`` when there are more
    breaks than records (blank lines, or a record over two lines: for :func:`one_a_line` to read
    line by line)."""
    if len(block) < LONG_LINE * records:
        return np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == _LF)
    found: list[int] = []
    at = block.find(NEWLINE_BYTE)
    while at >= 0:
        if len(found) == records:
            return None
        found.append(at)
        at = block.find(NEWLINE_BYTE, at + 1)
    return np.array(found, dtype=np.intp)


def one_a_line(block: bytes, records: int) -> bool:
    """Whether a block of whole lines (:func:`whole_line_blocks`) that a compiled reader took as
    ``records`` records (JSON objects) holds one on each line but blank ones, as the strict
    readers read a line: no two records on one line, none written over two lines.

    A line break between a ``}`` (or ``}\\r``) and a ``{`` lies between two records: no JSON
    value holds a ``}`` followed by a ``{`` outside its text, and its text holds no line break.
    So a block with a break after each record but the last is settled by the bytes either side of
    its breaks (0.3 ms a megabyte of predictions, whose decoding takes 17: the breaks found by
    numpy; a block of sessions, a few finds); a block with blank, indented or otherwise written
    lines is read line by line."""
    breaks = _line_breaks(block, records)
    whole = block.endswith(NEWLINE_BYTE)
    if breaks is not None and len(breaks) == records - (not whole) and len(breaks) and breaks[0] > 1:
        b = np.frombuffer(block, dtype=np.uint8)
        end = b[breaks - 1]
        cr = end == _CR
        if cr.any():
            end = np.where(cr, b[breaks - 2], end)
        start = b[(breaks[:-1] if whole else breaks) + 1]
        if bool((end == _CLOSE).all()) and bool((start == _OPEN).all()):
            return True
    held = [line for line in (part.strip(_JSON_BLANKS) for part in split_lines(block)) if line]
    return len(held) == records and all(line[:1] == b"{" and line[-1:] == b"}" for line in held)


def decode_lines(read: Any, block: bytes) -> list[Any]:
    """The records of a block of whole lines, read by a compiled reader (``read``: a
    :func:`~interleave_bench.compiled.decoder`), one a line, as every strict reader reads a line:
    one JSON value. msgspec reads a block as values parted by any JSON whitespace, so two records
    on one line, or one written over two lines, would pass for lines of their own
    (:func:`one_a_line`); a block holding one raises ``msgspec.DecodeError``, as a record the
    reader does not take does (the caller then reads the block line by line, strictly, which names
    the line)."""
    records = read.decode_lines(block)
    if not one_a_line(block, len(records)):
        raise msgspec.DecodeError("a line holds other than one JSON value")
    return records


def distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)``, without its look for a masked array (which loads ``numpy.ma``)."""
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if len(ordered) else ordered


def codes_in(keys: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """For each key, its position in ``pool`` (unique int64 keys), or -1."""
    if not len(pool):
        return np.full(len(keys), -1, dtype=np.int64)
    order = np.argsort(pool, kind="stable")
    sorted_pool = pool[order]
    pos = np.searchsorted(sorted_pool, keys)
    pos = np.minimum(pos, len(pool) - 1)
    hit = sorted_pool[pos] == keys
    return np.where(hit, order[pos], -1)


@dataclass
class DataColumns:
    """A block of sessions as arrays; turn arrays run over every turn of every session.

    Thread numbers are positions in a session's ``threads``; ``gold`` is -1 for a one-off;
    ``judge`` a thread number, :data:`~interleave_bench.session_checks.J_NONE` or
    :data:`~interleave_bench.session_checks.J_AMBIGUOUS`.
    """

    session_ids: list[str]
    splits: list[str]
    langs: list[str]
    turn_start: np.ndarray  # (sessions + 1) offsets into the turn arrays
    gold: np.ndarray
    judge: np.ndarray
    ambiguous: np.ndarray
    action: np.ndarray  # index into ACTIONS
    style: np.ndarray  # index into STYLES
    tag_start: np.ndarray  # (turns + 1) offsets into tag_codes
    tag_codes: np.ndarray
    ref_turn: np.ndarray  # gold refs, exploded: turn of each, thread number of each
    ref_thread: np.ndarray
    vocab: Vocab
    thread_key: np.ndarray  # session * width + vocab code of every thread of the block, ascending
    thread_pos: np.ndarray  # the thread number of each
    width: int  # codes at or above this are no thread id
    first_of_thread: np.ndarray  # whether a turn is its gold thread's first message in the session

    def thread_number(self, sess: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Each (session, vocab code)'s thread number in its session, -1 where it names none."""
        return thread_numbers(self.thread_key, self.thread_pos, self.width, sess, codes)

    # what every run scored against the block reads, taken once (here, not where the block is read:
    # cheaper to take again than to hand over)

    @functools.cached_property
    def turn_session(self) -> np.ndarray:
        """The session of each turn."""
        return np.repeat(np.arange(len(self.session_ids)), np.diff(self.turn_start))

    @functools.cached_property
    def tag_turn(self) -> np.ndarray:
        """The turn of each tag code."""
        return np.repeat(np.arange(len(self.tag_start) - 1), np.diff(self.tag_start))

    @functools.cached_property
    def lang_names(self) -> list[str]:
        """The block's languages, sorted."""
        return sorted(set(self.langs))

    @functools.cached_property
    def turn_lang(self) -> np.ndarray:
        """Each turn's session language, as its position in :attr:`lang_names`."""
        number = {x: k for k, x in enumerate(self.lang_names)}
        return np.array([number[x] for x in self.langs], dtype=np.int64)[self.turn_session]

    @functools.cached_property
    def session_index(self) -> dict[str, int]:
        """Each session id's position in the block."""
        return {sid: k for k, sid in enumerate(self.session_ids)}

    def __len__(self) -> int:
        return len(self.session_ids)


#: the tags of the blocks read so far by this process, in order of first use, which each block's
#: vocabulary takes before its own (files use a few tags: a block's are then looked up in one pass)
_TAGS_SEEN: dict[str, None] = {}
#: at most this many are kept
TAGS_SEEN_MAX = 256


def columns_of(sessions: list[Any]) -> DataColumns:
    """A block of decoded sessions (compiled structs: types and bounds already checked) as
    :class:`DataColumns`, with every check of :func:`~interleave_bench.schema.check_session` but
    :func:`check_v1` (:func:`~interleave_bench.session_checks.defects`: the same checks, on the
    block's arrays); raises :class:`Bad` at a defect. Fields are taken with ``map`` and
    ``attrgetter`` and checked as arrays: no Python loop runs per turn."""
    a = session_arrays(sessions)
    if defects(a).any():
        raise Bad("a defect across the fields of a session")
    vocab, turns, gold, width = a.vocab, a.turns, a.gold, a.width
    tag_lists = list(map(_TAGS, turns))
    code = vocab.code
    for tag in _TAGS_SEEN:  # those of earlier blocks first: most blocks then add none
        code.setdefault(tag, len(code))
    before = len(code)
    tag_codes = vocab.encode_words(list(chain.from_iterable(tag_lists)))
    if len(code) > before and len(_TAGS_SEEN) < TAGS_SEEN_MAX:
        _TAGS_SEEN.update(dict.fromkeys(list(code)[before:before + TAGS_SEEN_MAX - len(_TAGS_SEEN)]))
    tag_start = offsets(np.fromiter(map(len, tag_lists), dtype=np.int64, count=len(tag_lists)))
    thread_turns = np.flatnonzero(gold >= 0)
    first_of_thread = np.zeros(len(turns), dtype=bool)
    _, first = np.unique(a.turn_session[thread_turns] * width + gold[thread_turns], return_index=True)
    first_of_thread[thread_turns[first]] = True
    return DataColumns(
        session_ids=list(map(_SESSION_ID, sessions)), splits=list(map(_SPLIT, sessions)),
        langs=list(map(_LANG, sessions)),
        turn_start=a.turn_start,
        gold=gold.astype(np.int32), judge=a.judge.astype(np.int32),
        ambiguous=np.fromiter(map(_AMBIGUOUS, turns), dtype=bool, count=len(turns)), action=a.action, style=a.style,
        tag_start=tag_start, tag_codes=tag_codes,
        ref_turn=a.ref_turn, ref_thread=a.ref_thread.astype(np.int32), vocab=vocab,
        thread_key=a.thread_key, thread_pos=a.thread_pos, width=width,
        first_of_thread=first_of_thread,
    )


_THREADS, _SESSION_ID, _SPLIT, _LANG = (attrgetter(a) for a in ("threads", "session_id", "split", "lang"))
_ID, _TAGS, _AMBIGUOUS = attrgetter("id"), attrgetter("tags"), attrgetter("ambiguous")


def _is_v1(s: Any) -> bool:
    """Whether :func:`check_session` runs :func:`check_v1` on this session."""
    return s.version == "interleave-v1" or s.timeline is not None or s.probes is not None


def _checked(text: str | bytes, check: Callable[[Session], list[tuple[str, str]]]) -> Session:
    """A session line read as strict JSON by the record type and checked by ``check``; raises
    :class:`Bad` at a defect."""
    try:
        record = Session.model_validate(parse_json("", None, text if isinstance(text, str) else text.decode("utf-8")))
    except (ValidationError, InputError):
        raise Bad("a defect") from None
    if check(record):
        raise Bad("a defect")
    return record


def _by_record_type(line: bytes) -> tuple[Any, bytes]:
    """A line the compiled reader does not take, read by the record type: the session as the
    compiled reader that passes over unknown fields reads it (the record itself where that reader
    does not take it either: a number the record type reads as text), and its fingerprint line."""
    record = _checked(line.decode("utf-8"), check_session)
    try:
        session = decoder(Session, keep_unknown=True, patterns=False).decode(line)
    except (*DecodeErrors, RecursionError):
        session = record
    return session, record.model_dump_json().encode("utf-8")


def ids_unprintable(block: bytes, ids: Iterable[str]) -> bool:
    """Whether an id of a block's records holds a control character (what
    :data:`~interleave_bench.record_errors.ID_PATTERN` refuses), looked for only when the block
    escapes some character: JSON text cannot hold a control character unescaped."""
    return b"\\" in block and CONTROL.search("".join(ids)) is not None


@dataclass
class Printed:
    """A block's fingerprint lines, in file order: ``lines`` holds each followed by ``\\n`` (no
    fingerprint line holds a line break: JSON escapes it), ``keys`` the sort key of each
    (:func:`_key`), ``at`` the block's first byte in the file."""

    at: int
    keys: list[bytes]
    lines: bytes


def spool_folder() -> str:
    """The temporary folder spooled lines go to, as a refused write there names it."""
    return f"{tempfile.gettempdir()} (the temporary folder)"


class _Fingerprint:
    """The data fingerprint, fed each block's :class:`Printed` lines in file order.

    While the keys ascend, the lines are hashed as they come (ascending ids are unique). At the
    first block where they do not, that block and every later one is spooled to a temporary file
    (memory holds each line's key, place and length in compact arrays, never the line);
    :attr:`prefix` then says how many bytes of the file came before that block, whose lines the
    caller hands to :meth:`spool` again at the end; :meth:`result` sorts the spooled lines, checks
    their ids unique and hashes them.
    """

    def __init__(self) -> None:
        self._hash = LinesHash()
        self._last: bytes | None = None
        self.count = 0
        self.prefix: int | None = None  # bytes before the first block spooled
        self._spool: Any = None
        self._keys: list[bytes] = []
        self._places = array("q")
        self._lengths = array("q")
        self._offset = 0

    def add(self, printed: Printed) -> None:
        keys = printed.keys
        self.count += len(keys)
        if self._spool is None:
            last = self._last
            if all(k > p for k, p in zip(keys, [last, *keys[:-1]]) if p is not None):
                self._hash.update_lines(printed.lines)
                self._last = keys[-1] if keys else last
                return
            self.prefix = printed.at
            with writing(spool_folder()):
                self._spool = tempfile.TemporaryFile()
        self.spool(printed)

    def spool(self, printed: Printed) -> None:
        """Lines to sort before hashing."""
        self._keys += printed.keys
        for line in split_lines(printed.lines)[:-1]:
            self._places.append(self._offset)
            self._lengths.append(len(line) + 1)
            self._offset += len(line) + 1
        with writing(spool_folder()):  # a full temporary folder is the user's to clear, as a full disk is
            self._spool.write(printed.lines)

    def result(self) -> str:
        """The fingerprint; raises :class:`Bad` when two lines have one id."""
        if self._spool is None:
            return self._hash.result()
        keys = self._keys
        order = sorted(range(len(keys)), key=keys.__getitem__)
        if any(keys[a] == keys[b] for a, b in zip(order, order[1:])):
            raise Bad("duplicate session id")
        digest = LinesHash()
        with writing(spool_folder()):
            self._spool.flush()
        for k in order:
            self._spool.seek(self._places[k])
            digest.update_lines(self._spool.read(self._lengths[k]))
        self._spool.close()
        return digest.result()


#: how every fingerprint line starts, before the session id's JSON text
_LINE_START = b'{"session_id":'


def _key(session_id: str) -> bytes:
    """A fingerprint line's sort key: its start up to the end of the session id's JSON text (lines
    of distinct ids sort as these do; the id is escaped as the line escapes it)."""
    return _LINE_START + _ENCODE(session_id)


class DataPass:
    """The pass itself, run where it is iterated: :meth:`blocks` yields :class:`DataColumns`
    (when ``columns``), after which :attr:`fingerprint` holds the data fingerprint."""

    def __init__(self, path: str | os.PathLike, columns: bool = True, block_bytes: int | None = None,
                 keys: bool = True) -> None:
        self.path = path
        self.columns = columns
        self.block_bytes = block_bytes
        #: whether the pass looks for a key named twice (``False``: a :class:`KeysPass` does)
        self.keys = keys
        self.fingerprint: str | None = None

    def blocks(self) -> Iterator[DataColumns]:
        prints = _Fingerprint()
        for cols, printed in self._printed_blocks():
            prints.add(printed)
            if cols is not None:
                yield cols
        if not prints.count:
            raise Bad("no sessions")
        if prints.prefix is not None:  # the ids stopped ascending: the lines before are spooled too
            for _, printed in self._printed_blocks(until=prints.prefix):
                prints.spool(printed)
        self.fingerprint = prints.result()

    def _printed_blocks(self, until: int | None = None) -> Iterator[tuple[DataColumns | None, Printed]]:
        """The file's blocks (``until``: those before that byte), each decoded and checked: its
        sessions' arrays (``None`` without sessions or unless ``columns``) and fingerprint lines."""
        strict = decoder(Session, patterns=False)  # ids checked a block at a time (ids_unprintable)
        at = 0
        for block in whole_line_blocks(self.path, self.block_bytes):
            start, at = at, at + len(block)
            if until is not None and start >= until:
                return
            try:  # the whole block at once; line by line only when some line needs the record type
                sessions = decode_lines(strict, block)
                lines = canonical_lines(sessions)
                if self.keys and names_twice(block, lines, Session):
                    raise Bad("a key named twice")
            except (*DecodeErrors, RecursionError):
                sessions, lines = self._line_by_line(block, self.keys)
            if ids_unprintable(block, chain(map(_SESSION_ID, sessions), map(_LANG, sessions),
                                            map(_ID, chain.from_iterable(map(_THREADS, sessions))))):
                raise Bad("a control character in an id")
            v1 = [k for k, s in enumerate(sessions) if _is_v1(s)]
            if v1:  # their fingerprint lines are what the record type reads
                each = split_lines(lines)
                for k in v1:
                    self._check_v1(each[k])
            printed = Printed(at=start, keys=list(map(_key, map(_SESSION_ID, sessions))), lines=lines)
            cols = None
            if sessions and until is None:  # (blocks read again were checked the first time)
                try:
                    cols = columns_of(sessions)  # the checks, and the arrays
                except OverflowError:
                    raise Bad("an integer beyond 64 bits") from None
            del sessions
            yield (cols if self.columns else None), printed

    @staticmethod
    def _line_by_line(block: bytes, keys: bool) -> tuple[list[Any], bytes]:
        """A block's sessions and fingerprint lines, each line read by the compiled reader or, when
        it does not take it, by the record type."""
        decode = decoder(Session, patterns=False).decode
        sessions, printed = [], []
        texts, compiled_lines = [], []  # the lines the compiled reader took, and their fingerprint lines
        for line in split_lines(block):
            if is_blank(line):
                continue
            try:
                s = decode(line)
                p = canonical_line(s)
                texts.append(line)
                compiled_lines.append(p)
            except (*DecodeErrors, RecursionError):
                s, p = _by_record_type(line)  # read strictly
            sessions.append(s)
            printed.append(p + b"\n")
        if keys and texts and names_twice(NEWLINE_BYTE.join(texts), NEWLINE_BYTE.join(compiled_lines), Session):
            raise Bad("a key named twice")
        return sessions, b"".join(printed)

    @staticmethod
    def _check_v1(line: bytes) -> None:
        _checked(line, check_v1)


def data_fingerprint(path: str | os.PathLike) -> str:
    """The data fingerprint (:func:`~interleave_bench.fingerprints.records_fingerprint`) of a sessions file,
    which is also its full check: a defect raises the strict reader's errors
    (:func:`~.read.refused`), which name every one; a file without sessions raises
    :class:`InputError` (there is nothing to score). Returns ``sha256:<hex>``."""
    run = DataPass(path, columns=False)
    try:
        for _ in run.blocks():
            pass
    except Bad:
        refused(path, "sessions")
    assert run.fingerprint is not None
    return run.fingerprint


def data_pass(path: str | os.PathLike, background: bool) -> tuple[Iterator[DataColumns], Any]:
    """The data file's blocks of :class:`DataColumns` and the object whose ``fingerprint`` holds
    the data fingerprint once they are all taken; in a forked process when ``background``."""
    if background and hasattr(os, "fork"):  # elsewhere the pass runs where it is iterated
        from .forked import Forked, KeysPass, then

        keys = Forked(KeysPass(path))  # on the core the caller leaves idle while it waits for blocks
        forked = Forked(DataPass(path, keys=False))
        return then(forked, keys), forked
    run = DataPass(path)
    return run.blocks(), run
