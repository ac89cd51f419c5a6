"""The Router protocol, what a router may see (the view), and what it answers (the decision).

A router sees only what a live system would: the user's messages so far, its own topics with the
messages routed to them, and in closed mode the thread cards (id, title, description, goal). This
is enforced by construction: :func:`conversation_of` copies exactly those fields out of a session
into a :class:`Conversation`, and routers are handed :class:`RouterView` objects built from it by the
runner. Where the data has them, the view also carries the assistant's reply to each message
already routed (never to a pending one: it has not been answered yet) and, in multi-party chat,
each message's speaker. Gold labels, the independent reading, ambiguity flags, tags, styles, facts
and refs of turns never reach a view. The ``oracle`` policy alone is given gold, through the separate
:class:`GoldLabels` argument of :class:`GoldRouter`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, Optional, Protocol, Union, runtime_checkable

from ..schema import CLARIFY, ERROR, MODES, SPECIAL_LABELS, Session

Mode = Literal[MODES]  # type: ignore[valid-type]

# --- what a router may see -------------------------------------------------------------------------


@dataclass(frozen=True)
class ThreadCard:
    """A closed-mode thread as the user described it up front: never its messages' labels."""

    id: str
    title: str
    description: str
    goal: str


@dataclass(frozen=True)
class Message:
    """One user message: its turn number and text; the assistant's ``reply`` to it where the data
    has one (a pending message never carries it) and its ``speaker`` in multi-party chat."""

    i: int
    text: str
    reply: Optional[str] = None
    speaker: Optional[str] = None

    def unanswered(self) -> "Message":
        """The message as it is before the assistant replies (no ``reply``)."""
        return self if self.reply is None else Message(self.i, self.text, None, self.speaker)


@dataclass(frozen=True)
class Conversation:
    """The gold-free copy of a session: everything a router may ever learn about it.

    ``messages`` are the user's messages in turn order; ``cards`` the thread cards (used only in
    closed mode).
    """

    session_id: str
    lang: str
    cards: tuple[ThreadCard, ...]
    messages: tuple[Message, ...]


def conversation_of(session: Session) -> Conversation:
    """The allowed fields of ``session``, copied: thread id/title/description/goal, turn
    i/text/assistant reply/speaker."""
    return Conversation(
        session_id=session.session_id,
        lang=session.lang,
        cards=tuple(ThreadCard(t.id, t.title, t.description, t.goal) for t in session.threads),
        messages=tuple(Message(t.i, t.text, t.assistant or None, t.speaker or None) for t in session.turns),
    )


@dataclass(frozen=True)
class RoutedMessage:
    """A message already routed, with the label the system gave it (a topic, CLARIFY or ERROR), the
    assistant's reply to it (where the data has one) and its speaker (multi-party chat)."""

    i: int
    text: str
    label: str
    reply: Optional[str] = None
    speaker: Optional[str] = None


@dataclass(frozen=True)
class TopicView:
    """One of the system's topics: its label, title, card (closed-mode threads) and messages."""

    label: str
    title: str
    card: Optional[ThreadCard]
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class RouterView:
    """What a router is shown when it must route ``pending`` (one message, or a burst of them).

    ``topics`` are in creation order (closed mode: the thread cards first); ``history`` holds every
    earlier message with the label it got; ``current`` is the label of the latest message routed to
    a topic (None before the first). Pending messages never carry a reply (they are stripped of
    one here, whoever builds the view).
    """

    session_id: str
    lang: str
    mode: Mode
    cards: tuple[ThreadCard, ...]
    topics: tuple[TopicView, ...]
    history: tuple[RoutedMessage, ...]
    current: Optional[str]
    pending: tuple[Message, ...]

    def __post_init__(self) -> None:
        if any(m.reply is not None for m in self.pending):
            object.__setattr__(self, "pending", tuple(m.unanswered() for m in self.pending))

    def labels(self) -> list[str]:
        return [t.label for t in self.topics]

    def topic(self, label: str) -> Optional[TopicView]:
        return next((t for t in self.topics if t.label == label), None)

    def pending_text(self) -> str:
        """The pending messages as one text (a burst routed as one unit reads as one message)."""
        return "\n".join(m.text for m in self.pending)

    def step(self, label: str) -> "RouterView":
        """The view after the first pending message went to ``label`` (an existing topic or special).

        For routers that decide a burst message by message and need to see their own earlier
        decisions; a new topic is made only by the runner, which names it.
        """
        if not self.pending:
            raise ValueError("no pending message to route")
        msg, rest = self.pending[0], self.pending[1:]
        topics = self.topics
        current = self.current
        if label not in SPECIAL_LABELS:
            if self.topic(label) is None:
                raise ValueError(f"unknown topic {label!r}")
            topics = tuple(replace(t, messages=t.messages + (msg,)) if t.label == label else t for t in topics)
            current = label
        return replace(
            self,
            topics=topics,
            history=self.history + (RoutedMessage(msg.i, msg.text, label, None, msg.speaker),),
            current=current,
            pending=rest,
        )


