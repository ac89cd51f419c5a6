"""A data release, end to end: data, validation, vetting, baselines, export, load check, push, tag.

:func:`run_release` runs the steps of :data:`STEPS` in order and stops at the first that fails,
with one line saying which and why (:class:`ReleaseStopped`); the push is the last step, so a
stopped release leaves the Hub as it was. ``dry_run`` does every step but the push. Every step is
deterministic (seeded generation reused when already complete, model-free baselines, seeded
bootstrap, an export that is a pure function of its input), so running a finished release again
builds the same folder and finds the tag already holding it: no commit is made.

The card records the release (:func:`release_markdown`): generator version and model, seed,
counts, the vetting result, the baseline table and the data fingerprint.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterator, Optional

from . import __version__
from .errors import InputError, InputErrors, InterleaveError, UsageError
from .generate.runner import DATASETS, TEMPLATES_WRITER, GenerateConfig, check_session_count, generate
from .io import MANIFEST_FILE, iter_json_lines, iter_sessions, read_case_file, read_json, read_manifest, sessions_file
from .fingerprints import sha256_file
from .route.runner import SPLITS as ROUTE_SPLITS
from .route.standard import write_baselines
from .schema import CatalogTopic, Manifest, MidReplyCase, MidReplyCaseFile, Session
from .reports.tables import main_table
from .score.defaults import DEFAULT_BOOTSTRAP, DEFAULT_SEED, DEFAULT_SPLIT, check_bootstrap
from .score.run import score_files
from .vet import VetReport, vet_paths

#: the session configs a release can carry; each comes from a data folder or is generated (``sgd``
#: only from a folder written by ``import sgd``)
SESSION_CONFIGS = ("v0", "v1", "sgd")
#: the configs generated when no data folder is given: every dataset the generator writes
GENERATED_CONFIGS = tuple(c for c in SESSION_CONFIGS if c in DATASETS)
#: where a release keeps its files (generated data, predictions and scores, the exported folder)
RELEASES_DIR = "releases"
#: the exported dataset folder inside a release's folder
DATASET_DIR = "dataset"
#: the run's caches of the load check (hidden, removed after the check)
LOAD_CACHE_DIR = ".load-check-cache"
#: a revision names a git tag and a folder: letters, digits, dots, dashes and underscores
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
#: the oracle baseline reads gold labels: anything but a perfect score means the data and the scorer disagree
ORACLE_RUNS = ("closed-oracle", "open-oracle")


class ReleaseStopped(InterleaveError):
    """A step failed: ``step`` (its name and number), one line ``reason``, exit ``code``, and ``details``
    (lines worth showing before the reason, such as the vetting findings)."""

    def __init__(self, step: str, number: int, total: int, reason: str, code: int = 2, details: Optional[list[str]] = None,
                 *, before_push: bool = True):
        self.step, self.number, self.total, self.reason, self.code = step, number, total, reason, code
        self.details = details or []
        # a failed push says itself what the repo holds (nothing committed, or committed but not tagged)
        tail = "; nothing was pushed" if before_push else ""
        super().__init__(f"release stopped at step {number}/{total} ({step}): {reason}{tail}")


@dataclass
class GenerateRequest:
    """How to make the data when no folder is given: sessions, seed, languages, and the writer.

    ``model_session`` opens the model for a model run (``None``: offline templates, no model).
    """

    sessions: int
    seed: int = 0
    langs: tuple[str, ...] = ("en", "zh")
    configs: tuple[str, ...] = GENERATED_CONFIGS
    model_session: Optional[Callable[[], ContextManager[Any]]] = None
    concurrency: int = 1


@dataclass
class ReleaseOptions:
    """Everything that decides a release."""

    revision: str
    repo: str
    data: dict[str, Path] = field(default_factory=dict)  # config -> data folder or sessions file
    generate: Optional[GenerateRequest] = None
    mid_reply: Optional[Path] = None  # a case file; None: no mid_reply config
    allowlist: Optional[Path] = None
    work: Optional[Path] = None  # default releases/<revision>
    split: str = DEFAULT_SPLIT
    bootstrap: int = DEFAULT_BOOTSTRAP
    seed: int = DEFAULT_SEED
    dry_run: bool = False
    private: bool = False
    card_template: Optional[Path] = None

    @property
    def folder(self) -> Path:
        return self.work if self.work is not None else Path(RELEASES_DIR) / self.revision

    def check(self) -> None:
        """Raise :class:`UsageError` for options no step could run with."""
        from .hub.client import check_repo_id
        from .hub.outgoing import refuse_secret_text

        check_repo_id(self.repo)
        # before any step: the revision names the release's folder and is written in its card
        refuse_secret_text("--revision", self.revision)
        refuse_secret_text("--repo", self.repo)
        if not _REVISION.match(self.revision):
            raise UsageError(f"--revision {self.revision!r}: use letters, digits, '.', '-' and '_' (e.g. v0.1)")
        unknown = sorted(set(self.data) - set(SESSION_CONFIGS))
        if unknown:
            raise UsageError(f"unknown config(s) {', '.join(unknown)}; a release carries {', '.join(SESSION_CONFIGS)}")
        if not self.data and self.generate is None:
            raise UsageError("no data: give a data folder (--v0 DIR) or generate it (--offline, or --model NAME)")
        if self.data and self.generate is not None:
            raise UsageError("give data folders or generate, not both")
        if self.generate is not None:
            check_session_count(self.generate.sessions)
        if self.split not in ROUTE_SPLITS:
            raise UsageError(f"--split must be one of {', '.join(ROUTE_SPLITS)}")
        check_bootstrap(self.bootstrap)


@dataclass
class ConfigData:
    """One session config of the release: its file, manifest and sessions."""

    config: str
    file: Path
    manifest: Optional[Manifest] = None
    manifest_file: Optional[Path] = None
    sessions: list[Session] = field(default_factory=list)
    how: str = "given"  # "given", "generated" or "reused" (a finished generation with the same options)


@dataclass
class ReleaseState:
    """What the steps have made so far; the result of a finished release."""

    opts: ReleaseOptions
    configs: dict[str, ConfigData] = field(default_factory=dict)
    cases: Optional[MidReplyCaseFile] = None
    vet: Optional[VetReport] = None
    scores: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    export_dir: Optional[Path] = None
    exported: dict[str, dict[str, int]] = field(default_factory=dict)
    files: int = 0
    bytes: int = 0
    commit: Optional[str] = None
    commit_url: Optional[str] = None
    url: Optional[str] = None
    unchanged: bool = False
    steps: list[tuple[str, str]] = field(default_factory=list)  # (step, its one-line result)

    @property
    def fingerprint(self) -> str:
        """The data fingerprint: SHA-256 over each config's name and source file hash."""
        h = hashlib.sha256()
        for name, sha in self.sources():
            h.update(f"{name}\0{sha}\n".encode())
        return "sha256:" + h.hexdigest()

    def sources(self) -> list[tuple[str, str]]:
        """``(config, sha256 of its source file)`` for every config of the release, in config order."""
        out = [(c, sha256_file(d.file)) for c, d in self.configs.items()]
        if self.opts.mid_reply is not None:
            out.append(("mid_reply", sha256_file(self.opts.mid_reply)))
        return out


