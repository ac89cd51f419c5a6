"""The mid-reply classifier's prompt and the parsing of its answer.

One model call per message: the system prompt (in the case's language) explains the task and the
answer format; the user message carries the situation as a JSON block: the running topic's card,
the running request and its progress so far, the other topics of the catalog, and the new
message with how it was sent. The answer is one JSON object ``{"destination": ...}`` naming
``running``, a topic id, ``new`` or ``unsure``. :func:`parse_answer` reads it robustly (code
fences, prose around the object, bare words, ids in another case) and says why when it cannot.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..errors import clip, shown
from ..schema import MID_REPLY_NEW, MID_REPLY_RUNNING, CatalogTopic, MidReplyCase

#: the request kind sent to the model layer (cache table, fake model's handler)
REQUEST_KIND = "midreply"
#: bump when the prompt text or payload changes, so stored results made with the old one are redone
PROMPT_VERSION = "1"
#: the classifier's word for "cannot decide"
UNSURE = "unsure"
#: other spellings of "cannot decide" a model may use; all mean UNSURE
UNSURE_WORDS = frozenset({UNSURE, "unknown", "undecided", "uncertain", "not sure", "cannot decide", "can't decide", "unclear"})
#: the key the answer object must carry
ANSWER_KEY = "destination"

SYSTEM_EN = """\
You sort messages in a chat where one person works on several topics at once.
A reply is being written right now for one topic: the running work. While it was being written, \
the person sent one more message. Decide where that message belongs:
- "running": it is about the running work or its topic: it changes, narrows, corrects, stops, \
acknowledges or comments on it, answers something it asked, or asks for more of the same topic.
- the id of another topic from the list: it belongs to that topic.
- "new": it belongs to none of the topics.
- "unsure": you cannot tell.
Wording is not a guide on its own: a message about the running work may name another topic's \
people, places or words, and "by the way" or "also" may introduce either a change to the running \
work or another matter. Short fragments usually continue the running work.
"how" is "interjection" when the message arrived while the reply was being written, "queued" when \
it waits to be handled after the reply.
Answer with one JSON object and nothing else, for example {"destination": "running"}."""

SYSTEM_ZH = """\
你负责给聊天消息分流：同一个人在一个对话里同时推进好几件事（话题）。
现在正在为其中一个话题写回复（即“正在进行的工作”）。回复还没写完，用户又发来一条消息。请判断这条消息该归到哪里：
- "running"：属于正在进行的工作或它所在的话题：修改、补充、纠正、叫停、回应它，回答它提的问题，或者让同一话题接着做别的。
- 列表里另一个话题的 id：属于那个话题。
- "new"：不属于任何已有话题。
- "unsure"：无法判断。
不要只看字面：说正在进行的工作时，用户也可能提到别的话题里的人名、地名或词；“对了”“顺便”“另外”后面既可能是对当前工作的修改，也可能是别的事。很短的片段通常是接着当前工作说的。
"how" 为 "interjection" 表示消息是在回复生成过程中插进来的，"queued" 表示消息排队，等这条回复写完再处理。
只回答一个 JSON 对象，不要其他内容，例如 {"destination": "running"}。"""

#: system prompt and the line introducing the situation, by prompt language
PROMPTS = {
    "en": (SYSTEM_EN, "The situation, as JSON:"),
    "zh": (SYSTEM_ZH, "当前情况（JSON）："),
}
#: languages without a prompt of their own get the English one (the case text stays as written)
FALLBACK_LANGUAGE = "en"


def prompt_language(lang: str) -> str:
    """The prompt language for a case language: ``zh-CN`` -> ``zh``; unknown ones -> English."""
    base = lang.lower().replace("_", "-").split("-")[0]
    return base if base in PROMPTS else FALLBACK_LANGUAGE


def _card(t: CatalogTopic) -> dict[str, Any]:
    return {
        "id": t.id,
        "title": t.title,
        "summary": t.summary,
        "entities": list(t.entities),
        "keywords": list(t.keywords),
        "lastState": t.lastState,
    }


def build_payload(case: MidReplyCase, running: CatalogTopic, others: list[CatalogTopic]) -> dict[str, Any]:
    """The situation the classifier sees, as plain JSON data (no expected answer, no tags)."""
    return {
        "running": {
            "topic": _card(running),
            "request": case.running.request,
            "progress": case.running.progress,
        },
        "other_topics": [_card(t) for t in others],
        "message": {"how": case.how, "text": case.text},
    }


def build_messages(case: MidReplyCase, running: CatalogTopic, others: list[CatalogTopic]) -> list[dict[str, str]]:
    """The chat messages of one classifier call, in the case's language."""
    system, intro = PROMPTS[prompt_language(case.lang)]
    payload = json.dumps(build_payload(case, running, others), ensure_ascii=False, indent=1)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{intro}\n```json\n{payload}\n```"},
    ]


