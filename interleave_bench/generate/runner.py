"""Generation runs: sessions generated per index, appended as they finish, resumed after a stop.

Session ``k`` is a function of (options, seed, k) and, on the model path, of the model's answers,
which the response cache replays. So the order sessions finish in (concurrency) and where a run was
stopped (resume) cannot change the output: the final ``sessions.jsonl`` is written in session order,
atomically, at the end of the run; the same options and cached answers give a byte-identical file.

While a run goes, finished sessions are appended to a work file in the output folder
(``.sessions.work.jsonl``, first line: the options it belongs to). A rerun with the same options
takes the sessions already in the work file or in a finished ``sessions.jsonl`` and generates only
the rest; different options are refused unless ``overwrite`` is set. A session that fails is listed
in the manifest with its reason and is tried again by the next run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from ..errors import InputError, UsageError
from ..interrupted import kept_in, note_kept
from ..io import (
    MANIFEST_FILE,
    SESSIONS_FILE,
    JsonlAppender,
    iter_json_lines,
    parse_json,
    parse_record,
    read_json,
    truncate_partial_line,
    write_json,
    write_jsonl,
)
from ..locks import exclusive_output
from ..fingerprints import sha256_file
from ..llm import LLM
from ..llm.provider import FAKE_IDENTITY
from ..progress import Timer, progress
from ..provenance import provenance
from ..schema import PROBE_CATEGORIES, Manifest, ManifestUsage, Session, check_session
from . import packs, prompts
from .ask import SessionFailed
from .facts import FactOptions
from .plan import PlanOptions
from .session import VERSIONS, SessionIdentity, identity, index_of, model_session_record, offline_session

#: the dataset configs this command generates (v1 adds replies, fact episodes, timeline and probes)
DATASETS = tuple(VERSIONS)
#: seed of a run that names none
DEFAULT_SEED = 0
#: languages of a run that names none: sessions alternate between them by index
DEFAULT_LANGS = ("en", "zh")
#: sessions of a run that names no count (the size of a full benchmark run)
DEFAULT_SESSIONS = 50
#: bump when the same options would produce different sessions, so old work is not resumed into new;
#: the manifest names it (``generator``). 2: 3 to 5 threads in all with the twin third; v1 data
GENERATOR_VERSION = 2
#: the work file inside the output folder (hidden: it is removed when the run completes)
WORK_FILE = ".sessions.work.jsonl"
#: what an error in a work file adds: the file is only the run's own record of the sessions done
_START_OVER = "delete the file to start over"
#: what an error in the finished data set a run would resume adds
_REPLACE = "use --overwrite to replace it or --out for another folder"
#: the writer label of offline data
TEMPLATES_WRITER = "templates"


def default_out(dataset: str = "v0", mode: str = "model") -> Path:
    """``data/interleave-v0`` (model), ``-dry`` (dry run) or ``-offline`` (templates), relative to the cwd."""
    suffix = {"model": "", "dry": "-dry", "offline": "-offline"}[mode]
    return Path("data") / f"interleave-{dataset}{suffix}"


def check_langs(langs: tuple[str, ...]) -> tuple[str, ...]:
    """The languages, checked: each needs templates and prompts; raises :class:`UsageError`."""
    if not langs:
        raise UsageError("--langs: name at least one language")
    for lang in langs:
        if lang not in packs.LANGS:
            raise UsageError(f"--langs: no templates or prompts for language {lang!r} (supported: {', '.join(packs.LANGS)})")
    if len(set(langs)) != len(langs):
        raise UsageError(f"--langs: a language is listed twice in {','.join(langs)}")
    return langs


def content_fingerprint() -> str:
    """A hash of what sessions are made from besides code: the offline data files and the prompts.

    Part of the resume key, so editing a template or a prompt never mixes old and new sessions.
    """
    h = hashlib.sha256()
    for path in sorted(packs.OFFLINE_DIR.rglob("*.json")):
        h.update(path.relative_to(packs.OFFLINE_DIR).as_posix().encode())
        h.update(path.read_bytes())
    for table in (prompts.SYSTEM, prompts.THREADS, prompts.WRITE, prompts.REWRITE, prompts.REWRITE_KEEP,
                  prompts.READ, prompts.CORRECT, prompts.THREADS_V1, prompts.WRITE_V1, prompts.CHECK_FACTS,
                  prompts.FACT_REWRITE, prompts.STEP_RULES):
        h.update(json.dumps(table, sort_keys=True, ensure_ascii=False).encode())
    return "sha256:" + h.hexdigest()[:16]


@dataclass(frozen=True)
class GenerateConfig:
    """Everything that decides what a session contains (the resume key)."""

    dataset: str = "v0"
    seed: int = DEFAULT_SEED
    langs: tuple[str, ...] = DEFAULT_LANGS
    plan: PlanOptions = field(default_factory=PlanOptions)
    writer: str = TEMPLATES_WRITER  # "templates" or "model:<name>"; :func:`generate` sets it from the run
    facts: FactOptions = field(default_factory=FactOptions)  # v1 only

    def fingerprint(self) -> dict[str, Any]:
        extra = {"facts": self.facts.as_dict()} if self.dataset == "v1" else {}
        return {
            "generator": GENERATOR_VERSION,
            "content": content_fingerprint(),
            "dataset": self.dataset,
            "version": VERSIONS[self.dataset],
            "seed": self.seed,
            "langs": list(self.langs),
            "writer": self.writer,
            "plan": self.plan.as_dict(),
            **extra,
        }


@dataclass
class GenerateResult:
    """What a run wrote and counted."""

    out_dir: Path
    sessions_path: Path
    manifest_path: Path
    manifest: dict[str, Any]
    counts: dict[str, int]
    by_lang: dict[str, int]
    failed: list[dict[str, str]]
    resumed: int
    seconds: float


def _differences(old: Any, new: dict[str, Any]) -> str:
    if not isinstance(old, dict):
        return "no recorded options"
    diffs = []
    for k in sorted(set(old) | set(new)):
        if old.get(k) != new.get(k):
            if isinstance(old.get(k), dict) and isinstance(new.get(k), dict):
                sub = [s for s in sorted(set(old[k]) | set(new[k])) if old[k].get(s) != new[k].get(s)]
                diffs.append(f"{k}.{sub[0]}: {old[k].get(sub[0])!r} now {new[k].get(sub[0])!r}" if sub else k)
            else:
                diffs.append(f"{k}: {old.get(k)!r} now {new.get(k)!r}")
    return "; ".join(diffs[:3])


def _load_finished(out: Path, fp: dict[str, Any], config: GenerateConfig) -> dict[int, dict[str, Any]]:
    """Sessions of a finished earlier run in ``out`` made with the same options (``fp``, the
    fingerprint of ``config``), by index."""
    sessions_path, manifest_path = out / SESSIONS_FILE, out / MANIFEST_FILE
    if not sessions_path.exists():
        return {}
    if not manifest_path.exists():
        raise UsageError(f"{sessions_path}: exists without {MANIFEST_FILE} beside it; {_REPLACE}")
    manifest = read_json(manifest_path)
    options = manifest.get("options") if isinstance(manifest, dict) else None
    prev = options.get("config") if isinstance(options, dict) else None
    if prev != fp:
        raise UsageError(
            f"{manifest_path}: options.config: the data there was made with other options ({_differences(prev, fp)}); "
            f"{_REPLACE}"
        )
    done: dict[int, dict[str, Any]] = {}
    lines: dict[int, int] = {}
    for line, text in iter_json_lines(sessions_path):
        obj = parse_json(str(sessions_path), line, text)
        if not isinstance(obj, dict):
            raise InputError(str(sessions_path), line, None, "expected a JSON object (a session)")
        idx = index_of(str(obj.get("session_id", "")))
        if idx is None:
            raise InputError(str(sessions_path), line, "session_id", f"{obj.get('session_id')!r} is not an id this generator writes")
        parse_record(str(sessions_path), line, obj, Session, check_session)  # kept as written only when it is a session
        _check_resumed(str(sessions_path), line, "session_id", "", idx, obj, lines, config, _REPLACE)
        done[idx] = obj
    return done


def _load_work(path: Path, fp: dict[str, Any], config: GenerateConfig) -> dict[int, dict[str, Any]]:
    """Sessions appended to the work file by an earlier, unfinished run with the same options.

    Each line is checked as strictly as the run wrote it (an integer index, once, and the session of
    that index): a line that was edited or damaged is refused, never resumed into the data set."""
    if not path.exists():
        return {}
    truncate_partial_line(path)
    done: dict[int, dict[str, Any]] = {}
    lines: dict[int, int] = {}
    header_seen = False
    for line, text in iter_json_lines(path):
        try:
            obj = parse_json(str(path), line, text)
        except InputError as exc:
            raise InputError(str(path), line, exc.field, f"{exc.message}; {_START_OVER}") from None
        if not isinstance(obj, dict):
            raise InputError(str(path), line, None, f"expected a JSON object; {_START_OVER}")
        if not header_seen:
            header_seen = True
            if obj.get("config") != fp:
                raise UsageError(
                    f"{path}: config: an unfinished run with other options ({_differences(obj.get('config'), fp)}); "
                    "use --overwrite to discard it or --out for another folder"
                )
            continue
        idx, session = obj.get("index"), obj.get("session")
        if not isinstance(idx, int) or isinstance(idx, bool):
            raise InputError(str(path), line, "index", f"expected an integer, got {json.dumps(idx)[:40]}; {_START_OVER}")
        if not isinstance(session, dict):
            raise InputError(str(path), line, "session", f"expected a JSON object (a session); {_START_OVER}")
        try:
            parse_record(str(path), line, session, Session, check_session)
        except InputError as exc:  # one line: the first problem (and how many more), which line to delete
            raise InputError(str(path), line, f"session.{exc.field}" if exc.field else "session",
                             f"{exc.message}; {_START_OVER}") from None
        _check_resumed(str(path), line, "index", "session.", idx, session, lines, config, _START_OVER)
        done[idx] = session
    return done


def _check_resumed(where: str, line: int, index_field: str, prefix: str, idx: int, session: dict[str, Any],
                   lines: dict[int, int], config: GenerateConfig, hint: str) -> None:
    """Raise :class:`InputError` unless ``session`` (on ``line`` of ``where``) can be resumed as
    session ``idx`` of a run of ``config``: an index a run can hold, not on an earlier line
    (``lines``: index to line, updated here), and the id, language, split and version that index
    gives. The final file is every index's session once, so this is what keeps it valid."""
    if not 0 <= idx < MAX_SESSIONS:
        raise InputError(where, line, index_field, f"{idx} is not a session index (0 to {MAX_SESSIONS - 1:,}); {hint}")
    want = identity(idx, config.langs)
    if idx in lines:
        raise InputError(where, line, index_field, f"session index {idx} ({want.session_id}) is also on line {lines[idx]}; {hint}")
    lines[idx] = line
    for key, expected in (("session_id", want.session_id), ("lang", want.lang), ("split", want.split),
                          ("version", VERSIONS[config.dataset])):
        if session.get(key) != expected:
            raise InputError(where, line, f"{prefix}{key}", f"{session.get(key)!r} is not the {key} of session index "
                                                            f"{idx} (that is {expected!r}); {hint}")


