"""Which data the shipped ``local`` fit read, and whether a data folder holds some of it.

``scripts/fit_local.py`` fits on the :data:`FIT_SPLIT` sessions of the corpora :func:`fit_corpora`
names; the weights file's ``fit.corpora`` records, per corpus, what it read: the offline writer's
seed for generated data, the SHA-256 of the sessions file for a corpus it imported or was given.
A data folder is recognised by its manifest (what ``generate``, ``import sgd`` and ``import irc``
write beside ``sessions.jsonl``), one corpus of the fit at a time:

- the manifest's ``sessions_sha256`` is the one the fit records for the corpus: the very file;
- or it was written by the corpus's writer (:func:`fit_corpora`): for the offline writer's data,
  of the seed and data set (``v0``) the fit's was generated with (any number of sessions: a seed's
  first sessions are the same however many are asked for; a ``v1`` set of the seed words its
  messages otherwise); for an imported corpus, from the corpus's own split the fit read when the
  manifest lists the splits imported (``corpus_splits``: SGD's ``train`` is imported as ``dev``, and
  IRC's ``test`` logs are none of the fit's).

Scored on the fit's split (or ``all``, which holds it), such data gives ``local`` in-sample figures
(:mod:`interleave_bench.score.in_sample`). A manifest says where data came from, not what each
session is: data without one, or a copy of the sessions in another folder under a manifest of its
own, is not recognised. The match errs towards in-sample: a subset of the fit's sessions, or more
sessions of its seed, are marked too.
"""

from __future__ import annotations

import collections
import functools
import itertools
import os
import types
from pathlib import Path
from typing import Any, Mapping, Optional

from ..score.in_sample import FitSample

#: the split of every corpus the fit reads (``test`` is never read)
FIT_SPLIT = "dev"
#: the splits a score may be on that hold the fit's split
SCORED_WITH_FIT = (FIT_SPLIT, "all")


def fit_corpora() -> dict[str, str]:
    """The fit's corpora by the name ``fit.corpora`` gives them, each with the ``writer`` its
    data folders' manifests name: the offline writer's data, SGD, IRC. ``scripts/fit_local.py``
    fits on these."""
    from ..generate.runner import TEMPLATES_WRITER
    from ..irc.importer import WRITER as IRC_WRITER
    from ..sgd.importer import WRITER as SGD_WRITER

    return {"offline": TEMPLATES_WRITER, "sgd": SGD_WRITER, "irc": IRC_WRITER}


def corpus_read(manifest: Mapping[str, Any], fit: Mapping[str, Any]) -> Optional[str]:
    """The name of the fit's corpus (``fit`` is a weights file's ``fit`` record) that the data of
    ``manifest`` (a data folder's manifest, as JSON) belongs to, else None (see the module's text)."""
    corpora = fit.get("corpora")
    if not isinstance(corpora, Mapping):
        return None
    provenance = manifest.get("provenance")
    options = manifest.get("options")
    options = options if isinstance(options, Mapping) else {}
    sha = provenance.get("sessions_sha256") if isinstance(provenance, Mapping) else None
    writers = fit_corpora()
    for name, read in corpora.items():
        if not isinstance(read, Mapping):
            continue
        if sha is not None and read.get("sessions_sha256") == sha:
            return name
        if manifest.get("writer") != writers.get(name):
            continue
        if read.get("data") == "generated":
            config = options.get("config")
            dataset = config.get("dataset") if isinstance(config, Mapping) else None
            if manifest.get("seed") == read.get("seed") and dataset == read.get("dataset", dataset):
                return name
        elif read.get("data") is None:  # a corpus imported for the fit (``given``: only its very file)
            imported = options.get("corpus_splits")
            if not isinstance(imported, list) or fit.get("split") in imported:
                return name
    return None


def fit_sample(data_file: str | os.PathLike, split: str) -> Optional[FitSample]:
    """The :class:`FitSample` of the data folder of ``data_file`` (its sessions file) scored on
    ``split`` when the shipped weights' fit read its sessions, else None. A missing or unreadable
    manifest is none (the scorer reads the sessions file itself, and says what is wrong with it)."""
    from ..errors import InterleaveError
    from ..io import MANIFEST_FILE, read_json

    path = Path(data_file).parent / MANIFEST_FILE
    if split not in SCORED_WITH_FIT or not path.is_file():
        return None
    try:
        manifest = read_json(path)
    except InterleaveError:
        return None
    if not isinstance(manifest, dict):
        return None
    from .local import POLICY, shipped_weights

    weights = shipped_weights()
    corpus = corpus_read(manifest, weights.fit)
    if corpus is None:
        return None
    read = weights.fit["corpora"][corpus]
    seed = read.get("seed") if read.get("data") == "generated" else None
    return FitSample(corpus, str(weights.fit.get("split", FIT_SPLIT)), weights.fingerprint(), POLICY, seed)


