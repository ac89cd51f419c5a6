"""Mid-reply metrics: a hand-computed set, invariants, the table, and the evaluate module."""

from __future__ import annotations

import doctest
import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.midreply.metrics import Item, mid_reply_scores, summarize
from interleave_bench.midreply.report import cell, markdown_table

REPO = Path(__file__).resolve().parents[1]
METRIC_DIR = REPO / "interleave_bench" / "metrics" / "interleave_mid_reply"

# (pred, expect, lang, how, tags)
HAND = [
    ("running", "running", "en", "interjection", ["ack"]),  # 1 right
    ("running", "running", "en", "queued", ["steer"]),  # 2 right
    ("trip", "running", "en", "interjection", ["steer", "mention-trap"]),  # 3 split off
    ("running", "trip", "zh", "queued", ["other-topic"]),  # 4 mixed in
    ("trip", "trip", "zh", "interjection", ["other-topic"]),  # 5 right
    ("deck", "new", "zh", "queued", ["new-matter"]),  # 6 right side, wrong place
    ("new", "new", "en", "queued", ["new-matter"]),  # 7 right
    ("running", "new", "en", "interjection", ["new-matter", "mention-trap"]),  # 8 mixed in
]


def _scores(rows=HAND):
    preds, refs, langs, hows, tags = (list(x) for x in zip(*rows))
    return mid_reply_scores(preds, refs, lang=langs, how=hows, tags=tags)


def test_hand_computed_headline():
    s = _scores()
    # 8 cases; belong with the running work: 1, 2, 3 (3); belong elsewhere: 4..8 (5)
    assert (s["n"], s["n_running"], s["n_elsewhere"]) == (8, 3, 5)
    # exact: 1, 2, 5, 7 -> 4/8
    assert s["accuracy"] == {"value": 0.5, "k": 4, "n": 8, "ci95": [0.2152, 0.7848]}
    # Wilson for 4/8, z = 1.96: centre 0.5; half = z*sqrt(.25/8 + z^2/256) / (1 + z^2/8)
    #   = 1.96 * sqrt(0.03125 + 0.015006) / 1.48018 = 0.42153 / 1.48018 = 0.2848 -> [0.2152, 0.7848]
    # right side: all but 3 (sent away, belongs), 4 and 8 (kept, belong elsewhere) -> 5/8
    assert (s["right_side"]["k"], s["right_side"]["n"], s["right_side"]["value"]) == (5, 8, 0.625)
    # mixed in: of 4..8, kept: 4 and 8 -> 2/5
    assert (s["mixed_in"]["k"], s["mixed_in"]["n"], s["mixed_in"]["value"]) == (2, 5, 0.4)
    # split off: of 1..3, sent elsewhere: 3 -> 1/3
    assert (s["split_off"]["k"], s["split_off"]["n"], s["split_off"]["value"]) == (1, 3, 0.3333)
    # wrong elsewhere: of 4..8, sent elsewhere but to the wrong place: 6 -> 1/5
    assert (s["wrong_elsewhere"]["k"], s["wrong_elsewhere"]["n"], s["wrong_elsewhere"]["value"]) == (1, 5, 0.2)


