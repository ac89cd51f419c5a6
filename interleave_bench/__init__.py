"""InterleaveBench: a benchmark and toolkit for routing an interleaved chat.

One person uses one chat for several pieces of work at once; every message must reach the right
one. See README.md for the quick start and docs/ for the reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__version__ = "0.1.0"


def load(config: str = "v0", data_dir: str | None = None, **kwargs: Any):
    """Load a config (``v0``, ``v1``, ``mid_reply``) from local JSONL as a ``datasets.DatasetDict``.

    Builds with the package's ``GeneratorBasedBuilder`` (``interleave_bench.hub.builder``), with the
    same typed features as the published Parquet dataset.
    """
    from .hub.builder import load as _load

    return _load(config, data_dir=data_dir, **kwargs)


def evaluate_router(router: Any, data: Any, *, mode: str = "closed", **kwargs: Any) -> dict[str, Any]:
    """Route ``data`` with your ``router`` (``policy`` and ``route(view)``, sync or async), write the
    predictions and their ``.score.json``, and return the score document (docs/own_router.md).
    ``data`` is a data folder (what ``route`` takes) or ``load_dataset`` rows: ``ds["dev"]``.

    Keyword arguments: ``split`` (default ``dev``), ``out``, ``fresh``, ``bootstrap``, ``seed``,
    ``concurrency`` (sessions routed side by side, default 1); see
    :func:`interleave_bench.route.plugin.evaluate_router`.
    """
    from .route.plugin import evaluate_router as _evaluate_router

    return _evaluate_router(router, data, mode=mode, **kwargs)


def routing_inputs(predictions: Any, sessions: Any) -> dict[str, Any]:
    """A run's prediction rows (a predictions file, JSONL or Parquet, or its rows) lined up with
    ``sessions`` (``ds["dev"]`` or a list of sessions) as the ``interleave_routing`` module takes
    them: ``routing.compute(**routing_inputs("predictions/closed-local.jsonl", ds["dev"]))``
    (docs/hub.md#evaluate-modules-as-spaces-interleave-bench-push-metrics---org-org); see
    :func:`interleave_bench.hub.routing_inputs.routing_inputs`.
    """
    from .hub.routing_inputs import routing_inputs as _routing_inputs

    return _routing_inputs(predictions, sessions)


#: the package's data folder: prompts, mid-reply cases, offline packs, a small example data set
DATA_DIR = Path(__file__).resolve().parent / "data"


def data_path(name: str = "") -> str:
    """The path of a file or folder shipped in the package's data, e.g. ``data_path("mid_reply/cases.json")``
    or ``data_path("examples/v0")``; works in an installed wheel and from any folder.

    Raises ``ValueError`` when the package holds no such file.
    """
    path = DATA_DIR / name
    if ".." in Path(name).parts or not path.exists():
        raise ValueError(f"no {name!r} in the package's data folder {DATA_DIR}")
    return str(path)


#: the folder inside the package that holds one ``evaluate`` module per subfolder
METRICS_DIR = Path(__file__).resolve().parent / "metrics"


def metric_names() -> tuple[str, ...]:
    """The names of the ``evaluate`` modules shipped in the package, sorted (e.g. ``interleave_routing``)."""
    return tuple(sorted(p.parent.name for p in METRICS_DIR.glob("*/*.py") if p.stem == p.parent.name))


def metric_path(name: str) -> str:
    """The folder of the shipped ``evaluate`` module ``name``, as a string ``evaluate.load`` accepts.

    Works from any folder and in an installed wheel::

        evaluate.load(interleave_bench.metric_path("interleave_routing"))

    Raises ``ValueError`` naming the known modules when ``name`` is not one of them.
    """
    names = metric_names()
    if name not in names:
        raise ValueError(f"no metric module {name!r} in interleave_bench; known: {', '.join(names)}")
    return str(METRICS_DIR / name)
