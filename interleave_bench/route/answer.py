"""Validation of the model's routing answers: valid JSON, a known topic or a well-formed new one.

:func:`parse_one` reads ``{"topic": "<id>"|"new", "title": ..., "refs": [...], "clarify": bool}``;
:func:`parse_each` reads ``{"decisions": [...]}`` with one such object per burst message, where
``"new:<n>"`` joins the topic opened by message n of the same burst. Both raise
:class:`AnswerError` with a short problem statement, which the model router sends back to the
model with its retry (so the statement is written for the model to act on).

What a decision may carry is defined here once for every router: :func:`refs_problem` (refs are
distinct other topics), :data:`MAX_VIA_CHARS`, :data:`MAX_TITLE_CHARS` for a model's titles and
:data:`MAX_ERROR_CHARS` for what your own router's ``ERROR`` rows keep of what it said.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional, Sequence

from ..errors import shown
from ..schema import NEW_TOPIC as NEW
from ..schema import NEW_TOPIC_REF as _NEW_REF
from .base import Decision, RouterView

#: a new topic's title longer than this is not a title
MAX_TITLE_CHARS = 100
#: the longest ``via`` a decision may carry: a word for how it was decided (``llm``, ``rule-ack``,
#: ``fallback-local``), never a document copied into every row
MAX_VIA_CHARS = 64
#: the longest ``error`` an ``ERROR`` row of your own router keeps of what it said (cut with ``...``)
MAX_ERROR_CHARS = 500
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)


class AnswerError(ValueError):
    """An answer that cannot be used; ``problem`` says why, in words the model can act on."""

    def __init__(self, problem: str):
        self.problem = problem
        super().__init__(problem)


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object of an answer; a Markdown code fence around it is tolerated, nothing else."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        obj = json.loads(body)
    except (json.JSONDecodeError, RecursionError):
        raise AnswerError("the answer is not valid JSON") from None
    if not isinstance(obj, dict):
        raise AnswerError("the answer must be one JSON object")
    return obj


def _known(view: RouterView) -> str:
    labels = view.labels()
    shown = ", ".join(repr(label) for label in labels[:12]) + (", ..." if len(labels) > 12 else "")
    return f"{shown} or 'new'" if labels else "'new' (there are no topics yet)"


def _refs(obj: dict[str, Any], view: RouterView, where: str) -> tuple[str, ...]:
    raw = obj.get("refs", [])
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(r, (str, int)) and not isinstance(r, bool) for r in raw):
        raise AnswerError(f"{where}\"refs\" must be a list of topic ids")
    out: list[str] = []
    for r in raw:
        ref = str(r).strip()
        if view.topic(ref) is None:
            raise AnswerError(f"{where}\"refs\" names {ref!r}, which is not a topic; use one of {_known(view)}")
        if ref not in out:
            out.append(ref)
    return tuple(out)


def refs_problem(refs: Sequence[str], labels: Sequence[str], chosen: Optional[str]) -> Optional[str]:
    """What is wrong with ``refs`` as the refs of a decision that sends its message to ``chosen`` (a
    topic's label; None for a new topic, ``CLARIFY`` or ``ERROR``) among the topics ``labels``, or
    None: refs are distinct labels of known topics other than ``chosen``, so never more than there
    are topics. A model's answer is made so (:func:`_refs` refuses an unknown topic and drops a
    repeat, :func:`_decision` the chosen topic); a decision of your own router is refused unless it
    is so (:func:`~.plugin.checked`)."""
    if len(refs) > len(labels):
        return f"{len(refs):,} of them, more than the {len(labels)} topics there are"
    known = set(labels)
    seen: set[str] = set()
    for ref in refs:
        if ref not in known:
            return f"{shown(ref)} is not a topic"
        if ref == chosen:
            return f"{shown(ref)} is the topic the message goes to"
        if ref in seen:
            return f"{shown(ref)} is named twice"
        seen.add(ref)
    return None


def _title(obj: dict[str, Any], where: str) -> str:
    title = obj.get("title")
    if not isinstance(title, str) or not title.strip():
        raise AnswerError(f"{where}a \"new\" topic needs a non-empty \"title\"")
    title = " ".join(title.split())
    if len(title) > MAX_TITLE_CHARS:
        raise AnswerError(f"{where}the title is longer than {MAX_TITLE_CHARS} characters")
    return title


def _decision(obj: Any, view: RouterView, where: str, opened: Optional[dict[int, int]] = None) -> Decision:
    """One decision object; ``opened`` (``--decide each``) maps burst message n -> the message whose
    new topic it is in (itself when it opened one), for ``new:<n>``."""
    if not isinstance(obj, dict):
        raise AnswerError(f"{where}a decision must be a JSON object")
    clarify = obj.get("clarify", False)
    if clarify is None:
        clarify = False
    if not isinstance(clarify, bool):
        raise AnswerError(f"{where}\"clarify\" must be true or false")
    if clarify:
        return Decision.clarify(refs=())
    raw = obj.get("topic")
    if raw is None or isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise AnswerError(f"{where}\"topic\" is missing; answer one of {_known(view)}")
    topic = str(raw).strip()
    refs = _refs(obj, view, where)
    if topic.lower() == NEW:
        return Decision.new(_title(obj, where), refs=refs)
    m = _NEW_REF.match(topic.lower())
    if m and opened is not None:
        n = int(m.group(1))
        if n not in opened:
            raise AnswerError(f"{where}{topic!r} does not name an earlier message of this group that opened a new topic")
        return Decision("new", same_as=opened[n] - 1, refs=refs)
    if view.topic(topic) is None:
        raise AnswerError(f"{where}{topic!r} is not a topic; answer one of {_known(view)}")
    return Decision.to_topic(topic, refs=tuple(r for r in refs if r != topic))


def parse_one(text: str, view: RouterView) -> Decision:
    """The decision of a one-decision answer (``via``/usage are the caller's to set)."""
    return _decision(parse_json_object(text), view, "")


def parse_each(text: str, view: RouterView) -> list[Decision]:
    """One decision per pending message of ``view``, in order.

    A decision ``new:<n>`` comes back as ``Decision(kind="new", same_as=k)`` where k is the 0-based
    burst position of the message that opened that topic (chains of ``new:<n>`` are followed).
    """
    obj = parse_json_object(text)
    items = obj.get("decisions")
    if not isinstance(items, list):
        raise AnswerError("the answer needs a \"decisions\" list")
    want = len(view.pending)
    if len(items) != want:
        raise AnswerError(f"\"decisions\" has {len(items)} entries; it needs exactly {want}, one per new message")
    out: list[Decision] = []
    opened: dict[int, int] = {}  # message n (1-based) -> the 1-based message that opened its topic
    for k, item in enumerate(items, start=1):
        where = f"decision {k}: "
        if isinstance(item, dict) and "message" in item and item["message"] != k:
            raise AnswerError(f"{where}\"message\" is {item['message']!r} but decisions must follow the messages in order")
        d = _decision(item, view, where, opened)
        if d.kind == "new":
            opened[k] = k if d.same_as is None else d.same_as + 1
        out.append(d)
    return out
