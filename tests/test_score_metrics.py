"""Every metric of docs/score.md#the-metrics-exactly on short sessions written for the purpose, computed by hand.

The hand computations are in the comments beside each fixture; the assertions compare the
scorer's numbers with them.
"""

from __future__ import annotations

import pytest

from interleave_bench.score import score_predictions
from interleave_bench.reports.tables import main_table
from interleave_bench.score.routing import score_session
from interleave_bench.schema import PredictionRow, Session

from _score_reference import match_labels
from _score_util import rows, session, turn

# --- closed mode: session c1 -------------------------------------------------------------------------
# Threads t1, t2, t3 (t3 is t1's twin). "S" is the seed each catalog topic starts with.
#
#  i  gold  amb judge      label    outcome (what the topic held before)      mapped ok
#  0  t1    .   t1         t1       correct (t1 holds t1)                      y
#  1  t1    .   t1         t1       correct                                    y
#  2  t2    .   t2         t2       correct                                    y
#  3  t2    A   t1         t1       wrong_existing (t1 holds t1; t2 seen)      n  lenient: judge t1 == t1 -> right
#  4  -     .   none       t2       oneoff_into_topic
#  5  t1    .   t1  ref t2 t1 r[t2] correct; refs hit                          y
#  6  t3    .   t3         t1       merged_new (t3 first seen, t1 holds t1)    n
#  7  t3    .   t3         CLARIFY  clarify                                    n
#  8  t2    .   t2  ref t3 (none)   error (no row); refs miss                  n
#  9  t3    A   ambiguous  t3       correct (t3 holds t3)                      y  (lenient right: mapped == gold)
# 10  -     .   none       new-q    oneoff_isolated (fresh label)
# 11  t2    .   t2         ERROR    error                                      n
# 12  t1    .   t1  ref t3 t1 r[t2] correct; refs miss                         y
# 13  t3    .   t3         n1       spurious_new (fresh label, closed mode)     n
# 14  t3    .   t3         n1       correct (n1 holds t3) but n1 maps nothing   n
# 15  t2    .   t2         t3       wrong_existing (t3 holds t3)               n
# 16  t1    A   none       t2       wrong_existing (t2 holds t2)               n  lenient: judge none -> wrong
#
# outcomes: correct 7 (0,1,2,5,9,12,14), wrong_existing 3 (3,15,16), merged_new 1, spurious_new 1,
#           clarify 1, error 2 (8,11), oneoff_isolated 1, oneoff_into_topic 1
# thread messages 15, ambiguous 3 (3,9,16), strict 12
# accuracy: right strict = 0,1,2,5,12 -> 5/12 = 0.4167
# lenient: right = 0,1,2,5,9,12 + 3 (judge) = 7/15 = 0.4667; ambiguous_share 1 - 12/15 = 0.2
# weighted error (strict): 6 merged 3 + 7 clarify 1 + 8 error 1 + 11 error 1 + 13 spurious 1
#                          + 15 wrong 3 = 10 / 12 = 0.8333
# one-offs: 1 into topic of 2 = 0.5
# switch, thread messages in order (gold/label), prev label skips CLARIFY/ERROR:
#   2 t2/t2 TP; 3 same gold, t1!=t2 FP; 5 t1/t1==t1 FN; 6 t3/t1 FN; 7 t3 same gold, special;
#   8 t2/ERROR FN; 9 t3/t3!=t1 TP; 11 t2/ERROR FN; 12 t1/t1!=t3 TP; 13 t3/n1 TP; 14 same/same;
#   15 t2/t3 TP; 16 t1/t2 TP -> TP 6, FP 1, FN 4: P 6/7 = 0.8571, R 6/10 = 0.6, F1 12/17 = 0.7059
# topics/thread: t1 {t1,t2} 2, t2 {t2,t1,t3} 3, t3 {t1,t3,n1} 3 -> 8/3 = 2.667
# threads/topic: t1 {t1,t2,t3} 3, t2 {t2,t1} 2, t3 {t3,t2} 2, n1 {t3} 1 -> 8/4 = 2.0
# B-cubed over the 12 thread messages with topic labels; cells (gold,label): (t1,t1) 4, (t2,t2) 1,
#   (t2,t1) 1, (t3,t1) 1, (t3,t3) 1, (t3,n1) 2, (t2,t3) 1, (t1,t2) 1; label sizes t1 6, t2 2, t3 2,
#   n1 2; thread sizes t1 5, t2 3, t3 4.
#   precision sum = 16/6 + 1/2 + 1/6 + 1/6 + 1/2 + 4/2 + 1/2 + 1/2 = 7 -> 7/12 = 0.5833
#   recall sum = 16/5 + 1/5 + (1/3)*3 + 1/4 + 1/4 + 4/4 = 5.9 -> 5.9/12 = 0.4917
#   F1 = 2PR/(P+R) with P = 70/120, R = 59/120: 0.5336
# refs: 5 hit, 8 miss, 12 miss -> 1/3 = 0.3333
# cost over 17 messages: usage on 0 (100/10/50), 1 (120/12/60), 5 (80/8/0); 3 has an empty usage
#   (no call). input 300/17 = 17.6, output 30/17 = 1.8, cached 110/17 = 6.5, calls 3/17 = 0.176
# latency: rows with elapsed_ms and via llm or none: 0 (200), 1 (300, no via), 3 (400), 5 (100);
#   2 is via rule. sorted [100, 200, 300, 400]: p50 = [4 // 2] = 300, p90 = [int(3.6)] = 400
# breakdowns (strict): action new 0,2 right 6 wrong = 2/3; continue 1 / (1,7,11,14) = 1/4;
#   switch 5,12 / (5,8,12,13,15) = 2/5. style explicit 0,2 / (0,2,6,8,13,15) = 2/6; implicit 1/4;
#   cue 2/2. tags cross 5,12 / (5,8,12) = 2/3; twin 0/(6,7,13,14) = 0/4.

