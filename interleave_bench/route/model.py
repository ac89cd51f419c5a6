"""The model router (``llm`` policy) and its rule-first variant (``hybrid``).

One model call per routing unit with the project's prompt (:mod:`.prompt`) and payload
(:mod:`.payload`); the answer is validated (:mod:`.answer`). An unusable answer is retried once
with a corrective message; a second unusable answer, or a call that fails after the client's own
retries, gives an ``ERROR`` decision with the reason, and the run goes on (unless no call of the
run has succeeded yet: after :data:`ABORT_AFTER_FAILURES` such failures the run stops). ``hybrid`` first tries
the rule fast path (:mod:`.rules`) and calls the model only when no rule applies; ``hybrid`` with a threshold instead asks the ``local`` router
(:mod:`.local`) and calls the model only when its confidence is below the threshold. Answers given up on
(an ``ERROR`` decision, a burst answer that falls back) are removed from the response cache, so a
later run asks the model again instead of replaying them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional, Union

from ..errors import UsageError
from ..llm import LLM, ModelCallError, Reply
from .answer import AnswerError, parse_each, parse_one
from .base import BurstFailure, Decision, RouterView, add_ms, add_usage
from .local import LocalRouter
from .payload import build_messages
from .prompt import fix_message
from .rules import fast_path

#: request kind of a one-decision routing call (the fake model's handler and the cache table)
ROUTE_KIND = "route"
#: request kind of a one-decision-per-message burst call (``--decide each``)
ROUTE_EACH_KIND = "route-each"
VIA_LLM = "llm"
#: ``via`` of a row whose model call failed outright (no answer to read)
VIA_ERROR = "error"
#: when this many calls fail outright before any succeeds, the endpoint, key or model is wrong:
#: stop rather than write a file of ERROR rows (a later failure is one ERROR row and the run goes on)
ABORT_AFTER_FAILURES = 8


def local_decides(confidence: Optional[float], threshold: float) -> bool:
    """Whether ``hybrid --threshold`` keeps ``local``'s decision of this confidence (it reaches the
    threshold) rather than asking the model: the one rule a threshold run's rows follow."""
    return confidence is not None and confidence >= threshold


class ModelRouter:
    """``llm`` (every unit goes to the model) or ``hybrid``: with ``rules=True`` the rule fast path
    first, or with ``local`` and ``threshold`` the local router's decision when its confidence is
    at least ``threshold``."""

    uses_model = True

    def __init__(self, llm: LLM, *, rules: bool = False, local: Optional[LocalRouter] = None,
                 threshold: Optional[float] = None):
        if (local is None) != (threshold is None):
            raise ValueError("local and threshold go together")
        if rules and local is not None:
            raise ValueError("one fast path: rules or local, not both")
        self.llm = llm
        self.rules = rules
        self.local = local
        self.threshold = threshold
        self.policy = "hybrid" if (rules or local is not None) else "llm"
        self.model = llm.model  # written on every row, so scores and leaderboards name the model
        self.answered = 0
        self.failed = 0

    async def _complete(self, kind: str, messages: list[dict[str, str]], *, attempt: int, what: str):
        """One call; counts outcomes and stops the run when every call so far has failed."""
        try:
            reply = await self.llm.complete(kind, messages, attempt=attempt, what=what)
        except ModelCallError as exc:
            self.failed += 1
            if not self.answered and self.failed >= ABORT_AFTER_FAILURES:
                raise UsageError(
                    f"the first {self.failed} model calls all failed (last: {exc.reason}); stopping: "
                    "check the endpoint, key and model name"
                ) from None
            raise
        self.answered += 1
        return reply

    def _forget(self, replies: list[Reply]) -> None:
        """Drop the cached answers the router gave up on: replayed, they would fail the same way."""
        for reply in replies:
            self.llm.reject(reply)

    def fast(self, view: RouterView) -> Optional[Decision]:
        """The fast path's decision for the pending unit (rules, or a confident local decision),
        or None when the model must decide."""
        if self.rules:
            return fast_path(view)
        if self.local is not None:
            assert self.threshold is not None
            decided = self.local.decide(view)
            if local_decides(decided.confidence, self.threshold):
                return decided
        return None

    async def route(self, view: RouterView) -> Decision:
        decided = self.fast(view)
        if decided is not None:
            return decided
        return await self.ask_one(view)

    async def ask_one(self, view: RouterView) -> Decision:
        """One decision from the model for the pending unit: retried once if unusable, else ERROR."""
        messages = build_messages(view, each=False)
        what = _what(view)
        usage: Optional[dict[str, int]] = None
        elapsed: Optional[int] = None
        unusable: list[Reply] = []
        for attempt in (0, 1):
            try:
                reply = await self._complete(ROUTE_KIND, messages, attempt=attempt, what=what)
            except ModelCallError as exc:
                self._forget(unusable)
                via = VIA_LLM if usage is not None else VIA_ERROR
                return Decision.failed(f"model call failed: {exc.reason}", via=via, usage=usage, elapsed_ms=elapsed)
            usage = add_usage(usage, reply.usage.as_row())
            elapsed = add_ms(elapsed, reply.elapsed_ms)
            try:
                decision = parse_one(reply.text, view)
            except AnswerError as exc:
                unusable.append(reply)
                if attempt == 0:
                    messages = messages + [
                        {"role": "assistant", "content": reply.text},
                        {"role": "user", "content": fix_message(view.lang, exc.problem)},
                    ]
                    continue
                self._forget(unusable)
                return Decision.failed(f"invalid answer after one retry: {exc.problem}", via=VIA_LLM,
                                       usage=usage, elapsed_ms=elapsed)
            return replace(decision, via=VIA_LLM, usage=usage, elapsed_ms=elapsed)
        raise AssertionError("unreachable")  # pragma: no cover

    async def route_each(self, view: RouterView) -> Union[list[Decision], BurstFailure]:
        """One decision per pending message from a single call (``--decide each``).

        ``hybrid`` first tries its fast path message by message; when it settles the whole burst with
        existing topics no call is made. An unusable answer or a failed call is a :class:`BurstFailure` (no retry:
        the runner falls back to routing the burst one message at a time).
        """
        if self.rules or self.local is not None:
            settled = _fast_for_each(self, view)
            if settled is not None:
                return settled
        try:
            reply = await self._complete(ROUTE_EACH_KIND, build_messages(view, each=True), attempt=0, what=_what(view))
        except ModelCallError as exc:
            return BurstFailure(f"model call failed: {exc.reason}")
        usage = reply.usage.as_row()
        try:
            decisions = parse_each(reply.text, view)
        except AnswerError as exc:
            self._forget([reply])
            return BurstFailure(f"invalid answer: {exc.problem}", usage=usage, elapsed_ms=reply.elapsed_ms)
        return [
            replace(d, via=VIA_LLM, usage=usage if k == 0 else None, elapsed_ms=reply.elapsed_ms)
            for k, d in enumerate(decisions)
        ]


def _fast_for_each(router: ModelRouter, view: RouterView) -> Optional[list[Decision]]:
    """Fast-path decisions naming existing topics for every message of the burst in turn, or None
    if one needs the model (or would open a topic)."""
    out: list[Decision] = []
    v = view
    while v.pending:
        d = router.fast(replace(v, pending=v.pending[:1]))
        if d is None or d.label is None:
            return None
        out.append(d)
        v = v.step(d.label)
    return out


def _what(view: RouterView) -> str:
    turns = [m.i for m in view.pending]
    where = f"turn {turns[0]}" if len(turns) == 1 else f"turns {turns[0]}-{turns[-1]}"
    return f"{view.session_id} {where}"
