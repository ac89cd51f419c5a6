"""Reading the Schema-Guided Dialogue corpus (Rastogi et al., 2020) as its authors ship it.

A split folder of the corpus holds ``schema.json`` (every service of the split: its description,
intents and slots) and ``dialogues_NNN.json`` files, each a JSON list of dialogues. A dialogue has
``dialogue_id``, ``services`` and ``turns``; a turn has ``speaker`` (``USER`` or ``SYSTEM``),
``utterance`` and ``frames``, one per service the turn touches, with that service's ``actions``
and, on user turns, its dialogue ``state`` (``active_intent``...).

Everything is validated here, once, with typed records, so the rules that turn a dialogue into a
session (:mod:`.session`) trust what they read. A defect is an :class:`InputError` naming the file
and the field as a JSON path inside it (``[3].turns[4].frames[0].service``): a JSON document has
no meaningful line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError, InputErrors, require_folder
from ..io import parse_record, read_json
from ..schema import ID

SCHEMA_FILE = "schema.json"
DIALOGUES_GLOB = "dialogues_*.json"
#: the corpus's split folders, in the order they are read
CORPUS_SPLITS = ("train", "dev", "test")
USER = "USER"
SYSTEM = "SYSTEM"
#: the corpus's ``active_intent`` when the user pursues no intent of that service
NO_INTENT = "NONE"


class _Corpus(BaseModel):
    """A record of the corpus's own format: fields this project does not read are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class SchemaIntent(_Corpus):
    name: str
    description: str = ""


class SchemaSlot(_Corpus):
    name: str
    description: str = ""
    is_categorical: bool = Field(default=False, strict=True)


class Service(_Corpus):
    service_name: str = Field(min_length=1)
    description: str = ""
    slots: list[SchemaSlot] = Field(default_factory=list)
    intents: list[SchemaIntent] = Field(default_factory=list)

    def free_slots(self) -> frozenset[str]:
        """The slots whose values are free text (not categorical): names, places, dates, times."""
        return frozenset(s.name for s in self.slots if not s.is_categorical)


class Action(_Corpus):
    act: str
    slot: str = ""
    values: list[str] = Field(default_factory=list)


class State(_Corpus):
    active_intent: str


class Frame(_Corpus):
    service: str
    actions: list[Action] = Field(default_factory=list)
    state: Optional[State] = None


class Turn(_Corpus):
    speaker: str
    utterance: str
    frames: list[Frame] = Field(default_factory=list)


class Dialogue(_Corpus):
    dialogue_id: str = Field(min_length=1, **ID)  # (it becomes a session id: refused here, where it is written)
    services: list[str] = Field(min_length=1)
    turns: list[Turn] = Field(min_length=1)


@dataclass(frozen=True)
class SplitFolder:
    """One split folder of the corpus: its name (``dev``...), its schema and its dialogue files."""

    split: str
    folder: Path
    files: tuple[Path, ...]

    @property
    def schema_file(self) -> Path:
        return self.folder / SCHEMA_FILE


@dataclass(frozen=True)
class Located:
    """A validated dialogue and where it is: its file and its index in that file's list."""

    dialogue: Dialogue
    file: Path
    index: int

    def where(self, rest: str = "") -> str:
        """The field path of this dialogue (or of ``rest`` inside it) in its file."""
        return f"[{self.index}]" + (f".{rest}" if rest else "")


def split_folders(root: str | Path) -> list[SplitFolder]:
    """The corpus split folders under ``root`` (``train/``, ``dev/``, ``test/``), or ``root`` itself.

    ``root`` is the corpus folder holding split folders, or one split folder (named ``train``,
    ``dev`` or ``test``, as the corpus names them). Raises :class:`InputError` when it holds no
    dialogue files, when a split folder has no ``schema.json``, or when a folder of dialogues is
    not named for its split.
    """
    root = Path(root)
    require_folder(root)
    found = [(s, root / s) for s in CORPUS_SPLITS if (root / s).is_dir()]
    if not found:
        if not any(root.glob(DIALOGUES_GLOB)):
            raise InputError(str(root), None, None,
                             f"no {DIALOGUES_GLOB} files here or in {', '.join(s + '/' for s in CORPUS_SPLITS)} "
                             "(give the corpus folder, or one of its split folders)")
        if root.name not in CORPUS_SPLITS:
            raise InputError(str(root), None, None,
                             f"a folder of dialogues is named for its corpus split ({', '.join(CORPUS_SPLITS)}), "
                             f"got {root.name!r}")
        found = [(root.name, root)]
    out = []
    for split, folder in found:
        files = tuple(sorted(folder.glob(DIALOGUES_GLOB)))
        if not files:
            raise InputError(str(folder), None, None, f"no {DIALOGUES_GLOB} files")
        if not (folder / SCHEMA_FILE).is_file():
            raise InputError(str(folder / SCHEMA_FILE), None, None,
                             "no such file: the split's schema (its services) is needed beside the dialogues")
        out.append(SplitFolder(split, folder, files))
    return out


