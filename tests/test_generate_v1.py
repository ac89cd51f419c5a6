"""`generate --dataset v1`: offline (templates and the rule check), the model path against the fake
model over loopback (check by meaning, one rewrite, ``fact-miss``), resume, and the Hub round trip."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import datasets
import pytest

import interleave_bench
from interleave_bench.cli import main
from interleave_bench.generate.model_writer import CHECK_CHUNK, WRITE_CHUNK
from interleave_bench.generate.prompts import extract_payload
from interleave_bench.generate.runner import GENERATOR_VERSION, GenerateConfig, generate
from interleave_bench.generate.stepcheck import step_problem
from interleave_bench.hub.features import row_to_session
from interleave_bench.io import read_manifest, read_sessions
from interleave_bench.schema import FACT_MISS_TAG, PROBE_CATEGORIES, fact_state

#: the acceptance size of the offline check: every step of 50 sessions
OFFLINE_SESSIONS = 50


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def offline_v1(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("v1") / "offline"
    assert main(["generate", "--dataset", "v1", "--offline", "--sessions", str(OFFLINE_SESSIONS), "--out", str(out)]) == 0
    return out


def test_offline_v1_validates_and_every_step_passes_the_rule_check(offline_v1, capsys):
    assert main(["validate", str(offline_v1)]) == 0  # timeline, gold and decoys checked per session
    sessions = read_sessions(offline_v1 / "sessions.jsonl")
    assert len(sessions) == OFFLINE_SESSIONS and {s.version for s in sessions} == {"interleave-v1"}
    steps = Counter()
    categories = Counter()
    for s in sessions:
        assert 3 <= len(s.threads) <= 5
        if any(t.twinOf for t in s.threads):
            assert s.threads[2].twinOf == "t2" and s.threads[2].domain == s.threads[1].domain
        for t in s.turns:
            assert t.assistant  # every message has its reply
            assert FACT_MISS_TAG not in t.tags
            if t.fact is not None:
                steps[t.fact.kind] += 1
                assert step_problem(t.fact.kind, t.fact.value, t.text, t.assistant, s.lang) is None, (s.session_id, t.i)
                if t.fact.kind == "accept":
                    assert t.fact.value not in t.text  # the accept never repeats the value
        assert len(s.probes) <= 8 and [p.id for p in s.probes] == [f"{s.session_id}-p{k + 1}" for k in range(len(s.probes))]
        assert [p.after for p in s.probes] == sorted(p.after for p in s.probes)
        for p in s.probes:
            categories[p.category] += 1
            assert p.gold == fact_state(s.timeline, p.source, p.key, p.after)
            assert p.gold not in p.decoys
    assert set(steps) == {"intro", "update", "propose", "accept", "reject", "retract"}
    assert set(categories) == set(PROBE_CATEGORIES)
    m = read_manifest(offline_v1 / "manifest.json")
    assert m.generator == GENERATOR_VERSION and m.version == "interleave-v1" and m.writer == "templates"
    assert m.counts.model_extra["fact_misses"] == 0
    assert m.counts.model_extra["probes"] == sum(categories.values())
    assert {c: m.counts.model_extra[f"probes_{c}"] for c in PROBE_CATEGORIES} == dict(categories)


def test_offline_v1_is_byte_identical_and_resumes_after_a_stop(offline_v1, tmp_path):
    class Stop(Exception):
        pass

    def stop_after_two(ident, ok):
        if ident.index == 1:
            raise Stop

    out = tmp_path / "stopped"
    config = GenerateConfig(dataset="v1")
    with pytest.raises(Stop):
        generate(6, out, config=config, after_session=stop_after_two)
    assert not (out / "sessions.jsonl").exists()
    result = generate(6, out, config=config)
    assert result.resumed == 2
    whole = lines_of(offline_v1 / "sessions.jsonl")[:6]
    assert lines_of(out / "sessions.jsonl") == whole
    again = tmp_path / "again"
    generate(6, again, config=config)
    assert (again / "sessions.jsonl").read_bytes() == (out / "sessions.jsonl").read_bytes()


def test_load_dataset_v1_equals_the_offline_jsonl_field_by_field(offline_v1, tmp_path, capsys):
    out = tmp_path / "interleavebench"
    assert main(["export", "--v1", str(offline_v1), "--out", str(out)]) == 0
    source = {s["session_id"]: s for s in lines_of(offline_v1 / "sessions.jsonl")}
    ds = datasets.load_dataset(str(out), "v1", cache_dir=str(tmp_path / "cache"))
    built = interleave_bench.load("v1", data_dir=offline_v1, cache_dir=tmp_path / "cache-b")
    assert set(ds) == set(built) == {"dev", "test"}
    for split in ds:
        assert ds[split].features == built[split].features
        assert ds[split].to_list() == built[split].to_list()  # the builder gives the same rows
        for row in ds[split]:
            assert row_to_session(row, "v1") == source[row["session_id"]]
    assert sum(len(ds[s]) for s in ds) == OFFLINE_SESSIONS
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "### How `v1` facts and probes are built" in card and "| probes |" in card


# --- the model path, over loopback --------------------------------------------------------------------


def payloads(server, kind: str) -> list[dict]:
    return [extract_payload(e.body["messages"]) for e in server.log if e.kind == kind and e.status == 200]


def test_model_path_checks_steps_by_meaning_and_tags_a_persistent_miss(openai_env, tmp_path, capsys):
    server = openai_env["server"]
    out = tmp_path / "model"
    args = ["generate", "--dataset", "v1", "--model", "fake-model", "--sessions", "3", "--out", str(out)]
    assert main(args) == 0
    assert main(["validate", str(out)]) == 0
    data = lines_of(out / "sessions.jsonl")
    # the writer: user message and reply, eight rows a call, each row told its step
    for p in payloads(server, "write_v1"):
        assert 1 <= len(p["rows"]) <= WRITE_CHUNK
    written_steps = {(p["session"], r["i"]): r["fact"]["kind"] for p in payloads(server, "write_v1") for r in p["rows"] if "fact" in r}
    checked = [(p["session"], e["i"], p["round"]) for p in payloads(server, "check_facts") for e in p["exchanges"]]
    assert all(len(p["exchanges"]) <= CHECK_CHUNK for p in payloads(server, "check_facts"))
    assert {(s, i) for s, i, r in checked if r == 1} == set(written_steps)  # every step judged once
    rewritten = {(p["session"], p["i"]) for p in payloads(server, "fact_rewrite")}
    assert rewritten and {(s, i) for s, i, r in checked if r == 2} <= rewritten  # a miss is rewritten once, judged again
    misses = 0
    for s in data:
        missed_facts = {(e["thread"], e["key"]) for e in s["timeline"] if e.get("miss")}
        for t in s["turns"]:
            if FACT_MISS_TAG in t["tags"]:
                misses += 1
                fact = (t["gold"]["thread"], t["fact"]["key"])
                assert (s["session_id"], t["i"]) in rewritten and fact in missed_facts
                # every event of that fact is marked, and the fact is asked about nowhere
                assert all(e.get("miss") for e in s["timeline"] if (e["thread"], e["key"]) == fact)
                assert not [p for p in s["probes"] if (p["source"], p["key"]) == fact]
            elif t.get("fact"):
                assert step_problem(t["fact"]["kind"], t["fact"]["value"], t["text"], t["assistant"], s["lang"]) is None
    assert misses > 0
    m = read_manifest(out / "manifest.json")
    assert m.counts.model_extra["fact_misses"] == sum(
        len({(e["thread"], e["key"]) for e in s["timeline"] if e.get("miss")}) for s in data
    ) > 0
    assert "fact_misses" in capsys.readouterr().err
    # a rerun is served from the cache: no paid call, the same bytes
    server.reset_counts()
    again = tmp_path / "again"
    assert main(args[:-1] + [str(again)]) == 0
    assert server.calls == 0
    assert read_manifest(again / "manifest.json").usage.calls == 0
    assert "0 paid calls" in capsys.readouterr().err
    assert (again / "sessions.jsonl").read_bytes() == (out / "sessions.jsonl").read_bytes()


def test_dry_run_v1_writes_to_its_dry_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    assert main(["generate", "--dataset", "v1", "--dry-run", "--sessions", "1", "--langs", "zh"]) == 0
    path = tmp_path / "data" / "interleave-v1-dry" / "sessions.jsonl"
    [s] = read_sessions(path)
    assert s.version == "interleave-v1" and s.lang == "zh" and s.probes is not None
    assert main(["validate", str(path)]) == 0
    assert os.path.exists(path.parent / "manifest.json")


def test_a_v1_dry_run_writes_every_session_the_fake_model_answers_in_the_sessions_language(tmp_path, monkeypatch,
                                                                                          capsys):
    """The fake model re-draws a phrasing that would read as another language (a short Chinese frame
    round a long Latin value), as a competent model writes, in its sloppy replies too (session zh-0044
    of 60: "型号可以考虑ThinkPad X1 Carbon。"): no session is lost to the language check."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    assert main(["generate", "--dataset", "v1", "--dry-run", "--sessions", "60", "--out", "d"]) == 0
    out, err = capsys.readouterr()
    assert "failed:" not in out + err and ", 0 failed," in out + err, out + err
    assert len(read_sessions(tmp_path / "d" / "sessions.jsonl")) == 60
