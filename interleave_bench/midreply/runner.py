"""Running the mid-reply cases: one decision per case, appended as it is made, resumable.

For each case the shipped rule decides; with the ``classifier`` policy a message that is not a
bare acknowledgement first gets one classifier call. Rows are appended to the results file as
decisions arrive (so an interrupted run loses nothing), and at the end the file is rewritten in
case-file order, so a rerun over cached answers writes the same bytes.

Resuming: a rerun keeps the rows already in the file (each checked first: its decision must
follow from its own record by the rule, :func:`~.results.decision_problem`, else the file is
refused) and decides only the cases that lack one, whose row is stale (the case, its catalog, the
prompt or the rule changed) or whose call failed or answer could not be read (a failure is worth
another try; an unreadable answer is removed from the response cache, which makes every other call
free). A results file made by another policy or model, or holding cases the case file does not
have, is refused rather than mixed.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..errors import UsageError
from ..io import JsonlAppender, read_records_with_lines, truncate_partial_line, write_jsonl
from ..llm import LLM, ModelCallError
from ..progress import progress
from ..schema import MidReplyCase, MidReplyCaseFile
from .cases import case_fingerprint, catalog_of, other_topics, running_topic
from .metrics import Item
from .prompt import PROMPT_VERSION, REQUEST_KIND, build_messages
from .results import POLICY_CLASSIFIER, POLICY_RULE, MidReplyResult, check_decisions, result_row
from ..text import is_bare_ack
from .rule import RULE_VERSION, VIA_ERROR, VIA_UNPARSABLE, VIAS, ClassifierOutcome, decide, read_outcome

#: the classifier answers one short JSON object; greedy decoding makes reruns repeatable
CLASSIFIER_TEMPERATURE = 0.0
#: rows a rerun decides again: the call failed, or its answer could not be read (and was dropped
#: from the cache); either is a failure of the run, not a decision of the classifier
RETRIED_VIAS = (VIA_ERROR, VIA_UNPARSABLE)


def select_cases(f: MidReplyCaseFile, langs: Sequence[str] | None = None, limit: int | None = None) -> list[MidReplyCase]:
    """The cases to run: those of ``langs`` (all when None), then the first ``limit`` of them."""
    cases = [c for c in f.cases if not langs or c.lang in langs]
    return cases[:limit] if limit is not None else cases


def _fingerprint(f: MidReplyCaseFile, case: MidReplyCase, policy: str) -> str:
    versions = [policy, f"rule-{RULE_VERSION}"]
    if policy == POLICY_CLASSIFIER:
        versions.append(f"prompt-{PROMPT_VERSION}")
    return case_fingerprint(f, case, *versions)


def _row(f: MidReplyCaseFile, case: MidReplyCase, policy: str, model: str | None, **decided: Any) -> dict[str, Any]:
    return result_row(
        case_id=case.id,
        lang=case.lang,
        how=case.how,
        tags=list(case.tags),
        running=case.running.topicId,
        expect=case.expect,
        policy=policy,
        model=model,
        fingerprint=_fingerprint(f, case, policy),
        **decided,
    )


def rule_only_row(f: MidReplyCaseFile, case: MidReplyCase) -> dict[str, Any]:
    """The baseline's row: the rule with no classifier (everything stays with the running work)."""
    d = decide(case.text, None)
    return _row(f, case, POLICY_RULE, None, destination=d.destination, via=d.via)


