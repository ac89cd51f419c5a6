"""The realism profile of a data set: how its messages read, per language and style.

One definition of every figure ``interleave-bench stats`` prints (docs/generate.md#stats) and the
acceptance script checks, so data written by a model and the offline set are held side by side by
the same rules:

- ``messages`` and ``median_chars`` per language and style (characters of the text as stored);
- ``title_share``: explicit messages whose text contains their own thread's title, compared
  case-insensitively on normalised text (:func:`~interleave_bench.generate.text.contains`);
- ``distinct_openings``: distinct openings over messages, where an opening is the first
  :data:`OPENING_TOKENS` tokens of the lower-cased text, a token being a word (letters, digits,
  apostrophes) or, in Chinese and Japanese, one CJK character;
- ``ambiguous_share``: thread messages (not one-offs) the independent reading disputes, the
  scorer's ``ambiguous_share`` metric, computed by its one function
  (:func:`~interleave_bench.score.routing.ambiguous_share`, which ``validate`` prints too);
- ``actions``: messages per gold action; ``threads_per_session`` (mean); ``twin_sessions``:
  sessions with a twin thread.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from typing import Any, Iterable, Sequence

from ..schema import ACTIONS, STYLES, Session
from ..score.routing import ambiguity_counts, ambiguous_share
from .text import contains

#: how many leading tokens make a message's opening ("sticking with the" / "读书会")
OPENING_TOKENS = 3
#: a token of an opening: a CJK character alone, or a run of letters, digits and apostrophes
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]|[^\W_]+(?:['’][^\W_]+)*")
#: the styles whose messages name their subject (the title share is taken over the first)
NAMING_STYLES = ("explicit",)


def opening(text: str) -> tuple[str, ...]:
    """The first :data:`OPENING_TOKENS` tokens of ``text``, lower-cased (see the module docstring)."""
    out: list[str] = []
    for m in _TOKEN.finditer(text.lower()):
        out.append(m.group(0))
        if len(out) == OPENING_TOKENS:
            break
    return tuple(out)


def _median(values: Sequence[int]) -> float | None:
    return float(statistics.median(values)) if values else None


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def profile(sessions: Iterable[Session]) -> dict[str, Any]:
    """The realism profile of ``sessions`` (see the module docstring); shares are rounded to 4
    places and ``None`` where there is nothing to count."""
    lengths: dict[str, dict[str, list[int]]] = {}
    titled: Counter[str] = Counter()
    explicit: Counter[str] = Counter()
    openings: dict[str, set[tuple[str, ...]]] = {}
    per_lang: Counter[str] = Counter()
    thread_msgs: Counter[str] = Counter()
    ambiguous: Counter[str] = Counter()
    actions: Counter[str] = Counter()
    sessions_by_lang: Counter[str] = Counter()
    n_sessions = n_threads = twins = 0
    for s in sessions:
        n_sessions += 1
        sessions_by_lang[s.lang] += 1
        n_threads += len(s.threads)
        twins += any(t.twinOf for t in s.threads)
        titles = {t.id: t.title for t in s.threads}
        amb, thread = ambiguity_counts(s.turns)
        ambiguous[s.lang] += amb
        thread_msgs[s.lang] += thread
        for turn in s.turns:
            lang = s.lang
            per_lang[lang] += 1
            lengths.setdefault(lang, {}).setdefault(turn.style, []).append(len(turn.text))
            openings.setdefault(lang, set()).add(opening(turn.text))
            actions[turn.gold.action] += 1
            if turn.style in NAMING_STYLES and turn.gold.thread in titles:
                explicit[lang] += 1
                titled[lang] += contains(turn.text, titles[turn.gold.thread], lang)
    langs: dict[str, Any] = {}
    for lang in sorted(per_lang):
        by_style = lengths.get(lang, {})
        langs[lang] = {
            "sessions": sessions_by_lang[lang],
            "messages": per_lang[lang],
            "styles": {st: {"messages": len(by_style[st]), "median_chars": _median(by_style[st])}
                       for st in STYLES if st in by_style},
            "title_share": _share(titled[lang], explicit[lang]),
            "distinct_openings": _share(len(openings.get(lang, ())), per_lang[lang]),
            "ambiguous_share": ambiguous_share(ambiguous[lang], thread_msgs[lang]),
        }
    total_thread = sum(thread_msgs.values())
    return {
        "sessions": n_sessions,
        "messages": sum(per_lang.values()),
        "langs": langs,
        "ambiguous_share": ambiguous_share(sum(ambiguous.values()), total_thread),
        "actions": {a: actions[a] for a in ACTIONS},
        "threads_per_session": round(n_threads / n_sessions, 2) if n_sessions else None,
        "twin_sessions": twins,
    }


#: the model-written reference profile (50 sessions written by a model from the same kind of
#: seeded plan): the figures the offline writer is held against (docs/generate.md#stats)
REFERENCE = {
    "title_share": {"en": 0.042, "zh": 0.039},
    "distinct_openings": {"en": 0.67},
    "median_chars": {
        "en": {"explicit": 70.5, "implicit": 38.5, "pronoun": 50.0, "cue": 63.0},
        "zh": {"explicit": 22.0, "implicit": 12.0, "pronoun": 16.0, "cue": 20.0},
    },
    "ambiguous_share": 0.136,
    "accuracy": {"closed-bm25": 0.733, "closed-stay": 0.434, "open-single": 0.445, "open-bm25": 0.399},
}


def table_rows(profiles: Sequence[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """``(figure, one cell per profile)`` rows of the side-by-side table."""
    def cell(v: Any, pct: bool = False) -> str:
        if v is None:
            return "–"
        if pct:
            return f"{v:.1%}"
        return f"{v:,}" if isinstance(v, int) else f"{v:g}"

    langs = sorted({lang for p in profiles for lang in p["langs"]})
    rows: list[tuple[str, list[str]]] = [
        ("sessions", [cell(p["sessions"]) for p in profiles]),
        ("messages", [cell(p["messages"]) for p in profiles]),
        ("threads per session", [cell(p["threads_per_session"]) for p in profiles]),
        ("sessions with a twin", [cell(p["twin_sessions"]) for p in profiles]),
        ("ambiguous share", [cell(p["ambiguous_share"], True) for p in profiles]),
    ]
    for a in ACTIONS:
        rows.append((f"action {a}", [cell(p["actions"].get(a, 0)) for p in profiles]))
    for lang in langs:
        ls = [p["langs"].get(lang) for p in profiles]
        rows.append((f"{lang} messages", [cell(x["messages"]) if x else "–" for x in ls]))
        rows.append((f"{lang} explicit with title verbatim", [cell(x["title_share"], True) if x else "–" for x in ls]))
        rows.append((f"{lang} distinct openings", [cell(x["distinct_openings"], True) if x else "–" for x in ls]))
        rows.append((f"{lang} ambiguous share", [cell(x["ambiguous_share"], True) if x else "–" for x in ls]))
        for st in STYLES:
            got = [x["styles"].get(st) if x else None for x in ls]
            if any(got):
                rows.append((f"{lang} {st}: messages / median chars",
                             [f"{cell(g['messages'])} / {cell(g['median_chars'])}" if g else "–" for g in got]))
    return rows


def render_table(names: Sequence[str], profiles: Sequence[dict[str, Any]]) -> str:
    """The profiles as one markdown table, one column per data set."""
    lines = ["| figure | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for label, cells in table_rows(profiles):
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
