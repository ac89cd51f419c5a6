"""Data straight from a Hub revision: ``hub:ORG/NAME@REV`` (optionally ``#CONFIG``, default ``v0``).

:func:`fetch_sessions` resolves the revision (a tag, branch or commit) to its commit, downloads
that config's Parquet files at the commit into a temporary folder and turns every row back into a
validated :class:`~interleave_bench.schema.Session`. :func:`materialize` writes them once as
``sessions.jsonl`` under ``hub-data/ORG__NAME/CONFIG@COMMIT/`` (in the current folder, or
``INTERLEAVE_HUB_DATA``), so ``route``, ``baselines`` and ``score`` work on it like on any data
folder; the provenance of a score names the repo, the revision as given and the commit it
resolved to. The data fingerprint (on the records) equals that of the JSONL it was exported from.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..errors import InputError, InputErrors, UsageError
from ..io import SESSIONS_FILE, parse_record, write_json, write_jsonl
from ..fingerprints import records_fingerprint
from ..schema import Session, check_session
from . import client

#: what marks a data argument as a Hub revision rather than a local path
HUB_PREFIX = "hub:"
#: where materialized Hub data goes (relative to the current folder unless absolute)
HUB_DATA_ENV = "INTERLEAVE_HUB_DATA"
DEFAULT_HUB_DATA_DIR = "hub-data"
#: the record of where a materialized folder came from, beside its sessions.jsonl
SOURCE_FILE = "source.json"
_SPEC = re.compile(r"hub:(?P<repo>[^/@#\s]+/[^/@#\s]+)(?:@(?P<rev>[^#\s]+))?(?:#(?P<config>[^\s]+))?")


def is_hub(data: Any) -> bool:
    """Whether a data argument names a Hub revision (``hub:ORG/NAME@REV``)."""
    return isinstance(data, str) and data.startswith(HUB_PREFIX)


@dataclass(frozen=True)
class HubSpec:
    repo_id: str
    revision: str
    config: str

    def __str__(self) -> str:
        return f"{HUB_PREFIX}{self.repo_id}@{self.revision}#{self.config}"


def parse_spec(text: str) -> HubSpec:
    """``hub:ORG/NAME@REV#CONFIG`` parsed (revision default ``main``, config default ``v0``).

    Raises :class:`UsageError` with the expected form when ``text`` does not match.
    """
    # imports datasets: only when a hub: spec is given; the session configs are those with a version
    from .features import CONFIG_VERSIONS, DEFAULT_CONFIG

    m = _SPEC.fullmatch(text)
    if not m:
        raise UsageError(f"{text!r}: expected hub:ORG/NAME@REVISION (optionally #CONFIG, e.g. #v1)")
    config = m.group("config") or DEFAULT_CONFIG
    if config not in CONFIG_VERSIONS:
        raise UsageError(f"{text!r}: config {config!r} holds no sessions; use one of {', '.join(CONFIG_VERSIONS)}")
    return HubSpec(m.group("repo"), m.group("rev") or "main", config)


@dataclass
class HubData:
    """Sessions read from one config at one commit of a Hub dataset repo."""

    spec: HubSpec
    commit: str
    sessions: list[Session]
    fingerprint: str
    folder: Optional[Path] = None
    files: list[str] = field(default_factory=list)

    def provenance(self) -> dict[str, Any]:
        """The keys a score's provenance adds: repo, revision as given, resolved commit, config."""
        return {"data_repo": self.spec.repo_id, "data_revision": self.spec.revision, "data_commit": self.commit,
                "data_config": self.spec.config}


def resolve_commit(api: Any, repo_id: str, revision: str) -> str:
    """The commit a tag, branch or commit id names in the dataset repo ``repo_id``.

    Raises :class:`UsageError` (one line) when the repo or the revision does not exist.
    """
    with client.hub_errors(f"resolve {repo_id}@{revision}"):
        info = api.dataset_info(repo_id, revision=revision)
    return info.sha