C1_TURNS = [
    turn(0, "t1", "new"),
    turn(1, "t1", style="implicit"),
    turn(2, "t2", "new"),
    turn(3, "t2", style="pronoun", ambiguous=True, judge="t1"),
    turn(4, None),
    turn(5, "t1", "switch", style="cue", tags=["cue", "cross"], refs=["t2"]),
    turn(6, "t3", "new", tags=["explicit", "twin"]),
    turn(7, "t3", style="implicit", tags=["implicit", "twin"]),
    turn(8, "t2", "switch", tags=["explicit", "cross"], refs=["t3"]),
    turn(9, "t3", "switch", style="pronoun", tags=["pronoun", "twin"], ambiguous=True, judge="ambiguous"),
    turn(10, None),
    turn(11, "t2", style="implicit"),
    turn(12, "t1", "switch", style="cue", tags=["cue", "cross"], refs=["t3"]),
    turn(13, "t3", "switch", tags=["explicit", "twin"]),
    turn(14, "t3", style="implicit", tags=["implicit", "twin"]),
    turn(15, "t2", "switch"),
    turn(16, "t1", "switch", style="pronoun", ambiguous=True, judge="none"),
]
C1_LABELS = ["t1", "t1", "t2", "t1", "t2", "t1", "t1", "CLARIFY", None, "t3", "new-q", "ERROR", "t1", "n1", "n1",
             "t3", "t2"]
C1_THREADS = ["t1", "t2", {"id": "t3", "title": "Thread t3", "domain": "code", "twinOf": "t1"}]


def c1():
    s = session("c1", C1_THREADS, C1_TURNS)
    r = rows(
        "c1", C1_LABELS, "closed",
        usage={0: {"input": 100, "output": 10, "cache_hit": 50}, 1: {"input": 120, "output": 12, "cache_hit": 60},
               3: {}, 5: {"input": 80, "output": 8, "cache_hit": 0}},
        elapsed_ms={0: 200, 1: 300, 2: 5, 3: 400, 5: 100},
        via={0: "llm", 2: "rule", 3: "llm", 5: "llm"},
        refs={5: ["t2"], 12: ["t2"]},
    )
    return s, r


