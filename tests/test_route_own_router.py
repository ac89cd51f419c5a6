"""Your own router from Python (``run_route``, docs/route.md#extending)."""

from __future__ import annotations

import importlib
import re
import sys
from contextlib import contextmanager, redirect_stdout
from io import StringIO
from pathlib import Path

import pytest

from interleave_bench.cli import main
from interleave_bench.io import read_json

from _route_util import read_rows, write_data

DOCS = Path(__file__).resolve().parents[1] / "docs" / "route.md"


def docs_block(marker: str, after: str = "") -> str:
    """The first ```python block of docs/route.md holding ``marker`` (after the heading ``after``)."""
    text = DOCS.read_text(encoding="utf-8")
    text = text[text.index(after):] if after else text
    return next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if marker in b)


@contextmanager
def module_at(folder: Path, name: str, source: str, monkeypatch):
    """Module ``name`` written from ``source`` into ``folder`` and importable from there (dropped after)."""
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop(name, None)
    importlib.invalidate_caches()
    try:
        yield importlib.import_module(name)
    finally:
        sys.modules.pop(name, None)


@pytest.fixture
def docs_router(tmp_path, monkeypatch):
    """The docs' ``my_router.py`` (class KeywordRouter), importable, and the docs' data folder under the current one."""
    monkeypatch.chdir(tmp_path)
    write_data(tmp_path / "data" / "interleave-v0-offline")
    with module_at(tmp_path / "mods", "my_router", docs_block("class KeywordRouter"), monkeypatch) as module:
        yield module


def test_the_extending_example_runs_as_written(docs_router, tmp_path):
    code = docs_block("run_route(", after="## Extending")
    printed = StringIO()
    with redirect_stdout(printed):
        exec(compile(code, "extending.py", "exec"), {"__name__": "extending"})
    said = re.search(r"print\(result\.path\)  # (\S+)", code).group(1)
    assert printed.getvalue() == said + "\n"
    rows = read_rows(tmp_path / said)
    assert rows and {r["policy"] for r in rows} == {"keyword-2"} and all("burst" in r for r in rows)
    options = read_json((tmp_path / said).with_suffix(".run.json"))["options"]
    # the record names the router and holds its code and settings, as a --router run's does
    assert options["router"] == "my_router:KeywordRouter" and options["policy"] == "keyword-2"
    assert options["router_code"].startswith("sha256:") and options["router_state"].startswith("sha256:")


def test_run_route_names_the_run_by_the_router_and_writes_what_route_router_writes(docs_router, tmp_path):
    from interleave_bench.route.runner import RouteOptions, run_route

    data = tmp_path / "data" / "interleave-v0-offline"
    result = run_route(data, RouteOptions(mode="closed"), router=docs_router.KeywordRouter(min_score=2))
    assert result.path == data / "predictions" / "closed-keyword.jsonl"
    from_python = result.path.read_bytes()
    assert main(["route", str(data), "--mode", "closed", "--router", "my_router:KeywordRouter",
                 "--router-arg", "min_score=2", "--out", str(tmp_path / "cli.jsonl")]) == 0
    assert (tmp_path / "cli.jsonl").read_bytes() == from_python


def test_run_route_refuses_a_router_object_under_a_built_in_name_or_a_bad_one(docs_router, tmp_path):
    from interleave_bench.errors import UsageError
    from interleave_bench.route.runner import RouteOptions, run_route

    data = tmp_path / "data" / "interleave-v0-offline"
    with pytest.raises(UsageError, match="--policy must be one of"):
        run_route(data, RouteOptions(mode="closed", policy="slowkw"))  # no router: a name is not enough
    with pytest.raises(UsageError, match="router policy name 'a b': use letters"):
        run_route(data, RouteOptions(mode="closed", policy="a b"), router=docs_router.KeywordRouter())
    assert not (data / "predictions").exists()