def config_files(api: Any, repo_id: str, commit: str, config: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """``[(path in the repo, rows)]`` of ``config``'s Parquet files at ``commit`` (empty when absent).

    Files are downloaded into a temporary folder and read into memory; nothing stays in the
    Hugging Face cache.
    """
    import pyarrow.parquet as pq
    from huggingface_hub.hf_api import RepoFile

    where = f"read {HUB_PREFIX}{repo_id}@{commit[:12]}"
    with client.hub_errors(where):
        try:
            entries = api.list_repo_tree(repo_id, path_in_repo=config, revision=commit, repo_type=client.REPO_TYPE,
                                         recursive=True)
            names = sorted(e.path for e in entries if isinstance(e, RepoFile) and e.path.endswith(".parquet"))
        except Exception as exc:  # noqa: BLE001 - a missing folder is "no such config", whatever the client raises
            if "EntryNotFound" in type(exc).__name__ or "404" in str(exc):
                return []
            raise
        out = []
        with tempfile.TemporaryDirectory(prefix="interleave-hub-data-") as tmp:
            for name in names:
                path = api.hf_hub_download(repo_id, name, repo_type=client.REPO_TYPE, revision=commit, cache_dir=tmp)
                out.append((name, pq.read_table(path).to_pylist()))
    return out


def read_config_at(api: Any, repo_id: str, commit: str, config: str) -> tuple[list[Session], list[str]]:
    """Every session of ``config`` at ``commit`` (all splits, in file order) and the files read.

    Raises :class:`InputErrors` naming the Hub file, the row and the field of every bad row, and
    :class:`UsageError` when the config has no Parquet files there.
    """
    where = f"{HUB_PREFIX}{repo_id}@{commit[:12]}"
    files = config_files(api, repo_id, commit, config)
    if not files:
        raise UsageError(f"{where}: no Parquet files of config {config!r} (configs are v0, v1, mid_reply)")
    return sessions_of_rows(where, files, config), [name for name, _ in files]


def sessions_of_rows(where: str, files: list[tuple[str, list[dict[str, Any]]]], config: str) -> list[Session]:
    """The validated sessions of ``config``'s Parquet rows, ``files`` as ``[(path, rows)]`` under ``where``.

    Raises :class:`InputErrors` naming the file, the row and the field of every bad row.
    """
    from .features import SPECS, from_row

    sessions: list[Session] = []
    errors: list[InputError] = []
    for name, rows in files:
        label = f"{where}/{name}"
        for k, row in enumerate(rows, start=1):
            try:
                s = parse_record(label, k, from_row(row, SPECS[config]), Session)
            except InputError as exc:
                errors.extend(exc.errors if isinstance(exc, InputErrors) else [exc])
                continue
            except ValueError as exc:
                errors.append(InputError(label, k, "extra", f"not valid JSON: {exc}"))
                continue
            errors.extend(InputError(label, k, fld, msg) for fld, msg in check_session(s))
            sessions.append(s)
    if errors:
        raise InputErrors(errors)
    return sessions


def read_exported(folder: str | os.PathLike, config: str) -> list[Session]:
    """Every session of ``config`` in a folder ``export`` wrote (``CONFIG/<split>-*.parquet``).

    Raises :class:`UsageError` when the folder holds no Parquet file of that config, and
    :class:`InputErrors` for bad rows.
    """
    import pyarrow.parquet as pq

    root = Path(folder)
    names = sorted(p.relative_to(root).as_posix() for p in (root / config).glob("*.parquet"))
    if not names:
        raise UsageError(f"{folder}: no Parquet files of config {config!r} (not an exported dataset folder?)")
    return sessions_of_rows(str(root), [(name, pq.read_table(root / name).to_pylist()) for name in names], config)


def config_fingerprint(api: Any, repo_id: str, commit: str, config: str) -> Optional[str]:
    """The data fingerprint (on the records) of ``config`` at ``commit``; ``None`` when the config is absent.

    Session configs fingerprint their sessions, ``mid_reply`` its cases (as the export and the
    mid-reply summary do). Raises :class:`InputErrors` for rows that are not valid records.
    """
    from .features import CONFIG_VERSIONS

    if config in CONFIG_VERSIONS:
        try:
            sessions, _ = read_config_at(api, repo_id, commit, config)
        except UsageError:
            return None
        return records_fingerprint(sessions)
    rows = [row for _, part in config_files(api, repo_id, commit, config) for row in part]
    if not rows:
        return None
    from ..schema import MidReplyCaseFile
    from .features import rows_to_case_file

    where = f"{HUB_PREFIX}{repo_id}@{commit[:12]}/{config}"
    try:
        cases = parse_record(where, None, rows_to_case_file(rows), MidReplyCaseFile)
    except ValueError as exc:
        raise InputError(where, None, "extra", f"not valid JSON: {exc}") from None
    return records_fingerprint(cases.cases)


def fetch_sessions(text: str, api: Any = None) -> HubData:
    """Resolve ``hub:ORG/NAME@REV#CONFIG`` and read its sessions; returns them with commit and fingerprint."""
    spec = parse_spec(text)
    api = api or client.hub_api()
    commit = resolve_commit(api, spec.repo_id, spec.revision)
    sessions, names = read_config_at(api, spec.repo_id, commit, spec.config)
    return HubData(spec, commit, sessions, records_fingerprint(sessions), files=names)


def hub_data_root() -> Path:
    """Where materialized Hub data goes: ``INTERLEAVE_HUB_DATA`` or ``./hub-data``."""
    return Path(os.environ.get(HUB_DATA_ENV) or DEFAULT_HUB_DATA_DIR)


def materialize(text: str) -> HubData:
    """:func:`fetch_sessions`, then the sessions written once as a data folder; returns it with ``folder`` set.

    The folder is named by the commit, so a revision that moves gets a new folder and a folder's
    content never changes; an existing folder with the same fingerprint is reused as it is.
    """
    data = fetch_sessions(text)
    org, name = data.spec.repo_id.split("/")
    data.folder = hub_data_root() / f"{org}__{name}" / f"{data.spec.config}@{data.commit[:12]}"
    _write_once(data.folder, data.sessions, {**data.provenance(), "fingerprint": data.fingerprint, "files": data.files})
    return data


def _write_once(folder: Path, sessions: list[Session], source: dict[str, Any]) -> None:
    """``sessions`` as the data folder ``folder`` (``sessions.jsonl``, and ``source.json``: where they
    came from, with their ``fingerprint``), unless it already holds them: then it is left as it is."""
    src = folder / SOURCE_FILE
    if (folder / SESSIONS_FILE).is_file() and src.is_file():
        from ..io import read_json

        if read_json(src).get("fingerprint") == source["fingerprint"]:
            return
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / SESSIONS_FILE, (s.model_dump(mode="json", by_alias=True) for s in sessions))
    write_json(src, source)


