"""The project's shared text rules: one normaliser, one bare-acknowledgement rule, one table."""

from __future__ import annotations

import unicodedata

import pytest

from interleave_bench.text import fold, is_bare_ack, normalize

#: the one table of the acknowledgement rule: (message, bare?). The routers' fast path and the
#: mid-reply rule both read it through interleave_bench.text.is_bare_ack.
ACK_TABLE = [
    # plain nods, any language, any punctuation, case and spacing
    ("ok", True), ("OK!!", True), ("k", True), ("Okay.", True), ("OK thanks!", True), ("thank you", True),
    ("thanks!", True), ("Thanks :)", True), ("got it, thanks", True), ("thank you so much", True),
    ("great, thanks", True), ("sounds good.", True), ("OK 谢谢", True), ("ok的", True),
    ("好的", True), ("好的，谢谢", True), ("好的～", True), ("嗯嗯", True), ("行", True), ("收到！", True),
    # the cases the two earlier rules disagreed on
    ("?", False),  # a question mark asks something: the message wants an answer
    ("!!", True),  # symbols only: no subject of its own
    ("done", True),  # confirms the step at hand
    ("will do", True),
    ("lgtm", True),
    ("辛苦了", True),  # thanks for the work
    # symbols and emoji
    ("👍", True), ("👍🏻", True), ("🙏🙏", True),
    # not bare: content, questions, refusals, nothing at all
    ("ok?", False), ("好的？", False), ("no", False), ("stop", False), ("ok stop", False), ("不好", False),
    ("", False), ("   ", False), ("kitchen", False), ("the second one", False), ("第二个", False),
    ("ok, and the hotel?", False), ("ok, and add a churn column", False), ("thanks for the tiles", False),
    ("okay book it", False), ("okay so skip Sintra", False), ("no, the second one", False),
    ("好的，机票呢", False), ("好的，再加一列", False), ("thanks, and separately, is my passport ok?", False),
    ("谢谢！另外致辞结尾会不会太俗？", False),
    ("ok " * 13, False),  # 26 letters: longer than any nod
]


@pytest.mark.parametrize("text, bare", ACK_TABLE)
def test_the_acknowledgement_table(text, bare):
    assert is_bare_ack(text) is bare


def test_the_routers_and_the_mid_reply_rule_use_this_rule():
    from interleave_bench.midreply import rule, runner
    from interleave_bench.route import rules

    assert rule.is_bare_ack is is_bare_ack and runner.is_bare_ack is is_bare_ack and rules.is_bare_ack is is_bare_ack


@pytest.mark.parametrize("text, folded, normalized", [
    ("Trip  to\tRome!", "trip to rome!", "trip to rome"),
    ("ＡＢＣ v1.2", "abc v1.2", "abc v1 2"),  # NFKC: full-width letters are letters
    ("好的，谢谢", "好的,谢谢", "好的 谢谢"),
    ("  ", "", ""),
])
def test_one_normaliser(text, folded, normalized):
    assert fold(text) == folded and normalize(text) == normalized


def test_the_normaliser_reads_as_letters_and_digits_exactly_what_python_does():
    # every code point that folding leaves as it is: kept exactly when str.isalnum holds
    for c in map(chr, range(0x110000)):
        text = f" {c} "
        if unicodedata.normalize("NFKC", text).casefold() == text:
            assert normalize(text) == (c if c.isalnum() else ""), hex(ord(c))
