"""Which files are a plug-in router's code, and their fingerprint (the run record's ``router_code``).

A router class is rarely alone in its file's world: it imports helpers from its own folder or
package. An edit to one of them changes the decisions as surely as an edit to the class, so a
rerun after it must not resume the file begun before it. :func:`own_sources` follows the imports
statically (each file is parsed, never run): from the file that defines the class, every module it
imports that lies in the class's own package (a class in ``mypkg.routers`` follows ``mypkg.*``,
namespace packages without ``__init__.py`` included) or, for a module outside any package, in its
own folder (a class in ``my_router.py`` follows ``helpers.py`` beside it, but not a file named as a
standard-library module, which Python imports from the library), and the modules those import,
and so on. Where the imports resolve from is read from the class's module name (``mypkg.routers``
names the folder above ``mypkg/``), as Python resolved it, symlinks left as the path gives them.
Imports of anything else (the standard library, installed packages) are not followed: their
versions are in the run's provenance. Neither is a name computed at run time
(``importlib.import_module(name)``).

The same files give the same fingerprint wherever the folder is; a class alone in its file keeps
the fingerprint a run record has always held for it (the SHA-256 of that file).
"""

from __future__ import annotations

import ast
import hashlib
import os
import site
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Optional

from ..fingerprints import sha256_file

#: a module name as parts (``("mypkg", "routers")``)
Name = tuple[str, ...]


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a folder that cannot be read: nothing there can be told apart
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _package_of(path: Path) -> tuple[Path, Name]:
    """The folder ``path``'s absolute imports resolve from and its module name's parts, by the
    ``__init__.py`` files above it (when the module's own name is not known)."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while _is_file(folder / "__init__.py"):
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, tuple(parts)


def _module_of(path: Path, module: Optional[str]) -> tuple[Path, Name]:
    """Where ``path``'s imports resolve from and its name's parts: from ``module`` (the class's
    module name, as Python imported it) when the path agrees with it, else from the packages
    above the file."""
    if module:
        parts = tuple(module.split("."))
        tail = parts if path.name == "__init__.py" else parts[:-1]
        folder = path.parent
        if path.name == "__init__.py" or path.stem == parts[-1]:
            for part in reversed(tail):
                if folder.name != part:
                    break
                folder = folder.parent
            else:
                return folder, parts
    return _package_of(path)


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


def _files(root: Path, name: Name) -> list[Path]:
    """The files importing module ``name`` from ``root`` runs: each package's ``__init__.py`` on
    the way (a folder without one is a namespace package: no file), then the module's own file;
    nothing past a part that is not there."""
    out: list[Path] = []
    folder = root
    for k, part in enumerate(name):
        last = k == len(name) - 1
        init = folder / part / "__init__.py"
        if _is_file(init):
            out.append(init)
        elif last and _is_file(folder / f"{part}.py"):
            out.append(folder / f"{part}.py")
            break
        elif not _is_dir(folder / part):
            break
        folder = folder / part
    return out


def _parsed(path: Path) -> Optional[ast.Module]:
    """The syntax tree of ``path``; None when it does not parse (importing it fails anyway) or is
    too deep for the parser (Python may still import it; its imports are then not followed)."""
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError, RecursionError, MemoryError):
        return None


def _star_names(init: Path) -> list[str]:
    """The names ``__all__`` lists in a package's ``__init__.py`` (a list or tuple of strings), which
    ``from package import *`` imports as submodules where they are ones."""
    tree = _parsed(init)
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            if isinstance(node.value, (ast.List, ast.Tuple)):
                return [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _imported(tree: ast.Module, module: Name, is_package: bool) -> Iterator[tuple[Name, bool]]:
    """The module names a file of ``module`` imports, absolute, each with whether it was a ``from
    ... import *``; a ``from m import x`` names both ``m`` and ``m.x`` (``x`` may be a submodule)."""
    package = module if is_package else module[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield tuple(a.name.split(".")), False
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level - 1 > len(package):
                    continue  # beyond the top-level package: importing it fails
                base = package[:len(package) - (node.level - 1)]
            else:
                base = ()
            name = base + (tuple(node.module.split(".")) if node.module else ())
            if name:
                yield name, any(a.name == "*" for a in node.names)
            for a in node.names:
                if a.name != "*":
                    yield name + (a.name,), False


def own_sources(path: str | os.PathLike, module: Optional[str] = None) -> list[Path]:
    """The file ``path`` (the one that defines a router's class, whose module is named ``module``)
    and the source files of the modules it imports, directly or through each other, from its own
    package or (outside any package) its own folder; ``path`` first, the rest by path. A file
    under the folders of Python's standard library or of installed packages follows only its own
    package."""
    start = Path(os.path.abspath(path))
    root, name = _module_of(start, module)
    in_package = len(name) > 1 or start.name == "__init__.py"
    if not in_package and os.path.realpath(root).startswith(_installed()):
        return [start]  # a top-level module among installed ones: nothing beside it is its own
    top = name[0] if in_package else None
    names = {start: name}
    todo = [start]
    while todo:
        here = todo.pop()
        tree = _parsed(here)
        if tree is None:
            continue
        found: set[tuple[Name, bool]] = set(_imported(tree, names[here], here.name == "__init__.py"))
        for imported, star in sorted(found):
            if not imported or (top is not None and imported[0] != top):
                continue
            if top is None and imported[0] in sys.stdlib_module_names:
                continue  # the library's module, whatever file beside this one bears its name
            files = _files(root, imported)
            if star and files and files[-1].name == "__init__.py" and len(files) == len(imported):
                for sub in _star_names(files[-1]):
                    files += [f for f in _files(root, imported + (sub,)) if f not in files]
            for f in files:
                if f not in names:
                    names[f] = _package_of_name(root, f)
                    todo.append(f)
    rest = sorted((f for f in names if f != start), key=lambda f: f.relative_to(root).as_posix())
    return [start, *rest]


def _package_of_name(root: Path, path: Path) -> Name:
    """The module name of ``path``, a file found under ``root`` by its imports."""
    parts = path.relative_to(root).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


def code_fingerprint(path: str | os.PathLike, module: Optional[str] = None) -> str:
    """``sha256:<hex>`` of :func:`own_sources` of ``path`` (the class's file, of module ``module``):
    the SHA-256 of the file alone when it imports nothing of its own (as run records have always
    held), else of each file's path (from the folder its imports resolve from) and SHA-256, one line
    each."""
    files = own_sources(path, module)
    if len(files) == 1:
        return sha256_file(files[0])
    root = _module_of(files[0], module)[0]
    lines = "".join(f"{f.relative_to(root).as_posix()}\0{sha256_file(f)}\n" for f in files)
    return "sha256:" + hashlib.sha256(lines.encode("utf-8")).hexdigest()
