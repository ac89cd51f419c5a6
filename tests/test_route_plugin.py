"""Plug-in routers: ``route --router module:Class``, ``--router http://...`` and ``evaluate_router``."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest

import interleave_bench
from interleave_bench.io import read_json
from interleave_bench.route.model import ABORT_AFTER_FAILURES
from interleave_bench.schema import ERROR

from _cli_util import cli
from _route_util import module_at, read_rows, standard_sessions, write_data

DOCS = Path(__file__).resolve().parents[1] / "docs" / "own_router.md"

ROUTERS = '''
import asyncio
from interleave_bench.route.base import Decision


class Crash(BaseException):
    """A router that stops the run outright (no Exception: no ERROR row, the run ends)."""


#: an interruption from outside the router (a power cut, say): the process stops at the first message
#: of the session after this many, whatever the router's settings; None: never
STOP_AFTER = None


class Keyword:
    policy = "keyword"

    def __init__(self, min_score=1, crash_after=None, fail_on=None, unknown_on=None):
        self.min_score, self.crash_after, self.fail_on, self.unknown_on = min_score, crash_after, fail_on, unknown_on
        self.sessions = set()

    def route(self, view):
        self.sessions.add(view.session_id)
        limit = self.crash_after if self.crash_after is not None else STOP_AFTER
        if limit is not None and len(self.sessions) > limit:
            raise Crash
        text = view.pending_text().lower()
        if self.fail_on and self.fail_on in text:
            raise ValueError(f"cannot read {self.fail_on!r}")
        if self.unknown_on and self.unknown_on in text:
            return Decision.to_topic("nowhere")
        words = set(text.split())
        scores = {t.label: len(words & set(t.title.lower().split())) for t in view.topics}
        best = max(scores, key=scores.get, default=None)
        if best is not None and scores[best] >= self.min_score:
            return Decision.to_topic(best)
        return Decision.to_topic(view.current) if view.current else Decision.new(view.pending_text()[:40])


class AsyncKeyword(Keyword):
    policy = "keyword-async"

    async def route(self, view):
        # suspend once for real, with no clock: a future the event loop resolves on its next turn
        loop = asyncio.get_running_loop()
        turn = loop.create_future()
        loop.call_soon(turn.set_result, None)
        await turn
        return Keyword.route(self, view)


class Broken:
    policy = "broken"

    def route(self, view):
        return {"kind": "topic"}


class Builtin:
    policy = "bm25"

    def route(self, view):
        return Decision.new("x")


class NoRoute:
    pass


class Shaped:
    """Answers the first topic (or a new one), with ``field`` set to ``value`` for message ``on``
    (or ``every`` message), as a Decision or as its JSON form; raises ``raises`` (a name of
    builtins) there instead."""

    policy = "shaped"

    def __init__(self, field="confidence", value=None, on=3, as_json=False, raises=None):
        self.field, self.value, self.on, self.as_json, self.raises = field, value, on, as_json, raises

    def route(self, view):
        import builtins

        answer = {"kind": "topic", "label": view.topics[0].label} if view.topics else {"kind": "new", "title": "x"}
        if self.on in ("every", view.pending[0].i):
            if self.raises:
                raise getattr(builtins, self.raises)(*([0] if self.raises == "SystemExit" else []))
            answer[self.field] = self.value
        return answer if self.as_json else Decision(**answer)


class NewIn:
    """Answers the first topic (or a new one) in JSON form; message 3 opens a new topic whose ``field`` is ``value``."""

    policy = "newin"

    def __init__(self, field="title", value=None):
        self.field, self.value = field, value

    def route(self, view):
        if view.pending[0].i == 3:
            return {"kind": "new", "title": "x", self.field: self.value}
        return {"kind": "topic", "label": view.topics[0].label} if view.topics else {"kind": "new", "title": "x"}
'''


@pytest.fixture
def data(tmp_path) -> Path:
    return write_data(tmp_path / "data")


@pytest.fixture
def routers(tmp_path, monkeypatch):
    with module_at(tmp_path / "mods", "my_routers", ROUTERS, monkeypatch) as module:
        yield module


def n_messages(data: Path, split: str = "all") -> int:
    return sum(len(s["turns"]) for s in standard_sessions() if split == "all" or s["split"] == split)


@pytest.mark.parametrize("cls, policy", [("Keyword", "keyword"), ("AsyncKeyword", "keyword-async")])
def test_a_class_router_runs_under_its_own_policy_name(data, routers, cls, policy, capsys):
    assert cli("route", data, "--mode", "closed", "--router", f"my_routers:{cls}", "--router-arg", "min_score=1") == 0
    path = data / "predictions" / f"closed-{policy}.jsonl"
    rows = read_rows(path)
    assert len(rows) == n_messages(data)
    assert {r["policy"] for r in rows} == {policy} and {r["via"] for r in rows} == {"router"}
    record = read_json(path.with_suffix(".run.json"))
    assert record["options"]["policy"] == policy
    assert record["options"]["router"] == f"my_routers:{cls}" and record["options"]["router_args"] == ["min_score=1"]
    assert f"route closed-{policy}" in capsys.readouterr().err


def test_sync_and_async_routers_decide_alike(data, routers):
    assert cli("route", data, "--mode", "open", "--router", "my_routers:Keyword") == 0
    assert cli("route", data, "--mode", "open", "--router", "my_routers:AsyncKeyword") == 0
    sync = read_rows(data / "predictions" / "open-keyword.jsonl")
    asyn = read_rows(data / "predictions" / "open-keyword-async.jsonl")
    assert [r["pred"] for r in sync] == [r["pred"] for r in asyn]


def test_other_router_args_make_another_run(data, routers, capsys):
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Keyword") == 0
    capsys.readouterr()
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Keyword", "--router-arg", "min_score=3") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--fresh" in err
    # the options that differ, with their values (a fingerprint by its name alone)
    assert "other options (router_args: [] now ['min_score=3']; router_state)" in err


def test_a_rerun_after_the_router_code_changed_is_refused(data, routers, capsys):
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Keyword") == 0
    record = read_json(data / "predictions" / "closed-keyword.run.json")
    assert record["options"]["router_code"].startswith("sha256:")
    # the same code again resumes (nothing to do) ...
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Keyword") == 0
    capsys.readouterr()
    # ... an edited class file is another run, said in one line
    source = Path(routers.__file__)
    source.write_text(source.read_text(encoding="utf-8").replace("min_score=1", "min_score=2"), encoding="utf-8")
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Keyword") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "router code" in err and "--fresh" in err


def test_out_naming_the_router_source_file_is_refused(data, routers, capsys):
    source = Path(routers.__file__)
    before = source.read_bytes()
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Keyword", "--out", source) == 2
    assert capsys.readouterr().err.strip() == (f"error: route: --out {source} is one of the inputs (the router's source "
                                               "file); choose another path")
    assert source.read_bytes() == before


def test_a_raising_router_gives_named_error_rows_and_a_rerun_asks_again(data, routers, capsys):
    args = ["route", data, "--mode", "closed", "--router", "my_routers:Keyword", "--router-arg", "fail_on=lisbon"]
    assert cli(*args) == 0
    path = data / "predictions" / "closed-keyword.jsonl"
    rows = read_rows(path)
    failed = [r for r in rows if r["pred"] == ERROR]
    assert failed and all("lisbon" in next(s for s in standard_sessions() if s["session_id"] == r["session_id"])
                          ["turns"][r["i"]]["text"].lower() for r in failed)
    assert failed[0]["error"] == "router keyword raised ValueError: cannot read 'lisbon'"
    assert f"{len(failed)} ERROR rows remain" in capsys.readouterr().err


def test_an_unknown_topic_is_an_error_row_naming_it(data, routers):
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Keyword", "--router-arg", "unknown_on=tax") == 0
    failed = [r for r in read_rows(data / "predictions" / "closed-keyword.jsonl") if r["pred"] == ERROR]
    assert failed and failed[0]["error"].startswith("router keyword answered unknown topic 'nowhere'")


def test_a_router_that_always_fails_stops_the_run_with_one_line(data, routers, capsys):
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Broken") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"the first {ABORT_AFTER_FAILURES} decisions of router broken all failed" in err
    assert "label" in err or "unknown topic None" in err


@pytest.mark.parametrize("spec, extra, said", [
    ("my_routers", [], "expected module:Class"),
    ("no_such_module_here:X", [], "cannot import 'no_such_module_here'"),
    ("my_routers:Missing", [], "has no class 'Missing'"),
    ("my_routers:NoRoute", [], "has no route(view)"),
    ("my_routers:Builtin", [], "is a built-in policy's"),
    ("my_routers:Keyword", ["--router-arg", "nonsense"], "expected NAME=VALUE"),
    ("my_routers:Keyword", ["--router-arg", "colour=red"], "could not start: TypeError"),
    ("my_routers:Keyword", ["--policy", "bm25"], "one of them"),
    ("my_routers:Keyword", ["--dry-run"], "not --router"),
    # a plug-in router calls no model of ours: the model options but --concurrency (sessions side by
    # side) would be ignored, so they are refused, even at their default value
    ("my_routers:Keyword", ["--concurrency", "8", "--max-retries", "5"], "--max-retries: the model options"),
    ("my_routers:Keyword", ["--timeout", "5", "--no-cache"], "--timeout, --no-cache: the model options"),
])
def test_a_router_that_cannot_be_made_is_one_line_exit_2(data, routers, spec, extra, said, capsys):
    assert cli("route", data, "--mode", "closed", "--router", spec, *extra) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err, err


def test_neither_policy_nor_router_is_one_line_exit_2(data, capsys):
    assert cli("route", data, "--mode", "closed") == 2
    assert "give --policy P or --router" in capsys.readouterr().err


def test_a_module_in_the_current_folder_is_found(data, tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    (here / "router_beside_me.py").write_text(ROUTERS, encoding="utf-8")
    monkeypatch.chdir(here)
    assert cli("route", data, "--mode", "closed", "--router", "router_beside_me:Keyword") == 0
    assert (data / "predictions" / "closed-keyword.jsonl").exists()


def test_an_interrupted_plugin_run_resumes_byte_identical(data, routers, tmp_path, monkeypatch):
    whole = tmp_path / "whole.jsonl"
    assert cli("route", data, "--mode", "open", "--router", "my_routers:Keyword", "--out", whole) == 0
    cut = tmp_path / "cut.jsonl"
    monkeypatch.setattr(routers, "STOP_AFTER", 2)  # the run is cut off during its third session
    assert cli("route", data, "--mode", "open", "--router", "my_routers:Keyword", "--out", cut) == 2
    assert 0 < len(cut.read_bytes()) < len(whole.read_bytes())
    assert read_json(cut.with_suffix(".run.json"))["complete"] is False
    # the same command again, nothing cutting it off: the finished sessions kept, the rest routed
    monkeypatch.setattr(routers, "STOP_AFTER", None)
    assert cli("route", data, "--mode", "open", "--router", "my_routers:Keyword", "--out", cut) == 0
    assert read_rows(cut) == read_rows(whole)


def test_a_router_from_python_with_other_settings_is_another_run_not_a_resume(data, routers):
    from interleave_bench.errors import UsageError

    first = interleave_bench.evaluate_router(routers.Keyword(min_score=1), data, mode="closed", bootstrap=0)
    out = data / "predictions" / "closed-keyword.jsonl"
    before = out.read_bytes()
    # the same settings resume (nothing to route again), the session set the router grew while routing aside
    again = interleave_bench.evaluate_router(routers.Keyword(min_score=1), data, mode="closed", bootstrap=0)
    assert out.read_bytes() == before and again["metrics"] == first["metrics"]
    # (settings under which some messages still reach a thread: a closed-mode run none of whose
    # labels names one is refused by the scorer)
    with pytest.raises(UsageError, match=r"was written from other router settings .*pass fresh=True"):
        interleave_bench.evaluate_router(routers.Keyword(min_score=2), data, mode="closed", bootstrap=0)
    assert out.read_bytes() == before
    other = interleave_bench.evaluate_router(routers.Keyword(min_score=2), data, mode="closed", fresh=True, bootstrap=0)
    assert out.read_bytes() != before and other["metrics"] != first["metrics"]


def test_router_state_reads_public_plain_data_only():
    from interleave_bench.route.plugin import router_state

    class R:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    base = router_state(R(k=1, words=["a", "b"], weights={"x": 0.5}, tags={"b", "a"}))
    assert base == router_state(R(tags={"a", "b"}, weights={"x": 0.5}, words=["a", "b"], k=1))  # order aside
    assert base != router_state(R(k=2, words=["a", "b"], weights={"x": 0.5}, tags={"b", "a"}))
    assert base == router_state(R(k=1, words=["a", "b"], weights={"x": 0.5}, tags={"b", "a"}, _cache={"q": 1},
                                  model=object()))  # private attributes and objects are not settings
    assert router_state(R(model=object())) is None and router_state(R()) is None


# --- HTTP ------------------------------------------------------------------------------------------


def docs_server_source() -> str:
    """The example server of docs/own_router.md#the-http-protocol, as published."""
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return next(b for b in blocks if "sticky_server.py" in b)