async def classifier_row(llm: LLM | None, f: MidReplyCaseFile, case: MidReplyCase, model: str) -> dict[str, Any]:
    """The shipped policy's row: a bare acknowledgement stays with no call; otherwise one
    classifier call, then the rule. A failed call or unreadable answer stays and is recorded.

    ``llm`` may be None only when ``case`` is a bare acknowledgement (no call is needed).
    """
    if is_bare_ack(case.text):
        d = decide(case.text, None)
        return _row(f, case, POLICY_CLASSIFIER, model, destination=d.destination, via=d.via)
    if llm is None:
        raise ValueError(f"case {case.id}: a classifier call needs a model")
    running = running_topic(f, case)
    messages = build_messages(case, running, other_topics(f, case))
    try:
        reply = await llm.complete(REQUEST_KIND, messages, temperature=CLASSIFIER_TEMPERATURE, what=f"case {case.id}")
    except ModelCallError as exc:
        d = decide(case.text, ClassifierOutcome(None, VIA_ERROR))
        return _row(f, case, POLICY_CLASSIFIER, model, destination=d.destination, via=d.via, problem=exc.reason)
    outcome, parsed = read_outcome(reply.text, [t.id for t in catalog_of(f, case)], case.running.topicId)
    if outcome.failure is not None:
        llm.reject(reply)  # replayed from the cache it could never be read: the next run asks again
    d = decide(case.text, outcome)
    return _row(
        f, case, POLICY_CLASSIFIER, model,
        destination=d.destination,
        via=d.via,
        classifier=parsed.destination,
        answer=reply.text,
        problem=parsed.problem,
        usage=reply.usage.as_row(),
        elapsed_ms=reply.elapsed_ms,
    )


@dataclass
class Plan:
    """What a run has to do: rows it keeps from an earlier run and cases it still has to decide."""

    kept: dict[str, dict[str, Any]]
    todo: list[MidReplyCase]
    redone: int = 0  # rows dropped because stale or failed
    other_rows: dict[str, dict[str, Any]] = field(default_factory=dict)  # rows of unselected cases

    def needs_model(self) -> bool:
        """True when some remaining case needs a classifier call (not only acknowledgements)."""
        return any(not is_bare_ack(c.text) for c in self.todo)


