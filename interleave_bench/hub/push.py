"""``interleave-bench push``: validate an exported folder, then publish it as one commit plus a tag.

Order of work, so that a failure never leaves the repo half-updated:

1. Validate the folder (no symbolic link in it, README YAML against this package's features, every
   Parquet file's schema, every row through the package's record checks), and refuse every file
   (its content or its path in the repo), and the ``--repo``, ``--revision`` and ``--message``
   published, that hold a secret of this process (:mod:`.outgoing`). Invalid data is refused
   before any request.
2. Create the dataset repo if needed; read the head of ``main``, its tags and its file list.
3. Compare the local files with the remote ones (git blob id, or SHA-256 for LFS/Xet files). A
   config on the Hub that the folder does not carry is kept (its files stay, and the README pushed
   declares it beside the folder's configs, so the card lists exactly the configs present after
   the push) unless ``--delete-missing``. No difference: report "unchanged", make no commit (and
   only add the tag if it is new).
4. One ``create_commit`` with every addition and deletion, against the head read in step 2
   (``parent_commit``), so a concurrent push fails instead of being overwritten. The Hub applies a
   commit whole or not at all: a push that fails here leaves the previous revision as it was.
5. Tag the new commit. Tags are never moved: a tag that exists on another commit is refused in
   step 2, before anything is written.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .. import __version__
from ..errors import InputError, InputErrors, UsageError, exc_text
from ..io import parse_record
from ..progress import progress
from ..schema import MidReplyCaseFile, Session, check_case_file, check_session
from . import client
from .evalresults import EVAL_YAML, eval_yaml
from .export import README
from .features import (
    CONFIG_VERSIONS,
    CONFIGS,
    MID_REPLY_SPLIT,
    SESSION_SPLITS,
    SPECS,
    features_for,
    from_row,
    rows_to_case_file,
)
from .outgoing import refuse_secret_files, refuse_secret_text

#: at most this many row errors are collected per file before validation stops reading it
MAX_ERRORS_PER_FILE = 50
#: the prefix of the tag a push gets when no --revision is given (then the content's fingerprint)
DEFAULT_TAG_PREFIX = "data-"
#: folders of the repo that an export owns: remote files there that the folder lacks are deleted
OWNED_FOLDERS = tuple(f"{c}/" for c in CONFIGS)


# --- the local folder -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LocalFile:
    path: str  # relative, with "/"
    abspath: str
    size: int
    git_sha1: str
    sha256: str


def _local_file(path: Path, rel: str) -> LocalFile:
    """One file's sizes and hashes (git blob id and SHA-256), under the name ``rel``."""
    size = path.stat().st_size
    git = hashlib.sha1(b"blob %d\0" % size)  # git's blob id: the header, then the bytes
    sha = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            git.update(block)
            sha.update(block)
    return LocalFile(rel, str(path), size, git.hexdigest(), sha.hexdigest())


def local_files(folder: Path) -> list[LocalFile]:
    """Every file of the folder to publish (hidden files and folders, such as ``.git``, left out).

    A symbolic link in it (to a file or a folder, inside the folder or not) is refused with an
    :class:`InputError` naming it, one per link: the Hub would get the content of the file it names,
    wherever that is (``/etc/hostname``), not the link. ``folder`` itself may be a link.
    """
    out, links = [], []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or any(p.is_relative_to(link) for link in links):
            continue
        if p.is_symlink():
            links.append(p)
        elif p.is_file():
            out.append(_local_file(p, rel.as_posix()))
    if links:
        errors = [InputError(str(p), None, None, f"a symbolic link (to {os.readlink(p)}): push uploads only the "
                                                 "folder's own files; copy the file in or remove the link (nothing was sent)")
                  for p in links]
        raise errors[0] if len(errors) == 1 else InputErrors(errors)
    return out


