"""Data generation (docs/generate.md#the-plan-interleave_benchgenerateplanpy): threads, the seeded plan, writers, leak check, reading, runs.

The plan is the ground truth, drawn first from a seed; messages are written from it (by a model, or
offline from templates) and then read independently. Entry points:

- :func:`generate_offline` -- offline data, no model: ``generate_offline(50, "data/x")``
- :func:`generate` -- either path, with resume; the ``interleave-bench generate`` command uses it
- :func:`plan_session`, :func:`draw_shape`, :class:`PlanOptions` -- the plan as pure functions
- :func:`~interleave_bench.generate.facts.lay_facts`, ``build_timeline``, ``build_probes`` -- v1's
  fact episodes, timeline and probes (docs/generate.md#v1-replies-fact-episodes-timeline-and-probes), pure and seeded
"""

from __future__ import annotations

from .plan import PlanOptions, PlanRow, SessionShape, draw_shape, plan_session
from .runner import (
    DEFAULT_LANGS,
    DEFAULT_SEED,
    GenerateConfig,
    GenerateResult,
    default_out,
    generate,
    generate_offline,
)

__all__ = [
    "PlanOptions", "PlanRow", "SessionShape", "draw_shape", "plan_session",
    "GenerateConfig", "GenerateResult", "generate", "generate_offline", "default_out",
    "DEFAULT_LANGS", "DEFAULT_SEED",
]
