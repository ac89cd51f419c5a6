"""A Hugging Face Hub stand-in on loopback, for the tests of export, push and the leaderboard.

It speaks the parts of the Hub's HTTP API that ``huggingface_hub`` and ``datasets`` use to create a
repo, commit to it, tag it and read it back: repo create, YAML validation, preupload, commit
(NDJSON, regular files inline as base64), tag, refs, repo and revision info, commit history, tree
and paths-info listing, and file resolve (HEAD and GET with ranges, with the ``X-Repo-Commit`` and
``ETag`` headers ``hf_hub_download`` needs). Select it with ``HF_ENDPOINT=<stand-in url>`` (read
at import by ``huggingface_hub`` and ``datasets``, so set it in a subprocess's environment) or pass
``HfApi(endpoint=url)``.

Repos live in memory as git-like commits: every commit is a full snapshot of the files, blob ids
are git's (``sha1("blob <size>\\0" + content)``), so a client's "has this file changed?" check
works as on the Hub. Branches and tags point at commits; any past revision stays readable. Every
file is a regular upload (preupload answers ``regular``), so no LFS or Xet storage is needed.

Started by hand (``python tests/_hub_standin.py [--port N]``, from the project's folder) it
serves until Ctrl-C and prints the ``HF_ENDPOINT`` to set; writes then need the ``HF_TOKEN`` it
was started with (any value; without one, none is asked for).

Test hooks: ``token`` (writes need ``Authorization: Bearer <token>``; private repos need it to be
read), ``fail_next_commits(n, status)`` (the next commits fail with a server error and change
nothing, as a failed commit on the Hub does), ``hold_next(op, applied)`` (the next commit or tag
request waits until the test releases it: a barrier for interrupting the client mid-request),
``commits(repo_id)``, ``tags(repo_id)`` (a repo's ``tag_messages`` too), ``files(repo_id, rev)`` and ``log`` (every request:
method, path, status).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import parse_qs, unquote, urlsplit

#: what the Hub puts in a new repo's first commit
GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.arrow filter=lfs diff=lfs merge=lfs -text\n"
USER = "tester"
_REPO_TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}


def git_blob_id(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass
class Commit:
    oid: str
    parent: Optional[str]
    title: str
    message: str
    date: str
    files: dict[str, bytes]


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    created: str
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    #: each tag's message, as the request gave it (None without one)
    tag_messages: dict[str, Optional[str]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)


@dataclass
class Hold:
    """A request held by :meth:`HubStandIn.hold_next`: ``arrived`` is set when it reaches the
    stand-in; it waits for ``release``. ``applied``: the request takes effect before it waits (the
    client never sees the answer), else it is dropped once released (it never takes effect)."""

    op: str
    applied: bool
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


#: the write requests a hold can catch, by the last segment of their API path
_HOLD_OPS = ("commit", "tag")
#: the longest a held request waits for its release (a test that never releases it fails, not hangs)
_HOLD_TIMEOUT = 120


class HttpError(Exception):
    def __init__(self, status: int, message: str, code: Optional[str] = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


class HubStandIn:
    """The stand-in server; use as a context manager. ``url`` is its endpoint."""

    def __init__(self, token: Optional[str] = None, port: int = 0):
        self.token = token
        self.port = port
        self.repos: dict[tuple[str, str], Repo] = {}
        self.log: list[tuple[str, str, int]] = []
        self._lock = threading.RLock()
        self._failures: list[int] = []
        self._holds: list[Hold] = []
        self._counter = 0
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # --- lifecycle ---------------------------------------------------------------------------------

    def __enter__(self) -> "HubStandIn":
        handler = type("Handler", (_Handler,), {"hub": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # --- test hooks -------------------------------------------------------------------------------

    def fail_next_commits(self, n: int = 1, status: int = 500) -> None:
        """The next ``n`` commit requests fail with ``status`` and change nothing."""
        with self._lock:
            self._failures += [status] * n

    def hold_next(self, op: str, applied: bool = False) -> Hold:
        """The next ``op`` request (``commit`` or ``tag``) waits until the returned hold is released."""
        assert op in _HOLD_OPS, op
        hold = Hold(op, applied)
        with self._lock:
            self._holds.append(hold)
        return hold

    def _take_hold(self, method: str, path: str) -> Optional[Hold]:
        m = re.fullmatch(r"/api/(?:models|datasets|spaces)/[^/]+/[^/]+/(commit|tag)/.*", urlsplit(path).path)
        with self._lock:
            hold = next((h for h in self._holds if m and method == "POST" and h.op == m.group(1)), None)
            if hold is not None:
                self._holds.remove(hold)
        return hold

    def repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        return self.repos[(repo_type, repo_id)]

    def commits(self, repo_id: str, repo_type: str = "dataset") -> list[Commit]:
        """The commits of a repo, oldest first (the repo's creation commit included)."""
        r = self.repo(repo_id, repo_type)
        return [r.commits[o] for o in r.order]

    def tags(self, repo_id: str, repo_type: str = "dataset") -> dict[str, str]:
        return dict(self.repo(repo_id, repo_type).tags)

    def files(self, repo_id: str, rev: str = "main", repo_type: str = "dataset") -> dict[str, bytes]:
        r = self.repo(repo_id, repo_type)
        return dict(r.commits[self._resolve(r, rev)].files)

    # --- state ------------------------------------------------------------------------------------

    def _now(self) -> str:
        return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def _new_commit(self, repo: Repo, parent: Optional[str], files: dict[str, bytes], title: str, message: str) -> Commit:
        self._counter += 1
        tree = sorted((p, git_blob_id(c)) for p, c in files.items())
        oid = hashlib.sha1(json.dumps([repo.repo_id, parent, tree, title, self._counter]).encode()).hexdigest()
        c = Commit(oid, parent, title, message, self._now(), dict(files))
        repo.commits[oid] = c
        repo.order.append(oid)
        return c

    def _resolve(self, repo: Repo, rev: str) -> str:
        rev = unquote(rev)
        for prefix, table in (("refs/heads/", repo.branches), ("refs/tags/", repo.tags)):
            if rev.startswith(prefix) and rev[len(prefix):] in table:
                return table[rev[len(prefix):]]
        if rev in repo.branches:
            return repo.branches[rev]
        if rev in repo.tags:
            return repo.tags[rev]
        if re.fullmatch(r"[0-9a-f]{40}", rev) and rev in repo.commits:
            return rev
        raise HttpError(404, f"Invalid rev id: {rev}", "RevisionNotFound")

    def _repo(self, kind: str, repo_id: str, auth: bool) -> Repo:
        repo = self.repos.get((_REPO_TYPES[kind], repo_id))
        if repo is None or (repo.private and not auth):
            raise HttpError(404, "Repository not found", "RepoNotFound")
        return repo

    def _repo_url(self, repo: Repo) -> str:
        prefix = "" if repo.repo_type == "model" else f"{repo.repo_type}s/"
        return f"{self.url}/{prefix}{repo.repo_id}"


def _entries(files: dict[str, bytes], base: str, recursive: bool) -> list[dict[str, Any]]:
    """Tree entries under ``base`` ("" for the root): files and the folders that lead to them."""
    base = base.strip("/")
    pre = base + "/" if base else ""
    out: dict[str, dict[str, Any]] = {}
    for path, content in sorted(files.items()):
        if not path.startswith(pre):
            continue
        rest = path[len(pre):]
        parts = rest.split("/")
        for depth in range(1, len(parts)):
            folder = pre + "/".join(parts[:depth])
            if folder not in out and (recursive or depth == 1):
                out[folder] = {"type": "directory", "path": folder, "oid": _tree_id(files, folder), "size": 0}
            if not recursive:
                break
        if recursive or len(parts) == 1:
            out[path] = {"type": "file", "path": path, "oid": git_blob_id(content), "size": len(content)}
    return list(out.values())


def _tree_id(files: dict[str, bytes], folder: str) -> str:
    inside = sorted((p, git_blob_id(c)) for p, c in files.items() if p.startswith(folder + "/"))
    return hashlib.sha1(json.dumps(inside).encode()).hexdigest()


class _Handler(BaseHTTPRequestHandler):
    hub: HubStandIn
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    # --- plumbing ---------------------------------------------------------------------------------

    def _auth(self) -> str:
        """``none`` (anonymous), ``ok`` (the right token, or any token when none is set) or ``bad``."""
        header = self.headers.get("Authorization")
        if not header:
            return "none"
        if self.hub.token is None or header == f"Bearer {self.hub.token}":
            return "ok"
        return "bad"

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, status: int, body: bytes = b"", headers: Optional[dict[str, str]] = None, ctype: str = "application/json") -> None:
        hold = getattr(self, "_hold", None)
        if hold is not None:  # the request took effect; its answer waits (outside the lock) for the release
            self._held_answer = (status, body, headers, ctype)
            return
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.hub.log.append((self.command, self.path, status))

    def _json(self, obj: Any, status: int = 200, headers: Optional[dict[str, str]] = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers)

    def _dispatch(self) -> None:
        try:
            self._hold = None
            if self._auth() == "bad":
                raise HttpError(401, "Invalid credentials in Authorization header")
            hold = self.hub._take_hold(self.command, self.path)
            if hold is not None and not hold.applied:
                self._body()
                hold.arrived.set()
                hold.release.wait(_HOLD_TIMEOUT)
                raise HttpError(503, "stand-in: the request was held and dropped")
            self._hold = hold
            with self.hub._lock:
                self._route()
            if hold is not None:
                self._hold = None
                hold.arrived.set()
                hold.release.wait(_HOLD_TIMEOUT)
                self._send(*self._held_answer)
        except HttpError as e:
            self._hold = None
            headers = {"X-Error-Message": e.message}
            if e.code:
                headers["X-Error-Code"] = e.code
            try:
                self._json({"error": e.message}, e.status, headers)
            except OSError:  # the client is gone (interrupted while it waited)
                pass
        except OSError:
            pass

    do_GET = do_POST = do_HEAD = do_DELETE = lambda self: self._dispatch()  # noqa: E731

    # --- routes -----------------------------------------------------------------------------------

    def _route(self) -> None:
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query)
        m = self.command
        if m == "POST" and path == "/api/repos/create":
            return self._create_repo()
        if m == "POST" and path == "/api/validate-yaml":
            self._body()
            return self._json({"errors": [], "warnings": []})
        if m == "GET" and path == "/api/whoami-v2":
            self._need_write()
            return self._json({"type": "user", "name": USER, "orgs": []})
        api = re.fullmatch(r"/api/(models|datasets|spaces)/([^/]+/[^/]+)(?:/(.*))?", path)
        if api:
            kind, repo_id, rest = api.group(1), api.group(2), api.group(3) or ""
            return self._api(m, kind, repo_id, rest, query)
        res = re.fullmatch(r"/(?:(datasets|spaces)/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if res and m in ("GET", "HEAD"):
            return self._resolve_file(res.group(1) or "models", res.group(2), res.group(3), unquote(res.group(4)))
        raise HttpError(404, f"stand-in: no route for {m} {path}")

    def _create_repo(self) -> None:
        self._need_write()
        body = json.loads(self._body() or b"{}")
        repo_type = body.get("type") or "model"
        repo_id = f"{body.get('organization') or USER}/{body['name']}"
        key = (repo_type, repo_id)
        private = body.get("private", False) or body.get("visibility") == "private"
        if key in self.hub.repos:
            repo = self.hub.repos[key]
            return self._json({"error": "You already created this repo", "url": self.hub._repo_url(repo)}, 409)
        repo = Repo(repo_type, repo_id, bool(private), self.hub._now())
        first = self.hub._new_commit(repo, None, {".gitattributes": GITATTRIBUTES}, "initial commit", "")
        repo.branches["main"] = first.oid
        self.hub.repos[key] = repo
        self._json({"url": self.hub._repo_url(repo), "name": repo_id})

    def _api(self, m: str, kind: str, repo_id: str, rest: str, query: dict[str, list[str]]) -> None:
        repo = self.hub._repo(kind, repo_id, self._auth() == "ok")
        seg = rest.split("/", 1)
        op, arg = seg[0], (seg[1] if len(seg) > 1 else "")
        if m == "GET" and op in ("", "revision"):
            return self._info(repo, arg or "main", query)
        if m == "GET" and op == "refs":
            refs = lambda table, prefix: [  # noqa: E731
                {"name": n, "ref": f"{prefix}{n}", "targetCommit": o} for n, o in sorted(table.items())
            ]
            return self._json({"branches": refs(repo.branches, "refs/heads/"), "tags": refs(repo.tags, "refs/tags/"),
                               "converts": [], "pullRequests": []})
        if m == "GET" and op == "tree":
            rev, _, sub = arg.partition("/")
            oid = self.hub._resolve(repo, rev)
            files = repo.commits[oid].files
            sub = unquote(sub)
            if sub and sub not in files and not any(p.startswith(sub.rstrip("/") + "/") for p in files):
                raise HttpError(404, f"{sub} does not exist", "EntryNotFound")
            recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
            entries = _entries(files, sub, recursive)
            if query.get("expand", ["false"])[0].lower() in ("1", "true"):
                c = repo.commits[oid]
                for e in entries:
                    e["lastCommit"] = {"id": c.oid, "title": c.title, "date": c.date}
            return self._json(entries)
        if m == "POST" and op == "paths-info":
            oid = self.hub._resolve(repo, arg)
            form = parse_qs(self._body().decode())
            files = repo.commits[oid].files
            wanted = form.get("paths", [])
            everything = {e["path"]: e for e in _entries(files, "", True)}
            return self._json([everything[p.strip("/")] for p in wanted if p.strip("/") in everything])
        if m == "GET" and op == "commits":
            oid: Optional[str] = self.hub._resolve(repo, arg or "main")
            out = []
            while oid:
                c = repo.commits[oid]
                out.append({"id": c.oid, "title": c.title, "message": c.message, "date": c.date,
                            "authors": [{"user": USER}]})
                oid = c.parent
            return self._json(out)
        if m == "POST" and op == "preupload":
            return self._preupload(repo, arg)
        if m == "POST" and op == "commit":
            return self._commit(repo, arg)
        if m == "POST" and op == "tag":
            return self._tag(repo, arg)
        if m == "DELETE" and op == "tag":
            name = unquote(arg)
            if name not in repo.tags:
                raise HttpError(404, f"tag {name} not found", "RevisionNotFound")
            del repo.tags[name]
            return self._json({})
        raise HttpError(404, f"stand-in: no route for {m} /api/{kind}/{repo_id}/{rest}")

    def _need_write(self) -> None:
        if self._auth() != "ok":
            raise HttpError(401, "Invalid credentials in Authorization header")

    def _info(self, repo: Repo, rev: str, query: dict[str, list[str]]) -> None:
        oid = self.hub._resolve(repo, rev)
        c = repo.commits[oid]
        meta = "files_metadata" in query or "blobs" in query
        siblings = []
        for p, content in sorted(c.files.items()):
            s: dict[str, Any] = {"rfilename": p}
            if meta:
                s.update(size=len(content), blobId=git_blob_id(content))
            siblings.append(s)
        self._json({
            "_id": repo.repo_id, "id": repo.repo_id, "author": repo.repo_id.split("/")[0], "sha": oid,
            "private": repo.private, "gated": False, "disabled": False, "downloads": 0, "likes": 0,
            "tags": [], "createdAt": repo.created, "lastModified": c.date, "siblings": siblings,
        })

    def _preupload(self, repo: Repo, rev: str) -> None:
        self._need_write()
        oid = self.hub._resolve(repo, rev)
        files = repo.commits[oid].files
        body = json.loads(self._body() or b"{}")
        out = []
        for f in body.get("files", []):
            existing = files.get(f["path"])
            out.append({"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                        "oid": git_blob_id(existing) if existing is not None else None})
        self._json({"files": out, "commitOid": oid})

    def _commit(self, repo: Repo, rev: str) -> None:
        self._need_write()
        raw = self._body()
        branch = unquote(rev)
        if branch not in repo.branches:
            raise HttpError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
        if self.hub._failures:
            status = self.hub._failures.pop(0)
            raise HttpError(status, "Internal Error - We're working hard to fix this as soon as possible!")
        head = repo.branches[branch]
        files = dict(repo.commits[head].files)
        header: dict[str, Any] = {}
        for line in raw.splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            key, value = item["key"], item["value"]
            if key == "header":
                header = value
            elif key == "file":
                if value.get("encoding", "base64") != "base64":
                    raise HttpError(400, "stand-in: only base64 file content")
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "deletedFile":
                if value["path"] not in files:
                    raise HttpError(404, "A file with this name doesn't exist", "EntryNotFound")
                del files[value["path"]]
            elif key == "deletedFolder":
                pre = value["path"].rstrip("/") + "/"
                for p in [p for p in files if p.startswith(pre)]:
                    del files[p]
            else:
                raise HttpError(400, f"stand-in: unsupported commit operation {key!r} (regular uploads only)")
        parent = header.get("parentCommit")
        if parent and not head.startswith(parent):
            raise HttpError(412, "A commit has happened since. Please refresh and try again.")
        c = self.hub._new_commit(repo, head, files, header.get("summary", ""), header.get("description", ""))
        repo.branches[branch] = c.oid
        self._json({"commitUrl": f"{self.hub._repo_url(repo)}/commit/{c.oid}", "commitOid": c.oid,
                    "pullRequestUrl": None, "success": True})

    def _tag(self, repo: Repo, rev: str) -> None:
        self._need_write()
        body = json.loads(self._body() or b"{}")
        oid = self.hub._resolve(repo, rev)
        name = body["tag"]
        if name in repo.tags or name in repo.branches:
            raise HttpError(409, f"Tag {name} already exists")
        repo.tags[name] = oid
        repo.tag_messages[name] = body.get("message")
        self._json({"ref": f"refs/tags/{name}", "oid": oid})

    def _resolve_file(self, kind: str, repo_id: str, rev: str, path: str) -> None:
        repo = self.hub._repo(kind, repo_id, self._auth() == "ok")
        oid = self.hub._resolve(repo, rev)
        content = repo.commits[oid].files.get(path)
        if content is None:
            raise HttpError(404, "Entry not found", "EntryNotFound")
        headers = {"X-Repo-Commit": oid, "ETag": f'"{git_blob_id(content)}"', "Accept-Ranges": "bytes"}
        rng = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", "") or "")
        if rng and self.command == "GET":
            start = int(rng.group(1) or 0)
            end = int(rng.group(2)) if rng.group(2) else len(content) - 1
            if rng.group(1) == "" and rng.group(2):
                start, end = max(0, len(content) - int(rng.group(2))), len(content) - 1
            end = min(end, len(content) - 1)
            if start >= len(content):
                headers["Content-Range"] = f"bytes */{len(content)}"
                return self._send(416, b"", headers, "application/octet-stream")
            headers["Content-Range"] = f"bytes {start}-{end}/{len(content)}"
            return self._send(206, content[start:end + 1], headers, "application/octet-stream")
        self._send(200, content, headers, "application/octet-stream")


def main(argv: Optional[list[str]] = None) -> int:
    """Serve a stand-in until Ctrl-C, for trying ``push``, ``release`` and ``leaderboard`` by hand."""
    import argparse
    import os
    import sys

    ap = argparse.ArgumentParser(description="A Hugging Face Hub stand-in on loopback, kept in memory.")
    ap.add_argument("--port", type=int, default=0, help="the port to serve on (default: any free one)")
    args = ap.parse_args(argv)
    if not 0 <= args.port <= 65535:
        print(f"_hub_standin: --port must be 0 to 65535, got {args.port}", file=sys.stderr)
        return 2
    try:
        hub = HubStandIn(token=os.environ.get("HF_TOKEN"), port=args.port)
        with hub:
            print(f"export HF_ENDPOINT={hub.url}", flush=True)
            print("serving the Hub stand-in (repos in memory, gone when it stops); writes need the HF_TOKEN "
                  "it was started with; Ctrl-C stops it", file=sys.stderr, flush=True)
            threading.Event().wait()
    except OSError as exc:
        print(f"_hub_standin: cannot serve on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