def test_hand_computed_breakdowns():
    s = _scores()
    en, zh = s["by_lang"]["en"], s["by_lang"]["zh"]
    # en: 1, 2, 3, 7, 8 -> exact 1, 2, 7 = 3/5; elsewhere 7, 8 -> kept 8 = 1/2; running 1..3 -> 3 = 1/3
    assert (en["accuracy"]["k"], en["accuracy"]["n"]) == (3, 5)
    assert (en["mixed_in"]["k"], en["mixed_in"]["n"]) == (1, 2)
    assert (en["split_off"]["k"], en["split_off"]["n"]) == (1, 3)
    # zh: 4, 5, 6 -> exact 5 = 1/3; no case belongs with the running work, so split off is undefined
    assert (zh["accuracy"]["k"], zh["accuracy"]["n"]) == (1, 3)
    assert zh["split_off"] == {"value": None, "k": 0, "n": 0, "ci95": None}
    # how: interjection 1, 3, 5, 8 -> exact 1, 5 = 2/4; queued 2, 4, 6, 7 -> exact 2, 7 = 2/4
    assert [s["by_how"][h]["accuracy"]["value"] for h in ("interjection", "queued")] == [0.5, 0.5]
    # tag mention-trap: 3 (split off) and 8 (mixed in) -> exact 0/2, mixed 1/1, split 1/1
    mt = s["by_tag"]["mention-trap"]
    assert (mt["accuracy"]["k"], mt["mixed_in"]["k"], mt["mixed_in"]["n"], mt["split_off"]["k"]) == (0, 1, 1, 1)
    # a case counts under each of its tags: new-matter is 6, 7, 8
    assert s["by_tag"]["new-matter"]["n"] == 3
    # expect kinds: running 1..3 (2/3 exact), topic 4, 5 (1/2), new 6..8 (1/3; wrong elsewhere 6)
    assert list(s["by_expect"]) == ["running", "topic", "new"]
    assert [s["by_expect"][k]["accuracy"]["k"] for k in ("running", "topic", "new")] == [2, 1, 1]
    assert s["by_expect"]["new"]["wrong_elsewhere"]["k"] == 1


def test_a_destination_naming_the_running_topic_counts_as_running():
    s = mid_reply_scores(["deck", "trip"], ["running", "deck"], running=["deck", "deck"])
    # case 1: "deck" is the running topic -> kept, right; case 2: reference "deck" is running -> split off
    assert s["accuracy"]["k"] == 1 and s["split_off"]["k"] == 1 and s["n_running"] == 2


def test_lists_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="references has 1 entries but predictions has 2"):
        mid_reply_scores(["running", "new"], ["running"])
    with pytest.raises(ValueError, match="lang has 2 entries but predictions has 1"):
        mid_reply_scores(["running"], ["running"], lang=["en", "zh"])


def test_no_cases_gives_undefined_rates():
    s = mid_reply_scores([], [])
    assert s["n"] == 0 and s["accuracy"]["value"] is None and s["by_lang"] == {}


destinations = st.sampled_from(["running", "running", "a", "b", "new"])
items = st.lists(
    st.builds(Item, destinations, destinations, st.sampled_from(["en", "zh"]), st.sampled_from(["interjection", "queued"]),
              st.lists(st.sampled_from(["steer", "ack", "pivot"]), max_size=2, unique=True).map(tuple)),
    max_size=30,
)


@settings(max_examples=80, deadline=None)
@given(items)
def test_the_counts_partition_the_cases(its):
    s = summarize(its)
    n = s["n"]
    # every case is exactly one of: right side, mixed in, split off
    assert s["right_side"]["k"] + s["mixed_in"]["k"] + s["split_off"]["k"] == n
    # and exactly one of: exact, wrong elsewhere, mixed in, split off
    assert s["accuracy"]["k"] + s["wrong_elsewhere"]["k"] + s["mixed_in"]["k"] + s["split_off"]["k"] == n
    assert s["n_running"] + s["n_elsewhere"] == n
    assert sum(g["n"] for g in s["by_lang"].values()) == n
    assert sum(g["accuracy"]["k"] for g in s["by_how"].values()) == s["accuracy"]["k"]
    for r in ("accuracy", "right_side", "mixed_in", "split_off"):
        if s[r]["n"]:
            lo, hi = s[r]["ci95"]
            assert 0.0 <= lo <= s[r]["value"] <= hi <= 1.0


@settings(max_examples=60, deadline=None)
@given(items, st.randoms(use_true_random=False))
def test_order_does_not_matter(its, rnd):
    shuffled = list(its)
    rnd.shuffle(shuffled)
    assert summarize(shuffled) == summarize(its)


