"""How fast the scorer is, and how much memory it holds: synthetic data, the real command end to end.

    python benchmarks/bench_score.py [--messages 500000 | --sessions 10000] [--turns 50] [--bootstrap 1000]
                                     [--mode closed] [--compare-reference PATH] [--repeat 3] [--no-split]

Writes its own synthetic data in a temporary folder (sessions with 3 to 5 threads, one-offs,
ambiguous messages, refs; predictions from a noisy router with clarifications, errors, missing
rows, usage and latency), byte-compiles the package (as installing it does), then runs
``interleave-bench score`` in a child process as a user runs it and prints wall and CPU seconds,
messages per second, the peak resident set size of its largest process and the peak of its
processes' summed proportional set size. ``--compare-reference PATH`` runs the scorer of another
checkout (a worktree of an earlier commit) on the same files in the same run, alternately with
ours ``--repeat`` times, and prints the ratio of the medians. Unless ``--no-split``, it then times
apart, in this process, the data file's pass, reading the predictions, scoring on the arrays, and
building the document (pooling and bootstrap).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: chances used by the synthetic data, loosely those of the generator's plan
ONEOFF_P = 0.05  # a one-off question
MOVE_P = 0.30  # a move to another thread
AMBIGUOUS_P = 0.08  # the independent reading disagrees
REFS_P = 0.12  # draws on another thread
#: chances used by the synthetic router
ROUTER_RIGHT_P = 0.80
ROUTER_CLARIFY_P = 0.03
ROUTER_ERROR_P = 0.01
ROUTER_MISSING_P = 0.01


def make_session(k: int, turns: int, rng: random.Random) -> dict:
    n_threads = rng.randint(3, 5)
    threads = [{"id": f"t{j + 1}", "title": f"Thread {j + 1}", "domain": "code", "goal": "", "description": ""}
               for j in range(n_threads)]
    started = ["t1"]
    out = []
    current = "t1"
    for i in range(turns):
        if i > 0 and len(started) < n_threads and rng.random() < 0.1:
            current = f"t{len(started) + 1}"
            started.append(current)
            action = "new"
        elif i > 0 and rng.random() < ONEOFF_P:
            out.append({"i": i, "text": f"one-off {i}", "gold": {"thread": None, "action": "oneoff", "refs": []},
                        "style": "oneoff", "tags": ["oneoff"], "judge": {"thread": "none"}, "ambiguous": False})
            continue
        elif i > 0 and len(started) > 1 and rng.random() < MOVE_P:
            current = rng.choice([t for t in started if t != current])
            action = "switch"
        else:
            action = "new" if i == 0 else "continue"
        ambiguous = rng.random() < AMBIGUOUS_P
        refs = [rng.choice(started)] if rng.random() < REFS_P and len(started) > 1 else []
        refs = [r for r in refs if r != current]
        style = rng.choice(["explicit", "cue", "pronoun", "implicit"])
        out.append({
            "i": i, "text": f"message {i} about {current}",
            "gold": {"thread": current, "action": action, "refs": refs},
            "style": style, "tags": [style] + (["cross"] if refs else []),
            "judge": {"thread": "ambiguous" if ambiguous else current}, "ambiguous": ambiguous,
        })
    return {"session_id": f"s-{k:05d}", "version": "interleave-v0", "split": "dev", "lang": rng.choice(["en", "zh"]),
            "persona": "", "threads": threads, "turns": out}


def make_rows(session: dict, rng: random.Random, mode: str) -> list[dict]:
    rows = []
    ids = [t["id"] for t in session["threads"]]
    for t in session["turns"]:
        x = rng.random()
        if x < ROUTER_MISSING_P:
            continue
        gold = t["gold"]["thread"]
        if x < ROUTER_MISSING_P + ROUTER_ERROR_P:
            pred = "ERROR"
        elif x < ROUTER_MISSING_P + ROUTER_ERROR_P + ROUTER_CLARIFY_P:
            pred = "CLARIFY"
        elif gold is not None and rng.random() < ROUTER_RIGHT_P:
            pred = gold
        else:
            pred = rng.choice(ids)
        if mode == "open" and pred not in ("ERROR", "CLARIFY"):
            pred = "topic-" + pred
        rows.append({"session_id": session["session_id"], "i": t["i"], "pred": pred, "mode": mode, "policy": "bench",
                     "refs": t["gold"]["refs"][:1], "usage": {"input": 900 + t["i"], "output": 20, "cache_hit": 512},
                     "elapsed_ms": 300 + rng.random() * 500, "via": "llm"})
    return rows


def write_data(folder: Path, sessions: int, turns: int, mode: str, seed: int) -> tuple[Path, Path, int]:
    rng = random.Random(seed)
    data = folder / "sessions.jsonl"
    pred = folder / "predictions" / f"{mode}-bench.jsonl"
    pred.parent.mkdir(parents=True)
    messages = 0
    with open(data, "w", encoding="utf-8") as fd, open(pred, "w", encoding="utf-8") as fp:
        for k in range(sessions):
            s = make_session(k, turns, rng)
            messages += len(s["turns"])
            fd.write(json.dumps(s) + "\n")
            for row in make_rows(s, rng, mode):
                fp.write(json.dumps(row) + "\n")
    return data, pred, messages


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants, as /proc lists them now."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except OSError:
            pass
    return out


def _pss_mb(pids: list[int]) -> float:
    """The summed proportional set size of ``pids`` (pages shared between them counted once), MB."""
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total / 1024


def run_cli(root: Path, argv: list[str], sample: bool = False) -> dict:
    """Run ``interleave-bench`` from the code at ``root`` in a child process; wall and CPU seconds,
    peak resident set size (MB, the largest process of the command, as the kernel counts it),
    exit code, and when ``sample`` the peak of the command's processes' summed proportional set
    size (MB, sampled every 20 ms: reading it costs the kernel time, so such a run is not timed)."""
    import threading

    env = dict(os.environ, PYTHONPATH=str(root))
    t0 = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "interleave_bench", *argv], env=env, cwd=str(root),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0.0]
    done = threading.Event()

    def sampling() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], _pss_mb(_tree(child.pid)))

    sampler = threading.Thread(target=sampling, daemon=True)
    if sample:
        sampler.start()
    stderr = child.stderr.read() if child.stderr else b""
    done.set()
    if sample:
        sampler.join()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024, "pss_mb": peak[0],
            "code": child.returncode, "stderr": stderr.decode("utf-8", "replace").strip().splitlines()[-1:]}


def split_timing(data: Path, pred: Path, bootstrap: int, mode: str) -> dict[str, float]:
    """Seconds spent, each timed on its own in this process with the cyclic collector paused as
    the command pauses it: the data file's pass (full check, fingerprint, arrays), reading the predictions into arrays, scoring on the
    arrays, and building the document (pooling, bootstrap)."""
    from interleave_bench.score.block import score_block
    from interleave_bench.score.columnar import PooledRun, PredictionStream
    from interleave_bench.score.datafile import DataPass
    from interleave_bench.heap import paused_gc
    from interleave_bench.score.run import NO_PREDICTIONS, LeftOut, score_document

    with paused_gc():
        t0 = time.perf_counter()
        blocks = list(DataPass(data).blocks())
        data_pass = time.perf_counter() - t0
        t0 = time.perf_counter()
        stream = PredictionStream(pred)
        pairs = [(cols, stream.columns(stream.take(cols), cols)) for cols in blocks]
        stream.rest()
        read = time.perf_counter() - t0
        t0 = time.perf_counter()
        pooled = PooledRun()
        for cols, preds in pairs:
            pooled.add(score_block(cols, preds, "dev", mode))
        run = pooled.finish(rows=stream.rows, predictions_sha256=stream.sha256(), scored_mode=mode, **stream.first)
        score = time.perf_counter() - t0
        del blocks, pairs
        t0 = time.perf_counter()
        score_document(system="bench", mode=mode, split="dev", cluster=run.cluster, policy=run.policy, model=run.model,
                       matrix=run.matrix, latency=run.latency, latency_rows=run.latency_rows, bcubed=run.bcubed, breakdown=run.breakdown,
                       rows=run.rows, outside=run.outside, left_out=[LeftOut(NO_PREDICTIONS, s) for s in run.unscored],
                       session_ids=run.session_ids, langs=run.langs, bootstrap=bootstrap,
                       seed=0, price=None, provenance={})
        document = time.perf_counter() - t0
    return {"data": data_pass, "read": read, "score": score, "document": document}


def compile_tree(root: Path) -> None:
    """Byte-compile a checkout's package, as installing it does (so neither side of a comparison
    pays for compiling its sources on every run)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "interleave_bench")], check=True,
                   stdout=subprocess.DEVNULL)


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--messages", type=int, help="about this many messages (sets --sessions from --turns)")
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--mode", choices=("closed", "open"), default="closed")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compare-reference", metavar="PATH",
                    help="also time the scorer of the checkout at PATH (say, a worktree of main) on the same files")
    ap.add_argument("--no-split", action="store_true", help="skip timing reading and scoring apart")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each scorer, alternately; medians are reported")
    args = ap.parse_args(argv)
    if args.messages:
        args.sessions = max(1, args.messages // args.turns)
    root = Path(__file__).resolve().parent.parent

    with tempfile.TemporaryDirectory(prefix="bench-score-") as tmp:
        t0 = time.perf_counter()
        data, pred, messages = write_data(Path(tmp), args.sessions, args.turns, args.mode, args.seed)
        made = time.perf_counter() - t0
        print(f"synthetic data: {args.sessions:,} sessions, {messages:,} messages ({args.mode} mode; "
              f"made in {made:.1f}s, not counted)", flush=True)
        cli = ["score", str(data), str(pred), "--bootstrap", str(args.bootstrap)]
        roots = [root] + ([Path(args.compare_reference).resolve()] if args.compare_reference else [])
        for r in roots:
            compile_tree(r)
        runs: list[list[dict]] = [[] for _ in roots]
        for _ in range(args.repeat):  # alternately, so both meet the same machine
            for k, r in enumerate(roots):
                got = run_cli(r, cli)
                if got["code"] != 0:
                    print(f"{'reference ' if k else ''}score exited {got['code']}: {got['stderr']}", file=sys.stderr)
                    return 1
                runs[k].append(got)
        summary = [{key: median([g[key] for g in rs]) for key in ("wall", "cpu", "rss_mb")} for rs in runs]
        for k, r in enumerate(roots):  # one more run each, for the summed memory of all its processes
            summary[k]["pss_mb"] = run_cli(r, cli, sample=True)["pss_mb"]
        ours = summary[0]
        print(f"score end to end (CLI, {args.bootstrap:,} resamples; median of {args.repeat}): {ours['wall']:.2f}s wall, "
              f"{ours['cpu']:.2f}s CPU, {messages / ours['wall']:,.0f} messages/s, peak RSS {ours['rss_mb']:,.0f} MB "
              f"(largest process), peak PSS {ours['pss_mb']:,.0f} MB (all its processes)", flush=True)
        if args.compare_reference:
            ref = summary[1]
            print(f"reference ({args.compare_reference}): {ref['wall']:.2f}s wall, {ref['cpu']:.2f}s CPU, "
                  f"{messages / ref['wall']:,.0f} messages/s, peak RSS {ref['rss_mb']:,.0f} MB, peak PSS {ref['pss_mb']:,.0f} MB")
            print(f"ratio: {ref['wall'] / ours['wall']:.2f}x the reference's messages per second "
                  f"({ref['cpu'] / ours['cpu']:.2f}x by CPU time), {ours['rss_mb'] / ref['rss_mb']:.2f}x its peak RSS",
                  flush=True)
        if not args.no_split:
            sys.path.insert(0, str(root))
            parts = split_timing(data, pred, args.bootstrap, args.mode)
            total = sum(parts.values())
            print(f"  data file: check, fingerprint, arrays: {parts['data']:.2f}s "
                  f"({parts['data'] / total:.0%})")
            print(f"  read predictions into arrays: {parts['read']:.2f}s ({parts['read'] / total:.0%})")
            print(f"  score on the arrays:          {parts['score']:.2f}s ({parts['score'] / total:.0%})")
            print(f"  document ({args.bootstrap:,} resamples):  {parts['document']:.2f}s ({parts['document'] / total:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
