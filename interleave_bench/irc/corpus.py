"""Reading the IRC disentanglement corpus (Kummerfeld et al., 2019) into sessions.

The corpus pairs each log ``<date>.ascii.txt`` (one message a line, numbered from 0) with
``<date>.annotation.txt`` (one reply link a line, ``A B -``: the later message ``B`` replies to the
earlier message ``A``; ``A = B`` starts a conversation). The *annotated* messages are the later ends
of the links (from line 1,000 on in the released files); earlier lines are context. Conversations
are the connected components of the links.

:func:`read_session` turns one annotated log into one session record: a turn per annotated
message, a thread per conversation (components found with union-find over every link, context
messages included, then restricted to the annotated messages), the gold action of each turn from
its conversation and its predecessor's, and the earlier lines as a session-level ``context`` list.
Every step is one pass over the files, so a long log costs time in proportion to its length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..errors import InputError, clip, require_folder, require_no_bom, shown
from ..schema import OPEN_ONLY_FIELD

ANNOTATION_SUFFIX = ".annotation.txt"
LOG_SUFFIX = ".ascii.txt"
#: the corpus's own split folders that a session may carry (``train`` is not a split of this project)
CORPUS_SPLITS = ("dev", "test")
#: the corpus's language
LANG = "en"
#: the schema's version for these sessions (no v1 facts or probes here)
VERSION = "interleave-v0"
#: the domain written on every conversation's thread card
DOMAIN = "ubuntu-irc"
#: every turn's style: the corpus does not say how a message names its subject, and ``implicit``
#: is the style that claims the least about it
STYLE = "implicit"
#: tag of a system line (``=== nick has joined``), which the corpus keeps as its own conversation
SYSTEM_TAG = "system"
#: prefix of a conversation's thread id (``c1``, ``c2``, ... in order of first message)
THREAD_PREFIX = "c"
#: a log line's time stamp, dropped from the turn text (``[03:10] <nick> text`` -> ``<nick> text``)
_STAMP = re.compile(r"^\[\d{1,2}:\d{2}\] ")
#: the speaker of a message line, after the time stamp: ``<nick> text`` (an action, ``* nick
#: waves``, is the nick's too)
_SPEAKER = re.compile(r"^(?:<([^<>\s]+)>|\* (\S+))")
#: characters of a bad annotation line (and digits of a bad number) an error shows: enough to find
#: it, never a whole binary file on one line
SHOWN_LINE = 80
SHOWN_DIGITS = 20


@dataclass(frozen=True)
class LogPair:
    """One annotated log of the corpus: its name, files and split."""

    name: str  # the date part, e.g. ``2004-11-15_03``
    log: Path
    annotation: Path
    split: str

    @property
    def annotation_name(self) -> str:
        """The annotation file's name, as the corpus's evaluation scripts name a log."""
        return self.annotation.name


class UnionFind:
    """Disjoint sets over integers, with path halving and union by size: near-linear in all."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}
        self.size: dict[int, int] = {}

    def find(self, x: int) -> int:
        """The representative of ``x``'s set (``x`` joins as a set of its own when new)."""
        parent = self.parent
        if x not in parent:
            parent[x] = x
            self.size[x] = 1
            return x
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]


def log_pairs(folder: str | Path) -> list[LogPair]:
    """The annotated logs under ``folder``, dev before test, each sorted by name.

    ``folder`` holds the corpus's split folders (``dev/``, ``test/``; others such as ``train/`` are
    not read), or is itself one of them. Raises :class:`InputError` when it holds none, or when an
    annotation file has no log beside it.
    """
    root = Path(folder)
    require_folder(root)
    splits = [(s, root / s) for s in CORPUS_SPLITS if (root / s).is_dir()]
    if not splits and root.name in CORPUS_SPLITS:
        splits = [(root.name, root)]
    pairs: list[LogPair] = []
    for split, sub in splits:
        for ann in sorted(sub.glob("*" + ANNOTATION_SUFFIX)):
            name = ann.name[: -len(ANNOTATION_SUFFIX)]
            log = sub / (name + LOG_SUFFIX)
            if not log.is_file():
                raise InputError(str(ann), None, None, f"no log {log.name} beside it")
            pairs.append(LogPair(name, log, ann, split))
    if not pairs:
        raise InputError(str(root), None, None,
                         f"no *{ANNOTATION_SUFFIX} files in {' or '.join(s + '/' for s in CORPUS_SPLITS)} "
                         f"(give the corpus folder, or one of its split folders)")
    return pairs


def read_log(path: Path) -> list[str]:
    """The log's lines without line ends, numbered from 0 as the annotations number them.

    Raises :class:`InputError` naming the line for a log that is not text: bytes that are not
    UTF-8, or a NUL byte (no chat line holds one; a binary file does); and for a log that starts
    with a byte order mark (:func:`~interleave_bench.errors.require_no_bom`), as its annotations are.
    """
    lines: list[str] = []
    try:
        with open(path, "rb") as fh:
            for n, raw in enumerate(fh, start=1):
                if n == 1:
                    require_no_bom(path, raw)
                if b"\0" in raw:
                    raise InputError(str(path), n, None, "holds a NUL byte: a binary file, not a chat log")
                try:
                    lines.append(raw.decode("utf-8").rstrip("\r\n"))
                except UnicodeDecodeError as exc:
                    raise InputError(str(path), n, None, f"not UTF-8 text ({exc.reason}): not a chat log") from None
    except OSError as exc:
        raise InputError(str(path), None, None, f"cannot read: {exc.strerror}") from None
    return lines


