"""How fast routing runs, and what the model router's concurrency and hybrid's rules buy.

    python benchmarks/bench_route.py [--sessions 200] [--turns 40] [--model-sessions 20] [--delay 0.02]
    python benchmarks/bench_route.py --corpus sgd|irc|offline|model-style [--data DIR] [--repeat 5] [--against TREE]
    python benchmarks/bench_route.py --corpus sgd|irc|offline|model-style [--data DIR] --instructions [--against TREE]

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

With ``--corpus`` it times the ``local`` router instead on the dev sessions of realistic data: the
SGD dev split (``--data``: the corpus folder, imported here, or a data folder of ``import sgd``),
the IRC disentanglement dev logs (``--data`` likewise; open mode only), offline sessions
(generated here: :data:`OFFLINE_SESSIONS` of seed :data:`OFFLINE_SEED`) or the sessions written
by hand in a model writer's manner (:data:`MODEL_STYLE`, longer and less regular messages than the
offline writer's; ``benchmarks/model_style.py``). Each measurement is a
fresh process (the router's caches start cold, as in a run) that routes every dev session through
the runner's per-session loop (``route_session``: reading the data and writing the file are not
timed) and takes the CPU time (``time.process_time``). ``--repeat N`` measurements per mode, best
of N. ``--against TREE`` (a checkout of the project, such as ``git worktree add /tmp/old main``)
alternates each measurement with one of that tree's code on the same sessions, and prints the
ratio of the two bests and whether every prediction row (decisions and confidences) is
byte-identical between the two.

On a machine shared with other work CPU time swings by a third within minutes; ``--instructions``
counts instructions instead, which that work does not change: each measurement runs under
valgrind's callgrind (``PYTHONHASHSEED=0``) twice, once routing and once stopping before it, and
the difference is what routing took (neither writes the rows: one more run, not counted, writes
them for the comparison). One measurement per tree and mode: a count is not exact from run to
run (where objects land in memory changes the work of sets and dicts: one tree counted 3,413M
and 3,449M routing IRC dev), so a ratio within about 1% of 1 is no change.

Options that apply to ``--corpus`` alone, or an ``--against`` folder that holds no project, stop
the script with one line (exit 2).

Prints one line per measurement; nothing is timed in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn, Optional

ROOT = Path(__file__).resolve().parent.parent
#: the project tree whose code is measured: this one, or (in a measuring child) ``--tree``'s
TREE = Path(sys.argv[sys.argv.index("--tree") + 1]) if "--tree" in sys.argv[:-1] else ROOT
sys.path.insert(0, str(TREE))

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
#: the realistic corpora ``--corpus`` reads, and the modes each is routed in (IRC: real chat logs, open only)
CORPUS_MODES = {"sgd": ("closed", "open"), "irc": ("open",), "offline": ("closed", "open"),
                "model-style": ("closed", "open")}
#: the sessions ``--corpus model-style`` reads by default
MODEL_STYLE = ROOT / "benchmarks" / "data" / "model-style"
#: offline sessions generated for ``--corpus offline`` (four in five are dev), and their seed: not
#: the fit's (1) nor the demo's (0)
OFFLINE_SESSIONS, OFFLINE_SEED = 100, 3


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


def corpus_sessions(corpus: str, data: str | None, tmp: Path) -> Path:
    """A sessions file of ``corpus``'s dev sessions, imported or generated into ``tmp``."""
    from interleave_bench.io import iter_sessions, sessions_file

    if corpus == "offline":
        from interleave_bench.generate.runner import generate_offline

        source = Path(generate_offline(OFFLINE_SESSIONS, tmp / "offline", seed=OFFLINE_SEED))
    elif corpus == "model-style":
        source = sessions_file(data or MODEL_STYLE)
    else:
        if data is None:
            fail(f"--corpus {corpus} needs --data (the corpus folder or an imported data folder)")
        folder = Path(data)
        if folder.is_dir() and not (folder / "sessions.jsonl").exists():
            if corpus == "sgd":
                from interleave_bench.sgd import import_sgd as importer
            else:
                from interleave_bench.irc import import_irc as importer
            importer(folder, tmp / corpus)
            folder = tmp / corpus
        source = sessions_file(folder)
    lines = [line for line in source.read_text(encoding="utf-8").splitlines(keepends=True) if line.strip()]
    out = tmp / f"{corpus}-dev.jsonl"
    out.write_text("".join(line for line, s in zip(lines, iter_sessions(source)) if s.split == "dev"), encoding="utf-8")
    return out