def _refuse_to_drop(out: Path, done: dict[int, dict[str, Any]], n_sessions: int) -> None:
    """Refuse a run that would end with fewer sessions than ``out`` already holds: the final file
    holds sessions ``0..n_sessions-1`` only, so the others would be lost without a word."""
    beyond = [i for i in done if i >= n_sessions]
    if beyond:
        held = max(beyond) + 1
        raise UsageError(
            f"{out}: holds {len(beyond)} session{'s' * (len(beyond) > 1)} of these options past the first {n_sessions} (an earlier run asked "
            f"for {held} or more), which --sessions {n_sessions} would drop; use --sessions {held} or more to keep "
            "them, --overwrite to replace them or --out for another folder"
        )


async def _drive(
    todo: list[SessionIdentity],
    produce: Callable[[SessionIdentity], Awaitable[dict[str, Any]]],
    concurrency: int,
    on_result: Callable[[SessionIdentity, dict[str, Any] | None, str | None], None],
) -> None:
    """Run ``produce`` over ``todo`` with ``concurrency`` sessions in flight; report each as it ends.

    ``on_result`` runs in this coroutine, one result at a time (so appends never interleave); if it
    raises, the sessions still running are cancelled and the error propagates.
    """
    queue: asyncio.Queue[tuple[SessionIdentity, dict[str, Any] | None, str | None, BaseException | None]] = asyncio.Queue()
    pending = list(reversed(todo))

    async def worker() -> None:
        while pending:
            ident = pending.pop()
            try:
                data = await produce(ident)
                await queue.put((ident, data, None, None))
            except SessionFailed as exc:
                await queue.put((ident, None, exc.reason, None))
            except Exception as exc:  # a bug: stop the run and show it
                await queue.put((ident, None, None, exc))

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(todo))))]
    try:
        for _ in range(len(todo)):
            ident, data, reason, error = await queue.get()
            if error is not None:
                raise error
            on_result(ident, data, reason)
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


