"""Model-free baselines: ``single``, ``always_new``, ``stay`` and the ``oracle``.

``bm25`` lives in :mod:`.bm25`. None of them calls a model; their rows say ``via: baseline``.
The oracle is the one router handed gold (:class:`~.base.GoldLabels`): it exists to check the
scorer, which must give it accuracy 1.0, weighted error 0 and B-cubed F1 1.0 on any data.
"""

from __future__ import annotations

from typing import Optional

from .base import Decision, GoldLabels, RouterView
from .bm25 import best_match, bm25_tokens
from .text import short_title

#: the title an oracle gives a one-off's own topic
ONEOFF_TITLE = "(one-off)"


class SingleRouter:
    """``single``: the whole chat is one topic (closed mode: the first thread's)."""

    policy = "single"
    uses_model = False

    async def route(self, view: RouterView) -> Decision:
        if view.mode == "closed" and view.topics:
            return Decision.to_topic(view.topics[0].label)
        if view.current is not None:
            return Decision.to_topic(view.current)
        return Decision.new(short_title(view.pending_text()))


class AlwaysNewRouter:
    """``always_new``: every message (or burst routed as one) opens a topic of its own."""

    policy = "always_new"
    uses_model = False

    async def route(self, view: RouterView) -> Decision:
        return Decision.new(short_title(view.pending_text()))


class StayRouter:
    """``stay``: the first message goes by keyword match, every later one to the previous topic.

    Closed mode: the first message takes the thread whose card matches best (bm25, the earliest
    thread on a tie). Open mode: the first message opens a topic, so ``stay`` equals ``single``.
    """

    policy = "stay"
    uses_model = False

    async def route(self, view: RouterView) -> Decision:
        if view.current is not None:
            return Decision.to_topic(view.current)
        text = view.pending_text()
        if view.mode == "closed":
            label, _ = best_match(view, bm25_tokens(text))
            if label is not None:
                return Decision.to_topic(label)
        return Decision.new(short_title(text))


class OracleRouter:
    """``oracle``: the gold thread; each one-off gets a fresh topic of its own.

    Closed mode answers the gold thread id. Open mode opens a topic (titled with the thread id) the
    first time a gold thread appears and sends the thread's later messages to it. Refs are the gold refs, as labels. A burst routed as one unit follows its first
    message that has a thread.
    """

    policy = "oracle"
    uses_model = False

    async def route_with_gold(self, view: RouterView, gold: GoldLabels) -> Decision:
        lead = next((m for m in view.pending if gold.thread.get(m.i) is not None), view.pending[0])
        thread = gold.thread.get(lead.i)
        refs = tuple(
            label for ref in gold.refs.get(lead.i, ()) if (label := self._label_of(view, gold, ref)) is not None
        )
        if thread is None:
            return Decision.new(ONEOFF_TITLE, refs=refs)
        label = self._label_of(view, gold, thread)
        if label is None:
            return Decision.new(thread, refs=refs)
        return Decision.to_topic(label, refs=tuple(r for r in refs if r != label))

    @staticmethod
    def _label_of(view: RouterView, gold: GoldLabels, thread: str) -> Optional[str]:
        """The topic holding gold ``thread``: its card in closed mode; in open mode the topic the
        oracle opened for it, which it titled with the thread id."""
        if view.mode == "closed":
            return thread if view.topic(thread) is not None else None
        return next((t.label for t in view.topics if t.title == thread), None)