# --- the steps ------------------------------------------------------------------------------------------


def step_data(state: ReleaseState) -> str:
    """Take the given data folders, or generate (reusing a finished generation with the same options)."""
    opts = state.opts
    parts = []
    for config in SESSION_CONFIGS:
        if config in opts.data:
            file = sessions_file(opts.data[config])
            state.configs[config] = ConfigData(config, file)
            parts.append(f"{config} from {file}")
    if opts.generate is not None:
        req = opts.generate
        for config in req.configs:
            out = opts.folder / "data" / config
            state.configs[config] = _generate(config, out, req)
            writer = "with the model" if req.model_session else "offline (templates)"
            parts.append(f"{config} {state.configs[config].how} {writer} in {out}: {req.sessions} sessions, seed {req.seed}")
    if opts.mid_reply is not None:
        parts.append(f"mid_reply from {opts.mid_reply}")
    return "; ".join(parts)


def _generate(config: str, out: Path, req: GenerateRequest) -> ConfigData:
    gen = GenerateConfig(dataset=config, seed=req.seed, langs=req.langs)
    with (req.model_session() if req.model_session else contextlib.nullcontext()) as llm:
        writer = TEMPLATES_WRITER if llm is None else f"model:{llm.model}"
        manifest = _finished(out, dataclasses.replace(gen, writer=writer), req.sessions)
        if manifest is not None:
            return ConfigData(config, out / "sessions.jsonl", how="reused")
        result = generate(req.sessions, out, config=gen, llm=llm, concurrency=req.concurrency)
    if result.failed:
        raise UsageError(f"{len(result.failed)} of {req.sessions} {config} sessions failed (listed in "
                         f"{result.manifest_path}); run the release again to retry them")
    return ConfigData(config, result.sessions_path, how="generated")