#: the most sessions one data set may ask for: far beyond any benchmark's size, and still a plan
#: the machine can hold (a count read from a typo'd option must not exhaust the memory)
MAX_SESSIONS = 1_000_000


def check_session_count(n: int, option: str = "--sessions") -> None:
    """Raise :class:`UsageError` unless ``n`` sessions can be generated: 1 to :data:`MAX_SESSIONS`."""
    if n < 1:
        raise UsageError(f"{option} must be at least 1, got {n}")
    if n > MAX_SESSIONS:
        raise UsageError(f"{option} must be at most {MAX_SESSIONS:,}, got {n:,}")


def generate(
    n_sessions: int,
    out_dir: str | os.PathLike,
    *,
    config: GenerateConfig | None = None,
    llm: LLM | None = None,
    concurrency: int = 1,
    overwrite: bool = False,
    after_session: Callable[[SessionIdentity, bool], None] | None = None,
) -> GenerateResult:
    """Generate (or finish generating) ``n_sessions`` sessions into ``out_dir``.

    ``llm`` None means the offline path (templates and the rule reader); otherwise every step asks
    the model. ``after_session(identity, ok)`` runs after each session is recorded (tests use it
    to stop a run midway). Writes ``sessions.jsonl`` and ``manifest.json``; returns what it did.
    Raises :class:`UsageError` for bad options or an output folder holding other options' data.
    """
    config = config or GenerateConfig()
    if llm is not None and llm.provider.identity == FAKE_IDENTITY:
        from . import fake  # noqa: F401  (the fake model answers generation requests with these handlers)
    check_session_count(n_sessions)
    if concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if config.dataset not in DATASETS:
        raise UsageError(f"--dataset: {config.dataset!r} is not one of {', '.join(DATASETS)}")
    check_langs(config.langs)
    missing = [d for d in config.plan.domains if d not in packs.domain_names()]
    if llm is None and missing:
        raise UsageError(
            f"--plan domains: no offline domain pack for {', '.join(map(repr, missing))} "
            f"(have: {', '.join(packs.domain_names())}); a model run can use any domain"
        )
    # the offline writer and the fake model draw threads from the packs, which hold so many facts a thread
    most = packs.most_facts(config.plan.domains) if llm is None or llm.provider.identity == FAKE_IDENTITY else None
    if most is not None and config.plan.facts_per_thread > most:
        raise UsageError(f"--plan facts_per_thread: at most {most} with {'--offline' if llm is None else '--dry-run'}: "
                         f"a thread drawn from the domain packs holds no more facts, got {config.plan.facts_per_thread} "
                         "(a model writes as many as asked)")
    # the writer is what this run uses, whatever the config said
    config = dataclasses.replace(config, writer=TEMPLATES_WRITER if llm is None else f"model:{llm.model}")
    timer = Timer()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with exclusive_output(out / SESSIONS_FILE, "generate"):
        return _generate_into(out, n_sessions, config, llm, concurrency, overwrite, after_session, timer)


