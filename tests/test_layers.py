"""Imports point down the layers: commands -> capabilities -> score/io -> llm/schema, never up.

Read from the source (every ``import`` and ``from ... import`` of every module, at any depth of
the file, lazy ones included), so a lazy import cannot hide an upward arrow.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "interleave_bench"

#: each part of the package and its layer; a module may import only from its own layer or below
LAYER = {
    "errors": 0, "redaction": 0, "urls": 0, "text": 0, "progress": 0, "heap": 0, "strictjson": 0, "json_text": 0, "options": 0,
    "interrupted": 0,
    "schema": 1, "session_checks": 1, "documents": 1, "file_kinds": 1, "compiled": 1, "record_errors": 1,
    "llm": 2, "io": 2, "locks": 2, "fingerprints": 2, "provenance": 2,
    "score": 3, "vet": 3, "vetfiles": 3,
    "generate": 4, "route": 4, "facts": 4, "midreply": 4, "reports": 4, "hub": 4, "irc": 4, "sgd": 4, "release": 4, "harness": 4,
    "commands": 5, "metrics": 5, "cli": 5, "__main__": 5, "__init__": 5,
}
#: the layer's name in messages
NAMES = {0: "base", 1: "schema", 2: "model/io", 3: "score", 4: "capability", 5: "command"}


def part_of(module: str) -> str:
    """``interleave_bench.route.fake`` -> ``route``; ``interleave_bench`` itself -> ``__init__``."""
    bits = module.split(".")
    return bits[1] if len(bits) > 1 else "__init__"


def imports_of(path: Path) -> list[tuple[int, str]]:
    """``(line, absolute module)`` of every import in ``path`` that names this package."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    return imports_in(path.read_text(encoding="utf-8"), ".".join(rel.parts))


def imports_in(source: str, module: str) -> list[tuple[int, str]]:
    """``(line, absolute module)`` of every import in ``source`` (the text of ``module``) naming this package."""
    here = module.split(".")
    is_package = here[-1] == "__init__"
    package = here[:-1]
    if is_package:
        here = package
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("interleave_bench")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                if not node.module:  # from .. import x: x may be a module
                    out += [(node.lineno, f"{target}.{a.name}") for a in node.names]
                    continue
            else:
                target = node.module or ""
            if target.startswith("interleave_bench"):
                out.append((node.lineno, target))
    return out


def upward(module: str, imports: list[tuple[int, str]]) -> list[str]:
    """The imports of ``module`` that point to a higher layer, one message each."""
    me = part_of(module)
    bad = []
    for line, target in imports:
        them = part_of(target)
        if them in LAYER and LAYER[them] > LAYER[me]:
            bad.append(f"{module}:{line}: {NAMES[LAYER[me]]} layer imports {target} ({NAMES[LAYER[them]]} layer)")
    return bad


def upward_imports() -> list[str]:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        bad += upward(module, imports_of(path))
    return bad


def test_every_part_has_a_layer():
    parts = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if (p.suffix == ".py") or (p.is_dir() and (p / "__init__.py").exists())}
    assert parts <= set(LAYER), sorted(parts - set(LAYER))


def test_no_import_points_up():
    assert upward_imports() == []


def test_the_check_sees_lazy_relative_and_absolute_imports():
    probe = ("from .. import schema\n"
             "def f():\n    from ..route import fake\n    from ..hub.features import CONFIGS\n"
             "    import interleave_bench.commands.route\n")
    found = upward("interleave_bench.llm.probe", imports_in(probe, "interleave_bench.llm.probe"))
    assert found == [
        "interleave_bench.llm.probe:3: model/io layer imports interleave_bench.route (capability layer)",
        "interleave_bench.llm.probe:4: model/io layer imports interleave_bench.hub.features (capability layer)",
        "interleave_bench.llm.probe:5: model/io layer imports interleave_bench.commands.route (command layer)",
    ]
    # schema's package-relative imports resolve from the package root
    assert imports_in("from .hub import features\n", "interleave_bench.schema") == [(1, "interleave_bench.hub")]


@pytest.mark.parametrize("heavy", ["openai", "datasets"])
def test_importing_the_scorer_loads_no_model_client_or_datasets(heavy):
    code = f"import sys, interleave_bench.score; sys.exit({heavy!r} in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_the_model_layer_registers_no_fake_answers_of_its_own():
    code = "import sys, interleave_bench.llm.server as s, interleave_bench.llm.fake as f; sys.exit(len(f.HANDLERS))"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_a_command_hands_its_fake_answers_to_a_dry_run(tmp_path):
    # a fresh process (no test fixtures): the route command registers the routing handlers itself,
    # so the fake model answers routing requests rather than echoing them back
    from _score_util import many_sessions, write_jsonl

    data = write_jsonl(tmp_path / "data" / "sessions.jsonl", many_sessions(1, turns=4))
    out = tmp_path / "dry.jsonl"
    proc = subprocess.run([sys.executable, "-m", "interleave_bench", "route", str(data.parent), "--policy", "llm",
                           "--mode", "closed", "--split", "all", "--dry-run", "--no-cache", "--out", str(out)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    import json

    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 4 and all(r["pred"] != "ERROR" and r["via"] == "llm" for r in rows)