#: what marks a folder as ``export``'s output rather than a data folder
EXPORT_MARK = "README.md"
#: the session config an exported folder is read from unless ``#CONFIG`` says otherwise
EXPORT_CONFIG = "v0"


def is_export(path: Path) -> bool:
    """Whether ``path`` is a folder ``export`` wrote (a dataset card, no ``sessions.jsonl``)."""
    return path.is_dir() and not (path / SESSIONS_FILE).is_file() and (path / EXPORT_MARK).is_file()


def export_spec(text: str) -> Optional[tuple[Path, str]]:
    """``(folder, config)`` when the data argument ``text`` names an exported folder (``DIR``, or
    ``DIR#CONFIG``: a path that exists as given is taken whole), else None."""
    path_text, _, config = ("", "", "") if Path(text).exists() else text.partition("#")
    path = Path(path_text or text)
    return (path, config or EXPORT_CONFIG) if is_export(path) else None


def materialize_export(folder: Path, config: str) -> Path:
    """The sessions of ``config`` in an exported folder written once as a data folder (under
    :func:`hub_data_root`, named by the folder and the fingerprint, reused while it holds the same
    sessions), so every command reads an export as it reads the JSONL it was exported from."""
    sessions = read_exported(folder, config)
    fingerprint = records_fingerprint(sessions)
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", folder.resolve().name) or "export"
    out = hub_data_root() / "export" / f"{name}__{config}@{fingerprint.split(':')[-1][:12]}"
    _write_once(out, sessions, {"export": str(folder.resolve()), "config": config, "fingerprint": fingerprint})
    return out


def local_data(data: str) -> tuple[str, Optional[dict[str, Any]]]:
    """A data argument as a local path: ``hub:`` revisions are materialized first, and so is a
    folder ``export`` wrote (``DIR`` or ``DIR#CONFIG``: :func:`materialize_export`).

    Returns ``(path, provenance keys)``; the keys are ``None`` for a local path (an export too:
    its sessions' fingerprint is the JSONL's it was exported from).
    """
    if not is_hub(data):
        spec = export_spec(str(data))
        return (str(materialize_export(*spec)), None) if spec is not None else (data, None)
    hd = materialize(data)
    return str(hd.folder), hd.provenance()
