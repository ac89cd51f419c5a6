"""One SGD dialogue as one session: threads, turns and the gold rules (docs/sgd.md#what-a-session-holds).

- **Threads**: one per service of the dialogue, in order of first use (the first turn whose gold
  thread it is; a service a turn only touches beside another, or one no turn touches, comes after).
- **Turns**: the user turns in order; ``assistant`` is the system turn that follows.
- **Gold thread** (:func:`gold_service`): the service of the one frame with actions; when several
  frames have actions, the service whose intent starts or changes at that turn, else the current
  one; a turn these cannot settle is ambiguous.
- **Action**: ``new`` at a service's first turn, ``continue`` on the previous turn's service,
  ``return`` back to a service used before another. A move to an earlier service is always a
  return, so the corpus gives no ``switch``.
- **Refs** (``cross``): the user gives a free-text slot value that first appeared in another
  service's frame (the restaurant's address as the cab's destination).
- **Style** (:func:`style_of`): derived from the user's dialogue acts, which the corpus annotates;
  it does not annotate how a message names its subject.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from .corpus import NO_INTENT, USER, Frame, Located, Service, Turn

LANG = "en"
#: routing sessions: the corpus has no fact episodes or probes (v1's phase 2); each turn still
#: carries the assistant's reply in ``assistant``, the field v1 writes it in
VERSION = "interleave-v0"
SESSION_PREFIX = "sgd-"
THREAD_PREFIX = "t"
#: the corpus numbers each split's dialogues afresh (``1_00000`` is in train, dev and test), so a
#: session of another split than ``dev`` carries its split in its id to stay unique
UNPREFIXED_SPLIT = "dev"
#: the project split of each corpus split: the corpus's test split is test data, the rest is dev
PROJECT_SPLIT = {"train": "dev", "dev": "dev", "test": "test"}
#: the tag of a turn whose frames have actions for more than one service
MULTI_SERVICE_TAG = "multi-service"
#: the tag of a turn that draws on another thread (``gold.refs``), as the generator tags it
CROSS_TAG = "cross"
#: the judge's word for a turn the gold rule cannot settle
AMBIGUOUS = "ambiguous"

#: how a message names its subject, from the acts of its gold frame: the first entry whose acts
#: the frame holds wins. ``explicit``: the user states the task (``INFORM_INTENT``, "find me a
#: hotel room"); ``cue``: one concrete detail points to it, a slot value or a requested slot
#: ("8th of March", "what's their address?"); ``pronoun``: the user takes or turns down what the
#: assistant offered without naming it ("that one sounds good", "yes, book it"); anything else
#: (yes, no, thanks, "any others?", goodbye) is ``implicit``
STYLE_ACTS: tuple[tuple[str, frozenset[str]], ...] = (
    ("explicit", frozenset({"INFORM_INTENT"})),
    ("cue", frozenset({"INFORM", "REQUEST"})),
    ("pronoun", frozenset({"SELECT", "AFFIRM_INTENT", "NEGATE_INTENT"})),
)
IMPLICIT = "implicit"
#: the acts by which the user gives a slot value (the only values that can draw on another thread)
GIVING_ACT = "INFORM"
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def session_id(dialogue_id: str, corpus_split: str) -> str:
    """``sgd-<dialogue_id>`` for the dev split, ``sgd-<split>-<dialogue_id>`` for the others."""
    if corpus_split == UNPREFIXED_SPLIT:
        return f"{SESSION_PREFIX}{dialogue_id}"
    return f"{SESSION_PREFIX}{corpus_split}-{dialogue_id}"


def readable(service: str) -> str:
    """A service name as a title: ``RentalCars_1`` -> ``Rental cars`` (the version number dropped)."""
    base = service.rsplit("_", 1)[0] if re.search(r"_\d+$", service) else service
    return _CAMEL.sub(" ", base).replace("_", " ").capitalize()


def description_of(service: Service) -> str:
    """The schema's service description with each of its intents' descriptions."""
    intents = "; ".join(f"{i.name}: {i.description}" for i in service.intents)
    head = service.description.rstrip(". ")
    return f"{head}. Intents: {intents}." if intents else f"{head}."


def acted(turn: Turn) -> list[Frame]:
    """The frames of a turn that hold actions (the services the turn really serves)."""
    return [f for f in turn.frames if f.actions]


def style_of(frame: Optional[Frame]) -> str:
    """The style of a message whose gold frame is ``frame`` (:data:`STYLE_ACTS`)."""
    acts = {a.act for a in frame.actions} if frame is not None else set()
    for style, wanted in STYLE_ACTS:
        if acts & wanted:
            return style
    return IMPLICIT


def gold_service(frames: list[Frame], intents: dict[str, str], current: Optional[str]) -> tuple[str, bool]:
    """``(service, settled)`` for a user turn whose frames with actions are ``frames`` (one or more).

    ``intents`` is each service's active intent before this turn and ``current`` the previous
    turn's gold service. One frame: its service. Several: the one whose intent starts or changes
    here (an intent that ends, back to ``NONE``, starts nothing), else ``current`` when it is one
    of them. Otherwise the turn is not settled: the first changing frame's service (or the first
    frame's) is returned with ``settled`` false.
    """
    if len(frames) == 1:
        return frames[0].service, True
    changing = [f.service for f in frames
                if f.state is not None and f.state.active_intent != NO_INTENT
                and f.state.active_intent != intents.get(f.service, NO_INTENT)]
    if len(changing) == 1:
        return changing[0], True
    services = [f.service for f in frames]
    if not changing and current in services:
        return current, True
    return (changing or services)[0], False


@dataclass
class _Walk:
    """What the walk over a dialogue's turns knows so far."""

    intents: dict[str, str]
    first_seen: dict[str, str]  # a free-text value (lower case) -> the service it first appeared in
    used: list[str]  # services in order of first use as a gold thread
    current: Optional[str] = None