def _generate_into(out: Path, n_sessions: int, config: GenerateConfig, llm: LLM | None, concurrency: int,
                   overwrite: bool, after_session: Callable[[SessionIdentity, bool], None] | None,
                   timer: Timer) -> GenerateResult:
    """The body of :func:`generate`, run while holding the output folder's lock; returns its result."""
    sessions_path, manifest_path, work_path = out / SESSIONS_FILE, out / MANIFEST_FILE, out / WORK_FILE
    fp = config.fingerprint()
    version = VERSIONS[config.dataset]
    if overwrite:  # discard the folder's data now, so a stop before the end resumes cleanly
        for p in (work_path, sessions_path, manifest_path):
            p.unlink(missing_ok=True)
    done: dict[int, dict[str, Any]] = {} if overwrite else _load_finished(out, fp, config)
    done.update(_load_work(work_path, fp, config))
    _refuse_to_drop(out, done, n_sessions)
    todo = [identity(i, config.langs) for i in range(n_sessions) if i not in done]
    resumed = sum(1 for i in done if i < n_sessions)
    failed: dict[int, dict[str, str]] = {}
    bar = progress(total=n_sessions, desc="generate", unit="session")
    bar.update(resumed)
    fresh = not work_path.exists() or work_path.stat().st_size == 0
    appender = JsonlAppender(work_path)
    try:
        if fresh:
            appender.append({"config": fp})

        def on_result(ident: SessionIdentity, data: dict[str, Any] | None, reason: str | None) -> None:
            if data is not None:
                appender.append({"index": ident.index, "session": data})
                done[ident.index] = data
            else:
                failed[ident.index] = {"session_id": ident.session_id, "reason": reason or "unknown"}
            bar.update(1)
            if failed:
                bar.set_postfix(failed=len(failed))
            if after_session is not None:
                after_session(ident, data is not None)

        if llm is None:
            async def produce(ident: SessionIdentity) -> dict[str, Any]:
                return offline_session(ident, config.seed, config.plan, version, config.facts)

            asyncio.run(_drive(todo, produce, 1, on_result))
        else:
            async def produce(ident: SessionIdentity) -> dict[str, Any]:
                return await model_session_record(llm, ident, config.seed, config.plan, version, config.facts)

            llm.run(_drive(todo, produce, concurrency, on_result))
    except KeyboardInterrupt as exc:  # the line Ctrl-C ends with says what the output folder holds
        # (in the work file, hidden until the run ends: named, as the folder shows no sessions yet)
        note_kept(exc, kept_in(sum(1 for i in done if i < n_sessions), n_sessions, "session", work_path))
        raise
    finally:
        appender.close()
        bar.close()
    final = [done[i] for i in sorted(done) if i < n_sessions]
    write_jsonl(sessions_path, final)
    counts = {
        "sessions": len(final),
        "messages": sum(len(s["turns"]) for s in final),
        "ambiguous": sum(t["ambiguous"] for s in final for t in s["turns"]),
        "leaks": sum("leak" in t["tags"] for s in final for t in s["turns"]),
        "failed": len(failed),
    }
    if config.dataset == "v1":
        counts.update(v1_counts(final))
    failed_list = [failed[i] for i in sorted(failed)]
    options: dict[str, Any] = {"sessions": n_sessions, "config": fp}
    if llm is not None:
        options["concurrency"] = concurrency
    manifest = Manifest(
        version=version,
        generator=GENERATOR_VERSION,
        writer=config.writer,
        model=llm.model if llm is not None else None,
        seed=config.seed,
        options=options,
        counts=counts,
        failed=failed_list,
        usage=llm.stats.as_manifest() if llm is not None else ManifestUsage().model_dump(),
        provenance=provenance(sessions_sha256=sha256_file(sessions_path)),
    ).dump()
    write_json(manifest_path, manifest)
    work_path.unlink(missing_ok=True)  # everything it held is in sessions.jsonl now
    return GenerateResult(
        out_dir=out,
        sessions_path=sessions_path,
        manifest_path=manifest_path,
        manifest=manifest,
        counts=counts,
        by_lang=dict(sorted(Counter(s["lang"] for s in final).items())),
        failed=failed_list,
        resumed=resumed,
        seconds=timer.seconds,
    )


