"""``import irc``: the corpus folder to a data folder (``sessions.jsonl`` + ``manifest.json``).

One session per annotated log (:func:`~.corpus.read_session`), validated with the project's own
session checks before it is written, so a data folder written here reads like any other. Sessions
are written one at a time to a temporary file that replaces ``sessions.jsonl`` at the end: an
interrupted import leaves the previous folder as it was, and only one log is in memory at once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io import (
    MANIFEST_FILE,
    SESSIONS_FILE,
    JsonlAppender,
    parse_record,
    require_own_data_folder,
    write_json,
)
from ..fingerprints import sha256_file
from ..locks import exclusive_output
from ..progress import progress
from ..provenance import provenance
from ..schema import OPEN_ONLY_FIELD, Manifest, Session, check_session
from ..score.cluster import KUMMERFELD_2019
from .corpus import VERSION, log_pairs, read_session

#: the manifest's ``writer`` for imported data: says where the messages came from
WRITER = "irc-disentanglement"
#: the corpus's licence (SPDX id) and where it comes from, recorded in the manifest and on the card
LICENSE = "cc-by-4.0"
SOURCE_URL = "https://www.jkk.name/irc-disentanglement"
#: how the corpus asks to be cited
CITATION = KUMMERFELD_2019


@dataclass
class ImportResult:
    """What :func:`import_irc` wrote."""

    out: Path
    sessions: int
    messages: int
    conversations: int
    context_lines: int
    splits: dict[str, int]


def checked_session(record: dict[str, Any], source: str) -> Session:
    """``record`` as a :class:`Session`, raising :class:`InputErrors` for any schema defect."""
    return parse_record(source, None, record, Session, check_session)


def import_irc(corpus: str | os.PathLike, out: str | os.PathLike) -> ImportResult:
    """Import the annotated logs under ``corpus`` into the data folder ``out``; returns the counts.

    ``corpus`` is the corpus folder (with ``dev/`` and/or ``test/``) or one split folder. Rewrites
    ``out/sessions.jsonl`` and ``out/manifest.json`` (the import is a pure function of the files).
    Raises :class:`InputError` naming the file, line and field for malformed input.
    """
    pairs = log_pairs(corpus)
    out = Path(out)
    require_own_data_folder(out, WRITER, "import irc", corpus)
    out.mkdir(parents=True, exist_ok=True)
    target = out / SESSIONS_FILE
    with exclusive_output(target, "import irc"):
        return _import_held(corpus, pairs, out, target)


def _import_held(corpus: str | os.PathLike, pairs: list, out: Path, target: Path) -> ImportResult:
    """The import, with the lock of ``target`` held."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")  # a new file: the umask's mode
    tmp.unlink(missing_ok=True)
    messages = conversations = context = 0
    splits: dict[str, int] = {}
    try:
        with JsonlAppender(tmp) as sink:
            for pair in progress(pairs, total=len(pairs), desc="import irc", unit="log"):
                record = read_session(pair)
                session = checked_session(record, str(pair.annotation))
                sink.append(session.dump())
                messages += len(session.turns)
                conversations += len(session.threads)
                context += len(record["context"])
                splits[pair.split] = splits.get(pair.split, 0) + 1
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    manifest = Manifest(
        version=VERSION,
        writer=WRITER,
        # the corpus's splits read (``dev``, ``test``): what tells data of its dev logs, which the local
        # router's fit read, from data of its test logs (route/local_sample.py)
        options={"source": str(Path(corpus)), OPEN_ONLY_FIELD: True, "corpus_splits": sorted(splits),
                 "license": LICENSE, "source_url": SOURCE_URL},
        counts={"sessions": len(pairs), "messages": messages},
        provenance=provenance(sessions_sha256=sha256_file(target)),
    )
    write_json(out / MANIFEST_FILE, manifest)
    return ImportResult(out, len(pairs), messages, conversations, context, splits)
