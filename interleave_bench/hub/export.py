"""``interleave-bench export``: the Hub-ready dataset folder (Parquet per config and split + card).

Input is validated first with the package's readers (``io.read_sessions``, ``io.read_case_file``);
nothing is written when any of it is bad. The folder is built beside the target and swapped in at
the end, so an interrupted export leaves the previous folder as it was; one killed in the
middle of the swap leaves its old entries aside, and the next export to the folder (which holds
its lock: one export per folder at a time) puts them back first and removes half-built folders
(:func:`_recover`). The output is a pure
function of the input files (no clock, no paths): exporting the same data twice gives the same
bytes, which is what lets ``push`` report a second push as unchanged.

Layout::

    interleavebench/
      README.md                      YAML (configs, dataset_info, licence...) + the card
      eval.yaml                      the Hub's benchmark tasks of the configs exported
      v0/dev-00000-of-00001.parquet  one file per config and split (more shards when large)
      v0/test-00000-of-00001.parquet
      v1/...                         when --v1 is given
      mid_reply/test-00000-of-00001.parquet   when --mid-reply is given
"""

from __future__ import annotations

import math
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .. import __version__
from ..errors import InputError, UsageError, file_head
from ..io import (
    MANIFEST_FILE,
    iter_json_lines,
    read_case_file,
    read_manifest,
    read_sessions,
    sessions_file,
)
from ..locks import exclusive_output
from ..fingerprints import records_fingerprint
from ..progress import progress
from ..schema import Manifest, MidReplyCaseFile, Session
from . import card as cardlib
from .evalresults import EVAL_YAML, eval_yaml
from .irc import irc_config, irc_markdown
from .sgd import language_creators, licenses, sgd_config, sgd_markdown
from .features import (
    CONFIG_VERSIONS,
    CONFIGS,
    DEFAULT_CONFIG,
    MID_REPLY_SPLIT,
    SESSION_SPLITS,
    case_row,
    features_for,
    session_row,
)

#: a Parquet shard holds at most this much Arrow data (the size ``datasets.push_to_hub`` uses),
#: so a shard stays quick to download and to stream
MAX_SHARD_BYTES = 500 << 20
README = "README.md"
#: what an export folder may contain; anything else means the folder is not ours to replace
OWNED_ENTRIES = frozenset({README, EVAL_YAML, *CONFIGS})
#: the suffixes of the folders an export works in beside ``out`` (named ``.<out>.<8 random>.<suffix>``
#: by ``tempfile.mkdtemp``): the folder being built, and the old entries while they are swapped out
STAGE_SUFFIX, ASIDE_SUFFIX = ".tmp", ".old"


def export_lock(out: Path) -> Path:
    """The output whose lock an export of ``out`` holds (``exclusive_output``): a name beside the
    folder, so two exports to one folder never meet, and the folder is not made before its data."""
    return out.parent / f".{out.name}.export"


def _work_folders(out: Path) -> tuple[list[Path], list[Path]]:
    """The staging and set-aside folders an export of ``out`` killed before its end left beside it
    (``mkdtemp``'s names for ``out`` exactly: another folder's, ``out.v2`` say, never match)."""
    if not out.parent.is_dir():
        return [], []
    name = re.compile(rf"\.{re.escape(out.name)}\.[a-z0-9_]{{8}}({re.escape(STAGE_SUFFIX)}|{re.escape(ASIDE_SUFFIX)})")
    found: dict[str, list[Path]] = {STAGE_SUFFIX: [], ASIDE_SUFFIX: []}
    for p in sorted(out.parent.iterdir()):
        m = name.fullmatch(p.name)
        if m and p.is_dir() and not p.is_symlink():
            found[m.group(1)].append(p)
    return found[STAGE_SUFFIX], found[ASIDE_SUFFIX]


