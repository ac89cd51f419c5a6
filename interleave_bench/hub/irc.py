"""The ``irc_ubuntu`` config: the IRC disentanglement corpus as imported by ``import irc``.

Its sessions are v0 sessions (columns of ``v0``; the session-level ``context``, ``source_file``
and ``open_only``, and each turn's ``line`` and ``gold.links``, travel in the ``extra`` columns).
The data is the corpus's, under its own licence (CC BY 4.0), which the card states with the
attribution and citation the licence asks for.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from ..irc.importer import CITATION, LICENSE, SOURCE_URL
from . import card as cardlib

IRC_CONFIG = "irc_ubuntu"


def irc_config(path: str | os.PathLike) -> tuple[Any, list[str]]:
    """Read and validate imported IRC sessions as the ``irc_ubuntu`` config; returns it and warnings."""
    from .export import imported_config  # the export module builds every session config the same way

    return imported_config(IRC_CONFIG, path, "source_file", "import irc")


def licenses(config_names: Sequence[str]) -> str | list[str]:
    """The card's ``license``: the project's, plus the corpus's when ``irc_ubuntu`` is exported."""
    return [cardlib.LICENSE, LICENSE] if IRC_CONFIG in config_names else cardlib.LICENSE


def irc_markdown(config_names: Sequence[str]) -> str:
    """The card's section on the corpus (licence, attribution, citation); empty without ``irc_ubuntu``."""
    if IRC_CONFIG not in config_names:
        return ""
    return "\n".join([
        f"### `{IRC_CONFIG}`: licence and citation",
        "",
        "Real interleaved chat written by people: the annotated Ubuntu IRC logs of the IRC "
        "disentanglement corpus (Kummerfeld et al., 2019), one session per log, one thread per "
        "conversation (the connected components of the annotated reply links). The sessions are "
        "open-only (`extra.open_only`): route them with `--mode open`. The earlier, unannotated lines "
        "of each log are in the session's `extra.context`; each turn's `extra.line` is its message "
        "number in the log, so `interleave-bench export-irc` writes results the corpus's own "
        "evaluation scripts read.",
        "",
        f"This config is the corpus's data, under its licence: Creative Commons Attribution 4.0 "
        f"International (`{LICENSE}`), not the project's. Source: {SOURCE_URL}. Cite:",
        "",
        "```bibtex",
        CITATION.rstrip(),
        "```",
    ])
