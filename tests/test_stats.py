"""``interleave-bench stats``: the realism profile, on hand-made files whose figures are computed by hand."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.cli import main
from interleave_bench.generate.stats import opening, profile
from interleave_bench.io import read_sessions
from interleave_bench.score.routing import ambiguous_share


def _turn(i, text, thread, action, style, judge=None, ambiguous=False):
    return {"i": i, "text": text, "gold": {"thread": thread, "action": action}, "style": style,
            "judge": {"thread": judge or thread or "none"} if judge != "ambiguous" else
            {"thread": "ambiguous", "candidates": ["t1", "t2"]}, "ambiguous": ambiguous}


EN = {
    "session_id": "en-0001", "version": "interleave-v0", "split": "dev", "lang": "en",
    "threads": [{"id": "t1", "title": "Garden shed", "domain": "home"},
                {"id": "t2", "title": "Garden path", "domain": "home", "twinOf": "t1"}],
    "turns": [
        _turn(0, "Garden shed: what wood?", "t1", "new", "explicit"),            # 23 chars, title
        _turn(1, "the shed roof leaks, help", "t1", "continue", "explicit"),     # 25 chars, no title
        _turn(2, "ok and then", "t1", "continue", "implicit"),                   # 11 chars
        _turn(3, "Capital of Peru?", None, "oneoff", "oneoff"),                  # 16 chars
        _turn(4, "OK and then: that one", "t2", "switch", "pronoun", "ambiguous", True),  # 21 chars
    ],
}
ZH = {
    "session_id": "zh-0002", "version": "interleave-v0", "split": "dev", "lang": "zh",
    "threads": [{"id": "t1", "title": "读书会", "domain": "events"}],
    "turns": [
        _turn(0, "读书会：选哪本书？", "t1", "new", "explicit"),  # 9 chars, title
        _turn(1, "好的继续", "t1", "continue", "implicit"),       # 4 chars
    ],
}


def _write(path, *sessions):
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in sessions), encoding="utf-8")
    return path


def test_profile_figures_computed_by_hand(tmp_path):
    p = profile(read_sessions(_write(tmp_path / "s.jsonl", EN, ZH)))
    assert p["sessions"] == 2 and p["messages"] == 7
    assert p["threads_per_session"] == 1.5 and p["twin_sessions"] == 1
    assert p["actions"] == {"new": 2, "continue": 3, "switch": 1, "return": 0, "oneoff": 1}
    assert p["ambiguous_share"] == round(1 / 6, 4)  # one of six thread messages; the one-off does not count
    en, zh = p["langs"]["en"], p["langs"]["zh"]
    assert en["title_share"] == 0.5  # "Garden shed: ..." yes, "the shed roof ..." no
    assert en["distinct_openings"] == 0.8  # "ok and then" twice among five
    assert en["ambiguous_share"] == 0.25
    assert en["styles"] == {"explicit": {"messages": 2, "median_chars": 24.0},
                            "pronoun": {"messages": 1, "median_chars": 21.0},
                            "implicit": {"messages": 1, "median_chars": 11.0},
                            "oneoff": {"messages": 1, "median_chars": 16.0}}
    assert zh["title_share"] == 1.0 and zh["distinct_openings"] == 1.0 and zh["ambiguous_share"] == 0.0
    assert zh["styles"]["explicit"]["median_chars"] == 9.0


def test_opening_is_three_lower_cased_tokens_cjk_by_character():
    assert opening("Sticking with the dashboard, ok?") == ("sticking", "with", "the")
    assert opening("Don't  forget: it") == ("don't", "forget", "it")
    assert opening("读书会那边") == ("读", "书", "会")
    assert opening("ok，读书") == ("ok", "读", "书")
    assert opening("…") == ()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=12))
def test_shares_are_shares(texts):
    turns = [_turn(i, t, "t1", "new" if i == 0 else "continue", "explicit") for i, t in enumerate(texts)]
    session = {**EN, "threads": EN["threads"][:1], "turns": turns}
    from interleave_bench.schema import Session
    p = profile([Session.model_validate(session)])
    en = p["langs"]["en"]
    assert 0 < en["distinct_openings"] <= 1 and 0 <= en["title_share"] <= 1
    assert en["distinct_openings"] == round(len({opening(t) for t in texts}) / len(texts), 4)


def test_stats_command_side_by_side_and_json(tmp_path, capsys):
    a = _write(tmp_path / "a.jsonl", EN, ZH)
    b = _write(tmp_path / "b.jsonl", EN)
    assert main(["stats", str(a), str(b)]) == 0
    out, err = capsys.readouterr()
    assert f"| figure | {a} | {b} |" in out
    assert "| en explicit with title verbatim | 50.0% | 50.0% |" in out
    assert "| zh messages | 2 | – |" in out
    assert "| en explicit: messages / median chars | 2 / 24 | 2 / 24 |" in out
    assert err.strip().splitlines()[-1].startswith("done: stats: 2 data sets, 3 sessions, 12 messages")
    assert "done:" not in out  # `stats A B > profile.md` keeps the summary out of the file
    assert main(["stats", str(a), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "interleave-stats-v1" and doc["data"][0]["langs"]["en"]["distinct_openings"] == 0.8


def test_validate_stats_and_score_give_one_ambiguous_share(tmp_path, capsys):
    """By hand: EN has 5 messages, a one-off among them; ZH 2. A one-off the independent reading
    also disputes is marked ambiguous, but is no thread message: 1 of 6 thread messages, 16.7%,
    not the 2 of 7 messages (28.6%) validate used to print."""
    en = json.loads(json.dumps(EN))
    en["turns"][3].update(judge={"thread": "t1"}, ambiguous=True)  # the one-off, read as t1's
    path = _write(tmp_path / "sessions.jsonl", en, ZH)
    assert main(["validate", str(path)]) == 0
    said = capsys.readouterr().out
    assert f"{path}: ok: 2 sessions (en 1, zh 1), 7 messages, ambiguous share 16.7% (1 of 6 thread messages), " in said
    assert main(["stats", str(path)]) == 0
    assert "| ambiguous share | 16.7% |" in capsys.readouterr().out
    assert profile(read_sessions(path))["ambiguous_share"] == ambiguous_share(1, 6) == round(1 / 6, 4)
    assert ambiguous_share(0, 0) is None  # no thread message: nothing to share, never 0.0
    pred = _write(tmp_path / "closed-oracle.jsonl", *({"session_id": s["session_id"], "i": t["i"],
                                                       "pred": t["gold"]["thread"] or "CLARIFY"}
                                                      for s in (en, ZH) for t in s["turns"]))
    assert main(["score", str(path), str(pred), "--json", "--bootstrap", "0"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["metrics"]["ambiguous_share"] == round(1 / 6, 4)
    assert (doc["counts"]["ambiguous"], doc["counts"]["thread_messages"]) == (1, 6)


def test_stats_bad_input_is_one_line_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**EN, "turns": [{**EN["turns"][0], "style": "loud"}]}) + "\n", encoding="utf-8")
    assert main(["stats", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.jsonl" in err[0] and "style" in err[0]
    assert main(["stats", str(tmp_path / "missing")]) == 2
