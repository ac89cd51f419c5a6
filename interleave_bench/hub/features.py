"""The typed columns of each published config, and the one conversion between records and rows.

Every config (``v0``, ``v1``, ``mid_reply``) is described once, as a tree of :class:`Spec` tables;
the ``datasets.Features`` (:func:`features_for`), the record -> row conversion (:func:`to_row`,
used by the Parquet export and by the builder) and the row -> record conversion (:func:`from_row`,
used by push validation and by anyone reading the published data back) all derive from it, so
they cannot drift apart.

How a record maps to a row (docs/hub.md, "Round trip"):

- Declared fields become typed columns (``datasets.List`` for lists, nested dicts for objects).
  Closed label sets (``split``, ``gold.action``, ``style``, mid-reply ``how``) are ``ClassLabel``
  columns holding the index of the name; reading back gives the very same string.
  A field that may be absent or null stays nullable: a missing ``fact`` is ``None``, not an
  empty struct; a missing ``judge.candidates`` is ``None``, not ``[]``.
- Fields with a schema default (``persona``, ``goal``, ``facts``, ``tags``...) are written with
  that default when the source omits them, so the columns never hold a null the schema forbids.
- Unknown fields (the schema keeps them, ``extra="allow"``) are kept at every level in a
  nullable ``extra`` column holding a JSON object as text, ``None`` when there are none.
- v1 (docs/generate.md#v1-replies-fact-episodes-timeline-and-probes) is typed too: ``facts[].alternative``, ``turns[].assistant``,
  ``turns[].fact.value``, ``timeline`` as a list of events and ``probes`` as a list of probes,
  nulls kept (an undecided ``gold``, a retraction's ``value``). Only ``fact_types``
  (``{thread id: {fact key: type}}``, keyed by the session's own ids) is one JSON text. JSON text
  rather than ``datasets.Json`` because ``Json`` decodes with pandas' ujson, which rounds about a
  third of all floats (e.g. ``0.1234567890123456``), and because text loads on every
  ``datasets`` release and in any Parquet reader.

Reading back, :func:`from_row` drops the nulls of optional fields that sources express by leaving
them out (``twinOf``, ``fact``, ``candidates``, ``assistant``, ``miss``, ``fact_types``,
``timeline``, ``probes``), keeps the nulls that sources write (``gold.thread``,
``facts[].update``, ``facts[].alternative``, ``probes[].gold``), and merges ``extra`` back in. So a
source in the project's canonical form (what the generator writes) comes back equal field by
field; any other valid source comes back equal once parsed (same :class:`~interleave_bench.schema.Session`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Union

from datasets import ClassLabel, Features, List, Value
from pydantic import BaseModel

from .. import schema
from ..errors import InputError
from ..json_text import parse_json
from ..schema import ACTIONS, MID_REPLY_HOW, STYLES

#: the configs the dataset publishes, the first one is the default
CONFIGS = ("v0", "v1", "mid_reply", "irc_ubuntu", "sgd")
DEFAULT_CONFIG = "v0"
#: the session ``version`` each session config holds (defined with the records)
CONFIG_VERSIONS = schema.CONFIG_VERSIONS
#: splits of the session configs, in the order the card lists them
SESSION_SPLITS = schema.SPLITS
#: the mid-reply cases are all evaluation data: one split
MID_REPLY_SPLIT = "test"
#: the column holding unknown fields at every level, as a JSON object in text
EXTRA = "extra"


# --- the spec tree ------------------------------------------------------------------------------------

#: scalar kinds and their column types
_SCALARS = {
    "str": Value("string"),
    "int": Value("int64"),
    "bool": Value("bool"),
    "json": Value("string"),  # any JSON value, as text
}


@dataclass(frozen=True)
class Label:
    """A closed set of strings stored as a ``ClassLabel`` (the index of the name): the Hub viewer
    shows the names and filters by them, and a row turns back into the very same string."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class ListOf:
    """A list column of ``item`` (a scalar kind name or a :class:`Spec`)."""

    item: Union[str, "Spec"]


@dataclass(frozen=True)
class Spec:
    """One record level: its typed fields, in column order, plus the ``extra`` column.

    ``omit_null`` names the optional fields a source leaves out rather than writing null;
    :func:`from_row` leaves them out again when they are null.
    """

    fields: tuple[tuple[str, Union[str, Label, ListOf, "Spec"]], ...]
    omit_null: frozenset[str] = field(default_factory=frozenset)

    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.fields)


