"""A router behind an HTTP endpoint, in any language (docs/own_router.md#the-http-protocol).

``GET URL`` answers ``{"policy": NAME}`` once, before the run; then each routing step is
``POST URL`` with the view as JSON, answered by one decision object. A user name and password in
the URL (``http://user:pass@host/route``) go with every request as HTTP Basic authentication, not
in the address asked for. Anything else (a refused
connection, a status other than 200, a body that is not JSON or that the project's strict JSON
reader refuses, such as a key named twice; no whole answer within the time limit, which covers the
exchange from connecting to the body's last byte; a body bigger than the size cap) is that step's
failure, which :class:`~.plugin.PluginRouter` turns into an ``ERROR`` row. Each request waits in a
thread of its own, so the sessions ``--concurrency`` routes side by side wait on the server together.
"""

from __future__ import annotations

import asyncio
import json
import http.client
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Optional

from ..errors import InputError, UsageError, clip
from ..json_text import parse_json
from ..redaction import add_key_in_use, is_secret_parameter
from ..urls import credentials_apart
from .base import RouterView
from .plugin import RouterFailure, decision_from_json, view_json

#: the longest error text kept from a server's answer (an error row stays one readable line)
MAX_ERROR_CHARS = 200
#: the statuses of a server refusing a request for its credentials: 401 (none, or not these), 403
#: (these, or the request whatever its credentials)
CREDENTIALS_REFUSED = (401, 403)
#: the most bytes one read of an answer's body asks for (each read waits at most the time left)
READ_CHUNK = 64 * 1024


class NoWholeAnswer(OSError):
    """An answer not read whole: the time limit passed first, or it is bigger than the size cap."""


class HttpRouter:
    """Asks the server at ``url`` for its policy name, then for each decision."""

    def __init__(self, url: str, *, timeout: float, max_bytes: int,
                 clock: Callable[[], float] = time.monotonic):
        self.url, self.authorization = credentials_apart(url)  # urllib takes no credentials from a URL
        if self.authorization:  # sent with every request: a secret, as the password it holds
            add_key_in_use(self.authorization.split()[-1])
        self.timeout, self.max_bytes, self.clock = timeout, max_bytes, clock
        # no proxy from the environment: the router is the user's own server, often on loopback
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            status, text = self._ask(None)
            hello = parse_json("", None, text) if status == 200 else None
        except InputError as exc:
            raise UsageError(f"--router {url}: GET did not answer {{\"policy\": NAME}}: {_refused(exc, text)}") from None
        except OSError as exc:
            raise UsageError(f"--router {url}: GET did not answer {{\"policy\": NAME}}: {_short(exc)}") from None
        if not isinstance(hello, dict) or not isinstance(hello.get("policy"), str):
            expected = "" if status in CREDENTIALS_REFUSED else ', not {"policy": NAME}'
            raise UsageError(f"--router {url}: GET {self._answered(status, text, expected)}")
        self.policy = hello["policy"]

    def _answered(self, status: int, text: str, expected: str = "") -> str:
        """``answered HTTP STATUS`` for a message: for 401 or 403 what it means (the server refused
        the credentials the URL gives, needs some when a 401 comes to a URL giving none, or refused
        the request when a 403 does), then ``expected`` (what the answer should have been), then the
        answer's text, when it has any."""
        words = f"answered HTTP {status}"
        if status in CREDENTIALS_REFUSED:
            if self.gives_credentials():
                words += " (the server refused the credentials the URL gives)"
            elif status == 401:
                words += " (the server needs credentials: give them in the URL, as USER:PASSWORD@ before its host)"
            else:
                words += " (the server refused the request: forbidden)"
        body = _short(text)
        return f"{words}{expected}: {body}" if body else words + expected

    def gives_credentials(self) -> bool:
        """Whether the URL gives credentials: a user name and password (sent as HTTP Basic), or a
        query parameter with a secret's name and a value (``?api_key=...``, ``&token=...``)."""
        return bool(self.authorization) or _has_secret_param(self.url)

    def _ask(self, body: Optional[bytes]) -> tuple[int, str]:
        """``(status, text)`` of a GET (``body`` None) or a JSON POST; raises ``OSError`` when no answer
        came, :class:`NoWholeAnswer` when none came whole within ``timeout`` seconds of the start
        (connecting, the headers and the body together) or it is bigger than ``max_bytes``."""
        request = urllib.request.Request(self.url, data=body, method="GET" if body is None else "POST",
                                         headers={"Content-Type": "application/json"} if body is not None else {})
        if self.authorization:  # not sent on to where a redirect leads: another host is not the user's server
            request.add_unredirected_header("Authorization", self.authorization)
        deadline = self.clock() + self.timeout
        try:  # (the timeout bounds each wait for connecting and the headers; read_body the rest)
            with self.opener.open(request, timeout=self.timeout) as answer:
                return answer.status, self._text(answer, deadline)
        except urllib.error.HTTPError as exc:  # an answer, with a status other than 2xx
            return exc.code, self._text(exc, deadline)
        except urllib.error.URLError as exc:  # (a connection not made in time comes wrapped)
            if isinstance(exc.reason, TimeoutError):
                raise NoWholeAnswer(no_whole_answer(self.timeout)) from None
            raise
        except TimeoutError:  # the headers did not come in time
            raise NoWholeAnswer(no_whole_answer(self.timeout)) from None

    def _text(self, answer: Any, deadline: float) -> str:
        body = read_body(answer, deadline=deadline, clock=self.clock, seconds=self.timeout, max_bytes=self.max_bytes)
        return body.decode("utf-8", errors="replace")

    async def route(self, view: RouterView) -> Any:
        body = json.dumps(view_json(view), ensure_ascii=False).encode("utf-8")
        try:
            status, text = await in_thread(self._ask, body)
        except NoWholeAnswer as exc:
            raise RouterFailure(str(exc)) from None
        except OSError as exc:
            raise RouterFailure(f"request failed: {_short(exc)}") from None
        if status != 200:
            raise RouterFailure(self._answered(status, text))
        try:
            answer = parse_json("", None, text)
        except InputError as exc:
            raise RouterFailure(f"answered {_refused(exc, text)}") from None
        return decision_from_json(answer, view)


