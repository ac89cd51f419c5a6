"""The dataset card: figures computed from the data, the YAML header, the template filled in.

The prose lives in ``dataset_card/README.md`` with ``{{name}}`` placeholders; this module computes
the figures (pure functions of the records and manifests) and renders them. Rendering refuses a
template whose placeholders it cannot fill, so a card never ships with a hole in it. Nothing here
reads the clock: the same data gives the same card byte for byte, which is what lets a second push
of unchanged data be recognised as unchanged.
"""

from __future__ import annotations

import re
import statistics
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

from ..errors import UsageError
from ..schema import Manifest, MidReplyCaseFile, Session
from ..score.routing import ambiguous_share

#: where the card template sits in a checkout (the repository's ``dataset_card/`` folder)
CHECKOUT_TEMPLATE_DIR = Path(__file__).resolve().parents[2] / "dataset_card"
#: where a wheel install puts it (setup.cfg ``data_files``)
INSTALLED_TEMPLATE_DIR = Path(sys.prefix) / "share" / "interleave-bench" / "dataset_card"
TEMPLATE_DIR = CHECKOUT_TEMPLATE_DIR if CHECKOUT_TEMPLATE_DIR.is_dir() else INSTALLED_TEMPLATE_DIR
DATASET_TEMPLATE = "README.md"
LEADERBOARD_TEMPLATE = "leaderboard.md"
#: the data's licence: the package's own (setup.cfg)
LICENSE = "apache-2.0"
#: routing a message to one of a session's threads is a classification task on the Hub's taxonomy
TASK_CATEGORIES = ["text-classification"]
#: the card's tags; ``synthetic`` joins them only when a generated config is exported (:func:`tags`)
TAGS = ["routing", "dialogue", "multi-turn", "benchmark"]
#: the Hub's task id under text-classification: each message goes to one of several threads
TASK_IDS = ["multi-class-classification"]
#: labels come from the seeded plan and a model's independent reading, the text from a model
ANNOTATIONS_CREATORS = ["machine-generated"]
LANGUAGE_CREATORS = ["machine-generated"]
#: the data is made here, from no other data set
SOURCE_DATASETS = ["original"]
PRETTY_NAME = "InterleaveBench"
#: the YAML key of the card that maps each config to its data fingerprint (on the records)
FINGERPRINTS_KEY = "data_fingerprints"
#: the Hub's size buckets, by number of rows over all configs (upper bounds, exclusive)
SIZE_BUCKETS = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
)

_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")


# --- template -----------------------------------------------------------------------------------------


def load_template(name: str = DATASET_TEMPLATE, template_dir: Optional[Path] = None) -> tuple[str, str]:
    """``(path, text)`` of a card template; a clear error when the template folder is not there."""
    folder = Path(template_dir) if template_dir else TEMPLATE_DIR
    path = folder / name
    try:
        return str(path), path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(
            f"card template {path} not found: reinstall the package, or pass --card-template DIR"
        ) from None


def placeholders(template: str) -> list[str]:
    """The placeholder names a template uses, in order of first use."""
    seen: dict[str, None] = {}
    for m in _PLACEHOLDER.finditer(template):
        seen.setdefault(m.group(1), None)
    return list(seen)


def render(template: str, values: dict[str, Any], *, source: str = "card template") -> str:
    """The template with every ``{{name}}`` replaced; raises UsageError naming any unfilled placeholder."""
    missing = [n for n in placeholders(template) if n not in values]
    if missing:
        raise UsageError(f"{source}: no value for placeholder(s) {', '.join('{{' + m + '}}' for m in missing)}")
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)


def size_category(rows: int) -> str:
    for bound, name in SIZE_BUCKETS:
        if rows < bound:
            return name
    return "n>100M"


# --- figures --------------------------------------------------------------------------------------------


