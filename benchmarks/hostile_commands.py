"""The hostile corpus over the last commands that read a user's files (``benchmarks/hostile.py`` runs it):

- ``vet --allow FILE``: the allowlist (broken lines, unknown kinds, patterns that do not compile,
  binary and Latin-1 files);
- ``facts DATA --dry-run``: the v1 sessions it asks its probes on (the fake model on loopback);
- ``export-irc PRED --data DATA``: a run on imported IRC data (its predictions, its sessions and the
  run record beside the predictions).
"""

from __future__ import annotations

import functools
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

from hostile_base import BAD_COUNTS, BAD_IDS, BAD_NAMES, RAW_EXTRAS, Case, ROOT, raw_json
from hostile_reading import BROKEN_FILES, ROW_FIELDS, mutations, set_at

import _facts_util  # the scripted v1 session of the facts tests

# --- vet --allow ---------------------------------------------------------------------------------

#: a document with one finding of each kind an allowlist line below names
VETTED = {"text": "mail ann@mail.de, key sk-" + "A1b2C3d4" * 4}


def _allow_case(name: str, bad: bool, allow: str | bytes) -> Case:
    def run(folder: Path) -> list[str]:
        (folder / "data.jsonl").write_text(raw_json(VETTED) + "\n", encoding="utf-8")
        path = folder / "allow.txt"
        path.write_bytes(allow if isinstance(allow, bytes) else allow.encode("utf-8"))
        return ["vet", str(folder / "data.jsonl"), "--allow", str(path)]

    return Case("vet --allow", name, bad, run)


def allow_cases() -> Iterator[Case]:
    good = "email:ann@mail\\.de  # the project's test address\n# a comment\n\napi-key:sk-.*  # a fake key of the tests\n"
    yield _allow_case("valid", False, good)
    yield _allow_case("an empty allowlist", False, "")
    # a pattern is any text before ``  #``: one with a capitalised kind is a pattern, warned about when it accepts nothing
    yield _allow_case("a pattern that looks like a kind in capitals", False, good + "EMAIL:ann  # never matches\n")
    for line in ("ann@mail\\.de", "ann@mail\\.de  #", "ann@mail\\.de  #   ", "mail:ann@mail\\.de  # an unknown kind",
                 "([a-z  # does not compile", "(?P<x>a)(?P<x>b)  # a group named twice",
                 "a{99999999999}  # a repetition too large", "(" * 2000 + ")" * 2000 + "  # nested too deep",
                 "email:  # an empty pattern", "api-key:  # an empty pattern of a kind"):
        for at in ("first", "last"):
            text = (line + "\n" + good) if at == "first" else (good + line + "\n")
            yield _allow_case(f"a line {line[:30]!r} ({at})", True, text)
    for name, content in BROKEN_FILES:
        if name not in ("an empty file", "blank lines only"):
            yield _allow_case(f"{name}", True, content)
    yield _allow_case("in Latin-1", True, (good + "caf\u00e9  # a word\n").encode("latin-1"))

    def folder_case(folder: Path) -> list[str]:
        (folder / "data.jsonl").write_text(raw_json(VETTED) + "\n", encoding="utf-8")
        return ["vet", str(folder / "data.jsonl"), "--allow", str(folder)]

    yield Case("vet --allow", "a folder, not a file", True, folder_case)
    yield Case("vet --allow", "no such file", True,
               lambda folder: ["vet", str(ROOT / "README.md"), "--allow", str(folder / "missing.txt")])


# --- facts DATA --dry-run ------------------------------------------------------------------------


def _facts_case(name: str, bad: bool, text: Callable[[], str | bytes]) -> Case:
    def run(folder: Path) -> list[str]:
        data = folder / "data"
        data.mkdir()
        content = text()
        (data / "sessions.jsonl").write_bytes((content if isinstance(content, bytes) else content.encode("utf-8")) + b"\n")
        return ["facts", str(data), "--dry-run", "--split", "all", "--strategies", "facts", "--route-turns", "0",
                "--out", str(folder / "results.jsonl")]

    return Case("facts", name, bad, run)


#: v1 session fields the facts run reads, by what they must not be
FACTS_FIELDS: dict[str, tuple[Any, ...]] = {
    "session_id": BAD_IDS, "probes[6].after": BAD_COUNTS, "probes[6].category": BAD_NAMES, "probes[6].id": ("", 5, None),
    "probes[6].gold": (5, [], {}), "timeline[0].turn": BAD_COUNTS, "timeline[0].status": ("maybe", 5),
    "timeline[0].thread": ("nowhere",), "turns[1].text": (5, [], None), "threads[0].id": BAD_IDS,
}


def facts_cases() -> Iterator[Case]:
    good = _facts_util.session("en-0001")
    yield _facts_case("valid", False, lambda: raw_json(good))
    for name, doc in mutations(good, FACTS_FIELDS, ("probes[6].after", "timeline[0].turn")):
        yield _facts_case(name, True, lambda doc=doc: doc if isinstance(doc, (str, bytes)) else raw_json(doc))
    yield _facts_case("the same session twice", True, lambda: raw_json(good) + "\n" + raw_json(good))
    yield _facts_case("a v0 session", True, lambda: raw_json({k: v for k, v in good.items()
                                                              if k not in ("probes", "timeline")} | {"version": "interleave-v0"}))
    for name, content in BROKEN_FILES:
        yield _facts_case(name, True, lambda content=content: content)


