"""An HTTP router's time limit covers the whole answer, not each read of it, and an answer's size is
capped: a server trickling its answer, or stopping in the middle of it, or sending more than one
decision can hold, is an error row, never a hung run nor a normal row written late."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Optional

import pytest

from interleave_bench.cli import main
from interleave_bench.route.http_router import HttpRouter, NoWholeAnswer, read_body
from interleave_bench.route.plugin import HTTP_MAX_ANSWER_BYTES, HTTP_TIMEOUT
from interleave_bench.schema import ERROR

from _loopback import Loopback
from _route_util import read_rows, standard_sessions, write_data


class Trickle:
    """A response whose every read gives one byte of ``body`` (endless when None), as a server
    sending one byte at a time does; ``clock`` moves on ``step`` seconds with each read."""

    def __init__(self, clock: "FakeClock", step: float, body: Optional[bytes] = None):
        self.clock, self.step, self.body, self.reads = clock, step, body, 0

    def read1(self, n: int) -> bytes:
        assert n >= 1
        self.reads += 1
        self.clock.now += self.step
        if self.body is None:
            return b" "
        byte, self.body = self.body[:1], self.body[1:]
        return byte


class FakeClock:
    def __init__(self, now: float = 0.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_trickled_body_past_the_deadline_is_no_whole_answer_without_waiting():
    clock = FakeClock(1000.0)
    answer = Trickle(clock, step=3.0)  # one byte every 3 seconds, for ever
    with pytest.raises(NoWholeAnswer) as caught:
        read_body(answer, deadline=1000.0 + 60, clock=clock, seconds=60, max_bytes=HTTP_MAX_ANSWER_BYTES)
    assert str(caught.value) == "gave no whole answer within 60 seconds"
    assert answer.reads == 20  # read while time was left, and not once after


def test_a_valid_answer_trickled_past_the_deadline_is_refused_too():
    """The case found: a valid decision, one byte every 3 seconds, took 96 seconds as a normal row."""
    clock = FakeClock()
    body = json.dumps({"kind": "topic", "label": "A", "via": "x" * 10}).encode()
    assert 3.0 * len(body) > 60
    with pytest.raises(NoWholeAnswer, match="within 60 seconds"):
        read_body(Trickle(clock, 3.0, body), deadline=60.0, clock=clock, seconds=60, max_bytes=HTTP_MAX_ANSWER_BYTES)


def test_a_trickled_body_within_the_deadline_is_read_whole():
    clock = FakeClock()
    body = b'{"kind": "topic", "label": "A"}'
    assert read_body(Trickle(clock, 0.5, body), deadline=60.0, clock=clock, seconds=60,
                     max_bytes=HTTP_MAX_ANSWER_BYTES) == body


def test_a_body_over_the_cap_is_refused_once_past_it():
    clock = FakeClock()
    answer = Trickle(clock, 0.0)
    with pytest.raises(NoWholeAnswer) as caught:
        read_body(answer, deadline=60.0, clock=clock, seconds=60, max_bytes=10)
    assert str(caught.value) == "answered more than the 10 bytes one answer may have"
    assert answer.reads == 11


# --- a real server on loopback ------------------------------------------------------------------


class Server(Loopback):
    """A router on loopback: ``{"policy": "big"}`` to GET; to POST, the first topic (or a new one),
    and for message 3 ``special(handler)``."""

    def __init__(self, special):
        class Handler(BaseHTTPRequestHandler):
            def answer(self, data: bytes, length: bool = True) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if length:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except OSError:  # (the client stopped reading: what the test is about)
                    pass

            def do_GET(self):
                self.answer(b'{"policy": "big"}')

            def do_POST(self):
                view = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if view["pending"][0]["i"] == 3:
                    return special(self)
                topics = view["topics"]
                self.answer(json.dumps({"kind": "topic", "label": topics[0]["label"]} if topics
                                       else {"kind": "new", "title": "x"}).encode())

            def log_message(self, *args):
                pass

        self.serve(Handler)
        self.url = f"http://127.0.0.1:{self.port}/route"


def too_big(length: bool):
    """A decision one byte over the cap, its size said in Content-Length (``length``) or not."""
    def special(handler) -> None:
        head = b'{"kind": "topic", "label": "A", "via": "'
        data = head + b"x" * (HTTP_MAX_ANSWER_BYTES + 1 - len(head) - 2) + b'"}'
        assert len(data) == HTTP_MAX_ANSWER_BYTES + 1
        handler.answer(data, length=length)
    return special


@pytest.mark.parametrize("length, said", [
    (True, f"answered {HTTP_MAX_ANSWER_BYTES + 1} bytes, more than the {HTTP_MAX_ANSWER_BYTES} one answer may have"),
    (False, f"answered more than the {HTTP_MAX_ANSWER_BYTES} bytes one answer may have"),
])
def test_an_http_answer_over_the_size_cap_is_an_error_row_naming_the_size(tmp_path: Path, length, said):
    data = write_data(tmp_path / "data")
    with Server(too_big(length)) as server:
        assert main(["route", str(data), "--mode", "closed", "--router", server.url,
                     "--out", str(data / "big.jsonl")]) == 0
    rows = read_rows(data / "big.jsonl")
    failed = [r for r in rows if r["pred"] == ERROR]
    assert {r["i"] for r in failed} == {3} and len(failed) == len(standard_sessions())
    assert {r["error"] for r in failed} == {f"router big {said}"}
    assert all(r.get("error") is None for r in rows if r["i"] != 3)


class StepClock:
    """``times`` one by one, then ``later`` for ever."""

    def __init__(self, later: float):
        self.times: list[float] = []
        self.later = later

    def __call__(self) -> float:
        return self.times.pop(0) if self.times else self.later


def test_a_server_stopping_mid_answer_is_no_whole_answer_once_the_time_left_is_spent():
    """Each read of the socket waits only the time left: with 0.01 of 60 seconds left (a clock
    given), a server holding back the rest of its answer until the test ends fails at once."""
    release = threading.Event()

    def stall(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "40")
        handler.end_headers()
        handler.wfile.write(b'{"kind": "topic",')
        handler.wfile.flush()
        release.wait()  # (the rest never comes while the client waits)

    clock = StepClock(later=HTTP_TIMEOUT - 0.01)
    with Server(stall) as server:
        try:
            router = HttpRouter(server.url, timeout=HTTP_TIMEOUT, max_bytes=HTTP_MAX_ANSWER_BYTES, clock=clock)
            assert router.policy == "big"
            clock.times = [0.0]  # the request starts at 0: its deadline is HTTP_TIMEOUT
            with pytest.raises(NoWholeAnswer, match=f"^gave no whole answer within {HTTP_TIMEOUT:g} seconds$"):
                router._ask(json.dumps({"pending": [{"i": 3}], "topics": []}).encode())
        finally:
            release.set()