def _finished(out: Path, gen: GenerateConfig, n: int) -> Optional[dict[str, Any]]:
    """The manifest of a complete generation in ``out`` with exactly these options, else None.

    Reusing it as it is (rather than letting the generator rewrite its manifest with a new date)
    keeps the card, and so the release, byte for byte the same on a rerun.
    """
    spath, mpath = out / "sessions.jsonl", out / MANIFEST_FILE
    if not (spath.is_file() and mpath.is_file()):
        return None
    m = read_json(mpath)
    if not isinstance(m, dict):
        return None
    opts = m.get("options") or {}
    counts = m.get("counts") or {}
    prov = m.get("provenance") or {}
    done = (opts.get("config") == gen.fingerprint() and opts.get("sessions") == n and counts.get("failed") == 0
            and counts.get("sessions") == n and prov.get("sessions_sha256") == sha256_file(spath))
    return m if done else None


def step_validate(state: ReleaseState) -> str:
    """Every session, manifest and case through the package's readers; every defect is reported."""
    from .hub.features import CONFIG_VERSIONS  # imports ``datasets``: only when a release runs

    parts = []
    for config, d in state.configs.items():
        d.sessions = list(iter_sessions(d.file, collect=True))
        if not d.sessions:
            raise InputError(str(d.file), None, None, "holds no sessions")
        want = CONFIG_VERSIONS[config]
        for line, text in iter_json_lines(d.file):
            version = json.loads(text).get("version")
            if version != want:
                raise InputError(str(d.file), line, "version", f"{version!r} cannot go in config {config!r}, which holds {want!r}")
        mpath = d.file.parent / MANIFEST_FILE
        if mpath.is_file():
            d.manifest, d.manifest_file = read_manifest(mpath), mpath
        splits: dict[str, int] = {}
        for s in d.sessions:
            splits[s.split] = splits.get(s.split, 0) + 1
        messages = sum(len(s.turns) for s in d.sessions)
        parts.append(f"{config} {len(d.sessions):,} sessions (" + ", ".join(f"{k} {v}" for k, v in sorted(splits.items()))
                     + f"), {messages:,} messages" + ("" if d.manifest else f", no {MANIFEST_FILE}"))
    if state.opts.mid_reply is not None:
        state.cases = read_case_file(state.opts.mid_reply)
        parts.append(f"mid_reply {len(state.cases.cases)} cases")
    return "; ".join(parts) + ": valid"


def vetted_files(state: ReleaseState) -> list[Path]:
    """What is published or quoted on the card: sessions files, manifests, the case file."""
    files: list[Path] = []
    for d in state.configs.values():
        files.append(d.file)
        if d.manifest_file is not None:
            files.append(d.manifest_file)
    if state.opts.mid_reply is not None:
        files.append(state.opts.mid_reply)
    return files


def step_vet(state: ReleaseState) -> str:
    """No secret or personal data in any text field (allowlisted fakes aside)."""
    report = vet_paths(vetted_files(state), allowlist=state.opts.allowlist)
    state.vet = report
    if report.errors:
        raise InputErrors(report.errors)
    if report.blocking:
        raise _Findings(report)
    return report.summary()


class _Findings(Exception):
    def __init__(self, report: VetReport):
        self.report = report


def step_baselines(state: ReleaseState) -> str:
    """The seven model-free baselines on every session config, scored on the release's split."""
    opts = state.opts
    parts = []
    for config, d in state.configs.items():
        results = write_baselines(d.file, "all", out_dir=opts.folder / "predictions" / config)
        runs = score_files(d.file, [r.path for r in results], split=opts.split, bootstrap=opts.bootstrap,
                           seed=opts.seed, sessions=d.sessions)
        docs = [r.result for r in runs]
        if not docs or not docs[0]["counts"]["sessions"]:
            raise UsageError(f"{config}: no sessions in split {opts.split!r} to score the baselines on (choose --split)")
        for doc in docs:
            acc, werr = doc["metrics"]["accuracy"], doc["metrics"]["weighted_error"]
            if doc["system"] in ORACLE_RUNS and acc is not None and (acc != 1.0 or werr != 0.0):
                raise UsageError(f"{config}: the {doc['system']} baseline scored accuracy {acc} and weighted error "
                                 f"{werr}, not 1.0 and 0: the data and the scorer disagree")
        state.scores[config] = docs
        parts.append(f"{config} {len(docs)} runs scored on {docs[0]['counts']['sessions']} {opts.split} sessions")
    return "; ".join(parts)


