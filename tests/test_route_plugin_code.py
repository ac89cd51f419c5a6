"""A plug-in router's code is its class's file and the modules it imports from its own package or
folder (``plugin_code.own_sources``): an edit to any of them makes a rerun another run."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import pytest

from interleave_bench.cli import main
from interleave_bench.fingerprints import sha256_file
from interleave_bench.io import read_json
from interleave_bench.route.plugin_code import code_fingerprint, own_sources

from _route_util import write_data


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def rel(paths, root: Path) -> list[str]:
    return [p.relative_to(root.resolve()).as_posix() for p in paths]


PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/router.py": ("import json\nimport numpy as np\nfrom .helpers import score\nfrom pkg import weights\n"
                      "from .. import outside\nfrom . import *\n\ndef later():\n    from .late import x\n"),
    "pkg/helpers.py": "from .deep.leaf import x\nimport pkg.router\n",
    "pkg/deep/__init__.py": "",
    "pkg/deep/leaf.py": "x = 1\n",
    "pkg/weights.py": "W = 1\n",
    "pkg/late.py": "x = 2\n",
    "pkg/unused.py": "y = 3\n",
    "sibling.py": "z = 4\n",
    "outside.py": "z = 5\n",
}


def test_a_package_router_follows_its_package_only(tmp_path):
    root = tree(tmp_path / "proj", {**PACKAGE, "pkg/router.py": PACKAGE["pkg/router.py"] + "import sibling\n"})
    got = own_sources(root / "pkg" / "router.py")
    # the class's file first, then the rest by path; an import inside a function counts (it runs
    # when called); json, numpy, a sibling outside the package and an unimported module do not
    assert rel(got, root) == ["pkg/router.py", "pkg/__init__.py", "pkg/deep/__init__.py", "pkg/deep/leaf.py",
                              "pkg/helpers.py", "pkg/late.py", "pkg/weights.py"]


def test_a_module_outside_any_package_follows_its_folder(tmp_path):
    root = tree(tmp_path / "mods", {
        "my_router.py": "import os\nimport helpers\nfrom util import tools\nfrom util.missing import q\n",
        "helpers.py": "import my_router\nfrom broken import b\n",  # a cycle, and a file that does not parse
        "broken.py": "def (:\n",
        "util/__init__.py": "",
        "util/tools.py": "t = 1\n",
        "util/other.py": "o = 1\n",
        "unrelated.py": "u = 1\n",
    })
    got = own_sources(root / "my_router.py")
    assert rel(got, root) == ["my_router.py", "broken.py", "helpers.py", "util/__init__.py", "util/tools.py"]


def test_a_file_importing_nothing_of_its_own_keeps_the_plain_file_hash(tmp_path):
    root = tree(tmp_path / "mods", {"alone.py": "import json\nfrom numpy import array\n", "other.py": ""})
    assert own_sources(root / "alone.py") == [(root / "alone.py").resolve()]
    assert code_fingerprint(root / "alone.py") == sha256_file(root / "alone.py")


def test_the_fingerprint_moves_with_an_imported_file_only(tmp_path):
    root = tree(tmp_path / "a", PACKAGE)
    first = code_fingerprint(root / "pkg" / "router.py")
    assert first.startswith("sha256:") and first != sha256_file(root / "pkg" / "router.py")
    (root / "pkg" / "unused.py").write_text("y = 4\n", encoding="utf-8")
    (root / "sibling.py").write_text("z = 0\n", encoding="utf-8")
    assert code_fingerprint(root / "pkg" / "router.py") == first
    moved = shutil.copytree(root, tmp_path / "b" / "elsewhere")  # the same files elsewhere: the same code
    assert code_fingerprint(moved / "pkg" / "router.py") == first
    (root / "pkg" / "deep" / "leaf.py").write_text("x = 2\n", encoding="utf-8")
    assert code_fingerprint(root / "pkg" / "router.py") != first


def test_an_installed_top_level_module_is_its_file_alone():
    import json

    got = own_sources(json.__file__)  # a package among installed ones: its own package is followed
    assert got[0].name == "__init__.py" and {p.name for p in got} >= {"decoder.py", "encoder.py"}
    assert all(p.parent == got[0].parent for p in got)
    import textwrap  # a top-level standard module: what lies beside it is not its own

    assert own_sources(textwrap.__file__) == [Path(textwrap.__file__).resolve()]


def test_the_module_name_says_where_imports_resolve_from(tmp_path):
    """A class's module name, as Python imported it, places its package: a symlinked class file, a
    folder of its own that holds an __init__.py, namespace packages without one."""
    root = tree(tmp_path / "work", {"pkg/__init__.py": "", "pkg/helpers.py": "MODE = 1\n",
                                    "shared/router.py": "from .helpers import MODE\n"})
    (root / "pkg" / "router.py").symlink_to(root / "shared" / "router.py")
    assert rel(own_sources(root / "pkg" / "router.py", "pkg.router"), root) == [
        "pkg/router.py", "pkg/__init__.py", "pkg/helpers.py"]
    # a router beside an __init__.py, imported as a top-level module (its folder on the path)
    proj = tree(tmp_path / "proj", {"__init__.py": "", "my_router.py": "import helpers\n", "helpers.py": "h = 1\n"})
    assert rel(own_sources(proj / "my_router.py", "my_router"), proj) == ["my_router.py", "helpers.py"]
    # namespace packages: no __init__.py anywhere, relative imports all the same
    ns = tree(tmp_path / "ns", {"nsp/sub/router.py": "from ..other import helper\nfrom .deep.leaf import x\n",
                                "nsp/other.py": "helper = 1\n", "nsp/sub/deep/leaf.py": "x = 1\n"})
    assert rel(own_sources(ns / "nsp" / "sub" / "router.py", "nsp.sub.router"), ns) == [
        "nsp/sub/router.py", "nsp/other.py", "nsp/sub/deep/leaf.py"]


def test_a_star_import_follows_the_packages_all(tmp_path):
    root = tree(tmp_path / "p", {"pkg/__init__.py": "", "pkg/router.py": "from .sub import *\n",
                                 "pkg/sub/__init__.py": "__all__ = ['impl']\n", "pkg/sub/impl.py": "i = 1\n",
                                 "pkg/sub/unlisted.py": "u = 1\n"})
    assert rel(own_sources(root / "pkg" / "router.py", "pkg.router"), root) == [
        "pkg/router.py", "pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/impl.py"]


def test_a_file_named_as_a_library_module_is_not_the_router_s(tmp_path):
    root = tree(tmp_path / "mods", {"my_router.py": "import random\nimport helpers\n", "random.py": "r = 1\n",
                                    "helpers.py": "h = 1\n"})
    assert rel(own_sources(root / "my_router.py", "my_router"), root) == ["my_router.py", "helpers.py"]


def test_files_python_imports_but_the_parser_cannot_walk_are_hashed_not_followed(tmp_path, monkeypatch):
    from interleave_bench.route import plugin_code

    root = tree(tmp_path / "mods", {"my_router.py": "def later():\n    import deep\n", "deep.py": "import other\n",
                                    "other.py": "o = 1\n", "locked_dir/x.py": ""})
    real_parse = plugin_code.ast.parse

    def parse(source, filename="<unknown>", **kw):
        if filename.endswith("deep.py"):  # as a file of "1+1+...+1" 5,000 terms long is at the default limit
            raise RecursionError("maximum recursion depth exceeded during ast construction")
        return real_parse(source, filename=filename, **kw)

    monkeypatch.setattr(plugin_code.ast, "parse", parse)
    assert rel(own_sources(root / "my_router.py", "my_router"), root) == ["my_router.py", "deep.py"]
    monkeypatch.setattr(plugin_code.ast, "parse", real_parse)
    # a folder that cannot be read is passed over, as Python passes it over
    real_is_file = Path.is_file

    def is_file(self):
        if "locked_dir" in self.parts:
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_file(self)

    monkeypatch.setattr(Path, "is_file", is_file)
    (root / "my_router.py").write_text("import locked_dir.x\n", encoding="utf-8")
    assert rel(own_sources(root / "my_router.py", "my_router"), root) == ["my_router.py"]


ROUTER = '''
from interleave_bench.route.base import Decision
from plug_helpers import MIN_SCORE


class Helped:
    policy = "helped"

    def route(self, view):
        words = set(view.pending_text().lower().split())
        scores = {t.label: len(words & set(t.title.lower().split())) for t in view.topics}
        best = max(scores, key=scores.get) if scores else None
        if best is not None and scores[best] >= MIN_SCORE:
            return Decision.to_topic(best)
        return Decision.to_topic(view.current) if view.current else Decision.new("x")
'''


@pytest.fixture
def helped(tmp_path, monkeypatch):
    folder = tree(tmp_path / "mods", {"plug_router.py": ROUTER, "plug_helpers.py": "MIN_SCORE = 1\n"})
    monkeypatch.syspath_prepend(str(folder))
    for name in ("plug_router", "plug_helpers"):
        sys.modules.pop(name, None)
    importlib.invalidate_caches()
    yield folder
    for name in ("plug_router", "plug_helpers"):
        sys.modules.pop(name, None)


def test_a_rerun_after_a_helper_module_changed_is_refused(tmp_path, helped, capsys):
    data = write_data(tmp_path / "data")
    args = ["route", str(data), "--mode", "closed", "--router", "plug_router:Helped"]
    assert main(args) == 0
    record = read_json(data / "predictions" / "closed-helped.run.json")
    assert record["options"]["router_code"] == code_fingerprint(helped / "plug_router.py")
    assert main(args) == 0  # the same code: resumed, nothing to do
    capsys.readouterr()
    (helped / "plug_helpers.py").write_text("MIN_SCORE = 2\n", encoding="utf-8")
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "router code" in err and "--fresh" in err
