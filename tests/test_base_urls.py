"""A server's base URL from the environment (``OPENAI_BASE_URL``, ``HF_ENDPOINT``) that no HTTP
client can use is one line naming the variable, exit 2, before any work; never the client's own
error as an internal one, and never the URL's password in the line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from _route_util import write_data

KEY = "sk-base-url-SECRET-0123456789abcdef"
PASSWORD = "pw-SECRET-9f8e7d6c5b4a"

#: URLs the real ``openai`` client (httpx underneath) cannot send to, each with what the line says
MALFORMED = [
    ("http://127.0.0.1:99999/v1", "its port is not a number from 1 to 65535"),  # was: ExceptionGroup, exit 1
    ("http://h@[::1/v1", "its IPv6 host has no closing ']'"),  # was: InvalidURL: Invalid port, exit 1
    ("http://127.0.0.1:abc/v1", "its port is not a number from 1 to 65535"),
    ("http://127.0.0.1:0/v1", "its port is not a number from 1 to 65535"),
    ("http://:8080/v1", "it names no host"),
    ("ftp://127.0.0.1/v1", "the scheme is 'ftp', not http or https"),
    ("127.0.0.1:8080/v1", "it does not start with http:// or https://"),
    ("http://ho st/v1", "it holds a blank or control character"),
    (f"http://user:{PASSWORD}@[::1/v1", "its IPv6 host has no closing ']'"),
    (f"http://user:{PASSWORD}/x@127.0.0.1:99999/v1", "its port is not a number from 1 to 65535"),
]


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interleave_bench", *args], capture_output=True, text=True,
                          env={**os.environ, "INTERLEAVE_NO_PROGRESS": "1", **env}, cwd=cwd, timeout=300)


def assert_one_line(proc: subprocess.CompletedProcess, variable: str, why: str) -> None:
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr
    assert line.count("\n") == 1 and line.startswith(f"error: {variable}: "), line
    assert why in line and "expected http(s)://HOST[:PORT][/PATH]" in line, line
    assert "internal error" not in line and "Traceback" not in line
    assert KEY not in line and PASSWORD not in line and "SECRET" not in line, line


@pytest.mark.parametrize("url,why", MALFORMED)
def test_a_malformed_openai_base_url_is_one_line_before_any_work(tmp_path, url, why):
    data = write_data(tmp_path / "data")
    out = tmp_path / "out.jsonl"
    proc = run(["route", str(data), "--mode", "closed", "--policy", "llm", "--model", "m1", "--out", str(out),
                "--cache", str(tmp_path / "cache")], {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": KEY}, tmp_path)
    assert_one_line(proc, "OPENAI_BASE_URL", why)
    assert not out.exists() and not (tmp_path / "cache").exists()


def test_a_base_url_the_client_can_use_routes_through_the_real_client(fake_server, tmp_path):
    data = write_data(tmp_path / "data")
    host_port = fake_server.url.split("://", 1)[1]
    for i, url in enumerate((fake_server.url, "HTTP://" + host_port + "/", fake_server.url.replace("://", f"://user:{PASSWORD}@"))):
        out = tmp_path / f"out{i}.jsonl"
        proc = run(["route", str(data), "--mode", "closed", "--policy", "llm", "--model", "m1", "--out", str(out),
                    "--no-cache"], {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": KEY}, tmp_path)
        assert proc.returncode == 0, (url, proc.stderr)
        assert out.exists()
    assert fake_server.completions > 0


@pytest.mark.parametrize("url,why", MALFORMED[:2] + MALFORMED[-2:])
@pytest.mark.parametrize("command", ["export", "leaderboard"])
def test_a_malformed_hub_endpoint_is_one_line_naming_it(tmp_path, url, why, command):
    """``huggingface_hub`` and ``datasets`` read ``HF_ENDPOINT`` when loaded, and failed there with
    a bare ValueError (an internal error, exit 1)."""
    data = write_data(tmp_path / "data")
    args = {"export": ["export", "--v0", str(data), "--out", str(tmp_path / "hub-out")],
            "leaderboard": ["leaderboard", "show", "--repo", "org/board"]}[command]
    proc = run(args, {"HF_ENDPOINT": url.replace("ftp", "http"), "HF_TOKEN": "hf_" + "a" * 34}, tmp_path)
    assert_one_line(proc, "HF_ENDPOINT", why)
    assert not (tmp_path / "hub-out").exists()


def test_a_malformed_hub_endpoint_stops_only_the_commands_that_load_the_hub(tmp_path):
    """The check is made when the Hub library is first imported: routing, scoring and checking a
    local folder never load it and run as without the variable; a ``hub:`` data argument does."""
    url, why = MALFORMED[1]
    env = {"HF_ENDPOINT": url, "HF_TOKEN": "hf_" + "a" * 34}
    data = write_data(tmp_path / "data")
    pred = tmp_path / "pred.jsonl"
    for args in (["validate", str(data)], ["route", str(data), "--mode", "closed", "--policy", "bm25", "--out", str(pred)],
                 ["score", str(data), str(pred)], ["stats", str(data)]):
        proc = run(args, env, tmp_path)
        assert proc.returncode == 0 and "HF_ENDPOINT" not in proc.stderr, (args, proc.stderr)
    assert (tmp_path / "pred.score.json").exists()
    assert_one_line(run(["score", "hub:org/name@v1", str(pred)], env, tmp_path), "HF_ENDPOINT", why)


def test_a_hub_endpoint_that_does_not_answer_is_shown_without_its_password(tmp_path):
    """A well-formed endpoint nobody listens on: the line says it cannot reach it, and shows the URL
    without its user name and password (any secret's shape, a word too)."""
    for userinfo in (f"user:{PASSWORD}", "user:opensesame", "hf_tokenonly"):
        proc = run(["leaderboard", "show", "--repo", "org/board"],
                   {"HF_ENDPOINT": f"http://{userinfo}@127.0.0.1:1", "HF_TOKEN": "hf_" + "a" * 34}, tmp_path)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert "cannot reach http://[redacted]@127.0.0.1:1" in proc.stderr, proc.stderr
        assert userinfo.split(":")[-1] not in proc.stderr and "Traceback" not in proc.stderr


def test_a_blank_hub_endpoint_is_one_line_naming_it(tmp_path):
    proc = run(["leaderboard", "show", "--repo", "org/board"], {"HF_ENDPOINT": "", "HF_TOKEN": "hf_" + "a" * 34}, tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("error: HF_ENDPOINT is set but blank"), proc.stderr


@pytest.mark.parametrize("url,why", MALFORMED[:2] + MALFORMED[-2:])
def test_a_malformed_router_url_is_one_line_naming_the_option(tmp_path, url, why):
    """``--router URL`` is read as a base URL too: one line naming ``--router``, its password hidden."""
    data = write_data(tmp_path / "data")
    out = tmp_path / "out.jsonl"
    proc = run(["route", str(data), "--mode", "closed", "--router", url.replace("ftp", "http"), "--out", str(out)],
               {}, tmp_path)
    assert_one_line(proc, "--router", why)
    assert not out.exists()
