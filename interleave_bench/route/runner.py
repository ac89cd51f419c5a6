"""The runner: replays sessions message by message through a router and writes prediction rows.

It owns the modes (closed: the thread cards are topics from the start; open: topics are made on the
way and named ``t1``, ``t2``, ...), the bursts (:mod:`.bursts`), the topic state, and the output
file. Routers receive only :class:`~.base.RouterView` objects built from the gold-free
:class:`~.base.Conversation`; the oracle alone gets gold, through its own argument.

Output: ``predictions/<mode>-<policy>[-t<threshold>][-merge<all|adaptive>][-each][-<model>].jsonl`` beside the
data (``predictions-dry/`` for a dry run), one row per message of the chosen split, in session then
turn order, appended one finished session at a time; plus ``<name>.run.json`` with the options, data fingerprint, counts, usage and
provenance. A rerun skips the sessions already written (a session cut short by a crash is written
again from its start), so an interrupted run ends byte-identical to an uninterrupted one.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from ..errors import UsageError
from ..heap import settled
from ..interrupted import kept_in, note_kept
from ..io import SESSIONS_FILE, JsonlAppender, sessions_file, write_json
from ..llm.client import SESSIONS_PER_SLOT, USAGE_COUNTS, usage_record
from ..llm.prices import Price
from ..locks import exclusive_output, real_output
from ..fingerprints import read_unchanged, sha256_file
from ..progress import Timer, progress
from ..provenance import provenance
from ..documents import LOCAL_WEIGHTS, ROUTER_CODE, ROUTER_STATE, RunCounts, RunRecord, RunUsage, run_record_path
from ..schema import CLARIFY, ERROR, SCORE_SPLITS, PredictionRow, Session
from ..score.defaults import check_mode, check_split
from .base import (
    BurstFailure,
    Decision,
    EachRouter,
    GoldLabels,
    GoldRouter,
    Message,
    RouterView,
    add_ms,
    add_usage,
    conversation_of,
    gold_of,
)
from .baselines import AlwaysNewRouter, OracleRouter, SingleRouter, StayRouter
from .bm25 import Bm25Router
from .local import VIA_LOCAL, LocalRouter, threshold_problem
from .local_sample import local_weights_of
from .plugin import PluginRouter
from .digest import conversation_digests
from .selection import check_mode_applies, select_sessions
from .resume import (FILE_COUNTS, START_OVER, NewOutputs, file_counts, no_rows_record, paid_before_rows,
                     prepare_resume, previous_record, remove_stale_scores, require_own_record, rows_file)
from .topic_state import TopicState
from .bursts import DECIDES, DEFAULT_CROSS, DEFAULT_SAME, DEFAULT_SEED, MERGES, is_mixed, plan_units, simulate_arrivals

POLICIES = ("llm", "hybrid", "oracle", "single", "always_new", "stay", "bm25", "local")
MODEL_POLICIES = ("llm", "hybrid")
SPLITS = SCORE_SPLITS
#: route every split by default: the file then serves scoring on dev, test or both
DEFAULT_SPLIT = "all"
PREDICTIONS_DIR = "predictions"
#: a dry run's (fake model's) predictions go apart, so they are never scored or ranked as a real run's
PREDICTIONS_DRY_DIR = "predictions-dry"
FALLBACK_VIA = "fallback-"


# --- options and names -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RouteOptions:
    """Everything that decides a run's predictions (besides the data, the model and the prompt)."""

    mode: str
    policy: str = ""  # your own router's run: its own name when not given (:func:`.plugin.own_router`)
    merge: str = "none"
    decide: str = "one"
    same: float = DEFAULT_SAME
    cross: float = DEFAULT_CROSS
    seed: int = DEFAULT_SEED
    split: str = DEFAULT_SPLIT
    #: ``hybrid`` only: route with ``local`` when its confidence is at least this, else ask the model
    #: (None: the rule fast path instead)
    threshold: Optional[float] = None
    router: Optional[str] = None  # a plug-in's ``module:Class`` or URL (:mod:`.plugin`); policy is its own name
    router_args: tuple[str, ...] = ()

    def check(self) -> None:
        """Raise :class:`UsageError` for an impossible combination."""
        check_mode(self.mode)
        if self.router is None and self.policy not in POLICIES:
            raise UsageError(f"--policy must be one of {', '.join(POLICIES)}, got {self.policy!r}")
        if self.merge not in MERGES:
            raise UsageError(f"--merge must be one of {', '.join(MERGES)}, got {self.merge!r}")
        if self.decide not in DECIDES:
            raise UsageError(f"--decide must be one of {', '.join(DECIDES)}, got {self.decide!r}")
        check_split(self.split)
        for name, p in (("--same", self.same), ("--cross", self.cross)):
            if not 0.0 <= p <= 1.0:
                raise UsageError(f"{name} must be a probability between 0 and 1, got {p:g}")
        if self.threshold is not None:
            if self.policy != "hybrid":
                raise UsageError(f"--threshold applies to the hybrid policy only, not {self.policy}")
            problem = threshold_problem(self.threshold)
            if problem:
                raise UsageError(f"--threshold {problem}")
        if self.decide == "each" and self.merge == "none":
            raise UsageError("--decide each needs bursts: add --merge all or --merge adaptive")

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"mode": self.mode, "policy": self.policy, "merge": self.merge, "split": self.split}
        if self.threshold is not None:
            d["threshold"] = self.threshold
        if self.router is not None:
            d.update(router=self.router, router_args=list(self.router_args))
        if self.merge != "none":
            d.update(decide=self.decide, same=self.same, cross=self.cross, seed=self.seed)
        return d