def read_links(path: Path, log_size: int) -> Iterator[tuple[int, int]]:
    """``(earlier, later)`` for each link of an annotation file, in file order.

    Raises :class:`InputError` naming the line and field for a malformed line or a message number
    outside the log (``log_size`` lines), and for a file that starts with a byte order mark
    (:func:`~interleave_bench.errors.require_no_bom`), as its log is.
    """
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise InputError(str(path), None, None, f"cannot read: {exc.strerror}") from None
    with fh:
        for line_no, data in enumerate(fh, start=1):
            if line_no == 1:
                require_no_bom(path, data)
            try:
                raw = data.decode("ascii")
            except UnicodeDecodeError:
                raise InputError(str(path), line_no, "link", "not ASCII text: expected 'A B -' (two message numbers and '-')") from None
            parts = raw.split()
            if not parts:
                continue
            if len(parts) != 3 or parts[2] != "-":
                raise InputError(str(path), line_no, "link",
                                 f"expected 'A B -' (two message numbers and '-'), got {shown(raw.strip(), SHOWN_LINE)}")
            nums = []
            for field, text in (("A", parts[0]), ("B", parts[1])):
                if not text.isdigit():
                    raise InputError(str(path), line_no, field, f"expected a message number, got {shown(text, SHOWN_LINE)}")
                # a number longer than the log's line count is past its end (and never converted:
                # thousands of digits are more than ``int`` reads)
                n = int(text) if len(text.lstrip("0")) <= len(str(log_size)) else log_size
                if n >= log_size:
                    lines = f"{log_size:,} line{'' if log_size == 1 else 's'}"
                    raise InputError(str(path), line_no, field,
                                     f"message {clip(text, SHOWN_DIGITS + 3)} is past the end of the log ({lines})")
                nums.append(n)
            a, b = nums
            if a > b:  # B replies to A, said before it: a link to a later message is no reply
                raise InputError(str(path), line_no, "B",
                                 f"message {b} cannot reply to the later message {a} ('A B -' names the earlier message first)")
            yield a, b


def message_text(line: str) -> str:
    """A log line as a turn's text: ``<nick> text`` (the time stamp dropped); a system line as it is."""
    return _STAMP.sub("", line, count=1)


def speaker_of(line: str) -> str | None:
    """Who wrote a log line (``<nick> text`` or ``* nick does``); None for a system line."""
    m = _SPEAKER.match(message_text(line))
    return None if m is None else (m.group(1) or m.group(2))


def annotated_line_problem(line: str) -> str | None:
    """Why a log line cannot be an annotated message, or None: a blank line (the corpus's own tools
    refuse one too). A line that does not read as ``<nick> text`` is kept, as a message without a
    speaker: a log may hold lines of other shapes, and the annotations are what say a line is one."""
    if not message_text(line).strip():
        return "is a blank line: an annotated message has text"
    return None


def is_system(line: str) -> bool:
    """True for a system line of the log (joins, parts, renames), which starts with ``===``."""
    return line.startswith("===")


def read_session(pair: LogPair) -> dict[str, Any]:
    """One annotated log as a session record (plain JSON data, valid against ``schema.Session``).

    Session-level fields beyond the schema: ``context`` (the log lines before the first annotated
    message, as ``{"line", "text"}``; routers may read them, nothing scores them), ``source_file``
    (the annotation file's name, for ``export-irc``) and ``open_only`` (true: the conversations
    are not known up front, so closed-mode routing does not apply). Each turn carries ``line``
    (its message number in the log) and ``gold.links`` (the messages it replies to, itself for a
    conversation start) and, for a message someone wrote (not a system line), ``speaker`` (the
    nick). Raises :class:`InputError` for malformed files.
    """
    lines = read_log(pair.log)
    uf = UnionFind()
    links: dict[int, list[int]] = {}
    for earlier, later in read_links(pair.annotation, len(lines)):
        uf.union(earlier, later)
        targets = links.setdefault(later, [])
        if earlier not in targets:
            targets.append(earlier)
    if not links:
        raise InputError(str(pair.annotation), None, None, "holds no links")
    annotated = sorted(links)
    first = annotated[0]

    thread_of_root: dict[int, str] = {}
    threads: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    previous: str | None = None
    for i, n in enumerate(annotated):
        root = uf.find(n)
        thread = thread_of_root.get(root)
        if thread is None:
            thread = f"{THREAD_PREFIX}{len(threads) + 1}"
            thread_of_root[root] = thread
            threads.append({"id": thread, "title": f"conversation from message {n}", "domain": DOMAIN})
            action = "new"
        else:
            action = "continue" if thread == previous else "switch"
        previous = thread
        line = lines[n]
        problem = annotated_line_problem(line)
        if problem is not None:  # (the log's line n+1, counted from 1 as an editor counts it)
            raise InputError(str(pair.log), n + 1, None, f"message {n} {problem}")
        turn = {
            "i": i,
            "text": message_text(line),
            "gold": {"thread": thread, "action": action, "refs": [], "links": sorted(links[n])},
            "style": STYLE,
            "tags": [SYSTEM_TAG] if is_system(line) else [],
            "judge": {"thread": thread},
            "ambiguous": False,
            "line": n,
        }
        speaker = None if is_system(line) else speaker_of(line)
        if speaker is not None:
            turn["speaker"] = speaker
        turns.append(turn)
    return {
        "session_id": f"irc-{pair.name}",
        "version": VERSION,
        "split": pair.split,
        "lang": LANG,
        "persona": "",
        "threads": threads,
        "turns": turns,
        "context": [{"line": k, "text": message_text(lines[k])} for k in range(first)],
        "source_file": pair.annotation_name,
        OPEN_ONLY_FIELD: True,
    }