def read_body(answer: Any, *, deadline: float, clock: Callable[[], float], seconds: float, max_bytes: int) -> bytes:
    """The body of ``answer`` (an HTTP response), read in chunks until ``clock()`` reaches
    ``deadline``, each read waiting at most the time left; raises :class:`NoWholeAnswer` when the
    deadline passes first (``seconds``: the limit it names) or the body is bigger than ``max_bytes``."""
    declared = getattr(answer, "length", None)  # its Content-Length, when it gives one
    if isinstance(declared, int) and declared > max_bytes:
        raise NoWholeAnswer(f"answered {declared} bytes, more than the {max_bytes} one answer may have")
    sock = _socket_of(answer)
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - clock()
        if left <= 0:
            raise NoWholeAnswer(no_whole_answer(seconds))
        if sock is not None:
            sock.settimeout(left)
        try:
            chunk = answer.read1(min(READ_CHUNK, max_bytes + 1 - size))  # (one read of the socket at most)
        except TimeoutError:
            raise NoWholeAnswer(no_whole_answer(seconds)) from None
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > max_bytes:
            raise NoWholeAnswer(f"answered more than the {max_bytes} bytes one answer may have")
        chunks.append(chunk)


def no_whole_answer(seconds: float) -> str:
    return f"gave no whole answer within {seconds:g} seconds"


def _socket_of(answer: Any) -> Any:
    """The socket an HTTP response (or the one an ``HTTPError`` holds) reads from, or None."""
    response = answer if isinstance(answer, http.client.HTTPResponse) else getattr(answer, "fp", None)
    if not isinstance(response, http.client.HTTPResponse):
        return None
    return getattr(getattr(response.fp, "raw", None), "_sock", None)


def _has_secret_param(url: str) -> bool:
    """Whether ``url``'s query has a parameter with a secret's name
    (:func:`~..redaction.is_secret_parameter`, the rule its value is redacted by) and a value."""
    from urllib.parse import unquote_plus, urlsplit

    for pair in urlsplit(url).query.split("&"):
        name, _, value = pair.partition("=")
        name = unquote_plus(name)
        if value and is_secret_parameter(name):
            return True
    return False


def _refused(exc: InputError, text: str) -> str:
    """What is wrong with an answer's ``text``, which the project's strict JSON reader refused
    (:func:`~..json_text.parse_json`, as every file's JSON is read): a key named twice in one object,
    ``NaN``, an integer outside 64 bits... are refused, never read as Python's ``json`` reads them."""
    if exc.field is None:  # no JSON at all (broken, or nested too deeply to read)
        return f"a body that is not JSON: {_short(text)}"
    return f"JSON that cannot be read: {exc.field}: {exc.message}"


def _short(value: Any) -> str:
    return clip(" ".join(str(value).split()), MAX_ERROR_CHARS)


async def in_thread(work: Callable[..., Any], *args: Any) -> Any:
    """``work(*args)``, run in a daemon thread of its own and awaited. Not ``asyncio.to_thread``: the
    end of a run waits for its pool, so Ctrl-C would wait for a request in flight (up to
    :data:`~.plugin.HTTP_TIMEOUT`); a daemon thread is left to end on its own."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def settle(how: Callable[[Any], None], value: Any) -> None:
        if not done.done():  # (cancelled: the run stopped, no one waits for the answer)
            how(value)

    def run() -> None:
        try:
            answer = (done.set_result, work(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task, which decides
            answer = (done.set_exception, exc)
        try:
            loop.call_soon_threadsafe(settle, *answer)
        except RuntimeError:  # the loop is closed: the run has ended
            pass

    threading.Thread(target=run, name="http-router", daemon=True).start()
    return await done