def read_payload(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The situation back out of :func:`build_messages` output (for the fake model); None if absent."""
    for m in reversed(messages):
        if m.get("role") != "user":
            continue
        text = str(m.get("content", ""))
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            return None
        try:
            data = json.loads(text[start : end + 1])
        except (json.JSONDecodeError, RecursionError):
            return None
        return data if isinstance(data, dict) else None
    return None


# --- answers --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parsed:
    """A classifier answer read: ``destination`` is ``running``, a topic id, ``new`` or ``unsure``;
    it is ``None`` when the answer could not be read, and ``problem`` says why."""

    destination: str | None
    problem: str | None = None


_FENCE = re.compile(r"```(?:json|JSON)?")
_KEY_VALUE = re.compile(r"""["']?destination["']?\s*[:=]\s*["']?([^"'\s,}]+)""", re.IGNORECASE)
_BARE = re.compile(r"""^[\s"'`*.:]*([^\s"'`*]+?)[\s"'`*.!]*$""")


def _objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object that can be decoded starting at some ``{`` of ``text``, in order."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    pos = text.find("{")
    while pos >= 0:
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
        pos = text.find("{", end)
    return found


def _destination_value(obj: dict[str, Any]) -> tuple[bool, Any]:
    for key, value in obj.items():
        if isinstance(key, str) and key.strip().lower() == ANSWER_KEY:
            return True, value
    return False, None


def normalise_destination(value: Any, topic_ids: list[str], running_id: str) -> Parsed:
    """Map one answered value onto ``running`` / a topic id / ``new`` / ``unsure``, or say why not.

    The running topic's own id means ``running``; ids match exactly first, then ignoring case.
    """
    if value is None:
        return Parsed(UNSURE)
    if not isinstance(value, str):
        return Parsed(None, f"destination is not a string: {clip(json.dumps(value, ensure_ascii=False), 60)}")
    raw = value.strip().strip("\"'`").strip()
    low = raw.lower()
    if low == MID_REPLY_RUNNING:
        return Parsed(MID_REPLY_RUNNING)
    if low == MID_REPLY_NEW:
        return Parsed(MID_REPLY_NEW)
    if low in UNSURE_WORDS or low == "":
        return Parsed(UNSURE)
    matches = [t for t in topic_ids if t == raw] or [t for t in topic_ids if t.lower() == low]
    if len(matches) == 1:
        return Parsed(MID_REPLY_RUNNING if matches[0] == running_id else matches[0])
    return Parsed(None, f"unknown destination {shown(raw, 60)}")


def parse_answer(text: str, topic_ids: list[str], running_id: str) -> Parsed:
    """Read a classifier answer; returns :class:`Parsed` (``destination`` None when unreadable).

    Accepts the JSON object alone, inside a code fence or among prose (the last object that has a
    ``destination`` key wins, since models put examples before the answer), a bare
    ``destination: x``, or a bare word that is a valid destination.
    """
    if not text or not text.strip():
        return Parsed(None, "empty answer")
    cleaned = _FENCE.sub(" ", text)
    objects = _objects(cleaned)
    answered = [v for ok, v in map(_destination_value, objects) if ok]
    if answered:
        return normalise_destination(answered[-1], topic_ids, running_id)
    if objects:
        return Parsed(None, f"JSON object without a {ANSWER_KEY!r} key")
    kv = _KEY_VALUE.findall(cleaned)
    if kv:
        return normalise_destination(kv[-1], topic_ids, running_id)
    bare = _BARE.match(cleaned.strip())
    if bare:
        got = normalise_destination(bare.group(1), topic_ids, running_id)
        if got.destination is not None:
            return got
    snippet = " ".join(text.split())
    return Parsed(None, f"no destination in the answer: {shown(snippet, 80)}")
