"""Small valid records for the foundation's tests."""

from __future__ import annotations

import copy
from typing import Any


def thread(tid: str, title: str, domain: str = "code", **kw: Any) -> dict[str, Any]:
    t = {
        "id": tid,
        "title": title,
        "domain": domain,
        "goal": f"finish {title}",
        "description": f"work on {title}",
        "facts": [{"key": "budget", "value": "300 EUR", "update": None}],
        "constraints": ["no weekends"],
    }
    t.update(kw)
    return t


def turn(i: int, text: str, thread_id: str | None, action: str = "continue", style: str = "explicit", **kw: Any) -> dict[str, Any]:
    t = {
        "i": i,
        "text": text,
        "gold": {"thread": thread_id, "action": action, "refs": []},
        "style": style,
        "tags": [style],
        "judge": {"thread": thread_id if thread_id else "none"},
        "ambiguous": False,
    }
    t.update(kw)
    return t


def session(sid: str = "en-0001", split: str = "dev") -> dict[str, Any]:
    return {
        "session_id": sid,
        "version": "interleave-v0",
        "split": split,
        "lang": "en",
        "persona": "a busy developer",
        "threads": [thread("t1", "Lisbon trip", "travel"), thread("t2", "Flaky CI job", "code")],
        "turns": [
            turn(0, "Planning the Lisbon trip for May.", "t1", "new"),
            turn(1, "Also the flaky CI job keeps failing.", "t2", "new"),
            turn(2, "What is the capital of Peru?", None, "oneoff", "oneoff"),
            turn(3, "ok next", "t2", "continue", "implicit"),
        ],
    }


def clone(obj: Any) -> Any:
    return copy.deepcopy(obj)
