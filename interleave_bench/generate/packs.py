"""The offline writer's packaged data: domain packs, value pools, personas and phrasing templates.

Everything lives as JSON under ``interleave_bench/data/offline/`` (docs/generate.md describes the
files). Each file is checked when it is first loaded, so a broken edit fails with one line naming
the file and the field rather than somewhere deep in a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Sequence

from ..errors import InputError
from ..io import read_json

#: where the offline data lives inside the package
OFFLINE_DIR = Path(__file__).resolve().parent.parent / "data" / "offline"
#: languages the offline writer, the rule reader and the model prompts all support
LANGS = ("en", "zh")
#: the smallest number of variants a domain needs per language: one per thread plus one for a twin
MIN_VARIANTS = 2
#: the fewest frames a style may have, so no single phrasing covers more than a few percent of it
MIN_FRAMES = 15
#: the fewest short forms per style: they are whole messages with nothing filled in, so only the
#: length of the list keeps repeats rare across sessions
MIN_SHORT_FORMS = 20
#: the fewest ways of saying a subject, so no wrapper ("the {kw} thing") dominates explicit messages
MIN_SUBJECT_FORMS = 6
#: the fewest openers: the first words of a message are what varies least in real chat
MIN_OPENERS = 20


@dataclass(frozen=True)
class FactSlot:
    key: str
    label: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Variant:
    """One kind of work in a domain: a title and the facts and constraints it can have."""

    domain: str
    title: str
    goal: str
    description: str
    keywords: tuple[str, ...]
    facts: tuple[FactSlot, ...]
    constraints: tuple[str, ...]
    nicknames: tuple[str, ...] = ()  # what a person calls the work in chat ("the dashboard move")


@dataclass(frozen=True)
class DomainPack:
    domain: str
    about: str
    requests: tuple[str, ...]
    variants: tuple[Variant, ...]


def _fail(path: Path, field: str, message: str) -> InputError:
    return InputError(str(path), None, field, message)


def _strings(path: Path, field: str, value: Any, *, min_len: int = 1) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _fail(path, field, "expected a list of non-empty strings")
    if len(value) < min_len:
        raise _fail(path, field, f"expected at least {min_len} entries, got {len(value)}")
    return tuple(value)


@lru_cache(maxsize=None)
def value_pools(lang: str) -> dict[str, tuple[str, ...]]:
    """The shared value pools of one language (``date``, ``time``, ``money_s``...)."""
    path = OFFLINE_DIR / "values.json"
    data = read_json(path)
    if lang not in data:
        raise _fail(path, lang, f"no value pools for language {lang!r}")
    return {name: _strings(path, f"{lang}.{name}", vals, min_len=3) for name, vals in data[lang].items()}


@lru_cache(maxsize=None)
def domain_names() -> tuple[str, ...]:
    """Every domain with a pack, sorted."""
    return tuple(sorted(p.stem for p in (OFFLINE_DIR / "domains").glob("*.json")))


@lru_cache(maxsize=None)
def domain_pack(domain: str, lang: str) -> DomainPack:
    """The pack of one domain in one language; raises :class:`InputError` for a missing or broken pack."""
    path = OFFLINE_DIR / "domains" / f"{domain}.json"
    if domain not in domain_names():
        raise _fail(path, "domain", f"no offline domain pack {domain!r} (have: {', '.join(domain_names())})")
    data = read_json(path)
    if lang not in data:
        raise _fail(path, lang, f"the {domain!r} pack has no {lang!r} section")
    sec = data[lang]
    pools = value_pools(lang)
    variants = []
    for k, v in enumerate(sec.get("variants") or []):
        where = f"{lang}.variants[{k}]"
        for f in ("title", "goal", "description"):
            if not isinstance(v.get(f), str) or not v[f]:
                raise _fail(path, f"{where}.{f}", "expected a non-empty string")
        slots = []
        for j, s in enumerate(v.get("facts") or []):
            sw = f"{where}.facts[{j}]"
            if not isinstance(s.get("key"), str) or not isinstance(s.get("label"), str):
                raise _fail(path, sw, "a fact slot needs a 'key' and a 'label'")
            if "pool" in s:
                if s["pool"] not in pools:
                    raise _fail(path, f"{sw}.pool", f"unknown value pool {s['pool']!r} (have: {', '.join(sorted(pools))})")
                values = pools[s["pool"]]
            else:
                values = _strings(path, f"{sw}.values", s.get("values"), min_len=2)
            slots.append(FactSlot(s["key"], s["label"], values))
        keys = [s.key for s in slots]
        if len(set(keys)) != len(keys):
            raise _fail(path, f"{where}.facts", "fact keys repeat")
        variants.append(
            Variant(
                domain=domain,
                title=v["title"],
                goal=v["goal"],
                description=v["description"],
                keywords=_strings(path, f"{where}.keywords", v.get("keywords")),
                facts=tuple(slots),
                constraints=_strings(path, f"{where}.constraints", v.get("constraints"), min_len=2),
                nicknames=_strings(path, f"{where}.nicknames", v["nicknames"]) if "nicknames" in v else (),
            )
        )
    if len(variants) < MIN_VARIANTS:
        raise _fail(path, f"{lang}.variants", f"expected at least {MIN_VARIANTS} variants, got {len(variants)}")
    return DomainPack(
        domain=domain,
        about=str(sec.get("about", domain)),
        requests=_strings(path, f"{lang}.requests", sec.get("requests"), min_len=5),
        variants=tuple(variants),
    )


@lru_cache(maxsize=None)
def variant_of(domain: str, title: str, lang: str) -> Variant | None:
    """The pack variant a thread was built from (by domain and title), or ``None`` (a model-made thread)."""
    try:
        pack = domain_pack(domain, lang)
    except InputError:
        return None
    return next((v for v in pack.variants if v.title == title), None)


@lru_cache(maxsize=None)
def personas(lang: str) -> dict[str, tuple[str, ...]]:
    """Persona pools of one language: ``frames`` plus one pool per slot."""
    path = OFFLINE_DIR / "personas.json"
    data = read_json(path)
    if lang not in data:
        raise _fail(path, lang, f"no personas for language {lang!r}")
    return {k: _strings(path, f"{lang}.{k}", v) for k, v in data[lang].items()}


@dataclass(frozen=True)
class OneoffFrame:
    text: str
    slots: tuple[tuple[str, tuple[str, ...]], ...]  # (slot name, fillers)


@dataclass(frozen=True)
class Lexicon:
    """The rule reader's word lists for one language (see docs/generate.md, "Independent reading")."""

    lead_markers: tuple[str, ...]
    continue_markers: tuple[str, ...]
    switch_markers: tuple[str, ...]
    ref_markers: tuple[str, ...]
    stopwords: tuple[str, ...] = ()  # words too common to tell one thread's card from another's


