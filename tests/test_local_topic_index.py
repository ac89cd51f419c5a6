"""The local router's topic index equals reading every topic of every view again."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from interleave_bench.route.base import Message, TopicView
from interleave_bench.route.local_profile import ONEOFF_TITLE_PREFIX, TopicIndex, is_oneoff_topic


def _topic(label: str, oneoff: bool, turns: list[int], held=tuple) -> TopicView:
    """A topic; ``held=list`` builds it as a hand-made view may, its messages in a list."""
    title = (ONEOFF_TITLE_PREFIX if oneoff else "") + f"topic {label}"
    return TopicView(label, title, None, held(Message(i, f"m{i}") for i in turns))


def _expected(topics, at, quiet, ties):
    open_ = [t for t in topics if not is_oneoff_topic(t)]
    near = [t for t in open_ if not t.messages or at - t.messages[-1].i <= quiet or t.label in ties]
    return open_, {t.label for t in open_}, near


# one step of a session's views: a new topic, a message to a topic, or another run from its start
_STEP = st.one_of(
    # one-off?, with a first message?, messages in a list (grown in place)?, the label of an earlier topic?
    st.tuples(st.just("open"), st.booleans(), st.booleans(), st.booleans(), st.one_of(st.none(), st.integers(0, 30))),
    st.tuples(st.just("message"), st.integers(0, 30), st.integers(1, 40)),  # which topic, turns later
    st.tuples(st.just("rerun"), st.integers(0, 5), st.booleans()),  # topics kept, labels shifted?
)


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(_STEP, max_size=40), quiet=st.integers(0, 30), tie_picks=st.lists(st.integers(0, 30), max_size=4))
def test_the_index_reads_views_as_a_full_pass_would(steps, quiet, tie_picks):
    index = TopicIndex()
    topics: list[TopicView] = []
    at = 0
    for step in steps:
        if step[0] == "open":
            label = f"t{len(topics) + 1}" if step[4] is None or not topics else topics[step[4] % len(topics)].label
            topics.append(_topic(label, step[1], [at] if step[2] else [], list if step[3] else tuple))
        elif step[0] == "message" and topics:
            k = step[1] % len(topics)
            at += step[2]
            t = topics[k]
            if isinstance(t.messages, list):
                t.messages.append(Message(at, f"m{at}"))  # the same object, grown in place
            else:  # a new object, as the runner makes
                topics[k] = _topic(t.label, is_oneoff_topic(t), [m.i for m in t.messages] + [at])
        elif step[0] == "rerun":
            # another run of the session: fresh objects, maybe fewer topics, maybe other labels or kinds
            shift = "x" if step[2] else ""
            topics = [_topic(shift + t.label, step[2] != is_oneoff_topic(t), list(t.messages and [t.messages[0].i]))
                      for t in topics[: step[1]]]
        at += 1
        view = tuple(topics)
        index.read(view)
        ties = {topics[p % len(topics)].label for p in tie_picks} if topics else set()
        open_, everyone, near = _expected(view, at, quiet, ties)
        assert index.open_topics() == open_
        assert index.everyone == everyone
        assert index.near(at, quiet, ties) == near


def test_a_topic_heard_from_long_ago_is_near_only_when_tied():
    old, recent, unheard, oneoff = (_topic("t1", False, [0]), _topic("t2", False, [70]), _topic("t3", False, []),
                                    _topic("t4", True, [99]))
    index = TopicIndex().read((old, recent, unheard, oneoff))
    assert index.near(100, 30, set()) == [recent, unheard]
    assert index.near(100, 30, {"t1", "t4"}) == [old, recent, unheard]  # a one-off topic never is
    assert index.open_topics() == [old, recent, unheard] and index.everyone == {"t1", "t2", "t3"}


def test_a_list_of_topics_changed_in_place_is_read_again():
    """A view built by hand may hold a list; the index keeps its own copy of what it read."""
    first, second = _topic("t1", False, [0]), _topic("t2", False, [1])
    topics = [first]
    index = TopicIndex().read(topics)
    topics.append(second)
    topics[0] = _topic("t1", True, [0])  # now a one-off topic
    assert index.read(topics).open_topics() == [second] and index.everyone == {"t2"}


def test_a_topic_whose_message_list_grows_in_place_is_read_again():
    messages = [Message(0, "m0")]
    topics = (_topic("t1", False, [], list), _topic("t2", False, [95]))
    topics[0].messages.extend(messages)
    index = TopicIndex().read(topics)
    assert index.near(100, 30, set()) == [topics[1]]
    topics[0].messages.append(Message(99, "m99"))  # the same view objects, one list grown
    assert index.read(topics).near(100, 30, set()) == list(topics)


def test_a_label_naming_two_topics_brings_both_back_when_tied():
    a, b, c = _topic("t1", False, [0]), _topic("t1", False, [1]), _topic("t2", False, [2])
    index = TopicIndex().read((a, b, c))
    assert index.near(100, 30, {"t1"}) == [a, b]
    oneoff = _topic("t1", True, [3])  # the last topic of the label a one-off: the others still count
    assert TopicIndex().read((a, oneoff)).near(100, 30, {"t1"}) == [a]
