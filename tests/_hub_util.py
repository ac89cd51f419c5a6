"""Small valid records and files for the Hub tests: sessions, manifests, case files, score files."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _foundation_util import thread as _thread
from _foundation_util import turn  # noqa: F401 - the Hub tests build turns from here


#: the Hub tests' threads carry a fact with a later update too, so nullable ``update`` is exercised both ways
HUB_FACTS = [{"key": "budget", "value": "300 EUR", "update": None}, {"key": "date", "value": "May 14", "update": "May 15"}]


def thread(tid: str, title: str, domain: str = "code", **kw: Any) -> dict[str, Any]:
    return _thread(tid, title, domain, **{"facts": copy.deepcopy(HUB_FACTS), **kw})


def session(sid: str, split: str = "dev", lang: str = "en", version: str = "interleave-v0") -> dict[str, Any]:
    """A canonical session (every field the generator writes), with a twin, a one-off and an ambiguous turn."""
    s = {
        "session_id": sid,
        "version": version,
        "split": split,
        "lang": lang,
        "persona": "a busy developer",
        "threads": [
            thread("t1", "Lisbon trip", "travel"),
            thread("t2", "Flaky CI job", "code"),
            thread("t3", "Nightly build", "code", twinOf="t2"),
        ],
        "turns": [
            turn(0, "Planning the Lisbon trip for May.", "t1", "new"),
            turn(1, "Also the flaky CI job keeps failing.", "t2", "new", fact={"key": "budget", "kind": "stated"}),
            turn(2, "What is the capital of Peru?", None, "oneoff", "oneoff"),
            turn(3, "ok next", "t2", "continue", "implicit", ambiguous=True,
                 judge={"thread": "ambiguous", "candidates": ["t2", "t3"]}, tags=["implicit", "twin"]),
            turn(4, "The nightly build broke too, 数据 ✓", "t3", "new",
                 gold={"thread": "t3", "action": "new", "refs": ["t2"]}, tags=["explicit", "cross"]),
        ],
    }
    if version == "interleave-v1":
        v1_fields(s)
    return s


def v1_fields(s: dict[str, Any]) -> None:
    """Make ``s`` a v1 session in the reference format, written by hand: alternatives, replies, fact
    steps with values, ``fact_types``, a timeline and probes whose gold and decoys follow from it."""
    sid = s["session_id"]
    for t in s["threads"]:
        for f in t["facts"]:
            f["alternative"] = "250 EUR" if f["key"] == "budget" else None
    for t in s["turns"]:
        t.pop("fact", None)
        t["assistant"] = f"reply to {t['i']}"
    s["turns"][0]["fact"] = {"key": "budget", "kind": "propose", "value": "250 EUR"}
    s["turns"][0]["assistant"] = "How about 250 EUR for the budget?"
    s["turns"][1]["fact"] = {"key": "date", "kind": "intro", "value": "May 14"}
    s["turns"][3]["fact"] = {"key": "date", "kind": "retract", "value": None}
    s["turns"][4]["fact"] = {"key": "budget", "kind": "intro", "value": "300 EUR"}
    s["turns"][4]["tags"] = s["turns"][4]["tags"] + ["fact-miss"]
    s["fact_types"] = {"t1": {"budget": "rejected", "date": "stated"}, "t2": {"budget": "stated", "date": "withdrawn"},
                       "t3": {"budget": "stated", "date": "stated"}}
    s["timeline"] = [
        {"thread": "t1", "key": "budget", "turn": 0, "kind": "propose", "status": "proposed", "value": "250 EUR"},
        {"thread": "t2", "key": "date", "turn": 1, "kind": "intro", "status": "confirmed", "value": "May 14"},
        {"thread": "t2", "key": "date", "turn": 3, "kind": "retract", "status": "retracted", "value": None},
        {"thread": "t3", "key": "budget", "turn": 4, "kind": "intro", "status": "confirmed", "value": "300 EUR", "miss": True},
    ]
    q = 'For "{b}", I need the {k} from "{a}": what is it now? Answer with just the value, or "undecided" if it is not settled.'
    s["probes"] = [
        {"id": f"{sid}-p1", "after": 1, "thread": "t2", "source": "t1", "key": "budget", "category": "proposal",
         "gold": None, "decoys": ["250 EUR"], "question": q.format(b="Flaky CI job", k="budget", a="Lisbon trip")},
        {"id": f"{sid}-p2", "after": 2, "thread": "t1", "source": "t2", "key": "date", "category": "cross",
         "gold": "May 14", "decoys": [], "question": q.format(b="Lisbon trip", k="date", a="Flaky CI job")},
        {"id": f"{sid}-p3", "after": 4, "thread": "t1", "source": "t2", "key": "date", "category": "stale",
         "gold": None, "decoys": ["May 14"], "question": q.format(b="Lisbon trip", k="date", a="Flaky CI job")},
    ]


def sessions(n: int, version: str = "interleave-v0", langs: tuple[str, ...] = ("en", "zh")) -> list[dict[str, Any]]:
    """``n`` sessions; every fifth (by index) is test, as the generator splits them."""
    out = []
    for k in range(n):
        lang = langs[k % len(langs)]
        s = session(f"{lang}-{k:04d}", "test" if k % 5 == 4 else "dev", lang, version)
        s["turns"][0]["text"] += f" (session {k})"
        out.append(s)
    return out


def manifest(version: str = "interleave-v0", n: int = 0, **kw: Any) -> dict[str, Any]:
    m = {
        "version": version,
        "writer": "templates",
        "model": None,
        "seed": 7,
        "options": {},
        "counts": {"sessions": n, "messages": 5 * n, "ambiguous": n, "leaks": 0, "failed": 0},
        "usage": {"calls": 0, "cached": 0, "input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0},
        "provenance": {"package_version": "0.1.0", "created": "2025-03-01T10:00:00+00:00"},
    }
    m.update(kw)
    return m


def write_data(folder: Path, rows: list[dict[str, Any]], man: dict[str, Any] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "sessions.jsonl", "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    if man is not None:
        (folder / "manifest.json").write_text(json.dumps(man), encoding="utf-8")
    return folder


def case_file() -> dict[str, Any]:
    topic = lambda tid, title: {  # noqa: E731
        "id": tid, "title": title, "summary": f"about {title}", "entities": [title], "keywords": ["k"], "lastState": "started",
    }
    return {
        "about": "Mid-reply cases for the tests.",
        "catalogs": {
            "en": [topic("trip", "Lisbon trip"), topic("ci", "Flaky CI")],
            "zh": [topic("tax", "报税"), topic("gym", "健身")],
        },
        "cases": [
            {"id": "en-01", "lang": "en", "running": {"topicId": "trip", "request": "plan day 1", "progress": "half"},
             "how": "interjection", "text": "add Sintra", "expect": "running", "tags": ["steer"]},
            {"id": "en-02", "lang": "en", "running": {"topicId": "trip", "request": "plan day 2", "progress": ""},
             "how": "queued", "text": "and the CI job?", "expect": "ci", "tags": ["other-topic"], "note": "kept"},
            {"id": "zh-01", "lang": "zh", "running": {"topicId": "tax", "request": "填表", "progress": "一半"},
             "how": "queued", "text": "新话题", "expect": "new", "tags": ["new-matter"]},
        ],
    }


def clone(obj: Any) -> Any:
    return copy.deepcopy(obj)


def score(system: str, acc: float, werr: float, *, mode: str = "closed", policy: str | None = "bm25",
          model: str | None = None, split: str = "dev", data_sha: str = "sha256:" + "d" * 64,
          pred_sha: str | None = None, provenance: bool = True) -> dict[str, Any]:
    """A score file as `interleave-bench score` writes it (format interleave-score-v1)."""
    s: dict[str, Any] = {
        "format": "interleave-score-v1",
        "system": system,
        "mode": mode,
        "policy": policy,
        "model": model,
        "split": split,
        "metrics": {
            "accuracy": acc, "accuracy_lenient": min(1.0, acc + 0.05), "ambiguous_share": 0.12,
            "weighted_error": werr, "oneoff_into_topic": 0.25, "switch_precision": 0.8, "switch_recall": 0.7,
            "switch_f1": 0.7467, "topics_per_thread": 1.2, "threads_per_topic": 1.1, "bcubed_precision": 0.9,
            "bcubed_recall": 0.85, "bcubed_f1": 0.8743, "refs_recall": None,
            "input_tokens_per_message": 812.5, "output_tokens_per_message": 9.0, "cached_tokens_per_message": 0.0,
            "model_calls_share": 0.0, "latency_p50_ms": None, "latency_p90_ms": None,
        },
        "intervals": {"accuracy": [round(acc - 0.032, 4), round(acc + 0.031, 4)],
                      "accuracy_lenient": [round(min(1.0, acc + 0.05) - 0.03, 4), min(1.0, round(acc + 0.08, 4))],
                      "weighted_error": [round(werr - 0.05, 4), round(werr + 0.06, 4)]},
        "counts": {"sessions": 40, "messages": 2000, "thread_messages": 1900, "strict": 1672, "ambiguous": 228,
                   "oneoffs": 100, "refs_messages": 120, "rows": 2000, "rows_scored": 2000, "missing_rows": 0,
                   "model_calls": 0, "latency_rows": 0, "rows_outside_split": 0, "sessions_without_rows": 0,
                   "unknown_session_rows": 0, "unknown_turn_rows": 0, "duplicate_rows": 0},
        "outcomes": {"correct": 1200, "wrong_existing": 300, "merged_new": 10, "spurious_new": 5, "clarify": 0,
                     "error": 0, "oneoff_isolated": 75, "oneoff_into_topic": 25},
        "breakdowns": {"action": {}, "tag": {}, "lang": {}, "style": {}},
        "burst": None,
        "cost_usd_per_message": 0.000123 if model else None,
        "not_scored": [],
        "per_session": [],
        "provenance": {"bootstrap": 1000, "seed": 0},
    }
    if provenance:
        s["provenance"] = {
            "package_version": "0.1.0", "git_commit": "abc123", "git_dirty": False, "python": "3.11.7",
            "packages": {"datasets": "5.2.0"}, "created": "2025-03-02T09:00:00+00:00",
            "data_file": "data/interleave-v0/sessions.jsonl", "data_sha256": data_sha,
            "predictions_file": f"predictions/{system}.jsonl",
            "predictions_sha256": pred_sha or "sha256:" + hashlib.sha256((system + data_sha).encode()).hexdigest(),
            "bootstrap": 1000, "seed": 0,
        }
    return s


def write_json(path: Path, obj: Any) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")
    return str(path)


# --- the Hub stand-in, wired into this process and into subprocesses --------------------------------

TOKEN = "hf_TestSECRET0123456789abcdefXYZ"


def hub_env(hub_url: str, tmp: Path) -> dict[str, str]:
    """Environment for a process that talks to the stand-in, with every Hugging Face folder in ``tmp``."""
    return {
        "HF_ENDPOINT": hub_url,
        "HF_TOKEN": TOKEN,
        "HF_HOME": str(tmp / "hf-home"),
        "HF_HUB_CACHE": str(tmp / "hf-home" / "hub"),
        "HF_DATASETS_CACHE": str(tmp / "hf-datasets"),
        "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "INTERLEAVE_NO_PROGRESS": "1",
    }


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """A running stand-in; this process's ``huggingface_hub`` points at it, its folders under tmp_path."""
    import huggingface_hub.constants as hc

    from _hub_standin import HubStandIn

    with HubStandIn(token=TOKEN) as h:
        env = hub_env(h.url, tmp_path)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        # huggingface_hub read these at import; point them at the stand-in and tmp_path too
        monkeypatch.setattr(hc, "ENDPOINT", h.url)
        monkeypatch.setattr(hc, "HUGGINGFACE_CO_URL_TEMPLATE", h.url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setattr(hc, "HF_HOME", env["HF_HOME"])
        monkeypatch.setattr(hc, "HF_HUB_CACHE", env["HF_HUB_CACHE"])
        monkeypatch.setattr(hc, "HF_TOKEN_PATH", str(tmp_path / "hf-home" / "token"))
        monkeypatch.setattr(hc, "HF_STORED_TOKENS_PATH", str(tmp_path / "hf-home" / "stored_tokens"))
        monkeypatch.setattr(hc, "AGENT_HARNESSES_PATH", str(tmp_path / "hf-home" / ".agent_harnesses.json"))
        h.env = env
        _loopback_only(monkeypatch)
        yield h


def _loopback_only(monkeypatch) -> None:
    """Make any name lookup other than loopback fail at once, so no test can reach the internet."""
    import socket

    real = socket.getaddrinfo

    def guarded(host, *args, **kw):
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise OSError(f"test guard: no network access to {host!r}")
        return real(host, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", guarded)


#: put first in every subprocess script: a name lookup other than loopback fails at once (no internet;
#: ``datasets`` asks a dataset-viewer host about ``main`` revisions, which must not leave the machine)
LOOPBACK_GUARD = """
import socket as _socket
_real_getaddrinfo = _socket.getaddrinfo
def _guarded(host, *args, **kw):
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise OSError("test guard: no network access to %r" % (host,))
    return _real_getaddrinfo(host, *args, **kw)
_socket.getaddrinfo = _guarded
"""


def run_python(script: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 120) -> Any:
    """Run ``script`` (after :data:`LOOPBACK_GUARD`) in a fresh interpreter with ``env`` added.

    Returns ``(the JSON its last line prints, all its output)``.
    """
    full = dict(os.environ)
    full.update(env)
    proc = subprocess.run([sys.executable, "-c", LOOPBACK_GUARD + script], env=full, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stdout + proc.stderr


def cli(args: list[str], capsys) -> tuple[int, str, str]:
    """Run the CLI in this process; ``(exit code, stdout, stderr)``."""
    from interleave_bench.cli import main

    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def files_containing(root: Path, needle: str) -> list[str]:
    """Every file under ``root`` whose bytes contain ``needle``."""
    hits = []
    raw = needle.encode()
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            try:
                if raw in p.read_bytes():
                    hits.append(str(p))
            except OSError:
                pass
    return hits


def exported(tmp_path: Path, capsys, rows: list[dict[str, Any]] | None = None) -> Path:
    """A folder ``export`` wrote from ``rows`` (4 sessions by default): what ``push`` uploads."""
    rows = rows or sessions(4)
    src = write_data(tmp_path / "src", rows, manifest(n=len(rows)))
    out = tmp_path / "interleavebench"
    code, _, err = cli(["export", "--v0", str(src), "--out", str(out)], capsys)
    assert code == 0, err
    return out


def refused_before_sending(hub, capsys, args: list[str], *lines: str, secrets: tuple[str, ...] = (TOKEN,)) -> None:
    """Run ``args``: exit 2, stderr exactly ``lines`` (each ``error: ...``), none of ``secrets``
    printed, and no request sent to the stand-in ``hub``."""
    code, out, err = cli(args, capsys)
    assert code == 2, out + err
    assert err.splitlines() == [f"error: {line}" for line in lines]
    assert "Traceback" not in err and not any(s in out + err for s in secrets)
    assert hub.log == [] and hub.repos == {}