C1_METRICS = {
    "accuracy": 0.4167,
    "accuracy_lenient": 0.4667,
    "ambiguous_share": 0.2,
    "weighted_error": 0.8333,
    "oneoff_into_topic": 0.5,
    "switch_precision": 0.8571,
    "switch_recall": 0.6,
    "switch_f1": 0.7059,
    "topics_per_thread": 2.667,
    "threads_per_topic": 2.0,
    "bcubed_precision": 0.5833,
    "bcubed_recall": 0.4917,
    "bcubed_f1": 0.5336,
    "refs_recall": 0.3333,
    "input_tokens_per_message": 17.6,
    "output_tokens_per_message": 1.8,
    "cached_tokens_per_message": 6.5,
    "model_calls_share": 0.176,
    "latency_p50_ms": 300,
    "latency_p90_ms": 400,
}
C1_OUTCOMES = {"correct": 7, "wrong_existing": 3, "merged_new": 1, "spurious_new": 1, "clarify": 1, "error": 2,
               "oneoff_isolated": 1, "oneoff_into_topic": 1}

# --- open mode: session o1 ---------------------------------------------------------------------------
# Threads t1, t2, t3; labels are the system's own.
#
#  i  gold  amb judge      label   outcome                                         mapped  ok
#  0  t1    .   t1         A       correct (fresh, t1 first seen)                  t1      y
#  1  t1    .   t1         A       correct (A holds t1)                            t1      y
#  2  t2    .   t2         A       merged_new (A holds t1; t2 first seen)          t1      n
#  3  t2    .   t2         B       spurious_new (fresh, t2 already seen)           t2      y
#  4  -     .   none       C       oneoff_isolated (fresh)
#  5  t2    .   t2 ref t1  B r[A]  correct (B holds t2); ref A -> t1: hit          t2      y
#  6  t3    .   t3         D       correct (fresh, t3 first seen)                  t3      y
#  7  t1    A   t1         CLARIFY clarify                                         -       n
#  8  t3    .   t3         (none)  error
#  9  t1    .   t1 ref t3  A r[D]  correct (A holds t1 2, t2 1); ref D -> t3: hit  t1      y
# 10  -     .   none       A       oneoff_into_topic
# 11  t3    A   ambiguous  B       wrong_existing (B holds t2; t3 seen)            t2      n
#
# matching (rows t1 t2 t3, columns A B C D): t1 [3 0 0 0], t2 [1 2 0 0], t3 [0 1 0 1]
#   -> A=t1, B=t2, D=t3 (total 6, the only best); C maps nothing
# thread messages 10, ambiguous 2 (7, 11), strict 8 (0,1,2,3,5,6,8,9)
# accuracy 6/8 = 0.75 (0,1,3,5,6,9); lenient 6/10 = 0.6; ambiguous_share 0.2
# weighted error: 2 merged 3 + 3 spurious 1 + 8 error 1 = 5 / 8 = 0.625; one-offs 1/2 = 0.5
# switch: 2 FN (A==A); 3 FP; 6 TP; 7 FN (special); 8 FN; 9 TP (A!=D); 11 TP -> P 3/4, R 3/6, F1 0.6
# topics/thread: t1 {A} 1, t2 {A,B} 2, t3 {D,B} 2 -> 5/3 = 1.667
# threads/topic: A {t1,t2} 2, B {t2,t3} 2, D {t3} 1 -> 5/3 = 1.667 (C held only a one-off)
# B-cubed: cells (t1,A) 3, (t2,A) 1, (t2,B) 2, (t3,D) 1, (t3,B) 1; label sizes A 4, B 3, D 1;
#   thread sizes t1 3, t2 3, t3 2.
#   precision sum 9/4 + 1/4 + 4/3 + 1 + 1/3 = 31/6 -> /8 = 31/48 = 0.6458
#   recall sum 9/3 + 1/3 + 4/3 + 1/2 + 1/2 = 17/3 -> /8 = 34/48 = 0.7083; F1 2108/3120 = 0.6756
# refs 2/2 = 1.0; no usage: tokens 0.0, calls 0.0, latency none

O1_TURNS = [
    turn(0, "t1", "new"),
    turn(1, "t1"),
    turn(2, "t2", "new"),
    turn(3, "t2"),
    turn(4, None),
    turn(5, "t2", refs=["t1"], tags=["explicit", "cross"]),
    turn(6, "t3", "new"),
    turn(7, "t1", "switch", ambiguous=True, judge="t1"),
    turn(8, "t3", "switch"),
    turn(9, "t1", "switch", refs=["t3"], tags=["explicit", "cross"]),
    turn(10, None),
    turn(11, "t3", "switch", ambiguous=True, judge="ambiguous"),
]
O1_LABELS = ["A", "A", "A", "B", "C", "B", "D", "CLARIFY", None, "A", "A", "B"]