def content_fingerprint(files: list[LocalFile]) -> str:
    """SHA-256 over the files' paths and hashes: equal folders, equal fingerprint."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.path):
        h.update(f"{f.path}\0{f.sha256}\n".encode())
    return h.hexdigest()


@dataclass
class FolderSummary:
    configs: dict[str, dict[str, int]]
    files: list[LocalFile]
    warnings: list[str] = field(default_factory=list)


def validate_folder(folder: str | os.PathLike) -> FolderSummary:
    """Check an exported folder as ``push`` requires; returns its configs and files.

    Raises :class:`InputError`/:class:`InputErrors` naming the file, the row (as the line number)
    and the field of every defect found.
    """
    import pyarrow.parquet as pq
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard

    root = Path(folder)
    if not root.is_dir():
        raise InputError(str(root), None, None, "no such folder (run `interleave-bench export` first)")
    files = local_files(root)  # a link refused before any file is read
    readme = root / README
    if not readme.is_file():
        raise InputError(str(readme), None, None, "missing: not an exported dataset folder (run `interleave-bench export`)")
    try:
        card = DatasetCard.load(readme)
        meta = MetadataConfigs.from_dataset_card_data(card.data)
        infos = DatasetInfosDict.from_dataset_card_data(card.data)
    except Exception as exc:  # noqa: BLE001 - any YAML or schema problem in the header is one error
        raise InputError(str(readme), None, "YAML header", f"cannot be read: {exc_text(exc)}") from None
    if not meta:
        raise InputError(str(readme), None, "configs", "the YAML header declares no configs")
    names = [f.path for f in files]
    errors: list[InputError] = []
    summary: dict[str, dict[str, int]] = {}
    claimed: set[str] = set()
    for config, entry in meta.items():
        where = f"configs[{config}]"
        if config not in CONFIGS:
            errors.append(InputError(str(readme), None, where, f"unknown config {config!r}; expected {', '.join(CONFIGS)}"))
            continue
        want = features_for(config)
        info = infos.get(config)
        if info is None or info.features != want:
            errors.append(
                InputError(str(readme), None, f"dataset_info[{config}].features",
                           f"differ from interleave-bench {__version__}'s features for {config!r}: re-export the folder")
            )
            continue
        declared = {s.name: s.num_examples for s in (info.splits or {}).values()} if info.splits else {}
        summary[config] = {}
        for item in entry.get("data_files", []):
            split, patterns = item["split"], item["path"]
            patterns = [patterns] if isinstance(patterns, str) else patterns
            matched = sorted({n for n in names for p in patterns if fnmatch.fnmatchcase(n, p)})
            allowed = (MID_REPLY_SPLIT,) if config == "mid_reply" else SESSION_SPLITS
            if split not in allowed:
                errors.append(InputError(str(readme), None, f"{where}.data_files", f"split {split!r} is not one of {', '.join(allowed)}"))
                continue
            if not matched:
                errors.append(InputError(str(readme), None, f"{where}.data_files", f"no file matches {patterns} for split {split!r}"))
                continue
            claimed.update(matched)
            rows = 0
            for name in progress(matched, desc=f"validate {config}/{split}", unit="file"):
                rows += _check_parquet(root / name, config, split, want, errors, pq)
            summary[config][split] = rows
            if split in declared and declared[split] != rows:
                errors.append(InputError(str(readme), None, f"dataset_info[{config}].splits[{split}].num_examples",
                                         f"says {declared[split]}, the files hold {rows} rows"))
        if config != "mid_reply":
            errors += _check_unique_sessions(root, config, [n for n in claimed if n.startswith(config + "/")], pq)
    warnings = [f"{root / n}: not part of any config; it is uploaded as it is"
                for n in names if n not in (README, EVAL_YAML) and n not in claimed]
    if errors:
        raise InputErrors(errors)
    ordered = {c: summary[c] for c in CONFIGS if c in summary}
    return FolderSummary(ordered, files, warnings)


def _check_parquet(path: Path, config: str, split: str, features: Any, errors: list[InputError], pq: Any) -> int:
    """Schema and rows of one Parquet file; appends errors, returns the number of rows."""
    name = str(path)
    try:
        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - a broken file is one error, whatever pyarrow raises
        errors.append(InputError(name, None, None, f"not a readable Parquet file ({exc_text(exc)})"))
        return 0
    if not table.schema.remove_metadata().equals(features.arrow_schema.remove_metadata()):
        errors.append(InputError(name, None, "schema", f"does not match the features of config {config!r}: re-export the folder"))
        return table.num_rows
    found = 0
    rows = table.to_pylist()
    if config == "mid_reply":
        first: dict[str, Any] = {}
        for k, row in enumerate(rows, start=1):
            # the catalog is joined into every row: all rows of a language must carry the same one
            if first.setdefault(row.get("lang"), row.get("catalog")) != row.get("catalog"):
                errors.append(InputError(name, k, "catalog", f"differs from the first {row.get('lang')!r} case's catalog"))
        try:
            data = rows_to_case_file(rows)
            parse_record(name, None, data, MidReplyCaseFile, check_case_file)
        except InputError as exc:
            errors.extend(exc.errors if isinstance(exc, InputErrors) else [exc])
        except ValueError as exc:
            errors.append(InputError(name, None, "extra", f"not valid JSON: {exc}"))
        return len(rows)
    for k, row in enumerate(rows, start=1):
        if found >= MAX_ERRORS_PER_FILE:
            break
        try:
            data = from_row(row, SPECS[config])
        except ValueError as exc:
            errors.append(InputError(name, k, "extra", f"not valid JSON: {exc}"))
            found += 1
            continue
        try:
            s = parse_record(name, k, data, Session)
        except InputError as exc:
            new = exc.errors if isinstance(exc, InputErrors) else [exc]
            errors.extend(new)
            found += len(new)
            continue
        problems = check_session(s)
        if s.version != CONFIG_VERSIONS[config]:
            problems.append(("version", f"{s.version!r} cannot go in config {config!r}"))
        if s.split != split:
            problems.append(("split", f"{s.split!r} in a file of split {split!r}"))
        errors.extend(InputError(name, k, fld, msg) for fld, msg in problems)
        found += len(problems)
    return len(rows)


def _check_unique_sessions(root: Path, config: str, files: list[str], pq: Any) -> list[InputError]:
    seen: Counter[str] = Counter()
    for name in sorted(files):
        try:
            ids = pq.read_table(root / name, columns=["session_id"]).column("session_id").to_pylist()
        except Exception:  # noqa: BLE001 - already reported by _check_parquet
            continue
        seen.update(ids)
    return [InputError(str(root / config), None, "session_id", f"session {sid!r} appears {n} times")
            for sid, n in sorted(seen.items()) if n > 1]


# --- the push ----------------------------------------------------------------------------------------------


@dataclass
class PushResult:
    repo_id: str
    commit: str
    tag: str
    unchanged: bool
    tag_created: bool
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    commit_url: Optional[str] = None
    summary: Optional[FolderSummary] = None
    #: configs on the Hub the folder did not carry, kept (not deleted) by this push
    kept: list[str] = field(default_factory=list)


def diff_remote(
    local: list[LocalFile], remote: dict[str, Any], keep: tuple[str, ...] = ()
) -> tuple[list[LocalFile], list[LocalFile], list[str]]:
    """``(added, changed, deleted)`` between the local files and the remote ``{path: RepoFile}``.

    A remote LFS/Xet file is compared on its SHA-256, a regular one on its git blob id. Only remote
    files inside the folders an export owns can be deleted, and never those of the configs in
    ``keep``; others (``.gitattributes``, images a maintainer added) stay.
    """
    added, changed = [], []
    for f in local:
        r = remote.get(f.path)
        if r is None:
            added.append(f)
        elif (r.lfs.sha256 if r.lfs is not None else r.blob_id) != (f.sha256 if r.lfs is not None else f.git_sha1):
            changed.append(f)
    here = {f.path for f in local}
    kept = tuple(f"{c}/" for c in keep)
    deleted = sorted(p for p in remote if p not in here and p.startswith(OWNED_FOLDERS) and not p.startswith(kept))
    return added, changed, deleted


def remote_configs(remote: dict[str, Any]) -> list[str]:
    """The configs whose folder holds files on the Hub, in :data:`CONFIGS` order."""
    return [c for c in CONFIGS if any(p.startswith(f"{c}/") for p in remote)]


def merge_card(local: str, remote: str, kept: list[str]) -> str:
    """The folder's README with the ``kept`` configs of the remote README declared beside its own.

    The YAML gets the kept configs' ``configs``, ``dataset_info`` and fingerprint entries (in
    :data:`CONFIGS` order; one default); the card's configs table gets their rows. Returns the
    README text to push.
    """
    from huggingface_hub import DatasetCard

    from .card import FINGERPRINTS_KEY

    mine, theirs = DatasetCard(local), DatasetCard(remote)
    data, other = mine.data.to_dict(), theirs.data.to_dict()

    def entries(d: dict[str, Any], key: str) -> list[dict[str, Any]]:
        v = d.get(key) or []
        return [v] if isinstance(v, dict) else list(v)

    order = {c: k for k, c in enumerate(CONFIGS)}
    configs = entries(data, "configs") + [e for e in entries(other, "configs") if e.get("config_name") in kept]
    if any(e.get("default") for e in configs if e.get("config_name") in kept):
        for e in configs:
            if e.get("config_name") not in kept:
                e.pop("default", None)
    data["configs"] = sorted(configs, key=lambda e: order.get(e.get("config_name"), len(order)))
    infos = entries(data, "dataset_info") + [e for e in entries(other, "dataset_info") if e.get("config_name") in kept]
    data["dataset_info"] = sorted(infos, key=lambda e: order.get(e.get("config_name"), len(order)))
    prints = dict(data.get(FINGERPRINTS_KEY) or {})
    prints.update({c: fp for c, fp in (other.get(FINGERPRINTS_KEY) or {}).items() if c in kept})
    if prints:
        data[FINGERPRINTS_KEY] = {c: prints[c] for c in sorted(prints, key=lambda c: order.get(c, len(order)))}
    body = _merge_configs_table(mine.text, theirs.text, kept, order)
    from huggingface_hub import DatasetCardData

    return f"---\n{DatasetCardData(**data).to_yaml().rstrip()}\n---\n{body}"


def _merge_configs_table(local: str, remote: str, kept: list[str], order: dict[str, int]) -> str:
    """``local`` with the remote configs table's rows of the ``kept`` configs added, in config order."""
    def row_config(line: str) -> Optional[str]:
        return next((c for c in CONFIGS if line.startswith(f"| `{c}` |")), None)

    header = "| config | what it holds | rows | splits |"
    theirs = {}
    lines = remote.splitlines()
    if header in lines:
        for line in lines[lines.index(header) + 2:]:
            if not line.startswith("| `"):
                break
            if row_config(line) in kept:
                theirs[row_config(line)] = line
    out = local.splitlines()
    if header not in out:
        return local
    start = out.index(header) + 2
    end = start
    while end < len(out) and out[end].startswith("| `"):
        end += 1
    rows = {row_config(line): line for line in out[start:end]}
    rows.update(theirs)
    merged = [rows[c] for c in sorted(rows, key=lambda c: order.get(c, len(order)))]
    return "\n".join(out[:start] + merged + out[end:]) + ("\n" if local.endswith("\n") else "")