def safe_name(text: str) -> str:
    """``text`` made safe for a file name (a model name such as ``org/model:tag``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "model"


def output_name(opts: RouteOptions, model: Optional[str] = None) -> str:
    """``<mode>-<policy>[-t<threshold>][-merge<all|adaptive>][-each][-<model>].jsonl``."""
    name = f"{opts.mode}-{opts.policy}"
    if opts.threshold is not None:  # of at most 4 decimals (threshold_problem): one name per threshold
        name += f"-t{opts.threshold:g}"
    if opts.merge != "none":
        name += f"-merge{opts.merge}"
        if opts.decide == "each":
            name += "-each"
    if opts.policy in MODEL_POLICIES and model:
        name += f"-{safe_name(model)}"
    return name + ".jsonl"


def run_name(opts: RouteOptions, model: Optional[str] = None) -> str:
    """``<mode>-<policy>[...]``, a run's name in its progress bar and summary line: its default
    file name's stem (:func:`output_name`), whatever ``--out`` names."""
    return output_name(opts, model).removesuffix(".jsonl")


def default_output(data_file: Path, opts: RouteOptions, model: Optional[str] = None, *, dry_run: bool = False) -> Path:
    """``DATA/predictions/<name>``, or ``DATA/predictions-dry/<name>`` for a dry run."""
    folder = PREDICTIONS_DRY_DIR if dry_run else PREDICTIONS_DIR
    return data_file.parent / folder / output_name(opts, model)


def make_router(policy: str, llm: Any = None, *, threshold: Optional[float] = None) -> Any:
    """The router of ``policy``; model policies need ``llm``; ``threshold`` makes ``hybrid`` use
    the ``local`` router as its fast path instead of the rules."""
    if policy in MODEL_POLICIES:
        if llm is None:
            raise UsageError(f"the {policy} policy needs a model (--model, or --dry-run for the fake one)")
        from .model import ModelRouter

        if policy == "hybrid" and threshold is not None:
            return ModelRouter(llm, local=LocalRouter(), threshold=threshold)
        return ModelRouter(llm, rules=(policy == "hybrid"))
    return {
        "oracle": OracleRouter,
        "single": SingleRouter,
        "always_new": AlwaysNewRouter,
        "stay": StayRouter,
        "bm25": Bm25Router,
        "local": LocalRouter,
    }[policy]()


# --- one session -------------------------------------------------------------------------------------