@pytest.fixture
def docs_server(tmp_path):
    from http.server import HTTPServer

    namespace: dict = {"__name__": "sticky_server"}
    exec(compile(docs_server_source(), "sticky_server.py", "exec"), namespace)
    server = HTTPServer(("127.0.0.1", 0), namespace["Handler"])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/route"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.mark.parametrize("mode", ["closed", "open"])
def test_the_docs_http_server_is_measured_over_loopback(data, docs_server, mode, capsys):
    assert cli("route", data, "--mode", mode, "--router", docs_server) == 0
    path = data / "predictions" / f"{mode}-sticky.jsonl"
    rows = read_rows(path)
    assert len(rows) == n_messages(data) and {r["policy"] for r in rows} == {"sticky"}
    assert {r["via"] for r in rows} == {"router"} and ERROR not in {r["pred"] for r in rows}
    by_session: dict[str, set] = {}
    for r in rows:
        by_session.setdefault(r["session_id"], set()).add(r["pred"])
    # it keeps to the first topic: one label per session
    assert all(len(labels) == 1 for labels in by_session.values())
    if mode == "closed":
        firsts = {s["session_id"]: s["threads"][0]["id"] for s in standard_sessions()}
        assert all(labels == {firsts[sid]} for sid, labels in by_session.items())
    assert read_json(path.with_suffix(".run.json"))["options"]["router"] == docs_server