def push_folder(
    folder: str | os.PathLike,
    repo_id: str,
    *,
    revision: Optional[str] = None,
    private: bool = False,
    message: Optional[str] = None,
    delete_missing: bool = False,
) -> PushResult:
    """Validate ``folder`` and publish it to the dataset repo ``repo_id`` as one commit plus a tag.

    ``revision`` is the tag to create (default ``data-<first 12 hex of the content fingerprint>``).
    A config on the Hub that ``folder`` does not carry is kept, and declared in the README pushed,
    unless ``delete_missing`` (then its files are deleted).
    Returns what happened; raises InputError for invalid data (nothing sent) and UsageError for Hub
    problems (the repo keeps its previous revision).
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete
    from huggingface_hub.hf_api import RepoFile

    client.check_repo_id(repo_id)
    summary = validate_folder(folder)
    tag = revision or DEFAULT_TAG_PREFIX + content_fingerprint(summary.files)[:12]
    client.require_token()  # the token, a login's too, is a secret from here on
    for option, text in (("--repo", repo_id), ("--revision", revision), ("--message", message)):
        refuse_secret_text(option, text)
    refuse_secret_files((Path(f.abspath), f.path, f.abspath) for f in summary.files)
    api = client.hub_api()
    what = f"push to {repo_id}"
    with client.hub_errors(what):
        api.create_repo(repo_id, repo_type=client.REPO_TYPE, private=private, exist_ok=True)
        refs = api.list_repo_refs(repo_id, repo_type=client.REPO_TYPE)
        head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
        if head is None:
            raise UsageError(f"{what}: the repo has no main branch")
        tags = {t.name: t.target_commit for t in refs.tags}
        remote = {
            e.path: e
            for e in api.list_repo_tree(repo_id, repo_type=client.REPO_TYPE, revision=head, recursive=True)
            if isinstance(e, RepoFile)
        }
    kept = [] if delete_missing else [c for c in remote_configs(remote) if c not in summary.configs]
    files = summary.files
    with tempfile.TemporaryDirectory(prefix="interleave-push-") as tmp:  # the merged README, if any
        if kept and README in remote:
            with client.hub_errors(what):
                remote_readme = Path(api.hf_hub_download(repo_id, README, repo_type=client.REPO_TYPE, revision=head,
                                                         cache_dir=tmp)).read_text(encoding="utf-8")
            local_readme = next(f for f in files if f.path == README)
            merged = Path(tmp) / README
            merged.write_text(merge_card(Path(local_readme.abspath).read_text(encoding="utf-8"), remote_readme, kept),
                              encoding="utf-8", newline="\n")
            tasks = Path(tmp) / EVAL_YAML
            tasks.write_text(eval_yaml([*summary.configs, *kept]), encoding="utf-8", newline="\n")
            refuse_secret_files([(merged, README, f"{README} as merged with {repo_id}'s"), (tasks, EVAL_YAML, EVAL_YAML)])
            files = [f for f in files if f.path not in (README, EVAL_YAML)] + [_local_file(merged, README),
                                                                               _local_file(tasks, EVAL_YAML)]
        added, changed, deleted = diff_remote(files, remote, keep=tuple(kept))
        unchanged = not (added or changed or deleted)
        if tag in tags and not (unchanged and tags[tag] == head):
            raise UsageError(
                f"{what}: tag {tag!r} already names commit {tags[tag][:12]}; a tag names one revision for good: "
                "choose another --revision"
            )
        result = PushResult(repo_id, head, tag, unchanged, tag_created=False, added=[f.path for f in added],
                            changed=[f.path for f in changed], deleted=deleted, summary=summary, kept=kept)
        if not unchanged:
            ops: list[Any] = [CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=f.abspath) for f in added + changed]
            ops += [CommitOperationDelete(path_in_repo=p) for p in deleted]
            configs = ", ".join(summary.configs)
            with client.hub_errors(what, after=f"nothing was committed; the repo still holds revision {head[:12]}"):
                info = api.create_commit(
                    repo_id,
                    ops,
                    commit_message=message or f"InterleaveBench {configs} (interleave-bench {__version__})",
                    commit_description=f"Exported with interleave-bench {__version__}; tag {tag}.",
                    repo_type=client.REPO_TYPE,
                    parent_commit=head,
                )
            result.commit = info.oid
            result.commit_url = info.commit_url
        if tag not in tags:
            with client.hub_errors(what, after=f"commit {result.commit[:12]} is on main but was not tagged {tag!r}"):
                api.create_tag(repo_id, tag=tag, revision=result.commit, repo_type=client.REPO_TYPE,
                               tag_message=f"InterleaveBench data, interleave-bench {__version__}")
            result.tag_created = True
        return result