# --- export-irc PRED --data DATA -----------------------------------------------------------------

IRC = ROOT / "tests" / "data" / "irc"


@functools.lru_cache(maxsize=1)
def irc_run() -> dict[str, Any]:
    """A run on imported IRC data: ``{"sessions": [session dicts], "rows": [prediction rows]}``
    (the corpus of the tests imported once; every message routed to its gold conversation)."""
    from interleave_bench.irc import import_irc

    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(IRC, Path(tmp) / "corpus")
        result = import_irc(Path(tmp) / "corpus", Path(tmp) / "out")
        lines = (result.out / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    sessions = [json.loads(x) for x in lines if x.strip()]
    rows = [{"session_id": s["session_id"], "i": t["i"], "pred": t["gold"]["thread"] or f"x{t['i']}", "mode": "open",
             "policy": "oracle", "via": "baseline"} for s in sessions for t in s["turns"]]
    return {"sessions": sessions, "rows": rows}


def _export_case(name: str, bad: bool, sessions: Callable[[], str | bytes] | None = None,
                 rows: Callable[[], str | bytes] | None = None, record: str | bytes | None = None,
                 data_arg: bool = True) -> Case:
    def run(folder: Path) -> list[str]:
        run = irc_run()
        data = folder / "data"
        (data / "predictions").mkdir(parents=True)
        s = sessions() if sessions else "\n".join(raw_json(x) for x in run["sessions"])
        r = rows() if rows else "\n".join(raw_json(x) for x in run["rows"])
        (data / "sessions.jsonl").write_bytes((s if isinstance(s, bytes) else s.encode("utf-8")) + b"\n")
        pred = data / "predictions" / "open-oracle.jsonl"
        pred.write_bytes((r if isinstance(r, bytes) else r.encode("utf-8")) + b"\n")
        if record is not None:
            (data / "predictions" / "open-oracle.run.json").write_bytes(record if isinstance(record, bytes) else record.encode())
        return ["export-irc", str(pred), "--out", str(folder / "irc"), *(["--data", str(data)] if data_arg else [])]

    return Case("export-irc", name, bad, run)


def export_irc_cases() -> Iterator[Case]:
    yield _export_case("valid", False)
    yield _export_case("valid, the data found beside the predictions", False, data_arg=False)
    run = irc_run()
    lines = lambda rows: "\n".join(raw_json(x) for x in rows)  # noqa: E731
    # the run is in open mode: a row in closed mode is the one of another mode
    fields = {**ROW_FIELDS, "mode": tuple("closed" if m == "open" else m for m in ROW_FIELDS["mode"])}
    for name, doc in mutations(run["rows"][2], fields, ("i",)):
        row = doc if isinstance(doc, (str, bytes)) else raw_json(doc)
        def rows(row=row) -> str | bytes:
            head, tail = lines(run["rows"][:2]), lines(run["rows"][3:])
            return (head.encode() + b"\n" + row + b"\n" + tail.encode()) if isinstance(row, bytes) else f"{head}\n{row}\n{tail}"

        yield _export_case(f"predictions: row 3: {name}", True, rows=rows)
    yield _export_case("predictions: a turn twice", True, rows=lambda: lines(run["rows"] + [run["rows"][2]]))
    for name, content in BROKEN_FILES:
        yield _export_case(f"predictions: {name}", True, rows=lambda content=content: content)
    session_fields: dict[str, tuple[Any, ...]] = {
        "session_id": BAD_IDS, "source_file": (5, "", None, "a\nerror: forged", []), "turns[1].i": BAD_COUNTS,
        "turns[1].gold.thread": (5, [], "a\nerror: forged"), "turns[1].text": (5, [], None)}
    for name, doc in mutations(run["sessions"][0], session_fields, ("turns[1].i",)):
        text = doc if isinstance(doc, (str, bytes)) else raw_json(doc)
        def sessions(text=text) -> str | bytes:
            rest = lines(run["sessions"][1:])
            return (text + b"\n" + rest.encode()) if isinstance(text, bytes) else (text + ("\n" + rest if rest else ""))

        yield _export_case(f"sessions: {name}", True, sessions=sessions)
    for name, content in BROKEN_FILES:
        yield _export_case(f"sessions: {name}", True, sessions=lambda content=content: content)
    # the run record beside the predictions names the data when --data is not given
    for name, record in (("not JSON", "{"), ("1e400", '{"data": 1e400}'), ("a repeated key", '{"data": "x", "data": "y"}'),
                         ("nested 100,000 deep", "[" * 100_000 + "]" * 100_000), ("binary", bytes(range(256)))):
        yield _export_case(f"run record: {name}", True, record=record, data_arg=False)


COMMANDS = {"vet --allow": allow_cases, "facts": facts_cases, "export-irc": export_irc_cases}