FACT = Spec((("key", "str"), ("value", "str"), ("update", "str")))
THREAD = Spec(
    (
        ("id", "str"),
        ("title", "str"),
        ("domain", "str"),
        ("goal", "str"),
        ("description", "str"),
        ("facts", ListOf(FACT)),
        ("constraints", ListOf("str")),
        ("twinOf", "str"),
    ),
    frozenset({"twinOf"}),
)
GOLD = Spec((("thread", "str"), ("action", Label(ACTIONS)), ("refs", ListOf("str"))))
TURN_FACT = Spec((("key", "str"), ("kind", "str")))
JUDGE = Spec((("thread", "str"), ("candidates", ListOf("str"))), frozenset({"candidates"}))
_TURN_V0_FIELDS = (
    ("i", "int"),
    ("text", "str"),
    ("gold", GOLD),
    ("style", Label(STYLES)),
    ("tags", ListOf("str")),
    ("fact", TURN_FACT),
    ("judge", JUDGE),
    ("ambiguous", "bool"),
)
TURN_V0 = Spec(_TURN_V0_FIELDS, frozenset({"fact"}))
FACT_V1 = Spec(FACT.fields + (("alternative", "str"),))
THREAD_V1 = Spec(
    tuple((name, ListOf(FACT_V1) if name == "facts" else kind) for name, kind in THREAD.fields), THREAD.omit_null
)
TURN_FACT_V1 = Spec(TURN_FACT.fields + (("value", "str"),))
TURN_V1 = Spec(
    tuple((name, TURN_FACT_V1 if name == "fact" else kind) for name, kind in _TURN_V0_FIELDS) + (("assistant", "str"),),
    frozenset({"fact", "assistant"}),
)
TIMELINE_EVENT = Spec(
    (
        ("thread", "str"),
        ("key", "str"),
        ("turn", "int"),
        ("kind", "str"),
        ("status", "str"),
        ("value", "str"),
        ("miss", "bool"),
    ),
    frozenset({"miss"}),
)
PROBE = Spec(
    (
        ("id", "str"),
        ("after", "int"),
        ("thread", "str"),
        ("source", "str"),
        ("key", "str"),
        ("category", "str"),
        ("gold", "str"),
        ("decoys", ListOf("str")),
        ("question", "str"),
    )
)


def _session_head(thread: Spec) -> tuple[tuple[str, Union[str, Label, ListOf, Spec]], ...]:
    return (
        ("session_id", "str"),
        ("version", "str"),
        ("split", Label(SESSION_SPLITS)),
        ("lang", "str"),
        ("persona", "str"),
        ("threads", ListOf(thread)),
    )


SESSION_V0 = Spec(_session_head(THREAD) + (("turns", ListOf(TURN_V0)),))
SESSION_V1 = Spec(
    _session_head(THREAD_V1)
    + (
        ("turns", ListOf(TURN_V1)),
        ("fact_types", "json"),
        ("timeline", ListOf(TIMELINE_EVENT)),
        ("probes", ListOf(PROBE)),
    ),
    frozenset({"fact_types", "timeline", "probes"}),
)

#: ``sgd`` (docs/sgd.md): v0 sessions whose turns carry the assistant's reply, with the corpus's
#: dialogue id and split in columns of their own (they are session fields the schema keeps as extras)
TURN_SGD = Spec(_TURN_V0_FIELDS + (("assistant", "str"),), frozenset({"fact", "assistant"}))
SESSION_SGD = Spec(_session_head(THREAD) + (("dialogue_id", "str"), ("corpus_split", "str"), ("turns", ListOf(TURN_SGD))))

CATALOG_TOPIC = Spec(
    (
        ("id", "str"),
        ("title", "str"),
        ("summary", "str"),
        ("entities", ListOf("str")),
        ("keywords", ListOf("str")),
        ("lastState", "str"),
    )
)
RUNNING = Spec((("topicId", "str"), ("request", "str"), ("progress", "str")))
MID_REPLY_CASE = Spec(
    (
        ("id", "str"),
        ("lang", "str"),
        ("running", RUNNING),
        ("how", Label(MID_REPLY_HOW)),
        ("text", "str"),
        ("expect", "str"),
        ("tags", ListOf("str")),
    )
)
#: the mid-reply row: the case, then the catalog of its language joined in
CATALOG = "catalog"

