"""The hostile corpus over the commands that read sessions, predictions, manifests, mid-reply case
files and the SGD corpus (``benchmarks/hostile.py`` runs it with the rest).

Each malformed file is a valid one with one field changed to a value no writer could give it (the
values of :mod:`hostile_base`), or the whole file broken (cut off, empty, binary, Latin-1, a key
repeated, nesting 100,000 deep), and is run through every command that reads that kind of file:

- sessions: ``validate``, ``score``, ``compare``, ``baselines``, ``route --policy local`` and
  ``bm25``, ``stats``, ``export --v0``, ``report``, ``leaderboard add --data``, ``release --dry-run``;
- predictions (JSONL): ``validate DATA PRED``, ``score``, ``compare``, ``report``, ``leaderboard add``;
  (Parquet): ``validate DATA PRED`` and ``score``;
- manifests: ``validate`` and ``export --v0``;
- mid-reply case files: ``validate``, ``mid-reply --rule-only``, ``export --mid-reply`` and
  ``release --mid-reply --dry-run``;
- the SGD corpus (dialogues and schema): ``import sgd``.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from hostile_base import BAD_COUNTS, BAD_IDS, BAD_NAMES, BAD_TEXTS, RAW_EXTRAS, ROOT, Case, raw_json

from _route_util import EN_THREADS, EN_TURNS, session_dict

#: what a file can be besides a JSON text: ``(name, content)``
BROKEN_FILES: tuple[tuple[str, bytes], ...] = (
    ("an empty file", b""), ("blank lines only", b"\n  \n"), ("a binary file", bytes(range(256)) * 8),
    ("a PNG header", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), ("NUL bytes", b"\x00" * 64))
SGD = ROOT / "tests" / "data" / "sgd" / "dev"
#: the leaderboard stops at its first step past the inputs when there is no token to publish with
NO_TOKEN = "no Hugging Face token"
NO_TOKEN_ENV = {"HF_TOKEN": ""}


def set_at(obj: Any, path: str, value: Any) -> Any:
    """A deep copy of ``obj`` with the value at ``a.b[2].c`` set to ``value``."""
    out = copy.deepcopy(obj)
    parts = [p for p in path.replace("]", "").replace("[", ".").split(".") if p]
    cur = out
    for p in parts[:-1]:
        cur = cur[int(p)] if p.isdigit() else cur[p]
    last = parts[-1]
    cur[int(last) if last.isdigit() else last] = value
    return out


def with_extra(obj: dict, raw: str) -> str:
    return raw_json(obj)[:-1] + f', "extra": {raw}}}'


def repeated(obj: dict) -> str:
    first = next(iter(obj))
    return raw_json(obj)[:-1] + f", {raw_json(first)}: {raw_json(obj[first])}}}"


def mutations(good: Any, fields: dict[str, tuple[Any, ...]], raw_at: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    """``(name, document or raw text)`` of every one-field change, and of raw values spliced in at ``raw_at``."""
    for path, values in fields.items():
        for v in values:
            yield f"{path} = {v!r}"[:80], set_at(good, path, v)
    for path in raw_at:
        for name, raw in RAW_EXTRAS:
            marker = "@@RAW@@"
            yield f"{path} = {name}", raw_json(set_at(good, path, marker)).replace(f'"{marker}"', raw)
    yield "an extra field of NaN", with_extra(good, "NaN")
    yield "a repeated key", repeated(good)
    yield "cut off", raw_json(good)[: len(raw_json(good)) // 2]
    yield "in Latin-1", (raw_json(set_at(good, raw_at[0], "caf\u00e9"))).encode("utf-8").replace(
        "caf\u00e9".encode("utf-8"), b"caf\xe9")


def refused_by(bad: bool | str | tuple[str, ...], command: str) -> bool:
    """Whether ``command`` must refuse a file marked ``bad``: ``True`` (every command), ``False``
    (none), or the one command or commands that must."""
    return bad is True or (bad is not False and command in ((bad,) if isinstance(bad, str) else bad))


def _content(doc: Any) -> str | bytes:
    return doc if isinstance(doc, (str, bytes)) else raw_json(doc)


def _write(path: Path, content: str | bytes, line: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    path.write_bytes(data + (b"\n" if line and data.strip() else b""))
    return path


# --- sessions ------------------------------------------------------------------------------------

SESSION = session_dict("en-0001", EN_THREADS, EN_TURNS)
ROWS = [{"session_id": "en-0001", "i": t["i"], "pred": t["gold"]["thread"] or "x1", "mode": "closed",
         "policy": "oracle", "via": "baseline"} for t in SESSION["turns"]]
SESSION_FIELDS: dict[str, tuple[Any, ...]] = {
    "session_id": BAD_IDS, "version": BAD_NAMES, "split": BAD_NAMES, "lang": (5, [], "x\ny", ""),
    "persona": BAD_TEXTS, "threads": ([], {}, "A"), "turns": ([], {}, "x"),
    "threads[0].id": BAD_IDS, "threads[0].title": BAD_TEXTS, "threads[0].facts": ("x", {}),
    "turns[1].i": BAD_COUNTS, "turns[1].text": BAD_TEXTS + (None,),
    "turns[1].gold.thread": ("", "a\nerror: forged", 5, [], "nowhere"), "turns[1].gold.action": BAD_NAMES,
    "turns[1].gold.refs": ("A", [None], {}, ["nowhere"]), "turns[1].style": BAD_NAMES,
    "turns[1].tags": ("cue", [5], {}), "turns[1].judge.thread": (5, [], "", "nowhere"),
    "turns[1].ambiguous": (5, "yes", None),
}


def session_files() -> Iterator[tuple[str, bool | str, str | bytes]]:
    """``(name, bad, content)``: ``bad`` is ``True``, ``False`` or the one command that must refuse it."""
    yield "valid", False, raw_json(SESSION)
    # the predictions cover one of them: a partial run, which the leaderboard alone refuses
    yield "two valid sessions", "leaderboard add", raw_json(SESSION) + "\n" + raw_json({**SESSION, "session_id": "en-0002"})
    for name, doc in mutations(SESSION, SESSION_FIELDS, ("persona", "turns[1].i")):
        yield name, True, _content(doc)
    yield "the same session twice", True, raw_json(SESSION) + "\n" + raw_json(SESSION)
    yield "a line that is [1, 2]", True, "[1, 2]"
    yield "a valid session then a cut-off one", True, raw_json(SESSION) + "\n" + raw_json(SESSION)[:300]
    for name, content in BROKEN_FILES:
        yield name, True, content


def _data(folder: Path, content: str | bytes) -> Path:
    return _write(folder / "data" / "sessions.jsonl", content)


def _rows_file(folder: Path, name: str = "run.jsonl", rows: Optional[list] = None) -> Path:
    return _write(folder / name, "\n".join(raw_json(r) for r in (ROWS if rows is None else rows)))


def _board(args: list[str]) -> list[str]:
    return ["leaderboard", "add", *args, "--repo", "org/board"]


#: each session-reading command: arguments given the sessions file
SESSION_COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "validate": lambda f, d: ["validate", str(d)],
    "score": lambda f, d: ["score", str(d), str(_rows_file(f)), "--bootstrap", "0", "--json"],
    "compare": lambda f, d: ["compare", str(d), str(_rows_file(f, "a.jsonl")), str(_rows_file(f, "b.jsonl")),
                             "--bootstrap", "0"],
    "baselines": lambda f, d: ["baselines", str(d.parent), "--mode", "closed"],
    "route local": lambda f, d: ["route", str(d), "--mode", "closed", "--policy", "local", "--out", str(f / "o.jsonl")],
    "route bm25": lambda f, d: ["route", str(d), "--mode", "closed", "--policy", "bm25", "--out", str(f / "o.jsonl")],
    "stats": lambda f, d: ["stats", str(d), "--json"],
    "export": lambda f, d: ["export", "--v0", str(d.parent), "--out", str(f / "hub")],
    "report": lambda f, d: ["report", str(d), str(_rows_file(f)), "--html", str(f / "r.html"), "--bootstrap", "0"],
    "leaderboard add": lambda f, d: _board([str(_rows_file(f)), "--data", str(d)]),
    "release": lambda f, d: _release(f, ["--v0", str(d.parent), "--no-mid-reply"]),
}


def _release(folder: Path, data: list[str]) -> list[str]:
    """``release --dry-run`` of ``data``: every step but the push (no allowlist of the machine's applies)."""
    allow = _write(folder / "allow.txt", "", line=False)
    return ["release", *data, "--revision", "v0.1", "--repo", "org/data", "--dry-run", "--bootstrap", "40",
            "--allow", str(allow), "--work", str(folder / "work")]


def _session_case(command: str, name: str, bad: bool | str, content: str | bytes) -> Case:
    def run(folder: Path) -> list[str]:
        return SESSION_COMMANDS[command](folder, _data(folder, content))

    return _case(command, f"sessions: {name}", refused_by(bad, command), run)


def _case(command: str, name: str, bad: bool, run: Callable[[Path], list[str]]) -> Case:
    """A case; the leaderboard's run with no token, so it stops before it publishes anything."""
    if command != "leaderboard add":
        return Case(command, name, bad, run)
    return Case(command, name, bad, run, None if bad else NO_TOKEN, env=NO_TOKEN_ENV)


def session_cases() -> Iterator[Case]:
    files = list(session_files())
    for command in SESSION_COMMANDS:
        for name, bad, content in files:
            yield _session_case(command, name, bad, content)


# --- predictions ---------------------------------------------------------------------------------

ROW_FIELDS: dict[str, tuple[Any, ...]] = {
    "session_id": BAD_IDS, "i": BAD_COUNTS + (None,), "pred": ("", None, [], {}, "a\nerror: forged", True),
    "mode": ("open", "magic", 5, ""), "policy": (5, [], {}), "refs": ("A", [None], {}, 5),
    "usage": ({"input": -5}, "x", {"input": "HUGE"}, {"input": 1.5}, {"output": "NaN"}, [], {"output": "BIG64"}),
    "elapsed_ms": (-1, "5", "1e400", "NaN", 1e300, True), "via": (5, []),
    "confidence": (1.5, -0.1, "0.5", "NaN", "1e400", True), "burst": (0, -1, 1.5, "2", "BIG64", True),
    "mixed": (5, "yes", "NaN"), "waited": (5, "no"),
}


def prediction_files() -> Iterator[tuple[str, bool | str | tuple[str, ...], str | bytes]]:
    """``(name, bad, content)``: ``bad`` as :func:`refused_by` reads it."""
    lines = [raw_json(r) for r in ROWS]
    yield "valid", False, "\n".join(lines)
    for name, doc in mutations(ROWS[2], {f: v for f, v in ROW_FIELDS.items()}, ("i", "confidence")):
        row = _content(doc)
        row = row if isinstance(row, bytes) else row.encode("utf-8")
        yield f"row 3: {name}", True, b"\n".join([x.encode("utf-8") for x in lines[:2]] + [row]
                                                 + [x.encode("utf-8") for x in lines[3:]])
    yield "a turn twice", True, "\n".join(lines + [lines[2]])
    for name, row in (("a turn past the session's last", {**ROWS[2], "i": 99}),
                      ("a session not in the data", {**ROWS[2], "session_id": "en-0099"})):
        # the scorer counts and reports rows outside the data; ``validate DATA PRED`` and the board refuse them
        yield name, ("validate", "leaderboard add"), "\n".join(lines + [raw_json(row)])
    # a run is ranked in the table of the mode its rows name: the board alone needs them to name it
    yield "rows naming no mode", "leaderboard add", "\n".join(raw_json({k: v for k, v in r.items() if k != "mode"}) for r in ROWS)
    yield "a line that is [1, 2]", True, "\n".join(lines[:2] + ["[1, 2]"] + lines[2:])
    for name, content in BROKEN_FILES:
        yield name, True, content


#: each prediction-reading command: arguments given the sessions file and the predictions
PREDICTION_COMMANDS: dict[str, Callable[[Path, Path, Path], list[str]]] = {
    "validate": lambda f, d, p: ["validate", str(d), str(p)],
    "score": lambda f, d, p: ["score", str(d), str(p), "--bootstrap", "0", "--json"],
    "compare": lambda f, d, p: ["compare", str(d), str(p), str(_rows_file(f, "b.jsonl")), "--bootstrap", "0"],
    "report": lambda f, d, p: ["report", str(d), str(p), "--html", str(f / "r.html"), "--bootstrap", "0"],
    "leaderboard add": lambda f, d, p: _board([str(p), "--data", str(d)]),
}


def prediction_cases() -> Iterator[Case]:
    files = list(prediction_files())
    for command, make in PREDICTION_COMMANDS.items():
        for name, bad, content in files:
            def run(folder: Path, make=make, content=content) -> list[str]:
                return make(folder, _data(folder, raw_json(SESSION)), _write(folder / "run.jsonl", content))

            yield _case(command, f"predictions: {name}", refused_by(bad, command), run)


PARQUET_CHANGES: tuple[tuple[str, str, Any], ...] = (
    ("i", "i = -1", -1), ("pred", "pred = ''", ""), ("session_id", "a newline in session_id", "a\nb"),
    ("confidence", "confidence = 1.5", 1.5), ("confidence", "confidence = NaN", float("nan")),
    ("elapsed_ms", "elapsed_ms = inf", float("inf")), ("mode", "mode = open in a closed run", "open"),
    ("mode", "mode = magic", "magic"), ("pred", "pred = None", None), ("i", "i = None", None),
    ("burst", "burst = 0", 0))


def parquet_cases() -> Iterator[Case]:
    def make(change: Optional[tuple[str, Any]], raw: Optional[bytes] = None) -> Callable[[Path], Path]:
        def write(folder: Path) -> Path:
            import pyarrow as pa
            import pyarrow.parquet as pq

            path = folder / "run.parquet"
            if raw is not None:
                path.write_bytes(raw)
                return path
            rows = [{**r, "confidence": 0.9, "elapsed_ms": 3.0, "burst": 1} for r in ROWS]
            if change is not None:
                rows[2] = {**rows[2], change[0]: change[1]}
            pq.write_table(pa.Table.from_pylist(rows), path)
            return path

        return write

    def good_bytes() -> bytes:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            return make(None)(Path(tmp)).read_bytes()

    files: list[tuple[str, bool, Callable[[Path], Path]]] = [("valid", False, make(None))]
    files += [(name, True, make((field, value))) for field, name, value in PARQUET_CHANGES]
    whole = good_bytes()
    files += [("cut in half", True, make(None, whole[: len(whole) // 2])), ("an empty file", True, make(None, b"")),
              ("a binary file", True, make(None, bytes(range(256)) * 8)), ("JSON lines named .parquet", True,
                                                                           make(None, raw_json(ROWS[0]).encode()))]
    for command in ("validate", "score"):
        for name, bad, write in files:
            def run(folder: Path, command=command, write=write) -> list[str]:
                return PREDICTION_COMMANDS[command](folder, _data(folder, raw_json(SESSION)), write(folder))

            yield Case(command, f"parquet predictions: {name}", bad, run)


# --- manifests -----------------------------------------------------------------------------------

MANIFEST = {"version": "interleave-v0", "writer": "templates", "model": None, "seed": 0, "options": {"sessions": 1},
            "counts": {"sessions": 1, "messages": 14, "ambiguous": 0, "leaks": 0, "failed": 0}, "failed": [],
            "usage": {"calls": 0, "cached": 0, "input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0,
                      "cost_usd": 0.0},
            "provenance": {"created": "2026-01-01T00:00:00+00:00"}}
MANIFEST_FIELDS: dict[str, tuple[Any, ...]] = {
    "version": (5, None, []), "writer": (5, [], {}), "model": (5, []), "seed": ("6", 1.5, "HUGE", "NaN", "BIG64", []),
    "counts": ([], "x", 5), "counts.sessions": BAD_COUNTS, "counts.messages": BAD_COUNTS,
    "failed": ("x", {}, 5), "usage": ([], "x"), "usage.calls": BAD_COUNTS, "usage.cost_usd": (-1, "NaN", "1e400", "x", []),
    "options": ("x", []), "provenance": ("x", 5),
}


def manifest_cases() -> Iterator[Case]:
    files: list[tuple[str, bool, str | bytes]] = [("valid", False, raw_json(MANIFEST))]
    for name, doc in mutations(MANIFEST, MANIFEST_FIELDS, ("seed", "counts.sessions")):
        files.append((name, True, _content(doc)))
    files += [(name, True, content) for name, content in BROKEN_FILES]
    for command in ("validate", "export"):
        for name, bad, content in files:
            def run(folder: Path, command=command, content=content) -> list[str]:
                data = _data(folder, raw_json(SESSION))
                manifest = _write(data.parent / "manifest.json", content)
                if command == "validate":
                    return ["validate", str(manifest)]
                return ["export", "--v0", str(data.parent), "--out", str(folder / "hub")]

            yield Case(command, f"manifest: {name}", bad, run)


# --- mid-reply case files ------------------------------------------------------------------------


def _good_cases() -> dict[str, Any]:
    import json

    d = json.loads((ROOT / "interleave_bench" / "data" / "mid_reply" / "cases.json").read_text(encoding="utf-8"))
    return {"catalogs": d["catalogs"], "cases": d["cases"][:3]}


CASE_FIELDS: dict[str, tuple[Any, ...]] = {
    "cases": ("x", {}, 5), "catalogs": ([], "x"), "cases[0].id": BAD_IDS, "cases[0].lang": (5, "", [], "zz"),
    "cases[0].how": BAD_NAMES, "cases[0].text": BAD_TEXTS + ("", None), "cases[0].expect": BAD_NAMES,
    "cases[0].tags": ("x", [5], {}), "cases[0].running": ("x", 5, []), "cases[0].running.topicId": (5, "", [], "nowhere"),
    "cases[0].running.request": (5, None, []), "catalogs.en[0].id": BAD_IDS, "catalogs.en[0].title": BAD_TEXTS,
}


def mid_reply_cases() -> Iterator[Case]:
    good = _good_cases()
    files: list[tuple[str, bool, str | bytes]] = [("valid", False, raw_json(good))]
    for name, doc in mutations(good, CASE_FIELDS, ("cases[0].text", "cases[0].id")):
        files.append((name, True, _content(doc)))
    twice = copy.deepcopy(good)
    twice["cases"].append(twice["cases"][0])
    files.append(("a case id twice", True, raw_json(twice)))
    files += [(name, True, content) for name, content in BROKEN_FILES]
    commands = {"validate": lambda f, p: ["validate", str(p)],
                "mid-reply": lambda f, p: ["mid-reply", str(p), "--rule-only", "--out", str(f / "mr.jsonl")],
                "export": lambda f, p: ["export", "--mid-reply", str(p), "--out", str(f / "hub")],
                "release": lambda f, p: _release(f, ["--v0", str(_data(f, raw_json(SESSION)).parent), "--mid-reply", str(p)])}
    for command, make in commands.items():
        for name, bad, content in files:
            def run(folder: Path, make=make, content=content) -> list[str]:
                return make(folder, _write(folder / "cases.json", content))

            yield Case(command, f"mid-reply cases: {name}", bad, run)


# --- import sgd ----------------------------------------------------------------------------------

DIALOGUES = "dialogues_008.json"


def sgd_cases() -> Iterator[Case]:
    import json

    dialogues = json.loads((SGD / DIALOGUES).read_text(encoding="utf-8"))
    schema = json.loads((SGD / "schema.json").read_text(encoding="utf-8"))
    dialogue_fields: dict[str, tuple[Any, ...]] = {
        "[0].dialogue_id": BAD_IDS, "[0].services": ("x", [5], [], {}), "[0].turns": ("x", {}, 5),
        "[0].turns[0].speaker": ("ROBOT", 5, None), "[0].turns[0].utterance": BAD_TEXTS + (None,),
        "[0].turns[0].frames": ("x", 5, {}), "[0].turns[0].frames[0].service": (5, "Nope_1", None, ""),
        "[0].turns[0].frames[0].actions": ("x", 5),
    }
    schema_fields: dict[str, tuple[Any, ...]] = {
        "[0].service_name": BAD_IDS, "[0].description": BAD_TEXTS, "[0].slots": ("x", 5), "[0].intents": ("x", 5),
    }

    def case(name: str, bad: bool, which: str = "", content: str | bytes | None = None) -> Case:
        def run(folder: Path) -> list[str]:
            d = folder / "corpus" / "dev"
            shutil.copytree(SGD, d)
            if content is not None:
                _write(d / which, content)
            return ["import", "sgd", str(folder / "corpus"), "--out", str(folder / "out")]

        return Case("import sgd", name, bad, run)

    yield case("the corpus as shipped", False)
    for which, good, fields in ((DIALOGUES, dialogues, dialogue_fields), ("schema.json", schema, schema_fields)):
        for path, values in fields.items():
            for v in values:
                yield case(f"{which}: {path} = {v!r}"[:80], True, which, raw_json(set_at(good, path.lstrip("."), v)))
        for name, raw in RAW_EXTRAS:
            text = raw_json(good)
            yield case(f"{which}: a value of {name}", True, which, text[:-1] + f", {raw}]")
        yield case(f"{which}: cut off", True, which, raw_json(good)[:-40])
        yield case(f"{which}: not a list", True, which, raw_json({"x": good}))
        yield case(f"{which}: a repeated key", True, which, raw_json(good).replace("{", '{"x": 1, "x": 2, ', 1))
        for name, content in BROKEN_FILES:
            yield case(f"{which}: {name}", True, which, content)


COMMANDS = {"sessions": session_cases, "predictions": prediction_cases, "parquet predictions": parquet_cases,
            "manifests": manifest_cases, "mid-reply cases": mid_reply_cases, "import sgd": sgd_cases}