def step_export(state: ReleaseState) -> str:
    """The Hub-ready folder of every config, with the release recorded on its card."""
    from .hub.export import export_dataset

    opts = state.opts
    out = opts.folder / DATASET_DIR
    kwargs = {config: d.file for config, d in state.configs.items()}
    result = export_dataset(out, mid_reply=opts.mid_reply, template_dir=opts.card_template,
                            release_notes=release_markdown(state), **kwargs)
    state.export_dir, state.exported, state.files, state.bytes = out, result.configs, len(result.files), result.bytes
    configs = "; ".join(f"{c} " + ", ".join(f"{s} {n:,}" for s, n in splits.items()) for c, splits in result.configs.items())
    return f"{len(result.files)} files, {result.bytes:,} bytes in {out} ({configs})"


def step_load(state: ReleaseState) -> str:
    """``load_dataset`` on the exported folder gives back every source record, config by config."""
    import datasets

    from .hub.export import quiet_datasets

    assert state.export_dir is not None
    cache = state.opts.folder / LOAD_CACHE_DIR
    checked = []
    try:
        with quiet_datasets():
            for config in state.exported:
                ds = datasets.load_dataset(str(state.export_dir.resolve()), config, cache_dir=str(cache))
                rows = {split: list(ds[split]) for split in ds}
                del ds
                if config in state.configs:
                    _check_sessions(config, state.configs[config], rows)
                else:
                    assert state.cases is not None
                    _check_cases(state.cases, rows, str(state.export_dir / config))
                checked.append(f"{config} " + ", ".join(f"{s} {len(r):,}" for s, r in rows.items()))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return "; ".join(checked) + ": every record equals its source"


def _check_sessions(config: str, d: ConfigData, rows: dict[str, list[dict[str, Any]]]) -> None:
    from .hub.features import row_to_session

    want: dict[str, dict[str, Any]] = {}
    for s in d.sessions:
        want[s.session_id] = s.model_dump(mode="json")
    got_ids = set()
    for split, split_rows in rows.items():
        for k, row in enumerate(split_rows, start=1):
            back = Session.model_validate(row_to_session(row, config)).model_dump(mode="json")
            sid = back["session_id"]
            got_ids.add(sid)
            if want.get(sid) != back or back["split"] != split:
                raise UsageError(f"load check: {config}/{split} row {k} (session {sid!r}) differs from {d.file}")
    missing = sorted(set(want) - got_ids)
    if missing:
        raise UsageError(f"load check: {config} lacks {len(missing)} session(s) of {d.file}, e.g. {missing[0]!r}")


def _check_cases(cases: MidReplyCaseFile, rows: dict[str, list[dict[str, Any]]], where: str) -> None:
    from .hub.features import row_to_case, row_to_catalog

    flat = [r for split_rows in rows.values() for r in split_rows]
    back = [MidReplyCase.model_validate(row_to_case(r)).model_dump(mode="json") for r in flat]
    if back != [c.model_dump(mode="json") for c in cases.cases]:
        raise UsageError(f"load check: {where}: the cases read back differ from the case file")
    for r in flat:
        catalog = [CatalogTopic.model_validate(t).model_dump(mode="json") for t in row_to_catalog(r)]
        if catalog != [t.model_dump(mode="json") for t in cases.catalogs[r["lang"]]]:
            raise UsageError(f"load check: {where}: the {r['lang']!r} catalog read back differs from the case file")


def step_push(state: ReleaseState) -> str:
    """One commit with the folder and the revision's tag; nothing when the tag already holds it."""
    from .hub import client
    from .hub.push import push_folder

    opts = state.opts
    assert state.export_dir is not None
    released = released_commit(opts.repo, opts.revision, state.export_dir)
    state.url = client.repo_url(opts.repo, opts.revision)
    if released is not None:
        state.commit, state.unchanged = released, True
        return f"tag {opts.revision} already names commit {released[:12]} holding this content: no commit made"
    r = push_folder(state.export_dir, opts.repo, revision=opts.revision, private=opts.private,
                    message=f"InterleaveBench release {opts.revision} (interleave-bench {__version__})")
    state.commit, state.commit_url, state.unchanged = r.commit, r.commit_url, r.unchanged
    if r.unchanged:
        return f"main already held this content at commit {r.commit[:12]}: tagged {r.tag}, no commit made"
    return f"commit {r.commit[:12]} ({len(r.added)} added, {len(r.changed)} changed, {len(r.deleted)} deleted), tagged {r.tag}"