@dataclass(frozen=True)
class Templates:
    """One language's phrasing templates and reader lexicon."""

    lang: str
    lexicon: Lexicon
    explicit: dict[str, tuple[str, ...]]  # new / continue / move
    cue: tuple[str, ...]
    pronoun: dict[str, tuple[str, ...]]  # continue / move
    implicit: tuple[str, ...]
    short: dict[str, tuple[str, ...]]  # implicit / pronoun: whole short or unfinished messages
    vague: tuple[str, ...]
    tail: tuple[str, ...]
    fact_state: tuple[str, ...]
    fact_update: tuple[str, ...]
    cross_named: tuple[str, ...]
    cross_vague: tuple[str, ...]
    oneoff_prefixes: tuple[str, ...]
    oneoff_frames: tuple[OneoffFrame, ...]
    subject: tuple[str, ...]  # how a distinctive word is said as a subject: "the {kw} thing"
    detail: tuple[str, ...]  # how a detail of the description is brought up
    pronoun_requests: tuple[str, ...]  # whole vague requests that point with a pronoun
    openers: tuple[str, ...]  # words a message may open with ("hey", "btw", "对了，")
    about: tuple[str, ...]  # vague questions on one fact of the thread, by its label: "and the {label}?"
    habits: Habits


@dataclass(frozen=True)
class Habits:
    """One language's typing habits (``habits`` of the templates file): chances per message, the
    fragment rules (``[from, to]``, one drawn where it applies) and the words typed in another
    language (``mix``, ``[from, to]``)."""

    opener_p: float
    lower_p: float
    drop_end_p: float
    fragment_p: float
    typo_p: float
    mix_p: float
    fragments: tuple[tuple[str, str], ...]
    mix: tuple[tuple[str, str], ...]


