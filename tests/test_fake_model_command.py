"""``interleave-bench fake-model`` serves the fake model with every request kind's answers: a real
``route`` run against it scores as the same run with ``--dry-run`` does, and SIGTERM stops it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from interleave_bench.cli import main

from _route_util import standard_sessions, write_data


def test_a_route_run_against_the_served_fake_model_equals_the_dry_run(tmp_path, monkeypatch, capsys):
    data = write_data(tmp_path / "data", standard_sessions()[:2])
    env = {**os.environ, "INTERLEAVE_NO_PROGRESS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "interleave_bench", "fake-model"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        url = proc.stdout.readline().strip()  # the first line: blocks until the server listens
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("OPENAI_API_KEY", "any-key")
        monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
        assert main(["route", str(data), "--mode", "closed", "--policy", "llm", "--model", "fake-model"]) == 0
        assert main(["route", str(data), "--mode", "closed", "--policy", "llm", "--model", "fake-model", "--dry-run"]) == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    served = [json.loads(x) for x in (data / "predictions" / "closed-llm-fake-model.jsonl").read_text().splitlines()]
    dry = [json.loads(x) for x in (data / "predictions-dry" / "closed-llm-fake-model.jsonl").read_text().splitlines()]
    assert [(r["session_id"], r["i"], r["pred"]) for r in served] == [(r["session_id"], r["i"], r["pred"]) for r in dry]
    assert not any(r["pred"] == "ERROR" for r in served)
    # one call a message (the run's own summary says 23 paid calls), each answered
    summary = err.strip().splitlines()[-1]
    assert summary.startswith(f"done: fake-model: {len(served)} requests, {len(served)} answered; "), summary


def test_a_port_out_of_range_is_one_line(capsys):
    assert main(["fake-model", "--port", "70000"]) == 2
    assert capsys.readouterr().err.strip() == "error: --port must be 0..65535, got 70000"


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    try:
        conn.putrequest("POST", parts.path + "/chat/completions")
        for k, v in {"Content-Length": str(len(body)), **headers}.items():
            conn.putheader(k, v)
        conn.endheaders(body)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def test_a_request_it_cannot_read_is_answered_400_not_a_traceback(capsys):
    from interleave_bench.llm.server import FakeServer

    bad = [
        (b"[1, 2]", {}),  # not an object
        (b'{"messages": "hi"}', {}),  # messages not a list
        (b'{"messages": [1, 2]}', {}),  # nor a list of objects
        (b"not json", {}),
        (b"{}", {"Content-Length": "abc"}),
        (b'{"messages": []}', {"X-Interleave-Kind": "facts-answer"}),  # nothing for the kind's answer to read
    ]
    with FakeServer() as srv:
        for body, headers in bad:
            status, answer = _post(srv.url, body, headers)
            assert status == 400, (body, headers, answer)
            assert answer["error"]["type"] == "invalid_request_error" and answer["error"]["message"]
        status, answer = _post(srv.url, b'{"messages": [{"role": "user", "content": "hi"}]}', {})
        assert status == 200 and answer["choices"][0]["message"]["content"]  # still serving
    assert "Traceback" not in capsys.readouterr().err


def test_a_second_ctrl_c_while_it_shuts_down_stops_it_without_resume_advice(monkeypatch, capsys):
    from interleave_bench.llm.server import FakeServer

    def started(self):
        os.kill(os.getpid(), signal.SIGTERM)  # the first stop (its handler sets the event it waits on)
        return real_start(self)

    def second_ctrl_c(self):
        real_stop(self)
        raise KeyboardInterrupt  # as a Ctrl-C pressed again while the server shuts down

    real_start, real_stop = FakeServer.start, FakeServer.stop
    monkeypatch.setattr(FakeServer, "start", started)
    monkeypatch.setattr(FakeServer, "stop", second_ctrl_c)
    assert main(["fake-model", "--port", "0"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("done: fake-model: 0 requests, 0 answered; ")
    assert not any("resume" in line for line in err), err
