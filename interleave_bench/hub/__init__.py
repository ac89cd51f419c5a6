"""Hugging Face integration: the published dataset, its builder, the push, the leaderboard.

- ``features``: the typed columns of each config (``v0``, ``v1``, ``mid_reply``) and the one
  record <-> row conversion everything else uses (``row_to_session`` reads published rows back).
- ``export``: the Hub-ready folder (Parquet per config and split, README with YAML and card).
- ``card``: the card's figures and the template rendering (prose in ``dataset_card/``).
- ``builder``: a ``datasets.GeneratorBasedBuilder`` over local JSONL (``interleave_bench.load``).
- ``push``: validation of an exported folder, then one commit plus a tag.
- ``leaderboard``: one row per scored run, published one tagged commit per addition.
- ``client``: the Hub endpoint, token check and one-line errors shared by push and leaderboard.

Submodules import ``datasets`` and ``huggingface_hub`` (slow to import), so this package imports
nothing itself but ``client``'s check of ``HF_ENDPOINT``: both libraries read it when first
imported and stop with a bare ``ValueError`` on one no HTTP client can use, so it is checked just
before ``huggingface_hub`` loads (:class:`~.client.EndpointCheck`) and refused in one line naming
it. A command that never loads it (``score`` of a local folder) is not stopped by it.
"""

from .client import check_endpoint_on_import as _check_endpoint_on_import

_check_endpoint_on_import()