def o1():
    return session("o1", ["t1", "t2", "t3"], O1_TURNS), rows("o1", O1_LABELS, "open", refs={5: ["A"], 9: ["D"]})


O1_METRICS = {
    "accuracy": 0.75,
    "accuracy_lenient": 0.6,
    "ambiguous_share": 0.2,
    "weighted_error": 0.625,
    "oneoff_into_topic": 0.5,
    "switch_precision": 0.75,
    "switch_recall": 0.5,
    "switch_f1": 0.6,
    "topics_per_thread": 1.667,
    "threads_per_topic": 1.667,
    "bcubed_precision": 0.6458,
    "bcubed_recall": 0.7083,
    "bcubed_f1": 0.6756,
    "refs_recall": 1.0,
    "input_tokens_per_message": 0.0,
    "output_tokens_per_message": 0.0,
    "cached_tokens_per_message": 0.0,
    "model_calls_share": 0.0,
    "latency_p50_ms": None,
    "latency_p90_ms": None,
}
O1_OUTCOMES = {"correct": 5, "wrong_existing": 1, "merged_new": 1, "spurious_new": 1, "clarify": 1, "error": 1,
               "oneoff_isolated": 1, "oneoff_into_topic": 1}


def test_closed_mode_every_metric_by_hand():
    s, r = c1()
    result = score_predictions([s], r, bootstrap=0).result
    assert result["mode"] == "closed"
    assert result["metrics"] == C1_METRICS
    assert result["outcomes"] == C1_OUTCOMES
    c = result["counts"]
    assert (c["sessions"], c["messages"], c["thread_messages"], c["strict"], c["ambiguous"], c["oneoffs"]) == (
        1, 17, 15, 12, 3, 2)
    assert (c["missing_rows"], c["refs_messages"], c["model_calls"], c["latency_rows"]) == (1, 3, 3, 4)


def test_closed_mode_breakdowns_by_hand():
    s, r = c1()
    b = score_predictions([s], r, bootstrap=0).result["breakdowns"]

    def cells(dim):
        return {k: (v["correct"], v["n"]) for k, v in b[dim].items()}

    assert cells("action") == {"new": (2, 3), "continue": (1, 4), "switch": (2, 5)}
    assert cells("style") == {"explicit": (2, 6), "implicit": (1, 4), "cue": (2, 2)}
    assert cells("tag") == {"explicit": (2, 6), "implicit": (1, 4), "cue": (2, 2), "cross": (2, 3), "twin": (0, 4)}
    assert cells("lang") == {"en": (5, 12)}
    assert b["action"]["switch"]["accuracy"] == 0.4
    assert b["tag"]["twin"]["accuracy"] == 0.0


def test_open_mode_every_metric_by_hand():
    s, r = o1()
    result = score_predictions([s], r, bootstrap=0).result
    assert result["mode"] == "open"
    assert result["metrics"] == O1_METRICS
    assert result["outcomes"] == O1_OUTCOMES
    b = result["breakdowns"]["action"]
    # strict: new 0 y, 2 n, 6 y = 2/3; continue 1 y, 3 y, 5 y = 3/3; switch 8 n, 9 y = 1/2
    assert {k: (v["correct"], v["n"]) for k, v in b.items()} == {"new": (2, 3), "continue": (3, 3), "switch": (1, 2)}


def test_open_mode_mapping_by_hand():
    s, r = o1()
    sc = score_session(Session.model_validate(s), {x["i"]: PredictionRow.model_validate(x) for x in r}, "open")
    assert sc.mapping == {"A": "t1", "B": "t2", "D": "t3"}
    assert sc.outcomes[2] == "merged_new" and sc.outcomes[3] == "spurious_new" and sc.correct[3]


