"""What your own router is shown and must leave as it is (docs/own_router.md#what-a-router-may-not-do).

A router's view is made of the runner's own objects: the pending :class:`~.base.Message` objects
are the ones the runner records once the router has decided. They are frozen dataclasses, but
``object.__setattr__`` changes them all the same, and a router that changed a pending message's
``i`` or ``text`` had every row written one turn off, or its later views shown the text it wrote;
one that renamed a topic (its :class:`~.base.TopicView`, shown again in later views) and answered
the new name stopped the run with an internal error.
Copying the view for every message would cost every run what only a router from outside can
break, so :class:`PluginRouter <.plugin.PluginRouter>` takes :class:`Shown` before it calls the
router and, once it has answered (or raised), puts back what it changed and fails the decision:
an ``ERROR`` row saying what was changed. The runner writes each row's turn number from the
session itself, whatever a router did to its view.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from .base import RouterView

#: the fields of a pending message the runner records
MESSAGE_FIELDS = ("i", "text", "reply", "speaker")


class Shown:
    """The parts of ``view`` the runner reads back, as they were before the router saw them:
    the pending messages, and the topics' labels. ``labels`` are the run's own topics, in the
    order the view shows them (the runner's, which no router is shown; the view's, as it is now,
    when None): a decision is checked against these, never against the view's, which a router may
    have changed."""

    __slots__ = ("messages", "fields", "topics", "labels")

    def __init__(self, view: RouterView, labels: Optional[Sequence[str]] = None):
        self.messages = view.pending  # the objects themselves (a tuple: a router cannot swap them here)
        self.fields = [(m.i, m.text, m.reply, m.speaker) for m in self.messages]
        self.topics = view.topics
        self.labels = tuple(t.label for t in self.topics) if labels is None else labels

    def restore(self) -> Optional[str]:
        """What the router changed (``message 3's i``, ``topic A's label``), each changed field put
        back as it was; None when it changed nothing."""
        changed: list[str] = []
        for m, was in zip(self.messages, self.fields):
            for name, value in zip(MESSAGE_FIELDS, was):
                if getattr(m, name, _GONE) is not value:
                    object.__setattr__(m, name, value)
                    changed.append(f"message {was[0]}'s {name}")
        for t, label in zip(self.topics, self.labels):  # the runner shows its topics in its own order
            if getattr(t, "label", _GONE) is not label:
                object.__setattr__(t, "label", label)
                changed.append(f"topic {label}'s label")
        return ", ".join(changed) or None


_GONE: Any = object()
