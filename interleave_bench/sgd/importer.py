"""``import sgd``: the corpus folder to a data folder (``sessions.jsonl`` + ``manifest.json``).

One session per dialogue that uses more than one service (:func:`~.session.dialogue_session`);
single-service dialogues are skipped and counted. Each session is validated with the project's own
session checks before it is written, so a data folder written here reads like any other. Sessions
go one at a time to a temporary file that replaces ``sessions.jsonl`` at the end (flushed to disk
once, not per line: a half-written temporary file is never resumed, only discarded): an
interrupted import leaves the previous folder as it was, and the import is a pure function of the
files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..errors import InputError
from ..io import (
    MANIFEST_FILE,
    SESSIONS_FILE,
    atomic_write_parts,
    dumps_line,
    parse_record,
    require_own_data_folder,
    write_json,
)
from ..fingerprints import sha256_file
from ..progress import progress
from ..provenance import provenance
from ..schema import Manifest, Session, check_session
from .corpus import read_dialogues, read_schema, split_folders
from .session import VERSION, dialogue_session, session_id

#: the manifest's ``writer`` for imported data: says where the messages came from
WRITER = "schema-guided-dialogue"
#: the corpus's licence (SPDX id), recorded in the manifest and on the card: ShareAlike, so anything
#: published from it carries the same licence and the citation
LICENSE = "cc-by-sa-4.0"
LICENSE_NAME = "Creative Commons Attribution-ShareAlike 4.0 International"
SOURCE_URL = "https://github.com/google-research-datasets/dstc8-schema-guided-dialogue"
#: how the corpus asks to be cited
CITATION = """\
@inproceedings{rastogi2020towards,
  title     = {Towards Scalable Multi-Domain Conversational Modeling: The Schema-Guided Dialogue Dataset},
  author    = {Rastogi, Abhinav and Zang, Xiaoxue and Sunkara, Srinivas and Gupta, Raghav and Khaitan, Pranav},
  booktitle = {Proceedings of the AAAI Conference on Artificial Intelligence},
  year      = {2020},
  eprint    = {1909.05855},
  archivePrefix = {arXiv}
}
"""
#: a dialogue is one session only when the user moves between services
MIN_SERVICES = 2


@dataclass
class ImportResult:
    """What :func:`import_sgd` wrote."""

    out: Path
    sessions: int
    messages: int
    threads: int
    skipped: int
    splits: dict[str, int] = field(default_factory=dict)


def checked_session(record: dict[str, Any], source: str) -> Session:
    """``record`` as a :class:`Session`, raising :class:`InputErrors` for any schema defect."""
    return parse_record(source, None, record, Session, check_session)


def import_sgd(corpus: str | os.PathLike, out: str | os.PathLike) -> ImportResult:
    """Import the multi-service dialogues under ``corpus`` into the data folder ``out``; returns the counts.

    ``corpus`` is the corpus folder (with ``train/``, ``dev/`` and/or ``test/``) or one split
    folder, each holding ``schema.json`` and ``dialogues_*.json``. Rewrites ``out/sessions.jsonl``
    and ``out/manifest.json``. Raises :class:`InputError` naming the file and field for bad input
    (nothing is written then).
    """
    folders = split_folders(corpus)
    out = Path(out)
    require_own_data_folder(out, WRITER, "import sgd", corpus)
    result = ImportResult(out, 0, 0, 0, 0)
    files = [(folder, f) for folder in folders for f in folder.files]

    def lines() -> Iterator[str]:
        schemas = {folder.split: read_schema(folder.schema_file) for folder in folders}
        seen: dict[str, str] = {}  # session id -> where its dialogue is
        for folder, path in progress(files, total=len(files), desc="import sgd", unit="file"):
            schema = schemas[folder.split]
            for located in read_dialogues(path, schema, folder.schema_file):
                sid = session_id(located.dialogue.dialogue_id, folder.split)
                if sid in seen:
                    raise InputError(str(path), None, located.where("dialogue_id"),
                                     f"dialogue {located.dialogue.dialogue_id} appears twice (first in {seen[sid]})")
                seen[sid] = f"{path.name} {located.where()}"
                if len(located.dialogue.services) < MIN_SERVICES:
                    result.skipped += 1
                    continue
                record = dialogue_session(located, folder.split, schema)
                session = checked_session(record, f"{path} {located.where()}")
                result.sessions += 1
                result.messages += len(session.turns)
                result.threads += len(session.threads)
                result.splits[session.split] = result.splits.get(session.split, 0) + 1
                yield dumps_line(session) + "\n"
        if not result.sessions:  # (raised before the file is put in place: nothing is written)
            what = (f"no dialogue here uses more than one service ({result.skipped:,} of one service left out)"
                    if result.skipped else "no dialogues here")
            raise InputError(str(corpus), None, None, f"{what}: nothing to import")

    # written whole through a temporary file and a rename (one flush to disk at the end): an
    # interrupted import leaves the previous sessions.jsonl as it was, so nothing needs resuming
    target = out / SESSIONS_FILE
    atomic_write_parts(target, lines())
    manifest = Manifest(
        version=VERSION,
        writer=WRITER,
        options={"source": str(Path(corpus)), "corpus_splits": [f.split for f in folders], "license": LICENSE,
                 "source_url": SOURCE_URL},
        counts={"sessions": result.sessions, "messages": result.messages, "single_service_skipped": result.skipped},
        provenance=provenance(sessions_sha256=sha256_file(target)),
    )
    write_json(out / MANIFEST_FILE, manifest)
    return result
