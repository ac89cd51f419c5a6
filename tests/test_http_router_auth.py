"""A ``--router`` HTTP URL with a user name and password (``http://user:pass@host/route``): they go
with every request as HTTP Basic authentication, never in the address asked for, and the
password (and the header holding it) reaches no file and nothing printed."""

from __future__ import annotations

import base64
import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Optional

import pytest

from interleave_bench import redaction
from interleave_bench.redaction import REDACTED
from interleave_bench.urls import credentials_apart

from _cli_util import cli
from _loopback import Loopback
from _route_util import read_rows, write_data

USER, PASSWORD = "router-user", "horse-battery"  # a password no key's shape: secret by its place alone


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode("utf-8")).decode("ascii")


class Server(Loopback):
    """A sticky router on loopback that answers only requests carrying ``Authorization: expected``
    (401 otherwise, its body echoing the header it was sent, as a careless server may), and keeps
    ``(method, path, Authorization)`` of each request. ``redirect_to``: every GET is sent there."""

    def __init__(self, expected: Optional[str], redirect_to: Optional[str] = None):
        self.seen: list[tuple[str, str, Optional[str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def answer(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def authorized(self) -> bool:
                given = self.headers.get("Authorization")
                server.seen.append((self.command, self.path, given))
                if given != expected:
                    self.answer(401, {"error": f"bad credentials {given}"})
                    return False
                return True

            def do_GET(self):
                if redirect_to:
                    server.seen.append((self.command, self.path, self.headers.get("Authorization")))
                    self.send_response(302)
                    self.send_header("Location", redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif self.authorized():
                    self.answer(200, {"policy": "sticky"})

            def do_POST(self):
                view = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.authorized():
                    label = view["current"] or (view["cards"][0]["id"] if view["cards"] else None)
                    self.answer(200, {"kind": "topic", "label": label} if label else {"kind": "new", "title": "work"})

            def log_message(self, *args):
                pass

        self.serve(Handler)

    def url(self, userinfo: str = "", query: str = "") -> str:
        return f"http://{userinfo + '@' if userinfo else ''}127.0.0.1:{self.port}/route{query}"


@pytest.fixture(autouse=True)
def fresh_secrets(monkeypatch):
    """The secrets a command is given are kept for the rest of the process: each test starts without."""
    monkeypatch.setattr(redaction, "_GIVEN", set())


def files_holding(root: Path, *texts: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and any(t.encode() in p.read_bytes() for t in texts)]


def test_a_urls_credentials_are_sent_as_basic_auth_on_every_request(tmp_path, capsys):
    data = write_data(tmp_path / "data")
    out = tmp_path / "h.jsonl"
    with Server(basic(USER, PASSWORD)) as server:
        url = server.url(f"{USER}:{PASSWORD}")
        assert cli("route", data, "--mode", "closed", "--router", url, "--out", out) == 0
        rows = read_rows(out)
        assert rows and {r["pred"] for r in rows}.isdisjoint({"ERROR"}) and {r["policy"] for r in rows} == {"sticky"}
        methods = [m for m, _, _ in server.seen]
        assert methods[0] == "GET" and methods.count("POST") == len(rows)
        # every request carried the credentials, none in the address asked for
        assert {(path, auth) for _, path, auth in server.seen} == {("/route", basic(USER, PASSWORD))}
        record = out.with_suffix(".run.json").read_text(encoding="utf-8")
        assert f"{USER}:{REDACTED}@" in record
        # the same command resumes its file: the record's redacted URL compares equal
        assert cli("route", data, "--mode", "closed", "--router", url, "--out", out) == 0
        assert "already done" in capsys.readouterr().err
    token = basic(USER, PASSWORD).split()[1]
    assert files_holding(tmp_path, PASSWORD, token) == []


def test_a_refused_password_is_one_line_naming_no_part_of_it(tmp_path, capsys):
    """The server says 401 and echoes the header it got: the line says the credentials were refused
    and shows neither the password nor the header."""
    data = write_data(tmp_path / "data")
    with Server(basic(USER, "another-password")) as server:
        assert cli("route", data, "--mode", "open", "--router", server.url(f"{USER}:{PASSWORD}")) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "GET answered HTTP 401 (the server refused the credentials the URL " \
                                          'gives): {"error": "bad credentials Basic ' in err, err
    assert PASSWORD not in err and basic(USER, PASSWORD).split()[1] not in err and "Traceback" not in err
    assert not (data / "predictions").exists() or files_holding(data / "predictions", PASSWORD) == []


class Answering(Server):
    """A server on loopback answering every ``GET`` and ``POST`` with the status and body given."""

    def __init__(self, get: tuple[int, bytes], post: tuple[int, bytes] = (200, b"")):
        super().__init__(None)
        answers = {"GET": get, "POST": post}

        class Handler(BaseHTTPRequestHandler):
            def reply(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, body = answers[self.command]
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = reply

            def log_message(self, *args):
                pass

        self.httpd.RequestHandlerClass = Handler


NEEDS = "(the server needs credentials: give them in the URL, as USER:PASSWORD@ before its host)"
REFUSED = "(the server refused the credentials the URL gives)"
FORBIDDEN = "(the server refused the request: forbidden)"
API_KEY = "MyS3cretApiKey"  # a query parameter's secret: secret by its name alone


@pytest.mark.parametrize("status, userinfo, query, line", [
    (401, "", "", f"GET answered HTTP 401 {NEEDS}"),
    (401, "", "?page=2", f"GET answered HTTP 401 {NEEDS}"),  # a parameter, but no secret's
    (401, f"{USER}:{PASSWORD}", "", f"GET answered HTTP 401 {REFUSED}"),
    (401, "", f"?api_key={API_KEY}", f"GET answered HTTP 401 {REFUSED}"),
    (401, "", f"?page=2&access_token={API_KEY}", f"GET answered HTTP 401 {REFUSED}"),
    (403, f"{USER}:{PASSWORD}", "", f"GET answered HTTP 403 {REFUSED}"),
    (403, "", f"?token={API_KEY}", f"GET answered HTTP 403 {REFUSED}"),
    (403, "", "", f"GET answered HTTP 403 {FORBIDDEN}"),  # not for credentials: none were given
    (500, "", "", 'GET answered HTTP 500, not {"policy": NAME}'),  # an empty body: nothing after the status
])
def test_a_get_refused_says_whether_for_its_credentials(tmp_path, capsys, status, userinfo, query, line):
    """It said ``GET answered HTTP 401 , not {"policy": NAME}``: a stray space, no word of credentials;
    then that the server needs credentials when a query parameter gave them, and every 403 so."""
    data = write_data(tmp_path / "data")
    with Answering(get=(status, b"")) as server:
        assert cli("route", data, "--mode", "open", "--router", server.url(userinfo, query)) == 2
    err = capsys.readouterr().err
    shown = f"/route?{query[1:].replace(API_KEY, REDACTED)}" if query else "/route"
    assert len(err.splitlines()) == 1 and err.rstrip("\n").endswith(f"{shown}: {line}"), err
    assert API_KEY not in err and PASSWORD not in err


def test_a_post_refused_for_its_credentials_says_so_in_its_error(tmp_path, capsys):
    """Every decision refused: the run stops in one line, the last failure's words in it."""
    data = write_data(tmp_path / "data")
    with Answering(get=(200, b'{"policy": "sticky"}'), post=(403, b"forbidden")) as server:
        assert cli("route", data, "--mode", "open", "--router", server.url(f"{USER}:{PASSWORD}")) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and ("(last: router sticky answered HTTP 403 (the server refused the credentials "
                                           "the URL gives): forbidden)") in err, err


def test_a_post_forbidden_without_credentials_says_the_request_was_refused(tmp_path, capsys):
    data = write_data(tmp_path / "data")
    with Answering(get=(200, b'{"policy": "sticky"}'), post=(403, b"forbidden")) as server:
        assert cli("route", data, "--mode", "open", "--router", server.url()) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"(last: router sticky answered HTTP 403 {FORBIDDEN}: forbidden)" in err, err


def test_credentials_are_not_sent_on_to_where_a_redirect_leads(tmp_path, capsys):
    """Another host is not the user's server: a redirect there gets no ``Authorization``."""
    data = write_data(tmp_path / "data")
    with Server(None) as elsewhere, Server(basic(USER, PASSWORD), redirect_to=elsewhere.url()) as server:
        assert cli("route", data, "--mode", "open", "--router", server.url(f"{USER}:{PASSWORD}")) == 0
        assert server.seen[0] == ("GET", "/route", basic(USER, PASSWORD))
        assert elsewhere.seen[0] == ("GET", "/route", None)


def test_a_password_too_short_to_keep_out_is_refused_before_any_request(tmp_path, capsys):
    data = write_data(tmp_path / "data")
    with Server(basic(USER, "sekret")) as server:
        assert cli("route", data, "--mode", "open", "--router", server.url(f"{USER}:sekret")) == 2
        assert server.seen == []
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "sekret" not in err
    assert err.startswith(f"error: --router http://{REDACTED}@127.0.0.1:") and "its password is a secret of under 8 characters or a plain word" in err


@pytest.mark.parametrize("url, bare, pair", [
    ("http://u:p@h:1/r?x=1", "http://h:1/r?x=1", "u:p"),
    ("https://us%40er:p%3Ass%20w@h/r", "https://h/r", "us@er:p:ss w"),  # percent-encoded, as RFC 3986 has them
    ("http://tok@h/r", "http://h/r", "tok:"),  # a user name alone
    ("http://u:p@[::1]:8080/r", "http://[::1]:8080/r", "u:p"),
    ("http://@h/r", "http://h/r", None),
    ("http://h/r?next=a@b", "http://h/r?next=a@b", None),  # an "@" past the host is no user-info
])
def test_what_a_url_sends_and_asks_for(url, bare, pair):
    assert credentials_apart(url) == (bare, basic(*pair.split(":", 1)) if pair else None)


def test_an_error_line_keeps_the_separator_after_a_redacted_token(tmp_path, capsys):
    import socket

    data = write_data(tmp_path / "data")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))  # bound, never listening: the connection is refused
        url = f"http://127.0.0.1:{s.getsockname()[1]}/route?token=abcdef123456"
        assert cli("route", data, "--mode", "open", "--router", url) == 2
    err = capsys.readouterr().err
    assert f"/route?token={REDACTED}: GET did not answer" in err and "abcdef" not in err
