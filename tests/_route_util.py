"""Small routing sessions for the route tests, validated through ``interleave_bench.schema.Session``."""

from __future__ import annotations

import importlib
import json
import random
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional, Sequence

from interleave_bench.schema import Session, check_session

EN_THREADS = [
    ("A", "Kitchen renovation", "home", "Finish the kitchen by June",
     "Cabinets, countertop and tiles for the old kitchen"),
    ("B", "Trip to Lisbon", "travel", "A relaxed week in Lisbon in May",
     "Flights, hotel and day trips around Lisbon"),
    ("C", "Tax return", "paperwork", "File the tax return before the deadline",
     "Receipts, deductions and the tax form"),
]

# (text, gold thread or None for a one-off, action, style, refs)
EN_TURNS: list[tuple[str, Optional[str], str, str, list[str]]] = [
    ("Let's plan the kitchen renovation: I want new cabinets and a quartz countertop.", "A", "new", "explicit", []),
    ("ok thanks", "A", "continue", "implicit", []),
    ("What about the tiles for the backsplash, white or green?", "A", "continue", "cue", []),
    ("Switching to my trip to Lisbon: I need flights for the first week of May.", "B", "new", "explicit", []),
    ("and a hotel near the river,", "B", "continue", "implicit", []),
    ("Which day trips from Lisbon are worth it? Sintra maybe?", "B", "continue", "cue", []),
    ("How many grams are in an ounce?", None, "oneoff", "oneoff", []),
    ("Back to the kitchen renovation, the cabinets arrive Tuesday.", "A", "return", "explicit", []),
    ("I also need to start my tax return, where do the receipts go?", "C", "new", "explicit", []),
    ("can I deduct the home office and the kitchen cabinets?", "C", "continue", "cue", ["A"]),
    ("great", "C", "continue", "implicit", []),
    ("For the Lisbon hotel, is breakfast included usually?", "B", "switch", "cue", []),
    ("that one", "B", "continue", "pronoun", []),
    ("The tax form asks about deductions for receipts I lost.", "C", "switch", "explicit", []),
]

ZH_THREADS = [
    ("A", "装修厨房", "home", "六月前完成厨房装修", "橱柜、台面和瓷砖"),
    ("B", "东京旅行", "travel", "五月去东京玩一周", "机票、酒店和一日游"),
]

ZH_TURNS: list[tuple[str, Optional[str], str, str, list[str]]] = [
    ("我想开始装修厨房，先选橱柜和台面。", "A", "new", "explicit", []),
    ("好的", "A", "continue", "implicit", []),
    ("瓷砖选白色还是灰色比较好？", "A", "continue", "cue", []),
    ("另外我五月要去东京旅行，帮我看看机票。", "B", "new", "explicit", []),
    ("还有酒店，", "B", "continue", "implicit", []),
    ("一公斤等于多少磅？", None, "oneoff", "oneoff", []),
    ("回到装修厨房，橱柜下周送到。", "A", "return", "explicit", []),
    ("东京的一日游有什么推荐？", "B", "switch", "cue", []),
    ("谢谢", "B", "continue", "implicit", []),
]


def session_dict(
    session_id: str,
    threads: Sequence[tuple[str, str, str, str, str]],
    turns: Sequence[tuple[str, Optional[str], str, str, list[str]]],
    *,
    lang: str = "en",
    split: str = "dev",
) -> dict[str, Any]:
    """A session as plain JSON data, checked through the schema (raises if it is not valid)."""
    data = {
        "session_id": session_id,
        "version": "interleave-v0",
        "split": split,
        "lang": lang,
        "persona": "a busy person",
        "threads": [
            {"id": i, "title": t, "domain": d, "goal": g, "description": desc,
             "facts": [], "constraints": []}
            for i, t, d, g, desc in threads
        ],
        "turns": [
            {"i": k, "text": text, "gold": {"thread": th, "action": action, "refs": refs},
             "style": style, "tags": [style] + (["cross"] if refs else []),
             "judge": {"thread": th if th is not None else "none"}, "ambiguous": False}
            for k, (text, th, action, style, refs) in enumerate(turns)
        ],
    }
    s = Session.model_validate(data)
    assert not check_session(s), check_session(s)
    return s.dump()