SPECS: dict[str, Spec] = {"v0": SESSION_V0, "v1": SESSION_V1, "mid_reply": MID_REPLY_CASE, "irc_ubuntu": SESSION_V0,
                          "sgd": SESSION_SGD}


# --- features -----------------------------------------------------------------------------------------


def _feature(kind: Union[str, Label, ListOf, Spec]) -> Any:
    if isinstance(kind, Label):
        return ClassLabel(names=list(kind.names))
    if isinstance(kind, Spec):
        return _struct(kind)
    if isinstance(kind, ListOf):
        return List(_feature(kind.item))
    return _SCALARS[kind]


def _struct(spec: Spec) -> dict[str, Any]:
    out = {name: _feature(kind) for name, kind in spec.fields}
    out[EXTRA] = Value("string")
    return out


def features_for(config: str) -> Features:
    """The ``datasets.Features`` of a config (``v0``, ``v1``, ``mid_reply``); a fresh object each call."""
    if config not in SPECS:
        raise KeyError(f"unknown config {config!r}; expected one of {', '.join(CONFIGS)}")
    cols = _struct(SPECS[config])
    if config == "mid_reply":
        cols[CATALOG] = List(_struct(CATALOG_TOPIC))
    return Features(cols)


def features_fingerprint(config: str) -> str:
    """A short hash of a config's features, so caches built with other features are never reused."""
    text = json.dumps(features_for(config).to_dict(), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --- records -> rows ------------------------------------------------------------------------------------


def json_text(value: Any) -> str:
    """Compact JSON text, non-ASCII characters kept, key order kept (the project's JSONL style)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _plain(value: Any) -> Any:
    """A record or a structure holding records, as plain JSON data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True, by_alias=True)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _value_to_cell(value: Any, kind: Union[str, Label, ListOf, Spec]) -> Any:
    if value is None:
        return None
    if isinstance(kind, Label):
        return kind.names.index(value)  # the schema's Literal admits only these names
    if isinstance(kind, Spec):
        return to_row(value, kind)
    if isinstance(kind, ListOf):
        return [_value_to_cell(v, kind.item) for v in value]
    if kind == "json":
        return json_text(_plain(value))
    return value


def to_row(record: BaseModel, spec: Spec) -> dict[str, Any]:
    """One validated record (``Session``, ``MidReplyCase``...) as a row of ``spec``'s columns.

    Declared fields the source left out take their schema default (``getattr``); an extra field
    with a column of its own goes there; everything the source set that ``spec`` has no column for (unknown fields, or a field of a later version such
    as ``reply`` in a v0 session) goes into ``extra``.
    """
    row: dict[str, Any] = {}
    names = spec.names()
    extra = record.model_extra or {}
    for name, kind in spec.fields:
        # a column may hold a field the record keeps as an extra (``sgd``'s ``dialogue_id``)
        value = getattr(record, name, None) if name in type(record).model_fields else extra.get(name)
        row[name] = _value_to_cell(value, kind)
    dumped = record.model_dump(mode="json", exclude_unset=True, by_alias=True)
    leftover = {k: v for k, v in dumped.items() if k not in names}
    row[EXTRA] = json_text(leftover) if leftover else None
    return row


def session_row(session: BaseModel, config: str) -> dict[str, Any]:
    """A validated ``Session`` as a row of the ``v0`` or ``v1`` config."""
    return to_row(session, SPECS[config])


def case_row(case: BaseModel, catalog: list[BaseModel]) -> dict[str, Any]:
    """A validated ``MidReplyCase`` as a ``mid_reply`` row, with its language's catalog joined in."""
    row = to_row(case, MID_REPLY_CASE)
    row[CATALOG] = [to_row(t, CATALOG_TOPIC) for t in catalog]
    return row


# --- rows -> records ----------------------------------------------------------------------------------


def is_label_index(value: Any) -> bool:
    """Whether ``value`` is a ``ClassLabel`` index as ``datasets`` gives one: an integer, not
    ``True`` or ``False`` (which name no label, and are left for the record check to refuse)."""
    return isinstance(value, int) and not isinstance(value, bool)


