"""Your own router from Python (``run_route``, docs/own_router.md#extending)."""

from __future__ import annotations

import re
import sys
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

import pytest

from interleave_bench.cli import main
from interleave_bench.io import read_json

from _route_util import module_at, read_rows, write_data

DOCS = Path(__file__).resolve().parents[1] / "docs" / "own_router.md"


def record_of(out: Path) -> dict:
    """The run record of predictions file ``out``, but when it was written (the one field two runs differ in)."""
    record = read_json(out.with_suffix(".run.json"))
    record["provenance"].pop("created")
    return record


def docs_block(marker: str, after: str = "") -> str:
    """The first ```python block of docs/own_router.md holding ``marker`` (after the heading ``after``)."""
    text = DOCS.read_text(encoding="utf-8")
    text = text[text.index(after):] if after else text
    return next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if marker in b)


@pytest.fixture
def docs_router(tmp_path, monkeypatch):
    """The docs' ``my_router.py`` (class KeywordRouter), importable, and the docs' data folder under the current one."""
    monkeypatch.chdir(tmp_path)
    write_data(tmp_path / "data" / "interleave-v0-demo")
    with module_at(tmp_path / "mods", "my_router", docs_block("class KeywordRouter"), monkeypatch) as module:
        yield module


def test_the_extending_example_runs_as_written(docs_router, tmp_path):
    code = docs_block("run_route(", after="## Extending")
    printed = StringIO()
    with redirect_stdout(printed):
        exec(compile(code, "extending.py", "exec"), {"__name__": "extending"})
    said = re.search(r"print\(result\.path\)  # (\S+)", code).group(1)
    assert printed.getvalue() == said + "\n"
    rows = read_rows(tmp_path / said)
    assert rows and {r["policy"] for r in rows} == {"keyword-2"} and all("burst" in r for r in rows)
    options = read_json((tmp_path / said).with_suffix(".run.json"))["options"]
    # the record names the router and holds its code and settings, as a --router run's does
    assert options["router"] == "my_router:KeywordRouter" and options["policy"] == "keyword-2"
    assert options["router_code"].startswith("sha256:") and options["router_state"].startswith("sha256:")


def test_run_route_names_the_run_by_the_router_and_writes_what_route_router_writes(docs_router, tmp_path):
    from interleave_bench.route.runner import RouteOptions, run_route

    data = tmp_path / "data" / "interleave-v0-demo"
    result = run_route(data, RouteOptions(mode="closed"), router=docs_router.KeywordRouter(min_score=2))
    assert result.path == data / "predictions" / "closed-keyword.jsonl"
    from_python = result.path.read_bytes()
    assert main(["route", str(data), "--mode", "closed", "--router", "my_router:KeywordRouter",
                 "--router-arg", "min_score=2", "--out", str(tmp_path / "cli.jsonl")]) == 0
    assert (tmp_path / "cli.jsonl").read_bytes() == from_python


def test_run_route_refuses_a_router_object_under_a_built_in_name_or_a_bad_one(docs_router, tmp_path):
    from interleave_bench.errors import UsageError
    from interleave_bench.route.runner import RouteOptions, run_route

    data = tmp_path / "data" / "interleave-v0-demo"
    with pytest.raises(UsageError, match="--policy must be one of"):
        run_route(data, RouteOptions(mode="closed", policy="slowkw"))  # no router: a name is not enough
    with pytest.raises(UsageError, match="router policy name 'a b': use letters"):
        run_route(data, RouteOptions(mode="closed", policy="a b"), router=docs_router.KeywordRouter())
    assert not (data / "predictions").exists()


# --- sessions side by side: --concurrency -----------------------------------------------------------

GATED = '''
import asyncio
from interleave_bench.route.base import Decision

#: every Gated router made, last one last
MADE = []


class Gated:
    """An async router that stays in the current topic (else the first card, or a new topic). The
    first message of each session waits until ``together`` sessions are inside route() at once, or,
    in a run that never gets there, until the event loop has had ``patience`` turns (turns, not
    time: a run of one session at a time gives up there rather than hang). It counts the most
    sessions it saw inside route() at once (``_peak``) and whether they met (``_met``)."""

    policy = "gated"

    def __init__(self, together=2, patience=1000):
        self.together, self.patience = together, patience
        self._inside, self._peak, self._met, self._seen = {}, 0, None, set()
        MADE.append(self)

    async def _turn(self):
        # one turn of the event loop, with no clock: a future it resolves on its next turn
        loop = asyncio.get_running_loop()
        turn = loop.create_future()
        loop.call_soon(turn.set_result, None)
        await turn

    async def route(self, view):
        sid = view.session_id
        self._met = self._met or asyncio.Event()
        self._inside[sid] = self._inside.get(sid, 0) + 1
        assert self._inside[sid] == 1, "two messages of one session routed at once"
        self._peak = max(self._peak, len(self._inside))
        if len(self._inside) >= self.together:
            self._met.set()
        try:
            if sid not in self._seen:
                self._seen.add(sid)
                for _ in range(self.patience):
                    if self._met.is_set():
                        break
                    await self._turn()
            await self._turn()
        finally:
            self._inside[sid] -= 1
            if not self._inside[sid]:
                del self._inside[sid]
        if view.current:
            return Decision.to_topic(view.current)
        return Decision.to_topic(view.topics[0].label) if view.topics else Decision.new(view.pending_text()[:40])
'''


