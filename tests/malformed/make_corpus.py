"""Writes the malformed-file corpus beside this script: ``python tests/malformed/make_corpus.py``.

Each file is a good file of its kind with one defect a hostile or careless user could bring: broken
or truncated JSON, the wrong shapes and types, lone surrogates, NaN and Infinity, nesting too deep
for Python, bytes that are not UTF-8, duplicates. ``tests/test_malformed.py`` runs every reading
command over every file. ``strict/`` holds prediction files the scorer reads on purpose (rows
outside the data, which it counts and reports) and which ``validate DATA PRED`` must refuse.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _route_util import EN_THREADS, EN_TURNS, session_dict  # noqa: E402

#: deep enough that Python's own JSON reader gives up (its limit is about a thousand levels)
DEEP = 5_000
LONE = '"\\ud800"'  # a lone surrogate, as JSON text


def dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def good_session() -> dict[str, Any]:
    return session_dict("en-0001", EN_THREADS, EN_TURNS)


def good_rows() -> list[dict[str, Any]]:
    s = good_session()
    return [{"session_id": s["session_id"], "i": t["i"], "pred": t["gold"]["thread"] or "x1",
             "mode": "closed", "policy": "oracle", "via": "baseline"} for t in s["turns"]]


def good_cases() -> dict[str, Any]:
    path = HERE.parents[1] / "interleave_bench" / "data" / "mid_reply" / "cases.json"
    d = json.loads(path.read_text(encoding="utf-8"))
    return {"catalogs": d["catalogs"], "cases": d["cases"][:3]}


def good_manifest() -> dict[str, Any]:
    return {"version": "interleave-v0", "writer": "templates", "model": None, "seed": 0,
            "options": {"sessions": 1}, "counts": {"sessions": 1, "messages": 14, "ambiguous": 0, "leaks": 0, "failed": 0},
            "failed": [], "usage": {"calls": 0, "cached": 0, "input_tokens": 0, "cached_input_tokens": 0,
                                    "output_tokens": 0, "cost_usd": 0.0},
            "provenance": {"created": "2026-01-01T00:00:00+00:00"}}


def good_score() -> dict[str, Any]:
    return {"format": "interleave-score-v1", "system": "closed-oracle", "mode": "closed", "policy": "oracle",
            "model": None, "split": "dev", "metrics": {"accuracy": 1.0, "switch_f1": 1.0},
            "intervals": {"accuracy": None}, "counts": {"sessions": 1, "messages": 14},
            "provenance": {"data_sha256": "sha256:ab", "predictions_sha256": "sha256:cd"}}


def edit(base: Callable[[], Any], change: Callable[[Any], Any]) -> Any:
    obj = copy.deepcopy(base())
    out = change(obj)
    return obj if out is None else out


def setp(path: str, value: Any) -> Callable[[Any], None]:
    """A change that sets ``a.b[2].c`` to ``value``."""
    def change(obj: Any) -> None:
        parts = path.replace("]", "").replace("[", ".").split(".")
        for p in parts[:-1]:
            obj = obj[int(p)] if p.isdigit() else obj[p]
        last = parts[-1]
        if last.isdigit():
            obj[int(last)] = value
        else:
            obj[last] = value
    return change


def delp(path: str) -> Callable[[Any], None]:
    def change(obj: Any) -> None:
        parts = path.replace("]", "").replace("[", ".").split(".")
        for p in parts[:-1]:
            obj = obj[int(p)] if p.isdigit() else obj[p]
        del obj[parts[-1]]
    return change


def with_raw(obj: Any, key_path: str, raw: str) -> str:
    """``obj`` as JSON text with the value at ``key_path`` replaced by the raw JSON text ``raw``."""
    marker = "@@RAW@@"
    o = copy.deepcopy(obj)
    setp(key_path, marker)(o)
    return dump(o).replace(f'"{marker}"', raw)


def latin1(obj: Any) -> bytes:
    """``obj`` as JSON whose one ``café`` is written in Latin-1: not UTF-8."""
    return dump(obj).encode("utf-8").replace("café".encode("utf-8"), "café".encode("latin-1"))


def jsonl(rows: list[Any]) -> str:
    return "".join((r if isinstance(r, str) else dump(r)) + "\n" for r in rows)


def corpus() -> dict[str, str | bytes]:
    """``relative path -> content`` of every corpus file."""
    s = good_session()
    rows = good_rows()
    files: dict[str, str | bytes] = {}

    # --- sessions ---
    S = "sessions/"
    files[S + "not-json.jsonl"] = "this is not json\n"
    files[S + "truncated-line.jsonl"] = dump(s)[: len(dump(s)) // 2] + "\n"
    files[S + "partial-last-line.jsonl"] = dump(s) + "\n" + dump(edit(good_session, setp("session_id", "en-0002")))[:300]
    files[S + "array-line.jsonl"] = "[1, 2, 3]\n"
    files[S + "string-line.jsonl"] = '"a session"\n'
    files[S + "empty.jsonl"] = ""
    files[S + "blank-lines.jsonl"] = "\n\n   \n"
    files[S + "latin1.jsonl"] = latin1(edit(good_session, setp("persona", "café"))) + b"\n"
    files[S + "utf8-bom.jsonl"] = "\ufeff" + dump(s) + "\n"
    files[S + "nul-bytes.jsonl"] = dump(s) + "\n\x00\x00\x00\n"
    files[S + "lone-surrogate-text.jsonl"] = with_raw(s, "turns[3].text", LONE) + "\n"
    files[S + "lone-surrogate-key.jsonl"] = dump(s)[:-1] + ', "\\udc80x": 1}\n'
    files[S + "lone-surrogate-persona.jsonl"] = with_raw(s, "persona", '"ok \\udfff"') + "\n"
    files[S + "deep-nesting.jsonl"] = with_raw(s, "persona", "[" * DEEP + "]" * DEEP) + "\n"
    files[S + "deep-nesting-line.jsonl"] = "[" * DEEP + "\n"
    files[S + "nan.jsonl"] = with_raw(s, "persona", "NaN") + "\n"
    files[S + "infinity-extra.jsonl"] = with_raw(s, "turns[2].judge", '{"thread": "A", "score": Infinity}') + "\n"
    files[S + "missing-session-id.jsonl"] = jsonl([edit(good_session, delp("session_id"))])
    files[S + "integer-session-id.jsonl"] = jsonl([edit(good_session, setp("session_id", 17))])
    files[S + "turns-not-list.jsonl"] = jsonl([edit(good_session, setp("turns", {"0": "hi"}))])
    files[S + "empty-turns.jsonl"] = jsonl([edit(good_session, setp("turns", []))])
    files[S + "turn-order.jsonl"] = jsonl([edit(good_session, setp("turns[4].i", 2))])
    files[S + "unknown-gold-thread.jsonl"] = jsonl([edit(good_session, setp("turns[1].gold.thread", "Z"))])
    files[S + "unknown-action.jsonl"] = jsonl([edit(good_session, setp("turns[1].gold.action", "jump"))])
    files[S + "bad-split.jsonl"] = jsonl([edit(good_session, setp("split", "train"))])
    files[S + "text-null.jsonl"] = jsonl([edit(good_session, setp("turns[0].text", None))])
    files[S + "thread-no-title.jsonl"] = jsonl([edit(good_session, delp("threads[0].title"))])
    files[S + "duplicate-ids.jsonl"] = jsonl([s, s])
    files[S + "threads-string.jsonl"] = jsonl([edit(good_session, setp("threads", "A,B,C"))])
    files[S + "huge-number-i.jsonl"] = jsonl([edit(good_session, setp("turns[0].i", 10**30))])
    # one JSON value a line: two on one line, or one over two lines, is no line of the file
    files[S + "two-sessions-a-line.jsonl"] = dump(s) + dump(edit(good_session, setp("session_id", "en-0002"))) + "\n"
    files[S + "session-over-two-lines.jsonl"] = dump(s).replace(', "turns": ', ',\n"turns": ', 1) + "\n"

    # --- predictions ---
    P = "predictions/"
    files[P + "not-json.jsonl"] = jsonl(rows[:3]) + "{broken\n"
    files[P + "array-line.jsonl"] = jsonl(rows[:3] + [[1, 2]])
    files[P + "empty.jsonl"] = ""
    files[P + "pred-null.jsonl"] = jsonl([{**rows[0], "pred": None}])
    files[P + "missing-i.jsonl"] = jsonl([{k: v for k, v in rows[0].items() if k != "i"}])
    files[P + "i-string.jsonl"] = jsonl([{**rows[0], "i": "zero"}])
    files[P + "i-negative.jsonl"] = jsonl([{**rows[0], "i": -1}])
    files[P + "missing-session-id.jsonl"] = jsonl([{k: v for k, v in rows[0].items() if k != "session_id"}])
    files[P + "lone-surrogate-pred.jsonl"] = jsonl(rows[:2]) + with_raw(rows[2], "pred", LONE) + "\n"
    files[P + "nan-usage.jsonl"] = with_raw(rows[0], "usage", '{"input": NaN, "output": 1, "cache_hit": 0}') + "\n"
    files[P + "deep-nesting.jsonl"] = with_raw(rows[0], "refs", "[" * DEEP + "]" * DEEP) + "\n"
    files[P + "latin1.jsonl"] = latin1({**rows[0], "pred": "café"}) + b"\n"
    files[P + "duplicate-rows.jsonl"] = jsonl(rows + [rows[4]])
    files[P + "usage-string.jsonl"] = jsonl([{**rows[0], "usage": "lots"}])
    files[P + "refs-string.jsonl"] = jsonl([{**rows[0], "refs": "A"}])
    files[P + "truncated.jsonl"] = jsonl(rows[:4]) + dump(rows[4])[:20] + "\n"
    files[P + "session-id-list.jsonl"] = jsonl([{**rows[0], "session_id": ["en-0001"]}])
    files[P + "two-rows-a-line.jsonl"] = jsonl(rows[:2]) + dump(rows[2]) + " " + dump(rows[3]) + "\n" + jsonl(rows[4:])
    files[P + "row-over-two-lines.jsonl"] = jsonl(rows[:2]) + dump(rows[2]).replace(', "pred": ', ',\n"pred": ') + "\n"
    V = "strict/"
    files[V + "unknown-session.jsonl"] = jsonl(rows + [{**rows[0], "session_id": "en-9999"}])
    files[V + "unknown-turn.jsonl"] = jsonl(rows + [{**rows[0], "i": 999}])

    # --- mid-reply case files ---
    C = "cases/"
    cases = good_cases()
    files[C + "not-json.json"] = '{"catalogs": {}, "cases": ['
    files[C + "array.json"] = dump([cases])
    files[C + "empty.json"] = ""
    files[C + "cases-not-list.json"] = dump(edit(good_cases, setp("cases", {"en-01": 1})))
    files[C + "case-missing-id.json"] = dump(edit(good_cases, delp("cases[0].id")))
    files[C + "case-bad-how.json"] = dump(edit(good_cases, setp("cases[1].how", "shouted")))
    files[C + "unknown-expect.json"] = dump(edit(good_cases, setp("cases[0].expect", "no-such-topic")))
    files[C + "duplicate-ids.json"] = dump(edit(good_cases, setp("cases[1].id", cases["cases"][0]["id"])))
    files[C + "nan.json"] = with_raw(cases, "cases[0].text", "NaN")
    files[C + "nan-extra.json"] = with_raw(cases, "about", "NaN")
    files[C + "infinity-extra.json"] = with_raw(cases, "cases[2].score", "-Infinity")
    files[C + "lone-surrogate.json"] = with_raw(cases, "cases[1].text", LONE)
    files[C + "deep-nesting.json"] = with_raw(cases, "about", "[" * DEEP + "]" * DEEP)
    files[C + "latin1.json"] = latin1(edit(good_cases, setp("about", "café")))
    files[C + "catalogs-list.json"] = dump(edit(good_cases, setp("catalogs", ["en"])))
    files[C + "text-integer.json"] = dump(edit(good_cases, setp("cases[0].text", 5)))

    # --- manifests ---
    M = "manifests/manifest-"
    man = good_manifest()
    files[M + "not-json.json"] = '{"writer": "templates", '
    files[M + "array.json"] = dump([man])
    files[M + "counts-list.json"] = dump(edit(good_manifest, setp("counts", [1, 14])))
    files[M + "counts-string.json"] = dump(edit(good_manifest, setp("counts.sessions", "one")))
    files[M + "nan-cost.json"] = with_raw(man, "usage.cost_usd", "NaN")
    files[M + "infinity-seed.json"] = with_raw(man, "seed", "Infinity")
    files[M + "lone-surrogate.json"] = with_raw(man, "writer", LONE)
    files[M + "deep-nesting.json"] = with_raw(man, "options", "[" * DEEP + "]" * DEEP)
    files[M + "empty.json"] = ""
    files[M + "writer-integer.json"] = dump(edit(good_manifest, setp("writer", 3)))
    files[M + "latin1.json"] = latin1(edit(good_manifest, setp("model", "café")))

    # --- score files ---
    R = "scores/"
    sc = good_score()
    files[R + "not-json.score.json"] = '{"format": "interleave-score-v1", "metrics": {'
    files[R + "array.score.json"] = dump([sc])
    files[R + "empty.score.json"] = ""
    files[R + "wrong-format.score.json"] = dump(edit(good_score, setp("format", "other-v9")))
    files[R + "no-metrics.score.json"] = dump(edit(good_score, delp("metrics")))
    files[R + "no-accuracy.score.json"] = dump(edit(good_score, delp("metrics.accuracy")))
    files[R + "no-provenance.score.json"] = dump(edit(good_score, delp("provenance")))
    files[R + "counts-list.score.json"] = dump(edit(good_score, setp("counts", [1, 14])))
    files[R + "intervals-list.score.json"] = dump(edit(good_score, setp("intervals", [0.1, 0.2])))
    files[R + "nan-accuracy.score.json"] = with_raw(sc, "metrics.accuracy", "NaN")
    files[R + "lone-surrogate.score.json"] = with_raw(sc, "system", LONE)
    files[R + "deep-nesting.score.json"] = with_raw(sc, "intervals", "[" * DEEP + "]" * DEEP)
    files[R + "system-integer.score.json"] = dump(edit(good_score, setp("system", 5)))
    files[R + "latin1.score.json"] = latin1(edit(good_score, setp("system", "café")))
    return files


def main() -> None:
    for rel, content in corpus().items():
        p = HERE / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            p.write_text(content, encoding="utf-8", newline="\n")
        else:
            p.write_bytes(content)
    print(f"wrote {len(corpus())} files under {HERE}")


if __name__ == "__main__":
    main()
