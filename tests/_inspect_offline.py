"""``python tests/_inspect_offline.py ARGS``: inspect's command line, on a machine without a network.

inspect's ``mockllm/model`` counts the prompt's tokens with tiktoken's ``o200k_base``, whose table
tiktoken downloads on first use; the tests have no network. This stand-in gives tiktoken a
byte-level table under that name first (token counts change; no decision depends on them), then
runs inspect's own entry point with the arguments given.
"""

from __future__ import annotations

import sys

#: the encoding inspect's token counter asks tiktoken for
ENCODING = "o200k_base"
#: one token per byte: a complete table that needs no download
BYTE_TOKENS = 256


def offline_encoding() -> None:
    import tiktoken
    import tiktoken.registry

    ranks = {bytes([b]): b for b in range(BYTE_TOKENS)}
    tiktoken.registry.ENCODINGS[ENCODING] = tiktoken.Encoding(
        name=ENCODING, pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})


if __name__ == "__main__":
    offline_encoding()
    from inspect_ai._cli.main import main

    sys.argv = ["inspect", *sys.argv[1:]]
    main()
