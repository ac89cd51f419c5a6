"""What your own router is shown and must leave as it is (docs/own_router.md#what-a-router-may-not-do).

A router's view is made of the runner's own objects: the pending :class:`~.base.Message` objects
are the ones the runner records once the router has decided. They are frozen dataclasses, but
``object.__setattr__`` changes them all the same, and a router that changed a pending message's
``i`` or ``text`` had every row written one turn off, or its later views shown the text it wrote.
Copying the view for every message would cost every run what only a router from outside can
break, so :class:`PluginRouter <.plugin.PluginRouter>` takes :class:`Shown` before it calls the
router and, once it has answered (or raised), puts back what it changed and fails the decision:
an ``ERROR`` row saying what was changed. The runner writes each row's turn number from the
session itself, whatever a router did to its view.
"""

from __future__ import annotations

from typing import Any, Optional

from .base import RouterView

#: the fields of a pending message the runner records
MESSAGE_FIELDS = ("i", "text", "reply", "speaker")


class Shown:
    """The parts of ``view`` the runner reads back, as they were before the router saw them."""

    __slots__ = ("messages", "fields")

    def __init__(self, view: RouterView):
        self.messages = view.pending  # the objects themselves (a tuple: a router cannot swap them here)
        self.fields = [(m.i, m.text, m.reply, m.speaker) for m in self.messages]

    def restore(self) -> Optional[str]:
        """What the router changed (``message 3's i``), each changed field put back as it was;
        None when it changed nothing."""
        changed: list[str] = []
        for m, was in zip(self.messages, self.fields):
            for name, value in zip(MESSAGE_FIELDS, was):
                if getattr(m, name, _GONE) is not value:
                    object.__setattr__(m, name, value)
                    changed.append(f"message {was[0]}'s {name}")
        return ", ".join(changed) or None


_GONE: Any = object()
