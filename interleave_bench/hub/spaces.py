"""``push-metrics``: publish each shipped ``evaluate`` module as a Space, one commit per module.

A Space ``ORG/<name>`` holds the module script ``<name>.py``, its card ``README.md`` (evaluate's
YAML header: gradio SDK, ``app.py``), the widget ``app.py`` and a ``requirements.txt`` naming this
package, so ``evaluate.load("ORG/<name>")`` works in any project. A module whose files are already
on the Space's ``main`` is reported unchanged and gets no commit. Every file of every module chosen
(its content or its path), and the ``--org``, are refused before the first request when they hold a
secret (:mod:`.outgoing`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .. import __version__, metric_names, metric_path
from ..errors import UsageError
from . import client
from .outgoing import refuse_secret_contents, refuse_secret_text

#: the Hub's repo type of an evaluate module
SPACE_TYPE = "space"
#: evaluate's modules run as gradio Spaces (the SDK their cards declare)
SPACE_SDK = "gradio"
#: the files of a module folder a Space carries (besides the generated requirements.txt)
MODULE_FILES = ("README.md", "app.py")


def requirements_text() -> str:
    """The Space's ``requirements.txt``: this package at this version (which brings evaluate and datasets)."""
    return f"interleave-bench=={__version__}\n"


def space_files(name: str) -> dict[str, bytes]:
    """``{path in the Space: content}`` for the module ``name``."""
    folder = Path(metric_path(name))
    files = {f"{name}.py": (folder / f"{name}.py").read_bytes()}
    for fname in MODULE_FILES:
        files[fname] = (folder / fname).read_bytes()
    files["requirements.txt"] = requirements_text().encode()
    return files


def _blob_id(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass
class SpaceResult:
    repo_id: str
    commit: Optional[str]
    unchanged: bool
    files: list[str]


def push_metrics(org: str, *, names: Optional[list[str]] = None, private: bool = False) -> list[SpaceResult]:
    """Publish every shipped module (or ``names``) as the Space ``org/<name>``; returns one result each.

    Raises :class:`UsageError` for an unknown module, a bad organisation name or a Hub problem
    (one line naming the Space; Spaces published before it keep their commit).
    """
    from huggingface_hub import CommitOperationAdd
    from huggingface_hub.hf_api import RepoFile

    known = metric_names()
    chosen = names or list(known)
    for n in chosen:
        if n not in known:
            raise UsageError(f"--metric {n!r}: not a module of this package; known: {', '.join(known)}")
    if not org or "/" in org or any(c.isspace() for c in org):
        raise UsageError(f"--org {org!r}: expected an organisation or user name, without '/'")
    client.require_token()  # the token, a login's too, is a secret from here on
    refuse_secret_text("--org", org)
    every = {name: space_files(name) for name in chosen}
    refuse_secret_contents((c, p, f"{metric_path(n)}/{p}") for n, files in every.items() for p, c in files.items())
    api = client.hub_api()
    out = []
    for name in chosen:
        repo_id = f"{org}/{name}"
        files = every[name]
        what = f"push-metrics to {repo_id}"
        with client.hub_errors(what):
            api.create_repo(repo_id, repo_type=SPACE_TYPE, space_sdk=SPACE_SDK, private=private, exist_ok=True)
            remote: dict[str, Any] = {
                e.path: e for e in api.list_repo_tree(repo_id, repo_type=SPACE_TYPE, recursive=True)
                if isinstance(e, RepoFile)
            }
        changed = [p for p, c in files.items() if p not in remote or remote[p].blob_id != _blob_id(c)]
        if not changed:
            out.append(SpaceResult(repo_id, None, True, sorted(files)))
            continue
        ops = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=files[p]) for p in changed]
        with client.hub_errors(what, after="nothing was committed to this Space"):
            info = api.create_commit(repo_id, ops, repo_type=SPACE_TYPE,
                                     commit_message=f"{name} from interleave-bench {__version__}")
        out.append(SpaceResult(repo_id, info.oid, False, sorted(changed)))
    return out