def _recover(out: Path) -> None:
    """Undo what an export of ``out`` killed before its end left (under its lock, so no export is
    running): the previous export goes back whole, and the half-built folders are removed.

    :func:`_swap_in` sets every owned entry aside before it moves any new one in, and moves the
    README first (every export has one). So when an entry set aside is also in ``out`` again, the
    entries in ``out`` are the new export's, only part of it: they are removed. Then every entry
    set aside goes back."""
    stages, asides = _work_folders(out)
    for aside in asides:
        kept = [e for e in sorted(aside.iterdir()) if e.name in OWNED_ENTRIES]
        if any((out / e.name).exists() for e in kept):  # the swap had begun moving the new export in
            for name in sorted(OWNED_ENTRIES):
                part = out / name
                if part.is_dir() and not part.is_symlink():
                    shutil.rmtree(part)
                elif part.exists() or part.is_symlink():
                    part.unlink()
        for entry in kept:
            out.mkdir(parents=True, exist_ok=True)
            os.replace(entry, out / entry.name)
        shutil.rmtree(aside, ignore_errors=True)
    for stage in stages:
        shutil.rmtree(stage, ignore_errors=True)


@dataclass
class ConfigExport:
    """One config ready to write: its rows per split and where they came from."""

    name: str
    source: cardlib.Source
    rows: dict[str, list[dict[str, Any]]]
    sessions: list[Session] = field(default_factory=list)
    cases: Optional[MidReplyCaseFile] = None

    @property
    def total(self) -> int:
        return sum(len(r) for r in self.rows.values())


@dataclass
class ExportResult:
    """What ``export_dataset`` wrote: ``files`` are paths relative to ``out``."""

    out: Path
    configs: dict[str, dict[str, int]]
    files: list[str]
    bytes: int
    warnings: list[str] = field(default_factory=list)


# --- reading sources ----------------------------------------------------------------------------------------


def session_source(config: str, path: str | os.PathLike) -> tuple[cardlib.Source, list[Session], list[str]]:
    """Read and validate a session folder (or ``sessions.jsonl``) for ``config``.

    Returns the source description (with the manifest beside the file, if any), the sessions, and
    warnings. Raises :class:`InputError` naming file, line and field for any defect, including a
    session whose ``version`` does not belong in ``config``.
    """
    file = sessions_file(path)
    sessions = read_sessions(file)
    if not sessions:
        raise InputError(str(file), None, None, "holds no sessions")
    want = CONFIG_VERSIONS[config]
    for k, s in enumerate(sessions):
        if s.version != want:
            line = _line_of(file, k)
            raise InputError(str(file), line, "version", f"{s.version!r} cannot go in config {config!r}, which holds {want!r}")
    warnings = []
    manifest: Optional[Manifest] = None
    mpath = file.parent / MANIFEST_FILE
    if mpath.exists():
        manifest = read_manifest(mpath)
    else:
        warnings.append(f"{file}: no {MANIFEST_FILE} beside it: the card will say writer and model are not recorded")
    src = cardlib.Source(config, str(file), records_fingerprint(sessions), manifest, str(mpath) if manifest else None)
    return src, sessions, warnings


def _line_of(file: Path, index: int) -> Optional[int]:
    """The line number of the ``index``-th record of a JSONL file (blank lines skipped)."""
    for k, (line, _) in enumerate(iter_json_lines(file)):
        if k == index:
            return line
    return None


def session_config(config: str, path: str | os.PathLike) -> tuple[ConfigExport, list[str]]:
    src, sessions, warnings = session_source(config, path)
    rows: dict[str, list[dict[str, Any]]] = {}
    for s in progress(sessions, desc=f"export {config}", unit="session"):
        rows.setdefault(s.split, []).append(session_row(s, config))
    rows = {split: rows[split] for split in SESSION_SPLITS if split in rows}
    return ConfigExport(config, src, rows, sessions=sessions), warnings


def imported_config(config: str, path: str | os.PathLike, marker: str, command: str) -> tuple[ConfigExport, list[str]]:
    """:func:`session_config` for a config of imported corpus data: every session must carry the
    field ``marker`` that the importer (``interleave-bench <command>``) writes, else :class:`InputError`."""
    cfg, warnings = session_config(config, path)
    for s in cfg.sessions:
        if not (s.model_extra or {}).get(marker):
            raise InputError(cfg.source.path, None, f"{s.session_id}: {marker}",
                             f"config {config!r} holds sessions written by `interleave-bench {command}`")
    return cfg, warnings


