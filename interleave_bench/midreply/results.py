"""The mid-reply result row: one JSONL line per case, written by the runner, read back to resume.

A row is self-contained (it repeats the case's language, how, tags and expect), so a results file
can be read, scored or shared without its case file; the runner still scores against the case
file it was given. A row's decision is never taken as written: whoever scores a file (a rerun of
``mid-reply``, the board) derives it again from the row's own record by the shipped rule
(:func:`decision_problem`) and refuses a row that says otherwise.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Optional

from pydantic import Field, field_validator

from ..errors import InputError, InputErrors, jsonl_head_of
from ..io import read_records
from ..schema import MidReplyCase, MidReplyCaseFile, Record, RowUsage
from .cases import catalog_of
from .rule import VIA_ACK, VIA_ERROR, VIAS, ClassifierOutcome, decide, read_outcome

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


def decision_problem(row: MidReplyResult, case_file: MidReplyCaseFile, case: MidReplyCase) -> Optional[tuple[str, str]]:
    """Where ``row``'s decision does not follow from its own record, as ``(field, why)``; None when it does.

    The decision is derived again as the run derives it, by the shipped rule
    (:func:`~.rule.decide`) on the case's message (``case``, of ``case_file``): with the ``rule``
    policy, the rule alone; with the classifier, the row's own ``answer`` read as a run reads it
    (:func:`~.rule.read_outcome`: a destination, ``unsure``, or ``unparsable``), and a row with no
    answer as a failed call (``error``). Its ``via``, ``classifier`` and ``destination`` must be
    what that gives: a destination the row's own answer does not lead to, a ``via: classifier``
    over an answer that reads ``unsure``, a bare acknowledgement said to be the classifier's, are
    each named by their field.
    """
    classifier: Optional[str] = None
    if row.policy == POLICY_RULE:
        outcome, basis = None, "no classifier (policy rule)"
    elif row.answer is None:
        outcome, basis = ClassifierOutcome(None, VIA_ERROR), "a failed call (the row has no answer)"
    else:
        outcome, parsed = read_outcome(row.answer, [t.id for t in catalog_of(case_file, case)], case.running.topicId)
        classifier = parsed.destination
        basis = f"the row's own answer, {'read as ' + repr(classifier) if classifier else 'which cannot be read'}"
    d = decide(case.text, outcome)
    if d.via == VIA_ACK:  # decided before any call: no answer of the classifier is read
        classifier, basis = None, f"the message of case {case.id!r}, a bare acknowledgement (no call)"
    for field, stated, derived in (("via", row.via, d.via), ("classifier", row.classifier, classifier),
                                   ("destination", row.destination, d.destination)):
        if stated != derived:
            return field, f"says {stated!r}, but the rule gives {derived!r} from {basis}"
    return None


def check_decisions(path: str, rows: Iterable[tuple[int, MidReplyResult]], case_file: MidReplyCaseFile) -> None:
    """Raise :class:`InputErrors` naming the line and field of every row (``(line, row)``, each of a
    case of ``case_file``) whose decision does not follow from its own record (:func:`decision_problem`)."""
    cases = {c.id: c for c in case_file.cases}
    problems = []
    for line, r in rows:
        found = decision_problem(r, case_file, cases[r.case_id])
        if found is not None:
            problems.append(InputError(path, line, *found))
    if problems:
        raise InputErrors(problems)
