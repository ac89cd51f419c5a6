"""The hostile corpus over ``import inspect LOG --out PRED`` (``benchmarks/hostile.py`` runs it with the rest).

A valid log of ``interleavebench/routing`` is written once with inspect's own writer (one sample,
the session and prediction rows of :mod:`hostile_reading`); each case is that log with one member
changed: a header field, a sample field or one prediction row set to a value no run writes (the
values of :mod:`hostile_base`, spliced in raw where JSON cannot hold them), a key repeated, a
member cut off, broken or missing, or the whole file broken (empty, binary, a zip cut in half). The
same changes are made to the log written as one JSON document (``.json``) where they apply. Values
inspect writes itself outside the fields the import reads (NaN in a score or in metadata) are
valid and must be taken.
"""

from __future__ import annotations

import copy
import functools
import json
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterator

from hostile_base import BAD_COUNTS, BAD_IDS, RAW_EXTRAS, Case, raw_json
from hostile_reading import BROKEN_FILES, ROW_FIELDS, ROWS, SESSION, repeated, set_at, with_extra

#: the store key and the members of an ``.eval`` log (interleave_bench.harness.names, inspect's layout)
KEY = "interleavebench_predictions"
HEADER, START, SAMPLE = "header.json", "_journal/start.json", "samples/en-0001_epoch_1.json"
#: the run's model and mode, as the log's header states them
MODEL, MODE = "mockllm/model", "closed"
#: stands where a raw value is spliced into a member's JSON text
MARK = "@@RAW@@"


@functools.lru_cache(maxsize=1)
def base_log() -> dict[str, Any]:
    """``{"members": {name: text}, "json": text}``: the valid log, as an archive's members and as one document."""
    import tempfile

    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log

    sample = EvalSample(id=SESSION["session_id"], epoch=1, input="the session's messages", target="A",
                        metadata={"position": 0}, store={KEY: copy.deepcopy(ROWS)})
    log = EvalLog(status="success", samples=[sample],
                  eval=EvalSpec(created="2026-01-01T00:00:00+00:00", task="interleavebench/routing", dataset=EvalDataset(),
                                model=MODEL, config=EvalConfig(), task_args={"data": "data", "mode": MODE}))
    with tempfile.TemporaryDirectory() as tmp:
        write_eval_log(log, str(Path(tmp) / "run.eval"))
        write_eval_log(log, str(Path(tmp) / "run.json"))
        with zipfile.ZipFile(Path(tmp) / "run.eval") as zf:  # inspect_ai.log taught zipfile its zstd
            members = {n: zf.read(n).decode("utf-8") for n in zf.namelist()}
        whole = (Path(tmp) / "run.json").read_text(encoding="utf-8")
    return {"members": members, "json": whole}


