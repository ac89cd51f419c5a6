"""A fake OpenAI-compatible HTTP server on loopback that serves the fake model.

``POST /v1/chat/completions`` (and ``/chat/completions``) answers with the fake model
(:mod:`interleave_bench.llm.fake`) and a ``usage`` block, echoing the request's ``model`` and
marking every answer as the fake model's own with ``system_fingerprint``
(:data:`~.provider.FAKE_FINGERPRINT`), which the project's client counts under another model's name. It counts requests, tracks how many are in
flight at once, and can inject faults, so tests and benchmarks exercise the real HTTP path of the
``openai`` client: 429 with ``Retry-After``, 500, slow answers, malformed JSON bodies, garbage
answers and dropped connections.

Use it as a context manager::

    with FakeServer() as srv:
        srv.add_fault("429", times=1, retry_after=1)
        ... OPENAI_BASE_URL=srv.url ...
"""

from __future__ import annotations

import json
import random
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import quote, quote_plus

from . import fake
from .client import KIND_HEADER
from .provider import FAKE_FINGERPRINT, FAKE_MODEL

FAULT_KINDS = ("429", "500", "slow", "malformed", "truncated", "garbage", "drop")
#: well-formed 200 answers the client cannot use: a usage no provider counts (negative tokens, or
#: ``prompt_tokens: true``),
#: ``content: null``, ``content: 42`` (a number, not text), and text cut off at the token limit
#: (``finish_reason: length``)
UNUSABLE_KINDS = ("usage", "usage_bool", "null", "number", "length")
#: an error whose text echoes the request's ``Authorization`` header, a key query parameter and the
#: key URL-encoded (``%2B``, and lower-cased), as some providers' error pages do (HTTP 401, not retried)
ECHO_KIND = "echo"
ALL_FAULT_KINDS = FAULT_KINDS + UNUSABLE_KINDS + (ECHO_KIND,)


@dataclass
class Fault:
    """One injected fault, applied to the next ``times`` requests that match.

    ``match`` is a substring of the request body (e.g. a session id); ``None`` matches every request.
    ``kind``: ``429`` (with ``Retry-After: retry_after``), ``500``, ``slow`` (answers after ``delay``
    seconds), ``malformed`` (HTTP 200 with a body that is not JSON), ``truncated`` (HTTP 200 with the first half
    of the real answer's JSON, as a connection cut mid-body would leave it), ``garbage`` (a well-formed
    completion whose text is nonsense), ``drop`` (closes the connection without answering), and
    :data:`UNUSABLE_KINDS` and :data:`ECHO_KIND`.
    """

    kind: str
    times: int = 1
    match: str | None = None
    retry_after: float | None = None
    delay: float = 0.0
    request_kind: str | None = None  # only requests with this X-Interleave-Kind

    def __post_init__(self) -> None:
        if self.kind not in ALL_FAULT_KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; one of {', '.join(ALL_FAULT_KINDS)}")


@dataclass
class RequestLog:
    time: float
    kind: str | None
    status: int | str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names


#: how long a held request or a waiting test waits at most: a gate that never opens fails the
#: test that set it instead of hanging the suite
GATE_TIMEOUT_S = 60.0


class _QuietServer(ThreadingHTTPServer):
    """A client that goes away mid-answer (a run stopped with Ctrl-C) is normal here, not an error."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def request_problem(body: Any) -> str | None:
    """Why a request body is no chat completion request (``None`` when it is one): a body that is
    not a JSON object, or ``messages`` that are not a list of objects, is answered 400 as a real
    server answers it, not with a dropped connection and a traceback on the server's stderr."""
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    messages = body.get("messages", [])
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return "'messages' must be a list of objects"
    return None


def _error(message: str) -> bytes:
    """An error body as OpenAI-compatible servers send it (``invalid_request_error``)."""
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode("utf-8")