def mid_reply_config(path: str | os.PathLike) -> tuple[ConfigExport, list[str]]:
    """Read and validate a mid-reply case file; one row per case with its language's catalog."""
    f = read_case_file(path)
    warnings = []
    used = {c.lang for c in f.cases}
    for lang in sorted(set(f.catalogs) - used):
        warnings.append(f"{path}: catalogs.{lang}: no case uses this catalog, so it is not exported")
    rows = [case_row(c, f.catalogs[c.lang]) for c in f.cases]
    src = cardlib.Source("mid_reply", str(path), records_fingerprint(f.cases))
    return ConfigExport("mid_reply", src, {MID_REPLY_SPLIT: rows}, cases=f), warnings


# --- writing ---------------------------------------------------------------------------------------------


def shard_name(split: str, k: int, n: int) -> str:
    return f"{split}-{k:05d}-of-{n:05d}.parquet"


def write_split(folder: Path, config: str, split: str, rows: list[dict[str, Any]]) -> tuple[list[str], Any]:
    """Write one split as Parquet shard(s) under ``folder/config``; returns (relative paths, SplitInfo)."""
    import datasets

    features = features_for(config)
    ds = datasets.Dataset.from_list(rows, features=features)
    n = max(1, math.ceil(ds.data.nbytes / MAX_SHARD_BYTES))
    (folder / config).mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(n):
        rel = f"{config}/{shard_name(split, k, n)}"
        ds.shard(n, k, contiguous=True).to_parquet(str(folder / rel))
        paths.append(rel)
    info = datasets.SplitInfo(name=split, num_bytes=ds.data.nbytes, num_examples=len(ds))
    return paths, info


def card_yaml(configs: list[ConfigExport], split_infos: dict[str, list[Any]], download_sizes: dict[str, int]) -> str:
    """The README's YAML header: licence, languages, task, size, ``configs`` and ``dataset_info``."""
    import datasets
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData

    langs: set[str] = set()
    for c in configs:
        langs |= {s.lang for s in c.sessions}
        if c.cases:
            langs |= {case.lang for case in c.cases.cases}
    total = sum(c.total for c in configs)
    data = DatasetCardData(
        pretty_name=cardlib.PRETTY_NAME,
        license=licenses([c.name for c in configs]),
        language=sorted(langs),
        multilinguality="multilingual" if len(langs) > 1 else "monolingual",
        task_categories=cardlib.TASK_CATEGORIES,
        task_ids=cardlib.TASK_IDS,
        annotations_creators=cardlib.ANNOTATIONS_CREATORS,
        language_creators=language_creators([c.name for c in configs]),
        source_datasets=cardlib.SOURCE_DATASETS,
        tags=cardlib.tags([c.name for c in configs]),
        size_categories=[cardlib.size_category(total)],
    )
    names = [c.name for c in configs]
    default = DEFAULT_CONFIG if DEFAULT_CONFIG in names else names[0]
    meta = {}
    infos = {}
    for c in configs:
        entry: dict[str, Any] = {
            "data_files": [{"split": split, "path": f"{c.name}/{split}-*.parquet"} for split in c.rows]
        }
        if c.name == default:
            entry["default"] = True
        meta[c.name] = entry
        splits = datasets.SplitDict()
        for info in split_infos[c.name]:
            splits.add(info)
        infos[c.name] = datasets.DatasetInfo(
            features=features_for(c.name),
            splits=splits,
            download_size=download_sizes[c.name],
            dataset_size=sum(i.num_bytes for i in split_infos[c.name]),
        )
    MetadataConfigs(meta).to_dataset_card_data(data)
    DatasetInfosDict(infos).to_dataset_card_data(data)
    # the data fingerprint of each config, on the records (fingerprints.records_fingerprint): what score files
    # record as provenance.data_sha256 and what the leaderboard checks a claimed revision against
    data[cardlib.FINGERPRINTS_KEY] = {c.name: c.source.sha256 for c in configs}
    return data.to_yaml()


