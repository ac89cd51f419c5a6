"""A plug-in router whose own code raises while it is made or its attributes are read is one line,
``router module:Class: could not start: Type: message``, exit 2, never an internal error; an
exception whose ``__str__`` raises in turn is named by its type, at load and in an ``ERROR`` row."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import interleave_bench
from interleave_bench.cli import main
from interleave_bench.errors import UsageError, exc_said, exc_text
from interleave_bench.schema import ERROR

from _route_util import read_rows, write_data

MODULE = "start_routers"
KEY = "sk-start-SECRET-0123456789abcdefXYZ"

ROUTERS = '''
from interleave_bench.route.base import Decision


class Unreadable(Exception):
    """An exception whose text cannot be read: its __str__ raises in turn."""

    def __str__(self):
        raise RuntimeError("no text")


class Checked:
    """Checks its arguments as an ordinary class does, with a ValueError."""

    policy = "checked"

    def __init__(self, min_score=1, api_key=None, fail_at=None):
        if min_score < 0:
            raise ValueError(f"min_score must be 0 or more, got {min_score} (with key {api_key})")
        self.min_score, self.fail_at = min_score, fail_at

    def route(self, view):
        if view.pending[0].i == self.fail_at:
            raise Unreadable()
        return Decision.to_topic(view.topics[0].label) if view.topics else Decision.new("x")


class FailingPolicy(Checked):
    @property
    def policy(self):
        raise RuntimeError("the policy table is not there")


class FailingRoute(Checked):
    policy = "failing-route"

    @property
    def route(self):
        raise LookupError("no route today")


class UnreadableInit(Checked):
    def __init__(self):
        raise Unreadable()
'''


@pytest.fixture
def data(tmp_path) -> Path:
    return write_data(tmp_path / "data")


@pytest.fixture
def routers(tmp_path, monkeypatch):
    folder = tmp_path / "mods"
    folder.mkdir()
    (folder / f"{MODULE}.py").write_text(ROUTERS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop(MODULE, None)
    yield
    sys.modules.pop(MODULE, None)


def route(data: Path, cls: str, *router_args: str) -> int:
    argv = ["route", str(data), "--mode", "closed", "--router", f"{MODULE}:{cls}"]
    for arg in router_args:
        argv += ["--router-arg", arg]
    return main(argv)


@pytest.mark.parametrize("cls, args, said", [
    ("Checked", ["min_score=-1"], "ValueError: min_score must be 0 or more, got -1 (with key None)"),
    ("Checked", ["colour=red"], "TypeError: Checked.__init__() got an unexpected keyword argument 'colour'"),
    ("FailingPolicy", [], "RuntimeError: the policy table is not there"),
    ("FailingRoute", [], "LookupError: no route today"),
    ("UnreadableInit", [], "Unreadable"),  # its text cannot be read: its type says it
])
def test_a_router_that_raises_as_it_starts_is_one_line_exit_2(data, routers, cls, args, said, capsys):
    assert route(data, cls, *args) == 2
    err = capsys.readouterr().err
    assert err == f"error: router {MODULE}:{cls}: could not start: {said}\n"
    assert not (data / "predictions").exists()


def test_a_key_among_the_router_args_is_redacted_from_the_line(data, routers, capsys):
    assert route(data, "Checked", "min_score=-1", f"api_key={KEY}") == 2
    err = capsys.readouterr().err
    assert err == f"error: router {MODULE}:Checked: could not start: ValueError: min_score must be 0 or more, " \
                  "got -1 (with key [redacted])\n"


def test_an_unreadable_exception_while_routing_is_an_error_row_named_by_its_type(data, routers, capsys):
    assert route(data, "Checked", "fail_at=3") == 0
    rows = read_rows(data / "predictions" / "closed-checked.jsonl")
    failed = [r for r in rows if r["pred"] == ERROR]
    assert failed and all(r["i"] == 3 for r in failed)
    assert {r["error"] for r in failed} == {"router checked raised Unreadable"}
    assert "internal error" not in capsys.readouterr().err


def test_a_router_from_python_that_cannot_start_raises_the_same_line(data, routers):
    import start_routers

    with pytest.raises(UsageError, match=rf"^router {MODULE}:FailingPolicy: could not start: RuntimeError: "
                                         "the policy table is not there$"):
        interleave_bench.evaluate_router(start_routers.FailingPolicy(), data, mode="closed", bootstrap=0)


def test_an_exception_whose_text_cannot_be_read_is_named_by_its_type():
    class Unreadable(Exception):
        def __str__(self):
            raise RuntimeError("no text")

    assert exc_said(Unreadable()) == exc_text(Unreadable()) == "Unreadable"
    assert exc_said(ValueError("bad\nvalue")) == "ValueError: bad value" and exc_said(KeyError()) == "KeyError"