def test_an_http_router_that_is_not_there_is_one_line_exit_2(data, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: the connection is refused
        assert cli("route", data, "--mode", "open", "--router", f"http://127.0.0.1:{port}/route") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "GET did not answer" in err


def test_router_args_are_refused_for_an_http_router(data, docs_server, capsys):
    assert cli("route", data, "--mode", "open", "--router", docs_server, "--router-arg", "a=1") == 2
    assert "configured on its server" in capsys.readouterr().err


# --- the Python API --------------------------------------------------------------------------------


def test_evaluate_router_returns_the_score_document_and_writes_the_predictions(data, routers, capsys):
    doc = interleave_bench.evaluate_router(routers.Keyword(), data, mode="closed", bootstrap=50)
    path = data / "predictions" / "closed-keyword.jsonl"
    rows = read_rows(path)
    assert len(rows) == n_messages(data) and {r["policy"] for r in rows} == {"keyword"}  # every split routed
    assert doc == read_json(data / "predictions" / "closed-keyword.score.json")
    assert doc["system"] == "closed-keyword" and doc["split"] == "dev"
    # the same numbers as the commands give
    assert cli("score", data, path, "--bootstrap", "50", "--json") == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["metrics"] == doc["metrics"] and printed["intervals"] == doc["intervals"]


def test_evaluate_router_resumes_the_cli_run_and_refuses_another_runs_file(data, routers, capsys):
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Keyword") == 0
    before = (data / "predictions" / "closed-keyword.jsonl").read_bytes()
    # the same run from Python: nothing to route again, the file stays as it was
    doc = interleave_bench.evaluate_router(routers.Keyword(), data, mode="closed", split="test", bootstrap=0)
    assert (data / "predictions" / "closed-keyword.jsonl").read_bytes() == before
    assert doc["split"] == "test" and (data / "predictions" / "closed-keyword.test.score.json").is_file()
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Keyword", "--router-arg", "min_score=2",
               "--fresh") == 0
    from interleave_bench.errors import UsageError

    with pytest.raises(UsageError, match="pass fresh=True to start over, or out=PATH to write elsewhere$") as refused:
        interleave_bench.evaluate_router(routers.Keyword(), data, mode="closed")
    assert "--fresh" not in str(refused.value)  # said in the function's terms, not the command's
    # a file with no run record whose rows are another run's: the same advice, from the resume check
    out = data / "predictions" / "closed-keyword.jsonl"
    out.write_text(out.read_text(encoding="utf-8").replace('"mode": "closed"', '"mode": "open"')
                   .replace('"mode":"closed"', '"mode":"open"'), encoding="utf-8")
    from interleave_bench.documents import run_record_path

    run_record_path(out).unlink(missing_ok=True)
    with pytest.raises(UsageError, match=r"line 1 is an open/keyword row; .*\(pass fresh=True to start over, or out=PATH to write elsewhere\)$"):
        interleave_bench.evaluate_router(routers.Keyword(), data, mode="closed")
    doc = interleave_bench.evaluate_router(routers.Keyword(), data, mode="closed", fresh=True, bootstrap=0)
    assert doc["counts"]["sessions"] > 0


