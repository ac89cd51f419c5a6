"""The packaged mid-reply cases: valid, within the issue's minimums, and read with clear errors."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from interleave_bench.errors import InputErrors
from interleave_bench.midreply.cases import expect_kind, load_cases, packaged_cases_path
from interleave_bench.text import is_bare_ack
from interleave_bench.schema import MID_REPLY_TAGS

from _midreply_util import run_cli

#: the issue's minimums
MIN_CASES = 40
MIN_PER_LANGUAGE = 15
CATALOG_SIZE = (3, 5)
#: kinds of difficulty the issue asks the set to cover
REQUIRED_TAGS = {"steer", "cancel", "fragment", "pivot", "other-topic", "new-matter", "ack", "mention-trap",
                 "btw-trap", "correction"}


@pytest.fixture(scope="module")
def shipped():
    return load_cases()


def test_validate_accepts_the_packaged_file(capsys):
    with packaged_cases_path() as path:
        code, out, err = run_cli(capsys, "validate", str(path))
    assert code == 0, err
    assert "ok" in out and "60 mid-reply cases" in out


def test_every_expect_names_running_new_or_a_topic_of_its_language(shipped):
    for c in shipped.cases:
        ids = {t.id for t in shipped.catalogs[c.lang]}
        assert c.running.topicId in ids, c.id
        assert c.expect in {"running", "new"} | (ids - {c.running.topicId}), c.id


def test_counts_meet_the_minimums(shipped):
    cases = shipped.cases
    assert len(cases) >= MIN_CASES
    langs = Counter(c.lang for c in cases)
    assert langs["en"] >= MIN_PER_LANGUAGE and langs["zh"] >= MIN_PER_LANGUAGE
    for lang in ("en", "zh"):
        mine = [c for c in cases if c.lang == lang]
        assert {c.how for c in mine} == {"interjection", "queued"}, lang
        assert {expect_kind(c.expect) for c in mine} == {"running", "topic", "new"}, lang
        assert CATALOG_SIZE[0] <= len(shipped.catalogs[lang]) <= CATALOG_SIZE[1]
        # every catalog topic is fully described (the classifier sees all of it)
        for t in shipped.catalogs[lang]:
            assert t.title and t.summary and t.entities and t.keywords and t.lastState, t.id


def test_how_does_not_give_the_answer_away(shipped):
    # each way of sending has cases on both sides, so "queued means elsewhere" is not a shortcut
    for how in ("interjection", "queued"):
        kinds = Counter(c.expect == "running" for c in shipped.cases if c.how == how)
        assert kinds[True] >= 10 and kinds[False] >= 10, (how, kinds)


def test_tags_are_from_the_fixed_list_and_cover_the_hard_kinds(shipped):
    used = Counter(t for c in shipped.cases for t in c.tags)
    assert set(used) <= set(MID_REPLY_TAGS)
    assert REQUIRED_TAGS <= set(used)
    assert all(c.tags for c in shipped.cases)


def test_tags_agree_with_the_expectations(shipped):
    for c in shipped.cases:
        if "ack" in c.tags:
            assert is_bare_ack(c.text) and c.expect == "running", c.id
        else:
            assert not is_bare_ack(c.text), c.id
        if {"steer", "cancel", "correction", "fragment", "btw-trap", "follow-up"} & set(c.tags):
            assert c.expect == "running", c.id
        if {"other-topic", "pivot"} & set(c.tags):
            assert expect_kind(c.expect) == "topic", c.id
        if "new-matter" in c.tags:
            assert c.expect == "new", c.id


def test_texts_are_unique_and_case_ids_readable(shipped):
    texts = [c.text for c in shipped.cases]
    assert len(set(texts)) == len(texts)
    assert all(c.id.startswith(c.lang + "-") for c in shipped.cases)


def test_chinese_cases_are_written_in_chinese(shipped):
    for c in shipped.cases:
        if c.lang == "zh":
            han = sum("\u4e00" <= ch <= "\u9fff" for ch in c.text)
            assert han >= 1, c.id
            assert any("\u4e00" <= ch <= "\u9fff" for ch in c.running.request), c.id


def _broken(tmp_path, mutate):
    with packaged_cases_path() as path:
        data = json.loads(path.read_text(encoding="utf-8"))
    mutate(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return bad


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda d: d["cases"][3].update(expect="lisbon"),
         "cases[3] (id 'en-04').expect: 'lisbon' is not 'running', 'new' or a topic of the 'en' catalog"),
        (lambda d: d["cases"][5].pop("how"), "cases[5] (id 'en-06').how: required field is missing"),
        (lambda d: d["cases"][7].update(how="later"), "cases[7] (id 'en-08').how: 'later' is not one of interjection, queued"),
        (lambda d: d["cases"][40]["running"].update(topicId=5),
         "cases[40] (id 'zh-11').running.topicId: expected a string, got 5"),
        (lambda d: d["cases"][9].update(tags="steer"), "cases[9] (id 'en-10').tags: expected a list, got 'steer'"),
        (lambda d: d["cases"][12].update(expect="q3-review", running={**d["cases"][12]["running"], "topicId": "q3-review"}),
         "cases[12] (id 'en-13').expect: 'q3-review' is the running topic: write 'running'"),
    ],
)
def test_a_malformed_case_file_names_the_case_and_field(tmp_path, capsys, mutate, expected):
    bad = _broken(tmp_path, mutate)
    with pytest.raises(InputErrors) as info:
        load_cases(bad)
    assert expected in str(info.value)
    code, out, err = run_cli(capsys, "mid-reply", str(bad), "--rule-only", "--out", str(tmp_path / "r.jsonl"))
    assert code == 2
    assert out == ""
    assert f"error: {bad}: {expected}" in err
    assert "Traceback" not in err
    assert not (tmp_path / "r.jsonl").exists()


def test_not_json_and_missing_files_are_one_line_errors(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text('{"cases": [1, 2', encoding="utf-8")
    code, _, err = run_cli(capsys, "mid-reply", str(broken), "--rule-only", "--out", str(tmp_path / "r.jsonl"))
    assert code == 2 and err.startswith(f"error: {broken}:1: invalid JSON")
    code, _, err = run_cli(capsys, "mid-reply", str(tmp_path / "nope.json"), "--rule-only")
    assert code == 2 and err.strip() == f"error: {tmp_path / 'nope.json'}: no such file"
