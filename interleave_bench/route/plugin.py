"""Routers from outside the package: a Python class (``module:Class``) or a server (``http://...``).

Both are wrapped in :class:`PluginRouter`, which the runner drives like any built-in policy: the
run, its file name and every row carry the router's own ``policy`` name. The wrapper holds the
contract of docs/own_router.md: a router that raises, answers something that is not a
decision, names a topic the view does not hold, or changes the view it is shown
(:mod:`.plugin_input`) gives an ``ERROR`` row saying why (a rerun asks
again for exactly those messages, as for the model router); when the first
:data:`ABORT_AFTER_FAILURES` decisions of a run all fail, the run stops with one line (exit 2).

The JSON protocol (docs/own_router.md#the-http-protocol): ``GET URL`` answers ``{"policy": NAME}``;
``POST URL`` with the view (:func:`view_json`) answers one decision (:func:`decision_from_json`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import json
import os
import re
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Sequence

from ..errors import InputError, InterleaveError, UsageError, clip, exc_said, shown
from ..redaction import (add_named_secret, add_secret, add_shaped_secrets, add_url_secrets, is_secret_name,
                         is_secret_setting, redact,
                         short_secret_refusal)
from ..schema import SPECIAL_LABELS
from ..score.rows import read_row
from ..urls import require_base_url
from .answer import MAX_ERROR_CHARS, MAX_VIA_CHARS, refs_problem
from .base import Decision, RouterView
from .model import ABORT_AFTER_FAILURES
from .plugin_input import Shown

if TYPE_CHECKING:
    from .runner import RouteOptions

#: what :func:`evaluate_router` routes: every split, as ``route`` does, so one file serves scoring on any
ROUTE_SPLIT = "all"
#: what ``via`` a plug-in decision carries when the router does not say
VIA_PLUGIN = "router"
#: seconds an HTTP router may take per request, from connecting to the answer's last byte: a slow
#: server (or one trickling its answer) is an error row, never a hung run
HTTP_TIMEOUT = 60.0
#: the most bytes one answer of an HTTP router may have (1 MiB): a bigger one is an error row
HTTP_MAX_ANSWER_BYTES = 1 << 20
#: policy names the file name and the rows can carry as they are
_POLICY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: the decision kinds of the protocol (``Decision.kind``)
KINDS = ("topic", "new", "clarify", "error")


class RouterFailure(Exception):
    """One decision a plug-in router could not give; becomes an ``ERROR`` row with this reason."""


# --- the JSON forms ------------------------------------------------------------------------------


def view_json(view: RouterView) -> dict[str, Any]:
    """The view as the HTTP protocol sends it: every field of :class:`RouterView`, as plain JSON."""
    return dataclasses.asdict(view)


def decision_from_json(answer: Any, view: RouterView, labels: Optional[Sequence[str]] = None) -> Decision:
    """A decision from its JSON form; raises :class:`RouterFailure` naming what is wrong.

    ``{"kind": "topic", "label": L}`` (an existing topic of the view), ``{"kind": "new", "title": T}``,
    ``{"kind": "clarify"}`` or ``{"kind": "error", "error": WHY}``; optional ``refs`` (labels of the
    view's topics), ``via``, ``usage`` (``{input, output, cache_hit}``), ``elapsed_ms``, ``confidence``;
    checked by :func:`checked` (against ``labels`` when given).
    """
    if not isinstance(answer, Mapping):
        raise RouterFailure(f"expected a decision object, got {type(answer).__name__}")
    kind = answer.get("kind")
    if kind not in KINDS:
        raise RouterFailure(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    # absent or null: the default; any other value is kept as given, so one of the wrong type is
    # refused by the field checks (a title 42 is not the text "42"). A new topic's title is kept
    # null too, refused as ``Decision.new(None)`` is: absent, it is ``Decision.new()``'s ""
    fields: dict[str, Any] = {"via": VIA_PLUGIN if answer.get("via") is None else answer["via"]}
    if kind == "topic":
        fields["label"] = answer.get("label")
    elif kind == "new":
        fields["title"] = answer.get("title", "")
    elif kind == "error":
        fields["error"] = str(answer.get("error") or "the router gave no reason")
    if answer.get("refs") is not None:
        refs = answer["refs"]
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            raise RouterFailure("refs must be a list of topic labels")
        fields["refs"] = tuple(refs)
    usage = answer.get("usage")
    if usage is not None:
        if not isinstance(usage, Mapping) or not all(isinstance(usage.get(k, 0), int) and usage.get(k, 0) >= 0
                                                     for k in ("input", "output", "cache_hit")):
            raise RouterFailure("usage must be {input, output, cache_hit} with counts of 0 or more")
        fields["usage"] = {k: int(usage.get(k, 0)) for k in ("input", "output", "cache_hit")}
    for key in ("elapsed_ms", "confidence"):
        if answer.get(key) is not None:
            fields[key] = answer[key]  # (checked with the rest of the decision)
    return checked(Decision(kind, **fields), view, labels)


def checked(d: Any, view: RouterView, labels: Optional[Sequence[str]] = None) -> Decision:
    """``d`` when it is a decision the view allows; raises :class:`RouterFailure` otherwise, naming
    the message and the field for a field of the wrong type or out of range (a NaN or infinite
    ``confidence`` or ``elapsed_ms``, a ``confidence`` outside 0..1), checked as a predictions
    file's row is: the row it would be written as could not be. Its topic and refs must be among
    ``labels`` (the run's own, :class:`~.plugin_input.Shown`), or the view's when None."""
    if isinstance(d, Mapping):
        return decision_from_json(d, view, labels)
    if not isinstance(d, Decision):
        raise RouterFailure(f"route() must return a Decision or its JSON form (a dict), got {type(d).__name__}")
    if d.kind not in KINDS:
        raise RouterFailure(f"kind must be one of {', '.join(KINDS)}, got {d.kind!r}")
    _check_fields(d, view)
    labels = view.labels() if labels is None else labels
    if d.kind == "topic" and (d.label not in labels or d.label in SPECIAL_LABELS):
        raise RouterFailure(f"answered unknown topic {shown(d.label)} (the view holds {', '.join(labels) or 'none'})")
    problem = refs_problem(d.refs, labels, d.label if d.kind == "topic" else None) if d.refs else None
    if problem:
        raise RouterFailure(f"gave {message_of(view)} bad refs: {problem}")
    return d


def _check_fields(d: Decision, view: RouterView) -> None:
    """Raise :class:`RouterFailure` (``gave message 3 a bad confidence: ...``) for a field of ``d``
    of the wrong type, or a value its prediction row would refuse."""
    texts = {"label": d.label if d.kind == "topic" else "", "title": d.title, "via": d.via,
             "error": "" if d.error is None else d.error}
    for key, value in texts.items():
        if not isinstance(value, str):
            raise RouterFailure(f"gave {message_of(view)} a bad {key}: expected text, got {type(value).__name__} {value!r}")
    if len(d.via) > MAX_VIA_CHARS:
        raise RouterFailure(f"gave {message_of(view)} a bad via: {len(d.via):,} characters, more than {MAX_VIA_CHARS}")
    if d.same_as is not None:
        raise RouterFailure(f"gave {message_of(view)} a same_as ({d.same_as!r}): it applies to the answers of "
                            "route_each, not of route")
    if d.refs is not None and not (isinstance(d.refs, (tuple, list)) and all(isinstance(r, str) for r in d.refs)):
        raise RouterFailure(f"gave {message_of(view)} bad refs: expected a list of topic labels, got {d.refs!r}")
    row = {"session_id": view.session_id, "i": 0, "pred": "x", "via": d.via, "usage": d.usage,
           "elapsed_ms": d.elapsed_ms, "confidence": d.confidence}
    row = {k: v for k, v in row.items() if v is not None}
    try:
        read_row(row)
    except InputError as exc:
        raise RouterFailure(f"gave {message_of(view)} a bad {exc.field or ''}: {exc.message}") from None


def message_of(view: RouterView) -> str:
    """The message(s) a decision is for, as an error names them: ``message 3``, ``messages 3-5``."""
    numbers = [m.i for m in view.pending]
    if not numbers:
        return "no message"
    return f"message {numbers[0]}" if len(numbers) == 1 else f"messages {numbers[0]}-{numbers[-1]}"


# --- the wrapper the runner drives -----------------------------------------------------------------


def policy_name(router: Any, fallback: str, given: Optional[str] = None) -> str:
    """``given`` (a run's ``RouteOptions.policy``), else the router's ``policy``, else ``fallback``,
    checked: a file-name-safe name no built-in policy has."""
    from .runner import POLICIES

    name = given or getattr(router, "policy", None) or fallback
    if not isinstance(name, str) or not _POLICY_NAME.match(name):
        raise UsageError(f"router policy name {name!r}: use letters, digits, '.', '_' or '-' (at most 64)")
    if name in POLICIES:
        raise UsageError(f"router policy name {name!r} is a built-in policy's; give the router its own name")
    return name


@contextmanager
def starting(spec: str) -> Iterator[None]:
    """Where a router is made and its attributes read (``policy``, ``route``): whatever its own
    code raises there (a ``ValueError`` of its argument checks, a ``policy`` property that fails)
    is one line, ``router SPEC: could not start: ValueError: ...``, exit 2; the project's own
    errors and Ctrl-C pass as they are."""
    try:
        yield
    except (InterleaveError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: a router that cannot start ends nothing else
        raise UsageError(f"router {spec}: could not start: {exc_said(exc)}") from None


#: ``via`` of a :class:`~.base.Decision` that sets none (the built-in policies' ``baseline``)
_DECISION_VIA = next(f.default for f in dataclasses.fields(Decision) if f.name == "via")


class PluginRouter:
    """Drives a router from outside the package with the contract of the module docstring.

    ``inner`` has ``route(view)`` returning a :class:`Decision` (or its JSON form), sync or async.
    ``spec`` says where it came from (``module:Class`` or the URL), for the run record; ``policy``
    names its run instead of the router's own name.
    """

    def __init__(self, inner: Any, spec: str, *, policy: Optional[str] = None):
        with starting(spec):
            route = getattr(inner, "route", None)
            if not callable(route):
                raise UsageError(f"router {spec}: {type(inner).__name__} has no route(view) (see docs/own_router.md)")
            self.policy = policy_name(inner, type(inner).__name__, policy)
        self.inner = inner
        self.spec = spec
        self.uses_model = False  # calls no model of ours: the client's concurrency is not its own
        #: sessions routed side by side (``--concurrency``; :func:`own_router` sets it)
        self.sessions_at_once = 1
        self.answered = 0
        self.failed = 0

    async def route(self, view: RouterView, labels: Optional[Sequence[str]] = None) -> Decision:
        """The router's decision for ``view``, checked against ``labels`` (the run's own topics, as
        the runner gives them; the view's when None)."""
        before = Shown(view, labels)
        try:
            try:
                d = self.inner.route(view)
                if inspect.isawaitable(d):
                    d = await d
            finally:  # raised or not, the runner's own objects are put back as they were
                changed = before.restore()
            if changed:
                raise RouterFailure(f"changed its input ({changed}): route(view) must leave its view as it is")
            d = checked(d, view, before.labels)
        except UsageError:
            raise
        except Exception as exc:  # the router's own failure: a row says why, the run goes on
            reason = str(exc) if isinstance(exc, RouterFailure) else f"raised {exc_said(exc)}"
            return self._failed(f"router {self.policy} {reason}")
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise  # Ctrl-C: the command's resume advice; a cancelled task: the runner's own stop
        except BaseException as exc:  # SystemExit, GeneratorExit...: no decision, and no way to go on
            raise UsageError(f"router {self.policy} raised {exc_said(exc)} at {message_of(view)} of session "
                             f"{view.session_id}; stopping (the finished sessions are kept): route(view) must "
                             "return a decision or raise an Exception") from None
        if d.kind == "error":
            return self._failed(f"router {self.policy}: {d.error}", d)
        if d.via == _DECISION_VIA:  # a Decision left at its default: the row says a plug-in decided
            d = dataclasses.replace(d, via=VIA_PLUGIN)
        self.answered += 1
        return d

    def _failed(self, reason: str, d: Optional[Decision] = None) -> Decision:
        reason = clip(reason, MAX_ERROR_CHARS)  # what a router said (an exception's text, its error) is not kept whole
        self.failed += 1
        if not self.answered and self.failed >= ABORT_AFTER_FAILURES:
            raise UsageError(f"the first {self.failed} decisions of router {self.policy} all failed "
                             f"(last: {reason}); stopping: fix the router and run again")
        if d is not None:
            return dataclasses.replace(d, error=reason)
        return Decision.failed(reason, via=VIA_PLUGIN)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


# --- loading ---------------------------------------------------------------------------------------


def parse_router_args(pairs: Sequence[str]) -> dict[str, Any]:
    """``["k=v", ...]`` as keyword arguments; a value is read as JSON when it is JSON (``3``,
    ``true``, ``["a"]``), else kept as text. The value of an argument with a secret's name
    (``api_key``, ``token``: :func:`~interleave_bench.redaction.is_secret_setting`), or of such a key
    inside a JSON object (``config={"api_key": ...}``), is a secret from then on whatever its shape
    (:func:`~interleave_bench.redaction.add_named_secret`), as written and as the router gets it (the
    texts a JSON value holds), unless JSON reads it as ``true``, ``false`` or ``null``; under a name
    near a secret's (``keys``, ``auth``: :func:`~interleave_bench.redaction.is_secret_name`), what
    looks like a key is; so is a key inside any value, whatever its name (``openai_key=sk-...``:
    :func:`~interleave_bench.redaction.add_shaped_secrets`). Raises :class:`UsageError` for a pair
    without ``=``, and for a secret too short to keep out of what is written, naming it alone."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise UsageError(f"--router-arg {redact(pair)!r}: expected NAME=VALUE")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
        short = add_shaped_secrets(value)  # a provider's key, a bearer token, a URL's password: whatever the name
        if short:
            raise UsageError(f"--router-arg {key}: a URL in its value: {short_secret_refusal(short)}")
        # the argument read as a JSON object of one name: its value by that name's rule, and what it holds
        secrets = _named_texts_in({key: out[key]})
        if is_secret_setting(key):  # as written too: a quoted "...", a number as typed
            if secrets and not isinstance(out[key], (list, dict)):
                secrets.append(value)
        elif is_secret_name(key):
            add_secret(value)
        # kept out of every file and message: as written, and as the router gets it
        if not all([add_named_secret(text) for text in secrets]):
            raise UsageError(f"--router-arg {key}: {short_secret_refusal('its value')}, or (no secret) a name "
                             "that does not say it is one")
    return out


def _named_texts_in(value: Any) -> list[str]:
    """The texts and numbers held under a secret's name anywhere inside a JSON value
    (``{"db": {"password": "..."}}``, ``[{"api_key": "..."}]``), as :func:`_texts_in` gives them;
    under a name near a secret's (``{"auth": ...}``) those that look like a key are taken as they are
    met (:func:`~interleave_bench.redaction.add_secret`)."""
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            if is_secret_setting(k):
                out += _texts_in(v)
                continue
            if is_secret_name(k):
                for text in _texts_in(v):
                    add_secret(text)
            out += _named_texts_in(v)
        return out
    return [t for v in value for t in _named_texts_in(v)] if isinstance(value, list) else []


def _texts_in(value: Any) -> list[str]:
    """The texts and numbers a JSON value holds, as text (``"key"``, ``["a", {"b": 12}]``: a, 12): what
    a router given it may show; none in ``true``, ``false``, ``null``, ``[]`` or ``{}``."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [json.dumps(value)]
    if isinstance(value, dict):
        value = list(value.values())
    return [t for v in value for t in _texts_in(v)] if isinstance(value, list) else []


def import_class(spec: str, option: str) -> type:
    """The class named ``module:Class`` (the module importable from the current folder too);
    raises :class:`UsageError` saying what went wrong."""
    mod, sep, cls = spec.partition(":")
    if not sep or not mod or not cls:
        raise UsageError(f"{option} {spec!r}: expected module:Class")
    here = os.getcwd()
    added = here not in sys.path
    if added:
        sys.path.append(here)  # as `python -m` would: a module in the current folder is found
    try:
        module = importlib.import_module(mod)
    except Exception as exc:  # a missing module, or one that fails as it loads
        missing = isinstance(exc, ModuleNotFoundError) and exc.name is not None and \
            (mod == exc.name or mod.startswith(exc.name + "."))  # the module itself, not one it imports
        hint = f"; {_where_modules_are(mod, cls, option, here)}" if missing else ""
        raise UsageError(f"{option} {spec!r}: cannot import {mod!r}: {exc_said(exc)}{hint}") from None
    finally:
        if added:
            sys.path.remove(here)
    found: Any = module
    for part in cls.split("."):
        found = getattr(found, part, None)
    if not isinstance(found, type):
        raise UsageError(f"{option} {spec!r}: {mod!r} has no class {cls!r}")
    return found


def _where_modules_are(mod: str, cls: str, option: str, here: str) -> str:
    """What to do about a module ``mod`` that is not found: a file's name or path (``my_router.py``,
    ``routers/my_router.py``) is named as its module; a module is looked up in the current folder
    ``here`` and on PYTHONPATH."""
    folder, _, file = mod.replace("\\", "/").rpartition("/")
    lookup = f"a module is looked up in the current folder ({here}) and on PYTHONPATH"
    if folder or file.endswith(".py"):
        name = file[:-3] if file.endswith(".py") else file
        where = f"run from {folder} or add it to PYTHONPATH" if folder else lookup
        return f"name the module, not its file: {option} {name}:{cls} ({where})"
    return f"{lookup}: run from the folder that holds {mod.replace('.', '/')}.py, or add that folder to PYTHONPATH"


def is_url(spec: str) -> bool:
    return spec.startswith(("http://", "https://"))


def load_router(spec: str, router_args: Sequence[str] = ()) -> PluginRouter:
    """The router ``--router SPEC [--router-arg k=v ...]`` names, wrapped; :class:`UsageError` when
    it cannot be made."""
    if is_url(spec):
        require_base_url("--router", spec)  # one line, its user-info hidden, for a URL no client can use
        short = add_url_secrets(spec)  # its password and ?token=: secrets, whatever their shape
        if short:
            raise UsageError(f"--router {spec}: {short_secret_refusal(short)}")
        if router_args:
            raise UsageError("--router-arg applies to a module:Class router; an HTTP router is configured on its server")
        from .http_router import HttpRouter

        inner = HttpRouter(spec, timeout=HTTP_TIMEOUT, max_bytes=HTTP_MAX_ANSWER_BYTES)
        return PluginRouter(inner, spec, policy=policy_name(inner, ""))
    cls = import_class(spec, "--router")
    kwargs = parse_router_args(router_args)  # (a secret among them is redacted from the line of a failure)
    with starting(spec):
        inner = cls(**kwargs)
    return PluginRouter(inner, spec)


def router_source(router: Any) -> Optional[str]:
    """The source file that defines a plug-in router's class; None for an HTTP router or a class
    without a source file."""
    if isinstance(router, PluginRouter) and is_url(router.spec):
        return None
    inner = getattr(router, "inner", router)
    try:
        path = inspect.getsourcefile(type(inner))
    except TypeError:  # a built-in class
        return None
    return path if path and os.path.isfile(path) else None


def router_code(router: Any) -> Optional[str]:
    """The fingerprint (``sha256:<hex>``) of :func:`router_source` and the modules it imports from
    its own package or folder (:func:`.plugin_code.code_fingerprint`), kept in the run record so
    that a rerun after one of those files changed is not taken for the same run; None where there
    is no source file."""
    from .plugin_code import code_fingerprint

    path = router_source(router)
    if path is None:
        return None
    return code_fingerprint(path, type(getattr(router, "inner", router)).__module__)


#: how deep :func:`router_state` follows lists and dicts of a router's attributes
STATE_DEPTH = 8


def _plain(value: Any, depth: int = 0) -> tuple[bool, Any]:
    """``(True, value as JSON)`` when ``value`` is plain data (text, numbers, flags, None, and lists,
    tuples, sets and text-keyed dicts of them), else ``(False, None)``."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return True, value
    if depth >= STATE_DEPTH:
        return False, None
    if isinstance(value, (list, tuple)):
        items = [_plain(v, depth + 1) for v in value]
        return (all(ok for ok, _ in items), [v for _, v in items])
    if isinstance(value, (set, frozenset)):
        ok, items = _plain(list(value), depth)
        return (ok, sorted(items, key=lambda v: json.dumps(v, sort_keys=True)) if ok else None)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        items = {k: _plain(v, depth + 1) for k, v in value.items()}
        return (all(ok for ok, _ in items.values()), {k: v for k, (_, v) in items.items()})
    return False, None


#: what :func:`router_state` hashes for a setting whose name says it holds a secret
SECRET_SETTING = "[secret]"


def _holds_secret(name: str, value: Any) -> bool:
    """Whether a router's setting is hashed as :data:`SECRET_SETTING`: its name says it holds a
    secret (:func:`~interleave_bench.redaction.is_secret_setting`), or is near a secret's
    (:func:`~interleave_bench.redaction.is_secret_name`: ``db_pw``, ``auth``) and it holds one text or
    number (a weak password: a list of stop ``tokens`` is a setting)."""
    return is_secret_setting(name) or (is_secret_name(name) and isinstance(value, (str, int, float))
                                       and not isinstance(value, bool))


def router_state(router: Any) -> Optional[str]:
    """The SHA-256 (``sha256:<hex>``) of a router object's settings: its public attributes (no
    leading ``_``) that hold plain data, as canonical JSON, taken before the run routes anything;
    a secret-named one (:func:`~interleave_bench.redaction.is_secret_setting`) as :data:`SECRET_SETTING`
    and any secret the text holds redacted (a secret's hash is guessed back when the secret is weak);
    None when it has none, or for a router served over HTTP. Kept in the run record, so that a
    router handed in from Python, whose constructor arguments no ``--router-arg`` records, is
    another run with other settings (``min_score=1`` then ``2``), not a resume of the first."""
    import hashlib

    if isinstance(router, PluginRouter) and is_url(router.spec):
        return None
    inner = getattr(router, "inner", router)
    try:
        attrs = vars(inner)
    except TypeError:  # no __dict__ (slots or a built-in object)
        return None
    state = {}
    for name in sorted(attrs):
        ok, value = _plain(attrs[name]) if not name.startswith("_") else (False, None)
        if ok:
            # a secret is never hashed: a hash of a weak one (``api_key="hunter2"``) is guessed back
            state[name] = SECRET_SETTING if _holds_secret(name, value) else value
    if not state:
        return None
    text = redact(json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":")))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def spec_of(router: Any) -> str:
    """``module:Class`` of a router object handed in from Python, for the run record."""
    return f"{type(router).__module__}:{type(router).__qualname__}"


def own_router(router: Any, opts: "RouteOptions",
               concurrency: Optional[int] = None) -> tuple[PluginRouter, "RouteOptions"]:
    """A run of your own router, as ``run_route`` takes it: ``router`` (an object with ``route(view)``,
    or None for the one ``opts.router`` names, loaded) wrapped in a :class:`PluginRouter` that
    routes ``concurrency`` sessions side by side (default 1), and ``opts`` naming it as
    ``--router`` does: the policy ``opts.policy`` when given, else the router's own name, and
    ``opts.router`` where it came from (``module:Class``), so that the run record holds its code
    and settings. Neither changes the rows: the runner writes sessions in their order whatever
    the number routed at once."""
    if concurrency is not None and (isinstance(concurrency, bool) or not isinstance(concurrency, int)
                                    or concurrency < 1):
        raise UsageError(f"concurrency must be a whole number of at least 1, got {concurrency!r}")
    if router is None:
        router = load_router(opts.router, opts.router_args)
    elif not isinstance(router, PluginRouter):
        router = PluginRouter(router, opts.router or spec_of(router), policy=opts.policy or None)
    router.sessions_at_once = 1 if concurrency is None else concurrency
    return router, dataclasses.replace(opts, policy=opts.policy or router.policy, router=router.spec)


# --- the Python API --------------------------------------------------------------------------------


def evaluate_router(
    router: Any,
    data: Any,
    *,
    mode: str = "closed",
    split: str = "dev",
    out: str | os.PathLike | None = None,
    fresh: bool = False,
    bootstrap: Optional[int] = None,
    seed: Optional[int] = None,
    concurrency: Optional[int] = None,
) -> dict[str, Any]:
    """Route ``data`` with ``router`` (an object with ``policy`` and ``route(view)``, sync or async),
    write the predictions and their score document, and return the score document.

    ``data`` is what ``route`` takes (:func:`~interleave_bench.hub.source.local_data`), or load_dataset
    rows of a session config (``ds["dev"]``, or a list of its rows as dicts), routed and scored as the
    data folder they were exported from (:func:`~interleave_bench.hub.source.materialize_rows`).
    The predictions go to ``DATA/predictions/<mode>-<policy>.jsonl`` (or ``out``), every split
    routed and ``split`` scored, exactly as ``route --router`` then ``score --split`` would; a
    second call resumes the file (``fresh`` starts over, removing the score files of the rows it
    replaces, as ``route --fresh`` does), and a file another run wrote (other
    options, or the router's settings: :func:`router_state`) is refused. ``concurrency`` routes that
    many sessions side by side, as ``--concurrency`` does (the rows are the same). Raises :class:`UsageError` /
    :class:`~interleave_bench.errors.InputError` on bad input, as the commands exit 2 on it.
    """
    from ..hub.source import local_data
    from ..llm.prices import prices_from
    from ..options import check_flag
    from ..score.defaults import DEFAULT_BOOTSTRAP, DEFAULT_SEED, check_bootstrap, check_mode, check_seed, check_split
    from ..score.run import score_files
    from .resume import START_OVER_FROM_PYTHON
    from .runner import RouteOptions, run_route

    # the checks the command line makes of --mode, --split, --fresh, --bootstrap and --seed, before
    # any routing, each naming this function's keyword
    check_mode(mode, "evaluate_router: mode")
    check_split(split, "evaluate_router: split")
    check_flag(fresh, "evaluate_router: fresh")
    check_bootstrap(DEFAULT_BOOTSTRAP if bootstrap is None else bootstrap, "evaluate_router: bootstrap")
    check_seed(DEFAULT_SEED if seed is None else seed, "evaluate_router: seed")
    data, source = local_data(data)
    if out is not None:
        from .resume import require_route_outputs

        require_route_outputs(data, out, router_source(router), "evaluate_router: out=")
    # a refusal to resume another run's file advises in this function's terms, not the command's options
    result = run_route(data, RouteOptions(mode=mode, split=ROUTE_SPLIT), out=out, fresh=fresh, router=router,
                       start_over=START_OVER_FROM_PYTHON, concurrency=concurrency)
    if result.stale_scores:
        from .resume import stale_scores_line

        print(stale_scores_line(result.stale_scores), file=sys.stderr)
    scored = score_files(data, [result.path], mode=mode, split=split,
                         bootstrap=DEFAULT_BOOTSTRAP if bootstrap is None else bootstrap,
                         seed=DEFAULT_SEED if seed is None else seed, price=prices_from(os.environ), data_source=source)
    return scored[0].result