@dataclass
class SessionCounts:
    messages: int = 0
    errors: int = 0
    clarify: int = 0
    fallback: int = 0
    rules: int = 0
    local: int = 0  # decided by the local router inside hybrid
    bursts: int = 0  # requests holding more than one message

    def add(self, other: "SessionCounts") -> None:
        for k in self.__dataclass_fields__:
            setattr(self, k, getattr(self, k) + getattr(other, k))


async def _decide(router: Any, view: RouterView, gold: Optional[GoldLabels], state: TopicState) -> Decision:
    """The router's decision; ``gold`` is given only for a :class:`GoldRouter` (the oracle), the
    run's own topic labels (``state``'s) only to your own router, whose view may lie (:mod:`.plugin_input`)."""
    if gold is not None:
        return await router.route_with_gold(view, gold)
    if isinstance(router, PluginRouter):
        return await router.route(view, state.order)
    return await router.route(view)


def _label_for(state: TopicState, d: Decision, opened_in_unit: dict[int, str], pos: int) -> str:
    special = d.special_label()
    if special is not None:
        return special
    if d.kind == "topic":
        assert d.label is not None
        return d.label
    if d.same_as is not None:
        return opened_in_unit[d.same_as]
    label = state.open_topic(d.title)
    opened_in_unit[pos] = label
    return label


async def route_session(session: Session, router: Any, opts: RouteOptions) -> tuple[list[dict[str, Any]], SessionCounts]:
    """The prediction rows of one session (turn order) and what happened.

    ``session`` is used for three things only: the gold-free conversation routers see, the arrival
    simulation and ``mixed`` flags of bursts, and (for the oracle alone) the gold labels.
    """
    conv = conversation_of(session)
    gold = gold_of(session) if isinstance(router, GoldRouter) else None
    turns = session.turns
    keys = [t.gold.thread for t in turns]
    follows = simulate_arrivals(keys, same=opts.same, cross=opts.cross, seed=opts.seed, session_id=session.session_id)
    units = plan_units([m.text for m in conv.messages], follows, opts.merge)
    state = TopicState(conv, opts.mode)
    rows: list[dict[str, Any]] = []
    counts = SessionCounts()
    merging = opts.merge != "none"
    model = getattr(router, "model", None)
    model_plain = model is None or type(model) is str
    check_row = PredictionRow.__pydantic_validator__.validate_python
    can_each = isinstance(router, EachRouter)

    def emit(msg: Message, label: str, d: Decision, unit: Any, k: int, mixed: bool, *,
             usage: Optional[dict[str, int]], elapsed: Optional[int], via: Optional[str] = None,
             fallback: Optional[str] = None) -> None:
        # in PredictionRow's dumped order (its fields, then extra ones): a row of plain values is
        # written as it is once checked, any other (an int confidence, ...) as the schema dumps it
        plain = model_plain
        # the turn number from the session, which no router is shown: never one a router changed
        row: dict[str, Any] = {"session_id": session.session_id, "i": turns[unit.positions[k]].i, "pred": label,
                               "mode": opts.mode, "policy": opts.policy}
        if d.refs is not None:
            row["refs"] = refs = list(d.refs)
            plain = plain and all(type(r) is str for r in refs)
        if usage is not None:
            row["usage"] = {"input": usage.get("input", 0), "output": usage.get("output", 0),
                            "cache_hit": usage.get("cache_hit", 0)}
            if usage.get("unreported"):  # calls whose tokens the provider did not report: cost unknown
                row["usage"]["unreported"] = usage["unreported"]
        if elapsed is not None:
            row["elapsed_ms"] = elapsed
            plain = plain and type(elapsed) is int
        row["via"] = via = via or d.via
        if d.confidence is not None:
            row["confidence"] = d.confidence
            plain = plain and type(d.confidence) is float
        if merging:
            row["burst"] = len(unit.positions)
            row["mixed"] = mixed
            row["waited"] = unit.waited[k]
        if model is not None:
            row["model"] = model
        if d.error:
            row["error"] = d.error
            plain = plain and type(d.error) is str
        if fallback:
            row["fallback"] = fallback
            plain = plain and type(fallback) is str
        checked = check_row(row)  # raises for a row the schema refuses
        rows.append(row if plain else checked.dump())
        counts.messages += 1
        counts.errors += label == ERROR
        counts.clarify += label == CLARIFY
        counts.fallback += fallback is not None
        counts.rules += "rule-" in via
        counts.local += via == VIA_LOCAL and opts.policy != "local"

    for unit in units:
        pending = [conv.messages[k] for k in unit.positions]
        mixed = is_mixed([keys[k] for k in unit.positions])
        counts.bursts += len(pending) > 1
        if len(pending) == 1 or opts.decide == "one":
            d = await _decide(router, state.view(pending), gold, state)
            label = _label_for(state, d, {}, 0)
            for k, msg in enumerate(pending):
                state.record(msg, label)
                # one request: its tokens are counted once (first row), its latency is every row's
                emit(msg, label, d, unit, k, mixed, usage=d.usage if k == 0 else None, elapsed=d.elapsed_ms)
            continue
        # --decide each: one call for the burst if the router can, else (or on failure) one by one
        result: Any = None
        if can_each:
            result = await router.route_each(state.view(pending))
        if isinstance(result, list):
            if len(result) != len(pending):
                raise RuntimeError(f"{router.policy} gave {len(result)} decisions for a burst of {len(pending)}")
            opened: dict[int, str] = {}
            for k, (msg, d) in enumerate(zip(pending, result)):
                label = _label_for(state, d, opened, k)
                state.record(msg, label)
                emit(msg, label, d, unit, k, mixed, usage=d.usage, elapsed=d.elapsed_ms)
            continue
        failure: Optional[BurstFailure] = result
        for k, msg in enumerate(pending):
            d = await _decide(router, state.view([msg]), gold, state)
            label = _label_for(state, d, {}, 0)
            state.record(msg, label)
            if failure is None:
                emit(msg, label, d, unit, k, mixed, usage=d.usage, elapsed=d.elapsed_ms)
                continue
            # the failed burst call is charged to the burst's first row, its latency to every row
            emit(msg, label, d, unit, k, mixed, usage=add_usage(failure.usage, d.usage) if k == 0 else d.usage,
                 elapsed=add_ms(failure.elapsed_ms, d.elapsed_ms), via=FALLBACK_VIA + d.via, fallback=failure.reason)
    return rows, counts


