"""Builders for the scorer's tests: sessions and prediction rows as plain dicts, validated through
the schema, plus the model-free predictions the tests need (oracle, single topic).

Kept apart from the routers on purpose: the scorer is tested on inputs written for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Sequence

from interleave_bench.schema import PredictionRow, Session, check_session


def turn(
    i: int,
    thread: str | None,
    action: str | None = None,
    *,
    style: str | None = None,
    tags: Sequence[str] | None = None,
    refs: Sequence[str] = (),
    judge: str | None = None,
    ambiguous: bool = False,
    text: str | None = None,
) -> dict[str, Any]:
    """One turn; defaults: action ``continue`` (``oneoff`` for no thread), style ``explicit``
    (``oneoff``), tags ``[style]``, judge = the gold thread (``none`` for a one-off)."""
    if action is None:
        action = "oneoff" if thread is None else "continue"
    if style is None:
        style = "oneoff" if thread is None else "explicit"
    return {
        "i": i,
        "text": text if text is not None else f"message {i}",
        "gold": {"thread": thread, "action": action, "refs": list(refs)},
        "style": style,
        "tags": list(tags) if tags is not None else [style],
        "judge": {"thread": judge if judge is not None else (thread or "none")},
        "ambiguous": ambiguous,
    }


def session(
    sid: str,
    threads: Sequence[str | dict[str, Any]],
    turns: Sequence[dict[str, Any]],
    *,
    split: str = "dev",
    lang: str = "en",
) -> dict[str, Any]:
    """A session dict, validated through :class:`Session` and :func:`check_session` (raises if bad)."""
    thread_dicts = [t if isinstance(t, dict) else {"id": t, "title": f"Thread {t}", "domain": "code"} for t in threads]
    data = {
        "session_id": sid, "version": "interleave-v0", "split": split, "lang": lang, "persona": "",
        "threads": thread_dicts, "turns": list(turns),
    }
    s = Session.model_validate(data)
    problems = check_session(s)
    assert not problems, problems
    return data


def rows(sid: str, labels: Sequence[str | None], mode: str | None = "closed", **per_turn: dict[int, Any]) -> list[dict]:
    """Rows for one session: ``labels[i]`` for turn i (``None`` = no row); ``per_turn`` adds fields
    by turn index, e.g. ``usage={0: {...}}``, ``refs={5: ["t2"]}``."""
    out = []
    for i, label in enumerate(labels):
        if label is None:
            continue
        row: dict[str, Any] = {"session_id": sid, "i": i, "pred": label}
        if mode is not None:
            row["mode"] = mode
        for field, by_i in per_turn.items():
            if i in by_i:
                row[field] = by_i[i]
        PredictionRow.model_validate(row)
        out.append(row)
    return out


def oracle_labels(s: dict[str, Any]) -> list[str]:
    """The gold thread of every message; each one-off gets its own fresh label."""
    return [t["gold"]["thread"] or f"oneoff-{t['i']}" for t in s["turns"]]


def oracle_rows(sessions: Iterable[dict[str, Any]], mode: str, policy: str = "oracle") -> list[dict]:
    out = []
    for s in sessions:
        for r in rows(s["session_id"], oracle_labels(s), mode):
            r["policy"] = policy
            out.append(r)
    return out


def single_rows(sessions: Iterable[dict[str, Any]], mode: str = "open") -> list[dict]:
    """Everything in one topic (open mode's ``single`` baseline)."""
    out = []
    for s in sessions:
        for r in rows(s["session_id"], ["topic-1"] * len(s["turns"]), mode):
            r["policy"] = "single"
            out.append(r)
    return out


def write_jsonl(path: Path, items: Iterable[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    return path


def many_sessions(n: int, *, turns: int = 12, split_every: int = 0) -> list[dict[str, Any]]:
    """``n`` deterministic sessions of 2 or 3 threads with switches, one-offs and an ambiguous turn.

    ``split_every`` > 0 puts every such session (by index) in ``test``.
    """
    out = []
    for k in range(n):
        ids = ["t1", "t2", "t3"][: 2 + k % 2]
        ts = []
        current = 0
        for i in range(turns):
            if i % 7 == 6:
                ts.append(turn(i, None))
                continue
            if i % 3 == 2:
                current = (current + 1) % len(ids)
            ts.append(turn(i, ids[current], "new" if i < 3 else "switch", ambiguous=(i == 4),
                           judge="ambiguous" if i == 4 else None))
        split = "test" if split_every and k % split_every == split_every - 1 else "dev"
        out.append(session(f"s-{k:03d}", ids, ts, split=split))
    return out