def released_commit(repo_id: str, tag: str, folder: Path) -> Optional[str]:
    """The commit ``tag`` names in ``repo_id`` when it holds exactly ``folder``'s files; None when there is no such tag.

    Raises :class:`UsageError` when the tag names other content (tags are never moved) or the Hub fails.
    """
    import tempfile

    from huggingface_hub.errors import RepositoryNotFoundError
    from huggingface_hub.hf_api import RepoFile

    from .hub import client
    from .hub.push import diff_remote, local_files

    client.require_token()
    api = client.hub_api()
    what = f"release {tag} to {repo_id}"
    with client.hub_errors(what):
        try:
            refs = api.list_repo_refs(repo_id, repo_type=client.REPO_TYPE)
        except RepositoryNotFoundError:
            return None
        tags = {t.name: t.target_commit for t in refs.tags}
        if tag not in tags:
            return None
        remote = {e.path: e for e in api.list_repo_tree(repo_id, repo_type=client.REPO_TYPE, revision=tags[tag], recursive=True)
                  if isinstance(e, RepoFile)}
    with tempfile.TemporaryDirectory(prefix="interleave-release-") as tmp:
        local, kept = _as_pushed(api, repo_id, tags[tag], local_files(folder), remote, Path(tmp), what)
        added, changed, deleted = diff_remote(local, remote, keep=tuple(kept))
    if added or changed or deleted:
        raise UsageError(f"{what}: tag {tag!r} already names commit {tags[tag][:12]}, which holds other content "
                         f"({len(added) + len(changed) + len(deleted)} files differ); a tag names one revision for good: "
                         "choose another --revision")
    return tags[tag]


def _as_pushed(api: Any, repo_id: str, commit: str, local: list[Any], remote: dict[str, Any], tmp: Path,
               what: str) -> tuple[list[Any], list[str]]:
    """``(files, kept configs)``: the folder's files as ``push`` would have published them at ``commit``.

    A push keeps the configs on the Hub that the folder does not carry, and declares them in the
    README (and the Eval Results file) it publishes (:func:`~.hub.push.push_folder`); the same
    merge is made here, so a release that kept another config is found to hold this content.
    """
    from .hub import client
    from .hub.evalresults import EVAL_YAML, eval_yaml
    from .hub.export import README
    from .hub.push import _local_file, merge_card, remote_configs

    here = remote_configs({f.path: f for f in local})
    kept = [c for c in remote_configs(remote) if c not in here]
    mine = next((f for f in local if f.path == README), None)
    if not kept or README not in remote or mine is None:
        return local, kept
    with client.hub_errors(what):
        theirs = Path(api.hf_hub_download(repo_id, README, repo_type=client.REPO_TYPE, revision=commit,
                                          cache_dir=str(tmp / "cache"))).read_text(encoding="utf-8")
    merged, tasks = tmp / README, tmp / EVAL_YAML
    merged.write_text(merge_card(Path(mine.abspath).read_text(encoding="utf-8"), theirs, kept), encoding="utf-8",
                      newline="\n")
    tasks.parent.mkdir(parents=True, exist_ok=True)
    tasks.write_text(eval_yaml([*here, *kept]), encoding="utf-8", newline="\n")
    rest = [f for f in local if f.path not in (README, EVAL_YAML)]
    return rest + [_local_file(merged, README), _local_file(tasks, EVAL_YAML)], kept


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[ReleaseState], str]
    pushes: bool = False  # left out of a dry run


#: the release, in order; a step raises to stop it, and returns its one-line result
STEPS = (
    Step("data", step_data),
    Step("validate", step_validate),
    Step("vet", step_vet),
    Step("baselines", step_baselines),
    Step("export", step_export),
    Step("load", step_load),
    Step("push", step_push, pushes=True),
)


