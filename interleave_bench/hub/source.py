"""Data straight from a Hub revision: ``hub:ORG/NAME@REV`` (optionally ``#CONFIG``, default ``v0``).

:func:`fetch_sessions` resolves the revision (a tag, branch or commit) to its commit, downloads
that config's Parquet files at the commit into a temporary folder and turns every row back into a
validated :class:`~interleave_bench.schema.Session`. :func:`materialize` writes them as
``sessions.jsonl`` under ``hub-data/ORG__NAME/CONFIG@COMMIT/`` (in the current folder, or
``INTERLEAVE_HUB_DATA``), so ``route``, ``baselines`` and ``score`` work on it like on any data
folder (a copy there is used only while it holds the sessions just read: :func:`write_checked`);
the provenance of a score names the repo, the revision as given and the commit it resolved to.
The data fingerprint (on the records) equals that of the JSONL it was exported from.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..errors import InputError, InputErrors, InterleaveError, UsageError, exc_text
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
    from .features import row_to_session

    sessions: list[Session] = []
    errors: list[InputError] = []
    for name, rows in files:
        label = f"{where}/{name}"
        for k, row in enumerate(rows, start=1):
            try:
                s = parse_record(label, k, row_to_session(row, config), Session)
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
    """:func:`fetch_sessions`, then the sessions written as a data folder; returns it with ``folder`` set.

    The folder is named by the commit, so a revision that moves gets a new folder; a copy there is
    used only while it holds the sessions just read (:func:`write_checked`).
    """
    data = fetch_sessions(text)
    org, name = data.spec.repo_id.split("/")
    data.folder = hub_data_root() / f"{org}__{name}" / f"{data.spec.config}@{data.commit[:12]}"
    write_checked(data.folder, data.sessions, {**data.provenance(), "fingerprint": data.fingerprint,
                                               "files": data.files}, str(data.spec))
    return data


def write_checked(folder: Path, sessions: list[Session], source: dict[str, Any], what: str) -> None:
    """Make ``folder`` a data folder of ``sessions`` (read just now from ``what``, whose data fingerprint is
    ``source["fingerprint"]``): ``sessions.jsonl``, and ``source.json`` saying where they came from.

    A copy already there is checked on every use (:func:`holds_source`) and kept only when it holds
    these sessions; any other (edited, cut short, left by a run killed while writing it) is written
    anew from the sessions in hand, holding the copy's lock (a run writing it meanwhile is named).
    ``source.json`` goes first and comes back last, each file written through a temporary file and a
    rename, so it marks a complete copy. Raises :class:`UsageError` naming the copy when it cannot be
    written anew (and how to clear it), or does not read back as these sessions.
    """
    from ..errors import require_not_folder
    from ..locks import exclusive_output

    path, src, fingerprint = folder / SESSIONS_FILE, folder / SOURCE_FILE, source["fingerprint"]
    if holds_source(folder, fingerprint):
        return

    def unwritable(exc: BaseException) -> UsageError:
        return UsageError(f"{path}: the copy of {what} here is not its sessions ({fingerprint}) and cannot be "
                          f"written anew ({exc_text(exc)}): remove the folder {folder} and run again")

    try:
        folder.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():  # the link goes, not the file it names
            path.unlink()
        require_not_folder(path)
    except (InterleaveError, OSError) as exc:
        raise unwritable(exc) from None
    with exclusive_output(path):
        if holds_source(folder, fingerprint):  # written by a run that held the lock just before
            return
        try:
            if src.is_symlink() or src.is_file():
                src.unlink()
            write_jsonl(path, (s.model_dump(mode="json", by_alias=True) for s in sessions))
            write_json(src, source)
        except (InterleaveError, OSError) as exc:
            raise unwritable(exc) from None
        if sessions and not holds_source(folder, fingerprint):
            raise UsageError(f"{path}: written anew from {what}, it does not read back as its sessions ({fingerprint}), "
                             "so it is not used (a session holding the value of a secret of this environment is "
                             "written redacted)")


def holds_source(folder: Path, fingerprint: str) -> bool:
    """Whether the data folder ``folder`` is a complete copy of the sessions of data fingerprint ``fingerprint``:
    its ``source.json`` records that fingerprint and its ``sessions.jsonl`` has it (on the records, as
    scoring computes it: :func:`~..score.datafile.data_fingerprint`, which reads every line)."""
    from ..io import read_json
    from ..score.datafile import data_fingerprint

    try:
        recorded = read_json(folder / SOURCE_FILE)
        return (isinstance(recorded, dict) and recorded.get("fingerprint") == fingerprint
                and data_fingerprint(folder / SESSIONS_FILE) == fingerprint)
    except (InterleaveError, OSError):  # missing, unreadable or not sessions: not a copy of these
        return False


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
    """The sessions of ``config`` in an exported folder written as a data folder (under
    :func:`hub_data_root`, named by the folder and the fingerprint, reused while it holds these
    sessions: :func:`write_checked`), so every command reads an export as it reads the JSONL it was
    exported from."""
    sessions = read_exported(folder, config)
    fingerprint = records_fingerprint(sessions)
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", folder.resolve().name) or "export"
    out = hub_data_root() / "export" / f"{name}__{config}@{fingerprint.split(':')[-1][:12]}"
    write_checked(out, sessions, {"export": str(folder.resolve()), "config": config, "fingerprint": fingerprint},
                  f"{folder}#{config}")
    return out


#: where load_dataset rows handed in from Python are written as a data folder, under :func:`hub_data_root`
ROWS_DIR = "rows"
#: what a data argument may be, for the one line that refuses anything else
DATA_KINDS = ("a data folder or sessions file (a path), hub:ORG/NAME@REV, an exported folder, or load_dataset "
              "rows of a session config (a datasets.Dataset such as ds[\"dev\"], or a list of its rows as dicts)")


def _dataset_kind(data: Any) -> Optional[str]:
    """``"Dataset"`` or ``"DatasetDict"`` when ``data`` is one of ``datasets``' (never importing
    it: an object of it exists only once it is imported), else ``None``."""
    mod = sys.modules.get("datasets")
    if mod is None:
        return None
    return next((kind for kind in ("Dataset", "DatasetDict") if isinstance(data, getattr(mod, kind, ()))), None)


def session_config_of(columns: Any, where: str) -> str:
    """The session config whose rows have ``columns`` (``v0`` for ``irc_ubuntu``'s, which read alike).
    Raises :class:`UsageError` naming the columns when no session config has them."""
    from .features import CONFIG_VERSIONS, features_for

    have = sorted(columns)
    for config in CONFIG_VERSIONS:
        if sorted(features_for(config)) == have:
            return config
    hint = " (mid_reply cases are no sessions to route)" if "running" in have else ""
    raise UsageError(f"{where}: rows with the columns {', '.join(have) or 'none'} are no rows of a session config "
                     f"({', '.join(CONFIG_VERSIONS)}: load_dataset(FOLDER, \"v0\")){hint}")


def materialize_rows(data: Any, what: str = "data") -> Path:
    """load_dataset rows of a session config (a ``datasets.Dataset``, or a list of its rows as
    dicts) turned back into sessions by :func:`~.features.row_to_session`, validated as an
    export's rows are (:func:`sessions_of_rows`), and written as a data folder under
    :func:`hub_data_root` (``rows/CONFIG@<fingerprint>``, reused while it holds these sessions:
    :func:`write_checked`), so they route and score as the JSONL they were exported from.
    Raises :class:`UsageError` (one line, naming ``what``) for anything else, and
    :class:`InputErrors` naming the row and field of every bad row."""
    kind = _dataset_kind(data)
    if kind == "DatasetDict":
        raise UsageError(f"{what}: a DatasetDict holds several splits: pass the rows to route, one split (ds[\"dev\"]) "
                         "or datasets.concatenate_datasets of several")
    if kind == "Dataset":
        columns, rows, where = data.column_names, data.to_list(), f"<datasets.Dataset {data.split or 'rows'}>"
    elif isinstance(data, (list, tuple)) and data and all(isinstance(r, dict) for r in data):
        columns, rows, where = data[0].keys(), list(data), "<rows>"
    elif isinstance(data, (list, tuple)) and not data:
        raise UsageError(f"{what}: no rows: nothing to route")
    else:
        items = [type(r).__name__ for r in data if not isinstance(r, dict)][:1] if isinstance(data, (list, tuple)) else []
        raise UsageError(f"{what}: expected {DATA_KINDS}; got {type(data).__name__}" + "".join(f" of {t}" for t in items))
    if not rows:
        raise UsageError(f"{what}: {where} holds no rows: nothing to route")
    other = next((k for k, row in enumerate(rows, start=1) if row.keys() != rows[0].keys()), None)
    if other is not None:  # a column the first row lacks would be dropped unread
        raise UsageError(f"{what}: row {other} has other columns than row 1 ({', '.join(sorted(rows[other - 1]))})")
    config = session_config_of(columns, what)
    sessions = sessions_of_rows(where, [(config, rows)], config)
    fingerprint = records_fingerprint(sessions)
    out = hub_data_root() / ROWS_DIR / f"{config}@{fingerprint.split(':')[-1][:12]}"
    write_checked(out, sessions, {"rows": config, "fingerprint": fingerprint}, f"{where} ({config})")
    return out


def local_data(data: Any) -> tuple[str, Optional[dict[str, Any]]]:
    """A data argument as a local path: ``hub:`` revisions are materialized first, and so is a
    folder ``export`` wrote (``DIR`` or ``DIR#CONFIG``: :func:`materialize_export`) and, from
    Python, load_dataset rows (:func:`materialize_rows`, which refuses any other object).

    Returns ``(path, provenance keys)``; the keys are ``None`` for a local path (an export and
    rows too: their sessions' fingerprint is the JSONL's they were exported from).
    """
    if not isinstance(data, (str, os.PathLike)):
        return str(materialize_rows(data)), None
    if not is_hub(data):
        spec = export_spec(str(data))
        return (str(materialize_export(*spec)), None) if spec is not None else (data, None)
    hd = materialize(data)
    return str(hd.folder), hd.provenance()