# --- decisions checked field by field, and routers that stop the run -------------------------------

BAD_FIELDS = [
    ("confidence", "NaN", "nan is not a JSON number (NaN and Infinity are refused)"),
    ("confidence", "Infinity", "inf is not a JSON number (NaN and Infinity are refused)"),
    ("confidence", "1.5", "Input should be less than or equal to 1 (got 1.5)"),
    ("confidence", "-0.25", "Input should be greater than or equal to 0 (got -0.25)"),
    ("confidence", '"high"', "expected a number, got 'high'"),
    ("confidence", "true", "expected a number, got True"),
    ("elapsed_ms", "NaN", "nan is not a JSON number (NaN and Infinity are refused)"),
    ("elapsed_ms", "-Infinity", "-inf is not a JSON number (NaN and Infinity are refused)"),
    ("elapsed_ms", "-5", "Input should be greater than or equal to 0 (got -5)"),
    ("elapsed_ms", "[12]", "expected a number, got list"),
]


@pytest.mark.parametrize("as_json", [False, True], ids=["Decision", "JSON form"])
@pytest.mark.parametrize("field, value, said", BAD_FIELDS, ids=[f"{f}={v}" for f, v, _ in BAD_FIELDS])
def test_a_bad_number_in_a_decision_is_an_error_row_naming_the_message_and_field(data, routers, field, value, said,
                                                                                 as_json, capsys):
    args = ["--router-arg", f"field={field}", "--router-arg", f"value={value}", "--router-arg", f"as_json={str(as_json).lower()}"]
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Shaped", *args) == 0, capsys.readouterr().err
    rows = read_rows(data / "predictions" / "closed-shaped.jsonl")
    failed = [r for r in rows if r["pred"] == ERROR]
    assert failed and {r["i"] for r in failed} == {3} and len(failed) == len({r["session_id"] for r in rows})
    assert {r["error"] for r in failed} == {f"router shaped gave message 3 a bad {field}: {said}"}


