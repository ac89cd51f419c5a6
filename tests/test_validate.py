"""`interleave-bench validate` and the readers: every defect named with file, line and field."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench import io as ibio
from interleave_bench.cli import main
from interleave_bench.errors import InputError, InputErrors
from interleave_bench.io import (
    JsonlAppender,
    dumps_line,
    iter_sessions,
    read_predictions,
    read_sessions,
    write_jsonl,
)
from interleave_bench.schema import Session

from _foundation_util import clone, session


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_valid_file_summary(tmp_path, capsys):
    a, b = session("en-0001"), session("en-0002", "test")
    b["turns"][3]["ambiguous"] = True
    b["turns"][3]["tags"] = ["implicit", "leak"]
    p = write_lines(tmp_path / "sessions.jsonl", [json.dumps(a), json.dumps(b)])
    assert main(["validate", str(p)]) == 0
    out = capsys.readouterr().out
    # 8 messages, 2 of them one-offs: 1 of 6 thread messages disputed, 16.7% (the metric, not 1 of 8)
    assert "2 sessions (en 2), 8 messages, ambiguous share 16.7% (1 of 6 thread messages), leaks by language: en 1" in out


def dozen_defects():
    """Twelve lines, each with one defect, and the (line, field, words) each must be reported with."""
    good = session()
    lines, expect = [], []

    def add(obj_or_text, field, words):
        lines.append(obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text))
        expect.append((len(lines), field, words))

    add('{"session_id": "x", "version": ', None, "invalid JSON")
    s = clone(good); s["session_id"] = "s2"; s["turns"][1]["gold"]["action"] = "swich"
    add(s, "turns[1].gold.action", "'swich' is not one of new, continue, switch, return, oneoff")
    s = clone(good); s["session_id"] = "s3"; s["turns"][0]["i"] = "zero"
    add(s, "turns[0].i", "got 'zero'")
    s = clone(good); s["session_id"] = "s4"; s["turns"][1]["gold"]["refs"] = ["t9"]
    add(s, "turns[1].gold.refs[0]", "'t9' is not a thread of this session")
    s = clone(good); s["session_id"] = "s5"; s["turns"][3]["i"] = 5
    add(s, "turns[3].i", "expected 3")
    s = clone(good)  # duplicate of line 7's id below? no: duplicate of a later good line
    s["session_id"] = "dup"
    add(s, None, None)  # a good line (line 6)
    expect.pop()
    s = clone(good); s["session_id"] = "dup"
    add(s, "session_id", "duplicate session id 'dup' (first on line 6)")
    s = clone(good); s["session_id"] = "s8"; s["split"] = "train"
    add(s, "split", "'train' is not one of dev, test")
    s = clone(good); s["session_id"] = "s9"; s["turns"][0]["gold"]["thread"] = "t7"
    add(s, "turns[0].gold.thread", "'t7' is not a thread of this session")
    s = clone(good); s["session_id"] = "s10"; s["threads"][1]["twinOf"] = "t5"
    add(s, "threads[1].twinOf", "'t5' is not a thread of this session")
    s = clone(good); s["session_id"] = "s11"; s["turns"][2]["ambiguous"] = "maybe"
    add(s, "turns[2].ambiguous", "")
    s = clone(good); s["session_id"] = "s12"; del s["turns"][2]["judge"]
    add(s, "turns[2].judge", "required field is missing")
    add("[1, 2, 3]", None, "expected a JSON object")
    s = clone(good); s["session_id"] = "s14"; s["threads"][1]["id"] = "t1"
    add(s, "threads[1].id", "duplicate thread id 't1'")
    return lines, expect


def test_dozen_defects_each_reported(tmp_path):
    lines, expect = dozen_defects()
    assert len(expect) >= 12
    p = write_lines(tmp_path / "bad.jsonl", lines)
    proc = subprocess.run([sys.executable, "-m", "interleave_bench", "validate", str(p)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    err_lines = [l for l in proc.stderr.splitlines() if l.startswith("error: ")]
    for line_no, field, words in expect:
        prefix = f"error: {p}:{line_no}: " + (f"{field}: " if field else "")
        hits = [l for l in err_lines if l.startswith(prefix)]
        assert hits, f"no error for line {line_no} field {field}: {proc.stderr}"
        if words:
            assert any(words in h for h in hits), (words, hits)
    # the one good line is not reported
    assert not any(l.startswith(f"error: {p}:6:") for l in err_lines)
    assert proc.stdout == ""


def test_reader_raises_first_error_with_position(tmp_path):
    s = session(); s["turns"][2]["gold"]["action"] = "swich"
    p = write_lines(tmp_path / "sessions.jsonl", [json.dumps(session("a")), json.dumps(s)])
    with pytest.raises(InputError) as exc:
        read_sessions(p)
    assert str(exc.value).startswith(f"{p}:2: turns[2].gold.action: 'swich' is not one of")


def test_missing_file_is_one_line(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "nope.jsonl: no such file" in err and "Traceback" not in err


def test_unknown_fields_kept_round_trip(tmp_path):
    s = session()
    s["extra_top"] = {"kept": True}
    s["turns"][0]["gold"]["note"] = "mine"
    s["threads"][0]["colour"] = "blue"
    p = write_lines(tmp_path / "s.jsonl", [json.dumps(s, ensure_ascii=False)])
    back = read_sessions(p)[0].dump()
    assert back == s


def test_predictions_reader(tmp_path):
    p = write_lines(tmp_path / "p.jsonl", [
        json.dumps({"session_id": "a", "i": 0, "pred": "t1", "mode": "closed", "usage": {"input": 3}}),
        json.dumps({"session_id": "a", "i": 1, "pred": 7}),
    ])
    rows = read_predictions(p)
    assert rows[1].pred == "7" and rows[0].usage.input == 3 and rows[0].usage.output == 0
    bad = write_lines(tmp_path / "bad.jsonl", [json.dumps({"session_id": "a", "i": -1, "pred": "t1", "mode": "both"})])
    with pytest.raises(InputErrors) as exc:
        read_predictions(bad)
    fields = {e.field for e in exc.value.errors}
    assert fields == {"i", "mode"}


def test_appender_cuts_partial_line_and_resumes(tmp_path):
    p = tmp_path / "out.jsonl"
    with JsonlAppender(p) as app:
        app.append({"k": 1})
        app.append({"k": 2})
    with open(p, "a", encoding="utf-8") as fh:
        fh.write('{"k": 3, "half')  # a crash mid-write
    with JsonlAppender(p) as app:
        app.append({"k": 3})
    assert p.read_text(encoding="utf-8") == '{"k":1}\n{"k":2}\n{"k":3}\n'


def test_appender_syncs_to_disk_at_most_a_second_after_an_append_and_on_close(tmp_path, monkeypatch):
    """Every append reaches the operating system at once (a killed run loses nothing); the disk gets
    it at once when the last sync is a second old or more, else from a timer due a second after the
    last sync (unless a later append got there first), and at close."""
    synced = []
    monkeypatch.setattr(ibio.os, "fsync", lambda fd: synced.append(now[0]))
    now = [100.0]
    timers = []

    class Due:
        def __init__(self, delay, fn):
            self.delay, self.fn, self.cancelled = delay, fn, False
            timers.append(self)

        def cancel(self):
            self.cancelled = True

    p = tmp_path / "out.jsonl"
    with JsonlAppender(p, clock=lambda: now[0], schedule=Due) as app:
        app.append({"k": 1})
        assert p.read_text(encoding="utf-8") == '{"k":1}\n' and synced == []  # written, not synced yet
        assert [t.delay for t in timers] == [1.0]  # a second after the last sync (the opening)
        now[0] = 100.5
        app.append({"k": 2})
        assert len(timers) == 1 and synced == []  # one timer is due already
        now[0] = 101.0
        timers[0].fn()  # the timer, on its thread
        assert synced == [101.0]
        now[0] = 101.2
        app.append({"k": 3})
        assert timers[1].delay == pytest.approx(0.8)
        now[0] = 102.5
        app.append({"k": 4})  # the last sync over a second ago: synced at once
        assert synced == [101.0, 102.5]
        timers[1].fn()  # nothing left to sync
        app.append_many([])  # nothing appended: nothing to sync, no timer
        assert synced == [101.0, 102.5] and len(timers) == 2
        now[0] = 102.7
        app.append({"k": 5})
    assert timers[2].cancelled and synced == [101.0, 102.5, 102.7]  # {"k": 5} at close, its timer cancelled
    timers[2].fn()  # a timer that fires after close does nothing
    with JsonlAppender(p, clock=lambda: now[0], schedule=Due):
        pass
    assert synced == [101.0, 102.5, 102.7]  # nothing appended, nothing synced
    assert p.read_text(encoding="utf-8").count("\n") == 5


def test_appender_timer_syncs_on_its_own_thread(tmp_path, monkeypatch):
    """The default timer is a real thread: an append left unsynced reaches the disk with no later append."""
    import threading

    done = threading.Event()
    real_fsync = ibio.os.fsync

    def fsync(fd):
        real_fsync(fd)
        done.set()

    monkeypatch.setattr(ibio.os, "fsync", fsync)
    ticks = iter([0.0, 0.999])  # opened at 0, appended at 0.999: the sync is due in a millisecond
    with JsonlAppender(tmp_path / "out.jsonl", clock=lambda: next(ticks, 1.0)) as app:
        app.append({"k": 1})
        assert done.wait(30), "the timer never synced"


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1), st.text(max_size=20))


@settings(max_examples=60, deadline=None)
@given(extra=st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in Session.model_fields), json_scalars, max_size=4),
       text=st.text(max_size=40))
def test_write_then_read_is_identity(tmp_path_factory, extra, text):
    """Property: any valid session with any unknown fields survives write_jsonl -> read unchanged."""
    s = session()
    s.update(extra)
    s["turns"][1]["text"] = text
    p = tmp_path_factory.mktemp("rt") / "s.jsonl"
    write_jsonl(p, [s])
    assert [x.dump() for x in iter_sessions(p)] == [s]
    assert p.read_text(encoding="utf-8") == dumps_line(s) + "\n"


def test_case_files_from_elsewhere_may_use_their_own_tags(tmp_path):
    from interleave_bench.io import read_case_file
    from interleave_bench.schema import MID_REPLY_TAGS

    data = {
        "about": "x",
        "catalogs": {"en": [{"id": "trip", "title": "Lisbon trip"}, {"id": "deck", "title": "Sales deck"}]},
        "cases": [{"id": "c1", "lang": "en", "running": {"topicId": "deck", "request": "make slides"},
                   "how": "queued", "text": "book the hotel", "expect": "trip", "tags": ["their-own-tag"]}],
    }
    p = tmp_path / "cases.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    assert read_case_file(p).cases[0].tags == ["their-own-tag"]
    with pytest.raises(InputError) as exc:
        read_case_file(p, known_tags=MID_REPLY_TAGS)
    assert "cases[0] (id 'c1').tags[0]: 'their-own-tag' is not one of" in str(exc.value)


def test_numbers_and_flags_are_not_coerced(tmp_path):
    s = session()
    s["turns"][1]["ambiguous"] = "yes"
    s["turns"][2]["i"] = "2"
    p = write_lines(tmp_path / "s.jsonl", [json.dumps(s)])
    with pytest.raises(InputErrors) as exc:
        read_sessions(p)
    got = {(e.field, e.message) for e in exc.value.errors}
    assert got == {("turns[1].ambiguous", "expected true or false, got 'yes'"),
                   ("turns[2].i", "expected an integer, got '2'")}
    rows = write_lines(tmp_path / "p.jsonl", [json.dumps({"session_id": "a", "i": 1.0, "pred": "t1", "usage": {"input": "7"}})])
    with pytest.raises(InputErrors) as exc:
        read_predictions(rows)
    assert {e.field for e in exc.value.errors} == {"i", "usage.input"}


def test_a_gap_in_turn_numbers_is_one_error(tmp_path):
    s = session()
    del s["turns"][1]
    p = write_lines(tmp_path / "s.jsonl", [json.dumps(s)])
    with pytest.raises(InputError) as exc:
        read_sessions(p)
    assert str(exc.value) == f"{p}:1: turns[1].i: expected 1 (turns run 0..n-1 in order), got 2"


def test_duplicate_id_found_even_when_its_first_line_is_bad(tmp_path, capsys):
    a = session("dup")
    a["turns"][0]["gold"]["action"] = "swich"
    b = session("dup")
    p = write_lines(tmp_path / "s.jsonl", [json.dumps(a), json.dumps(session("ok")), json.dumps(b)])
    assert main(["validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert f"{p}:1: turns[0].gold.action:" in err
    assert f"{p}:3: session_id: duplicate session id 'dup' (first on line 1)" in err


def test_empty_file_is_an_error(tmp_path, capsys):
    p = write_lines(tmp_path / "sessions.jsonl", [])
    assert main(["validate", str(p)]) == 2
    assert f"{p}: no records: the file is empty" in capsys.readouterr().err


def test_appender_in_a_forked_child_schedules_its_own_sync(tmp_path, monkeypatch):
    """A child forked while the parent's sync was due has no timer of the parent's: its appends
    leave a sync due of their own."""
    timers = []

    class Due:
        def __init__(self, delay, fn):
            timers.append(fn)

        def cancel(self):
            pass

    now = [0.0]
    with JsonlAppender(tmp_path / "out.jsonl", clock=lambda: now[0], schedule=Due) as app:
        now[0] = 0.5
        app.append({"k": 1})
        assert len(timers) == 1
        monkeypatch.setattr(ibio.os, "getpid", lambda: -1)  # as in a forked child
        app.append({"k": 2})
        assert len(timers) == 2


def test_a_thread_named_new_is_refused_naming_the_line_and_thread(tmp_path, capsys):
    """A model router reads a topic answer ``new`` as a new topic: a thread of that id could never be
    routed to, so validate refuses it as it refuses ``ERROR`` or ``none``."""
    s = json.loads(json.dumps(session("en-0002")).replace('"t2"', '"new"'))
    p = write_lines(tmp_path / "sessions.jsonl", [json.dumps(session()), json.dumps(s)])
    assert main(["validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (f"error: {p}:2: threads[1].id: 'new' is reserved and cannot be a thread id "
                                   "(a model router reads an answer 'new' as a new topic)"), err


def test_a_json_document_validate_does_not_check_is_named_by_its_kind(tmp_path, capsys):
    """A score file given as data was called "not a mid-reply case file or manifest"; it is named
    for what it is, with what validate checks."""
    checks = ("validate checks sessions and predictions (JSON Lines), manifests (with 'writer') and mid-reply case "
              "files (with 'cases')")
    docs = {"x.score.json": ({"format": "interleave-score-v1", "system": "x"}, "a score document (interleave-score-v1)"),
            "x.run.json": ({"format": "interleave-run-v1"}, "a run record (interleave-run-v1)"),
            "f.score.json": ({"format": 1, "kind": "facts"}, "a facts summary"),
            "other.json": ({"format": "someone-else-v2"}, "a JSON document (someone-else-v2)"),
            "list.json": ([1, 2], "a JSON document")}
    for name, (doc, words) in docs.items():
        path = tmp_path / name
        path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        assert main(["validate", str(path)]) == 2
        out, err = capsys.readouterr()
        assert (out, err.splitlines()) == ("", [f"error: {path}: {words}: {checks}", f"{path}: 1 error"])
