"""`validate`'s warnings: labels that contradict the rules they are written by (``ambiguous`` against
the independent reading, an action against where its message stands), one line per kind naming the
first and counting them, the exit code left alone; the project's own data gets none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import interleave_bench.commands.validate as validate
from interleave_bench.cli import main
from interleave_bench.generate import generate_offline
from interleave_bench.irc import import_irc
from interleave_bench.schema import Session
from interleave_bench.session_checks import doubts, doubts_named, session_arrays
from interleave_bench.sgd import import_sgd

from _foundation_util import clone, session

DATA = Path(__file__).parent / "data"
AMBIGUOUS_HINT = "ambiguous is true exactly where they differ"


def write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def run(capsys, *paths: Path) -> tuple[int, str, list[str]]:
    code = main(["validate", *map(str, paths)])
    out, err = capsys.readouterr()
    return code, out, err.splitlines()


# session(): 0 t1 new, 1 t2 new, 2 one-off, 3 t2 continue (after the one-off); judge = gold, nothing ambiguous


def test_clean_hand_made_data_gives_no_warning(tmp_path, capsys):
    code, out, err = run(capsys, write(tmp_path / "s.jsonl", [session("a"), session("b", "test")]))
    assert code == 0 and "ok: 2 sessions" in out and err == []


def test_each_kind_is_one_line_naming_the_first_and_counting_the_file(tmp_path, capsys):
    a, b, c = session("a"), session("b"), session("c")
    a["turns"][3]["ambiguous"] = True  # judge t2 = gold t2
    b["turns"][0]["ambiguous"] = True  # the second of that kind: counted, not named
    b["turns"][2]["judge"]["thread"] = "t1"  # a one-off read as t1, not marked
    b["turns"][1]["gold"]["action"] = "continue"  # t2's first message
    c["turns"][3]["gold"]["action"] = "new"  # t2 began at turn 1
    c["turns"].append({**clone(c["turns"][0]), "i": 4, "gold": {"thread": "t1", "action": "continue"}})  # after t2
    c["turns"].append({**clone(c["turns"][0]), "i": 5, "gold": {"thread": "t1", "action": "return"}})  # after t1
    path = write(tmp_path / "s.jsonl", [a, "", b, c])  # line 2 blank: sessions on lines 1, 3 and 4
    code, out, err = run(capsys, path)
    assert code == 0 and out == f"{path}: ok: 3 sessions (en 3), 14 messages, ambiguous share 18.2% (2 of 11 thread messages), leaks by language: en 0\n"
    assert err == [
        f"warning: {path}:1: turns[3].ambiguous: true, but judge.thread equals gold.thread ('t2'); {AMBIGUOUS_HINT} (2 turns like this)",
        f"warning: {path}:3: turns[2].ambiguous: false, but judge.thread 't1' is not 'none', as for a one-off; {AMBIGUOUS_HINT} (1 turn like this)",
        f"warning: {path}:3: turns[1].gold.action: 'continue' on the first message of thread 't2': a thread's first message is 'new' (1 turn like this)",
        f"warning: {path}:4: turns[3].gold.action: 'new' on thread 't2', which began at turn 1: only a thread's first message is 'new' (1 turn like this)",
        f"warning: {path}:4: turns[4].gold.action: 'continue' on thread 't1' after a message of 't2' (one-offs passed over): a move to another thread is 'switch' or 'return' (1 turn like this)",
        f"warning: {path}:4: turns[5].gold.action: 'return' on thread 't1' right after a message of it (one-offs passed over): staying on a thread is 'continue' (1 turn like this)",
    ]


def test_the_other_two_readings_of_ambiguity(tmp_path, capsys):
    s = session()
    s["turns"][2]["ambiguous"] = True  # a one-off read as none, marked
    s["turns"][1]["judge"]["thread"] = "t1"  # t2 read as t1, not marked
    path = write(tmp_path / "s.jsonl", [s])
    code, _, err = run(capsys, path)
    assert code == 0 and err == [
        f"warning: {path}:1: turns[2].ambiguous: true, but judge.thread is 'none', as for a one-off; {AMBIGUOUS_HINT} (1 turn like this)",
        f"warning: {path}:1: turns[1].ambiguous: false, but judge.thread 't1' differs from gold.thread ('t2'); {AMBIGUOUS_HINT} (1 turn like this)",
    ]


def test_a_disputed_message_marked_and_a_continue_over_one_offs_are_no_doubt(tmp_path, capsys):
    s = session()
    s["turns"][1].update(judge={"thread": "ambiguous", "candidates": ["t1", "t2"]}, ambiguous=True)
    s["turns"][2].update(judge={"thread": "t2"}, ambiguous=True)  # a one-off read as t2, marked
    s["turns"].append({**clone(s["turns"][2]), "i": 4})  # a second one-off (read as t2, marked)
    s["turns"].append({**clone(s["turns"][3]), "i": 5})  # t2 continues over it
    s["turns"].append({**clone(s["turns"][0]), "i": 6, "gold": {"thread": "t1", "action": "switch"}})
    code, _, err = run(capsys, write(tmp_path / "s.jsonl", [s]))
    assert code == 0 and err == []


def test_warnings_come_beside_errors_and_leave_the_exit_code_to_them(tmp_path, capsys):
    good, bad = session("a"), session("b")
    good["turns"][3]["ambiguous"] = True
    bad["turns"][1]["i"] = 7
    path = write(tmp_path / "s.jsonl", [good, bad])
    code, out, err = run(capsys, path)
    assert code == 2 and out == ""
    assert err[0].startswith(f"error: {path}:2: turns[1].i:") and err[1] == f"{path}: 1 error"
    assert err[2].startswith(f"warning: {path}:1: turns[3].ambiguous: true") and len(err) == 3


def test_blocks_add_up_and_the_first_block_names_the_first(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(validate, "DOUBT_BLOCK", 2)
    records = [session(f"s{k}") for k in range(5)]
    for k in (1, 2, 4):
        records[k]["turns"][0]["ambiguous"] = True
    path = write(tmp_path / "s.jsonl", records)
    code, _, err = run(capsys, path)
    assert code == 0 and err == [
        f"warning: {path}:2: turns[0].ambiguous: true, but judge.thread equals gold.thread ('t1'); {AMBIGUOUS_HINT} (3 turns like this)"]


def test_the_projects_own_data_gets_no_warning(tmp_path, capsys):
    v0 = generate_offline(10, tmp_path / "v0", seed=3)
    v1 = generate_offline(6, tmp_path / "v1", seed=4, dataset="v1")
    import_sgd(DATA / "sgd", tmp_path / "sgd")
    import_irc(DATA / "irc", tmp_path / "irc")
    files = [v0, v1, tmp_path / "sgd" / "sessions.jsonl", tmp_path / "irc" / "sessions.jsonl"]
    capsys.readouterr()  # (what generating and importing printed)
    code, out, err = run(capsys, *files)
    assert code == 0 and out.count(": ok: ") == 4 and err == []


# --- the masks against a second reading, turn by turn ---------------------------------------------


def reference_doubts(s: Session) -> dict[str, list[int]]:
    """Each kind's turns, and each turn's thread's first message and thread message before (thread
    numbers, -1 for none), written out with one loop over the turns (for the test only)."""
    out: dict[str, list[int]] = {k: [] for k in ("ambiguous_agreeing", "disputed_unmarked", "first_not_new",
                                                  "new_not_first", "continue_moving", "move_staying",
                                                  "few_candidates", "first_turn", "previous")}
    seen: dict[str, int] = {}
    before = None
    for k, t in enumerate(s.turns):
        out["first_turn"].append(seen.get(t.gold.thread, k) if t.gold.thread is not None else -1)
        out["previous"].append(-1 if t.gold.thread is None or before is None else s.thread_ids().index(before))
        agrees = t.judge.thread == (t.gold.thread if t.gold.thread is not None else "none")
        if t.judge.thread == "ambiguous" and len(set(t.judge.candidates or [])) < 2:
            out["few_candidates"].append(k)
        if t.ambiguous and agrees:
            out["ambiguous_agreeing"].append(k)
        if not t.ambiguous and not agrees:
            out["disputed_unmarked"].append(k)
        thread, action = t.gold.thread, t.gold.action
        if thread is None:
            continue
        if thread not in seen:
            if action != "new":
                out["first_not_new"].append(k)
        elif action == "new":
            out["new_not_first"].append(k)
        elif action == "continue" and thread != before:
            out["continue_moving"].append(k)
        elif action in ("switch", "return") and thread == before:
            out["move_staying"].append(k)
        seen.setdefault(thread, k)
        before = thread
    return out


@st.composite
def labelled(draw: Any, sid: str) -> dict[str, Any]:
    """A valid session whose actions, readings and ambiguity flags are drawn at random."""
    ids = [f"t{k}" for k in range(1, draw(st.integers(1, 3)) + 1)]
    turns = []
    for k in range(draw(st.integers(1, 8))):
        thread = draw(st.sampled_from([None, *ids]))
        action = "oneoff" if thread is None else draw(st.sampled_from(["new", "continue", "switch", "return"]))
        turns.append({"i": k, "text": "x", "gold": {"thread": thread, "action": action},
                      "style": "oneoff" if thread is None else "implicit",
                      "judge": {"thread": draw(st.sampled_from(["none", "ambiguous", *ids])),
                                "candidates": draw(st.none() | st.lists(st.sampled_from(ids), max_size=3))},
                      "ambiguous": draw(st.booleans())})
    return {"session_id": sid, "version": "interleave-v0", "split": "dev", "lang": "en",
            "threads": [{"id": t, "title": t, "domain": ""} for t in ids], "turns": turns}


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5).flatmap(lambda n: st.tuples(*(labelled(f"s{k}") for k in range(n)))))
def test_a_block_finds_the_turns_a_second_reading_finds(raws):
    records = [Session.model_validate(r) for r in raws]
    arrays = session_arrays(records)
    found = doubts(arrays)
    expected = [reference_doubts(s) for s in records]
    for kind, mask in found.kinds().items():
        turns = [(s, k) for s, ref in enumerate(expected) for k in ref[kind]]
        hit = [(int(arrays.turn_session[k]), k - int(arrays.turn_start[arrays.turn_session[k]])) for k in mask.nonzero()[0]]
        assert hit == turns, kind
    for name in ("first_turn", "previous"):
        assert getattr(found, name).tolist() == [v for ref in expected for v in ref[name]], name
    named = doubts_named(arrays, found)
    assert [(kind, n) for kind, n, *_ in named] == [(k, int(m.sum())) for k, m in found.kinds().items() if m.any()]


def test_an_ambiguous_reading_naming_fewer_than_two_threads_is_warned_of(tmp_path, capsys):
    a, b = session("a"), session("b")
    a["turns"][3]["judge"] = {"thread": "ambiguous"}  # no candidates at all
    a["turns"][3]["ambiguous"] = True
    b["turns"][3]["judge"] = {"thread": "ambiguous", "candidates": ["t2", "t2"]}  # one thread, twice
    b["turns"][3]["ambiguous"] = True
    path = write(tmp_path / "s.jsonl", [a, b])
    code, out, err = run(capsys, path)
    assert code == 0 and "ok: 2 sessions" in out
    assert err == [f"warning: {path}:1: turns[3].judge.candidates: 0 distinct thread id(s) beside judge.thread "
                   "'ambiguous': an ambiguous reading names the 2 or more threads it could be (2 turns like this)"]
    # two threads named: as the readers write it, no warning
    b["turns"][3]["judge"]["candidates"] = ["t1", "t2"]
    code, out, err = run(capsys, write(tmp_path / "t.jsonl", [b]))
    assert code == 0 and err == []