# --- a whole run -------------------------------------------------------------------------------------


@dataclass
class RouteResult:
    """What a run did: the file written, sessions routed now and skipped as done, counts, time."""

    path: Path
    sessions: int
    resumed: int
    rows: int  # rows in the file at the end
    counts: SessionCounts = field(default_factory=SessionCounts)
    seconds: float = 0.0
    errors_left: int = 0  # ERROR rows in the file at the end (a plain rerun asks for them again)
    #: the score files of the rows a ``--fresh`` run replaced, removed (:func:`~.resume.stale_scores_line`)
    stale_scores: tuple[Path, ...] = ()


def _run_record(out: Path, data_file: Path, data_sha: str, opts: RouteOptions, model: Optional[str],
                prompt: Optional[str], code: Optional[str] = None, state: Optional[str] = None,
                weights: Optional[str] = None, digests: Optional[dict[str, str]] = None) -> RunRecord:
    options = opts.as_dict()
    if model is not None:
        options["model"] = model
    if prompt is not None:
        options["prompt"] = prompt
    if weights is not None:
        options[LOCAL_WEIGHTS] = weights
    if code is not None:
        options[ROUTER_CODE] = code
    if state is not None:
        options[ROUTER_STATE] = state
    return RunRecord(predictions=out.name, data=str(data_file), data_sha256=data_sha, options=options,
                     conversation_digests=digests)


