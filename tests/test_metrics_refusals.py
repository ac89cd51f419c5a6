"""The evaluate modules refuse inputs they cannot score in one ``ValueError`` line naming the input
and its index (NaN and infinite numbers, a list where one value belongs, lengths that differ, a row
without a field it needs, a non-text gold action), through ``evaluate.load`` as a user calls them;
and B-cubed of no items is undefined, as the routing module gives for no messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_midreply_metrics import evaluate_caches  # noqa: F401 - the fixture

METRICS = Path(__file__).resolve().parents[1] / "interleave_bench" / "metrics"

NAN, INF = float("nan"), float("inf")
GOLD = [{"gold": {"thread": "t1", "action": "new"}}, {"gold": {"thread": "t2", "action": "new"}},
        {"gold": {"thread": "t1", "action": "switch"}}, {"gold": {"thread": None, "action": "oneoff"}}]
LABELS = [["t1", "t2", "t1", "t1"]]
NOT_JSON = "is not a JSON number (NaN and Infinity are refused)"
#: a lone surrogate, and what the data's check says of one (an evaluate input once raised the
#: encoder's UnicodeEncodeError, naming neither the argument nor its index)
LONE = "\ud800"
NOT_UNICODE = "a lone surrogate (\\ud800-\\udfff) is not Unicode text"
#: what a per-session input is, and what B-cubed asks of two inputs given in different forms
PER_SESSION = "(labels, or gold turns such as load_dataset(...)['dev']['turns'])"
BOTH = "give both one list per session, or both one label per item"


def gold(first: dict) -> list[list[dict]]:
    """The references with their first turn replaced."""
    return [[first, *GOLD[1:]]]


def answer(**extra) -> str:
    row = {"kind": "answer", "session_id": "s1", "probe": "p1", "strategy": "facts", "category": "stale",
           "lang": "en", "verdict": "correct"}
    return json.dumps({**row, **extra})


ROUTING = [
    ("a mode in capitals", dict(predictions=LABELS, references=[GOLD], mode="Closed"),
     "mode must be one of closed, open, got 'Closed'"),
    ("a NaN label", dict(predictions=[["t1", NAN, "t1", "t1"]], references=[GOLD]), f"predictions[0][1]: nan {NOT_JSON}"),
    ("an infinite label", dict(predictions=[["t1", "t2", INF, "t1"]], references=[GOLD]),
     f"predictions[0][2]: inf {NOT_JSON}"),
    ("action True", dict(predictions=LABELS, references=gold({"gold": {"thread": "t1", "action": True}})),
     "references[0][0].gold.action: True is not one of new, continue, switch, return, oneoff"),
    ("action 1.5", dict(predictions=LABELS, references=gold({"gold": {"thread": "t1", "action": 1.5}})),
     "references[0][0].gold.action: 1.5 is not one of new, continue, switch, return, oneoff"),
    ("gold a text", dict(predictions=LABELS, references=gold({"gold": "t1"})),
     "references[0][0].gold: expected an object, got str 't1'"),
    ("a NaN turn number", dict(predictions=LABELS, references=gold({"i": NAN, "gold": {"thread": "t1", "action": "new"}})),
     f"references[0][0].i: nan {NOT_JSON}"),
    ("tags a text", dict(predictions=LABELS, references=gold({"gold": {"thread": "t1", "action": "new"}, "tags": "cue"})),
     "references[0][0].tags: expected a list, got 'cue'"),
    # a falsy text or style is no missing one: refused by the check, never evaluate's format dump or a default
    ("text a number", dict(predictions=LABELS, references=gold({"gold": {"thread": "t1", "action": "new"}, "text": 0})),
     "references[0][0].text: expected a string, got 0"),
    ("text False", dict(predictions=LABELS, references=gold({"gold": {"thread": "t1", "action": "new"}, "text": False})),
     "references[0][0].text: expected a string, got False"),
    ("style empty", dict(predictions=LABELS, references=gold({"gold": {"thread": "t1", "action": "new"}, "style": ""})),
     "references[0][0].style: '' is not one of explicit, cue, pronoun, implicit, oneoff"),
    ("a NaN latency", dict(predictions=LABELS, references=[GOLD], elapsed_ms=[[NAN, 1, 1, 1]]),
     f"elapsed_ms[0][0]: nan {NOT_JSON}"),
    ("a list for a latency", dict(predictions=LABELS, references=[GOLD], elapsed_ms=[[1, [2], 1, 1]]),
     "elapsed_ms[0][1]: expected a number, got list"),
    ("fewer latencies than messages", dict(predictions=LABELS, references=[GOLD], elapsed_ms=[[1, 1]]),
     "elapsed_ms[0]: 2 entries, but session 0 has 4 messages"),
    ("more latencies than messages", dict(predictions=LABELS, references=[GOLD], elapsed_ms=[[1, 1, 1, 1, 1]]),
     "elapsed_ms[0]: 5 entries, but session 0 has 4 messages"),
    ("an infinite token count", dict(predictions=LABELS, references=[GOLD], usage=[[None, {"input": INF}, None, None]]),
     f"usage[0][1].input: inf {NOT_JSON}"),
    ("usage a number", dict(predictions=LABELS, references=[GOLD], usage=[[5, None, None, None]]),
     "usage[0][0]: expected an object, got 5"),
    ("via a list", dict(predictions=LABELS, references=[GOLD], via=[[None, None, ["llm"], None]]),
     "via[0][2]: expected a string, got list"),
    ("refs a text", dict(predictions=LABELS, references=[GOLD], predicted_refs=[["t2", None, None, None]]),
     "predicted_refs[0][0]: expected a list, got 't2'"),
    ("fewer refs than messages", dict(predictions=LABELS, references=[GOLD], predicted_refs=[[None]]),
     "predicted_refs[0]: 1 entries, but session 0 has 4 messages (one list of topic labels, or None, per message)"),
    ("a thread row without an id", dict(predictions=LABELS, references=[GOLD], threads=[[{"title": "t"}]]),
     "threads[0][0]: a thread row has no id"),
    ("threads not per session", dict(predictions=LABELS, references=[GOLD], threads=["t1"]),
     "threads[0]: one list of thread ids (or thread rows) per session, got str 't1'"),
    ("a NaN language", dict(predictions=LABELS, references=[GOLD], langs=[NAN]), f"langs[0]: nan {NOT_JSON}"),
    ("a label outside 64 bits", dict(predictions=[["t1", 10**40, "t1", "t1"]], references=[GOLD], mode="open"),
     "predictions[0][1]: the integer 10000000000000000000... (41 characters) is outside 64 bits"),
    ("one session id twice", dict(predictions=LABELS * 2, references=[GOLD, GOLD], session_ids=["a", "a"]),
     "session_ids[1]: 'a' is the id of session 0 too: each session needs its own id"),
    ("a lone surrogate label", dict(predictions=[["t1", LONE, "t1", "t1"]], references=[GOLD]),
     f"predictions[0][1]: {NOT_UNICODE}"),
    ("a lone surrogate label in open mode", dict(predictions=[[LONE + "x", "b", "a", "a"]], references=[GOLD], mode="open"),
     f"predictions[0][0]: {NOT_UNICODE}"),
    ("a lone surrogate ref", dict(predictions=LABELS, references=[GOLD], predicted_refs=[[[LONE], None, None, None]]),
     f"predicted_refs[0][0][0]: {NOT_UNICODE}"),
    # what B-cubed takes unread is checked all the same: it once scored with each of these
    ("a number for a language", dict(predictions=LABELS, references=[GOLD], langs=[3]), "langs[0]: expected a string, got 3"),
    ("session ids a text", dict(predictions=LABELS, references=[GOLD], session_ids="s1"),
     "session_ids: expected a list, got str 's1'"),
    ("usage a text", dict(predictions=LABELS, references=[GOLD], usage="x"), "usage: expected a list, got str 'x'"),
    ("via numbers", dict(predictions=LABELS, references=[GOLD], via=[[1, 2, 3, 4]]), "via[0][0]: expected a string, got 1"),
    ("latencies of no session", dict(predictions=[], references=[], elapsed_ms=[[NAN, 1, 1]]),
     "elapsed_ms must hold one list per session (0), one entry per message"),
]

PER_ITEM = [
    ("interleave_bcubed", "a NaN label", dict(predictions=[NAN, 1], references=[1, 2]),
     f"predictions[0]: a cluster label is text or an integer, nan {NOT_JSON}"),
    ("interleave_bcubed", "an infinite label", dict(predictions=[1, 2], references=[float("inf"), 2]),
     f"references[0]: a cluster label is text or an integer, inf {NOT_JSON}"),
    ("interleave_bcubed", "a list for a label", dict(predictions=[["x"], "y"], references=["a", "b"]),
     "predictions[0]: a cluster label is text or an integer, got list ['x']"),
    ("interleave_bcubed", "a label outside 64 bits", dict(predictions=[10**40, "b"], references=["a", "b"]),
     "predictions[0]: a cluster label is text or an integer, the integer 10000000000000000000... (41 characters) "
     "is outside 64 bits"),
    ("interleave_bcubed", "an empty reference label", dict(predictions=["x", "y"], references=["", "b"]),
     "references[0]: String should have at least 1 character (got '')"),
    ("interleave_bcubed", "an empty prediction", dict(predictions=["x", ""], references=["a", "b"]),
     "predictions[1]: String should have at least 1 character (got '')"),
    ("interleave_bcubed", "a reference of two lines", dict(predictions=["x", "y"], references=["a", "b\nc"]),
     "references[1]: 'b\\nc' holds a control character (an id is printed on one line)"),
    ("interleave_bcubed", "a NaN group", dict(predictions=["x", "y"], references=["a", "b"], groups=["g", NAN]),
     f"groups[1]: a group id is text or an integer, nan {NOT_JSON}"),
    ("interleave_bcubed", "a list for a group", dict(predictions=["x", "y"], references=["a", "b"], groups=[["g"], "g"]),
     "groups[0]: a group id is text or an integer, got list ['g']"),
    ("interleave_bcubed", "per session, action True",
     dict(predictions=LABELS, references=gold({"gold": {"thread": "t1", "action": True}})),
     "references[0][0].gold.action: True is not one of new, continue, switch, return, oneoff"),
    # one input per session and the other per item: one line, never evaluate's format dump
    ("interleave_bcubed", "per-session predictions, per-item references", dict(predictions=LABELS, references=["a"] * 4),
     f"interleave_bcubed: references must hold one list per session {PER_SESSION}; got a list holding str: {BOTH}"),
    ("interleave_bcubed", "per-item predictions, per-session references", dict(predictions=LABELS[0], references=[GOLD]),
     f"interleave_bcubed: predictions must hold one list per session {PER_SESSION}; got a list holding str: {BOTH}"),
    ("interleave_bcubed", "groups with per-session predictions",
     dict(predictions=LABELS, references=["a"] * 4, groups=["g"] * 4),
     f"interleave_bcubed: references must hold one list per session {PER_SESSION}; got a list holding str: {BOTH}"),
    # per item, B-cubed takes no per-session argument: one line, never a result that ignored it
    *[("interleave_bcubed", f"{name} with one label per item", dict(predictions=["x", "y"], references=["a", "b"], **{name: value}),
       f"interleave_bcubed: {name} applies to per-session inputs (one list of labels and one of gold turns per session); "
       "one label per item takes only groups and mode")
      for name, value in (("langs", [3]), ("session_ids", "s1"), ("usage", "x"), ("elapsed_ms", [[NAN, 1]]),
                          ("via", [[1, 2]]), ("threads", [["t1"]]), ("predicted_refs", [None, None]))],
    ("interleave_bcubed", "a mode in capitals with one label per item",
     dict(predictions=["x", "y"], references=["a", "b"], mode="Closed"), "mode must be one of closed, open, got 'Closed'"),
    ("interleave_mid_reply", "a NaN destination", dict(predictions=[NAN, "new"], references=["running", "running"]),
     f"predictions[0]: a destination (running, a topic id or new) is text or None, nan {NOT_JSON}"),
    ("interleave_mid_reply", "a list for a reference", dict(predictions=["new", "new"], references=["running", ["new"]]),
     "references[1]: a destination (running, a topic id or new) is text, got list ['new']"),
    ("interleave_mid_reply", "an empty reference", dict(predictions=["running", "new"], references=["", "new"]),
     "references[0]: String should have at least 1 character (got '')"),
    ("interleave_mid_reply", "a running row without its topic",
     dict(predictions=["new", "new"], references=["running", "new"], running=[{"request": ""}, {"request": ""}]),
     "running[0]: a running row has no topicId"),
    ("interleave_mid_reply", "a NaN running topic",
     dict(predictions=["new", "new"], references=["running", "new"], running=["q", NAN]),
     f"running[1]: a running topic id (or its running row) is text or None, nan {NOT_JSON}"),
    ("interleave_mid_reply", "a how of no index", dict(predictions=["new", "new"], references=["running", "new"], how=[0, 7]),
     "how[1]: one of interjection, queued (or its index), got int 7"),
    ("interleave_mid_reply", "tags a text", dict(predictions=["new", "new"], references=["running", "new"], tags=["abc", []]),
     "tags[0]: a list of tags or None, got str 'abc'"),
    ("interleave_mid_reply", "a language list", dict(predictions=["new", "new"], references=["running", "new"], lang=["en", ["zh"]]),
     "lang[1]: a language is text or None, got list ['zh']"),
    ("interleave_shared_facts", "a NaN count", dict(predictions=[answer(), answer(probe="p2", context_tokens=NAN)]),
     f"predictions[1].context_tokens: NaN {NOT_JSON}"),
    ("interleave_bcubed", "a lone surrogate prediction", dict(predictions=[LONE, "y"], references=["a", "b"]),
     f"predictions[0]: {NOT_UNICODE}"),
    ("interleave_bcubed", "a lone surrogate cluster", dict(predictions=["x", "y"], references=["a", LONE]),
     f"references[1]: {NOT_UNICODE}"),
    ("interleave_bcubed", "a lone surrogate group", dict(predictions=["x", "y"], references=["a", "b"], groups=["g", LONE]),
     f"groups[1]: {NOT_UNICODE}"),
    ("interleave_mid_reply", "a lone surrogate destination", dict(predictions=[LONE, "new"], references=["running", "new"]),
     f"predictions[0]: {NOT_UNICODE}"),
    ("interleave_mid_reply", "a lone surrogate expected destination", dict(predictions=["new", "new"], references=["running", LONE]),
     f"references[1]: {NOT_UNICODE}"),
    ("interleave_mid_reply", "a lone surrogate running topic",
     dict(predictions=["new", "new"], references=["running", "new"], running=["q", LONE]), f"running[1]: {NOT_UNICODE}"),
    ("interleave_shared_facts", "a lone surrogate row", dict(predictions=[answer(), LONE]), f"predictions[1]: {NOT_UNICODE}"),
    ("interleave_shared_facts", "an object for a row", dict(predictions=[{"kind": "answer"}]),
     "predictions[0]: a result row (one JSON object, as a line of facts/<model>.jsonl) is text, got dict {'kind': 'answer'}"),
]


@pytest.fixture
def load(evaluate_caches):  # noqa: F811
    import evaluate

    return lambda name: evaluate.load(str(METRICS / name))


@pytest.mark.parametrize("case, inputs, message", ROUTING, ids=[c[0] for c in ROUTING])
def test_the_routing_module_refuses_a_bad_input_in_one_line_naming_it(load, case, inputs, message):
    # bcubed takes the same per-session arguments and checks every one as routing does (one
    # definition: metric_inputs.score_sessions), though it reads none but labels, turns and threads
    for name in ("interleave_routing", "interleave_bcubed"):
        with pytest.raises(ValueError) as refused:
            load(name).compute(**inputs)
        assert str(refused.value) == message, name


@pytest.mark.parametrize("module, case, inputs, message", PER_ITEM, ids=[c[1] for c in PER_ITEM])
def test_the_per_item_modules_refuse_a_bad_input_in_one_line_naming_it(load, module, case, inputs, message):
    with pytest.raises(ValueError) as refused:
        load(module).compute(**inputs)
    assert str(refused.value) == message


def test_add_refuses_as_compute_does(load):
    routing = load("interleave_routing")
    with pytest.raises(ValueError, match=r"^references\[0\]\[0\]\.gold\.action: True is not one of "):
        routing.add(predictions=LABELS[0], references=gold({"gold": {"thread": "t1", "action": True}})[0])
    with pytest.raises(ValueError, match=r"^prediction: a cluster label is text or an integer, nan "):
        load("interleave_bcubed").add(prediction=NAN, reference=1)
    with pytest.raises(ValueError, match=r"^reference: String should have at least 1 character \(got ''\)$"):
        load("interleave_mid_reply").add(prediction="new", reference="")
    for mixed in (dict(prediction=LABELS[0], reference="a"), dict(prediction="a", reference=GOLD)):
        with pytest.raises(ValueError, match=r"^interleave_bcubed: \w+ must hold one list per session .*: give both "):
            load("interleave_bcubed").add(**mixed)
    for module in ("interleave_routing", "interleave_bcubed"):  # labels as add and add_batch take them
        with pytest.raises(ValueError, match=r"^predictions\[0\]\[1\]: a lone surrogate "):
            load(module).add(predictions=["t1", LONE, "t1", "t1"], references=GOLD)
        with pytest.raises(ValueError, match=r"^predictions\[0\]\[1\]: a lone surrogate "):
            load(module).add_batch(predictions=[["t1", LONE, "t1", "t1"]], references=[GOLD])


def test_the_mid_reply_module_and_a_case_file_refuse_an_empty_expect_in_the_same_words(load, tmp_path, capsys):
    """One definition of an expected destination (schema.MidReplyExpect): what the module says of an
    empty reference is what mid-reply says of a case whose expect is empty."""
    from interleave_bench.cli import main
    from interleave_bench.midreply.cases import packaged_cases_path

    with packaged_cases_path() as shipped:
        cases = json.loads(Path(shipped).read_text(encoding="utf-8"))
    cases["cases"][0]["expect"] = ""
    (tmp_path / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    assert main(["mid-reply", str(tmp_path / "cases.json"), "--dry-run", "--out", str(tmp_path / "r.jsonl")]) == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    with pytest.raises(ValueError) as refused:
        load("interleave_mid_reply").compute(predictions=["running"], references=[""])
    words = str(refused.value).split(": ", 1)[1]
    assert said.endswith(f".expect: {words}"), said


def test_bcubed_of_no_items_is_undefined_as_routing_of_no_messages_is(load):
    assert load("interleave_bcubed").compute(predictions=[], references=[]) == {"precision": None, "recall": None, "f1": None}
    routing = load("interleave_routing").compute(predictions=[], references=[])
    assert routing["bcubed_f1"] is None and routing["accuracy"] is None
    # an empty batch adds nothing: the items added before are scored as they are
    b3 = load("interleave_bcubed")
    b3.add_batch(predictions=["x", "x", "x"], references=["a", "a", "b"])
    b3.add_batch(predictions=[], references=[])
    assert b3.compute() == {"precision": 0.5556, "recall": 1.0, "f1": 0.7143}


def test_a_number_label_and_a_load_dataset_index_still_score(load):
    # an integer label is its text; a ClassLabel index (not a bool) is the action it names
    assert load("interleave_bcubed").compute(predictions=[1, 1], references=[7, 7]) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    indexed = gold({"gold": {"thread": "t1", "action": 0}})  # 0: "new"
    assert load("interleave_routing").compute(predictions=LABELS, references=indexed)["accuracy"] == 1.0


def test_bcubed_reads_an_integer_as_its_text_so_integers_and_texts_mix(load):
    """As a routing label is read: 1 and "1" are one cluster; integer predictions go with text references."""
    b3 = load("interleave_bcubed")
    # by hand: predictions {0,1} one cluster, references x, y apart: precision 1/2 each, recall 1 each
    assert b3.compute(predictions=[1, "1"], references=["x", "y"]) == {"precision": 0.5, "recall": 1.0, "f1": 0.6667}
    assert b3.compute(predictions=[0, 0, 1], references=["a", "a", "b"]) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    # by hand: clusters {1, "1"}, {2}; references one each: precision 1; recall 1, 1, 1
    assert b3.compute(predictions=[1, "1", 2], references=["a", "a", "b"]) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}


@pytest.mark.parametrize("argument, inputs, line", [
    # 1.0 == 1, but it would be read as "1.0", another cluster (recall 0.6667 for [1.0, 1, 2] against [1, 1, 2])
    ("predictions", dict(predictions=[1.0, 1, 2], references=[1, 1, 2]),
     "predictions[0]: a cluster label is text or an integer, got float 1.0"),
    ("references", dict(predictions=["x", "y"], references=["a", 2.5]),
     "references[1]: a cluster label is text or an integer, got float 2.5"),
    ("predictions", dict(predictions=[True, 1], references=[1, 1]),
     "predictions[0]: a cluster label is text or an integer, got bool True"),
    ("groups", dict(predictions=[1, 2], references=[1, 2], groups=["g", 1.0]),
     "groups[1]: a group id is text or an integer, got float 1.0"),
])
def test_bcubed_refuses_a_float_or_bool_label_naming_the_argument(load, argument, inputs, line):
    with pytest.raises(ValueError) as refused:
        load("interleave_bcubed").compute(**inputs)
    assert str(refused.value) == line and str(refused.value).startswith(argument)
    with pytest.raises(ValueError, match=r"^prediction: a cluster label is text or an integer, got float 1\.0$"):
        load("interleave_bcubed").add(prediction=1.0, reference=1)


def test_bcubed_of_no_items_is_none_each_as_its_card_says(load):
    from pathlib import Path

    import interleave_bench

    assert load("interleave_bcubed").compute(predictions=[], references=[]) == {"precision": None, "recall": None, "f1": None}
    card = (Path(interleave_bench.metric_path("interleave_bcubed")) / "README.md").read_text(encoding="utf-8")
    assert "`None` each for no items" in card and "0.0 for no items" not in card


def test_bcubed_reads_a_label_alike_per_item_and_per_session(load):
    """The same labels give the same clusters whether given one per item or one list per session."""
    b3 = load("interleave_bcubed")
    gold3 = [{"gold": {"thread": "t1", "action": a}} for a in ("new", "continue", "continue")]
    labels = [1, 2, "1"]
    assert b3.compute(predictions=labels, references=["t1"] * 3) == b3.compute(predictions=[labels], references=[gold3])


def test_own_topic_labels_in_closed_mode_are_refused_by_routing_and_scored_by_bcubed(load):
    own = [["a", "b", "a", "c"]]
    routing, bcubed = load("interleave_routing"), load("interleave_bcubed")
    with pytest.raises(ValueError) as refused:
        routing.compute(predictions=own, references=[GOLD])
    assert str(refused.value) == ("mode='closed' (the default) reads every label as a thread id, and none of the 4 "
                                  "labels names a thread of its session (first: 'a'): a system's own topic labels "
                                  "are scored with mode='open'")
    # open mode matches them to threads: a, b and a again are right (3 strict messages)
    assert routing.compute(predictions=own, references=[GOLD], mode="open")["accuracy"] == 1.0
    # B-cubed reads no label as a thread: the same figures in either mode
    assert bcubed.compute(predictions=own, references=[GOLD]) == bcubed.compute(predictions=own, references=[GOLD],
                                                                                mode="open")
    # one label naming a thread makes them closed-mode labels, scored, wrong ones and all; so are
    # labels that are all CLARIFY or ERROR
    assert routing.compute(predictions=[["t2", "x", "y", "CLARIFY"]], references=[GOLD])["accuracy"] == 0.0
    assert routing.compute(predictions=[["CLARIFY"] * 4], references=[GOLD])["accuracy"] == 0.0


def test_an_argument_a_module_does_not_take_is_one_line_naming_it(load):
    """evaluate hands every argument of compute to _compute, and evaluate.combine every module all of
    them: one the module does not take was a TypeError naming neither the module nor what it takes."""
    import evaluate

    routing, b3 = load("interleave_routing"), load("interleave_bcubed")
    takes = "predictions, references, mode, threads, session_ids, langs, predicted_refs, usage, elapsed_ms, via"
    with pytest.raises(ValueError) as refused:
        evaluate.combine([routing, b3]).compute(predictions=LABELS, references=[GOLD], groups=["s1"])
    assert str(refused.value) == (f"interleave_routing: no argument 'groups' (it takes {takes}): interleave_bcubed's "
                                  "groups apply to one label per item; per-session inputs are grouped by session")
    with pytest.raises(ValueError, match=r"^interleave_bcubed: no argument 'modes' \(it takes predictions, references, "
                                         r"groups, mode, "):
        b3.compute(predictions=[], references=[], modes="open")
    with pytest.raises(ValueError, match=r"^interleave_mid_reply: no argument 'langs' \(it takes predictions, "
                                         r"references, running, lang, how, tags\)$"):
        load("interleave_mid_reply").compute(predictions=["new"], references=["new"], langs=["en"])
    # what every module takes, combined, still scores
    both = evaluate.combine([routing, b3]).compute(predictions=LABELS, references=[GOLD], mode="open")
    assert both["bcubed_f1"] == both["f1"]


#: (module, argument, inputs): one bare value where a list belongs, never read letter by letter
NOT_LISTS = [
    ("interleave_mid_reply", "running", dict(predictions=["new", "running"], references=["running", "new"], running="q3")),
    ("interleave_mid_reply", "how", dict(predictions=["new", "running"], references=["running", "new"], how="queued")),
    ("interleave_mid_reply", "lang", dict(predictions=["new", "running"], references=["running", "new"], lang="en")),
    ("interleave_mid_reply", "tags", dict(predictions=["new", "running"], references=["running", "new"], tags="ab")),
    ("interleave_mid_reply", "predictions", dict(predictions="ne", references=["running", "new"])),
    ("interleave_routing", "langs", dict(predictions=LABELS, references=[GOLD], langs="e")),
    ("interleave_routing", "session_ids", dict(predictions=LABELS, references=[GOLD], session_ids="s")),
    ("interleave_routing", "via", dict(predictions=LABELS, references=[GOLD], via="l")),
    ("interleave_bcubed", "groups", dict(predictions=["a", "b"], references=["a", "b"], groups="gg")),
    ("interleave_bcubed", "predictions", dict(predictions="ab", references=["a", "b"])),
    ("interleave_shared_facts", "predictions", dict(predictions="abc")),
]


@pytest.mark.parametrize("module, argument, inputs", NOT_LISTS, ids=[f"{c[0]}-{c[1]}" for c in NOT_LISTS])
def test_a_text_where_a_list_belongs_is_refused_naming_the_argument(load, module, argument, inputs):
    with pytest.raises(ValueError) as refused:
        load(module).compute(**inputs)
    assert str(refused.value) == f"{argument}: expected a list, got str {inputs[argument]!r}"