def random_session(rng: random.Random, session_id: str, *, split: str = "dev", n_turns: int = 20) -> dict[str, Any]:
    """A session with random (but valid) threads and turns: messages mix thread words and vague ones."""
    pools = {
        "A": ["cabinet", "countertop", "tiles", "kitchen", "sink", "paint"],
        "B": ["flight", "hotel", "lisbon", "museum", "train", "beach"],
        "C": ["receipt", "deduction", "tax", "form", "deadline", "refund"],
        "D": ["squat", "running", "gym", "protein", "stretch", "marathon"],
    }
    n_threads = rng.randint(2, 4)
    ids = list(pools)[:n_threads]
    threads = [(i, f"{pools[i][0]} {pools[i][1]}", "x", f"goal {pools[i][2]}", f"about {pools[i][3]}") for i in ids]
    vague = ["ok", "and that one?", "sounds good, what next", "hmm", "yes please", "tell me more about it"]
    turns = []
    started: list[str] = []
    for k in range(n_turns):
        r = rng.random()
        if k > 0 and r < 0.1:
            turns.append((f"what is {rng.randint(2, 99)} times {rng.randint(2, 99)}?", None, "oneoff", "oneoff", []))
            continue
        if not started or (len(started) < n_threads and r < 0.3):
            th = ids[len(started)]
            started.append(th)
            action = "new"
        else:
            th = rng.choice(started)
            action = "continue"
        words = rng.sample(pools[th], rng.randint(0, 3))
        text = " ".join(words) + " " + rng.choice(vague) if words else rng.choice(vague)
        refs = [rng.choice(started)] if rng.random() < 0.1 and len(started) > 1 else []
        refs = [x for x in refs if x != th]
        turns.append((text, th, action, "explicit" if words else "implicit", refs))
    # the first turn must open a thread
    return session_dict(session_id, threads, turns, split=split)


def standard_sessions() -> list[dict[str, Any]]:
    """Three hand-written sessions (two English, one Chinese) and two random ones; one is test."""
    rng = random.Random(7)
    return [
        session_dict("en-0001", EN_THREADS, EN_TURNS),
        session_dict("zh-0001", ZH_THREADS, ZH_TURNS, lang="zh"),
        session_dict("en-0002", EN_THREADS, EN_TURNS[::-1][:1] + EN_TURNS[:9], split="test"),
        random_session(rng, "rnd-0001"),
        random_session(rng, "rnd-0002", n_turns=30),
    ]


def write_data(folder: Path, sessions: Sequence[dict[str, Any]] | None = None) -> Path:
    """``folder/sessions.jsonl`` with ``sessions`` (default :func:`standard_sessions`); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = standard_sessions() if sessions is None else list(sessions)
    (folder / "sessions.jsonl").write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in rows), encoding="utf-8")
    return folder


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@contextmanager
def module_at(folder: Path, name: str, source: str, monkeypatch):
    """Module ``name`` written from ``source`` into ``folder`` and imported from there (a fresh
    import, dropped again after the block)."""
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop(name, None)
    importlib.invalidate_caches()
    try:
        yield importlib.import_module(name)
    finally:
        sys.modules.pop(name, None)


def twin(run: Path) -> Path:
    """A copy of a run, and of its run record when it has one, under another name: compare
    refuses one file given as both runs."""
    import shutil

    copy = run.with_name(f"{run.stem}-twin{run.suffix}")
    shutil.copyfile(run, copy)
    if run.with_suffix(".run.json").is_file():
        shutil.copyfile(run.with_suffix(".run.json"), copy.with_suffix(".run.json"))
    return copy