@pytest.mark.parametrize("router, field, value, said", [
    ("Shaped", "title", "5", "a bad title: expected text, got int 5"),
    ("Shaped", "via", "null", "a bad via: expected text, got NoneType None"),
    ("Shaped", "refs", '"A"', "bad refs: expected a list of topic labels, got 'A'"),
    ("Shaped", "usage", '{"input": -1}', "a bad usage.input: Input should be greater than or equal to 0 (got -1)"),
    ("Shaped", "same_as", "0", "a same_as (0): it applies to the answers of route_each, not of route"),
    # the JSON form: a value of the wrong type is refused, never turned into text
    ("NewIn", "title", "42", "a bad title: expected text, got int 42"),
    ("NewIn", "title", '["a"]', "a bad title: expected text, got list ['a']"),
    ("NewIn", "title", '{"a": [1]}', "a bad title: expected text, got dict {'a': [1]}"),
    ("NewIn", "via", "0", "a bad via: expected text, got int 0"),
])
def test_a_decision_field_of_the_wrong_kind_is_an_error_row_naming_it(data, routers, router, field, value, said):
    policy, mode = router.lower(), "closed" if router == "Shaped" else "open"  # NewIn opens a topic at message 3
    assert cli("route", data, "--mode", mode, "--router", f"my_routers:{router}", "--router-arg", f"field={field}",
               "--router-arg", f"value={value}") == 0
    failed = [r for r in read_rows(data / "predictions" / f"{mode}-{policy}.jsonl") if r["pred"] == ERROR]
    assert failed and {r["error"] for r in failed} == {f"router {policy} gave message 3 {said}"}


def test_a_decision_bad_from_the_start_stops_the_run_in_one_line(data, routers, capsys):
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Shaped", "--router-arg", "value=2",
               "--router-arg", "on=every") == 2  # the first decisions all fail
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "(last: router shaped gave message 7 a bad confidence: Input should be less than or equal to 1 (got 2))" in err


