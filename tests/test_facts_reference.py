"""The reference shared-facts system: evidence checks, version guards, candidates, imports and
delivery with version notices, driven by a stub model that answers the extractor's items."""

from __future__ import annotations

import asyncio
import json

from interleave_bench.facts.prompts import Item, parse_items, parse_route
from interleave_bench.facts.protocol import Exchange, FactLine, Request, SystemContext, Topic, briefing
from interleave_bench.facts.reference import ReferenceSystem
from interleave_bench.llm.client import Reply, Usage


class StubLLM:
    """Answers each extractor call with the next queued items."""

    model = "stub"

    def __init__(self):
        self.queue: list[list[dict]] = []
        self.kinds: list[str] = []

    async def complete(self, kind, messages, **kw):
        self.kinds.append(kind)
        items = self.queue.pop(0) if self.queue else []
        return Reply(json.dumps({"items": items}), Usage(10, 0, 2), 1, False, "stub")


TOPICS = (Topic("move", "Office move"), Topic("party", "Team party"))


def system() -> tuple[ReferenceSystem, StubLLM]:
    llm = StubLLM()
    return ReferenceSystem(SystemContext(llm, "s1", "en", TOPICS)), llm


def observe(sys_, llm, turn, topic, user, assistant, items):
    llm.queue.append(items)
    asyncio.run(sys_.observe(Exchange(topic, turn, user, assistant)))


def item(label, value, status, evidence):
    return {"label": label, "value": value, "status": status, "evidence": evidence}


def test_evidence_checks_only_the_user_confirms_or_withdraws():
    s, llm = system()
    observe(s, llm, 0, "move", "Hello.", "How about a budget of 700 EUR?",
            [item("budget", "700 EUR", "confirmed", "a budget of 700 EUR")])  # quotes the assistant only
    f = s.topics["move"].facts["budget"]
    assert (f.status, f.value, f.proposed) == ("proposed", None, "700 EUR")
    observe(s, llm, 1, "move", "Fine.", "Ok.", [item("budget", "900 EUR", "confirmed", "the budget is 900 EUR")])
    assert s.topics["move"].facts["budget"].value is None  # the quote is not in this exchange
    observe(s, llm, 2, "move", "Yes, go with that.", "Done.", [item("budget", None, "confirmed", "go with that")])
    f = s.topics["move"].facts["budget"]
    assert (f.status, f.value, f.version) == ("confirmed", "700 EUR", 2)  # the accepted proposal
    observe(s, llm, 3, "move", "Ok.", "Shall I withdraw the budget?", [item("budget", None, "withdrawn", "withdraw the budget")])
    assert s.topics["move"].facts["budget"].status == "confirmed"  # only the user withdraws
    observe(s, llm, 4, "move", "Withdraw the budget.", "Done.", [item("budget", None, "withdrawn", "withdraw the budget")])
    assert s.topics["move"].facts["budget"].status == "withdrawn"
    assert llm.kinds == ["facts-extract"] * 5


def test_version_guard_an_older_turn_never_overwrites_a_newer_value():
    s, _ = system()
    assert s.apply(Exchange("move", 5, "The budget is 900 EUR.", ""), Item("budget", "900 EUR", "confirmed", "budget is 900 EUR"))
    version = s.topics["move"].facts["budget"].version
    assert not s.apply(Exchange("move", 3, "The budget is 700 EUR.", ""), Item("budget", "700 EUR", "confirmed", "budget is 700 EUR"))
    f = s.topics["move"].facts["budget"]
    assert (f.value, f.version) == ("900 EUR", version)
    # the same value again changes nothing: the version does not grow
    assert not s.apply(Exchange("move", 6, "Budget is 900 EUR.", ""), Item("budget", "900 EUR", "confirmed", "budget is 900 EUR"))
    assert s.topics["move"].facts["budget"].version == version


def test_candidates_point_by_title_or_label_and_leave_out_the_current_topic_and_unconfirmed_facts():
    s, llm = system()
    observe(s, llm, 0, "move", "The budget is 900 EUR.", "Ok.", [item("budget", "900 EUR", "confirmed", "budget is 900 EUR")])
    observe(s, llm, 1, "move", "Ok.", "Maybe a deposit of 300 EUR?", [item("deposit", "300 EUR", "proposed", "deposit of 300 EUR")])
    ask = lambda text, current="party", recent=(): asyncio.run(s.candidates(Request(text, 2, current, recent)))  # noqa: E731
    assert ask("What is the budget?") == [FactLine("move", "budget", "900 EUR")]
    assert ask("Anything from the Office move?") == [FactLine("move", "budget", "900 EUR")]  # no deposit: proposed
    assert ask("What is the budget?", current="move") == []
    assert ask("Next.", recent=("the budget again",)) == [FactLine("move", "budget", "900 EUR")]
    assert ask("Order food.") == []


def test_delivery_confirmed_only_imports_and_version_notices():
    s, llm = system()
    observe(s, llm, 0, "move", "The budget is 700 EUR.", "Ok.", [item("budget", "700 EUR", "confirmed", "budget is 700 EUR")])
    observe(s, llm, 1, "move", "The deposit is 300 EUR.", "Ok.", [item("deposit", "300 EUR", "confirmed", "deposit is 300 EUR")])
    deliver = lambda text, imported=(): asyncio.run(s.deliver("party", Request(text, 2, "party"), list(imported)))  # noqa: E731
    assert deliver("What is the budget?") == [FactLine("move", "budget", "700 EUR")]
    # an import brings a fact the text does not point to
    assert deliver("Next.", [FactLine("move", "deposit", "300 EUR")]) == [FactLine("move", "deposit", "300 EUR")]
    observe(s, llm, 3, "move", "The budget is 900 EUR.", "Ok.", [item("budget", "900 EUR", "confirmed", "budget is 900 EUR")])
    observe(s, llm, 4, "move", "Withdraw the deposit.", "Ok.", [item("deposit", None, "withdrawn", "withdraw the deposit")])
    lines = deliver("Order food.")
    assert lines == [FactLine("move", "budget", "900 EUR", "changed; was 700 EUR"),
                     FactLine("move", "deposit", None, "withdrawn; was 300 EUR")]
    assert deliver("Order food.") == []  # each notice once
    text = briefing(lines, {"move": "Office move"})
    assert text.splitlines() == ["Facts from other topics:",
                                 '- "Office move" budget: 900 EUR [changed; was 700 EUR]',
                                 '- "Office move" deposit: withdrawn (not settled any more) [withdrawn; was 300 EUR]']


def test_unreadable_extractor_answers_change_nothing_and_parsers_never_raise():
    assert parse_items("not json") is None
    assert parse_items('{"items": [{"label": "x"}, 3, {"label": "b", "value": 1, "status": "confirmed", "evidence": "e"}]}') \
        == [Item("b", "1", "confirmed", "e")]
    assert parse_route('```json\n{"topic": "a", "imports": [2, 2, 9, true, "1"]}\n```', ["a", "b"], 3) == ("a", [2])
    assert parse_route('{"topic": "zzz"}', ["a"], 0) == (None, [])
    assert parse_route("garbage", ["a"], 0) == (None, [])