def card_body(configs: list[ConfigExport], template: str, template_path: str, release_notes: Optional[str] = None) -> str:
    """The card's prose: the template filled with this release's figures.

    ``release_notes`` (markdown, from ``interleave-bench release``) opens the figures section.
    """
    session_cfgs = [c for c in configs if c.cases is None]
    figs = {c.name: cardlib.session_figures(c.sessions) for c in session_cfgs}
    sections = [cardlib.figures_markdown(c.name, figs[c.name], c.rows) for c in session_cfgs]
    table_rows = []
    for c in configs:
        splits = ", ".join(f"`{s}` {len(r):,}" for s, r in c.rows.items())
        unit = "cases" if c.cases else "sessions"
        table_rows.append((c.name, cardlib.CONFIG_BLURBS[c.name], f"{c.total:,} {unit}", splits))
    about = ""
    mid = next((c for c in configs if c.cases), None)
    if mid:
        sections.append(cardlib.mid_reply_markdown(mid.cases, mid.total))
        about = "### Mid-reply cases\n\n" + (mid.cases.about.strip() or "Written by hand.")
    sections += [x for x in [irc_markdown([c.name for c in configs]), sgd_markdown([c.name for c in configs])] if x]
    years = sorted(
        str(c.source.manifest.provenance.get("created", ""))[:4]
        for c in configs
        if c.source.manifest and str(c.source.manifest.provenance.get("created", ""))[:4].isdigit()
    )
    values = {
        "package_version": __version__,
        "configs_table": cardlib.configs_table(table_rows),
        "figures": "\n\n".join(([release_notes.strip()] if release_notes else []) + sections),
        "made_by": cardlib.made_by_markdown([c.source for c in configs]),
        "mid_reply_about": about,
        "limitations_figures": cardlib.limitations_markdown(figs),
        "year": years[-1] if years else "n.d.",
        **cardlib.provenance_lines(c.name for c in configs),
    }
    return cardlib.render(template, values, source=template_path)


def _foreign_in_owned(out: Path) -> list[str]:
    """What, under the names an export owns, an export did not write, so replacing it would lose
    it: a README.md that is no dataset card (YAML with ``configs``), an eval.yaml that is not the
    tasks file, a file in a config folder that is not Parquet."""
    found: list[str] = []
    for name in sorted(OWNED_ENTRIES):
        path = out / name
        if not path.exists():
            continue
        if name in (README, EVAL_YAML):
            head = file_head(path).decode("utf-8", "replace")
            ours = (head.startswith("---") and "\nconfigs:" in head) if name == README else "evaluation_framework:" in head
            if not path.is_file() or not ours:
                found.append(f"{name} ({'no dataset card' if name == README else 'no tasks file'})")
        elif not path.is_dir():
            found.append(name)
        else:
            found += sorted(f"{name}/{f.relative_to(path).as_posix()}" for f in path.rglob("*")
                            if not f.is_dir() and f.suffix != ".parquet")
    return found


def _check_replaceable(out: Path) -> None:
    if not out.exists():
        return
    if not out.is_dir():
        raise UsageError(f"{out}: exists and is not a folder")
    # hidden entries (a clone's .git, say) are neither replaced nor pushed
    strangers = sorted(p.name for p in out.iterdir() if p.name not in OWNED_ENTRIES and not p.name.startswith("."))
    strangers += _foreign_in_owned(out)
    if strangers:
        raise UsageError(
            f"{out}: holds {', '.join(strangers[:5])}{'...' if len(strangers) > 5 else ''}, which an export does not "
            "write; refusing to replace the folder (choose an empty or new --out)"
        )


def export_dataset(
    out: str | os.PathLike,
    *,
    v0: Optional[str | os.PathLike] = None,
    v1: Optional[str | os.PathLike] = None,
    mid_reply: Optional[str | os.PathLike] = None,
    template_dir: Optional[str | os.PathLike] = None,
    release_notes: Optional[str] = None,
    irc: Optional[str | os.PathLike] = None,
    sgd: Optional[str | os.PathLike] = None,
) -> ExportResult:
    """Write the dataset folder ``out`` from the given sources; returns what was written.

    ``release_notes`` is markdown the card shows first under "This release" (the release record).

    Raises :class:`InputError` for bad input (nothing written) and :class:`UsageError` when there is
    nothing to export or ``out`` holds files an export does not own.
    """
    if v0 is None and v1 is None and mid_reply is None and irc is None and sgd is None:
        raise UsageError("nothing to export: give --v0 DIR, --v1 DIR, --mid-reply FILE, --irc DIR and/or --sgd DIR")
    out = Path(out)
    with exclusive_output(export_lock(out), "export"):
        _recover(out)
        return _export_locked(out, v0, v1, mid_reply, template_dir, release_notes, irc, sgd)


