"""How fast generation runs: plans, the offline path, and the model path's concurrency.

    python benchmarks/bench_generate.py [--plans 2000] [--sessions 200] [--model-sessions 8] [--delay 0.02]

1. draws ``--plans`` seeded plans (shape and rows only): plans per second;
2. generates ``--sessions`` offline sessions end to end into a temporary folder (templates, rule
   reader, resume bookkeeping, final file and manifest): sessions and messages per second, and the
   time 50 sessions take (the acceptance target is under a minute on 2 cores), for v0 and for v1;
3. generates ``--model-sessions`` sessions through the model path against the fake server on
   loopback, which answers after ``--delay`` seconds, at concurrency 1 and 8, each with a fresh
   cache: the speed-up ratio (sessions run side by side; inside a session steps are sequential).

Prints one line per measurement; nothing is timed in the test suite.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from interleave_bench.generate import GenerateConfig, generate  # noqa: E402
from interleave_bench.generate.plan import derive_seed, draw_shape, plan_session, skeleton_threads  # noqa: E402
from interleave_bench.llm import LLM  # noqa: E402
from interleave_bench.llm.cache import ResponseCache  # noqa: E402
from interleave_bench.llm.provider import fake_provider  # noqa: E402
from interleave_bench.llm.server import FakeServer  # noqa: E402


def bench_plans(n: int) -> None:
    start = time.perf_counter()
    rows = 0
    for k in range(n):
        shape = draw_shape(derive_seed(1, k, "shape"))
        rows += len(plan_session(skeleton_threads(shape), shape.n_turns, derive_seed(1, k, "plan")))
    s = time.perf_counter() - start
    print(f"plans: {n} plans, {rows:,} rows in {s:.2f}s: {n / s:,.0f} plans/s")


def bench_offline(n: int, tmp: Path, dataset: str = "v0") -> None:
    start = time.perf_counter()
    cpu = time.process_time()
    result = generate(n, tmp / f"offline-{dataset}", config=GenerateConfig(dataset=dataset, seed=1))
    s = time.perf_counter() - start
    c = result.counts
    print(f"offline {dataset}: {c['sessions']} sessions, {c['messages']:,} messages in {s:.2f}s wall / "
          f"{time.process_time() - cpu:.2f}s CPU: {c['sessions'] / s:,.1f} sessions/s, {c['messages'] / s:,.0f} messages/s; "
          f"50 sessions take about {50 * s / max(1, c['sessions']):.1f}s")


def bench_model(n: int, delay: float, tmp: Path) -> None:
    times = {}
    with FakeServer(delay=delay) as srv:
        for conc in (1, 8):
            cache = ResponseCache(tmp / f"cache-{conc}")
            llm = LLM(fake_provider(srv.url), cache=cache, concurrency=conc)
            config = GenerateConfig(seed=1)
            srv.reset_counts()
            start = time.perf_counter()
            result = generate(n, tmp / f"model-{conc}", config=config, llm=llm, concurrency=conc)
            times[conc] = time.perf_counter() - start
            cache.close()
            print(f"model path, concurrency {conc}: {result.counts['sessions']} sessions, {srv.completions} calls "
                  f"in {times[conc]:.2f}s (max {srv.max_in_flight} in flight, {delay * 1000:.0f} ms per answer)")
    print(f"model path: concurrency 8 is {times[1] / times[8]:.1f}x faster than 1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plans", type=int, default=2000)
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--model-sessions", type=int, default=8)
    ap.add_argument("--delay", type=float, default=0.02)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        bench_plans(args.plans)
        bench_offline(args.sessions, tmp)
        bench_offline(args.sessions, tmp, "v1")  # replies, fact steps with the rule check, probes
        if args.model_sessions:
            bench_model(args.model_sessions, args.delay, tmp)


if __name__ == "__main__":
    main()
