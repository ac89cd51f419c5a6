"""The collector tricks of ``heap``: a command may freeze what it built, library code never does."""

from __future__ import annotations

import gc
import weakref

import pytest

from interleave_bench import heap
from interleave_bench.io import read_sessions

from _route_util import write_data


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_a_command_pause_freezes_what_it_built(monkeypatch, unfrozen):
    monkeypatch.setattr(heap, "FREEZE_ABOVE", 10)
    with heap.paused_gc():
        built = [Node() for _ in range(50)]
    assert gc.get_freeze_count() > 0
    assert built


def test_reading_sessions_freezes_nothing_and_a_cycle_dropped_later_is_freed(tmp_path, monkeypatch, unfrozen):
    monkeypatch.setattr(heap, "FREEZE_ABOVE", 10)  # the sessions read make far more objects than this
    data = write_data(tmp_path / "data")
    cycle = Node()
    alive = weakref.ref(cycle)
    sessions = read_sessions(data / "sessions.jsonl")
    assert sessions and gc.get_freeze_count() == 0
    del cycle
    gc.collect()
    assert alive() is None


def test_reading_sessions_leaves_another_freeze_as_it_was(tmp_path, monkeypatch, unfrozen):
    monkeypatch.setattr(heap, "FREEZE_ABOVE", 10)
    data = write_data(tmp_path / "data")
    marker = Node()
    gc.freeze()  # a caller's own (the runner's settled(), say)
    frozen = gc.get_freeze_count()
    assert read_sessions(data / "sessions.jsonl")
    # nothing newly frozen (a frozen object another thread drops may lower the count), and the
    # caller's freeze still holds: its objects are in no generation the collector walks
    assert gc.get_freeze_count() <= frozen
    assert not any(o is marker for o in gc.get_objects())