class MidReplyRun:
    """One run of a policy over selected cases into one results file."""

    def __init__(
        self,
        case_file: MidReplyCaseFile,
        cases: Sequence[MidReplyCase],
        out: str | os.PathLike,
        *,
        policy: str,
        model: str | None = None,
    ):
        if policy not in (POLICY_RULE, POLICY_CLASSIFIER):
            raise ValueError(f"unknown policy {policy!r}")
        self.case_file = case_file
        self.cases = list(cases)
        self.out = Path(out)
        self.policy = policy
        self.model = model if policy == POLICY_CLASSIFIER else None
        self.plan: Plan | None = None
        self.fresh: list[dict[str, Any]] = []

    # --- resume ----------------------------------------------------------------------------------

    def prepare(self) -> Plan:
        """Read what an earlier run left in the results file and decide what is left to do.

        Raises :class:`UsageError` when the file belongs to another policy, model or case set, and
        :class:`~interleave_bench.errors.InputErrors` naming the line and field of each row it would
        keep whose decision does not follow from its own record (:func:`~.results.decision_problem`),
        leaving the file as it was. Stale and failed rows are removed from the file (rewritten
        atomically) before anything is appended.
        """
        known = {c.id: c for c in self.case_file.cases}
        selected = {c.id for c in self.cases}
        rows: dict[str, tuple[int, MidReplyResult]] = {}
        read = 0
        truncate_partial_line(self.out)  # a run killed mid-write leaves half a line
        if self.out.exists():
            for line, r in read_records_with_lines(self.out, MidReplyResult):
                read += 1
                if r.policy != self.policy or (r.model or None) != self.model:
                    raise UsageError(
                        f"{self.out}: holds results of policy {r.policy!r}"
                        f"{' with model ' + repr(r.model) if r.model else ''}, not of this run "
                        f"(policy {self.policy!r}{' with model ' + repr(self.model) if self.model else ''}); "
                        "choose another --out or remove the file"
                    )
                if r.case_id not in known:
                    raise UsageError(
                        f"{self.out}: holds case {r.case_id!r}, which the case file does not have; "
                        "it belongs to another case set: choose another --out"
                    )
                rows[r.case_id] = (line, r)  # a later row of a case replaces an earlier one
        kept: dict[str, dict[str, Any]] = {}
        others: dict[str, dict[str, Any]] = {}
        redone = 0
        keeping: list[tuple[int, MidReplyResult]] = []
        for cid, (line, r) in rows.items():
            current = r.fingerprint == _fingerprint(self.case_file, known[cid], self.policy)
            if not current or r.via in RETRIED_VIAS:
                redone += 1
                continue
            keeping.append((line, r))
            (kept if cid in selected else others)[cid] = r.model_dump(mode="json")
        # a kept row is scored again: its decision must follow from its own record, as a run made it
        check_decisions(str(self.out), keeping, self.case_file)
        if redone or read != len(rows):
            self._rewrite({**others, **kept})
        todo = [c for c in self.cases if c.id not in kept]
        self.plan = Plan(kept=kept, todo=todo, redone=redone, other_rows=others)
        return self.plan

    # --- deciding --------------------------------------------------------------------------------

    def run_rule(self) -> None:
        """Decide every remaining case with the rule alone (no model)."""
        plan = self._need_plan()
        with JsonlAppender(self.out) as out:
            for case in progress(plan.todo, total=len(plan.todo), desc="mid-reply", unit="case"):
                row = rule_only_row(self.case_file, case)
                out.append(row)
                self.fresh.append(row)

    async def run_classifier(self, llm: LLM | None) -> None:
        """Decide every remaining case with the classifier and the rule, calls running concurrently.

        ``llm`` may be None when :meth:`Plan.needs_model` is false (only acknowledgements are left).
        """
        plan = self._need_plan()
        if self.model is None:
            raise ValueError("the classifier policy needs a model name")
        model = self.model
        bar = progress(total=len(plan.todo), desc="mid-reply", unit="case")
        with JsonlAppender(self.out) as out:

            async def one(case: MidReplyCase) -> None:
                row = await classifier_row(llm, self.case_file, case, model)
                out.append(row)
                self.fresh.append(row)
                bar.update(1)

            try:
                await asyncio.gather(*(one(c) for c in plan.todo))
            finally:
                bar.close()

    def finished(self) -> int:
        """Selected cases whose rows the file holds and a rerun keeps: kept from earlier runs, or
        decided now by a call that did not fail (:data:`RETRIED_VIAS` are asked again)."""
        return len(self._need_plan().kept) + sum(1 for r in self.fresh if r["via"] not in RETRIED_VIAS)

    # --- results ---------------------------------------------------------------------------------

    def finish(self) -> list[dict[str, Any]]:
        """Rewrite the results file in case-file order; returns the rows of the selected cases, in order."""
        plan = self._need_plan()
        by_id = {**plan.other_rows, **plan.kept, **{r["case_id"]: r for r in self.fresh}}
        self._rewrite(by_id)
        return [by_id[c.id] for c in self.cases if c.id in by_id]

    def _rewrite(self, by_id: dict[str, dict[str, Any]]) -> None:
        order = [c.id for c in self.case_file.cases]
        write_jsonl(self.out, [by_id[cid] for cid in order if cid in by_id])

    def _need_plan(self) -> Plan:
        if self.plan is None:
            raise RuntimeError("call prepare() first")
        return self.plan


def items_for(case_file: MidReplyCaseFile, cases: Sequence[MidReplyCase], rows: Sequence[dict[str, Any]]) -> list[Item]:
    """Metric items for ``rows``, scored against the case file (its expect, language, how, tags)."""
    by_id = {c.id: c for c in cases}
    return [
        Item(
            pred=r["destination"],
            expect=by_id[r["case_id"]].expect,
            lang=by_id[r["case_id"]].lang,
            how=by_id[r["case_id"]].how,
            tags=tuple(by_id[r["case_id"]].tags),
        )
        for r in rows
    ]


def via_counts(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How many rows each ``via`` decided, in the order of :data:`~.rule.VIAS` (zeros left out)."""
    counts = Counter(r["via"] for r in rows)
    return {v: counts[v] for v in VIAS if counts[v]}