def v1_counts(sessions: list[dict[str, Any]]) -> dict[str, int]:
    """The v1 figures of a manifest: fact steps, the facts left out of the probes as ``fact-miss``
    (one per fact), and the probes by category (``probes_<category>``)."""
    out = {
        "fact_steps": sum(1 for s in sessions for t in s["turns"] if t.get("fact")),
        "fact_misses": sum(len({(e["thread"], e["key"]) for e in s.get("timeline") or [] if e.get("miss")}) for s in sessions),
        "probes": sum(len(s.get("probes") or []) for s in sessions),
    }
    by_cat = Counter(p["category"] for s in sessions for p in s.get("probes") or [])
    for cat in PROBE_CATEGORIES:
        out[f"probes_{cat}"] = by_cat.get(cat, 0)
    return out


def generate_offline(
    n_sessions: int = DEFAULT_SESSIONS,
    out_dir: str | os.PathLike | None = None,
    *,
    seed: int = DEFAULT_SEED,
    langs: tuple[str, ...] | list[str] = DEFAULT_LANGS,
    plan: PlanOptions | None = None,
    overwrite: bool = False,
    dataset: str = "v0",
) -> Path:
    """Offline data (templates, no model) in ``out_dir`` (default ``data/interleave-<dataset>-offline``).

    Returns the path of the written ``sessions.jsonl`` (``manifest.json`` is beside it). A folder
    already holding data of the same options is reused, of other options refused unless
    ``overwrite``.
    """
    config = GenerateConfig(dataset=dataset, seed=seed, langs=tuple(langs), plan=plan or PlanOptions())
    result = generate(n_sessions, out_dir if out_dir is not None else default_out(dataset, "offline"),
                      config=config, overwrite=overwrite)
    return result.sessions_path
