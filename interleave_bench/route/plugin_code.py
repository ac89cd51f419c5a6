"""Which files are a plug-in router's code, and their fingerprint (the run record's ``router_code``).

A router class is rarely alone in its file's world: it imports helpers from its own folder or
package. An edit to one of them changes the decisions as surely as an edit to the class, so a
rerun after it must not resume the file begun before it. :func:`own_sources` follows the imports
statically (each file is parsed, never run): from the file that defines the class, every module it
imports that lies in the class's own package (a class in ``mypkg.routers`` follows ``mypkg.*``) or,
for a module outside any package, in its own folder (a class in ``my_router.py`` follows
``helpers.py`` beside it), and the modules those import, and so on. Imports of anything else
(the standard library, installed packages) are not followed: their versions are in the run's
provenance. Neither is a name computed at run time (``importlib.import_module(name)``).

The same files give the same fingerprint wherever the folder is; a class alone in its file keeps
the fingerprint a run record has always held for it (the SHA-256 of that file).
"""

from __future__ import annotations

import ast
import hashlib
import os
import site
import sysconfig
from functools import lru_cache
from pathlib import Path

from ..fingerprints import sha256_file

#: most files :func:`own_sources` follows (a folder of thousands of modules is not read whole)
MAX_SOURCES = 1000


def _module_of(path: Path) -> tuple[Path, tuple[str, ...]]:
    """The folder ``path``'s absolute imports are resolved from (the one above its outermost
    package, or its own folder) and its module name's parts (a package's ``__init__.py``: the
    package's)."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, tuple(parts)


@lru_cache(maxsize=1)
def _installed() -> tuple[str, ...]:
    """The folders Python and installed packages live in: a module there is not the user's own."""
    paths = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        paths.update(site.getsitepackages())
    except AttributeError:  # some virtual environments' site module has no getsitepackages
        pass
    paths.add(site.getusersitepackages())
    return tuple(sorted(os.path.realpath(p) for p in paths if p))


def _files(root: Path, name: tuple[str, ...]) -> list[Path]:
    """The files importing module ``name`` from ``root`` runs: each package's ``__init__.py`` on the
    way, then the module's file (nothing past a part that is not there)."""
    out: list[Path] = []
    folder = root
    for k, part in enumerate(name):
        init = folder / part / "__init__.py"
        if init.is_file():
            out.append(init)
            folder = folder / part
            continue
        if k == len(name) - 1 and (folder / f"{part}.py").is_file():
            out.append(folder / f"{part}.py")
        break
    return out


def _imported(path: Path, module: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The module names ``path`` (module ``module``) imports, absolute; a ``from m import x`` names
    both ``m`` and ``m.x`` (``x`` may be a submodule). A file that does not parse imports nothing
    (importing it fails anyway)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return []
    package = module if path.name == "__init__.py" else module[:-1]
    out: list[tuple[str, ...]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(tuple(a.name.split(".")) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level - 1 > len(package):
                    continue  # beyond the top-level package: importing it fails
                base = package[:len(package) - (node.level - 1)]
            else:
                base = ()
            name = base + (tuple(node.module.split(".")) if node.module else ())
            if name:
                out.append(name)
            out.extend(name + (a.name,) for a in node.names if a.name != "*")
    return out


def own_sources(path: str | os.PathLike) -> list[Path]:
    """The file ``path`` (the one that defines a router's class) and the source files of the modules
    it imports, directly or through each other, from its own package or (outside any package) its
    own folder; in a deterministic order, ``path`` first. A file under the folders of Python's
    standard library or of installed packages follows only its own package."""
    start = Path(os.path.realpath(path))
    root, module = _module_of(start)
    installed = str(root).startswith(_installed()) if _installed() else False
    if len(module) > 1 or start.name == "__init__.py":
        top: str | None = module[0]
    elif installed:
        return [start]  # a top-level module among installed ones: nothing beside it is its own
    else:
        top = None
    seen = {start: module}
    todo = [start]
    while todo and len(seen) < MAX_SOURCES:
        here = todo.pop()
        for name in sorted(set(_imported(here, seen[here]))):
            if not name or (top is not None and name[0] != top):
                continue
            for f in _files(root, name):
                if f not in seen and len(seen) < MAX_SOURCES:
                    seen[f] = _module_of(f)[1]
                    todo.append(f)
    rest = sorted((f for f in seen if f != start), key=lambda f: f.relative_to(root).as_posix())
    return [start, *rest]


def code_fingerprint(path: str | os.PathLike) -> str:
    """``sha256:<hex>`` of :func:`own_sources` of ``path``: the SHA-256 of the file alone when it
    imports nothing of its own (as run records have always held), else of each file's path (from
    the folder its imports resolve from) and SHA-256, one line each."""
    files = own_sources(path)
    if len(files) == 1:
        return sha256_file(files[0])
    root = _module_of(files[0])[0]
    lines = "".join(f"{f.relative_to(root).as_posix()}\0{sha256_file(f)}\n" for f in files)
    return "sha256:" + hashlib.sha256(lines.encode("utf-8")).hexdigest()