@dataclass
class SessionFigures:
    """What the card says about one session config (all counts over every split)."""

    sessions_by_split: dict[str, int] = field(default_factory=dict)
    messages_by_split: dict[str, int] = field(default_factory=dict)
    sessions_by_lang: Counter = field(default_factory=Counter)
    messages_by_lang: Counter = field(default_factory=Counter)
    thread_messages: int = 0
    strict: int = 0
    oneoffs: int = 0
    actions: Counter = field(default_factory=Counter)
    styles: Counter = field(default_factory=Counter)
    leaks: int = 0
    cross: int = 0
    twin_sessions: int = 0
    threads: list[int] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)
    replies: int = 0
    probes: int = 0
    timelines: int = 0
    fact_steps: Counter = field(default_factory=Counter)
    fact_misses: int = 0
    probe_categories: Counter = field(default_factory=Counter)

    @property
    def sessions(self) -> int:
        return sum(self.sessions_by_split.values())

    @property
    def messages(self) -> int:
        return sum(self.messages_by_split.values())

    @property
    def ambiguous_share(self) -> Optional[float]:
        """The score's ambiguous share (:func:`~..score.routing.ambiguous_share`; None without thread messages)."""
        return ambiguous_share(self.thread_messages - self.strict, self.thread_messages)


def session_figures(sessions: Iterable[Session]) -> SessionFigures:
    """Counts of one config's sessions, for the card."""
    f = SessionFigures()
    for s in sessions:
        f.sessions_by_split[s.split] = f.sessions_by_split.get(s.split, 0) + 1
        f.messages_by_split[s.split] = f.messages_by_split.get(s.split, 0) + len(s.turns)
        f.sessions_by_lang[s.lang] += 1
        f.messages_by_lang[s.lang] += len(s.turns)
        f.threads.append(len(s.threads))
        f.turns.append(len(s.turns))
        f.twin_sessions += any(t.twinOf for t in s.threads)
        f.timelines += s.timeline is not None
        f.probes += len(s.probes or [])
        f.fact_misses += len({(e.thread, e.key) for e in s.timeline or [] if e.miss})
        for p in s.probes or []:
            f.probe_categories[p.category] += 1
        for t in s.turns:
            f.actions[t.gold.action] += 1
            f.styles[t.style] += 1
            f.leaks += "leak" in t.tags
            f.cross += "cross" in t.tags
            f.replies += t.assistant is not None
            if t.fact is not None and s.timeline is not None:
                f.fact_steps[t.fact.kind] += 1
            if t.gold.thread is None:
                f.oneoffs += 1
            else:
                f.thread_messages += 1
                f.strict += not t.ambiguous
    return f


@dataclass
class Source:
    """One exported config's origin: the file read, its fingerprint and its manifest (if any)."""

    config: str
    path: str
    sha256: str
    manifest: Optional[Manifest] = None
    manifest_path: Optional[str] = None


def _n(x: int) -> str:
    return f"{x:,}"


def _count(x: int, word: str) -> str:
    """``1 session``, ``2 sessions``."""
    return f"{x:,} {word}{'' if x == 1 else 's'}"


