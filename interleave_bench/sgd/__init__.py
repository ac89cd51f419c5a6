"""The Schema-Guided Dialogue corpus (Rastogi et al., 2020) as sessions: one user, several services.

- :func:`import_sgd` ``(corpus, out)`` writes one session per multi-service dialogue (``import sgd``)
- :func:`dialogue_session` one validated dialogue as a session record
"""

from .importer import import_sgd
from .session import dialogue_session

__all__ = ["dialogue_session", "import_sgd"]
