"""Chaos: every model-calling command under seeded faults and seeded kill -9, resumed to the end.

    python benchmarks/chaos.py [--sessions 3] [--rate 0.2] [--kills 2] [--seed 7] [--only route-llm]

For each command (``generate``, ``route`` with the ``llm`` and ``hybrid`` policies, ``mid-reply``,
``facts`` on offline v1 data; more are added by name to :data:`COMMANDS`), against the fake
OpenAI-compatible server on loopback:

1. a clean run (no faults) gives the reference output and the number of requests it paid for;
2. a chaos run: a share ``--rate`` of requests gets a fault of every kind the server knows (429,
   500, slow, a malformed or truncated 200 body, a garbage answer, a dropped connection, a negative
   usage, ``content: null``, text cut at the token limit; not the 401 echoing the key; no garbage
   for a command's free-text requests, such as facts' answers and summaries, where nonsense is just
   a wrong answer no client can tell from a model's, nor for generate's leak rewrite, whose unusable
   answer the writer keeps by design as the message's outcome, tagged ``leak``), and the
   process is killed with SIGKILL when the server has seen a seeded number of requests, ``--kills``
   times; after each kill, and after each run, the same command is run again (no ``--fresh``)
   until it exits 0 with no ``ERROR`` rows, failed sessions or failed calls left.

Prints one row per command: requests paid (answers the server produced, lost bodies included)
in the chaos run against the clean run, rows differing from the clean run's (latency aside; and
beyond usage, since a garbage answer followed by a corrective retry honestly costs more), partial
lines seen in any output after a kill or at the end, tracebacks or internal errors on stderr, and
the runs it took. Exit code 1 when any command ends with rows or decisions unlike the clean run's,
a partial line or a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interleave_bench.facts.prompts import ANSWER_KIND, SUMMARY_KIND  # noqa: E402
from interleave_bench.llm.server import FAULT_KINDS, UNUSABLE_KINDS, FakeServer  # noqa: E402
import interleave_bench.facts.fake  # noqa: E402,F401  (the fake model's answers: the server here answers for it)
import interleave_bench.generate.fake  # noqa: E402,F401  (the fake model's answers: the server here answers for it)
import interleave_bench.midreply.fake  # noqa: E402,F401  (the fake model's answers: the server here answers for it)
import interleave_bench.route.fake  # noqa: E402,F401  (the fake model's answers: the server here answers for it)

#: the faults drawn: every kind the server knows but the echoed key (a 401, which no retry mends),
#: the unusable 200 answers (negative usage, no text, text cut at the token limit) included
CHAOS_KINDS = FAULT_KINDS + UNUSABLE_KINDS
#: the model name the runs ask for (the fake server answers any name)
MODEL = "chaos-model"
#: runs of one command after which the chaos run is declared stuck
MAX_RUNS = 12
#: seconds between two looks at the server's request count while waiting for a kill point
POLL_S = 0.002
#: row fields that measure time, not behaviour
LATENCY_FIELDS = ("elapsed_ms", "latency_ms")
#: row fields that count what a call cost (a garbage answer and its corrective retry cost more)
USAGE_FIELDS = ("usage",)


@dataclass
class Job:
    """How to run one command: its arguments for an output folder, and how to read its result."""

    name: str
    argv: Callable[[Path, Path], list[str]]  # (data folder, output folder) -> arguments
    rows: Callable[[Path], dict[Any, dict[str, Any]]]  # output folder -> rows by key
    unfinished: Callable[[Path, str], int]  # (output folder, stderr) -> rows or sessions still failed
    #: (work root, the generated v0 data) -> the data this command runs on, when it needs other data
    data: Optional[Callable[[Path, Path], Path]] = None
    #: request kinds given no garbage answer: free text, where garbage is indistinguishable from a
    #: model's answer, and requests whose unusable answer the command keeps as an outcome
    free_text: tuple[str, ...] = ()


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _generate_rows(out: Path) -> dict[Any, dict[str, Any]]:
    return {s["session_id"]: s for s in _jsonl(out / "gen" / "sessions.jsonl")}


def _generate_unfinished(out: Path, err: str) -> int:
    manifest = out / "gen" / "manifest.json"
    if not manifest.exists():
        return -1
    return len(json.loads(manifest.read_text(encoding="utf-8")).get("failed") or [])


def _route_rows(out: Path) -> dict[Any, dict[str, Any]]:
    return {(r["session_id"], r["i"]): r for r in _jsonl(out / "preds.jsonl")}


def _route_unfinished(out: Path, err: str) -> int:
    return sum(r["pred"] == "ERROR" for r in _route_rows(out).values())


def _midreply_rows(out: Path) -> dict[Any, dict[str, Any]]:
    return {r["case_id"]: r for r in _jsonl(out / "mid-reply.jsonl")}


def _midreply_unfinished(out: Path, err: str) -> int:
    return sum(r["via"] in ("error", "unparsable") for r in _midreply_rows(out).values())


def _facts_key(r: dict[str, Any]) -> tuple[Any, ...]:
    kind = r["kind"]
    if kind == "answer":
        return kind, r["session_id"], r["probe"], r["strategy"]
    if kind == "delivery":
        return kind, r["session_id"], r["probe"], r["source"], r["key"]
    if kind == "route":
        return kind, r["session_id"], r["turn"], r.get("probe")
    return kind, r["session_id"]


def _facts_rows(out: Path) -> dict[Any, dict[str, Any]]:
    return {_facts_key(r): r for r in _jsonl(out / "facts.jsonl")}


def _facts_unfinished(out: Path, err: str) -> int:
    # error rows, and route rows whose answers named no topic (a rerun asks again)
    return sum(r["kind"] == "error" or (r["kind"] == "route" and bool(r.get("error"))) for r in _facts_rows(out).values())


def _v1_offline(sessions: int) -> Callable[[Path, Path], Path]:
    """Offline v1 data (no model: the faults never touch it) under the work root, made once."""

    def make(root: Path, _v0: Path) -> Path:
        folder = root / "v1-offline"
        if not (folder / "sessions.jsonl").exists():
            env = {**os.environ, "PYTHONPATH": str(ROOT), "INTERLEAVE_NO_PROGRESS": "1"}
            subprocess.run([sys.executable, "-m", "interleave_bench", "generate", "--dataset", "v1", "--offline",
                            "--sessions", str(sessions), "--out", str(folder)],
                           env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return folder

    return make


def _route_job(name: str, mode: str, policy: str) -> Job:
    return Job(
        name,
        lambda data, out: ["route", str(data), "--mode", mode, "--policy", policy, "--model", MODEL,
                           "--out", str(out / "preds.jsonl")],
        _route_rows,
        _route_unfinished,
    )


def commands(sessions: int) -> dict[str, Job]:
    """The commands by name; a new model-calling command joins by adding its :class:`Job` here."""
    return {
        "generate": Job(
            "generate",
            lambda data, out: ["generate", "--sessions", str(sessions), "--model", MODEL, "--out", str(out / "gen")],
            _generate_rows,
            _generate_unfinished,
            # the leak rewrite is a vague message's one retry: an unusable answer keeps the message,
            # tagged leak, and stays cached so a rerun reproduces it (docs/generate.md)
            free_text=("rewrite",),
        ),
        "route-llm": _route_job("route-llm", "closed", "llm"),
        "route-hybrid": _route_job("route-hybrid", "open", "hybrid"),
        "mid-reply": Job(
            "mid-reply",
            lambda data, out: ["mid-reply", "--model", MODEL, "--out", str(out / "mid-reply.jsonl")],
            _midreply_rows,
            _midreply_unfinished,
        ),
        "facts": Job(
            "facts",
            lambda data, out: ["facts", str(data), "--model", MODEL, "--out", str(out / "facts.jsonl")],
            _facts_rows,
            _facts_unfinished,
            _v1_offline(sessions),
            (ANSWER_KIND, SUMMARY_KIND),
        ),
    }


#: extra commands by name (``facts``...): ``COMMANDS[name] = Job(...)`` before :func:`main` runs
COMMANDS: dict[str, Job] = {}


@dataclass
class Outcome:
    paid: int = 0
    runs: int = 0
    kills: int = 0
    partial: int = 0
    tracebacks: int = 0
    unfinished: int = 0
    rows: dict[Any, dict[str, Any]] = field(default_factory=dict)


def _env(server: FakeServer, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DEEPSEEK_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "EVAL_EXTRA_BODY", "HF_TOKEN")}
    env.update(PYTHONPATH=str(ROOT), OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-chaos-not-a-key",
               INTERLEAVE_CACHE=str(cache), INTERLEAVE_NO_PROGRESS="1")
    return env


def _paid(server: FakeServer) -> int:
    """Answers the server produced: completions (garbage ones too) and bodies cut in half."""
    return sum(1 for e in server.log if e.status in (200, "truncated"))


def _partial_lines(out: Path) -> int:
    """Files under ``out`` whose last line is incomplete."""
    n = 0
    for p in out.rglob("*.jsonl"):
        data = p.read_bytes()
        n += bool(data) and not data.endswith(b"\n")
    return n


def _run(argv: list[str], env: dict[str, str], server: FakeServer, kill_at: int | None) -> tuple[int | None, str]:
    """One run; killed with SIGKILL once the server has seen ``kill_at`` more requests. Returns
    ``(exit code or None when killed, stderr)``."""
    proc = subprocess.Popen([sys.executable, "-m", "interleave_bench", *argv], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if kill_at is not None:
        kill_at += server.calls  # counted from this run's start
        while proc.poll() is None and server.calls < kill_at:
            time.sleep(POLL_S)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
            return None, err
    _, err = proc.communicate()
    return proc.returncode, err


def run_job(job: Job, data: Path, work: Path, *, rate: float, kills: int, seed: int, clean_paid: int | None) -> Outcome:
    """A clean run (``clean_paid`` None) or a chaos run with kills, resumed until finished."""
    out, cache = work / "out", work / "cache"
    out.mkdir(parents=True)
    res = Outcome()
    with FakeServer() as server:
        env = _env(server, cache)
        rng = random.Random(f"{seed}:{job.name}")
        kill_points: list[int] = []
        if clean_paid is not None:
            server.chaos(rate, seed, CHAOS_KINDS, delay=0.05, free_text=job.free_text)
            kill_points = [rng.randint(1, max(1, clean_paid // 2)) for _ in range(kills)]
        argv = job.argv(data, out)
        while True:
            res.runs += 1
            kill_at = kill_points.pop(0) if kill_points else None
            code, err = _run(argv, env, server, kill_at)
            res.tracebacks += ("Traceback" in err) + ("internal error" in err)
            res.partial += _partial_lines(out)
            if code is None:
                res.kills += 1
                continue
            res.unfinished = job.unfinished(out, err)
            if code == 0 and res.unfinished == 0:
                break
            if res.runs >= MAX_RUNS:
                print(f"{job.name}: still unfinished after {res.runs} runs (exit {code}): {err.strip()[-300:]}",
                      file=sys.stderr)
                break
        res.paid = _paid(server)
    res.rows = job.rows(out)
    return res


def _without(row: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in fields}


def differing(a: dict[Any, dict[str, Any]], b: dict[Any, dict[str, Any]], ignore: tuple[str, ...]) -> int:
    """Keys whose rows differ (or exist on one side only), ``ignore`` fields aside."""
    return sum(1 for k in set(a) | set(b)
               if k not in a or k not in b or _without(a[k], ignore) != _without(b[k], ignore))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=3, help="sessions generated, then routed (default 3)")
    ap.add_argument("--rate", type=float, default=0.2, help="share of requests given a fault (default 0.2)")
    ap.add_argument("--kills", type=int, default=2, help="kill -9 points per command (default 2)")
    ap.add_argument("--seed", type=int, default=7, help="seed of the faults and kill points (default 7)")
    ap.add_argument("--only", action="append", metavar="NAME", help="run only this command (repeatable)")
    args = ap.parse_args(argv)
    jobs = {**commands(args.sessions), **COMMANDS}
    names = args.only or list(jobs)
    unknown = [n for n in names if n not in jobs]
    if unknown:
        ap.error(f"unknown command {', '.join(unknown)}; known: {', '.join(jobs)}")
    started = time.perf_counter()
    header = ["command", "paid (chaos)", "paid (clean)", "extra paid", "rows", "rows ≠ clean", "beyond usage",
              "partial lines", "tracebacks", "kills", "runs"]
    table: list[list[str]] = []
    bad = False
    with tempfile.TemporaryDirectory(prefix="interleave-chaos-") as tmp:
        root = Path(tmp)
        # the data every route runs on: a clean generate run (it is also generate's reference)
        gen = jobs["generate"]
        clean_gen = run_job(gen, root, root / "clean-generate", rate=0, kills=0, seed=args.seed, clean_paid=None)
        data = root / "clean-generate" / "out" / "gen"
        for name in names:
            job = jobs[name]
            job_data = job.data(root, data) if job.data is not None else data
            clean = clean_gen if name == "generate" else run_job(
                job, job_data, root / f"clean-{name}", rate=0, kills=0, seed=args.seed, clean_paid=None)
            chaos = run_job(job, job_data, root / f"chaos-{name}", rate=args.rate, kills=args.kills, seed=args.seed,
                            clean_paid=clean.paid)
            diff = differing(clean.rows, chaos.rows, LATENCY_FIELDS)
            diff_beyond = differing(clean.rows, chaos.rows, LATENCY_FIELDS + USAGE_FIELDS)
            bad |= bool(diff_beyond or chaos.partial or chaos.tracebacks or chaos.unfinished)
            table.append([name, str(chaos.paid), str(clean.paid), f"{chaos.paid - clean.paid:+d}", str(len(chaos.rows)),
                          str(diff), str(diff_beyond), str(chaos.partial), str(chaos.tracebacks), str(chaos.kills),
                          str(chaos.runs)])
            print(f"{name}: done", file=sys.stderr)
    print(f"chaos: {args.rate:.0%} faults ({', '.join(CHAOS_KINDS)}), {args.kills} kill -9 per command, seed {args.seed}, "
          f"{args.sessions} sessions")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in table:
        print("| " + " | ".join(row) + " |")
    print(f"done: chaos: {len(table)} commands; {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