def test_pooling_over_sessions_by_hand():
    # c2 (closed): (t1,t1) correct; (t2,t1) merged_new (t2 first seen, t1 holds t1); (t2,t2) correct.
    #   topics/thread: t1 {t1} 1, t2 {t1,t2} 2; threads/topic: t1 {t1,t2} 2, t2 {t2} 1
    #   B-cubed cells (t1,t1) 1, (t2,t1) 1, (t2,t2) 1; label sizes t1 2, t2 1; thread sizes t1 1, t2 2
    #   precision sum 1/2 + 1/2 + 1 = 2, recall sum 1 + 1/2 + 1/2 = 2
    # pooled with c1: accuracy (5 + 2) / (12 + 3) = 0.4667; topics/thread (8 + 3) / (3 + 2) = 2.2;
    #   threads/topic (8 + 3) / (4 + 2) = 1.833; B-cubed P (7 + 2) / 15 = 0.6, R (5.9 + 2) / 15 = 0.5267
    #   (labels t1/t2 of c1 and c2 are different topics: clusters never span sessions)
    s1, r1 = c1()
    s2 = session("c2", ["t1", "t2"], [turn(0, "t1", "new"), turn(1, "t2", "new"), turn(2, "t2")])
    r2 = rows("c2", ["t1", "t1", "t2"], "closed")
    m = score_predictions([s1, s2], r1 + r2, bootstrap=0).result["metrics"]
    assert (m["accuracy"], m["topics_per_thread"], m["threads_per_topic"]) == (0.4667, 2.2, 1.833)
    assert (m["bcubed_precision"], m["bcubed_recall"]) == (0.6, 0.5267)


def test_missing_rows_count_as_error_and_empty_sessions_are_left_out():
    s1 = session("a", ["t1"], [turn(0, "t1", "new"), turn(1, "t1"), turn(2, "t1")])
    s2 = session("b", ["t1"], [turn(0, "t1", "new")])
    # a: rows for 0 and 2 only -> 1 is an error; b: no rows at all -> not scored
    run = score_predictions([s1, s2], rows("a", ["t1", None, "t1"]), bootstrap=0)
    r = run.result
    assert r["outcomes"]["error"] == 1 and r["outcomes"]["correct"] == 2
    assert r["metrics"]["accuracy"] == 0.6667 and r["metrics"]["weighted_error"] == 0.3333
    assert r["counts"]["sessions"] == 1 and r["counts"]["missing_rows"] == 1
    assert r["not_scored"] == [{"reason": "no predictions", "session_id": "b"}]


def test_majority_tie_goes_to_the_thread_held_first():
    # open mode, one topic X: t1 (first), t2, then t2 again makes it 1:1 before turn 3? Walk it:
    #  0 t1 X fresh -> correct; X {t1:1}
    #  1 t2 X X holds t1 -> merged_new; X {t1:1, t2:1}
    #  2 t2 X tie 1:1 -> goes to t1 (held first) -> wrong_existing; X {t1:1, t2:2}
    #  3 t1 X majority t2 -> wrong_existing
    s = session("tie", ["t1", "t2"], [turn(0, "t1", "new"), turn(1, "t2", "new"), turn(2, "t2"), turn(3, "t1")])
    r = score_predictions([s], rows("tie", ["X"] * 4, "open"), bootstrap=0).result
    assert r["outcomes"]["correct"] == 1 and r["outcomes"]["merged_new"] == 1
    assert r["outcomes"]["wrong_existing"] == 2


def test_closed_topic_keeps_its_own_thread_as_majority():
    # t1's catalog topic receives three t2 messages: it still "holds" t1, so each is wrong_existing
    # (after the first, which is merged_new: t2 appears for the first time).
    ts = [turn(0, "t1", "new"), turn(1, "t2", "new"), turn(2, "t2"), turn(3, "t2"), turn(4, "t1")]
    s = session("seed", ["t1", "t2"], ts)
    r = score_predictions([s], rows("seed", ["t1"] * 5), bootstrap=0).result
    assert r["outcomes"] == {**dict.fromkeys(C1_OUTCOMES, 0), "correct": 2, "merged_new": 1, "wrong_existing": 2}


def test_open_mode_first_message_of_a_thread_into_a_fresh_topic_is_correct_but_not_in_closed():
    ts = [turn(0, "t1", "new"), turn(1, "t2", "new")]
    s = session("fresh", ["t1", "t2"], ts)
    open_ = score_predictions([s], rows("fresh", ["x", "y"], "open"), bootstrap=0).result
    closed = score_predictions([s], rows("fresh", ["x", "y"], "closed"), bootstrap=0).result
    assert open_["outcomes"]["correct"] == 2 and open_["metrics"]["accuracy"] == 1.0
    # closed: x and y are not thread ids: fresh topics for threads that have one already -> spurious_new
    assert closed["outcomes"]["spurious_new"] == 2 and closed["metrics"]["accuracy"] == 0.0


