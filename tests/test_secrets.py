"""End to end with a key in the environment: the key reaches the server and nothing else.

Runs every model-calling command (generate, route, mid-reply) against the fake OpenAI-compatible
server through the real ``openai`` client with a recognisable key, then scores, exports and
validates, and scans every file written (outputs, predictions, score files, manifests, the
response cache) and everything printed for the key.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

KEY = "sk-e2e-SECRET-7f3a9c1d5e"


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "interleave_bench", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)
    assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    return proc



def model_env(fake_server, tmp_path) -> dict[str, str]:
    """The environment of a command run against the fake server with the test key, its cache and
    Hub home under ``tmp_path``."""
    env = dict(os.environ)
    env.update({
        "OPENAI_BASE_URL": fake_server.url,
        "OPENAI_API_KEY": KEY,
        "INTERLEAVE_CACHE": str(tmp_path / "cache"),
        "HF_HOME": str(tmp_path / "hf"),
        "INTERLEAVE_NO_PROGRESS": "1",
    })
    return env

def test_key_is_in_no_file_and_no_output(fake_server, tmp_path):
    env = model_env(fake_server, tmp_path)
    data = tmp_path / "data"
    outputs = [
        run_cli(["generate", "--sessions", "3", "--model", "m1", "--out", str(data)], env, tmp_path),
        run_cli(["route", str(data), "--mode", "closed", "--policy", "hybrid", "--model", "m1"], env, tmp_path),
        run_cli(["route", str(data), "--mode", "open", "--policy", "llm", "--model", "m1", "--merge", "all",
                 "--decide", "each"], env, tmp_path),
        run_cli(["mid-reply", "--model", "m1", "--limit", "6", "--out", str(tmp_path / "mr.jsonl")], env, tmp_path),
        run_cli(["score", str(data), str(data / "predictions")], env, tmp_path),
        run_cli(["export", "--v0", str(data), "--out", str(tmp_path / "interleavebench")], env, tmp_path),
        run_cli(["validate", str(data)], env, tmp_path),
    ]
    # the model was really called, with the key as a bearer token
    assert fake_server.completions > 0
    assert all(e.headers.get("authorization") == f"Bearer {KEY}" for e in fake_server.log)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    kinds = {p.suffix for p in files}
    assert {".jsonl", ".json", ".sqlite", ".parquet"} <= kinds, kinds
    for p in files:
        assert KEY.encode() not in p.read_bytes(), f"key written to {p}"
    for proc in outputs:
        assert KEY not in proc.stdout and KEY not in proc.stderr


def run_any(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """A command that may fail (its model calls do): one-line errors, never a traceback."""
    proc = subprocess.run([sys.executable, "-m", "interleave_bench", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)
    assert proc.returncode in (0, 1, 2), (args, proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-2000:]
    return proc


def test_a_provider_echoing_the_authorization_header_leaks_the_key_nowhere(fake_server, tmp_path):
    """Every request's error text echoes the bearer token and a ``?key=`` URL: ERROR rows, mid-reply
    and facts rows, manifests, score files and stderr must all hold it redacted."""
    env = model_env(fake_server, tmp_path)
    data = tmp_path / "data"
    run_cli(["generate", "--sessions", "3", "--model", "m1", "--out", str(data)], env, tmp_path)
    v1 = tmp_path / "v1"
    run_cli(["generate", "--dataset", "v1", "--offline", "--sessions", "2", "--out", str(v1)], env, tmp_path)
    outputs = []
    fake_server.add_fault("echo", times=10_000)  # every request from here on: a 401 echoing the key
    outputs += [
        run_any(["generate", "--sessions", "2", "--model", "m2", "--out", str(tmp_path / "gen-failed")], env, tmp_path),
        run_any(["route", str(data), "--mode", "closed", "--policy", "llm", "--model", "m1", "--split", "all"],
                env, tmp_path),
        run_any(["route", str(data), "--mode", "closed", "--policy", "hybrid", "--model", "m1", "--split", "all"],
                env, tmp_path),
        run_any(["mid-reply", "--model", "m1", "--limit", "4", "--out", str(tmp_path / "mr.jsonl")], env, tmp_path),
        run_any(["facts", str(v1), "--model", "m1", "--split", "all", "--limit", "1",
                 "--out", str(tmp_path / "facts.jsonl")], env, tmp_path),
    ]
    outputs += [
        run_any(["score", str(data), str(data / "predictions"), "--split", "all"], env, tmp_path),
        run_any(["score-facts", str(tmp_path / "facts.jsonl")], env, tmp_path),
    ]
    assert fake_server.log[-1].status == 401
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "facts.jsonl" for p in written) and any(p.name == "mr.jsonl" for p in written)
    assert any("[redacted]" in p.read_text(encoding="utf-8", errors="replace") for p in written
               if p.suffix in (".jsonl", ".json"))  # the error texts were written, redacted
    for p in written:
        assert KEY.encode() not in p.read_bytes(), f"key written to {p}"
    assert any("[redacted]" in proc.stderr for proc in outputs)
    for proc in outputs:
        assert KEY not in proc.stdout and KEY not in proc.stderr


def test_a_key_the_provider_echoes_url_encoded_leaks_nowhere(fake_server, tmp_path):
    """A key holding ``+``, ``/`` and ``=`` echoed percent-encoded (``%2B``, and ``%2b``): the
    manifest and stderr hold it redacted in every form."""
    from urllib.parse import quote, quote_plus

    key = "TRIAL+key/12345="  # short: the whole error text fits in the manifest's reason
    env = {**model_env(fake_server, tmp_path), "OPENAI_API_KEY": key}
    fake_server.add_fault("echo", times=10_000)
    done = run_any(["generate", "--sessions", "1", "--model", "m1", "--out", str(tmp_path / "g"), "--max-retries", "0"],
                   env, tmp_path)
    assert "credential [redacted] or [redacted] refused" in (tmp_path / "g" / "manifest.json").read_text(encoding="utf-8")
    assert "credential [redacted] or [redacted] refused" in done.stderr
    for form in (key, quote(key, safe=""), quote(key), quote_plus(key), "TRIAL%2bkey%2f12345%3d"):
        assert all(form.encode() not in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()), form
        assert form not in done.stdout + done.stderr, form


def test_every_url_encoded_form_of_a_secret_is_redacted():
    from interleave_bench.redaction import REDACTED, redact, redact_secrets

    env = {"OPENAI_API_KEY": "ab+cd/ef==12345678 "}
    for form in ("ab+cd/ef==12345678", "ab%2Bcd%2Fef%3D%3D12345678", "ab%2bcd%2fef%3d%3d12345678",
                 "ab%2Bcd/ef%3D%3D12345678", "ab%2bcd/ef%3d%3d12345678"):
        assert redact_secrets(f"key {form}.", env) == f"key {REDACTED}." and redact(f"[{form}]", env) == f"[{REDACTED}]"
    assert redact_secrets("ab cd ef 12345678", env) == "ab cd ef 12345678"


def test_a_key_echoed_where_the_error_text_is_cut_leaks_no_part(fake_server, tmp_path):
    """The provider's error text is cut short for the manifest: the key is redacted before, so no
    first part of it is kept where the cut falls inside it (here in its URL-encoded echo)."""
    from urllib.parse import quote

    key = "TRIALkey+Secret/12345678abcdef=="
    env = {**model_env(fake_server, tmp_path), "OPENAI_API_KEY": key}
    fake_server.add_fault("echo", times=10_000)
    done = run_any(["generate", "--sessions", "1", "--model", "m1", "--out", str(tmp_path / "g"), "--max-retries", "0"],
                   env, tmp_path)
    assert "credential [redacted] or [redacted] refused" in (tmp_path / "g" / "manifest.json").read_text(encoding="utf-8")
    for part in (key[:16], quote(key, safe="")[:16]):
        assert all(part.encode() not in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()), part
        assert part not in done.stdout + done.stderr, part


def test_the_key_in_use_leaks_nowhere_whatever_its_shape(fake_server, tmp_path):
    """``OPENAI_API_KEY=correcthorsebattery``: 19 letters, no digit, none of a provider's key shapes.
    It is the key the run sends, so a 401 echoing it is redacted in the ERROR rows, the run record
    and stderr, as a key that looks like one is."""
    from _route_util import read_rows, write_data

    key = "correcthorsebattery"
    env = {**model_env(fake_server, tmp_path), "OPENAI_API_KEY": key}
    data = write_data(tmp_path / "data")
    route = ["route", str(data), "--mode", "closed", "--policy", "llm", "--model", "m1", "--no-cache", "--split", "all",
             "--max-retries", "0", "--out"]
    fake_server.add_fault("echo", times=10_000, match="ounce")  # the requests of one turn and those after it
    some = run_any([*route, str(tmp_path / "some.jsonl")], env, tmp_path)
    errors = [r["error"] for r in read_rows(tmp_path / "some.jsonl") if "HTTP 401" in r.get("error", "")]
    assert errors and all("credential [redacted] or [redacted] refused" in e for e in errors)
    fake_server.add_fault("echo", times=10_000)  # every request: the run stops, saying why
    every = run_any([*route, str(tmp_path / "every.jsonl")], env, tmp_path)
    assert every.returncode == 2 and "credential [redacted] or [redacted] refused" in every.stderr
    assert all(e.headers.get("authorization") == f"Bearer {key}" for e in fake_server.log)
    assert all(key.encode() not in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert key not in some.stdout + some.stderr + every.stdout + every.stderr


def test_a_url_scheme_is_looked_for_only_so_long():
    """The scheme before ``://`` is at most URL_SCHEME_CHARS long in both URL patterns, so a dotted
    run ("a.a.a....", a label in a hostile file) is read once, not once from each of its letters
    (unbounded, 200 KB of it took minutes in every error line); a URL with a longer run of letters
    in front still has its password taken out."""
    import re

    from interleave_bench import redaction

    for pattern in (redaction._URL, redaction._URL_USERINFO):
        scheme = pattern.pattern.split("://")[0]
        assert not re.search(r"[*+]\)?$", scheme) and "{0,%d}" % (redaction.URL_SCHEME_CHARS - 1) in scheme
    for run in ("a." * 100_000, "a-" * 100_000, "eyJa." * 40_000):
        assert redaction.redact(run) == run
        redaction.add_shaped_secrets(run)
    long_scheme = "x" * 40 + "https://user:Pass1234word@host/x"
    assert "Pass1234word" not in redaction.redact(long_scheme) and redaction.redact(long_scheme).endswith("@host/x")


def test_a_long_value_is_redacted_only_where_a_message_keeps_it(monkeypatch):
    """A message quotes a value of any length: only what its cut keeps, and CUT_WINDOW characters
    beyond each side, is redacted (a 5 MB label was redacted whole, three times a line), and a key
    at the window's edge is cut away with it, never shown in part."""
    from interleave_bench import errors, redaction

    key = "Zq7Wm2Xk9Lp4Rt6Yv8Bn3Cd5"
    monkeypatch.setattr(redaction, "_GIVEN", {key})
    seen: list[int] = []
    real = errors.redact
    monkeypatch.setattr(errors, "redact", lambda text, env=None: seen.append(len(text)) or real(text, env))
    value = "v" * 5_000_000
    line = errors.error_line(f"p.jsonl:3: pred: {errors.shown(value)} names no thread")
    assert line.startswith("error: p.jsonl:3: pred: 'vvv") and line.endswith("... names no thread")
    assert max(seen) <= errors.ERROR_LINE_CHARS + 2 * errors.CUT_WINDOW
    edge = errors.SHOWN_CHARS + errors.CUT_WINDOW - 10  # a key across the redacted window's edge
    shown = errors.shown("x" * edge + key + "y" * 100_000)
    assert not any(key[:k] in shown for k in range(4, len(key) + 1)) and len(shown) == errors.SHOWN_CHARS
