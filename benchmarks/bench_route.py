"""How fast routing runs, and what the model router's concurrency and hybrid's rules buy.

    python benchmarks/bench_route.py [--sessions 200] [--turns 40] [--model-sessions 20] [--delay 0.02]

Writes synthetic sessions (3 or 4 threads with distinctive words, vague follow-ups and
acknowledgements, one-offs) to a temporary folder, then:

1. times every model-free policy in both modes through the real runner (messages per second of
   wall time, and per second of this process's CPU time, which other load on the machine does
   not slow); ``local`` must route at least :data:`LOCAL_TARGET` messages a second;
2. routes a subset with the model router against the fake OpenAI-compatible server on loopback,
   which answers after ``--delay`` seconds, at concurrency 1 and 8 (speed-up ratio; sessions are
   sequential inside, so the gain comes from routing sessions side by side);
3. compares ``hybrid`` (rule fast path, and ``local`` fast path at ``--threshold``) with ``llm``:
   the share of messages that needed a call.

Prints one line per measurement; nothing is timed in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from interleave_bench.llm import LLM  # noqa: E402
from interleave_bench.llm.provider import fake_provider  # noqa: E402
from interleave_bench.llm.server import FakeServer  # noqa: E402
import interleave_bench.route.fake  # noqa: E402,F401  (the fake model's answers: the server here answers for it)
from interleave_bench.route.runner import RouteOptions, run_route  # noqa: E402

POOLS = {
    "A": ["kitchen", "cabinet", "countertop", "tiles", "sink", "paint", "oven"],
    "B": ["flight", "hotel", "lisbon", "museum", "train", "beach", "passport"],
    "C": ["receipt", "deduction", "tax", "form", "deadline", "refund", "accountant"],
    "D": ["squat", "running", "gym", "protein", "stretch", "marathon", "shoes"],
}
VAGUE = ["ok thanks", "and the other one?", "sounds good, what next", "yes please", "tell me more about that"]
#: chances of the synthetic plan: a one-off, a move to another started thread, a vague message
ONEOFF_P, MOVE_P, VAGUE_P = 0.05, 0.3, 0.35
#: messages a second the local router must reach (it is meant to run on every message for free)
LOCAL_TARGET = 5000
#: hybrid's local fast path threshold compared here
HYBRID_THRESHOLD = 0.9


def make_session(k: int, turns: int, rng: random.Random) -> dict:
    ids = list(POOLS)[: rng.randint(3, 4)]
    threads = [{"id": i, "title": f"{POOLS[i][0]} {POOLS[i][1]}", "domain": "x", "goal": f"the {POOLS[i][2]}",
                "description": f"about {POOLS[i][3]}"} for i in ids]
    out, started, cur = [], [], None
    for i in range(turns):
        if i and rng.random() < ONEOFF_P:
            out.append({"i": i, "text": f"what is {rng.randint(2, 99)} times {rng.randint(2, 99)}?",
                        "gold": {"thread": None, "action": "oneoff", "refs": []}, "style": "oneoff",
                        "judge": {"thread": "none"}, "ambiguous": False})
            continue
        if cur is None or (len(started) < len(ids) and rng.random() < MOVE_P):
            cur = ids[len(started)]
            started.append(cur)
        elif rng.random() < MOVE_P:
            cur = rng.choice(started)
        if rng.random() < VAGUE_P:
            text = rng.choice(VAGUE)
        else:
            text = "about the " + " and ".join(rng.sample(POOLS[cur], 2)) + ", what do you think"
        out.append({"i": i, "text": text, "gold": {"thread": cur, "action": "continue", "refs": []},
                    "style": "explicit", "judge": {"thread": cur}, "ambiguous": False})
    return {"session_id": f"b-{k:05d}", "version": "interleave-v0", "split": "dev" if k % 5 else "test",
            "lang": "en", "threads": threads, "turns": out}


def write_data(folder: Path, n: int, turns: int, seed: int = 0) -> Path:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "sessions.jsonl", "w", encoding="utf-8") as fh:
        for k in range(n):
            fh.write(json.dumps(make_session(k, turns, rng)) + "\n")
    return folder


def model_run(data: Path, policy: str, concurrency: int, delay: float, out: Path,
              threshold: float | None = None) -> tuple[float, list[dict]]:
    with FakeServer(delay=delay) as srv:
        llm = LLM(fake_provider(srv.url), cache=None, concurrency=concurrency)
        start = time.perf_counter()
        run_route(data, RouteOptions(mode="closed", policy=policy, threshold=threshold), llm=llm, out=out, fresh=True)
        seconds = time.perf_counter() - start
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return seconds, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--turns", type=int, default=40)
    ap.add_argument("--model-sessions", type=int, default=20)
    ap.add_argument("--delay", type=float, default=0.02, help="seconds the fake model takes per answer")
    args = ap.parse_args()
    os.environ.setdefault("INTERLEAVE_NO_PROGRESS", "1")
    with tempfile.TemporaryDirectory() as tmp:
        data = write_data(Path(tmp) / "data", args.sessions, args.turns)
        n = args.sessions * args.turns
        for mode in ("closed", "open"):
            for policy in ("oracle", "single", "always_new", "stay", "bm25", "local"):
                start, cpu = time.perf_counter(), time.process_time()
                run_route(data, RouteOptions(mode=mode, policy=policy), fresh=True)
                s, c = time.perf_counter() - start, time.process_time() - cpu
                line = f"{mode}-{policy}: {n:,} messages in {s:.2f}s ({n / s:,.0f} messages/s; {n / c:,.0f} per CPU second)"
                if policy == "local":
                    line += f" target {LOCAL_TARGET:,}/s: {'met' if n / s >= LOCAL_TARGET else 'met on CPU time only' if n / c >= LOCAL_TARGET else 'MISSED'}"
                print(line)
        small = write_data(Path(tmp) / "small", args.model_sessions, args.turns, seed=1)
        m = args.model_sessions * args.turns
        t1, _ = model_run(small, "llm", 1, args.delay, Path(tmp) / "c1.jsonl")
        t8, llm_rows = model_run(small, "llm", 8, args.delay, Path(tmp) / "c8.jsonl")
        print(f"llm (fake model, {args.delay * 1000:.0f} ms per answer): {m:,} messages; concurrency 1 {t1:.2f}s, "
              f"8 {t8:.2f}s; speed-up {t1 / t8:.1f}x")
        _, hybrid_rows = model_run(small, "hybrid", 8, args.delay, Path(tmp) / "h.jsonl")
        _, local_rows = model_run(small, "hybrid", 8, args.delay, Path(tmp) / "hl.jsonl", threshold=HYBRID_THRESHOLD)
        calls = sum("usage" in r for r in hybrid_rows) / len(hybrid_rows)
        local_calls = sum("usage" in r for r in local_rows) / len(local_rows)
        llm_calls = sum("usage" in r for r in llm_rows) / len(llm_rows)
        print(f"model calls per message: llm {llm_calls:.2f}, hybrid {calls:.2f} "
              f"({1 - calls / llm_calls:.0%} fewer calls from the rule fast path), hybrid --threshold "
              f"{HYBRID_THRESHOLD:g} {local_calls:.2f} ({1 - local_calls / llm_calls:.0%} fewer from the local fast path)")


if __name__ == "__main__":
    main()