def _pct(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def _counts(c: Counter, order: Iterable[str] = ()) -> str:
    keys = [k for k in order if k in c] + sorted(k for k in c if k not in set(order))
    return ", ".join(f"`{k}` {_n(c[k])}" for k in keys) or "none"


def figures_markdown(config: str, f: SessionFigures, splits: Iterable[str]) -> str:
    """The card's section on one session config."""
    from ..schema import ACTIONS, FACT_STEPS, PROBE_CATEGORIES, STYLES

    split_text = ", ".join(
        f"`{s}` {_count(f.sessions_by_split.get(s, 0), 'session')} / {_count(f.messages_by_split.get(s, 0), 'message')}"
        for s in splits
    )
    langs = ", ".join(
        f"`{lang}` {_count(f.sessions_by_lang[lang], 'session')} / {_count(f.messages_by_lang[lang], 'message')}"
        for lang in sorted(f.sessions_by_lang)
    )
    turns = f"{min(f.turns)} to {max(f.turns)} (mean {statistics.mean(f.turns):.1f})" if f.turns else "n/a"
    threads = f"{statistics.mean(f.threads):.1f}" if f.threads else "n/a"
    lines = [
        f"### `{config}`",
        "",
        "| figure | value |",
        "|---|---|",
        f"| sessions | {_n(f.sessions)} |",
        f"| messages | {_n(f.messages)} |",
        f"| by split | {split_text} |",
        f"| languages | {langs or 'none'} |",
        f"| thread messages / one-offs | {_n(f.thread_messages)} / {_n(f.oneoffs)} |",
        f"| ambiguous share (of thread messages) | {_pct(f.ambiguous_share)} |",
        f"| turns per session | {turns} |",
        f"| threads per session (mean) | {threads} |",
        f"| sessions with a twin thread | {_n(f.twin_sessions)} |",
        f"| actions | {_counts(f.actions, ACTIONS)} |",
        f"| styles | {_counts(f.styles, STYLES)} |",
        f"| messages tagged `leak` / `cross` | {_n(f.leaks)} / {_n(f.cross)} |",
    ]
    if config == "v1":
        lines += [
            f"| turns with an assistant reply | {_n(f.replies)} |",
            f"| sessions with a timeline | {_n(f.timelines)} |",
            f"| fact steps | {_counts(f.fact_steps, FACT_STEPS)} |",
            f"| facts left out as `fact-miss` | {_n(f.fact_misses)} |",
            f"| probes | {_n(f.probes)}: {_counts(f.probe_categories, PROBE_CATEGORIES)} |",
        ]
    return "\n".join(lines)


def made_by_markdown(sources: list[Source]) -> str:
    """Who wrote each config (writer, model, seed) and the fingerprint of the file it came from."""
    lines = ["| config | writer | model | seed | generated | source fingerprint |", "|---|---|---|---|---|---|"]
    for src in sources:
        m = src.manifest
        if m is None:
            writer = model = seed = created = "not recorded"
        else:
            writer = f"`{m.writer}`"
            model = f"`{m.model}`" if m.model else "none"
            seed = str(m.seed) if m.seed is not None else "not recorded"
            created = str(m.provenance.get("created", "not recorded"))
            pv = m.provenance.get("package_version")
            if pv:
                created += f" (interleave-bench {pv})"
        lines.append(f"| `{src.config}` | {writer} | {model} | {seed} | {created} | `{src.sha256}` |")
    lines.append("")
    lines.append(
        "The fingerprint is computed on the records (canonical JSON of each session or case, sorted, "
        "then SHA-256), so the source JSONL and the published Parquet files give the same one; the YAML "
        f"header lists it as `{FINGERPRINTS_KEY}` and score files record it as `provenance.data_sha256`."
    )
    return "\n".join(lines)


def mid_reply_markdown(cases: MidReplyCaseFile, exported: int) -> str:
    """The card's section on the mid-reply cases."""
    by_lang = Counter(c.lang for c in cases.cases)
    by_how = Counter(c.how for c in cases.cases)
    by_expect = Counter("running" if c.expect == "running" else "new" if c.expect == "new" else "another topic" for c in cases.cases)
    tags = Counter(t for c in cases.cases for t in c.tags)
    catalogs = ", ".join(f"`{k}` {len(v)} topics" for k, v in sorted(cases.catalogs.items()))
    return "\n".join(
        [
            "### `mid_reply`",
            "",
            "| figure | value |",
            "|---|---|",
            f"| cases | {_n(exported)} (split `test`) |",
            f"| languages | {_counts(by_lang)} |",
            f"| how | {_counts(by_how)} |",
            f"| expected destination | {_counts(by_expect, ('running', 'another topic', 'new'))} |",
            f"| tags | {_counts(tags)} |",
            f"| catalogs | {catalogs} |",
        ]
    )


def configs_table(rows: list[tuple[str, str, str, str]]) -> str:
    """``| config | what it holds | rows | splits |`` for the configs present."""
    out = ["| config | what it holds | rows | splits |", "|---|---|---|---|"]
    out += [f"| `{a}` | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(out)


CONFIG_BLURBS = {
    "v0": "routing: sessions of interleaved messages, each with its gold thread (default config)",
    "v1": "routing plus the assistant's replies, the facts' timeline and fact probes (phase 2)",
    "mid_reply": "messages sent while a reply is running: where does each one belong?",
    "irc_ubuntu": "real Ubuntu IRC logs with annotated conversations (open mode only; CC BY 4.0)",
    "sgd": "real task-oriented dialogues of one user across two or three services (Schema-Guided Dialogue; CC BY-SA 4.0)",
}


#: the configs whose messages are written here from a seeded plan (by a model or the offline writer)
GENERATED_CONFIGS = ("v0", "v1")
#: the configs that are real chat written by people, imported from a corpus under its own licence
CORPUS_CONFIGS = {
    "irc_ubuntu": "one technical help channel where many people talk at once",
    "sgd": "task dialogues crowd workers wrote from outlines",
}


def _quoted(names: Iterable[str]) -> str:
    return " and ".join(f"`{n}`" for n in names)


def tags(config_names: Iterable[str]) -> list[str]:
    """The card's tags: ``synthetic`` only when a generated config is exported."""
    generated = any(n in GENERATED_CONFIGS for n in config_names)
    return TAGS + ["synthetic"] if generated else list(TAGS)


def provenance_lines(config_names: Iterable[str]) -> dict[str, str]:
    """The card's sentences that depend on where the exported configs' text comes from: the licence
    line, the out-of-scope use, who wrote the messages and the limitation that follows from it."""
    names = list(config_names)
    generated = [n for n in names if n in GENERATED_CONFIGS]
    real = [n for n in names if n in CORPUS_CONFIGS]
    licence = "Apache-2.0 (the toolkit's licence)"
    if real:
        licence += f"; {_quoted(real)} keep their corpus's licence (its section below)"
    kinds = "; ".join(f"`{n}` is {CORPUS_CONFIGS[n]}" for n in real)
    if generated and real:
        use = (f"Conclusions about how real people write from {_quoted(generated)}: their messages are "
               f"synthetic ({kinds}).")
    elif generated:
        use = "Conclusions about how real people write: the messages are synthetic."
    else:
        use = f"Conclusions about chat unlike the corpora's: {kinds}."
    writers = []
    if generated:
        writers.append(f"A language model (or, for the offline writer, phrasing templates) wrote every "
                       f"message of {_quoted(generated)} from a seeded plan; none comes from a real person.")
    if real:
        writers.append(f"People wrote the messages of {_quoted(real)}; the gold threads come from the "
                       f"corpus's own annotation.")
    if "mid_reply" in names:
        writers.append("The `mid_reply` cases were written by hand.")
    limit = (f"The data of {_quoted(generated)} is synthetic: personas, threads and messages are generated "
             f"from a plan. It tests whether a router follows references between threads, not how real "
             f"people write." if generated else f"The data is real chat, but narrow: {kinds}.")
    return {"license_line": licence, "use_line": use, "producers": " ".join(writers), "synthetic_line": limit}


def limitations_markdown(figs: dict[str, SessionFigures]) -> str:
    """The data-dependent limitation: how much is ambiguous or leaked, per config."""
    if not figs:
        return "This release holds no session configs."
    parts = []
    for name, f in figs.items():
        parts.append(
            f"`{name}`: {_pct(f.ambiguous_share)} of thread messages are ambiguous (left out of strict scores) "
            f"and {_n(f.leaks)} vague messages still name their subject (`leak`)"
        )
    return "; ".join(parts) + "."
