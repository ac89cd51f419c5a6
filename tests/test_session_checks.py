"""The checks across the fields of a session (``interleave_bench.session_checks``): the same
defects, named the same way and in the same order, as a record-by-record reading of the rules, for
one session (``check_session``) and for a block of them, and the scorer refuses a block exactly
when a session of it has one."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.compiled import decoder
from interleave_bench.schema import JUDGE_AMBIGUOUS, JUDGE_NONE, SPECIAL_LABELS, Session, check_session
from interleave_bench.score.datafile import Bad, columns_of
from interleave_bench.session_checks import defects, problems_of, session_arrays

#: ids the model router's answer parser reads as a new topic, and ones it does not
NEW_WORDS = ["new", "New", "NEW", "new:1"]
IDS = ["t1", "t2", "t3", "x", *SPECIAL_LABELS, JUDGE_NONE, JUDGE_AMBIGUOUS, *NEW_WORDS, "news", "new:", "t-new"]
ACTIONS = ["new", "continue", "switch", "return", "oneoff"]
STYLES = ["explicit", "cue", "pronoun", "implicit", "oneoff"]


def reference_checks(s: Session) -> list[tuple[str, str]]:
    """The cross-field checks written out record by record, one loop per thread and per turn (a
    second reading, for the test only; the v1 checks are left out)."""
    problems: list[tuple[str, str]] = []
    ids = s.thread_ids()
    known = set(ids)
    seen: set[str] = set()
    for k, t in enumerate(s.threads):
        if t.id in seen:
            problems.append((f"threads[{k}].id", f"duplicate thread id {t.id!r}"))
        seen.add(t.id)
        if t.id in SPECIAL_LABELS or t.id in (JUDGE_NONE, JUDGE_AMBIGUOUS):
            problems.append((f"threads[{k}].id", f"{t.id!r} is reserved and cannot be a thread id"))
        elif t.id in NEW_WORDS:
            problems.append((f"threads[{k}].id", f"{t.id!r} is reserved and cannot be a thread id (a model router "
                                                 f"reads an answer {t.id!r} as a new topic)"))
        if t.twinOf is not None:
            if t.twinOf == t.id:
                problems.append((f"threads[{k}].twinOf", "a thread cannot be its own twin"))
            elif t.twinOf not in known:
                problems.append((f"threads[{k}].twinOf", f"{t.twinOf!r} is not a thread of this session"))
    numbering_ok = True
    for k, turn in enumerate(s.turns):
        where = f"turns[{k}]"
        if numbering_ok and turn.i != k:
            # one error for a gap or swap, not one for every turn after it
            problems.append((f"{where}.i", f"expected {k} (turns run 0..n-1 in order), got {turn.i}"))
            numbering_ok = False
        g = turn.gold
        if (g.action == "oneoff") != (turn.style == "oneoff"):
            problems.append((f"{where}.style", f"style 'oneoff' goes with action 'oneoff' and only with it, "
                                               f"got style {turn.style!r} with action {g.action!r}"))
        if g.action == "oneoff":
            if g.thread is not None:
                problems.append((f"{where}.gold.thread", f"a one-off has no thread, got {g.thread!r}"))
        elif g.thread is None:
            problems.append((f"{where}.gold.thread", f"null is only allowed for action 'oneoff', not {g.action!r}"))
        elif g.thread not in known:
            problems.append((f"{where}.gold.thread", f"{g.thread!r} is not a thread of this session"))
        for r, ref in enumerate(g.refs):
            if ref not in known:
                problems.append((f"{where}.gold.refs[{r}]", f"{ref!r} is not a thread of this session"))
        j = turn.judge
        if j.thread not in known and j.thread not in (JUDGE_NONE, JUDGE_AMBIGUOUS):
            problems.append(
                (f"{where}.judge.thread", f"{j.thread!r} is not a thread of this session, 'none' or 'ambiguous'")
            )
        for c, cand in enumerate(j.candidates or []):
            if cand not in known:
                problems.append((f"{where}.judge.candidates[{c}]", f"{cand!r} is not a thread of this session"))
    return problems



def _thread(tid: str, twin: str | None) -> dict[str, Any]:
    return {"id": tid, "title": f"Thread {tid}", "domain": "code", **({"twinOf": twin} if twin is not None else {})}


@st.composite
def sessions(draw: Any, sid: str = "s") -> dict[str, Any]:
    """A session whose threads, numbering, styles, gold and judge are each right or wrong at random."""
    ids = st.sampled_from(IDS)
    threads = draw(st.lists(st.tuples(ids, st.none() | ids), min_size=1, max_size=4))
    turns = []
    for k in range(draw(st.integers(1, 6))):
        action = draw(st.sampled_from(ACTIONS))
        turns.append({
            "i": draw(st.sampled_from([k, k, k, k + 1, 0])),
            "text": "hi",
            "gold": {"thread": draw(st.none() | ids), "action": action, "refs": draw(st.lists(ids, max_size=3))},
            "style": draw(st.sampled_from(["oneoff" if action == "oneoff" else "explicit", *STYLES])),
            "judge": {"thread": draw(ids), "candidates": draw(st.none() | st.lists(ids, max_size=3))}, "ambiguous": False,
        })
    return {"session_id": sid, "version": "interleave-v0", "split": "dev", "lang": "en", "persona": "",
            "threads": [_thread(t, w) for t, w in threads], "turns": turns}


@settings(max_examples=400, deadline=None)
@given(sessions())
def test_one_session_has_the_defects_the_rules_name_in_their_order(raw):
    s = Session.model_validate(raw)
    assert check_session(s) == reference_checks(s)


@settings(max_examples=200, deadline=None)
@given(st.lists(sessions(), min_size=1, max_size=5))
def test_a_block_names_each_sessions_defects_and_the_scorer_refuses_it_exactly_then(raws):
    records = [Session.model_validate({**r, "session_id": f"s{k}"}) for k, r in enumerate(raws)]
    arrays = session_arrays(records)
    found = defects(arrays)
    assert problems_of(arrays, found) == [reference_checks(s) for s in records]
    compiled = [decoder(Session).decode(msgspec.json.encode(r.model_dump())) for r in records]
    if any(map(reference_checks, records)):
        assert found.any()
        with pytest.raises(Bad):
            columns_of(compiled)
    else:
        assert not found.any()
        assert len(columns_of(compiled)) == len(records)


def test_each_defect_is_named_by_hand():
    raw = {"session_id": "s", "version": "interleave-v0", "split": "dev", "lang": "en", "persona": "",
           "threads": [_thread("t1", None), _thread("t1", "t1"), _thread("none", "t9")],
           "turns": [
               {"i": 0, "text": "a", "gold": {"thread": "t1", "action": "oneoff", "refs": ["t1", "q"]}, "style": "cue",
                "judge": {"thread": "t7", "candidates": ["t1", "z"]}, "ambiguous": False},
               {"i": 2, "text": "b", "gold": {"thread": None, "action": "new"}, "style": "oneoff",
                "judge": {"thread": "ambiguous"}, "ambiguous": True},
               {"i": 3, "text": "c", "gold": {"thread": "t4", "action": "continue"}, "style": "explicit",
                "judge": {"thread": "none"}, "ambiguous": False},
           ]}
    assert check_session(Session.model_validate(raw)) == [
        ("threads[1].id", "duplicate thread id 't1'"),
        ("threads[1].twinOf", "a thread cannot be its own twin"),
        ("threads[2].id", "'none' is reserved and cannot be a thread id"),
        ("threads[2].twinOf", "'t9' is not a thread of this session"),
        ("turns[0].style", "style 'oneoff' goes with action 'oneoff' and only with it, got style 'cue' with action 'oneoff'"),
        ("turns[0].gold.thread", "a one-off has no thread, got 't1'"),
        ("turns[0].gold.refs[1]", "'q' is not a thread of this session"),
        ("turns[0].judge.thread", "'t7' is not a thread of this session, 'none' or 'ambiguous'"),
        ("turns[0].judge.candidates[1]", "'z' is not a thread of this session"),
        ("turns[1].i", "expected 1 (turns run 0..n-1 in order), got 2"),
        ("turns[1].style", "style 'oneoff' goes with action 'oneoff' and only with it, got style 'oneoff' with action 'new'"),
        ("turns[1].gold.thread", "null is only allowed for action 'oneoff', not 'new'"),
        ("turns[2].gold.thread", "'t4' is not a thread of this session"),
    ]


@pytest.mark.parametrize("tid", NEW_WORDS)
def test_a_thread_the_model_router_would_read_as_a_new_topic_is_refused(tid):
    """The answer parser reads these as a new topic, not as the thread (``new:1`` when deciding a
    burst message by message): a thread of that id could never be routed to."""
    from interleave_bench.route.answer import parse_each
    from interleave_bench.route.base import conversation_of
    from interleave_bench.route.topic_state import TopicState

    raw = {"session_id": "s", "version": "interleave-v0", "split": "dev", "lang": "en", "persona": "",
           "threads": [_thread("t1", None), _thread(tid, None)],
           "turns": [{"i": k, "text": "a", "gold": {"thread": tid, "action": "new" if k == 0 else "continue"},
                      "style": "explicit", "judge": {"thread": tid}, "ambiguous": False} for k in range(2)]}
    session = Session.model_validate(raw)
    reason = f"{tid!r} is reserved and cannot be a thread id (a model router reads an answer {tid!r} as a new topic)"
    assert check_session(session) == [("threads[1].id", reason)]
    conv = conversation_of(session)
    view = TopicState(conv, "closed").view(list(conv.messages))
    answer = {"decisions": [{"topic": "new", "title": "x"}, {"topic": tid, "title": "y"}]}
    assert parse_each(json.dumps(answer), view)[1].kind == "new"
