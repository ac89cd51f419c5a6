"""A ``datasets`` builder for local JSONL: the published configs without going through Parquet.

``interleave_bench.load("v0", data_dir="data/interleave-v0")`` gives the same ``DatasetDict`` (same
features, same rows) as ``load_dataset("<org>/interleavebench", "v0")`` on the exported data, built
straight from ``sessions.jsonl`` (or, for ``mid_reply``, a case file). Input is validated with the
package's readers, so bad data stops with the usual one-line error naming file, line and field.

The cache is keyed on the source file's SHA-256, the package version and the features, so editing
the JSONL (or upgrading the package) never serves a stale build.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

import datasets

from .. import __version__
from ..errors import InputError, UsageError
from ..io import SESSIONS_FILE, iter_sessions, read_case_file
from ..fingerprints import sha256_file
from . import card as cardlib
from .export import session_source
from .features import (
    CONFIGS,
    MID_REPLY_SPLIT,
    SESSION_SPLITS,
    case_row,
    features_fingerprint,
    features_for,
    session_row,
)

#: where ``load`` looks when no ``data_dir`` is given: the generator's output folders (relative to
#: the working directory) and the packaged mid-reply cases
DEFAULT_SOURCES = {
    "v0": Path("data") / "interleave-v0",
    "v1": Path("data") / "interleave-v1",
    "mid_reply": Path(__file__).resolve().parents[1] / "data" / "mid_reply" / "cases.json",
    "irc_ubuntu": Path("data") / "irc-ubuntu",
    "sgd": Path("data") / "sgd",
}
#: the name a mid-reply folder's case file goes by
CASES_FILE = "cases.json"

_DESCRIPTIONS = {name: cardlib.CONFIG_BLURBS[name] for name in CONFIGS}


@dataclass
class InterleaveConfig(datasets.BuilderConfig):
    """A config of :class:`InterleaveBench`; ``data_dir`` is a folder or the source file itself."""


class InterleaveBench(datasets.GeneratorBasedBuilder):
    """Builds ``v0``, ``v1`` and ``mid_reply`` from local files, with the published features."""

    BUILDER_CONFIG_CLASS = InterleaveConfig
    BUILDER_CONFIGS = [
        InterleaveConfig(name=name, version=datasets.Version(__version__), description=_DESCRIPTIONS[name])
        for name in CONFIGS
    ]
    DEFAULT_CONFIG_NAME = "v0"

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description=self.config.description,
            features=features_for(self.config.name),
            license=cardlib.LICENSE,
        )

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        path = source_file(self.config.name, self.config.data_dir)
        if self.config.name == "mid_reply":
            read_case_file(path)  # validate before any example is written
            return [datasets.SplitGenerator(name=MID_REPLY_SPLIT, gen_kwargs={"path": str(path), "split": MID_REPLY_SPLIT})]
        # the export's reader: validation, and a version check naming the line
        _, sessions, _ = session_source(self.config.name, path)
        counts = dict.fromkeys(SESSION_SPLITS, 0)
        for s in sessions:
            counts[s.split] += 1
        # a split with no sessions is left out, as in the exported folder
        return [
            datasets.SplitGenerator(name=split, gen_kwargs={"path": str(path), "split": split})
            for split in SESSION_SPLITS
            if counts[split]
        ]

    def _generate_examples(self, path: str, split: str) -> Iterator[tuple[str, dict[str, Any]]]:
        if self.config.name == "mid_reply":
            f = read_case_file(path)
            for case in f.cases:
                yield case.id, case_row(case, f.catalogs[case.lang])
            return
        for s in iter_sessions(path):
            if s.split == split:
                yield s.session_id, session_row(s, self.config.name)


def source_file(config: str, data_dir: Optional[str | os.PathLike]) -> Path:
    """The file a config is built from: ``data_dir`` itself, or the usual file inside it."""
    if config not in CONFIGS:
        raise UsageError(f"unknown config {config!r}; expected one of {', '.join(CONFIGS)}")
    p = Path(data_dir) if data_dir is not None else DEFAULT_SOURCES[config]
    if p.is_dir():
        p = p / (CASES_FILE if config == "mid_reply" else SESSIONS_FILE)
    if not p.is_file():
        hint = "" if data_dir is not None else " (no data_dir given; pass data_dir=FOLDER)"
        raise InputError(str(p), None, None, f"no such file{hint}")
    return p.resolve()


def load(
    config: str = "v0",
    data_dir: Optional[str | os.PathLike] = None,
    *,
    split: Optional[str] = None,
    cache_dir: Optional[str | os.PathLike] = None,
    **kwargs: Any,
) -> datasets.DatasetDict | datasets.Dataset:
    """Build ``config`` from local files; a ``DatasetDict`` (or one split's ``Dataset`` with ``split=``).

    ``data_dir`` is a session folder (``sessions.jsonl`` inside), a JSONL file, or for ``mid_reply``
    a case file (default: the packaged cases). ``cache_dir`` defaults to ``HF_DATASETS_CACHE``;
    other keyword arguments go to ``download_and_prepare``. Raises InputError for bad data.
    """
    path = source_file(config, data_dir)
    key = f"{sha256_file(path)}|{__version__}|{features_fingerprint(config)}"
    builder = InterleaveBench(
        config_name=config,
        dataset_name="interleavebench",
        data_dir=str(path),
        cache_dir=str(cache_dir) if cache_dir is not None else None,
        hash=hashlib.sha256(key.encode()).hexdigest()[:16],
    )
    builder.download_and_prepare(**kwargs)
    return builder.as_dataset(split=split)
