"""The Schema-Guided Dialogue corpus: import, the gold rules, and bad input (docs/sgd.md)."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import pytest

from _sgd_util import FIXTURE, imported, run_cli  # noqa: F401  (imported: the fixture)
from interleave_bench.io import read_manifest, read_sessions
from interleave_bench.sgd import import_sgd
from interleave_bench.sgd.corpus import Frame
from interleave_bench.sgd.session import gold_service, readable, style_of

#: the corpus's development split, where the project keeps it beside its checkouts
#: (``INTERLEAVE_SGD_DEV`` points elsewhere); the test that reads it is skipped without it
SGD_DEV = Path(os.environ.get("INTERLEAVE_SGD_DEV") or Path(__file__).resolve().parents[2] / "shared" / "data" / "sgd" / "dev")
#: the corpus's README: its dev split has 1,262 dialogues that use more than one service
DEV_MULTI_SERVICE_DIALOGUES = 1262




def raw_dialogues(folder: Path) -> dict[str, dict]:
    """Every dialogue of a split folder by id, read with plain ``json`` (not the importer's reader)."""
    out = {}
    for path in sorted(folder.glob("dialogues_*.json")):
        for d in json.loads(path.read_text(encoding="utf-8")):
            out[d["dialogue_id"]] = d
    return out


def assert_user_turns_and_single_service_gold(sessions, dialogues) -> int:
    """The acceptance check, from the raw files: the turns are the user turns in order, and a turn
    whose frames have actions for exactly one service has that service's thread as gold. Returns
    the number of such turns checked."""
    checked = 0
    for s in sessions:
        d = dialogues[s.model_extra["dialogue_id"]]
        user = [t for t in d["turns"] if t["speaker"] == "USER"]
        assert [t.text for t in s.turns] == [t["utterance"] for t in user]
        domain = {th.id: th.domain for th in s.threads}
        for turn, raw in zip(s.turns, user):
            services = {f["service"] for f in raw["frames"] if f["actions"]}
            if len(services) == 1:
                assert domain[turn.gold.thread] == services.pop(), (s.session_id, turn.i)
                checked += 1
    return checked


def test_fixture_sessions_follow_the_raw_files(imported):
    sessions = read_sessions(imported / "sessions.jsonl")
    dialogues = raw_dialogues(FIXTURE / "dev")
    assert [s.session_id for s in sessions] == ["sgd-8_00005", "sgd-8_00114", "sgd-11_00064", "sgd-14_00035",
                                                "sgd-20_00037"]
    assert all(s.split == "dev" and s.lang == "en" and s.model_extra["corpus_split"] == "dev" for s in sessions)
    # 38 user turns in the five dialogues, 32 of them on one service
    assert sum(len(s.turns) for s in sessions) == 38
    assert assert_user_turns_and_single_service_gold(sessions, dialogues) == 32
    m = read_manifest(imported / "manifest.json")
    assert m.writer == "schema-guided-dialogue" and m.counts.sessions == 5 and m.counts.messages == 38
    assert m.options["license"] == "cc-by-sa-4.0"


@pytest.mark.skipif(not SGD_DEV.is_dir(), reason="the corpus's dev split is not here")
def test_whole_dev_split_gives_every_multi_service_dialogue(tmp_path):
    result = import_sgd(SGD_DEV, tmp_path / "dev")
    sessions = read_sessions(tmp_path / "dev" / "sessions.jsonl")
    assert result.sessions == len(sessions) == DEV_MULTI_SERVICE_DIALOGUES
    dialogues = raw_dialogues(SGD_DEV)
    assert {s.model_extra["dialogue_id"] for s in sessions} == {k for k, d in dialogues.items() if len(d["services"]) > 1}
    assert assert_user_turns_and_single_service_gold(sessions, dialogues) > 0


def test_hand_checked_dialogue_with_a_return_and_a_cross_reference(imported):
    s = {s.session_id: s for s in read_sessions(imported / "sessions.jsonl")}["sgd-14_00035"]
    assert s.model_extra["dialogue_id"] == "14_00035"
    assert [(t.id, t.domain, t.title) for t in s.threads] == [("t1", "Hotels_4", "Hotels"), ("t2", "Weather_1", "Weather")]
    assert s.threads[0].goal == "SearchHotel, ReserveHotel" and s.threads[1].goal == "GetWeather"
    assert s.threads[1].description == ("Check the weather for any place and any date. Intents: GetWeather: "
                                        "Get the weather of a certain location on a date.")
    gold = [(t.gold.thread, t.gold.action) for t in s.turns]
    assert gold == [("t1", "new"), ("t1", "continue"), ("t2", "new"), ("t2", "continue"),
                    ("t1", "return"), ("t1", "continue"), ("t1", "continue"), ("t1", "continue")]
    # turn 2 has actions for both services: the weather's intent starts there, the hotel's does not change
    t2 = s.turns[2]
    assert "multi-service" in t2.tags and t2.judge.thread == "t2" and t2.judge.candidates == ["t1", "t2"]
    assert t2.ambiguous is False
    # turn 4 books the hotel for "this Saturday", the date first given in the weather thread
    t4 = s.turns[4]
    assert t4.gold.refs == ["t2"] and "cross" in t4.tags
    assert sum(bool(t.gold.refs) for t in s.turns) == 1
    # the turn's place in the dialogue, and the system's reply that follows it
    assert [t.model_extra["corpus_turn"] for t in s.turns] == [0, 2, 4, 6, 8, 10, 12, 14]
    raw = raw_dialogues(FIXTURE / "dev")["14_00035"]["turns"]
    assert [t.assistant for t in s.turns] == [raw[t.model_extra["corpus_turn"] + 1]["utterance"] for t in s.turns]
    assert s.turns[0].assistant == "And in what location would you like to search?"
    assert [t.style for t in s.turns] == ["explicit", "cue", "explicit", "pronoun", "explicit", "cue", "implicit",
                                          "implicit"]


def frame(service: str, intent: str, *acts: str) -> Frame:
    return Frame.model_validate({"service": service, "actions": [{"act": a} for a in acts],
                                 "state": {"active_intent": intent}})


def test_gold_rule_on_turns_with_actions_for_several_services():
    before = {"A_1": "FindA", "B_1": "FindB"}
    # one frame: its service, whatever the current one is
    assert gold_service([frame("B_1", "FindB", "INFORM")], before, "A_1") == ("B_1", True)
    # the service whose intent changes wins; an intent that ends (NONE) starts nothing
    assert gold_service([frame("A_1", "NONE", "NEGATE_INTENT"), frame("B_1", "BuyB", "INFORM_INTENT")], before, "A_1") \
        == ("B_1", True)
    assert gold_service([frame("A_1", "FindA", "THANK_YOU"), frame("C_1", "FindC", "INFORM_INTENT")], before, "A_1") \
        == ("C_1", True)
    # nothing starts or changes: the current service
    assert gold_service([frame("A_1", "FindA", "INFORM"), frame("B_1", "FindB", "THANK_YOU")], before, "B_1") \
        == ("B_1", True)
    # two intents change at once, or nothing changes away from the current one: not settled
    assert gold_service([frame("A_1", "BuyA", "INFORM_INTENT"), frame("B_1", "BuyB", "INFORM_INTENT")], before, "A_1") \
        == ("A_1", False)
    assert gold_service([frame("A_1", "FindA", "INFORM"), frame("B_1", "FindB", "INFORM")], before, "C_1") \
        == ("A_1", False)


def test_a_turn_the_rule_cannot_settle_is_ambiguous_with_its_candidates(tmp_path):
    corpus = tmp_path / "dev"
    shutil.copytree(FIXTURE / "dev", corpus)
    path = corpus / "dialogues_014.json"
    [d] = json.loads(path.read_text())
    # turn 2 (the weather starts): make the hotel's intent change too, so two intents change at once
    hotel = next(f for f in d["turns"][4]["frames"] if f["service"] == "Hotels_4")
    hotel["state"]["active_intent"] = "ReserveHotel"
    path.write_text(json.dumps([d]))
    import_sgd(corpus, tmp_path / "out")
    s = {s.session_id: s for s in read_sessions(tmp_path / "out" / "sessions.jsonl")}["sgd-14_00035"]
    t = s.turns[2]
    assert t.ambiguous is True and t.judge.thread == "ambiguous" and t.judge.candidates == ["t1", "t2"]
    assert "multi-service" in t.tags


def test_single_service_dialogues_are_skipped_and_counted(tmp_path, capsys):
    corpus = tmp_path / "dev"
    shutil.copytree(FIXTURE / "dev", corpus)
    path = corpus / "dialogues_008.json"
    dialogues = json.loads(path.read_text())
    one = copy.deepcopy(dialogues[0])
    one["dialogue_id"] = "8_99999"
    one["services"] = ["Buses_1"]
    one["turns"] = [t for t in one["turns"][:8]]  # the bus part only
    path.write_text(json.dumps(dialogues + [one]))
    code, out, err = run_cli(capsys, "import", "sgd", corpus, "--out", tmp_path / "out")
    assert code == 0, err
    assert "5 sessions" in err and "1 dialogue of one service skipped" in err
    assert read_manifest(tmp_path / "out" / "manifest.json").counts.model_extra["single_service_skipped"] == 1


def test_test_split_is_test_data_and_keeps_its_split_in_the_id(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(FIXTURE / "dev", corpus / "dev")
    shutil.copytree(FIXTURE / "dev", corpus / "test")
    result = import_sgd(corpus, tmp_path / "out")
    sessions = read_sessions(tmp_path / "out" / "sessions.jsonl")
    assert result.splits == {"dev": 5, "test": 5}
    test = [s for s in sessions if s.split == "test"]
    assert [s.session_id for s in test][0] == "sgd-test-8_00005"
    assert {s.model_extra["corpus_split"] for s in test} == {"test"}
    assert {s.model_extra["dialogue_id"] for s in test} == {s.model_extra["dialogue_id"] for s in sessions if s.split == "dev"}


def test_titles_styles_and_readable_names():
    assert readable("RentalCars_1") == "Rental cars" and readable("Events_3") == "Events"
    assert style_of(frame("A_1", "X", "INFORM_INTENT", "SELECT")) == "explicit"
    assert style_of(frame("A_1", "X", "REQUEST", "AFFIRM")) == "cue"
    assert style_of(frame("A_1", "X", "SELECT", "GOODBYE")) == "pronoun"
    assert style_of(frame("A_1", "X", "THANK_YOU", "NEGATE")) == "implicit"


def bad_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "dev"
    shutil.copytree(FIXTURE / "dev", corpus)
    return corpus


def one_line_error(capsys, corpus: Path, out: Path) -> str:
    code, stdout, err = run_cli(capsys, "import", "sgd", corpus, "--out", out)
    assert code == 2, (stdout, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert not (out / "sessions.jsonl").exists()
    return err


def test_missing_schema_is_one_line(tmp_path, capsys):
    corpus = bad_corpus(tmp_path)
    (corpus / "schema.json").unlink()
    err = one_line_error(capsys, corpus, tmp_path / "out")
    assert f"{corpus / 'schema.json'}: no such file" in err


def test_unknown_service_is_one_line_naming_file_and_field(tmp_path, capsys):
    corpus = bad_corpus(tmp_path)
    path = corpus / "dialogues_020.json"
    dialogues = json.loads(path.read_text())
    dialogues[0]["services"][2] = "Spaceships_1"
    path.write_text(json.dumps(dialogues))
    err = one_line_error(capsys, corpus, tmp_path / "out")
    assert f"{path}: [0].services[2]: service 'Spaceships_1' (dialogue 20_00037) is not in" in err

    dialogues[0]["services"][2] = dialogues[0]["services"][0]
    path.write_text(json.dumps(dialogues))
    err = one_line_error(capsys, corpus, tmp_path / "out")
    assert f"{path}: [0].services[2]: service {dialogues[0]['services'][0]!r} (dialogue 20_00037) is listed twice " \
           f"(first at services[0])" in err

    dialogues[0]["services"][2] = "Flights_3"
    dialogues[0]["turns"][6]["frames"][0]["service"] = "Spaceships_1"
    path.write_text(json.dumps(dialogues))
    err = one_line_error(capsys, corpus, tmp_path / "out")
    assert f"{path}: [0].turns[6].frames[0].service: service 'Spaceships_1'" in err


def test_malformed_json_is_one_line_naming_file_and_line(tmp_path, capsys):
    corpus = bad_corpus(tmp_path)
    path = corpus / "dialogues_008.json"
    path.write_text(path.read_text()[:5000])
    err = one_line_error(capsys, corpus, tmp_path / "out")
    assert err.startswith(f"error: {path}:") and "JSON" in err


@pytest.mark.parametrize("edit, field", [
    (lambda d: d[0].pop("turns"), "[0].turns: required field is missing"),
    (lambda d: d[1]["turns"][3].__setitem__("speaker", "BOT"), "[1].turns[3].speaker: expected 'USER' or 'SYSTEM'"),
    (lambda d: d[0]["turns"][0]["frames"][0].pop("state"), "[0].turns[0].frames[0].state: a user turn's frame"),
    (lambda d: d[0]["turns"][2]["frames"][0]["actions"][0].__setitem__("values", "LA"),
     "[0].turns[2].frames[0].actions[0].values: expected a list"),
    (lambda d: d[0]["turns"][0]["frames"][0]["state"].__setitem__("active_intent", "NoSuchIntent"),
     "[0].turns[0].frames[0].state.active_intent: 'NoSuchIntent' is not an intent of service"),
    (lambda d: d[0].__setitem__("dialogue_id", "8_1\nerror: forged"),  # refused on its field, not as a session id
     "[0].dialogue_id: '8_1\\nerror: forged' holds a control character"),
])
def test_bad_dialogue_fields_are_one_line(tmp_path, capsys, edit, field):
    corpus = bad_corpus(tmp_path)
    path = corpus / "dialogues_008.json"
    dialogues = json.loads(path.read_text())
    edit(dialogues)
    path.write_text(json.dumps(dialogues))
    err = one_line_error(capsys, corpus, tmp_path / "out")
    assert f"{path}: {field}" in err


def test_a_dialogue_twice_is_one_line(tmp_path, capsys):
    corpus = bad_corpus(tmp_path)
    (corpus / "dialogues_099.json").write_text((corpus / "dialogues_014.json").read_text())
    err = one_line_error(capsys, corpus, tmp_path / "out")
    assert "dialogues_099.json: [0].dialogue_id: dialogue 14_00035 appears twice (first in dialogues_014.json [0])" in err


def test_folder_without_dialogues_or_named_for_no_split_is_refused(tmp_path, capsys):
    err = one_line_error(capsys, tmp_path, tmp_path / "out")
    assert "no dialogues_*.json files" in err
    other = tmp_path / "mine"
    shutil.copytree(FIXTURE / "dev", other)
    err = one_line_error(capsys, other, tmp_path / "out")
    assert "named for its corpus split" in err


def test_import_is_a_pure_function_of_the_files(tmp_path):
    import_sgd(FIXTURE, tmp_path / "a")
    import_sgd(FIXTURE, tmp_path / "b")
    assert (tmp_path / "a" / "sessions.jsonl").read_bytes() == (tmp_path / "b" / "sessions.jsonl").read_bytes()


def test_a_folder_with_no_dialogue_of_several_services_is_refused_and_writes_nothing(tmp_path, capsys):
    corpus = tmp_path / "dev"
    shutil.copytree(FIXTURE / "dev", corpus)
    for path in corpus.glob("dialogues_*.json"):
        for_one = []
        for d in json.loads(path.read_text()):  # each dialogue cut where a second service comes in
            first = d["services"][0]
            turns = d["turns"][:next((k for k, t in enumerate(d["turns"]) if any(f["service"] != first for f in t["frames"])),
                                      len(d["turns"]))]
            for_one.append({**d, "services": [first], "turns": turns})
        path.write_text(json.dumps(for_one))
    err = one_line_error(capsys, corpus, tmp_path / "out")
    assert err == (f"error: {corpus}: no dialogue here uses more than one service (5 of one service left out): "
                   "nothing to import\n")
    assert not (tmp_path / "out" / "sessions.jsonl").exists()
    for path in corpus.glob("dialogues_*.json"):
        path.write_text("[]")
    assert one_line_error(capsys, corpus, tmp_path / "out") == f"error: {corpus}: no dialogues here: nothing to import\n"
