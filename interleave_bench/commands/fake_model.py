"""``interleave-bench fake-model``: serve the project's fake OpenAI-compatible model on loopback.

For trying a harness, a plug-in or any OpenAI client without a key: the server answers every
request kind the project sends (routing, generation, facts, mid-reply) as ``--dry-run`` does, and
takes any key. It prints its URL on the first line of stdout and serves until interrupted (Ctrl-C
or SIGTERM), then prints how many requests it answered.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from ..progress import Timer, print_summary
from ..options import whole_number


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fake-model", help="serve the fake OpenAI-compatible model on loopback (no key, nothing spent)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=whole_number(), default=0, help="the port to listen on (default: a free one)")
    p.add_argument("--no-usage", action="store_true",
                   help="answer without a usage block, as some servers do (the client's cost is then unknown)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    # every request kind's answers, registered with the fake model by importing them
    from ..facts import fake as _facts  # noqa: F401
    from ..generate import fake as _generate  # noqa: F401
    from ..llm.server import FakeServer
    from ..midreply import fake as _midreply  # noqa: F401
    from ..route import fake as _route  # noqa: F401

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {args.port}")
    timer = Timer()
    try:
        server = FakeServer(port=args.port, report_usage=not args.no_usage)
    except OSError as exc:
        raise UsageError(f"--port {args.port}: cannot listen there ({exc.strerror or exc})") from None
    stopped = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        with server:
            print(server.url, flush=True)
            print(f"fake model at {server.url}: set OPENAI_BASE_URL (or inspect's FAKE_BASE_URL) to it, with any key; "
                  "Ctrl-C stops it", file=sys.stderr, flush=True)
            try:
                stopped.wait()
            except KeyboardInterrupt:
                pass
            finally:
                signal.signal(signal.SIGTERM, previous)
    except KeyboardInterrupt:  # a second Ctrl-C while it shuts down: it stops all the same (nothing to resume)
        pass
    print_summary("fake-model", {"requests": server.calls, "answered": server.completions}, timer.seconds)
    return 0