class FakeServer:
    """The fake OpenAI-compatible server, on ``127.0.0.1`` and a free port, in a daemon thread."""

    def __init__(self, *, delay: float = 0.0, cached_share: float = 0.0, host: str = "127.0.0.1", port: int = 0,
                 report_usage: bool = True):
        self.delay = delay  # seconds every answer waits (to test concurrency)
        self.cached_share = cached_share  # share of prompt tokens reported as provider-cached
        #: whether answers carry a ``usage`` block (some OpenAI-compatible servers send none)
        self.report_usage = report_usage
        self.faults: list[Fault] = []
        self._chaos: tuple[float, random.Random, tuple[str, ...], float, frozenset[str]] | None = None
        self.log: list[RequestLog] = []
        self.calls = 0  # every request received, faulty or not
        self.completions = 0  # requests answered with a completion
        self.in_flight = 0
        self.max_in_flight = 0
        self.usage_total = {"prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0}
        self.arrived = threading.Event()  # set by the first request (a barrier for tests)
        self.gate: threading.Event | None = None  # when set by :meth:`hold`, requests wait for it
        self.held = 0  # requests waiting at the gate now (see hold_until)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # notified whenever the counts above change
        self._release: Callable[["FakeServer"], bool] | None = None
        self._httpd = _QuietServer((host, port), self._make_handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # --- control ----------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def add_fault(self, kind: str, **kw: Any) -> Fault:
        f = Fault(kind, **kw)
        with self._lock:
            self.faults.append(f)
        return f

    def chaos(self, rate: float, seed: int, kinds: tuple[str, ...] = FAULT_KINDS, delay: float = 0.2,
              free_text: tuple[str, ...] = ()) -> None:
        """Give each request not matched by a listed fault a ``rate`` chance of a fault of one of
        ``kinds`` (drawn from a generator seeded with ``seed``; ``slow`` waits ``delay`` seconds).

        ``free_text`` names request kinds whose answer is free text (a probe's answer, a summary):
        nonsense there cannot be told from a model's answer, so a ``garbage`` draw for them becomes
        another of ``kinds``."""
        for k in kinds:
            Fault(k)  # checks the name
        self._chaos = (rate, random.Random(seed), tuple(kinds), delay, frozenset(free_text))

    def hold(self) -> threading.Event:
        """Make every request wait until the returned event is set: a barrier that keeps a client
        mid-run (``arrived`` tells when the first request is waiting)."""
        self.gate = threading.Event()
        return self.gate

    def reset_counts(self) -> None:
        with self._lock:
            self.calls = self.completions = 0
            self.max_in_flight = 0
            self.log.clear()
            for k in self.usage_total:
                self.usage_total[k] = 0

    def hold_until(self, release: Callable[["FakeServer"], bool]) -> None:
        """Hold each request, once counted in flight, until ``release(server)`` is true.

        A barrier for tests instead of sleeps: ``release`` is checked (under the server's lock)
        when a request arrives and whenever a count changes. ``open_gate`` lets everything through.
        """
        with self._changed:
            self._release = release
            self._changed.notify_all()

    def open_gate(self) -> None:
        """Let every held request (and every later one) through."""
        with self._changed:
            self._release = None
            self._changed.notify_all()

    def wait_for(self, condition: Callable[["FakeServer"], bool], timeout: float = GATE_TIMEOUT_S) -> bool:
        """Wait until ``condition(server)`` holds (checked whenever a count changes); False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: condition(self), timeout)

    def _pass_gate(self) -> None:
        """Called with the lock held, after a request was counted in flight."""
        self._changed.notify_all()
        if self._release is None or self._release(self):
            return
        self.held += 1
        self._changed.notify_all()
        self._changed.wait_for(lambda: self._release is None or self._release(self), GATE_TIMEOUT_S)
        self.held -= 1
        self._changed.notify_all()

    def start(self) -> "FakeServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "FakeServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # --- request handling -------------------------------------------------------------------------

    def _take_fault(self, raw: str, kind: str | None) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if f.times <= 0:
                    continue
                if f.match is not None and f.match not in raw:
                    continue
                if f.request_kind is not None and f.request_kind != kind:
                    continue
                f.times -= 1
                return f
            if self._chaos is not None:
                rate, rng, kinds, delay, free_text = self._chaos
                if rng.random() < rate:
                    drawn = rng.choice(kinds)
                    if drawn == "garbage" and kind in free_text:
                        others = [k for k in kinds if k != "garbage"]
                        if not others:
                            return None
                        drawn = rng.choice(others)
                    return Fault(drawn, delay=delay)
        return None

    def _completion(self, body: dict[str, Any], kind: str | None, garbage: bool, fault: str | None = None) -> dict[str, Any]:
        messages = body.get("messages") or []
        if garbage:
            text = "I am not sure what you mean. Here is a poem instead: roses are red."
        else:
            text = fake.answer(kind, messages, body)
        prompt_text = "".join(str(m.get("content", "")) for m in messages)
        prompt_tokens = fake.count_tokens(prompt_text) + 4 * len(messages)
        completion_tokens = fake.count_tokens(text)
        cached = int(prompt_tokens * self.cached_share)
        with self._lock:
            self.usage_total["prompt_tokens"] += prompt_tokens
            self.usage_total["completion_tokens"] += completion_tokens
            self.usage_total["cached_tokens"] += cached
        rid = fake.stable_hash(body) % 10**12
        content: str | int | None = text
        finish = "stop"
        if fault == "null":
            content = None
        elif fault == "number":
            content = 42
        elif fault == "length":
            content, finish = text[: max(1, len(text) // 2)], "length"
        elif fault == "usage":
            prompt_tokens = -prompt_tokens
        answer: dict[str, Any] = {
            "id": f"chatcmpl-fake-{rid}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body.get("model", FAKE_MODEL),
            "system_fingerprint": FAKE_FINGERPRINT,  # whatever ``model`` says: this answer is the fake model's
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }
        if fault == "usage_bool":  # a count JSON writes as a boolean: the openai client reads ``true`` as 1
            answer["usage"]["prompt_tokens"] = True
        if not self.report_usage:
            del answer["usage"]
        return answer

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in two writes: without this, Nagle's algorithm and delayed
            # ACKs add ~40 ms to every answer on loopback
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": [{"id": FAKE_MODEL, "object": "model"}]}).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                    if length < 0:
                        raise ValueError
                except ValueError:
                    self.close_connection = True  # the body's end is unknown: nothing after it can be read
                    self._send(400, _error("Content-Length must be a whole number of bytes"))
                    return
                raw = self.rfile.read(length).decode("utf-8", "replace")
                kind = self.headers.get(KIND_HEADER)
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    body = json.loads(raw) if raw else {}
                except json.JSONDecodeError:
                    body = None
                problem = request_problem(body)
                if problem is not None:
                    body = {}
                server.arrived.set()
                if server.gate is not None:
                    server.gate.wait()
                with server._lock:
                    server.calls += 1
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    server._pass_gate()
                status: int | str = 200
                try:
                    if not self.path.rstrip("/").endswith("/chat/completions"):
                        status = 404
                        self._send(404, b'{"error": {"message": "unknown endpoint"}}')
                        return
                    if problem is not None:
                        status = 400
                        self._send(400, _error(problem))
                        return
                    fault = server._take_fault(raw, kind)
                    delay = server.delay + (fault.delay if fault and fault.kind == "slow" else 0.0)
                    if delay:
                        time.sleep(delay)
                    if fault is not None and fault.kind == "429":
                        status = 429
                        extra = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
                        self._send(429, b'{"error": {"message": "rate limited", "type": "rate_limit"}}', extra)
                    elif fault is not None and fault.kind == ECHO_KIND:
                        status = 401
                        auth = headers.get("authorization", "")
                        token = auth.split()[-1] if auth else ""
                        lower_hex = re.sub("%[0-9A-F]{2}", lambda m: m[0].lower(), quote_plus(token))
                        echoed = (f"invalid request to {self.path}?key={token}: header Authorization: {auth}; "
                                  f"credential {quote(token, safe='')} or {lower_hex} refused")
                        self._send(401, json.dumps({"error": {"message": echoed, "type": "auth"}}).encode("utf-8"))
                    elif fault is not None and fault.kind == "500":
                        status = 500
                        self._send(500, b'{"error": {"message": "internal error", "type": "server_error"}}')
                    elif fault is not None and fault.kind == "drop":
                        status = "drop"
                        self.close_connection = True
                        try:
                            self.connection.shutdown(2)
                        except OSError:
                            pass
                    elif fault is not None and fault.kind == "malformed":
                        status = "malformed"
                        self._send(200, b'{"id": "chatcmpl-broken", "choices": [{"message": ')
                    elif fault is not None and fault.kind == "truncated":
                        status = "truncated"
                        whole = json.dumps(server._completion(body, kind, garbage=False), ensure_ascii=False).encode("utf-8")
                        self._send(200, whole[: len(whole) // 2])
                    else:
                        try:
                            payload = server._completion(body, kind, garbage=bool(fault and fault.kind == "garbage"),
                                                         fault=fault.kind if fault is not None else None)
                        except Exception as exc:  # noqa: BLE001 - a request its kind's answer cannot read
                            status = 400
                            self._send(400, _error(f"the fake model cannot answer this {kind or 'untyped'} request "
                                                   f"({type(exc).__name__}: {exc})"))
                            return
                        if fault is not None and fault.kind in UNUSABLE_KINDS:
                            status = fault.kind
                        with server._lock:
                            server.completions += 1
                        self._send(200, json.dumps(payload, ensure_ascii=False).encode("utf-8"))
                finally:
                    with server._lock:
                        server.in_flight -= 1
                        server.log.append(RequestLog(time.time(), kind, status, body, headers))
                        server._changed.notify_all()

        return Handler
