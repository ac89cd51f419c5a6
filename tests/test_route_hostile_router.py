"""Own routers that break the contract of docs/own_router.md#what-a-router-may-not-do: each one's
rows and exit are what the docs say, never a silently wrong row nor an internal error."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from interleave_bench.io import read_json
from interleave_bench.route.answer import MAX_ERROR_CHARS
from interleave_bench.route.model import ABORT_AFTER_FAILURES
from interleave_bench.schema import ERROR

from _cli_util import cli
from _loopback import Loopback
from _route_util import module_at, read_rows, standard_sessions, write_data

ROUTERS = '''
import dataclasses

from interleave_bench.route.base import Decision

#: the labels of every view shown
LABELS = []

#: what the routers saw: (session, turn number, text) of every earlier message of each view
SEEN = []


def stay(view):
    return Decision.to_topic(view.current or view.topics[0].label)


class Shift:
    """Changes a pending message's ``field`` (the turn number ``i`` by default) at message ``on``
    (every message when None), then decides (or raises, with ``fail``)."""

    policy = "shift"

    def __init__(self, field="i", on=None, fail=False):
        self.field, self.on, self.fail = field, on, fail

    def route(self, view):
        SEEN.extend((view.session_id, m.i, m.text) for m in view.history)
        m = view.pending[0]
        if self.on is None or m.i == self.on:
            value = {"i": m.i + 1, "text": "changed", "reply": "a reply", "speaker": "mallory"}[self.field]
            object.__setattr__(m, self.field, value)
            if self.fail:
                raise ValueError("gave up")
        return stay(view)


class NewTitle:
    """Opens a topic for every message, its title ``None`` at message 3, as a Decision or its JSON form."""

    policy = "newtitle"

    def __init__(self, as_json=False):
        self.as_json = as_json

    def route(self, view):
        title = None if view.pending[0].i == 3 else "x"
        return {"kind": "new", "title": title} if self.as_json else Decision.new(title)


class Big:
    """Answers the first topic at every message; at message 3 with ``field`` set to what ``value``
    names: a long ``via`` or ``error``, ``refs`` of 10,000 labels, a repeat, the chosen topic or an
    unknown topic; ``refs="gold"`` gives every message the refs a thread message of session
    en-0001 has in the data (message 9: "A"), as a valid decision."""

    policy = "big"

    def __init__(self, field="via", value="long"):
        self.field, self.value = field, value

    def route(self, view):
        first = view.topics[0].label
        if self.field == "refs" and self.value == "gold":
            other = [t.label for t in view.topics if t.label not in (first, "C")]
            on_c = view.session_id == "en-0001" and view.pending[0].i == 9
            return Decision.to_topic("C", refs=("A",)) if on_c else Decision.to_topic(first, refs=tuple(other[:1]))
        if view.pending[0].i != 3:
            return Decision.to_topic(first)
        if self.field == "error":
            return Decision.failed("e" * 1_000_000)
        if self.field == "raise":
            raise ValueError("e" * 1_000_000)
        value = {"long": "v" * 1_000_000, "v64": "v" * 64, "v65": "v" * 65,
                 "many": tuple(t.label for t in view.topics) * 10_000, "twice": ("B", "B"), "self": (first,),
                 "unknown": ("Q",), "distinct": ("B",)}[self.value]
        return Decision.to_topic(first, **{self.field: value})


class Rename:
    """At message ``on``: renames the first topic "zz" (``how="rename"``) or shows the view a topic
    "zz" in place of its own (``how="swap"``), then answers "zz" (or, with ``answer="own"``, the
    first topic's own label)."""

    policy = "rename"

    def __init__(self, how="rename", answer="zz", on=3):
        self.how, self.answer, self.on = how, answer, on

    def route(self, view):
        LABELS.append(view.labels())
        if view.pending[0].i != self.on:
            return stay(view)
        first = view.topics[0]
        own = first.label
        if self.how == "rename":
            object.__setattr__(first, "label", "zz")
        else:
            object.__setattr__(view, "topics", (dataclasses.replace(first, label="zz"),) + view.topics[1:])
        return Decision.to_topic("zz" if self.answer == "zz" else own)
'''


@pytest.fixture
def data(tmp_path) -> Path:
    return write_data(tmp_path / "data")


@pytest.fixture
def routers(tmp_path, monkeypatch):
    with module_at(tmp_path / "mods", "hostile_routers", ROUTERS, monkeypatch) as module:
        yield module


def turn_numbers(rows) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for r in rows:
        out.setdefault(r["session_id"], []).append(r["i"])
    return out


TEXTS = {(s["session_id"], t["i"]): t["text"] for s in standard_sessions() for t in s["turns"]}


# --- 1. a router that changes the messages it is shown ---------------------------------------------


@pytest.mark.parametrize("field", ["i", "text", "reply", "speaker"])
@pytest.mark.parametrize("fail", [False, True], ids=["decides", "raises"])
def test_a_router_changing_a_pending_message_gets_an_error_row_and_the_runs_own_turns(data, routers, field, fail):
    assert cli("route", data, "--mode", "closed", "--router", "hostile_routers:Shift", "--router-arg", f"field={field}",
               "--router-arg", "on=3", "--router-arg", f"fail={str(fail).lower()}") == 0
    rows = read_rows(data / "predictions" / "closed-shift.jsonl")
    # every row carries the session's own turn number, in turn order
    assert turn_numbers(rows) == {s["session_id"]: [t["i"] for t in s["turns"]] for s in standard_sessions()}
    failed = [r for r in rows if r["pred"] == ERROR]
    assert {r["i"] for r in failed} == {3} and len(failed) == len(standard_sessions())
    said = "raised ValueError: gave up" if fail else \
        f"changed its input (message 3's {field}): route(view) must leave its view as it is"
    assert {r["error"] for r in failed} == {f"router shift {said}"}
    # the message was put back: later views show it as the session has it
    assert all(text == TEXTS[sid, i] for sid, i, text in routers.SEEN)
    assert any(i == 3 for _, i, _ in routers.SEEN)


def test_a_router_changing_every_message_stops_the_run_in_one_line(data, routers, capsys):
    out = data / "shift.jsonl"
    assert cli("route", data, "--mode", "closed", "--router", "hostile_routers:Shift", "--out", out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (f"the first {ABORT_AFTER_FAILURES} decisions of router shift all failed (last: router shift changed "
            "its input (message 7's i)") in err
    assert not out.exists()


def test_a_router_changing_messages_after_the_first_never_writes_a_shifted_row(data, routers, capsys):
    # decides the first message of each session as it is, then shifts each later one: an ERROR row
    # for each of those, at its own turn number, and a record that says so
    routers.Shift.route = lambda self, view, _route=routers.Shift.route: (
        routers.stay(view) if not view.history else _route(self, view))
    out = data / "shift.jsonl"
    assert cli("route", data, "--mode", "closed", "--router", "hostile_routers:Shift", "--out", out) == 0
    rows = read_rows(out)
    assert turn_numbers(rows) == {s["session_id"]: [t["i"] for t in s["turns"]] for s in standard_sessions()}
    assert [r["i"] for r in rows if r["pred"] != ERROR] == [0] * len(standard_sessions())
    record = read_json(out.with_name("shift.run.json"))
    assert record["complete"] and record["counts"]["errors"] == len(rows) - len(standard_sessions())
    assert f"{len(rows) - len(standard_sessions())} ERROR rows remain" in capsys.readouterr().err


# --- 2. a router that renames the topics it is shown -----------------------------------------------


@pytest.mark.parametrize("how, answer, said", [
    # the runner's own topic renamed: put back, and the decision fails whatever it names
    ("rename", "zz", "changed its input (topic A's label): route(view) must leave its view as it is"),
    ("rename", "own", "changed its input (topic A's label): route(view) must leave its view as it is"),
    # the view shown another topic: a decision is checked against the run's own topics, not the view's
    ("swap", "zz", "answered unknown topic 'zz' (the view holds A, B"),
])
def test_a_router_renaming_a_topic_gets_an_error_row_never_an_internal_error(data, routers, how, answer, said):
    assert cli("route", data, "--mode", "closed", "--router", "hostile_routers:Rename", "--router-arg", f"how={how}",
               "--router-arg", f"answer={answer}") == 0
    rows = read_rows(data / "predictions" / "closed-rename.jsonl")
    failed = [r for r in rows if r["pred"] == ERROR]
    assert {r["i"] for r in failed} == {3} and len(failed) == len(standard_sessions())
    assert all(r["error"].startswith(f"router rename {said}") for r in failed)
    assert all(r["pred"] in {"A", "B", "C", ERROR} for r in rows)
    # no later view shows the name it gave: the topic was put back
    assert routers.LABELS and not any("zz" in labels for labels in routers.LABELS)


# --- 3. an HTTP router's answer is read as strictly as any JSON the project reads ------------------


class RawServer(Loopback):
    """A router on loopback answering ``hello`` to GET; to POST, the first topic (or a new one), and
    the body ``raw`` for message 3."""

    def __init__(self, raw: str, hello: str = '{"policy": "raw"}'):
        class Handler(BaseHTTPRequestHandler):
            def answer(self, text: str) -> None:
                data = text.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self.answer(hello)

            def do_POST(self):
                view = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if view["pending"][0]["i"] == 3:
                    return self.answer(raw)
                topics = view["topics"]
                self.answer(json.dumps({"kind": "topic", "label": topics[0]["label"]} if topics
                                       else {"kind": "new", "title": "x"}))

            def log_message(self, *args):
                pass

        self.serve(Handler)
        self.url = f"http://127.0.0.1:{self.port}/route"


@pytest.mark.parametrize("raw, said", [
    ('{"kind": "topic", "label": "A", "label": "B"}',
     "answered JSON that cannot be read: label: the key 'label' appears twice in one object"),
    ('{"kind": "topic", "label": "A", "confidence": NaN}',
     "answered JSON that cannot be read: confidence: NaN is not a JSON number (NaN and Infinity are refused)"),
    ('{"kind": "topic", "label": "A"', "answered a body that is not JSON: {\"kind\": \"topic\", \"label\": \"A\""),
])
def test_an_http_answer_the_strict_json_reader_refuses_is_an_error_row(data, raw, said):
    with RawServer(raw) as server:
        assert cli("route", data, "--mode", "closed", "--router", server.url, "--out", data / "raw.jsonl") == 0
    failed = [r for r in read_rows(data / "raw.jsonl") if r["pred"] == ERROR]
    assert {r["i"] for r in failed} == {3} and len(failed) == len(standard_sessions())
    assert {r["error"] for r in failed} == {f"router raw {said}"}


def test_an_http_policy_named_twice_stops_before_any_message_in_one_line(data, capsys):
    with RawServer("{}", hello='{"policy": "raw", "policy": "other"}') as server:
        assert cli("route", data, "--mode", "closed", "--router", server.url) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "GET did not answer" in err
    assert "policy: the key 'policy' appears twice in one object" in err


@pytest.mark.parametrize("spec", ["http", "json", "decision"])
def test_a_null_title_is_refused_alike_over_http_and_from_python(data, routers, spec):
    said = "router {} gave message 3 a bad title: expected text, got NoneType None"
    if spec == "http":
        with RawServer('{"kind": "new", "title": null}') as server:
            assert cli("route", data, "--mode", "open", "--router", server.url, "--out", data / "t.jsonl") == 0
        policy = "raw"
    else:
        assert cli("route", data, "--mode", "open", "--router", "hostile_routers:NewTitle", "--router-arg",
                   f"as_json={str(spec == 'json').lower()}", "--out", data / "t.jsonl") == 0
        policy = "newtitle"
    failed = [r for r in read_rows(data / "t.jsonl") if r["pred"] == ERROR]
    assert {r["i"] for r in failed} == {3} and {r["error"] for r in failed} == {said.format(policy)}


# --- 4. what a decision may carry: a short via, refs that are distinct other topics -----------------


@pytest.mark.parametrize("field, value, said", [
    ("via", "long", "gave message 3 a bad via: 1,000,000 characters, more than 64"),
    ("via", "v65", "gave message 3 a bad via: 65 characters, more than 64"),
    ("refs", "many", "gave message 3 bad refs: 30,000 of them, more than the 3 topics there are"),
    ("refs", "twice", "gave message 3 bad refs: 'B' is named twice"),
    ("refs", "self", "gave message 3 bad refs: 'A' is the topic the message goes to"),
    ("refs", "unknown", "gave message 3 bad refs: 'Q' is not a topic"),
])
def test_a_decision_carrying_too_much_is_an_error_row_naming_what(data, routers, field, value, said):
    out = data / "big.jsonl"
    assert cli("route", data, "--mode", "closed", "--router", "hostile_routers:Big", "--router-arg", f"field={field}",
               "--router-arg", f"value={value}", "--out", out) == 0
    rows = read_rows(out)
    failed = [r for r in rows if r["pred"] == ERROR]
    assert {r["i"] for r in failed} == {3} and len(failed) == len(standard_sessions())
    en = [r for r in failed if r["session_id"] == "en-0001"]
    assert en[0]["error"] == f"router big {said}" and "refs" not in en[0]
    assert out.stat().st_size < 20_000  # the whole file: nothing of a million characters


@pytest.mark.parametrize("field, value", [("via", "v64"), ("refs", "distinct")])
def test_a_decision_within_the_limits_is_written_as_given(data, routers, field, value):
    out = data / "big.jsonl"
    assert cli("route", data, "--mode", "closed", "--router", "hostile_routers:Big", "--router-arg", f"field={field}",
               "--router-arg", f"value={value}", "--out", out) == 0
    row = next(r for r in read_rows(out) if r["session_id"] == "en-0001" and r["i"] == 3)
    assert row["pred"] == "A" and row[field] == ("v" * 64 if field == "via" else ["B"])


@pytest.mark.parametrize("field", ["error", "raise"])
def test_what_a_failing_router_says_is_kept_short(data, routers, field):
    out = data / "big.jsonl"
    assert cli("route", data, "--mode", "closed", "--router", "hostile_routers:Big", "--router-arg", f"field={field}",
               "--out", out) == 0
    failed = [r for r in read_rows(out) if r["pred"] == ERROR]
    assert {r["i"] for r in failed} == {3}
    assert all(len(r["error"]) == MAX_ERROR_CHARS and r["error"].endswith("eee...") for r in failed)


def test_valid_refs_score_refs_recall_as_before(data, routers):
    out = data / "refs.jsonl"
    assert cli("route", data, "--mode", "closed", "--router", "hostile_routers:Big", "--router-arg", "field=refs",
               "--router-arg", "value=gold", "--out", out) == 0
    rows = read_rows(out)
    assert not [r for r in rows if r["pred"] == ERROR]
    assert cli("score", data, out, "--split", "dev", "--bootstrap", 0) == 0
    doc = read_json(out.with_name("refs.score.json"))
    # the dev messages with gold refs: en-0001's message 9 (ref A, which the router names) and the
    # random sessions' (each given the first other topic's label, a hit only where that is gold)
    gold = [(s["session_id"], t["i"], t["gold"]["refs"]) for s in standard_sessions() if s["split"] == "dev"
            for t in s["turns"] if t["gold"]["refs"] and t["gold"]["thread"] is not None]
    given = {(r["session_id"], r["i"]): r.get("refs", []) for r in rows}
    hits = sum(bool(set(refs) & set(given[sid, i])) for sid, i, refs in gold)
    assert doc["metrics"]["refs_recall"] == pytest.approx(hits / len(gold), abs=1e-4)
    assert hits >= 1