def run_route(
    data: str | os.PathLike,
    opts: RouteOptions,
    *,
    llm: Any = None,
    out: str | os.PathLike | None = None,
    fresh: bool = False,
    router: Any = None,
    dry_run: bool = False,
    sessions: Optional[Sequence[Session]] = None,
    start_over: str = START_OVER,
    concurrency: Optional[int] = None,
    data_sha: Optional[str] = None,
) -> RouteResult:
    """Route every session of ``opts.split`` in ``data`` and write the predictions file.

    ``llm`` is required for model policies (its model name goes into the file name). ``fresh``
    starts over instead of resuming; its first row takes the place of the file, whose score files
    go then (:func:`~.resume.remove_stale_scores`). ``dry_run`` (``llm`` is the fake model) sends the default
    output to ``predictions-dry/``; an explicit ``out`` is used as given. ``router`` overrides a
    built-in ``opts.policy``'s router (tests); under any other policy name, or none, it is your own
    router (docs/own_router.md), run as ``--router`` runs it.
    ``sessions`` are the data file's sessions already read and validated (several runs on one
    file read it once); the split is selected from them. ``data_sha`` is the SHA-256 of the bytes
    they were read from (:func:`~interleave_bench.fingerprints.read_unchanged`); without it the
    file is hashed when the run starts. Read here, the file is hashed with the read. ``start_over`` is what a refusal to resume
    another run's file advises, in the caller's own terms (the command's options by default).
    ``concurrency`` routes that many sessions of your own router side by side (default 1).
    Returns the :class:`RouteResult`; raises :class:`UsageError` / :class:`InputError` on bad input.
    """
    timer = Timer()
    if opts.router is not None or (router is not None and opts.policy not in POLICIES):
        from .plugin import own_router  # named by --router, or an object of yours under a name of its own

        router, opts = own_router(router, opts, concurrency)
    elif concurrency is not None:
        raise UsageError("concurrency applies to your own router: a model policy's is its model client's, "
                         "the other policies route one session at a time")
    opts.check()
    data_file = sessions_file(data)
    if sessions is None:  # the record's hash is of the bytes the sessions were read from
        sessions, data_sha = read_unchanged(data_file, lambda: select_sessions(data_file, opts.split))
    else:
        sessions = select_sessions(data_file, opts.split, sessions)
    check_mode_applies(data_file, sessions, opts.mode)
    router = router if router is not None else make_router(opts.policy, llm, threshold=opts.threshold)
    model = llm.model if (llm is not None and opts.policy in MODEL_POLICIES) else None
    prompt = None
    if opts.policy in MODEL_POLICIES:
        from .prompt import prompt_fingerprint

        prompt = prompt_fingerprint()
    out_path = Path(out) if out is not None else default_output(data_file, opts, model, dry_run=dry_run)
    code = state = None
    if opts.router is not None:
        from .plugin import router_code, router_state

        code, state = router_code(router), router_state(router)
    record = _run_record(out_path, data_file, data_sha or sha256_file(data_file), opts, model, prompt, code, state,
                         local_weights_of(router), conversation_digests(sessions))
    made = NewOutputs.before(out_path, run_record_path(out_path))
    command = f"route --mode {opts.mode} --policy {opts.policy}"
    try:
        # the record's lock too: ``x`` and ``x.jsonl`` keep theirs in one ``x.run.json``
        with exclusive_output(out_path, command), exclusive_output(run_record_path(out_path), command):
            return _route_into(out_path, record, sessions, opts, router, llm, fresh, timer, start_over, made)
    except BaseException:
        made.remove_folders()  # those it made and left empty, now that its lock file is gone
        raise


async def _one_by_one(todo: Sequence[Session], router: Any, opts: RouteOptions,
                      write: Callable[[list[dict[str, Any]], SessionCounts], None]) -> None:
    """Route ``todo`` one session after the other, each written as it ends. A router that never
    waits (``local``, the baselines, a plain ``route()``) gives the event loop no turn while it
    routes, so the loop is given one after each session: Ctrl-C, which asks the loop to stop, then
    stops the run there with every finished session written (routing 3,000 sessions, it used to
    take effect only once all of them were routed, none written yet)."""
    for s in todo:
        write(*await route_session(s, router, opts))
        await asyncio.sleep(0)


