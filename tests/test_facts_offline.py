"""``facts --dry-run`` on offline v1 data as a user makes it: the fake model reads the offline
writer's phrasings and the generator's question (one definition), so it answers like a competent
model; every probe is answered once per strategy and ``score-facts`` reads the rows."""

from __future__ import annotations

import json
import string
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.cli import main
from interleave_bench.facts.fake import ACCEPTED, REPLY, USER, read_said
from interleave_bench.facts.results import read_rows
from interleave_bench.generate import packs
from interleave_bench.schema import PROBE_QUESTIONS, probe_question, read_probe_question
from interleave_bench.facts.metrics import STRATEGIES

#: offline sessions generated: both languages, every strategy, still a few seconds
SESSIONS = 3
#: what a step does to its fact, as the fake reader reports it
READ_AS = {"intro": "confirmed", "update": "confirmed", "reject": "confirmed", "accept": ACCEPTED,
           "retract": "withdrawn", "propose": "proposed"}


@pytest.fixture(scope="module")
def offline_v1(tmp_path_factory):
    """Offline v1 data and its dry facts run: (data folder, facts stdout, facts stderr)."""
    root = tmp_path_factory.mktemp("offline-v1")
    data = root / "v1"
    mp = pytest.MonkeyPatch()
    mp.chdir(root)
    mp.setenv("INTERLEAVE_CACHE", str(root / "cache"))
    try:
        assert main(["generate", "--dataset", "v1", "--offline", "--sessions", str(SESSIONS), "--out", str(data)]) == 0
        code = main(["facts", str(data), "--dry-run"])
        yield data, code, mp
    finally:
        mp.undo()


def _sessions(data):
    return [json.loads(x) for x in (data / "sessions.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def test_every_probe_answered_once_per_strategy_rows_valid_and_scored(offline_v1, capsys):
    data, code, _ = offline_v1
    results = data / "facts" / "fake-model.jsonl"
    rows = [r for _, r in read_rows(results)]  # every row valid against its record type
    assert not [r for r in rows if r.kind == "error"]
    probes = {p["id"] for s in _sessions(data) if s["split"] == "dev" for p in s["probes"]}
    assert probes
    answered = Counter((r.probe, r.strategy) for r in rows if r.kind == "answer")
    assert answered == Counter({(p, st_): 1 for p in probes for st_ in STRATEGIES})

    assert main(["score-facts", str(results), "--json"]) in (0, 1)  # 1: a gate fails, as it may on fake answers
    doc = json.loads(capsys.readouterr().out)["metrics"]
    strat = doc["strategies"]
    assert {s: strat[s]["n"] for s in STRATEGIES} == {s: len(probes) for s in STRATEGIES}
    # the fake answers like a competent model: the true value in the notes is always read back,
    # and the reference system's delivery beats B's own exchanges without ever passing on a proposal
    assert strat["oracle"]["answer_accuracy"]["value"] == 1.0
    assert strat["facts"]["answer_accuracy"]["value"] >= strat["own"]["answer_accuracy"]["value"] + 0.3
    assert doc["delivery"]["lines"] > 0
    assert doc["delivery"]["verdicts"].get("proposal", 0) == 0 and doc["delivery"]["verdicts"].get("unknown", 0) == 0
    assert code in (0, 1)


def test_a_rerun_pays_nothing(offline_v1, capsys):
    data, _, _ = offline_v1
    results = data / "facts" / "fake-model.jsonl"
    first = results.read_bytes()
    capsys.readouterr()
    main(["facts", str(data), "--dry-run"])
    err = capsys.readouterr().err
    assert f"0 replayed now, {SESSIONS} kept from earlier runs" in err and "paid calls" not in err
    results.unlink()  # the cache alone: every answer from it
    main(["facts", str(data), "--dry-run"])
    err = capsys.readouterr().err
    assert "; 0 paid calls," in err, err
    assert results.read_bytes() == first


def test_the_fake_reads_every_offline_step_as_the_timeline_has_it(offline_v1):
    data, _, _ = offline_v1
    for s in _sessions(data):
        steps = {e["turn"]: e for e in s["timeline"]}
        for t in s["turns"]:
            got = [(x.label.lower(), x.value, x.status)
                   for x in read_said(t["text"], USER, s["lang"]) + read_said(t["assistant"], REPLY, s["lang"])]
            e = steps.get(t["i"])
            want = []
            if e is not None:
                value = None if e["kind"] in ("accept", "retract") else e["value"]
                want = [(packs.label_for(e["key"], s["lang"]).lower(), value, READ_AS[e["kind"]])]
            assert got == want, (s["session_id"], t["i"], t["text"], t["assistant"])


_TITLE = st.text(alphabet=string.ascii_letters + string.digits + " '-" + "京都亲子游学自由泳", min_size=1, max_size=30) \
    .map(str.strip).filter(bool)


@settings(max_examples=60, deadline=None)
@given(lang=st.sampled_from(sorted(PROBE_QUESTIONS)), thread=_TITLE, source=_TITLE, label=_TITLE)
def test_the_question_reads_back_what_it_was_written_with(lang, thread, source, label):
    q = read_probe_question("Facts from other topics:\n- x: y\n\n" + probe_question(lang, thread, source, label))
    assert q is not None and (q.lang, q.thread, q.source, q.label) == (lang, thread, source, label)
    assert read_probe_question(f"What is the {label} of {source}?") is None
