"""Invariants of the SGD dialogue -> session rules, on dialogues hypothesis draws in the corpus's format."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.schema import Session, check_session
from interleave_bench.sgd.corpus import Dialogue, Located, Service
from interleave_bench.sgd.session import dialogue_session

SERVICES = ("Alpha_1", "Beta_1", "Gamma_2")
INTENTS = ("NONE", "FindIt", "BookIt")
ACTS = ("INFORM", "INFORM_INTENT", "REQUEST", "SELECT", "AFFIRM", "THANK_YOU", "NEGATE_INTENT")
VALUES = ("Fresno", "March 8th", "2", "LA")
SCHEMA = {
    name: Service.model_validate({
        "service_name": name, "description": f"The {name} service",
        "slots": [{"name": "city"}, {"name": "date"}, {"name": "count", "is_categorical": True}],
        "intents": [{"name": "FindIt", "description": "find it"}, {"name": "BookIt", "description": "book it"}],
    })
    for name in SERVICES
}

action = st.builds(lambda act, slot, vals: {"act": act, "slot": slot, "values": vals},
                   st.sampled_from(ACTS), st.sampled_from(("city", "date", "count", "")),
                   st.lists(st.sampled_from(VALUES), max_size=1))
user_frame = st.builds(lambda service, actions, intent: {"service": service, "actions": actions,
                                                          "state": {"active_intent": intent}},
                       st.sampled_from(SERVICES), st.lists(action, max_size=3), st.sampled_from(INTENTS))
user_turn = st.lists(user_frame, min_size=1, max_size=2, unique_by=lambda f: f["service"])
system_frame = st.builds(lambda service, actions: {"service": service, "actions": actions},
                         st.sampled_from(SERVICES), st.lists(action, max_size=2))


@st.composite
def dialogues(draw):
    turns = []
    for k, frames in enumerate(draw(st.lists(user_turn, min_size=1, max_size=12))):
        turns.append({"speaker": "USER", "utterance": f"user {k}", "frames": frames})
        if draw(st.booleans()):
            turns.append({"speaker": "SYSTEM", "utterance": f"system {k}", "frames": [draw(system_frame)]})
    return Dialogue.model_validate({"dialogue_id": "1_00000", "services": list(SERVICES), "turns": turns})


@settings(max_examples=200, deadline=None)
@given(dialogues())
def test_every_drawn_dialogue_gives_a_valid_session_that_follows_the_rules(dialogue):
    record = dialogue_session(Located(dialogue, Path("dialogues_001.json"), 0), "dev", SCHEMA)
    s = Session.model_validate(record)
    assert check_session(s) == []
    user = [t for t in dialogue.turns if t.speaker == "USER"]
    assert [t.text for t in s.turns] == [t.utterance for t in user]
    domain = {th.id: th.domain for th in s.threads}
    assert sorted(domain.values()) == sorted(SERVICES)  # one thread per service of the dialogue
    seen: list[str] = []
    previous = None
    for turn, raw in zip(s.turns, user):
        thread = turn.gold.thread
        acted = [f.service for f in raw.frames if f.actions]
        if len(acted) == 1:
            assert domain[thread] == acted[0]
        # new at a thread's first turn, continue on the previous one's, return otherwise
        expect = "new" if thread not in seen else "continue" if thread == previous else "return"
        assert turn.gold.action == expect
        if thread not in seen:
            seen.append(thread)
        previous = thread
        assert turn.ambiguous == (turn.judge.thread == "ambiguous")
        if not turn.ambiguous:
            assert turn.judge.thread == thread
        if len(raw.frames) > 1:
            assert "multi-service" in turn.tags and thread in turn.judge.candidates
        assert ("cross" in turn.tags) == bool(turn.gold.refs) and thread not in turn.gold.refs
        assert turn.tags[0] == turn.style
    # threads are numbered in order of first use as a gold thread
    assert [th.id for th in s.threads][: len(seen)] == seen
