"""Small hand-written v1 sessions for the facts tests (README.md#file-formats, docs/generate.md#v1-replies-fact-episodes-timeline-and-probes).

One scripted session of three topics covers every fact type and probe category: a stated budget
that is updated (cross + stale), a deposit the assistant proposes and the user accepts, a guest count
the assistant proposes and the user rejects, and a salary that is withdrawn (cross + stale, gold
null). ``gold_at`` and ``decoys_at`` compute a probe's gold and decoys from the timeline, as the
generator does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from interleave_bench.schema import probe_question

THREADS = [
    {"id": "move", "title": "Office move", "domain": "work", "goal": "", "description": "",
     "facts": [{"key": "budget", "value": "700 EUR", "update": "900 EUR", "alternative": None},
               {"key": "deposit", "value": "300 EUR", "update": None, "alternative": None}], "constraints": []},
    {"id": "party", "title": "Team party", "domain": "social", "goal": "", "description": "",
     "facts": [{"key": "guest_count", "value": "25 people", "update": None, "alternative": "40 people"}],
     "constraints": []},
    {"id": "hire", "title": "New hire", "domain": "work", "goal": "", "description": "",
     "facts": [{"key": "salary_ask", "value": "5000 EUR", "update": None, "alternative": None}], "constraints": []},
]

# (thread, action, user, assistant, fact step or None); each step in a phrasing of the offline writer
SCRIPT: list[tuple[str, str, str, str, Optional[dict[str, Any]]]] = [
    ("move", "new", "Let's plan the Office move.", "Sure, where are we going?", None),
    ("move", "continue", "The budget is 700 EUR.", "Noted.", {"key": "budget", "kind": "intro", "value": "700 EUR"}),
    ("party", "new", "Now the Team party. What would you suggest for the guest count?",
     "My proposal for the guest count: 40 people.", {"key": "guest_count", "kind": "propose", "value": "40 people"}),
    ("move", "switch", "Could you propose a deposit?", "My proposal for the deposit: 300 EUR.",
     {"key": "deposit", "kind": "propose", "value": "300 EUR"}),
    ("party", "switch", "I'll pass on 40 people: the guest count is 25 people.", "Fine.",
     {"key": "guest_count", "kind": "reject", "value": "25 people"}),
    ("move", "switch", "Sounds good, let's go with that for the deposit.", "Done.",
     {"key": "deposit", "kind": "accept", "value": "300 EUR"}),
    ("hire", "new", "About the New hire: the salary ask is 5000 EUR.", "Got it.",
     {"key": "salary_ask", "kind": "intro", "value": "5000 EUR"}),
    ("party", "switch", "Book the venue for the party.", "Will do.", None),
    ("hire", "switch", "Draft the job ad.", "Drafting.", None),
    ("move", "switch", "Correction: the budget is 900 EUR, not 700 EUR.", "Updated.",
     {"key": "budget", "kind": "update", "value": "900 EUR"}),
    ("party", "switch", "Send the invites.", "Sent.", None),
    ("move", "switch", "Book the movers.", "Booked.", None),
    ("hire", "switch", "I'm withdrawing the salary ask I mentioned, it's back to undecided.", "Withdrawn.",
     {"key": "salary_ask", "kind": "retract", "value": None}),
    ("party", "switch", "Order food.", "Ordered.", None),
]
STATUS = {"propose": "proposed", "retract": "retracted"}
# (after, asking thread, source, key, category)
PROBES = [
    (2, "move", "party", "guest_count", "proposal"),
    (3, "party", "move", "deposit", "proposal"),
    (5, "move", "party", "guest_count", "rejected"),
    (6, "hire", "move", "deposit", "accepted"),
    (7, "party", "move", "budget", "cross"),
    (8, "party", "hire", "salary_ask", "cross"),
    (10, "party", "move", "budget", "stale"),
    (13, "party", "hire", "salary_ask", "stale"),
]


def timeline() -> list[dict[str, Any]]:
    out = []
    for i, (thread, _, _, _, step) in enumerate(SCRIPT):
        if step:
            out.append({"thread": thread, "key": step["key"], "turn": i, "kind": step["kind"],
                        "status": STATUS.get(step["kind"], "confirmed"), "value": step["value"]})
    return out


def gold_at(events: list[dict[str, Any]], thread: str, key: str, after: int) -> Optional[str]:
    value = None
    for e in events:
        if e["thread"] == thread and e["key"] == key and e["turn"] <= after and not e.get("miss"):
            if e["status"] == "confirmed":
                value = e["value"]
            elif e["status"] == "retracted":
                value = None
    return value


def decoys_at(events: list[dict[str, Any]], thread: str, key: str, after: int) -> list[str]:
    gold = gold_at(events, thread, key, after)
    out: list[str] = []
    for e in events:
        if (e["thread"] == thread and e["key"] == key and e["turn"] <= after and e["value"] is not None
                and e["value"] != gold and e["value"] not in out):
            out.append(e["value"])
    return out


def session(sid: str = "en-0001", lang: str = "en", split: str = "dev") -> dict[str, Any]:
    """The scripted v1 session (``lang`` zh only changes the question's language and the language tag)."""
    titles = {t["id"]: t["title"] for t in THREADS}
    turns = []
    for i, (thread, action, user, assistant, step) in enumerate(SCRIPT):
        turns.append({"i": i, "text": user, "gold": {"thread": thread, "action": action, "refs": []},
                      "style": "explicit", "tags": ["explicit"], "judge": {"thread": thread}, "ambiguous": False,
                      "assistant": assistant, **({"fact": step} if step else {})})
    events = timeline()
    probes = []
    for n, (after, b, a, key, cat) in enumerate(PROBES, start=1):
        probes.append({"id": f"{sid}-p{n}", "after": after, "thread": b, "source": a, "key": key, "category": cat,
                       "gold": gold_at(events, a, key, after), "decoys": decoys_at(events, a, key, after),
                       "question": probe_question(lang, titles[b], titles[a], key.replace("_", " "))})
    fact_types = {"move": {"budget": "stated", "deposit": "accepted"}, "party": {"guest_count": "rejected"},
                  "hire": {"salary_ask": "withdrawn"}}
    return {"session_id": sid, "version": "interleave-v1", "split": split, "lang": lang, "persona": "a manager",
            "threads": THREADS, "turns": turns, "fact_types": fact_types, "timeline": events, "probes": probes}


def write_data(folder: Path, sessions: Optional[list[dict[str, Any]]] = None) -> Path:
    """``folder/sessions.jsonl`` with ``sessions`` (default: two en dev sessions and one zh dev session)."""
    folder.mkdir(parents=True, exist_ok=True)
    if sessions is None:
        sessions = [session("en-0001"), session("en-0002"), session("zh-0001", lang="zh")]
    (folder / "sessions.jsonl").write_text(
        "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in sessions), encoding="utf-8")
    return folder


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
