"""Every reading command over every file of the malformed corpus (``tests/malformed/``): exit 2, one
line naming the file, no traceback, nothing written. Commands run in-process for speed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from interleave_bench.cli import main

from _route_util import EN_THREADS, EN_TURNS, session_dict, write_data

CORPUS = Path(__file__).resolve().parent / "malformed"

#: (corpus folder, where the file is put, the commands that read it); ``{F}`` is the file, ``{D}``
#: the data folder, ``{P}`` good predictions, ``{O}`` an output the command would write
COMMANDS: dict[str, tuple[str, list[list[str]]]] = {
    "sessions": ("data/sessions.jsonl", [
        ["validate", "{F}"],
        ["validate", "{D}"],
        ["validate", "{D}", "{P}"],
        ["route", "{D}", "--mode", "closed", "--policy", "bm25"],
        ["baselines", "{D}"],
        ["score", "{D}", "{P}", "--bootstrap", "0"],
        ["compare", "{D}", "{P}", "{P}", "--bootstrap", "0"],
        ["export", "--v0", "{D}", "--out", "{O}"],
    ]),
    "predictions": ("preds/{name}", [
        ["validate", "{F}"],
        ["validate", "{D}", "{F}"],
        ["score", "{D}", "{F}", "--bootstrap", "0"],
        ["compare", "{D}", "{P}", "{F}", "--bootstrap", "0"],
    ]),
    "strict": ("preds/{name}", [
        ["validate", "{D}", "{F}"],
    ]),
    "cases": ("cases/{name}", [
        ["validate", "{F}"],
        ["mid-reply", "{F}", "--rule-only", "--out", "{O}"],
        ["export", "--mid-reply", "{F}", "--out", "{O}"],
    ]),
    "manifests": ("data/manifest.json", [
        ["validate", "{F}"],
        ["validate", "{D}"],
        ["export", "--v0", "{D}", "--out", "{O}"],
    ]),
    "scores": ("scores/{name}", [
        ["validate", "{F}"],
        ["leaderboard", "add", "{F}", "--repo", "org/board"],
    ]),
}

CASES = [
    pytest.param(kind, path.name, argv, id=f"{kind}/{path.name}:{argv[0]}{'-' + argv[1] if argv[0] == 'leaderboard' else ''}#{k}")
    for kind, (_, commands) in COMMANDS.items()
    for path in sorted((CORPUS / kind).iterdir()) if path.is_file()
    for k, argv in enumerate(commands)
]


def test_the_corpus_is_large_enough_and_covers_every_kind():
    files = [p for kind in COMMANDS for p in (CORPUS / kind).iterdir() if p.is_file()]
    assert len(files) >= 60
    assert all(any((CORPUS / kind).iterdir()) for kind in COMMANDS)


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("kind,name,argv", CASES)
def test_every_reading_command_refuses_every_malformed_file(kind, name, argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    place, _ = COMMANDS[kind]
    data = write_data(tmp_path / "data", [session_dict("en-0001", EN_THREADS, EN_TURNS)])
    good = tmp_path / "good.jsonl"
    good.write_text("".join(
        json.dumps({"session_id": "en-0001", "i": k, "pred": th or "x1", "mode": "closed", "policy": "oracle"}) + "\n"
        for k, (_, th, *_rest) in enumerate(EN_TURNS)), encoding="utf-8")
    target = tmp_path / place.format(name=name)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CORPUS / kind / name, target)
    if kind == "manifests":  # only the manifest is wrong: the sessions beside it are good
        assert (data / "sessions.jsonl").exists()
    subs = {"{F}": str(target), "{D}": str(data), "{P}": str(good), "{O}": str(tmp_path / "out" / "o.jsonl")}
    args = [subs.get(a, a) for a in argv]
    before = snapshot(tmp_path)
    code = main(args)
    captured = capsys.readouterr()
    err = captured.err
    assert code == 2, (args, captured.out[-500:], err[-1000:])
    assert "Traceback" not in err and "internal error" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert errors and all(str(target) in line for line in errors), err
    assert snapshot(tmp_path) == before, "a refused input still left files behind"


@pytest.mark.parametrize("name", ["not-json.jsonl", "deep-nesting-line.jsonl", "lone-surrogate-text.jsonl",
                                  "array-line.jsonl", "latin1.jsonl"])
def test_generate_refuses_a_malformed_sessions_file_in_its_output_folder(name, tmp_path, capsys):
    out = tmp_path / "gen"
    assert main(["generate", "--offline", "--sessions", "1", "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    shutil.copyfile(CORPUS / "sessions" / name, out / "sessions.jsonl")
    capsys.readouterr()
    assert main(["generate", "--offline", "--sessions", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err and str(out / "sessions.jsonl") in err, err
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8")) == manifest