def _export_locked(out: Path, v0: Optional[str | os.PathLike], v1: Optional[str | os.PathLike],
                   mid_reply: Optional[str | os.PathLike], template_dir: Optional[str | os.PathLike],
                   release_notes: Optional[str], irc: Optional[str | os.PathLike],
                   sgd: Optional[str | os.PathLike]) -> ExportResult:
    """:func:`export_dataset`, with its lock held and what a killed export left undone."""
    _check_replaceable(out)
    template_path, template = cardlib.load_template(cardlib.DATASET_TEMPLATE, Path(template_dir) if template_dir else None)
    configs: list[ConfigExport] = []
    warnings: list[str] = []
    for name, src in (("v0", v0), ("v1", v1)):
        if src is not None:
            cfg, warn = session_config(name, src)
            configs.append(cfg)
            warnings += warn
    if mid_reply is not None:
        cfg, warn = mid_reply_config(mid_reply)
        configs.append(cfg)
        warnings += warn
    if irc is not None:
        cfg, warn = irc_config(irc)
        configs.append(cfg)
        warnings += warn
    if sgd is not None:
        cfg, warn = sgd_config(sgd)
        configs.append(cfg)
        warnings += warn

    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=STAGE_SUFFIX, dir=out.parent))
    try:
        files: list[str] = []
        split_infos: dict[str, list[Any]] = {}
        download: dict[str, int] = {}
        with quiet_datasets():
            for c in configs:
                split_infos[c.name] = []
                for split, rows in c.rows.items():
                    paths, info = write_split(stage, c.name, split, rows)
                    files += paths
                    split_infos[c.name].append(info)
                download[c.name] = sum((stage / p).stat().st_size for p in files if p.startswith(c.name + "/"))
        yaml_text = card_yaml(configs, split_infos, download)
        body = card_body(configs, template, template_path, release_notes)
        (stage / README).write_text(f"---\n{yaml_text.rstrip()}\n---\n\n{body}", encoding="utf-8", newline="\n")
        files.insert(0, README)
        (stage / EVAL_YAML).write_text(eval_yaml(c.name for c in configs), encoding="utf-8", newline="\n")
        files.insert(1, EVAL_YAML)
        _swap_in(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    total_bytes = sum((out / f).stat().st_size for f in files)
    return ExportResult(
        out=out,
        configs={c.name: {s: len(r) for s, r in c.rows.items()} for c in configs},
        files=files,
        bytes=total_bytes,
        warnings=warnings,
    )


def _swap_in(stage: Path, out: Path) -> None:
    """Move the staged entries into ``out``, replacing the entries an export owns.

    Other entries of ``out`` (a ``.git`` folder of a cloned Hub repo, say) are left alone. The old
    entries are moved aside first and removed last, and put back if the move fails.
    """
    out.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=ASIDE_SUFFIX, dir=out.parent))
    moved_aside: list[str] = []
    moved_in: list[str] = []
    try:
        for name in sorted(OWNED_ENTRIES):
            if (out / name).exists():
                os.replace(out / name, aside / name)
                moved_aside.append(name)
        for entry in sorted(stage.iterdir()):
            os.replace(entry, out / entry.name)
            moved_in.append(entry.name)
    except BaseException:
        for name in moved_in:
            os.replace(out / name, stage / name)
        for name in moved_aside:
            os.replace(aside / name, out / name)
        raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)
    shutil.rmtree(stage, ignore_errors=True)


class quiet_datasets:
    """Silence ``datasets``' own progress bars while writing (the command prints one summary)."""

    def __enter__(self) -> None:
        from datasets.utils.tqdm import are_progress_bars_disabled, disable_progress_bars

        self._was_disabled = are_progress_bars_disabled()
        disable_progress_bars()

    def __exit__(self, *exc: Any) -> None:
        from datasets.utils.tqdm import enable_progress_bars

        if not self._was_disabled:
            enable_progress_bars()
