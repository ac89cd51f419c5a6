"""The shipped mid-reply rule: when in doubt, a message stays with the running work.

A message that arrives while a reply runs is sent elsewhere only when the classifier says so
clearly. Everything else stays with the running work:

- a bare acknowledgement ("ok", "thanks!", "好的", "👍"), decided before and without a model call;
- a message the classifier keeps (``running``);
- a message the classifier cannot decide (``unsure``);
- a message whose call failed or whose answer could not be read (recorded as such).

Staying is the safe failure: a change to the running work sent elsewhere is lost to the work
(the reply carries on without it), while another matter kept with the running work is at worst
answered in the wrong place, where the person sees it at once. ``--rule-only`` applies this rule
with no classifier at all, so every message stays: the baseline a classifier has to beat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..schema import MID_REPLY_RUNNING
from ..text import is_bare_ack
from .prompt import UNSURE, Parsed, parse_answer

#: bump when the rule (or the acknowledgement list) changes, so stored results are redone
RULE_VERSION = "2"

# How a decision was reached (the ``via`` of a result row).
VIA_ACK = "ack"  # a bare acknowledgement: stays, no call made
VIA_CLASSIFIER = "classifier"  # the classifier's answer was followed (running, a topic, or new)
VIA_UNSURE = "unsure"  # the classifier could not decide: stays
VIA_UNPARSABLE = "unparsable"  # the answer could not be read: stays
VIA_ERROR = "error"  # the call failed after every retry: stays
VIA_RULE_ONLY = "rule-only"  # no classifier (the baseline): stays
VIAS = (VIA_ACK, VIA_CLASSIFIER, VIA_UNSURE, VIA_UNPARSABLE, VIA_ERROR, VIA_RULE_ONLY)

@dataclass(frozen=True)
class ClassifierOutcome:
    """What the classifier gave for one message.

    ``destination``: ``running``, a topic id, ``new`` or ``unsure`` when the answer was read;
    ``None`` when the call failed (``failure`` = ``error``) or the answer was unreadable
    (``failure`` = ``unparsable``).
    """

    destination: str | None
    failure: str | None = None

    def __post_init__(self) -> None:
        if (self.destination is None) == (self.failure is None):
            raise ValueError("a classifier outcome has either a destination or a failure")
        if self.failure not in (None, VIA_ERROR, VIA_UNPARSABLE):
            raise ValueError(f"unknown failure {self.failure!r}")


def read_outcome(answer: str, topic_ids: Sequence[str], running_id: str) -> tuple[ClassifierOutcome, Parsed]:
    """What a classifier's answer text gives the rule: its destination as read
    (:func:`~.prompt.parse_answer`), or the ``unparsable`` failure when it cannot be read; with the
    reading itself (its ``problem``). The one way an answer becomes an outcome: a run reads each
    answer through here, and a results file's rows are checked through here
    (:func:`~.results.decision_problem`)."""
    parsed = parse_answer(answer, list(topic_ids), running_id)
    if parsed.destination is None:
        return ClassifierOutcome(None, VIA_UNPARSABLE), parsed
    return ClassifierOutcome(parsed.destination), parsed


@dataclass(frozen=True)
class Decision:
    """Where the message goes (``running``, a topic id or ``new``) and how that was decided (``via``)."""

    destination: str
    via: str


def decide(text: str, outcome: ClassifierOutcome | None) -> Decision:
    """Apply the shipped rule to one message; ``outcome`` is None when no classifier ran.

    A bare acknowledgement stays whatever the classifier said. Otherwise the classifier's
    ``running``, topic id or ``new`` is followed, and ``unsure``, a failed call or an unreadable
    answer stays with the running work.
    """
    if is_bare_ack(text):
        return Decision(MID_REPLY_RUNNING, VIA_ACK)
    if outcome is None:
        return Decision(MID_REPLY_RUNNING, VIA_RULE_ONLY)
    if outcome.failure is not None:
        return Decision(MID_REPLY_RUNNING, outcome.failure)
    if outcome.destination == UNSURE:
        return Decision(MID_REPLY_RUNNING, VIA_UNSURE)
    return Decision(str(outcome.destination), VIA_CLASSIFIER)
