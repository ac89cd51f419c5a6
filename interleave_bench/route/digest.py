"""What a router saw of each session, as a short digest, and the check that a run is scored on it.

:func:`conversation_digest` is the one definition: a hash of the session's gold-free copy,
:func:`~.base.conversation_of` (session id, language, thread cards, and each message's turn number,
text, assistant reply and speaker). Gold labels and other annotations are not in it, so fixing them
and scoring the old predictions again stays allowed. ``route`` records the digest of every session
it routes in the run record (``conversation_digests``); ``score`` and ``compare`` refuse a run
whose record gives another digest for a session of the data (:func:`refuse_other_data`), and so
does :func:`~interleave_bench.hub.routing_inputs.routing_inputs` for a predictions file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Collection, Iterable, Mapping, Optional, Sequence

from ..errors import InputError, InterleaveError
from ..schema import Session
from .base import conversation_of

#: hex digits kept of each session's SHA-256: 64 bits, ample to tell one session's text from another's
DIGEST_HEX = 16
#: the run record's field holding them (:class:`~interleave_bench.documents.RunRecord`)
DIGESTS_FIELD = "conversation_digests"


def conversation_digest(session: Session) -> str:
    """The digest of what a router may see of ``session`` (:func:`~.base.conversation_of`): the
    first :data:`DIGEST_HEX` hex digits of the SHA-256 of its canonical JSON."""
    text = json.dumps(_plain(conversation_of(session)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:DIGEST_HEX]


def _plain(value: object) -> object:
    """``value`` as :func:`dataclasses.asdict` gives it to JSON (a dataclass as a dict of its fields,
    a tuple as a list), without that function's deep copy of every string. With it and a fresh
    run's rows counted as written, the synthetic run of ``benchmarks/bench_route.py`` (200 sessions of
    40 turns, ``local``) took 0.944 as many instructions closed and 0.945 open (valgrind's count of
    the whole process, against the code before), its predictions byte for byte the same."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    names = _FIELDS.get(type(value))
    if names is None:
        if not dataclasses.is_dataclass(value):
            return value
        names = _FIELDS[type(value)] = tuple(f.name for f in dataclasses.fields(value))  # type: ignore[arg-type]
    return {name: _plain(getattr(value, name)) for name in names}


#: each dataclass's field names, as :func:`_plain` reads them
_FIELDS: dict[type, tuple[str, ...]] = {}


def conversation_digests(sessions: Iterable[Session]) -> dict[str, str]:
    """``{session_id: digest}`` of ``sessions``, in their order."""
    return {s.session_id: conversation_digest(s) for s in sessions}


def digest_mismatch(recorded: Mapping[str, str], sessions: Iterable[Session],
                    named: Collection[str] = ()) -> Optional[tuple[str, int, int]]:
    """``(first differing session id, how many differ, how many were compared)`` among the
    ``sessions`` that ``recorded`` lists or the run's rows name (``named``: a session with rows
    and no digest was not routed as recorded, and differs), in the order of ``sessions``; ``None``
    when none differs (an empty map of digests checks no session the rows leave out, never one
    they name)."""
    first, differ, compared = None, 0, 0
    for s in sessions:
        want = recorded.get(s.session_id)
        if want is None:
            if s.session_id in named:
                compared += 1
                differ += 1
                first = first if first is not None else s.session_id
            continue
        compared += 1
        if conversation_digest(s) != want:
            differ += 1
            first = first if first is not None else s.session_id
    return None if first is None else (first, differ, compared)


def recorded_digests(record: Mapping) -> Optional[dict[str, str]]:
    """The digests a run record (as read: a mapping) holds; ``None`` for a record without them
    (written before they were) or with a value that is no ``{id: digest}`` map."""
    value = record.get(DIGESTS_FIELD)
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return value
    return None


def mismatch_text(predictions: str | os.PathLike, data: str, found: tuple[str, int, int]) -> str:
    """What differs, for a message: ``<pred> was routed on other sessions than <data>: ...``."""
    first, differ, compared = found
    return (f"{predictions} was routed on other sessions than {data}: {differ} of the {compared} sessions it "
            f"routed that the data holds differ from what it was shown, the first {first!r}")


def same_sessions(routed: object, routed_sha: str, data_file: str | os.PathLike) -> bool:
    """Whether the file a run was routed on (its record's ``data``, when it is still there with the
    bytes the record names) holds the same sessions as ``data_file`` in another layout (an export
    of it, read back): the same fingerprint on the records. For records without digests."""
    from ..fingerprints import records_fingerprint, sha256_file
    from ..io import iter_sessions

    if not isinstance(routed, str) or not Path(routed).is_file():
        return False
    try:
        if sha256_file(routed) != routed_sha:
            return False
        return records_fingerprint(iter_sessions(routed)) == records_fingerprint(iter_sessions(data_file))
    except InterleaveError:
        return False


def refuse_other_data(data_file: str | os.PathLike, predictions: Sequence[str | os.PathLike], split: str,
                      writes_own: bool) -> dict[str, str]:
    """Raise :class:`InputError` (one line naming the predictions file's run record, the first
    differing session and how many differ) when a run's record gives another digest for a session
    of ``split`` in ``data_file`` than that session's. A record without digests (an older version's)
    whose ``data_sha256`` is not the file's and whose data is not the same sessions is refused
    only when ``writes_own`` (the run's own score file would be written over); otherwise it gets a
    warning, returned as ``{str(path): warning}`` for the caller to print once the figures are out
    (rows for sessions the data lacks are left out, and sessions with the same ids are scored as
    if they were these). One pass for both: the data is hashed once, and read only when some
    record's ``data_sha256`` differs from the file's."""
    from ..fingerprints import sha256_file
    from ..io import read_sessions
    from ..score.paths import run_record
    from ..score.read import read_predictions_fast

    data_sha: Optional[str] = None
    sessions: Optional[list[Session]] = None
    warnings: dict[str, str] = {}
    for p in predictions:
        found = run_record(p)
        stated = found[1].get("data_sha256") if found is not None else None
        if not isinstance(stated, str):
            continue
        record_path, record = found  # type: ignore[misc]
        data_sha = data_sha or sha256_file(data_file)
        if stated == data_sha:
            continue
        digests = recorded_digests(record)
        if digests is not None:
            if sessions is None:
                sessions = [s for s in read_sessions(data_file) if split == "all" or s.split == split]
            named = {r.session_id for r in read_predictions_fast(p)[0]}
            mismatch = digest_mismatch(digests, sessions, named)
            if mismatch is not None:
                raise InputError(str(record_path), None, DIGESTS_FIELD,
                                 mismatch_text(p, str(data_file), mismatch) + "; score it on the data it was routed "
                                 f"on ({record.get('data')}), or route it again on this data")
        elif same_sessions(record.get("data"), stated, data_file):
            continue
        elif writes_own:
            raise InputError(str(record_path), None, "data_sha256",
                             f"{p} was routed on other data than {data_file} (data_sha256 {stated[:19]}..., the "
                             f"file's {data_sha[:19]}...) and its record, of an older version, cannot tell whether "
                             f"the sessions are the same: route it again on this data, or score it with --json or "
                             f"--out (its score file is left as it is)")
        else:
            warnings[str(p)] = (f"warning: {p} was routed on other data than {data_file} ({record_path.name}: "
                                f"data_sha256 {stated[:19]}..., the file's {data_sha[:19]}...; its record, of an older "
                                "version, holds no session digests): rows for sessions or turns the data lacks are "
                                "left out, and sessions with the same ids are scored as if they were these")
    return warnings