def fail(message: str) -> NoReturn:
    """Stop with one line on stderr and exit code 2 (bad options or a missing tool)."""
    print(f"bench_route: {message}", file=sys.stderr)
    raise SystemExit(2)


def measure(sessions: Path, mode: str, rows_out: Optional[Path], route: bool = True) -> dict:
    """Route every session of ``sessions`` with a fresh ``local`` router (this process's code) and
    time it on CPU; the rows go to ``rows_out`` (None: nowhere, as an instruction count routes).
    Without ``route``, everything but the routing (what an instruction count subtracts)."""
    import asyncio

    from interleave_bench.io import iter_sessions
    from interleave_bench.route.local import LocalRouter
    from interleave_bench.route.runner import route_session

    todo = list(iter_sessions(sessions))
    opts = RouteOptions(mode=mode, policy="local")
    router = LocalRouter()
    rows: list[dict] = []

    async def main() -> None:
        for s in todo:
            rows.extend((await route_session(s, router, opts))[0])

    try:  # as the runner routes a file's sessions (a tree older than it has no such step)
        from interleave_bench.heap import settled
    except ImportError:
        from contextlib import nullcontext as settled
    cpu = time.process_time()
    if route:
        with settled():
            asyncio.run(main())
    cpu = time.process_time() - cpu
    if rows_out is not None:
        rows_out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return {"messages": len(rows), "cpu": cpu}