#: the chances a habits section must give, each in [0, 1]
HABIT_CHANCES = ("opener_p", "lower_p", "drop_end_p", "fragment_p", "typo_p", "mix_p")


def _habits(path: Path, h: Any) -> Habits:
    if not isinstance(h, dict):
        raise _fail(path, "habits", "expected an object of typing habits")
    for k in HABIT_CHANCES:
        v = h.get(k)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v <= 1:
            raise _fail(path, f"habits.{k}", "expected a chance between 0 and 1")
    pairs = {}
    for k in ("fragments", "mix"):
        v = h.get(k, [])
        if not isinstance(v, list) or not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
                                              and p[0] for p in v):
            raise _fail(path, f"habits.{k}", "expected a list of [from, to] string pairs")
        pairs[k] = tuple((a, b) for a, b in v)
    return Habits(**{k: float(h[k]) for k in HABIT_CHANCES}, fragments=pairs["fragments"], mix=pairs["mix"])


def _lang_file(folder: str, lang: str, what: str) -> Path:
    """``<offline data>/<folder>/<lang>.json``; raises :class:`InputError` naming the languages there
    are when that language has none."""
    path = OFFLINE_DIR / folder / f"{lang}.json"
    if not path.exists():
        have = ", ".join(sorted(p.stem for p in (OFFLINE_DIR / folder).glob("*.json")))
        raise _fail(path, "lang", f"no {what} for language {lang!r} (have: {have})")
    return path


@lru_cache(maxsize=None)
def templates(lang: str) -> Templates:
    """The phrasing templates of one language; raises :class:`InputError` when there are none."""
    path = _lang_file("templates", lang, "offline templates")
    d = read_json(path)
    r = d.get("reader") or {}
    fr = d.get("frames") or {}

    def s(field: str, value: Any, min_len: int = 1) -> tuple[str, ...]:
        return _strings(path, field, value, min_len=min_len)

    lexicon = Lexicon(
        lead_markers=s("reader.lead_markers", r.get("lead_markers")),
        continue_markers=s("reader.continue_markers", r.get("continue_markers")),
        switch_markers=s("reader.switch_markers", r.get("switch_markers")),
        ref_markers=s("reader.ref_markers", r.get("ref_markers")),
        stopwords=s("reader.stopwords", r.get("stopwords")),
    )
    ex = fr.get("explicit") or {}
    pr = fr.get("pronoun") or {}
    sh = fr.get("short") or {}
    frames = []
    for k, f in enumerate((d.get("oneoff") or {}).get("frames") or []):
        text = f.get("text")
        if not isinstance(text, str) or not text:
            raise _fail(path, f"oneoff.frames[{k}].text", "expected a non-empty string")
        slots = tuple((name, s(f"oneoff.frames[{k}].{name}", f.get(name))) for name in ("x", "a", "b") if "{" + name + "}" in text)
        frames.append(OneoffFrame(text, slots))
    if len(frames) < MIN_FRAMES:
        raise _fail(path, "oneoff.frames", f"expected at least {MIN_FRAMES} frames, got {len(frames)}")
    pools = d.get("pools") or {}
    fact = d.get("fact") or {}
    cross = d.get("cross") or {}
    return Templates(
        lang=lang,
        lexicon=lexicon,
        explicit={a: s(f"frames.explicit.{a}", ex.get(a), 8) for a in ("new", "continue", "move")},
        cue=s("frames.cue", fr.get("cue"), MIN_FRAMES),
        pronoun={a: s(f"frames.pronoun.{a}", pr.get(a), 8) for a in ("continue", "move")},
        implicit=s("frames.implicit", fr.get("implicit"), MIN_FRAMES),
        short={st: s(f"frames.short.{st}", sh.get(st), MIN_SHORT_FORMS) for st in ("implicit", "pronoun")},
        vague=s("pools.vague", pools.get("vague"), 20),
        tail=tuple(pools.get("tail") or ("",)),
        fact_state=s("fact.state", fact.get("state")),
        fact_update=s("fact.update", fact.get("update")),
        cross_named=s("cross.named", cross.get("named")),
        cross_vague=s("cross.vague", cross.get("vague")),
        oneoff_prefixes=tuple((d.get("oneoff") or {}).get("prefixes") or ("",)),
        oneoff_frames=tuple(frames),
        subject=_slotted(path, "pools.subject", s("pools.subject", pools.get("subject"), MIN_SUBJECT_FORMS), "{kw}"),
        detail=_slotted(path, "pools.detail", s("pools.detail", pools.get("detail")), "{detail}"),
        pronoun_requests=s("pools.pronoun", pools.get("pronoun"), 20),
        openers=s("pools.opener", pools.get("opener"), MIN_OPENERS),
        about=_slotted(path, "pools.about", s("pools.about", pools.get("about"), MIN_SUBJECT_FORMS), "{label}"),
        habits=_habits(path, d.get("habits")),
    )