def run_release(opts: ReleaseOptions, *, on_step: Optional[Callable[[int, int, str, str], None]] = None) -> ReleaseState:
    """Run every step (all but the push with ``dry_run``); returns the state of the finished release.

    ``on_step(number, total, name, line)`` is called as each step ends. Raises :class:`ReleaseStopped`
    at the first step that fails (code 1 for vetting findings, 2 otherwise); the Hub is then untouched.
    """
    opts.check()
    if not opts.dry_run:
        from .hub.client import require_token

        require_token()  # before hours of generation, not after
    state = ReleaseState(opts)
    steps = [s for s in STEPS if not (opts.dry_run and s.pushes)]
    for k, step in enumerate(steps, start=1):
        try:
            line = step.run(state)
        except _Findings as exc:
            r = exc.report
            kinds = ", ".join(f"{n} {kind}" for kind, n in r.by_kind().items())
            raise ReleaseStopped(step.name, k, len(steps), f"{len(r.blocking)} finding(s) ({kinds}) not in the allowlist",
                                 code=1, details=[f.format() for f in r.blocking]) from None
        except InterleaveError as exc:
            raise ReleaseStopped(step.name, k, len(steps), str(exc), before_push=not step.pushes) from None
        state.steps.append((step.name, line))
        if on_step is not None:
            on_step(k, len(steps), step.name, line)
    write_record(state)
    return state


def write_record(state: ReleaseState) -> Path:
    """``release.json`` in the release folder: what was released, where, from which data."""
    from .io import write_json
    from .provenance import provenance

    path = state.opts.folder / "release.json"
    write_json(path, {
        "revision": state.opts.revision,
        "repo": state.opts.repo,
        "dry_run": state.opts.dry_run,
        "commit": state.commit,
        "unchanged": state.unchanged,
        "data_fingerprint": state.fingerprint,
        "sources": dict(state.sources()),
        "configs": state.exported,
        "vet": state.vet.summary() if state.vet else None,
        "steps": dict(state.steps),
        "provenance": provenance(),
    })
    return path


# --- the card's record of the release ---------------------------------------------------------------------


def release_markdown(state: ReleaseState) -> str:
    """The card's release section: revision, data fingerprint, each source, vetting, baseline tables.

    A pure function of the data and the options (no clock, no paths), so a rerun writes the same card.
    """
    opts = state.opts
    rows = [("revision", f"`{opts.revision}`"), ("data fingerprint", f"`{state.fingerprint}`")]
    for config, d in state.configs.items():
        rows.append((f"`{config}` data", _source_text(d)))
    if state.cases is not None and opts.mid_reply is not None:
        rows.append(("`mid_reply` cases", f"{len(state.cases.cases):,} cases, hand-written; `{sha256_file(opts.mid_reply)}`"))
    if state.vet is not None:
        rows.append(("vetting (`interleave-bench vet`)", state.vet.summary() + " (secrets, contact and payment data, "
                     "credentials in URLs, home-folder paths, IP addresses)"))
    lines = [f"### Release `{opts.revision}`", "", "| figure | value |", "|---|---|"]
    lines += [f"| {a} | {b} |" for a, b in rows]
    for config, docs in state.scores.items():
        n = docs[0]["counts"]["sessions"] if docs else 0
        lines += ["", f"Model-free baselines on `{config}`, split `{opts.split}` ({n:,} sessions); 95% bootstrap "
                      f"intervals over sessions ({opts.bootstrap:,} resamples, seed {opts.seed}):", "", main_table(docs)]
    return "\n".join(lines)


def _source_text(d: ConfigData) -> str:
    m = d.manifest
    n_sessions = len(d.sessions)
    n_messages = sum(len(s.turns) for s in d.sessions)
    counts = f"{n_sessions:,} sessions / {n_messages:,} messages"
    if m is None:
        return f"{counts}; writer, model and seed not recorded; `{sha256_file(d.file)}`"
    gen = m.generator
    pv = m.provenance.get("package_version")
    generator = f"generator {gen if gen is not None else 'not recorded'}" + (f" (interleave-bench {pv})" if pv else "")
    model = f"model `{m.model}`" if m.model else "no model"
    seed = f"seed {m.seed}" if m.seed is not None else "seed not recorded"
    return f"{counts}; writer `{m.writer}`, {model}, {generator}, {seed}; `{sha256_file(d.file)}`"


@contextlib.contextmanager
def packaged_cases() -> Iterator[Path]:
    """The packaged mid-reply case file as a real path, for the length of the ``with`` block."""
    from .midreply.cases import packaged_cases_path

    with packaged_cases_path() as p:
        yield p