async def _side_by_side(todo: Sequence[Session], router: Any, opts: RouteOptions, slots: int,
                        write: Callable[[list[dict[str, Any]], SessionCounts], None]) -> None:
    """Route ``todo`` with up to ``slots`` sessions at once (a model router waits on its calls),
    each written in session order as soon as it and those before it are done."""
    sem = asyncio.Semaphore(slots)

    async def one(s: Session) -> tuple[list[dict[str, Any]], SessionCounts]:
        async with sem:
            return await route_session(s, router, opts)

    tasks = [asyncio.create_task(one(s)) for s in todo]
    try:
        for task in tasks:
            write(*await task)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _route_into(out_path: Path, record: RunRecord, sessions: list[Session], opts: RouteOptions, router: Any,
                llm: Any, fresh: bool, timer: Timer, start_over: str, made: NewOutputs) -> RouteResult:
    """The body of :func:`run_route`, run while holding the output's lock; returns its result. A run
    stopped before its first row removes the files it made (``made``)."""
    record_path = run_record_path(out_path)
    require_own_record(out_path, record_path)
    rows_path = rows_file(out_path, fresh)
    previous = None if fresh else previous_record(out_path, record_path)
    what = record.same_run(previous) if previous is not None else None
    if what is not None and not out_path.exists():
        raise UsageError(f"{record_path} holds the calls a run of other {what} paid before its first row; {start_over}")
    if what is not None:
        raise UsageError(f"{out_path} was written from other {what} ({record_path.name}); {start_over}")
    done = set() if fresh else prepare_resume(out_path, sessions, opts, start_over, getattr(router, "model", None))
    todo = [s for s in sessions if s.session_id not in done]
    start_record = record.model_copy(update={"complete": False})
    return _route_todo(out_path, rows_path, record, start_record, sessions, todo, done, previous, opts, router,
                       llm, timer, made)