def child(tree: Path, sessions: Path, mode: str, rows_out: Optional[Path], *, route: bool = True,
          count: bool = False) -> dict:
    """:func:`measure` in a fresh process running ``tree``'s code; with ``count``, under callgrind,
    adding the ``instructions`` it counted."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--measure", mode, "--sessions-file", str(sessions),
           "--tree", str(tree)] + ([] if route else ["--no-routing"]) + ([] if rows_out is None else ["--rows", str(rows_out)])
    env = None
    if count:
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + cmd
        env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if count:
        found = re.search(r"Collected : (\d+)", done.stderr)
        if found is None:
            fail(f"callgrind printed no instruction count: {done.stderr.strip()[-300:]}")
        out["instructions"] = int(found.group(1))
    return out


def instructions(tree: Path, sessions: Path, mode: str, rows_out: Path) -> dict:
    """The instructions routing ``sessions`` took with ``tree``'s code (counted with routing, less
    counted without; neither writes the rows), and the messages routed; the rows go to ``rows_out``
    from one more run, not counted."""
    full = child(tree, sessions, mode, None, count=True)
    bare = child(tree, sessions, mode, None, route=False, count=True)
    child(tree, sessions, mode, rows_out)
    return {"messages": full["messages"], "instructions": full["instructions"] - bare["instructions"]}


def verdict(same: bool) -> str:
    """What the comparison of two trees says of their prediction rows (decisions and confidences)."""
    return f"predictions {'byte-identical' if same else 'DIFFER'}"


def count_main(args: argparse.Namespace, sessions: Path, tmp: Path, trees: list[tuple[str, Path]]) -> None:
    """``--instructions``: one count per tree and mode, and their ratio."""
    against = dict(trees).get("against")
    for mode in CORPUS_MODES[args.corpus]:
        got = {}
        for name, tree in trees:
            out = tmp / f"rows-{name}-{mode}.jsonl"
            got[name] = instructions(tree, sessions, mode, out)
            got[name]["rows"] = out.read_bytes()
            n, ir = got[name]["messages"], got[name]["instructions"]
            print(f"  {args.corpus} {mode} {name}: {ir / 1e6:,.1f}M instructions, {ir / n:,.0f} a message", flush=True)
        line = f"{args.corpus} dev {mode}-local: {n:,} messages, {got['this']['instructions'] / 1e6:,.1f}M instructions routing them"
        if against:
            same = got["this"]["rows"] == got["against"]["rows"]
            ratio = got["this"]["instructions"] / got["against"]["instructions"]
            line += (f"; against {against}: {got['against']['instructions'] / 1e6:,.1f}M ({ratio:.3f} as many); "
                     f"{verdict(same)}")
        print(line, flush=True)


def corpus_main(args: argparse.Namespace) -> None:
    if args.instructions and shutil.which("valgrind") is None:
        fail("--instructions needs valgrind, which is not on PATH")
    against = Path(args.against).resolve() if args.against else None
    if against is not None and not (against / "interleave_bench" / "__init__.py").is_file():
        # (a child would otherwise import the installed package and measure it under that name)
        fail(f"--against {args.against}: not a project tree (no interleave_bench/ package in it)")
    trees = [("this", ROOT)] + ([("against", against)] if against else [])
    with tempfile.TemporaryDirectory() as tmp:
        sessions = corpus_sessions(args.corpus, args.data, Path(tmp))
        if args.instructions:
            count_main(args, sessions, Path(tmp), trees)
            return
        for mode in CORPUS_MODES[args.corpus]:
            best: dict[str, float] = {}
            rows: dict[str, set[bytes]] = {name: set() for name, _ in trees}
            n = 0
            for k in range(args.repeat):
                for name, tree in trees if k % 2 == 0 else trees[::-1]:  # alternate which goes first
                    out = Path(tmp) / f"rows-{name}-{mode}-{k}.jsonl"
                    r = child(tree, sessions, mode, out)
                    n = r["messages"]
                    best[name] = min(best.get(name, float("inf")), r["cpu"])
                    rows[name].add(out.read_bytes())
                    print(f"  {args.corpus} {mode} {name} #{k + 1}: {n / r['cpu']:,.0f} messages per CPU second")
            line = f"{args.corpus} dev {mode}-local: {n:,} messages, best of {args.repeat}: {n / best['this']:,.0f} per CPU second"
            if against:
                same = len(rows["this"] | rows["against"]) == 1
                line += (f"; against {against}: {n / best['against']:,.0f} (ratio {best['against'] / best['this']:.2f}); "
                         f"{verdict(same)}")
            line += f"; target {LOCAL_TARGET:,}: {'met' if n / best['this'] >= LOCAL_TARGET else 'MISSED'}"
            print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--turns", type=int, default=40)
    ap.add_argument("--model-sessions", type=int, default=20)
    ap.add_argument("--delay", type=float, default=0.02, help="seconds the fake model takes per answer")
    ap.add_argument("--corpus", choices=sorted(CORPUS_MODES), help="time `local` on this corpus's dev sessions instead")
    ap.add_argument("--data", help="--corpus sgd|irc: the corpus folder or a data folder imported from it; "
                                   "--corpus model-style: another data folder or sessions file")
    ap.add_argument("--repeat", type=int, default=5, help="--corpus: measurements per mode (best of them)")
    ap.add_argument("--against", metavar="TREE", help="--corpus: alternate with this project tree's code, compare")
    ap.add_argument("--instructions", action="store_true",
                    help="--corpus: count routing's instructions under valgrind instead of timing it")
    ap.add_argument("--measure", choices=("closed", "open"), help=argparse.SUPPRESS)  # a measuring child
    ap.add_argument("--no-routing", action="store_true", help=argparse.SUPPRESS)  # a measuring child's baseline
    ap.add_argument("--sessions-file", help=argparse.SUPPRESS)
    ap.add_argument("--rows", help=argparse.SUPPRESS)
    ap.add_argument("--tree", help=argparse.SUPPRESS)  # read before the imports above
    args = ap.parse_args()
    os.environ.setdefault("INTERLEAVE_NO_PROGRESS", "1")
    if args.measure:
        print(json.dumps(measure(Path(args.sessions_file), args.measure, Path(args.rows) if args.rows else None,
                                 route=not args.no_routing)))
        return
    if args.corpus:
        corpus_main(args)
        return
    given = [flag for flag, on in (("--against", args.against), ("--instructions", args.instructions),
                                   ("--data", args.data)) if on]
    if given:
        fail(f"{', '.join(given)}: only with --corpus (the synthetic benchmark has no other tree or corpus)")
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
