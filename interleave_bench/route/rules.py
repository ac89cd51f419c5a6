"""The rule fast path of the ``hybrid`` policy: decide the obvious cases without a model call.

Two rules, both safe by construction (they only ever keep or name an existing topic):

- ``rule-ack``: a bare acknowledgement ("ok thanks", "好的") stays in the current topic;
- ``rule-title``: a message that names exactly one topic's title goes to that topic.

Anything else (or a message before any topic exists) goes to the model.
"""

from __future__ import annotations

from typing import Optional

from .base import Decision, RouterView
from ..text import is_bare_ack
from .text import mentioned_titles

VIA_ACK = "rule-ack"
VIA_TITLE = "rule-title"


def fast_path(view: RouterView) -> Optional[Decision]:
    """A decision for the view's pending message(s) when a rule applies, else None.

    A burst routed as one unit is an acknowledgement only if every message in it is one, and
    names a title if its joined text names exactly one.
    """
    if view.current is not None and all(is_bare_ack(m.text) for m in view.pending):
        return Decision.to_topic(view.current, refs=(), via=VIA_ACK)
    titles = {t.label: (t.card.title if t.card is not None else t.title) for t in view.topics}
    hits = mentioned_titles(titles, view.pending_text())
    if len(hits) == 1:
        return Decision.to_topic(hits[0], refs=(), via=VIA_TITLE)
    return None
