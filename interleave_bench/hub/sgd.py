"""The ``sgd`` config: the Schema-Guided Dialogue corpus as imported by ``import sgd`` (docs/sgd.md).

Its sessions are v0 sessions whose turns carry the assistant's reply (``turns[].assistant``), with
the corpus's ``dialogue_id`` and ``corpus_split`` in columns of their own; each turn's
``corpus_turn`` travels in the turn's ``extra`` column. The data is the corpus's, under its own
licence (CC BY-SA 4.0: ShareAlike), which the card states with the attribution and citation.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from ..sgd.importer import CITATION, LICENSE, LICENSE_NAME, SOURCE_URL
from . import card as cardlib
from . import irc

SGD_CONFIG = "sgd"
#: who wrote the corpus's text, on the Hub's taxonomy
CORPUS_LANGUAGE_CREATORS = "crowdsourced"


def sgd_config(path: str | os.PathLike) -> tuple[Any, list[str]]:
    """Read and validate imported SGD sessions as the ``sgd`` config; returns it and warnings."""
    from .export import imported_config  # the export module builds every session config the same way

    return imported_config(SGD_CONFIG, path, "dialogue_id", "import sgd")


def licenses(config_names: Sequence[str]) -> str | list[str]:
    """The card's ``license``: the project's, plus each exported corpus's own."""
    base = irc.licenses(config_names)
    if SGD_CONFIG not in config_names:
        return base
    return (list(base) if isinstance(base, list) else [base]) + [LICENSE]


def language_creators(config_names: Sequence[str]) -> list[str]:
    """The card's ``language_creators``: the project's, plus ``crowdsourced`` when ``sgd`` is exported
    (crowd workers wrote the corpus's text from dialogue outlines)."""
    base = list(cardlib.LANGUAGE_CREATORS)
    return base + [CORPUS_LANGUAGE_CREATORS] if SGD_CONFIG in config_names else base


def sgd_markdown(config_names: Sequence[str]) -> str:
    """The card's section on the corpus (licence, attribution, citation); empty without ``sgd``."""
    if SGD_CONFIG not in config_names:
        return ""
    return "\n".join([
        f"### `{SGD_CONFIG}`: licence and citation",
        "",
        "Real task-oriented dialogues between a person and an assistant, from the Schema-Guided Dialogue "
        "corpus (Rastogi et al., 2020): the dialogues in which one user moves between services (find an "
        "event, request a payment, come back to buy the tickets), one session per dialogue, one thread per "
        "service, one turn per user turn with the assistant's reply in `turns[].assistant`. The gold thread "
        "comes from the corpus's own frames; `dialogue_id` and `corpus_split` name the dialogue in the "
        "corpus, and each turn's `extra.corpus_turn` is its index in the dialogue. Both routing modes apply.",
        "",
        f"This config is the corpus's data, under its licence: {LICENSE_NAME} (`{LICENSE}`), not the "
        f"project's; anything published from it must carry the same licence and the citation. Source: "
        f"{SOURCE_URL}. Cite:",
        "",
        "```bibtex",
        CITATION.rstrip(),
        "```",
    ])
