"""How fast the scorer is: synthetic sessions and predictions, the real scorer end to end.

    python benchmarks/bench_score.py [--sessions 10000] [--turns 50] [--bootstrap 1000] [--mode closed]

Writes its own synthetic data in a temporary folder (sessions with 3 to 5 threads, one-offs,
ambiguous messages, refs; predictions from a noisy router with clarifications, errors, missing
rows, usage and latency), then times ``interleave-bench score`` as a user runs it, and the two
halves apart: reading and validating the files, and scoring (replay, pooling, bootstrap). Prints
seconds (wall and CPU) and messages per second; the target is under 30 s for 10,000 sessions of 50 messages
with 1,000 resamples on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--mode", choices=("closed", "open"), default="closed")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    from interleave_bench.cli import main as cli_main
    from interleave_bench.score.read import paused_gc, read_predictions_fast, read_sessions_fast
    from interleave_bench.score.routing import derive, stats_matrix
    from interleave_bench.score.run import score_predictions
    from interleave_bench.score.stats import bootstrap_sums

    with tempfile.TemporaryDirectory(prefix="bench-score-") as tmp:
        t0 = time.perf_counter()
        data, pred, messages = write_data(Path(tmp), args.sessions, args.turns, args.mode, args.seed)
        made = time.perf_counter() - t0

        t0, c0 = time.perf_counter(), time.process_time()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = cli_main(["score", str(data), str(pred), "--bootstrap", str(args.bootstrap)])
        total, cpu = time.perf_counter() - t0, time.process_time() - c0
        if code != 0:
            print(f"score exited {code}", file=sys.stderr)
            return 1

        # the halves as the command runs them: with the cyclic collector paused (the command's edge)
        with paused_gc():
            t0 = time.perf_counter()
            sessions = read_sessions_fast(data)
            read_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            rows, lines = read_predictions_fast(pred)
            read_p = time.perf_counter() - t0
            t0 = time.perf_counter()
            run = score_predictions(sessions, rows, lines=lines, bootstrap=0)
            replay = time.perf_counter() - t0
            t0 = time.perf_counter()
            derive(bootstrap_sums(stats_matrix(run.scores), args.bootstrap, 0))
            resampled = time.perf_counter() - t0

    print(f"synthetic data: {args.sessions:,} sessions, {messages:,} messages, {len(rows):,} rows "
          f"({args.mode} mode; made in {made:.1f}s, not counted)")
    print(f"score end to end (CLI, {args.bootstrap:,} resamples): {total:.2f}s wall, {cpu:.2f}s CPU, "
          f"{messages / total:,.0f} messages/s")
    print(f"  read + validate sessions:    {read_s:.2f}s ({read_s / total:.0%})")
    print(f"  read + validate predictions: {read_p:.2f}s ({read_p / total:.0%})")
    print(f"  index rows, replay and pool (no resampling): {replay:.2f}s, {messages / replay:,.0f} messages/s")
    print(f"  bootstrap ({args.bootstrap:,} resamples of {args.sessions:,} sessions): {resampled:.2f}s")
    print(f"target: under 30 s for 10,000 x 50 messages with 1,000 resamples; "
          f"this run scaled to that size: {total * 500_000 / messages:.1f}s wall, {cpu * 500_000 / messages:.1f}s CPU "
          f"(wall time grows when other work shares the machine; CPU time does not)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