def _archive(path: Path, members: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    return path


def _case(name: str, bad: bool, write: Callable[[Path], Path]) -> Case:
    def run(folder: Path) -> list[str]:
        return ["import", "inspect", str(write(folder)), "--out", str(folder / "pred.jsonl")]

    return Case("import inspect", name, bad, run)


def _member_case(name: str, bad: bool, member: str, change: Callable[[Any], str | bytes | None]) -> Case:
    """A case of the ``.eval`` log with ``member`` replaced by ``change(parsed member)`` (None: left out)."""
    def write(folder: Path) -> Path:
        members: dict[str, str | bytes] = dict(base_log()["members"])
        new = change(json.loads(members[member]))
        if new is None:
            del members[member]
        else:
            members[member] = new
        return _archive(folder / "run.eval", members)

    return _case(f".eval: {name}", bad, write)


def _json_case(name: str, bad: bool, change: Callable[[Any], str | bytes]) -> Case:
    """A case of the ``.json`` log: ``change`` is given the whole log and returns its new text."""
    def write(folder: Path) -> Path:
        content = change(json.loads(base_log()["json"]))
        path = folder / "run.json"
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return path

    return _case(f".json: {name}", bad, write)


def _raw_at(doc: Any, path: str, raw: str) -> str:
    return raw_json(set_at(doc, path, MARK)).replace(f'"{MARK}"', raw)


#: sample fields the import reads, by what they must not be
SAMPLE_FIELDS: dict[str, tuple[Any, ...]] = {
    "id": BAD_IDS, "epoch": BAD_COUNTS + (0, None), "metadata.position": BAD_COUNTS,
    "store": ([], "x", {}, None), f"store.{KEY}": ("x", {}, 5, None, []),
    "error": ({"message": "the model failed\nerror: forged", "traceback": "", "traceback_ansi": ""},),
}
#: header fields the import reads
HEADER_FIELDS: dict[str, tuple[Any, ...]] = {
    "eval.task": ("other/task", 5, None), "eval.model": ("a\nerror: forged", 5, None, ""),
    "eval.task_args.mode": ("sideways", 5, "open"),
}


def _sample_changes() -> Iterator[tuple[str, Callable[[Any], str | bytes]]]:
    """``(name, change)`` for one sample (a parsed ``samples/*.json`` member, or the ``.json`` log's first sample)."""
    row = f"store.{KEY}[2]"
    for path, values in SAMPLE_FIELDS.items():
        for v in values:
            yield f"{path} = {v!r}"[:80], lambda s, p=path, v=v: raw_json(set_at(s, p, v))
    for field, values in ROW_FIELDS.items():
        for v in values:
            yield f"row 3: {field} = {v!r}"[:80], lambda s, f=field, v=v: raw_json(set_at(s, f"{row}.{f}", v))
    for path in (f"{row}.i", f"{row}.confidence", "metadata.position", "epoch"):
        for name, raw in RAW_EXTRAS:
            yield f"{path} = {name}", lambda s, p=path, raw=raw: _raw_at(s, p, raw)
    yield "row 3: an extra field of NaN", lambda s: _raw_at(s, f"{row}.extra", "NaN")
    yield "row 3: a repeated key", lambda s: raw_json(s).replace(raw_json(s[("store")][KEY][2])[:-1],
                                                                  repeated(s["store"][KEY][2])[:-1], 1)
    yield "the rows key repeated", lambda s: raw_json(s).replace(f'"{KEY}": ', f'"{KEY}": [], "{KEY}": ', 1)
    yield "the store key repeated", lambda s: raw_json(s).replace('"store": ', '"store": {}, "store": ', 1)
    yield "the id key repeated", lambda s: raw_json(s).replace('"id": ', '"id": "en-0002", "id": ', 1)
    yield "a turn twice", lambda s: raw_json(set_at(s, f"store.{KEY}", s["store"][KEY] + [s["store"][KEY][2]]))
    yield "a row of another session", lambda s: raw_json(set_at(s, f"{row}.session_id", "en-0002"))
    yield "a row nested 100,000 deep", lambda s: _raw_at(s, f"{row}.refs", "[" * 100_000 + "]" * 100_000)
    yield "a 5,000-digit number in the events", lambda s: _raw_at(s, "events", "[" + "9" * 5000 + "]")
    yield "cut off", lambda s: raw_json(s)[: len(raw_json(s)) // 2]
    yield "in Latin-1", lambda s: raw_json(set_at(s, f"{row}.policy", "caf\u00e9")).encode("latin-1")
    yield "not an object", lambda s: "[1, 2]"


def _valid_changes() -> Iterator[tuple[str, Callable[[Any], str]]]:
    """Values inspect writes outside the fields the import reads: to be taken as they are."""
    yield "NaN in the sample's metadata", lambda s: _raw_at(s, "metadata.note", "NaN")
    yield "NaN as a score", lambda s: _raw_at(s, "scores", '{"routing_scorer": {"value": NaN}}')
    yield "a key repeated in the metadata", lambda s: raw_json(s).replace('"metadata": {', '"metadata": {"note": 1, "note": 2, ', 1)


def _first_sample(change: Callable[[Any], str | bytes]) -> Callable[[Any], str | bytes]:
    """A sample change made to the first sample of a ``.json`` log."""
    def whole(log: Any) -> str | bytes:
        text = raw_json(log)
        sample_text = raw_json(log["samples"][0])
        assert sample_text in text
        new = change(log["samples"][0])
        if isinstance(new, bytes):
            return text.encode("utf-8").replace(sample_text.encode("utf-8"), new, 1)
        return text.replace(sample_text, new, 1)

    return whole


def inspect_cases() -> Iterator[Case]:
    yield _member_case("valid", False, SAMPLE, lambda s: raw_json(s))
    yield _json_case("valid", False, lambda log: raw_json(log))
    for name, change in _valid_changes():
        yield _member_case(name, False, SAMPLE, change)
        yield _json_case(name, False, _first_sample(change))
    for name, change in _sample_changes():
        yield _member_case(f"sample: {name}", True, SAMPLE, change)
        yield _json_case(f"sample: {name}", True, _first_sample(change))
    for path, values in HEADER_FIELDS.items():
        for v in values:
            change = lambda h, p=path, v=v: raw_json(set_at(h, p, v))  # noqa: E731
            yield _member_case(f"header: {path} = {v!r}", True, HEADER, change)
            yield _json_case(f"header: {path} = {v!r}", True, change)
    yield _member_case("header: task_args.mode = 1e400", True, HEADER, lambda h: _raw_at(h, "eval.task_args.mode", "1e400"))
    yield _member_case("header: the eval key repeated", True, HEADER, lambda h: raw_json(h).replace('"eval": ', '"eval": {}, "eval": ', 1))
    yield _member_case("header: cut off", True, HEADER, lambda h: raw_json(h)[:100])
    # a run that did not finish has no header yet: its spec is read from the journal's start
    yield _member_case("no header member (a run that did not finish)", False, HEADER, lambda h: None)
    for name, change in (("task another", lambda t: raw_json(set_at(t, "eval.task", "other/task"))),
                         ("mode 1e400", lambda t: _raw_at(t, "eval.task_args.mode", "1e400")),
                         ("eval key repeated", lambda t: raw_json(t).replace('"eval": ', '"eval": {}, "eval": ', 1))):
        def no_header(folder: Path, change=change) -> Path:
            members = {k: v for k, v in base_log()["members"].items() if k != HEADER}
            members[START] = change(json.loads(members[START]))
            return _archive(folder / "run.eval", members)

        yield _case(f".eval: no header member, the start's {name}", True, no_header)
    yield _case(".eval: no header and no start member", True, lambda folder: _archive(
        folder / "run.eval", {k: v for k, v in base_log()["members"].items() if k not in (HEADER, START)}))
    yield _member_case("no sample member", True, SAMPLE, lambda s: None)
    yield _member_case("a sample member of random bytes", True, SAMPLE, lambda s: bytes(range(256)) * 4)
    def cut(folder: Path) -> Path:
        full = _archive(folder / "full.eval", dict(base_log()["members"])).read_bytes()
        path = folder / "run.eval"
        path.write_bytes(full[: len(full) // 2])
        return path

    yield _case(".eval: the archive cut in half", True, cut)
    yield _case(".eval: a zip archive of something else", True,
                lambda folder: _archive(folder / "run.eval", {"notes.txt": "hello"}))
    for name, content in BROKEN_FILES + (("JSON text named .eval", raw_json({"a": 1}).encode()),):
        for suffix in (".eval", ".json"):
            def write(folder: Path, content=content, suffix=suffix) -> Path:
                path = folder / f"run{suffix}"
                path.write_bytes(content)
                return path

            yield _case(f"{suffix}: {name}", True, write)
    yield _case("a folder, not a log", True, lambda folder: folder)
    yield _case("no such file", True, lambda folder: folder / "missing.eval")


COMMANDS = {"import inspect": inspect_cases}
