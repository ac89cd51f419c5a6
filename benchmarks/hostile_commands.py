"""The hostile corpus over the last commands that read a user's files (``benchmarks/hostile.py`` runs it):

- ``vet --allow FILE``: the allowlist (broken lines, unknown kinds, patterns that do not compile,
  binary and Latin-1 files);
- ``facts DATA --dry-run``: the v1 sessions it asks its probes on (the fake model on loopback);
- ``export-irc PRED --data DATA``: a run on imported IRC data (its predictions, its sessions and the
  run record beside the predictions);
- ``route --out PRED`` and ``generate --out DIR`` resumed: what an earlier run kept in its output, read back;
- ``push DIR``: an exported folder (its card, its Parquet files and their rows), validated before
  anything is sent (the case stops at the missing token when the folder is valid).
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




# --- push DIR: an exported folder, validated before anything is sent -------------------------------

#: the push stops at its first step past the folder's validation when there is no token to publish with
PUSH_ENV = {"HF_TOKEN": ""}
PARQUET = "v0/dev-00000-of-00001.parquet"


@functools.lru_cache(maxsize=1)
def exported() -> dict[str, bytes]:
    """The files ``export --v0`` writes for the session of :mod:`hostile_reading`: ``{relative path: bytes}``."""
    import contextlib
    import io

    from hostile_reading import SESSION

    from interleave_bench.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        (data / "sessions.jsonl").write_text(raw_json(SESSION) + "\n", encoding="utf-8")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main(["export", "--v0", str(data), "--out", str(Path(tmp) / "hub")]) == 0
        return {str(p.relative_to(Path(tmp) / "hub")): p.read_bytes() for p in (Path(tmp) / "hub").rglob("*") if p.is_file()}


def _parquet_rows(change: Callable[[dict], None]) -> bytes:
    """The exported Parquet file with its one row changed in place (same schema)."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(io.BytesIO(exported()[PARQUET]))
    rows = table.to_pylist()
    change(rows[0])
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), out)
    return out.getvalue()


def _other_schema() -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([{"a": 1}]), out)
    return out.getvalue()


def _push_case(name: str, bad: bool, changes: Callable[[], dict[str, bytes | None]]) -> Case:
    def run(folder: Path) -> list[str]:
        files: dict[str, bytes | None] = {**exported(), **changes()}
        hub = folder / "hub"
        for rel, content in files.items():
            if content is not None:
                (hub / rel).parent.mkdir(parents=True, exist_ok=True)
                (hub / rel).write_bytes(content)
        hub.mkdir(exist_ok=True)
        return ["push", str(hub), "--repo", "org/data"]

    return Case("push", name, bad, run, None if bad else "no Hugging Face token", env=PUSH_ENV)