def _prefixed(exc: InputError, prefix: str) -> InputErrors:
    """``exc`` (one error or several) with every field put under ``prefix``."""
    errors = exc.errors if isinstance(exc, InputErrors) else [exc]
    return InputErrors([
        InputError(e.path, e.line, prefix if e.field in (None, "(record)") else f"{prefix}.{e.field}", e.message)
        for e in errors
    ])


def _list_of_objects(path: Path, what: str) -> list[object]:
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(str(path), None, None, f"expected a JSON list of {what}, got {type(data).__name__}")
    return data


def read_schema(path: Path) -> dict[str, Service]:
    """The services of a ``schema.json``, by name. Raises :class:`InputError` for any defect."""
    services: dict[str, Service] = {}
    for k, obj in enumerate(_list_of_objects(path, "services")):
        try:
            service = parse_record(str(path), None, obj, Service)
        except InputError as exc:
            raise _prefixed(exc, f"[{k}]") from None
        if service.service_name in services:
            raise InputError(str(path), None, f"[{k}].service_name", f"service {service.service_name!r} appears twice")
        services[service.service_name] = service
    return services


def check_dialogue(d: Located, schema: dict[str, Service], schema_path: Path) -> None:
    """Raise :class:`InputError` unless every service ``d`` names is in the schema and its turns are whole.

    The dialogue's ``services`` (each once) and every frame's ``service`` must be services of ``schema.json``;
    a frame's service must be one the dialogue lists; a turn's speaker is ``USER`` or ``SYSTEM``,
    and a user turn has frames, each with its ``state`` (the rules read its ``active_intent``).
    """
    dialogue, path = d.dialogue, str(d.file)
    for k, name in enumerate(dialogue.services):
        if name not in schema:
            raise InputError(path, None, d.where(f"services[{k}]"),
                             f"service {name!r} (dialogue {dialogue.dialogue_id}) is not in {schema_path}")
        if name in dialogue.services[:k]:  # one service is one thread: twice would be one thread counted as two
            raise InputError(path, None, d.where(f"services[{k}]"),
                             f"service {name!r} (dialogue {dialogue.dialogue_id}) is listed twice "
                             f"(first at services[{dialogue.services.index(name)}])")
    listed = set(dialogue.services)
    for t, turn in enumerate(dialogue.turns):
        if turn.speaker not in (USER, SYSTEM):
            raise InputError(path, None, d.where(f"turns[{t}].speaker"),
                             f"expected {USER!r} or {SYSTEM!r}, got {turn.speaker!r}")
        if turn.speaker == USER and not turn.frames:
            raise InputError(path, None, d.where(f"turns[{t}].frames"), "a user turn needs a frame (the service it serves)")
        for f, frame in enumerate(turn.frames):
            where = d.where(f"turns[{t}].frames[{f}]")
            if frame.service not in schema:
                raise InputError(path, None, f"{where}.service",
                                 f"service {frame.service!r} (dialogue {dialogue.dialogue_id}) is not in {schema_path}")
            if frame.service not in listed:
                raise InputError(path, None, f"{where}.service",
                                 f"service {frame.service!r} is not one of the dialogue's services "
                                 f"({', '.join(dialogue.services)})")
            if turn.speaker == USER and frame.state is None:
                raise InputError(path, None, f"{where}.state", "a user turn's frame needs its state (active_intent)")
            intent = frame.state.active_intent if frame.state is not None else NO_INTENT
            if intent != NO_INTENT and intent not in {i.name for i in schema[frame.service].intents}:
                raise InputError(path, None, f"{where}.state.active_intent",
                                 f"{intent!r} is not an intent of service {frame.service!r} in {schema_path}")


def read_dialogues(path: Path, schema: dict[str, Service], schema_path: Path) -> Iterator[Located]:
    """The dialogues of one ``dialogues_NNN.json``, validated, in file order."""
    for k, obj in enumerate(_list_of_objects(path, "dialogues")):
        try:
            dialogue = parse_record(str(path), None, obj, Dialogue)
        except InputError as exc:
            raise _prefixed(exc, f"[{k}]") from None
        located = Located(dialogue, path, k)
        check_dialogue(located, schema, schema_path)
        yield located
