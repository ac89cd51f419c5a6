"""The IRC disentanglement corpus (Kummerfeld et al., 2019): import as sessions, export clusters back.

- :func:`import_irc` ``(corpus, out)`` writes one session per annotated log (``import irc``)
- :func:`read_session` one annotated log as a session record
- :func:`write_corpus_clusters` a run's conversations in the corpus's formats (``export-irc``)
"""

from .corpus import read_session
from .export import write_corpus_clusters
from .importer import import_irc

__all__ = ["import_irc", "read_session", "write_corpus_clusters"]