def test_mode_comes_from_the_first_row_that_names_one():
    ts = [turn(0, "t1", "new"), turn(1, "t2", "new")]
    s = session("m", ["t1", "t2"], ts)
    r = rows("m", ["x", "y"], None)
    r[1]["mode"] = "open"
    assert score_predictions([s], r, bootstrap=0).result["mode"] == "open"
    assert score_predictions([s], rows("m", ["t1", "t2"], None), bootstrap=0).result["mode"] == "closed"
    # an explicit mode wins over the rows'
    assert score_predictions([s], r, mode="closed", bootstrap=0).result["mode"] == "closed"


def test_undefined_metrics_are_null_switch_and_bcubed_included():
    # one thread, no one-offs, no refs, every message a CLARIFY: nothing to cluster, no switches
    s = session("u", ["t1"], [turn(0, "t1", "new"), turn(1, "t1")])
    result = score_predictions([s], rows("u", ["CLARIFY", "CLARIFY"]), bootstrap=0).result
    m = result["metrics"]
    assert m["oneoff_into_topic"] is None and m["refs_recall"] is None
    assert m["topics_per_thread"] is None and m["threads_per_topic"] is None
    assert m["latency_p50_ms"] is None
    assert (m["switch_precision"], m["switch_recall"], m["switch_f1"]) == (None, None, None)
    assert (m["bcubed_precision"], m["bcubed_recall"], m["bcubed_f1"]) == (None, None, None)
    assert m["accuracy"] == 0.0 and m["weighted_error"] == 1.0
    header, _, cells = (line.strip("|").split("|") for line in main_table([result]).splitlines())
    shown = {h.strip(): c.strip() for h, c in zip(header, cells)}
    assert (shown["accuracy"], shown["switch F1"], shown["B-cubed F1"]) == ("0.0000", "–", "–")


def test_switch_f1_is_defined_once_anything_counts():
    # gold switches t1 -> t2 at turn 2; the prediction never switches: precision undefined (no
    # predicted switch), recall 0/1, F1 = 2tp / (2tp + fp + fn) = 0
    s = session("w", ["t1", "t2"], [turn(0, "t1", "new"), turn(1, "t1"), turn(2, "t2", "new")])
    m = score_predictions([s], rows("w", ["a", "a", "a"]), bootstrap=0).result["metrics"]
    assert (m["switch_precision"], m["switch_recall"], m["switch_f1"]) == (None, 0.0, 0.0)


def test_burst_table_by_hand():
    # The three groups are disjoint (docs/score.md#the-metrics-exactly). Strict messages 0..5:
    # 0 alone (right); 1+2 a burst on one thread t1 (1 right, 2 right); 3+4 a burst across threads
    # (3 right, 4 wrong); 5 alone (wrong). alone 1/2; in a burst on one thread 2/2; across 1/2.
    # waited on 1, 3 and 5 of 6 rows = 0.5
    ts = [turn(0, "t1", "new"), turn(1, "t1"), turn(2, "t1"), turn(3, "t1"), turn(4, "t2", "new"), turn(5, "t2")]
    s = session("b", ["t1", "t2"], ts)
    r = rows("b", ["t1", "t1", "t1", "t1", "t1", "t1"], burst={0: 1, 1: 2, 2: 2, 3: 2, 4: 2, 5: 1},
             mixed={1: False, 2: False, 3: True, 4: True}, waited={1: True, 3: True, 5: True, 0: False})
    b = score_predictions([s], r, bootstrap=0).result["burst"]
    assert b["rows"] == 6 and b["waited_share"] == 0.5
    assert (b["alone"]["correct"], b["alone"]["n"], b["alone"]["accuracy"]) == (1, 2, 0.5)
    assert (b["in_burst"]["correct"], b["in_burst"]["n"], b["in_burst"]["accuracy"]) == (2, 2, 1.0)
    assert (b["mixed"]["correct"], b["mixed"]["n"]) == (1, 2)
    assert b["alone"]["n"] + b["in_burst"]["n"] + b["mixed"]["n"] == 6  # every strict message in one group
    assert b["model_calls_per_message"] == 0.0
    assert score_predictions([s], rows("b", ["t1"] * 6), bootstrap=0).result["burst"] is None