@pytest.mark.parametrize("raised, said", [("SystemExit", "SystemExit: 0"), ("GeneratorExit", "GeneratorExit")])
def test_a_router_raising_systemexit_or_generatorexit_stops_in_one_line_exit_2(data, routers, raised, said, capsys):
    out = data / "run.jsonl"
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Shaped", "--router-arg", f"raises={raised}",
               "--out", out) == 2
    err = capsys.readouterr().err
    first = standard_sessions()[0]["session_id"]
    assert err == (f"error: router shaped raised {said} at message 3 of session {first}; stopping (the finished "
                   "sessions are kept): route(view) must return a decision or raise an Exception\n")
    # stopped in the first session, before any row: neither the file nor its run record is left
    assert not out.exists() and not out.with_suffix(".run.json").exists()


@pytest.mark.parametrize("fresh, again", [((), "again"), (("--fresh",), "without --fresh")])
def test_a_router_interrupted_by_ctrl_c_keeps_the_resume_advice(data, routers, capsys, fresh, again):
    """With ``--fresh`` the same command would start over again: the advice says to drop it."""
    assert cli("route", data, "--mode", "closed", "--router", "my_routers:Shaped", "--router-arg",
               "raises=KeyboardInterrupt", *fresh) == 130
    out = data / "predictions" / "closed-shaped.jsonl"
    assert capsys.readouterr().err == (f"interrupted: 0 of {len(standard_sessions())} sessions finished, so none is "
                                       f"kept in {out}; run the same command {again} to resume\n")


def test_the_docs_keyword_router_routes_closed_mode_to_the_cards(tmp_path, monkeypatch, data):
    """The example class of docs/own_router.md, as written there: in closed mode every message goes to a
    card (the chat's first one to the first card when it names none), never to a side topic."""
    block = next(b for b in re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.S)
                 if "class KeywordRouter" in b)
    with module_at(tmp_path / "docs_mods", "my_router", block, monkeypatch):
        assert cli("route", data, "--mode", "closed", "--router", "my_router:KeywordRouter", "--router-arg",
                   "min_score=2") == 0
    cards = {s["session_id"]: {t["id"] for t in s["threads"]} for s in standard_sessions()}
    rows = read_rows(data / "predictions" / "closed-keyword.jsonl")
    assert len(rows) == n_messages(data) and all(r["pred"] in cards[r["session_id"]] for r in rows)
    # in open mode it opens a topic for a long message that names none, so it is no `single`
    with module_at(tmp_path / "docs_mods", "my_router", block, monkeypatch):
        assert cli("route", data, "--mode", "open", "--router", "my_router:KeywordRouter") == 0
    rows = read_rows(data / "predictions" / "open-keyword.jsonl")
    topics = {}
    for r in rows:
        topics.setdefault(r["session_id"], set()).add(r["pred"])
    assert len(rows) == n_messages(data) and max(map(len, topics.values())) > 1


SECRET_ROUTER = '''
from interleave_bench.route.base import Decision


class Keyed:
    policy = "keyed"

    def __init__(self, api_key="", note=""):
        self.api_key, self.note = api_key, note

    def route(self, view):
        return Decision.to_topic(view.current) if view.current else Decision.new("x")
'''


def test_a_secret_router_argument_resumes_and_is_never_shown(tmp_path, monkeypatch, data, capsys):
    """The run record holds a secret of the environment redacted; the same command resumes all the
    same, and a refusal naming the options that differ shows no part of the secret."""
    key = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"
    monkeypatch.setenv("SEARCH_API_KEY", key)
    args = ["route", data, "--mode", "open", "--router", "keyed_router:Keyed", "--router-arg", f"api_key={key}"]
    with module_at(tmp_path / "secret_mods", "keyed_router", SECRET_ROUTER, monkeypatch):
        assert cli(*args) == 0
        record = (data / "predictions" / "open-keyed.run.json").read_text(encoding="utf-8")
        assert key not in record and "[redacted]" in record
        capsys.readouterr()
        assert cli(*args) == 0  # the same options: resumed, nothing to do
        assert "5 already done" in capsys.readouterr().err
        # another option, the key inside a value long enough to be cut short where it is shown
        assert cli(*args, "--router-arg", "note=see " + key) == 2
        err = capsys.readouterr().err
    assert key[:6] not in err and len(err.splitlines()) == 1
    assert "other options (router_args: ['api_key=[redacted]'] now " in err and "'note=see [red..." in err


def test_an_option_missing_on_one_side_is_named():
    from interleave_bench.documents import _option_changes

    assert _option_changes({"threshold": None, "mode": "open"}, {"mode": "open"}) == "threshold: None now missing"
    assert _option_changes({}, {"seed": 3}) == "seed: missing now 3"
