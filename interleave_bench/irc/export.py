"""``export-irc``: a run's predicted conversations in the IRC corpus's own formats.

So a run on imported IRC data can be checked with the corpus's evaluation scripts
(``conversation-eval.py`` reads the clusters, ``graph-eval.py`` the links):

- ``clusters.txt``: one predicted conversation a line, ``<date>.annotation.txt:<message numbers>``
  (numbers in the log, space-separated, ascending);
- ``links.txt``: one link a line, ``<date>.annotation.txt:<message> <message it joins> -``: each
  message joins the previous message of its predicted conversation, a conversation's first
  message joins itself.

A message routed to ``CLARIFY`` or ``ERROR``, or without a row, is a conversation of its own.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from ..errors import InputError, UsageError, require_replaceable
from ..io import MANIFEST_FILE, SESSIONS_FILE, atomic_write_text
from ..locks import exclusive_output
from ..schema import SPECIAL_LABELS, PredictionRow, Session

CLUSTERS_FILE = "clusters.txt"
LINKS_FILE = "links.txt"
SPECIAL = frozenset(SPECIAL_LABELS)


@dataclass
class IrcExport:
    """What :func:`write_corpus_clusters` wrote."""

    clusters_path: Path
    links_path: Path
    sessions: int
    conversations: int
    links: int
    skipped: list[str]


def session_clusters(session: Session, rows: Mapping[int, PredictionRow], source: str) -> list[list[int]]:
    """The predicted conversations of one imported session as lists of log message numbers.

    Conversations come in the order of their first message, each ascending. Raises
    :class:`InputError` (naming ``source`` and the field) when the session was not imported from
    the corpus (no ``line`` on a turn).
    """
    groups: dict[object, list[int]] = {}
    for k, t in enumerate(session.turns):
        line = (t.model_extra or {}).get("line")
        if not isinstance(line, int) or isinstance(line, bool):
            raise InputError(source, None, f"{session.session_id}: turns[{k}].line",
                             "required: the message's number in the corpus log (data written by `import irc`)")
        row = rows.get(t.i)
        key: object = ("alone", t.i) if row is None or row.pred in SPECIAL else ("topic", row.pred)
        groups.setdefault(key, []).append(line)
    return [sorted(lines) for lines in groups.values()]


#: the first line of a file this export wrote: ``<annotation file>:<message number>...``
_OUR_LINE = re.compile(rb"^[^\s:]+:[0-9]")


def _is_export_head(head: bytes) -> bool:
    return _OUR_LINE.match(head.split(b"\n", 1)[0]) is not None


def _require_export_folder(out: Path) -> None:
    """Refuse an ``--out`` that holds a data set (it is no place for the corpus's files), or whose
    ``clusters.txt`` / ``links.txt`` this export did not write (a user's own notes, say)."""
    for name in (SESSIONS_FILE, MANIFEST_FILE):
        if (out / name).exists():
            raise UsageError(f"export-irc: --out {out} holds a data set ({name}): choose another folder for "
                             f"{CLUSTERS_FILE} and {LINKS_FILE}")
    for name in (CLUSTERS_FILE, LINKS_FILE):
        require_replaceable(out / name, _is_export_head, "a file export-irc wrote", "export-irc: --out")


def write_corpus_clusters(
    sessions: Sequence[Session], by_session: Mapping[str, Mapping[int, PredictionRow]], out: str | os.PathLike,
    source: str = "<data>",
) -> IrcExport:
    """Write ``clusters.txt`` and ``links.txt`` for the sessions that have rows; returns the counts.

    Sessions without any row are skipped (named in ``skipped``). Raises :class:`InputError` when a
    session lacks ``source_file`` or a turn lacks ``line`` (not imported by ``import irc``).
    """
    out = Path(out)
    _require_export_folder(out)
    cluster_lines: list[str] = []
    link_lines: list[str] = []
    skipped: list[str] = []
    exported = 0
    for s in sessions:  # every session, rows or not: data that `import irc` did not write is refused
        name = (s.model_extra or {}).get("source_file")
        if not isinstance(name, str) or not name:
            raise InputError(source, None, f"{s.session_id}: source_file",
                             "required: the corpus annotation file the session came from (data written by `import irc`)")
        if any(c.isspace() or not c.isprintable() for c in name):  # it starts every line written below
            raise InputError(source, None, f"{s.session_id}: source_file",
                             f"{name!r} is not a file name of the corpus (no spaces or control characters)")
    for s in sessions:
        rows = by_session.get(s.session_id)
        if not rows:
            skipped.append(s.session_id)
            continue
        name = s.model_extra["source_file"]
        exported += 1
        for lines in session_clusters(s, rows, source):
            cluster_lines.append(f"{name}:{' '.join(str(n) for n in lines)}")
            previous = lines[0]
            for n in lines:
                link_lines.append(f"{name}:{n} {previous} -")
                previous = n
    clusters_path, links_path = out / CLUSTERS_FILE, out / LINKS_FILE
    # both files under their locks at once: two exports to one folder never leave one's clusters
    # beside the other's links
    with exclusive_output(clusters_path, "export-irc"), exclusive_output(links_path, "export-irc"):
        _require_export_folder(out)  # again, now that no other export can be writing it
        atomic_write_text(clusters_path, "".join(x + "\n" for x in cluster_lines))
        atomic_write_text(links_path, "".join(x + "\n" for x in link_lines))
    return IrcExport(clusters_path, links_path, exported, len(cluster_lines), len(link_lines), skipped)