def test_matching_tie_break_follows_linear_sum_assignment():
    # t1 and t2 each agree twice with both labels: two equally good matchings. The definition
    # takes scipy's on the negated matrix with sorted rows/columns: t1->a, t2->b.
    agreement = {("t1", "a"): 2, ("t1", "b"): 2, ("t2", "a"): 2, ("t2", "b"): 2}
    assert match_labels(["t2", "t1"], ["b", "a"], agreement) == {"a": "t1", "b": "t2"}
    # a matched pair with zero agreement maps nothing
    assert match_labels(["t1", "t2"], ["a", "b"], {("t1", "a"): 1}) == {"a": "t1"}
    assert match_labels([], ["a"], {}) == {} and match_labels(["t1"], [], {}) == {}


def test_cost_per_message_uses_the_price_and_is_null_when_unknown(monkeypatch):
    from interleave_bench.llm.prices import Price

    s, r = c1()
    # 300 input of which 110 cached, 30 output, over 17 messages, at (1, 0.5, 2) USD per million:
    # (190 * 1 + 110 * 0.5 + 30 * 2) / 1e6 / 17 = 305e-6 / 17 = 1.794e-5
    got = score_predictions([s], r, bootstrap=0, price=Price(1.0, 0.5, 2.0)).result["cost_usd_per_message"]
    assert got == pytest.approx(305e-6 / 17, abs=1e-8)
    assert score_predictions([s], r, bootstrap=0).result["cost_usd_per_message"] is None
    s2 = session("free", ["t1"], [turn(0, "t1", "new")])
    assert score_predictions([s2], rows("free", ["t1"]), bootstrap=0).result["cost_usd_per_message"] == 0.0


def test_a_null_cost_says_why_and_the_report_table_shows_it():
    """``cost_null_reason`` (docs/score.md): no price, unreported token counts, a cost no number
    holds; null beside a cost, a free run's 0.0 too; the report's table and plot say it."""
    import numpy as np

    from interleave_bench.documents import COST_NULL_REASONS
    from interleave_bench.llm.prices import MAX_PRICE_PER_MILLION, Price
    from interleave_bench.reports.page import _main_table, _points
    from interleave_bench.score.routing import COL
    from interleave_bench.score.run import message_cost

    s, r = c1()

    def cost(price=None, rows_=r) -> tuple:
        doc = score_predictions([s], rows_, bootstrap=0, price=price).result
        return doc["cost_usd_per_message"], doc["cost_null_reason"]

    assert cost(Price(1.0, 0.5, 2.0)) == (pytest.approx(305e-6 / 17, abs=1e-8), None)
    assert cost() == (None, "no_price")
    unreported = [dict(x, usage={**x["usage"], "unreported": 1}) if "usage" in x else x for x in r]
    assert cost(Price(1.0, 0.5, 2.0), unreported) == (None, "unreported")
    s2 = session("free", ["t1"], [turn(0, "t1", "new")])
    free = score_predictions([s2], rows("free", ["t1"]), bootstrap=0).result
    assert (free["cost_usd_per_message"], free["cost_null_reason"]) == (0.0, None)
    totals = np.zeros(len(COL))
    assert message_cost(totals, None) == (None, "no_messages")
    totals[COL["messages"]], totals[COL["calls"]], totals[COL["input_tokens"]] = 1, 1, 1e308
    top = Price(MAX_PRICE_PER_MILLION, MAX_PRICE_PER_MILLION, MAX_PRICE_PER_MILLION)
    assert message_cost(totals, top) == (None, "too_large")
    assert set(COST_NULL_REASONS) == {"no_messages", "no_price", "unreported", "too_large"}
    docs = [dict(score_predictions([s], r, bootstrap=0).result, system="a"),
            dict(score_predictions([s], unreported, bootstrap=0, price=Price(1, 1, 1)).result, system="b")]
    html = _main_table(docs)
    assert "– (no price for the model (set EVAL_PRICES))" in html
    assert "– (the provider reported no token counts for some calls)" in html
    assert [p.why for p in _points(docs)] == [COST_NULL_REASONS["no_price"], COST_NULL_REASONS["unreported"]]