def _slotted(path: Path, field: str, forms: tuple[str, ...], slot: str) -> tuple[str, ...]:
    """``forms``, each of which must hold ``slot`` once."""
    for k, f in enumerate(forms):
        if f.count(slot) != 1:
            raise _fail(path, f"{field}[{k}]", f"expected {slot} exactly once")
    return forms


def fact_labels(lang: str) -> dict[str, str]:
    """Every fact key of the domain packs with its label in ``lang`` (first pack wins)."""
    out: dict[str, str] = {}
    for d in domain_names():
        for v in domain_pack(d, lang).variants:
            for s in v.facts:
                out.setdefault(s.key, s.label)
    return out


def label_for(key: str, lang: str) -> str:
    """How a fact key reads in a message: the packs' label, else the key with spaces for underscores."""
    return _labels(lang).get(key) or key.replace("_", " ")


@lru_cache(maxsize=None)
def _labels(lang: str) -> dict[str, str]:
    try:
        return fact_labels(lang)
    except InputError:
        return {}


#: the fewest phrasings a v1 user step or reply kind may have, so no phrasing dominates
MIN_STEP_PHRASINGS = 5


@dataclass(frozen=True)
class FactTemplates:
    """One language's v1 phrasings (``data/offline/facts/<lang>.json``): the user's fact steps, the
    assistant's replies, and the markers the offline rule check looks for."""

    lang: str
    user: dict[str, tuple[str, ...]]  # propose / accept / reject / retract
    reply_generic: tuple[str, ...]
    reply_propose: tuple[str, ...]
    check: dict[str, tuple[str, ...]]  # accept / reject / retract markers


#: the user steps with phrasings of their own (``intro`` and ``update`` use the v0 fact clauses)
USER_STEPS = ("propose", "accept", "reject", "retract")
#: the steps the rule check recognises by marker words
MARKED_STEPS = ("accept", "reject", "retract")


@lru_cache(maxsize=None)
def fact_templates(lang: str) -> FactTemplates:
    """The v1 phrasings of one language; raises :class:`InputError` when there are none or they are broken."""
    path = _lang_file("facts", lang, "v1 fact phrasings")
    d = read_json(path)
    user = d.get("user") or {}
    reply = d.get("reply") or {}
    check = d.get("check") or {}
    return FactTemplates(
        lang=lang,
        user={s: _strings(path, f"user.{s}", user.get(s), min_len=MIN_STEP_PHRASINGS) for s in USER_STEPS},
        reply_generic=_strings(path, "reply.generic", reply.get("generic"), min_len=MIN_STEP_PHRASINGS),
        reply_propose=_strings(path, "reply.propose", reply.get("propose"), min_len=MIN_STEP_PHRASINGS),
        check={s: _strings(path, f"check.{s}", check.get(s)) for s in MARKED_STEPS},
    )


def most_facts(domains: Sequence[str]) -> Optional[int]:
    """The most facts a thread of ``domains`` drawn from the packs can hold: the variant with the
    fewest fact slots, in any language (None when a domain has no pack: refused where it is read)."""
    try:
        return min(len(v.facts) for d in domains for lang in LANGS for v in domain_pack(d, lang).variants)
    except (InputError, ValueError):  # (no pack, or one without variants)
        return None