def push_cases() -> Iterator[Case]:
    readme = lambda: exported()["README.md"].decode("utf-8")  # noqa: E731
    yield _push_case("the folder as exported", False, dict)
    yield _push_case("no README", True, lambda: {"README.md": None})
    yield _push_case("a README without its YAML header", True, lambda: {"README.md": b"# InterleaveBench\n"})
    yield _push_case("a README whose YAML is broken", True, lambda: {"README.md": b"---\nconfigs: [\n---\n"})
    yield _push_case("a README declaring an unknown config", True,
                     lambda: {"README.md": readme().replace("config_name: v0", "config_name: v9", 1).encode()})
    yield _push_case("a README naming no file for its split", True,
                     lambda: {"README.md": readme().replace("path: v0/dev-*.parquet", "path: v0/none-*.parquet", 1).encode()})
    yield _push_case("a README in Latin-1", True, lambda: {"README.md": readme().encode("utf-8") + "caf\u00e9\n".encode("latin-1")})
    yield _push_case("no Parquet file", True, lambda: {PARQUET: None})
    for name, content in (("cut in half", lambda: exported()[PARQUET][: len(exported()[PARQUET]) // 2]),
                          ("empty", lambda: b""), ("random bytes", lambda: bytes(range(256)) * 8),
                          ("of another schema", _other_schema)):
        yield _push_case(f"a Parquet file {name}", True, lambda content=content: {PARQUET: content()})
    for name, change in (("session_id ''", lambda r: r.__setitem__("session_id", "")),
                         ("a newline in session_id", lambda r: r.__setitem__("session_id", "a\nerror: forged")),
                         ("turns[1].i = -1", lambda r: r["turns"][1].__setitem__("i", -1)),
                         ("turns[1].gold.thread = 'nowhere'", lambda r: r["turns"][1]["gold"].__setitem__("thread", "nowhere")),
                         ("no turns", lambda r: r.__setitem__("turns", [])),
                         ("threads[0].id = ''", lambda r: r["threads"][0].__setitem__("id", ""))):
        yield _push_case(f"a row with {name}", True, lambda change=change: {PARQUET: _parquet_rows(change)})


# --- route --out PRED, resumed: the rows a run kept are read back ----------------------------------

ROUTE = ["--mode", "closed", "--policy", "bm25"]


def _two_sessions() -> str:
    from hostile_reading import SESSION

    return raw_json(SESSION) + "\n" + raw_json({**SESSION, "session_id": "en-0002"}) + "\n"


@functools.lru_cache(maxsize=1)
def routed() -> dict[str, Any]:
    """A bm25 run over two sessions: ``{"rows": [row lines]}``."""
    import contextlib
    import io

    from interleave_bench.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "sessions.jsonl").write_text(_two_sessions(), encoding="utf-8")
        out = Path(tmp) / "run.jsonl"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main(["route", str(Path(tmp) / "sessions.jsonl"), *ROUTE, "--out", str(out)]) == 0
        return {"rows": out.read_text(encoding="utf-8").splitlines()}


def _resume_case(name: str, bad: bool, kept: Callable[[list[str]], str | bytes]) -> Case:
    """``route`` resumed on an output holding ``kept(the run's row lines)`` (the first session done)."""
    def run(folder: Path) -> list[str]:
        (folder / "sessions.jsonl").write_text(_two_sessions(), encoding="utf-8")
        out = folder / "run.jsonl"
        content = kept(routed()["rows"])
        out.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return ["route", str(folder / "sessions.jsonl"), *ROUTE, "--out", str(out)]

    return Case("route (resumed)", name, bad, run)


def resume_cases() -> Iterator[Case]:
    def first(rows: list[str]) -> list[dict]:
        return [json.loads(r) for r in rows if json.loads(r)["session_id"] == "en-0001"]

    def with_row3(change: Callable[[dict], str | bytes]) -> Callable[[list[str]], str | bytes]:
        def kept(rows: list[str]) -> str | bytes:
            done = first(rows)
            new = change(done[3])
            parts = [raw_json(r) for r in done[:3]], [raw_json(r) for r in done[4:]]
            if isinstance(new, bytes):
                return b"\n".join([*(x.encode() for x in parts[0]), new, *(x.encode() for x in parts[1])]) + b"\n"
            return "\n".join([*parts[0], new, *parts[1]]) + "\n"

        return kept

    yield _resume_case("the first session done", False, lambda rows: "\n".join(raw_json(r) for r in first(rows)) + "\n")
    yield _resume_case("the first session done, the second cut mid-way", False,
                       lambda rows: "\n".join(rows[: len(first(rows)) + 3]) + "\n" + rows[len(first(rows)) + 3][:30])
    yield _resume_case("an empty output", False, lambda rows: "")
    fields = {k: v for k, v in ROW_FIELDS.items() if k not in ("session_id", "mode", "policy")}
    for name, doc in mutations(json.loads(routed()["rows"][3]), fields, ("i", "confidence")):
        yield _resume_case(f"row 4: {name}", True, with_row3(lambda r, doc=doc: doc if isinstance(doc, (str, bytes)) else raw_json(doc)))
    yield _resume_case("row 4: a turn given twice", True, with_row3(lambda r: raw_json({**r, "i": 2})))
    yield _resume_case("row 4: a turn the session lacks", True, with_row3(lambda r: raw_json({**r, "i": 99})))
    yield _resume_case("row 4: of another policy", True, with_row3(lambda r: raw_json({**r, "policy": "local"})))
    yield _resume_case("row 4: of another session", True, with_row3(lambda r: raw_json({**r, "session_id": "en-0002"})))
    for name, content in BROKEN_FILES:
        # a last line without its line break is what a crash leaves: cut off, and routed again
        if b"\n" in content.rstrip(b"\n ") or (content.strip() and content.endswith(b"\n")):
            yield _resume_case(name, True, lambda rows, content=content: content)


# --- generate --out DIR, resumed: the sessions an earlier run wrote are read back -------------------

GENERATE = ["generate", "--offline", "--sessions", "2"]


@functools.lru_cache(maxsize=1)
def generated() -> dict[str, Any]:
    """An offline generation of two sessions: ``{"sessions": [dicts], "manifest": text}``."""
    import contextlib
    import io

    from interleave_bench.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main([*GENERATE, "--out", tmp]) == 0
        lines = (Path(tmp) / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
        return {"sessions": [json.loads(x) for x in lines], "manifest": (Path(tmp) / "manifest.json").read_text()}


def _generate_case(name: str, bad: bool, kept: Callable[[], str | bytes]) -> Case:
    """``generate`` resumed on a folder whose ``sessions.jsonl`` holds ``kept()`` (its manifest as written)."""
    def run(folder: Path) -> list[str]:
        out = folder / "gen"
        out.mkdir()
        (out / "manifest.json").write_text(generated()["manifest"], encoding="utf-8")
        content = kept()
        (out / "sessions.jsonl").write_bytes((content if isinstance(content, bytes) else content.encode("utf-8")) + b"\n")
        return [*GENERATE, "--out", str(out)]

    return Case("generate (resumed)", name, bad, run)


def generate_cases() -> Iterator[Case]:
    from hostile_reading import SESSION_FIELDS

    first = generated()["sessions"][0]
    yield _generate_case("the first session written", False, lambda: raw_json(first))
    fields = {k: v for k, v in SESSION_FIELDS.items() if k in ("session_id", "persona", "turns[1].i", "turns[1].text",
                                                                 "turns[1].gold.thread", "threads[0].id")}
    for name, doc in mutations(first, fields, ("turns[1].i",)):
        yield _generate_case(name, True, lambda doc=doc: doc if isinstance(doc, (str, bytes)) else raw_json(doc))
    for name, content in BROKEN_FILES:
        if content.strip():
            yield _generate_case(name, True, lambda content=content: content)


COMMANDS = {"generate (resumed)": generate_cases, "route (resumed)": resume_cases, "vet --allow": allow_cases, "facts": facts_cases, "export-irc": export_irc_cases, "push": push_cases}