class CellError(ValueError):
    """A cell :func:`from_row` cannot read: an ``extra`` or JSON cell that is not JSON text, or
    holds what the strict reader refuses. ``field`` is where in the row (``turns[2].gold.extra``,
    or a path into the cell's JSON: ``extra.a``), ``message`` what is wrong; ``str()`` is the
    message, for a caller that names the field itself."""

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(message)


def _where(parent: str, name: Any) -> str:
    return f"{parent}[{name}]" if isinstance(name, int) else (f"{parent}.{name}" if parent else str(name))


def _json_cell(cell: Any, where: str) -> Any:
    """A JSON cell (``extra``, ``fact_types``) read as the records' files are read
    (:func:`~interleave_bench.json_text.parse_json`: broken JSON, 1e400, NaN, a key named twice,
    an integer outside 64 bits refused), else :class:`CellError` naming ``where``."""
    if not isinstance(cell, str):
        raise CellError(where, f"expected JSON text, got {type(cell).__name__} {cell!r}")
    try:
        return parse_json(where, None, cell)
    except InputError as exc:
        raise CellError(_where(where, exc.field) if exc.field else where, exc.message) from None


def _cell_to_value(cell: Any, kind: Union[str, Label, ListOf, Spec], where: str) -> Any:
    if cell is None:
        return None
    if isinstance(kind, Label):
        # an index outside the names is handed on as it is, so the record check names its field
        return kind.names[cell] if is_label_index(cell) and 0 <= cell < len(kind.names) else cell
    if isinstance(kind, Spec):
        # so is a cell of another shape than the column's (text where an object or a list belongs):
        # the record check refuses it as it refuses the same value in a JSONL record
        return _from_row(cell, kind, where) if isinstance(cell, Mapping) else cell
    if isinstance(kind, ListOf):
        return [_cell_to_value(v, kind.item, _where(where, j)) for j, v in enumerate(cell)] if isinstance(cell, list) else cell
    if kind == "json":
        return _json_cell(cell, where)
    return cell


def from_row(row: Mapping[str, Any], spec: Spec) -> dict[str, Any]:
    """A row (as ``datasets`` or pyarrow gives it) back as the record's plain JSON data.

    Nulls of ``spec.omit_null`` fields are left out, other nulls kept, ``extra`` merged back in.
    A cell of another shape than its column's is handed on as it is, for the record check to name.
    Raises :class:`CellError` (a ``ValueError``) when an ``extra`` or JSON cell is not JSON text of
    what the records' files may hold (an ``extra`` also when it is no JSON object).
    """
    return _from_row(row, spec, "")


def _from_row(row: Mapping[str, Any], spec: Spec, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kind in spec.fields:
        cell = row.get(name)
        if cell is None and name in spec.omit_null:
            continue
        out[name] = _cell_to_value(cell, kind, _where(where, name))
    extra = row.get(EXTRA)
    if extra is not None:
        more = _json_cell(extra, _where(where, EXTRA))
        if not isinstance(more, dict):
            raise CellError(_where(where, EXTRA), f"expected a JSON object, got {type(more).__name__} {extra!r}")
        out.update(more)
    return out


def row_to_session(row: dict[str, Any], config: str = "v0") -> dict[str, Any]:
    """A ``v0``/``v1`` row back as the session's JSON data (``Session.model_validate`` accepts it)."""
    return from_row(row, SPECS[config])


def row_to_case(row: dict[str, Any]) -> dict[str, Any]:
    """A ``mid_reply`` row back as the case's JSON data (the joined catalog left out)."""
    return from_row(row, MID_REPLY_CASE)


def row_to_catalog(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The catalog joined into a ``mid_reply`` row, as the topics' JSON data."""
    return [from_row(t, CATALOG_TOPIC) for t in row.get(CATALOG) or []]


def rows_to_case_file(rows: list[dict[str, Any]], about: str = "") -> dict[str, Any]:
    """``mid_reply`` rows back as a case file (``{about, catalogs, cases}``), catalogs by language.

    The result validates as ``MidReplyCaseFile``, so the mid-reply runner can run on published data.
    """
    catalogs: dict[str, list[dict[str, Any]]] = {}
    cases = []
    for row in rows:
        case = row_to_case(row)
        catalogs.setdefault(case["lang"], row_to_catalog(row))
        cases.append(case)
    return {"about": about, "catalogs": catalogs, "cases": cases}