def _values(frame: Frame, free: frozenset[str], act: Optional[str] = None) -> list[str]:
    """The free-text slot values of a frame's actions (of ``act`` only, when given), lower case."""
    return [v.strip().lower() for a in frame.actions if (act is None or a.act == act) and a.slot in free
            for v in a.values if v.strip()]


def _refs(frame: Optional[Frame], walk: _Walk, free: dict[str, frozenset[str]]) -> list[str]:
    """Services (other than the frame's) where a value the user gives in ``frame`` first appeared."""
    if frame is None:
        return []
    out: list[str] = []
    for value in _values(frame, free[frame.service], GIVING_ACT):
        origin = walk.first_seen.get(value)
        if origin is not None and origin != frame.service and origin not in out:
            out.append(origin)
    return out


def _remember(turn: Turn, walk: _Walk, free: dict[str, frozenset[str]]) -> None:
    """Record where each free-text value of ``turn`` first appeared (after the turn is read)."""
    for frame in turn.frames:
        for value in _values(frame, free[frame.service]):
            walk.first_seen.setdefault(value, frame.service)


def dialogue_session(d: Located, corpus_split: str, schema: dict[str, Service]) -> dict[str, Any]:
    """The session record of one dialogue (plain JSON data, valid against ``schema.Session``).

    Session fields beyond the schema: ``dialogue_id`` and ``corpus_split`` (the corpus's own id
    and split). Each turn carries ``corpus_turn``, its index in the dialogue's turns.
    """
    dialogue = d.dialogue
    free = {name: schema[name].free_slots() for name in dialogue.services}
    walk = _Walk(intents={}, first_seen={}, used=[])
    raw_turns: list[dict[str, Any]] = []
    goals: dict[str, list[str]] = {}
    for t, turn in enumerate(dialogue.turns):
        if turn.speaker != USER:
            if raw_turns and "assistant" not in raw_turns[-1]:
                raw_turns[-1]["assistant"] = turn.utterance
            _remember(turn, walk, free)
            continue
        # a turn of bare frames (no actions anywhere) is settled among all its frames alike
        frames = acted(turn) or list(turn.frames)
        service, settled = gold_service(frames, walk.intents, walk.current)
        gold_frame = next((f for f in frames if f.service == service), None)
        touched = list(dict.fromkeys(f.service for f in turn.frames))
        refs = _refs(gold_frame, walk, free)
        if service not in walk.used:
            action = "new"
            walk.used.append(service)
        elif service == walk.current:
            action = "continue"
        else:
            action = "return"
        for f in turn.frames:
            assert f.state is not None  # checked when read (corpus.check_dialogue)
            if f.state.active_intent != NO_INTENT:
                intents = goals.setdefault(f.service, [])
                if f.state.active_intent not in intents:
                    intents.append(f.state.active_intent)
            walk.intents[f.service] = f.state.active_intent
        _remember(turn, walk, free)
        walk.current = service
        raw_turns.append({"t": t, "text": turn.utterance, "service": service, "settled": settled, "action": action,
                          "refs": refs, "style": style_of(gold_frame), "touched": touched})

    order = list(walk.used) + [s for f in raw_turns for s in f["touched"] if s not in walk.used]
    order += [s for s in dialogue.services if s not in order]
    order = list(dict.fromkeys(order))
    ids = {service: f"{THREAD_PREFIX}{k + 1}" for k, service in enumerate(order)}
    titles = [readable(s) for s in order]
    threads = []
    for k, service in enumerate(order):
        # two versions of one domain in a dialogue (Hotels_1, Hotels_4) keep their names apart
        title = titles[k] if titles.count(titles[k]) == 1 else service.replace("_", " ")
        threads.append({"id": ids[service], "title": title, "domain": service,
                        "goal": ", ".join(goals.get(service, [])), "description": description_of(schema[service]),
                        "facts": [], "constraints": []})
    return {
        "session_id": session_id(dialogue.dialogue_id, corpus_split),
        "version": VERSION,
        "split": PROJECT_SPLIT[corpus_split],
        "lang": LANG,
        "persona": "",
        "threads": threads,
        "turns": [_turn(i, raw, ids) for i, raw in enumerate(raw_turns)],
        "dialogue_id": dialogue.dialogue_id,
        "corpus_split": corpus_split,
    }


def _turn(i: int, raw: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    thread = ids[raw["service"]]
    multi = len(raw["touched"]) > 1
    tags = [raw["style"]] + ([MULTI_SERVICE_TAG] if multi else []) + ([CROSS_TAG] if raw["refs"] else [])
    judge: dict[str, Any] = {"thread": thread if raw["settled"] else AMBIGUOUS}
    if multi:
        judge["candidates"] = sorted((ids[s] for s in raw["touched"]), key=list(ids.values()).index)
    out: dict[str, Any] = {
        "i": i,
        "text": raw["text"],
        "gold": {"thread": thread, "action": raw["action"], "refs": [ids[s] for s in raw["refs"]]},
        "style": raw["style"],
        "tags": tags,
        "judge": judge,
        "ambiguous": not raw["settled"],
    }
    if "assistant" in raw:
        out["assistant"] = raw["assistant"]
    out["corpus_turn"] = raw["t"]
    return out