@pytest.fixture
def gated(tmp_path, monkeypatch):
    with module_at(tmp_path / "gated_mods", "gated_router", GATED, monkeypatch) as module:
        yield module


@pytest.fixture
def data(tmp_path) -> Path:
    return write_data(tmp_path / "data")


@pytest.mark.parametrize("mode", ["closed", "open"])
def test_concurrency_routes_sessions_side_by_side_and_writes_the_same_files(data, gated, tmp_path, mode):
    runs = {}
    for n in (1, 2, 3):
        out = tmp_path / f"n{n}" / "run.jsonl"
        extra = [] if n == 1 else ["--concurrency", str(n)]
        assert main(["route", str(data), "--mode", mode, "--router", "gated_router:Gated", "--out", str(out),
                     *extra]) == 0
        router = gated.MADE[-1]
        runs[n] = (out.read_bytes(), record_of(out), router._met.is_set(), router._peak)
    # one at a time by default: the sessions never met; with N, N of them were inside route() at once
    assert runs[1][2:] == (False, 1)
    assert runs[2][2:] == (True, 2) and runs[3][2:] == (True, 3)
    # and the files are the same, byte for byte, and so are their run records
    assert runs[1][:2] == runs[2][:2] == runs[3][:2]
    assert runs[1][0]


def test_evaluate_router_and_run_route_take_concurrency(data, gated, tmp_path):
    import interleave_bench
    from interleave_bench.route.runner import RouteOptions, run_route

    one = run_route(data, RouteOptions(mode="open"), router=gated.Gated(), out=tmp_path / "one.jsonl")
    assert gated.MADE[-1]._peak == 1
    two = run_route(data, RouteOptions(mode="open"), router=gated.Gated(), out=tmp_path / "two.jsonl", concurrency=2)
    assert gated.MADE[-1]._met.is_set() and two.path.read_bytes() == one.path.read_bytes()
    interleave_bench.evaluate_router(gated.Gated(), data, mode="open", bootstrap=0, concurrency=2)
    assert gated.MADE[-1]._met.is_set()
    assert (data / "predictions" / "open-gated.jsonl").read_bytes() == one.path.read_bytes()


def test_a_run_resumed_with_another_concurrency_ends_the_same(data, gated, tmp_path):
    from interleave_bench.route.runner import RouteOptions, run_route

    whole = run_route(data, RouteOptions(mode="closed"), router=gated.Gated(), out=tmp_path / "whole.jsonl")
    cut = tmp_path / "cut.jsonl"
    lines = whole.path.read_bytes().splitlines(keepends=True)
    first = [line for line in lines if line.startswith(lines[0][:lines[0].index(b',')])]
    cut.write_bytes(b"".join(first))  # the first session's rows: a run stopped after it
    record = read_json(whole.path.with_suffix(".run.json"))
    record["complete"] = False
    for key in ("counts", "usage", "provenance"):
        record.pop(key, None)
    import json

    cut.with_suffix(".run.json").write_text(json.dumps(record), encoding="utf-8")
    again = run_route(data, RouteOptions(mode="closed"), router=gated.Gated(), out=cut, concurrency=3)
    assert again.resumed == 1 and again.sessions == whole.sessions - 1
    assert cut.read_bytes() == whole.path.read_bytes()


@pytest.mark.parametrize("args, said", [
    # a model-free policy calls no model and has nothing to route side by side
    (["--policy", "bm25", "--concurrency", "4"], "the bm25 policy calls no model: drop --concurrency"),
    # with --router, --concurrency alone of the model options applies
    (["--router", "gated_router:Gated", "--concurrency", "4", "--dry-run"], "--dry-run: the model options"),
    (["--router", "gated_router:Gated", "--concurrency", "4", "--sweep-threshold"], "--sweep-threshold: the model"),
    (["--router", "gated_router:Gated", "--concurrency", "0"], "--concurrency: must be at least 1, got 0"),
])
def test_concurrency_is_refused_where_it_cannot_apply(data, gated, args, said, capsys):
    try:
        code = main(["route", str(data), "--mode", "closed", *args])
    except SystemExit as exc:  # argparse's own refusal of a value
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert said in err[-1] and "Traceback" not in "\n".join(err)
    assert not (data / "predictions").exists()


def test_run_route_refuses_concurrency_for_a_built_in_policy_or_out_of_range(data, gated):
    from interleave_bench.errors import UsageError
    from interleave_bench.route.runner import RouteOptions, run_route

    with pytest.raises(UsageError, match="concurrency applies to your own router"):
        run_route(data, RouteOptions(mode="closed", policy="bm25"), concurrency=2)
    for bad in (0, 1.5, True):
        with pytest.raises(UsageError, match="concurrency must be a whole number of at least 1"):
            run_route(data, RouteOptions(mode="closed"), router=gated.Gated(), concurrency=bad)
    assert not (data / "predictions").exists()