@settings(max_examples=60, deadline=None)
@given(items)
def test_perfect_and_stay_everywhere(its):
    perfect = summarize([Item(it.expect, it.expect, it.lang, it.how, it.tags) for it in its])
    if its:
        assert perfect["accuracy"]["value"] == 1.0 and perfect["right_side"]["value"] == 1.0
    assert perfect["mixed_in"]["k"] == 0 and perfect["split_off"]["k"] == 0
    stay = summarize([Item("running", it.expect, it.lang, it.how, it.tags) for it in its])
    # the rule-only baseline: never splits off, mixes in every case that belongs elsewhere
    assert stay["split_off"]["k"] == 0
    assert stay["mixed_in"]["k"] == stay["n_elsewhere"]
    assert stay["accuracy"]["k"] == stay["n_running"]


def test_table_cells_and_rows():
    s = _scores()
    table = markdown_table(s)
    lines = table.splitlines()
    assert lines[0] == "| group | n | accuracy | right side | mixed in | split off |"
    assert lines[2] == "| **all** | 8 | 50.0% [21.5–78.5] | 62.5% [30.6–86.3] | 40.0% (2/5) [11.8–76.9] | 33.3% (1/3) [6.1–79.2] |"
    # zh: exact 5 (1/3); right side 5 and 6 (2/3); mixed in 4 (1/3); no running case: split off undefined
    assert "| lang=zh | 3 | 33.3% [6.1–79.2] | 66.7% [20.8–93.9] | 33.3% (1/3) [6.1–79.2] | – |" in lines
    assert [line.split(" | ")[0] for line in lines[3:]] == [
        "| lang=en", "| lang=zh", "| how=interjection", "| how=queued", "| expect=running", "| expect=topic",
        "| expect=new", "| tag=ack", "| tag=mention-trap", "| tag=new-matter", "| tag=other-topic", "| tag=steer"]
    assert cell({"value": None, "k": 0, "n": 0, "ci95": None}) == "–"


# --- the evaluate module ---------------------------------------------------------------------------


@pytest.fixture
def evaluate_caches(tmp_path_factory, monkeypatch):
    """Point evaluate's module and metric caches into tmp (reusing the module folder already in use,
    if another test imported evaluate's dynamic modules before)."""
    import evaluate.config

    loaded = sys.modules.get("evaluate_modules")
    if loaded is not None and getattr(loaded, "__path__", None):
        modules = str(Path(list(loaded.__path__)[0]).parent)
    else:
        modules = str(tmp_path_factory.getbasetemp() / "hf_modules")
    monkeypatch.setattr(evaluate.config, "HF_MODULES_CACHE", modules)
    monkeypatch.setattr(evaluate.config, "HF_METRICS_CACHE", str(tmp_path_factory.mktemp("hf_metrics")))
    return modules


def test_evaluate_module_gives_the_same_numbers(evaluate_caches):
    import evaluate

    metric = evaluate.load(str(METRIC_DIR))
    preds, refs, langs, hows, tags = (list(x) for x in zip(*HAND))
    got = metric.compute(predictions=preds, references=refs, lang=langs, how=hows, tags=tags)
    assert got == _scores()
    assert got["mixed_in"]["value"] == 0.4


def test_evaluate_module_docstring_examples_run(evaluate_caches):
    spec = importlib.util.spec_from_file_location("interleave_mid_reply_doctest", METRIC_DIR / "interleave_mid_reply.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 6
    assert result.failed == 0


def test_evaluate_module_has_one_import_per_line_and_a_card():
    source = (METRIC_DIR / "interleave_mid_reply.py").read_text(encoding="utf-8")
    for line in source.splitlines():
        if line.startswith("import "):
            assert "," not in line, line
    card = (METRIC_DIR / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "\n---\n" in card[4:]
    assert "# Metric Card for InterleaveBench Mid-Reply" in card
