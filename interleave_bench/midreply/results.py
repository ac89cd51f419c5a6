"""The mid-reply result row: one JSONL line per case, written by the runner, read back to resume.

A row is self-contained (it repeats the case's language, how, tags and expect), so a results file
can be read, scored or shared without its case file; the runner still scores against the case
file it was given.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from pydantic import Field, field_validator

from ..errors import jsonl_head_of
from ..io import read_records
from ..schema import Record, RowUsage
from .rule import VIAS

#: the two policies: the rule alone (baseline) and the rule around the classifier (shipped)
POLICY_RULE = "rule"
POLICY_CLASSIFIER = "classifier"
POLICIES = (POLICY_RULE, POLICY_CLASSIFIER)


#: whether a file's first bytes are a mid-reply results file's (what ``mid-reply --out`` may resume)
RESULTS_HEAD = jsonl_head_of(("case_id", "via"))


class MidReplyResult(Record):
    """One case's decision.

    ``destination``: where the message went (``running``, a topic id, ``new``); ``via``: how that
    was decided (see :mod:`interleave_bench.midreply.rule`); ``classifier``: the classifier's
    answer as read (``running``, a topic id, ``new``, ``unsure``; null when no call was made, it
    failed, or the answer was unreadable); ``answer``: the raw answer text (null without one);
    ``problem``: why a call failed or an answer was unreadable; ``usage``/``elapsed_ms``: of the
    call (null without one); ``fingerprint``: of the case, its catalog, the policy and the prompt
    and rule versions (a rerun redoes a row whose fingerprint changed).
    """

    case_id: str = Field(min_length=1)
    lang: str
    how: str
    tags: list[str] = Field(default_factory=list)
    running: str
    expect: str
    destination: str
    via: str
    classifier: Optional[str] = None
    answer: Optional[str] = None
    problem: Optional[str] = None
    usage: Optional[RowUsage] = None
    elapsed_ms: Optional[int] = None
    policy: str
    model: Optional[str] = None
    fingerprint: str = ""

    @field_validator("via")
    @classmethod
    def _known_via(cls, v: str) -> str:
        if v not in VIAS:
            raise ValueError(f"{v!r} is not one of {', '.join(VIAS)}")
        return v

    @field_validator("policy")
    @classmethod
    def _known_policy(cls, v: str) -> str:
        if v not in POLICIES:
            raise ValueError(f"{v!r} is not one of {', '.join(POLICIES)}")
        return v


def read_results(path: str | os.PathLike) -> list[MidReplyResult]:
    """Every row of a results file, validated (errors name file, line and field)."""
    return list(read_records(path, MidReplyResult))


def result_row(**fields: Any) -> dict[str, Any]:
    """A result row as plain JSON data in the documented key order (validated on the way)."""
    return MidReplyResult(**fields).model_dump(mode="json")