def test_the_docs_http_server_routes_sessions_side_by_side_to_the_same_file(data, tmp_path):
    """The sample server as published (its main serves requests side by side), with --concurrency."""
    import threading
    from http.server import ThreadingHTTPServer

    namespace: dict = {"__name__": "sticky_server"}
    exec(compile(docs_block("sticky_server.py"), "sticky_server.py", "exec"), namespace)
    assert namespace["ThreadingHTTPServer"] is ThreadingHTTPServer
    server = ThreadingHTTPServer(("127.0.0.1", 0), namespace["Handler"])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/route"
    try:
        files = []
        for n in ("1", "4"):
            out = tmp_path / f"n{n}" / "http.jsonl"
            assert main(["route", str(data), "--mode", "open", "--router", url, "--concurrency", n, "--out", str(out)]) == 0
            files.append((out.read_bytes(), record_of(out)))
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert files[0] == files[1] and files[0][1]["options"]["policy"] == "sticky"


# --- a module that is not found --------------------------------------------------------------------


LOOKUP = "a module is looked up in the current folder ({cwd}) and on PYTHONPATH"


@pytest.mark.parametrize("spec, beside, hint", [
    ("my_router:KeywordRouter", False, LOOKUP + ": run from the folder that holds my_router.py, or add that "
                                                "folder to PYTHONPATH"),
    # a file's name, whether or not the file is in the current folder: its module's name is what is given
    ("my_router.py:KeywordRouter", False, "name the module, not its file: --router my_router:KeywordRouter (" + LOOKUP + ")"),
    ("my_router.py:KeywordRouter", True, "name the module, not its file: --router my_router:KeywordRouter (" + LOOKUP + ")"),
    ("here/my_router.py:KeywordRouter", False, "name the module, not its file: --router my_router:KeywordRouter (run "
                                               "from here or add it to PYTHONPATH)"),
    ("here/my_router.py:KeywordRouter", True, "name the module, not its file: --router my_router:KeywordRouter (run "
                                              "from here or add it to PYTHONPATH)"),
])
def test_a_module_not_found_says_where_it_was_looked_for(data, tmp_path, monkeypatch, capsys, spec, beside, hint):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "here").mkdir(parents=True)
    if beside:  # the file is where the spec says: still not a module's name
        (elsewhere / spec.partition(":")[0]).write_text(docs_block("class KeywordRouter"), encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    monkeypatch.delitem(sys.modules, "my_router", raising=False)  # (put back as it was after the test)
    assert main(["route", str(data), "--mode", "closed", "--router", spec]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: --router {spec!r}: cannot import ")
    assert err.rstrip("\n").endswith("; " + hint.format(cwd=elsewhere)), err


def test_a_module_that_fails_to_import_another_gives_no_hint_of_where_it_was(data, tmp_path, monkeypatch, capsys):
    (tmp_path / "needs_more.py").write_text("import no_such_dependency_here\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "needs_more", raising=False)
    assert main(["route", str(data), "--mode", "closed", "--router", "needs_more:X"]) == 2
    assert capsys.readouterr().err == ("error: --router 'needs_more:X': cannot import 'needs_more': "
                                       "ModuleNotFoundError: No module named 'no_such_dependency_here'\n")


# --- what a run says it did ------------------------------------------------------------------------


def test_a_rerun_says_it_kept_the_file_and_the_summary_names_the_router(data, gated, tmp_path, capsys):
    out = tmp_path / "slow.jsonl"
    argv = ["route", str(data), "--mode", "closed", "--router", "gated_router:Gated", "--out", str(out)]
    assert main(argv) == 0
    first = capsys.readouterr()
    rows = len(read_rows(out))
    assert first.out.splitlines()[0] == f"wrote {out} ({rows:,} rows)"
    # the router, not the file's stem "slow"
    assert first.err.splitlines()[0].startswith("done: route closed-gated: 5 sessions, ")
    assert main(argv) == 0
    again = capsys.readouterr()
    assert again.out.splitlines()[0] == f"kept {out} ({rows:,} rows, already complete)"
    assert again.err.splitlines()[0].startswith("done: route closed-gated: 0 sessions, 5 already done, 0 messages, ")
    # a built-in policy, and a model's, are named by mode, policy (and model) too
    assert main(["route", str(data), "--mode", "open", "--policy", "bm25", "--out", str(tmp_path / "b.jsonl")]) == 0
    assert capsys.readouterr().err.splitlines()[0].startswith("done: route open-bm25: ")
    assert main(["route", str(data), "--mode", "open", "--policy", "llm", "--dry-run", "--merge", "all",
                 "--out", str(tmp_path / "m.jsonl")]) == 0
    assert capsys.readouterr().err.splitlines()[0].startswith("done: route open-llm-mergeall-fake-model: ")
