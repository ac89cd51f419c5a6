"""The payload of a routing request: what the model is shown, built from a :class:`RouterView`.

The user message is one JSON object (the system prompt explains its fields): the mode, the topics
(id, title, message count, latest messages; declared threads add description and goal), the latest
messages of the conversation with the topic each went to (and, where the data has them, the
assistant's reply to each and who wrote it), the current topic, and the new message(s) numbered
from 1. Texts and replies are cut to :data:`MAX_TEXT_CHARS`, and only the latest
:data:`RECENT_MESSAGES` messages carry theirs, so a long chat keeps a bounded prompt.
"""

from __future__ import annotations

import json
from typing import Any

from .base import RoutedMessage, RouterView, TopicView
from .prompt import system_prompt

#: latest messages of the chat shown with their topics: enough to follow a back-and-forth
RECENT_MESSAGES = 8
#: latest messages shown per topic: what the topic is about now
TOPIC_RECENT = 3
#: characters kept of each message shown (the new messages are never cut)
MAX_TEXT_CHARS = 300


def _cut(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def topic_entry(t: TopicView, mode: str) -> dict[str, Any]:
    """One topic as the model sees it."""
    entry: dict[str, Any] = {"id": t.label, "title": t.card.title if t.card is not None else t.title}
    if t.card is not None:
        entry["description"] = t.card.description
        entry["goal"] = t.card.goal
    entry["messages"] = len(t.messages)
    if mode == "open" and len(t.messages) > TOPIC_RECENT:
        # an open-mode topic is known only by its messages; its first one usually states the subject
        entry["first"] = _cut(t.messages[0].text)
    entry["recent"] = [_cut(m.text) for m in t.messages[-TOPIC_RECENT:]]
    return entry


def conversation_entry(m: RoutedMessage) -> dict[str, Any]:
    """One earlier message of the chat as the model sees it: its topic, speaker, text and reply."""
    entry: dict[str, Any] = {"topic": m.label}
    if m.speaker is not None:
        entry["speaker"] = m.speaker
    entry["text"] = _cut(m.text)
    if m.reply is not None:
        entry["reply"] = _cut(m.reply)
    return entry


def build_payload(view: RouterView) -> dict[str, Any]:
    """The JSON object the model routes from."""
    return {
        "mode": view.mode,
        "topics": [topic_entry(t, view.mode) for t in view.topics],
        "conversation": [conversation_entry(m) for m in view.history[-RECENT_MESSAGES:]],
        "current": view.current,
        "new": [{"n": k + 1, "text": m.text} for k, m in enumerate(view.pending)],
    }


def build_messages(view: RouterView, *, each: bool) -> list[dict[str, str]]:
    """The chat messages of a routing request: the system prompt in the data's language, the payload."""
    return [
        {"role": "system", "content": system_prompt(view.lang, view.mode, each)},
        {"role": "user", "content": json.dumps(build_payload(view), ensure_ascii=False, indent=1)},
    ]