@dataclass(frozen=True)
class GoldLabels:
    """Gold for the ``oracle`` policy only: turn -> gold thread (None for a one-off) and gold refs."""

    thread: dict[int, Optional[str]]
    refs: dict[int, tuple[str, ...]]


def gold_of(session: Session) -> GoldLabels:
    return GoldLabels(
        thread={t.i: t.gold.thread for t in session.turns},
        refs={t.i: tuple(t.gold.refs) for t in session.turns},
    )


# --- what a router answers -----------------------------------------------------------------------

DecisionKind = Literal["topic", "new", "clarify", "error"]


@dataclass(frozen=True)
class Decision:
    """Where a message (or a burst routed as one) goes, and how that was decided.

    ``kind``: ``topic`` (an existing ``label``), ``new`` (a new topic called ``title``; inside a
    ``--decide each`` answer ``same_as`` instead names the earlier message of the burst whose new
    topic this one joins), ``clarify`` or ``error`` (with ``error`` saying why). ``refs`` are
    labels of other topics the message draws on (None: the router does not give refs). ``via``
    says how it was decided (``llm``, ``rule-ack``, ``rule-title``, ``baseline``, ...); ``usage``
    (``{input, output, cache_hit}``) and ``elapsed_ms`` describe the model call(s) behind it.
    ``confidence`` is the router's calibrated chance (0..1) that the decision is right, for routers
    that give one (``local``).
    """

    kind: DecisionKind
    label: Optional[str] = None
    title: str = ""
    same_as: Optional[int] = None
    refs: Optional[tuple[str, ...]] = None
    via: str = "baseline"
    usage: Optional[dict[str, int]] = None
    elapsed_ms: Optional[int] = None
    error: Optional[str] = None
    confidence: Optional[float] = None

    @classmethod
    def to_topic(cls, label: str, **kw) -> "Decision":
        return cls("topic", label=label, **kw)

    @classmethod
    def new(cls, title: str = "", **kw) -> "Decision":
        return cls("new", title=title, **kw)

    @classmethod
    def clarify(cls, **kw) -> "Decision":
        return cls("clarify", **kw)

    @classmethod
    def failed(cls, reason: str, **kw) -> "Decision":
        return cls("error", error=reason, **kw)

    def special_label(self) -> Optional[str]:
        """``CLARIFY`` or ``ERROR`` for those kinds, else None."""
        return {"clarify": CLARIFY, "error": ERROR}.get(self.kind)


@dataclass(frozen=True)
class BurstFailure:
    """A ``--decide each`` answer that could not be used; the runner routes the burst one by one.

    ``usage`` and ``elapsed_ms`` are what the failed call cost; they are charged to the burst.
    """

    reason: str
    usage: Optional[dict[str, int]] = None
    elapsed_ms: Optional[int] = None


# --- the protocol --------------------------------------------------------------------------------


@runtime_checkable
class Router(Protocol):
    """A routing policy. ``route`` decides where the view's pending message(s) go, as one unit."""

    policy: str
    uses_model: bool

    async def route(self, view: RouterView) -> Decision: ...


@runtime_checkable
class EachRouter(Router, Protocol):
    """A router that can decide every message of a burst in one go (``--decide each``).

    Returns one decision per pending message, or a :class:`BurstFailure` when it could not.
    A router without ``route_each`` has a burst routed one message at a time.
    """

    async def route_each(self, view: RouterView) -> Union[list[Decision], BurstFailure]: ...


@runtime_checkable
class GoldRouter(Protocol):
    """The oracle's explicit path: it alone is handed gold labels beside the view."""

    policy: str
    uses_model: bool

    async def route_with_gold(self, view: RouterView, gold: GoldLabels) -> Decision: ...


def add_usage(a: Optional[dict[str, int]], b: Optional[dict[str, int]]) -> Optional[dict[str, int]]:
    """The sum of two ``{input, output, cache_hit[, unreported]}`` blocks (None when both are None)."""
    if a is None:
        return None if b is None else dict(b)
    if b is None:
        return dict(a)
    total = {k: a.get(k, 0) + b.get(k, 0) for k in ("input", "output", "cache_hit")}
    if a.get("unreported") or b.get("unreported"):
        total["unreported"] = a.get("unreported", 0) + b.get("unreported", 0)
    return total


def add_ms(a: Optional[int], b: Optional[int]) -> Optional[int]:
    if a is None:
        return b
    if b is None:
        return a
    return a + b


__all__ = [
    "Mode", "ThreadCard", "Message", "Conversation", "conversation_of", "RoutedMessage", "TopicView",
    "RouterView", "GoldLabels", "gold_of", "Decision", "BurstFailure", "Router", "EachRouter",
    "GoldRouter", "add_usage", "add_ms",
]
