"""The system's topics in one session as a run builds them, and the router views made from them."""

from __future__ import annotations

from typing import Optional, Sequence

from ..schema import SPECIAL_LABELS, opened_label
from .base import Conversation, Message, RoutedMessage, RouterView, ThreadCard, TopicView


class TopicState:
    """The system's topics in one session, and the messages routed so far; makes router views."""

    def __init__(self, conv: Conversation, mode: str):
        self.conv = conv
        self.mode = mode
        self.order: list[str] = []
        self.titles: dict[str, str] = {}
        self.cards: dict[str, Optional[ThreadCard]] = {}
        self.messages: dict[str, list[Message]] = {}
        # each topic's view as of its latest message, in ``order``: a view shows every topic, most
        # unchanged since the last, so only those a message went to since (``_stale``, positions)
        # are made again and the rest copied as they are. IRC's dev logs show 28 topics a message
        # on average: making every view took 21 us a message there; looking each one up instead,
        # 2.3% of the instructions of routing them with local (3.4% with the logs joined in pairs)
        self._position: dict[str, int] = {}
        self._views: list[Optional[TopicView]] = []
        self._stale: list[int] = []
        self.history: list[RoutedMessage] = []
        self.current: Optional[str] = None
        self.opened = 0
        if mode == "closed":
            for card in conv.cards:
                self._add(card.id, card.title, card)

    def _add(self, label: str, title: str, card: Optional[ThreadCard]) -> None:
        self._position[label] = len(self.order)
        self._stale.append(len(self.order))
        self._views.append(None)
        self.order.append(label)
        self.titles[label] = title
        self.cards[label] = card
        self.messages[label] = []

    def open_topic(self, title: str) -> str:
        """A new topic's label: ``t<n>`` in open mode (which knows nothing of the threads, so the
        labels do not either); ``x<n>`` in closed mode, never a thread id or an existing label."""
        taken = set(self.order) | set(SPECIAL_LABELS)
        if self.mode == "closed":
            taken |= {c.id for c in self.conv.cards}
        while True:
            self.opened += 1
            label = opened_label(self.mode, self.opened)
            if label not in taken:
                break
        self._add(label, title, None)
        return label

    def record(self, msg: Message, label: str) -> None:
        if label not in SPECIAL_LABELS:
            if label not in self.messages:
                raise RuntimeError(f"router answered unknown topic {label!r}")
            self.messages[label].append(msg)
            k = self._position[label]
            if self._views[k] is not None:
                self._views[k] = None
                self._stale.append(k)
            self.current = label
        self.history.append(RoutedMessage(msg.i, msg.text, label, msg.reply, msg.speaker))

    def _topic_views(self) -> tuple[TopicView, ...]:
        views = self._views
        for k in self._stale:
            label = self.order[k]
            views[k] = TopicView(label, self.titles[label], self.cards[label], tuple(self.messages[label]))
        self._stale.clear()
        return tuple(views)  # type: ignore[arg-type]  (none is stale now)

    def view(self, pending: Sequence[Message]) -> RouterView:
        return RouterView(
            session_id=self.conv.session_id,
            lang=self.conv.lang,
            mode=self.mode,  # type: ignore[arg-type]
            cards=self.conv.cards if self.mode == "closed" else (),
            topics=self._topic_views(),
            history=tuple(self.history),
            current=self.current,
            pending=tuple(pending),
        )