def _route_todo(out_path: Path, rows_path: Path, record: RunRecord, start_record: RunRecord,
                sessions: list[Session], todo: list[Session], done: set[str], previous: Optional[RunRecord],
                opts: RouteOptions, router: Any, llm: Any, timer: Timer, made: NewOutputs) -> RouteResult:
    """Route ``todo`` into ``out_path`` (after the ``done`` sessions), then complete the run record.
    The rows go to ``rows_path`` (:func:`~.resume.rows_file`), put in the place of ``out_path`` at
    the first row when it is another file. A run stopped before its first row removes the files it
    made (``made``) but the record of the calls it paid."""
    record_path = run_record_path(out_path)
    counts = SessionCounts()
    # this run's share of the client's totals (a sweep routes several runs with one client)
    spent_before = llm.stats.counts() if llm is not None else None
    slots = getattr(router, "sessions_at_once", 1)  # your own router's (--concurrency)
    if getattr(router, "uses_model", False) and llm is not None:
        slots = max(1, llm.concurrency * SESSIONS_PER_SLOT)

    begun = False  # whether a row of this run is in the output
    stale: tuple[Path, ...] = ()  # --fresh: the score files of the rows it replaced, removed
    written = 0  # the sessions whose rows this run wrote
    earlier = previous.usage if previous is not None else None  # what the file's earlier runs paid
    # the price the kept rows were paid at, checked before any call (refused in one line naming the record)
    paid = Price.of_record(earlier.price, record_path) if earlier is not None and earlier.price is not None else None

    def usage_now(running: bool = False) -> Optional[RunUsage]:
        """What the file's model calls took so far: this run's, and a resumed run's record's before
        it. ``running``: the run goes on, and a ``kill -9`` would keep it from counting what it pays
        next (``uncounted``: the cost is unknown, not the floor's)."""
        if llm is None:
            return None
        spent = {k: v - spent_before[k] for k, v in llm.stats.counts().items()}
        price = llm.stats.price
        # kept rows of a record holding no usage (a run killed, or one that failed to write it): unknown, not 0
        uncounted = running or (bool(done) and previous is not None and earlier is None)
        if earlier is not None:
            # a resumed run: the record counts what the whole file took, costed at this run's price;
            # one that paid no call keeps the price the file was paid at (a rerun without EVAL_PRICES
            # made a priced record's cost unknown)
            if not spent["calls"] and paid is not None:
                price = paid
            spent = {k: spent[k] + getattr(earlier, k) for k in USAGE_COUNTS}
            uncounted = uncounted or earlier.uncounted
        return RunUsage.model_validate(usage_record(spent, price, llm.model, uncounted=uncounted))

    # the run's name (mode, policy, model), as its summary line says it, and the data (its folder's name)
    data = Path(record.data)
    data_name = data.parent.name if data.name == SESSIONS_FILE and data.parent.name else data.name
    bar_label = f"route {run_name(opts, record.options.get('model'))} on {data_name}"

    async def main() -> None:
        with JsonlAppender(rows_path) as sink, progress(total=len(todo), desc=bar_label, unit="session") as bar:

            # written in session order as each finishes, so the file is always a prefix of the whole run
            def write(rows: list[dict[str, Any]], c: SessionCounts) -> None:
                nonlocal begun, written, stale
                if not begun:
                    # the record just before the first row: a run stopped before one leaves the record it
                    # found; its usage says until the run ends that calls are being paid it does not count
                    write_json(record_path, start_record.model_copy(update={"usage": usage_now(running=True)}).dump())
                sink.append_many(rows)
                if not begun and rows_path != out_path:
                    # --fresh: its first row written, it takes the place of the run it starts over from. Its
                    # record is written first: killed between the two, the old rows stand beside an unfinished
                    # record of this run, which a rerun of another mode, policy or model refuses to resume.
                    # The score files of the rows it replaces go first, named from those rows: their figures
                    # never stand beside this run's
                    stale = tuple(remove_stale_scores(out_path))
                    os.replace(rows_path, real_output(out_path))
                begun = True
                written += 1
                counts.add(c)
                bar.update(1)

            if slots == 1:
                await _one_by_one(todo, router, opts, write)
            else:
                await _side_by_side(todo, router, opts, slots, write)

    try:
        with settled():  # the sessions read, out of the collector's passes while they are routed
            if llm is not None:
                llm.run(main())
            else:
                asyncio.run(main())
        # a run that resumed none holds only the rows it counted as it wrote them; a resumed one's file is read back
        in_file = file_counts(out_path) if done else {k: getattr(counts, k) for k in FILE_COUNTS}
        write_json(record_path, record.model_copy(update={
            "complete": True,
            "counts": RunCounts(sessions=len(sessions), resumed_sessions=len(done), **in_file),
            "usage": usage_now(),
            "provenance": provenance(data=record.data_sha256, predictions=sha256_file(out_path)),
        }).dump())
    except BaseException as exc:
        # stopped (Ctrl-C, an error, at the end too): the calls it paid stay on the record, the
        # rows' own (written), the one it resumed, or, when there is none, one holding no row
        if isinstance(exc, KeyboardInterrupt):  # the line Ctrl-C ends with says what the file holds
            note_kept(exc, kept_in(len(done) + written, len(sessions), "session", out_path))
            if not begun and rows_path != out_path and out_path.exists():
                note_kept(exc, f"{out_path} holds the run --fresh was to replace, as it was")
        keep = None
        if llm is not None and (begun or previous is not None and not paid_before_rows(previous)):
            kept = start_record if begun else previous
            assert kept is not None
            write_json(record_path, kept.model_copy(update={"usage": usage_now()}).dump())
        elif llm is not None and rows_path == out_path and (earlier is not None or llm.stats.calls > spent_before["calls"]):
            keep = record_path  # resume counts them (--fresh: the run it replaces keeps its record)
            write_json(record_path, no_rows_record(start_record, len(sessions), usage_now()).dump())
        made.remove_files(keep)  # when it wrote no row: a file of no row and its record would only mislead
        if rows_path != out_path:
            rows_path.unlink(missing_ok=True)  # --fresh: the run it started over from is still in place
        raise
    return RouteResult(out_path, len(todo), len(done), sum(len(s.turns) for s in sessions), counts, timer.seconds,
                       in_file["errors"], stale)