#: how deep :func:`local_weights_of` looks into the router's attributes (the router itself is depth 0)
SEARCH_DEPTH = 3
#: the most items of one container (list, tuple, set, dict) it looks at
SEARCH_ITEMS = 64
#: the most objects it looks at in all (a bound on the search whatever the router holds)
SEARCH_OBJECTS = 2000


def local_weights_of(router: Any) -> Optional[str]:
    """The fingerprint of the ``local`` weights ``router`` decides with, for its run record's
    ``local_weights`` (by which :func:`~interleave_bench.score.in_sample.in_sample_of` marks a run
    in-sample); None for a router without them.

    They are the weights of a :class:`~.local.LocalRouter` (or a subclass) that the router is, or
    else holds, the first found. Your own router is looked at through the plug-in wrapper that runs
    it (:class:`~.plugin.PluginRouter`'s ``inner``), then breadth first, up to :data:`SEARCH_DEPTH`
    levels down: its own attributes, public or private (``__dict__`` and ``__slots__``;
    ``hybrid``'s ``local``, ``self._inner = LocalRouter()``), its class's attributes (``inner =
    LocalRouter()`` in the class body, and its base classes' below ``object``), the items of a list,
    tuple or set and the values of a dict it holds (``self.routers = [LocalRouter()]``), the object
    of a bound method (``self._decide = LocalRouter().route``) and the attributes of another object
    it holds (``self.box.r``). Each object is looked at once (a cycle ends), at most
    :data:`SEARCH_ITEMS` items of one container and :data:`SEARCH_OBJECTS` objects in all. Modules,
    classes other than the router's own and functions are not looked into. Several ``LocalRouter``
    of different weights: the first found (the nearest, then the first in attribute order) names the
    run. A router holding one is taken to decide with it, which errs towards in-sample.

    What is not held when the run starts cannot be seen: a ``LocalRouter`` made inside ``route()``,
    held only in a module's global or in a function's closure, or deeper down, is not found, and the
    run is not marked in-sample."""
    from .local import LocalRouter
    from .plugin import PluginRouter

    if isinstance(router, PluginRouter):
        router = router.inner
    seen: set[int] = set()
    level = [router]
    budget = SEARCH_OBJECTS
    for depth in range(SEARCH_DEPTH + 1):
        below: list[Any] = []
        for held in level:
            if id(held) in seen:
                continue
            if budget <= 0:
                return None
            seen.add(id(held))
            budget -= 1
            if isinstance(held, LocalRouter):
                return held.weights.fingerprint()
            if depth < SEARCH_DEPTH:
                try:
                    below += _held_by(held, own_class=held is router)
                except Exception:  # an object whose attributes cannot be read holds nothing seen
                    pass
        level = below
    return None


def _held_by(obj: Any, own_class: bool = False) -> list[Any]:
    """What :func:`local_weights_of` looks at one level below ``obj``: a container's items (the
    first :data:`SEARCH_ITEMS`), a bound method's object, an object's own attributes, and with
    ``own_class`` (the router itself) its classes' attributes too."""
    if isinstance(obj, (str, bytes, bytearray, int, float, complex, bool)) or obj is None:
        return []
    if isinstance(obj, dict):
        return list(itertools.islice(dict.values(obj), SEARCH_ITEMS))
    if isinstance(obj, (list, tuple, set, frozenset, collections.deque)):
        return list(itertools.islice(iter(obj), SEARCH_ITEMS))
    if isinstance(obj, types.MethodType):
        return [obj.__self__]
    if isinstance(obj, functools.partial):  # its function (a bound method) and the values it was given
        return [obj.func, *obj.args[:SEARCH_ITEMS], *itertools.islice(obj.keywords.values(), SEARCH_ITEMS)]
    if isinstance(obj, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)):
        return []
    values = _attribute_values(obj)[:SEARCH_ITEMS]
    if own_class:
        for cls in type(obj).__mro__[:-1]:  # not ``object``
            values += [v for v in itertools.islice(cls.__dict__.values(), SEARCH_ITEMS) if not _is_code(v)]
    return values


def _is_code(value: Any) -> bool:
    """A class body's function, descriptor or nested class: not an object it holds."""
    return isinstance(value, (type, types.FunctionType, staticmethod, classmethod, property,
                              types.MemberDescriptorType, types.GetSetDescriptorType))


def _attribute_values(obj: Any) -> list[Any]:
    """The values of ``obj``'s own attributes: those of its ``__dict__``, then of its classes' ``__slots__``."""
    own = getattr(obj, "__dict__", None)
    values = list(own.values()) if isinstance(own, dict) else []
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name.startswith("__") and not name.endswith("__"):  # ``__x`` is kept as ``_Class__x``
                name = f"_{cls.__name__.lstrip('_')}{name}"
            if name not in ("__dict__", "__weakref__"):
                values.append(getattr(obj, name, None))
    return values
