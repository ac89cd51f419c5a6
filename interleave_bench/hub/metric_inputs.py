"""The evaluate modules' inputs as users hand them in, made plain: ``load_dataset`` rows included.

A split loaded with ``datasets.load_dataset`` gives ``ds["dev"]["turns"]`` as a ``Column`` of
sessions, each a list of turn rows whose ``gold.action`` and ``style`` are ``ClassLabel`` indices,
with ``extra`` cells and nested nulls (docs/hub.md#round-trip). :func:`session_turns` turns that,
or turns as the JSONL holds them, into plain turns through :func:`~.features.from_row`, the one
row-to-record conversion; :func:`check_sessions_form` says in one line when an input is not one
list per session (as when ``evaluate.combine`` hands a flat list to a per-session module).
:func:`score_labels` scores per-session gold turns and predicted labels with the CLI's scorer.
One value's checks (text, a number label, a cluster label) are :mod:`.metric_values`'.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional, Sequence

from ..errors import InputError, InputErrors
from ..json_text import find_bad_value
from ..schema import JUDGE_AMBIGUOUS, JUDGE_NONE, PredictionRow, Session
from ..score.defaults import check_mode as defaults_check_mode
from ..score.labels import ThreadLabels
from ..score.rows import as_sessions, read_row
from ..score.run import score_predictions
from .features import TURN_V1, CellError, from_row, is_label_index
from .metric_values import got, is_number, listed, number_label, plain, texts, unicode_text

#: the prediction-row fields the cost metrics read, as the evaluate modules take them (one list
#: per session, one entry per message, None where a row has none)
COST_FIELDS = ("usage", "elapsed_ms", "via")


def is_session_list(value: Any) -> bool:
    """True when ``value`` is one list (or sequence) per session, not one item per message."""
    value = plain(value)
    return isinstance(value, list) and all(isinstance(plain(v), list) for v in value)


#: what :func:`check_sessions_form` says a per-session module's inputs are not (the per-item modules)
PER_ITEM_MODULES = "interleave_bcubed and interleave_mid_reply take one item per message"


def check_sessions_form(module: str, predictions: Any, references: Any, hint: str = PER_ITEM_MODULES) -> None:
    """Raise ``ValueError`` in one line unless both inputs hold one list per session (``hint`` ends
    it: what else the module could take)."""
    for name, value in (("predictions", predictions), ("references", references)):
        if value is not None and not is_session_list(value):
            raise ValueError(
                f"{module}: {name} must hold one list per session (labels, or gold turns such as "
                f"load_dataset(...)['dev']['turns']); got {_kind(value)}: {hint}"
            )


def _kind(value: Any) -> str:
    value = plain(value)
    if isinstance(value, list):
        first = next((plain(v) for v in value if not isinstance(plain(v), list)), None)
        return f"a list holding {type(first).__name__}" if value else "an empty list"
    return type(value).__name__


def plain_turn(turn: Any, where: str = "turn") -> Any:
    """One turn as plain JSON data: a ``load_dataset`` row decoded (labels by name, ``extra``
    merged), a JSONL turn kept as it is; anything that is not a mapping, or a cell of another shape
    than its column's, is left for the turn's check (the same as a JSONL turn's). Raises
    ``ValueError`` in one line naming ``where`` (``references[0][3]``) and the cell for an ``extra``
    that is not JSON text of an object a file could hold (:func:`~.features.from_row`)."""
    if not isinstance(turn, Mapping):
        return turn
    gold = turn.get("gold")
    action = gold.get("action") if isinstance(gold, Mapping) else None
    if "extra" in turn or is_label_index(action) or is_label_index(turn.get("style")):
        try:
            return from_row(turn, TURN_V1)
        except CellError as exc:
            raise ValueError(f"{where}.{exc.field}: {exc.message}") from None
    return turn


def session_turns(references: Any) -> Any:
    """Every session's turns made plain (:func:`plain_turn`); other shapes are handed on as they are."""
    references = plain(references)
    if not isinstance(references, list):
        return references
    return [[plain_turn(t, f"references[{k}][{j}]") for j, t in enumerate(plain(turns))]
            if isinstance(plain(turns), list) else turns
            for k, turns in enumerate(references)]


def thread_ids(threads: Any) -> Optional[list[list[str]]]:
    """Each session's thread ids, from ids or from thread rows (``ds["dev"]["threads"]``)."""
    threads = listed(threads, "threads")
    if threads is None:
        return None
    out: list[list[str]] = []
    for k, ts in enumerate(map(plain, threads)):
        if not isinstance(ts, list):
            raise ValueError(f"threads[{k}]: one list of thread ids (or thread rows) per session, got "
                             f"{type(ts).__name__} {ts!r}")
        for j, t in enumerate(ts):
            if isinstance(t, Mapping) and "id" not in t:
                raise ValueError(f"threads[{k}][{j}]: a thread row has no id")
        out.append([t["id"] if isinstance(t, Mapping) else t for t in ts])
    return out


def row_fields(messages: Sequence[int], **columns: Any) -> Optional[list[Optional[list[Optional[dict[str, Any]]]]]]:
    """Per session and message, the prediction-row fields given as one list per session each
    (``usage=``, ``elapsed_ms=``, ``via=``); None when none is given. ``messages`` is each
    session's number of messages. Raises ``ValueError`` naming the column (and session) that has
    another number of sessions, or of entries than its session has messages."""
    given = {name: listed(col, name) for name, col in columns.items() if col is not None}
    if not given:
        return None
    n_sessions = len(messages)
    for name, col in given.items():
        if not is_session_list(col) or len(col) != n_sessions:
            raise ValueError(f"{name} must hold one list per session ({n_sessions}), one entry per message")
    out: list[Optional[list[Optional[dict[str, Any]]]]] = []
    for k, n in enumerate(messages):
        cols = {name: plain(col[k]) for name, col in given.items()}
        for name, c in cols.items():
            if len(c) != n:
                raise ValueError(f"{name}[{k}]: {len(c)} entries, but session {k} has {n} messages")
        rows: list[Optional[dict[str, Any]]] = []
        for j in range(n):
            fields = {name: c[j] for name, c in cols.items() if c[j] is not None}
            if "usage" in fields and isinstance(fields["usage"], Mapping):
                fields["usage"] = {key: v for key, v in fields["usage"].items() if v is not None}
            rows.append(fields or None)
        out.append(rows)
    return out



def turn_features() -> dict[str, Any]:
    """The ``datasets`` features of one gold turn as the per-session evaluate modules declare it."""
    from datasets import List, Value

    return {
        "i": Value("int64"),
        "text": Value("string"),
        "gold": {"thread": Value("string"), "action": Value("string"), "refs": List(Value("string"))},
        "style": Value("string"),
        "tags": List(Value("string")),
        "judge": {"thread": Value("string"), "candidates": List(Value("string"))},
        "ambiguous": Value("bool"),
    }


def session_features() -> Any:
    """The per-session inputs' features: one list of labels and one list of gold turns per session."""
    from datasets import Features, List, Value

    return Features({"predictions": List(Value("string")), "references": List(turn_features())})


class NullsAreMissing:
    """The first base of every InterleaveBench evaluate module, before ``evaluate.Metric``: a null
    (``None``) in its inputs is a missing value, as Arrow stores it, wherever it stands.

    Before encoding, ``evaluate`` checks the first input of each column against the declared
    features (``_enforce_nested_string_type``: that a declared string is a ``str``), and of a list
    only its first element that is not null, or its last when all are: a session routed to no
    message (every label ``None``, "no row"), or a mid-reply case without a decision, was refused
    when it came first, with a message listing every input, and taken anywhere else. A null passes
    here; the module's own checks (:func:`encodable_labels`, ``texts(..., nulls=True)``), which see
    every value before it, are what allow it or refuse it, in one line. A mixin, not a metric:
    ``evaluate.load`` takes a module's first ``EvaluationModule`` class for the metric."""

    def _enforce_nested_string_type(self, schema: Any, obj: Any) -> Any:
        if obj is None or (isinstance(obj, (list, tuple)) and obj and all(v is None for v in obj)):
            return None
        return super()._enforce_nested_string_type(schema, obj)  # type: ignore[misc]


class KnownArguments:
    """A base of every InterleaveBench evaluate module, before ``evaluate.Metric``: ``compute`` given
    an argument the module's ``_compute`` does not take raises ``ValueError`` in one line naming the
    module, the argument and the ones it takes. ``evaluate`` hands every other argument of
    ``compute`` to ``_compute``, and ``evaluate.combine`` hands each module all of them, so such an
    argument was a ``TypeError`` naming neither. ``ARGUMENT_HINTS`` says more of an argument that
    belongs to another module (``groups``, B-cubed's, given to routing)."""

    ARGUMENT_HINTS: Mapping[str, str] = {}

    def check_arguments(self, arguments: Mapping[str, Any]) -> None:
        """Raise ``ValueError`` for the first of ``arguments`` (``compute``'s, but the inputs) that
        ``_compute`` does not take."""
        import inspect

        taken = list(inspect.signature(self._compute).parameters)  # type: ignore[attr-defined]
        for name in arguments:
            if name not in taken:
                hint = self.ARGUMENT_HINTS.get(name)
                raise ValueError(f"{self.name}: no argument {name!r} (it takes {', '.join(taken)})"  # type: ignore[attr-defined]
                                 + (f": {hint}" if hint else ""))

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> Any:
        """As ``evaluate`` computes, once every argument is one the module takes."""
        self.check_arguments(kwargs)
        return super().compute(predictions=predictions, references=references, **kwargs)  # type: ignore[misc]


def encodable_labels(predictions: Any) -> Any:
    """One list of labels per session (``datasets`` columns made lists), or one label per message;
    a label is text, and a number its text, as a prediction row reads it (open-mode systems
    elsewhere number their topics); ``None`` is a message without a row. Raises ``ValueError`` in
    one line naming a label that is none of these."""
    predictions = plain(predictions)
    if not isinstance(predictions, list):
        return predictions
    out: list[Any] = []
    for k, p in enumerate(map(plain, predictions)):
        out.append([_label(v, f"predictions[{k}][{j}]") for j, v in enumerate(p)] if isinstance(p, list)
                   else _label(p, f"predictions[{k}]"))
    return out


def _label(value: Any, where: str) -> Optional[str]:
    if isinstance(value, str):
        return unicode_text(value, where)
    if value is None:
        return value
    if is_number(value):
        return number_label(value, where)
    raise ValueError(f"{where}: a label is text, a number (read as its text) or None (no row), got "
                     f"{type(value).__name__} {value!r}")


def encodable_turns(references: Any) -> Any:
    """Every session's turns made plain and given every declared key (missing ones null), as
    ``evaluate`` needs to encode them: it encodes nested inputs only when every declared key is there."""
    turns = session_turns(references)
    if not isinstance(turns, list):
        return turns
    if all(isinstance(ts, list) for ts in turns):
        checked_sessions([_session(k, ts) for k, ts in enumerate(turns)])
    return [[complete_turn(t) for t in ts] if isinstance(ts, list) else ts for ts in turns]


def mid_reply_columns(running: Any, lang: Any, how: Any, tags: Any) -> dict[str, Any]:
    """The mid-reply module's optional columns made plain: ``running`` rows (``{topicId, ...}``) as
    their topic ids, ``how`` ``ClassLabel`` indices as their names, ``datasets`` columns as lists.
    Raises ``ValueError`` in one line naming the column and case of an entry of no such kind (a
    row without ``topicId``, a list where a text belongs, NaN, an index of no ``how``)."""
    from ..schema import MID_REPLY_HOW

    running, lang, how, tags = (listed(v, n) for v, n in ((running, "running"), (lang, "lang"), (how, "how"),
                                                           (tags, "tags")))
    if isinstance(running, list):
        for i, r in enumerate(running):
            if isinstance(r, Mapping) and r.get("topicId") is None:
                raise ValueError(f"running[{i}]: a running row has no topicId")
        running = texts([r.get("topicId") if isinstance(r, Mapping) else r for r in running], "running",
                        "a running topic id (or its running row)", nulls=True)
    texts(lang, "lang", "a language", nulls=True)
    if isinstance(how, list):
        how = [MID_REPLY_HOW[h] if is_label_index(h) and 0 <= h < len(MID_REPLY_HOW) else h for h in how]
        for i, h in enumerate(how):
            if h is not None and h not in MID_REPLY_HOW:
                raise ValueError(f"how[{i}]: one of {', '.join(MID_REPLY_HOW)} (or its index), {got(h)}")
    if isinstance(tags, list):
        tags = [plain(t) for t in tags]
        for i, t in enumerate(tags):
            if t is not None and not isinstance(t, list):
                raise ValueError(f"tags[{i}]: a list of tags or None, got {type(t).__name__} {t!r}")
            texts(t, f"tags[{i}]", "a tag")
    return {"running": running, "lang": lang, "how": how, "tags": tags}


def is_empty(value: Any) -> bool:
    """Whether ``value`` is an input with no item at all (an empty list or column)."""
    value = plain(value)
    return isinstance(value, list) and not value


#: how a problem names another row by its line (a second answer's first), read as an input's index
_OTHER_LINE = re.compile(r"\(first on line (\d+)\)")


def row_error(exc: InputError, name: str) -> ValueError:
    """A problem :func:`~interleave_bench.facts.results.parse_lines` found in the row at ``exc.line``
    (numbered from 1) as one line naming the evaluate input and its index (from 0), another row it
    names (``first on line 3``) by its index too (``first at predictions[2]``)."""
    where = name if exc.line is None else f"{name}[{exc.line - 1}]"
    message = _OTHER_LINE.sub(lambda m: f"(first at {name}[{int(m.group(1)) - 1}])", exc.message)
    return ValueError(f"{where}{'.' + exc.field if exc.field else ''}: {message}")


# --- the routing metrics from plain per-session inputs: gold turns and predicted labels ---------------
#
# What the ``interleave_routing`` and ``interleave_bcubed`` modules compute with: the same records
# the CLI reads (a Session per session, a PredictionRow per label), scored by the same function, so
# for the same inputs the metrics equal those of ``interleave-bench score --json``.

#: the language recorded for a session when none is given ("undetermined", ISO 639)
UNKNOWN_LANG = "und"
#: where an evaluate input's problems are said to be
SOURCE = "<references>"
#: a session must list at least one thread: one made only of one-offs lists this stand-in
PLACEHOLDER_THREAD = {"id": "(no thread)", "title": "", "domain": ""}


def _thread_ids_of(turns: Sequence[Mapping[str, Any]]) -> list[str]:
    """Thread ids named anywhere in the turns (gold, refs, the reading), in order of first mention."""
    seen: dict[str, None] = {}
    for t in turns:
        gold = t.get("gold") or {}
        judge = t.get("judge") or {}
        refs, candidates = gold.get("refs"), judge.get("candidates")
        named = [gold.get("thread"), *(refs if isinstance(refs, list) else []), judge.get("thread"),
                 *(candidates if isinstance(candidates, list) else [])]
        for tid in named:
            if isinstance(tid, str) and tid and tid not in (JUDGE_NONE, JUDGE_AMBIGUOUS):
                seen.setdefault(tid, None)
    return list(seen)


#: the keys of a turn as the evaluate module's features declare them (nested dicts: their keys)
TURN_KEYS = {"i": None, "text": None, "gold": ("thread", "action", "refs"), "style": None, "tags": None,
             "judge": ("thread", "candidates"), "ambiguous": None}


def complete_turn(t: Any) -> Any:
    """A turn with every declared key present (missing ones null), as ``evaluate`` needs to encode it.

    Anything that is not a dict is returned as is, for validation to report.
    """
    if not isinstance(t, Mapping):
        return t
    out: dict[str, Any] = {}
    for key, sub in TURN_KEYS.items():
        value = t.get(key)
        if sub is not None and isinstance(value, Mapping):
            value = {k: value.get(k) for k in sub}
        out[key] = value
    return out


def _turn(k: int, t: Mapping[str, Any]) -> dict[str, Any]:
    """A turn record from an evaluate input, filling what only breakdowns or lenient accuracy use.

    ``gold`` is required. Missing (or null) ``i`` means the turn's position, ``text`` is empty,
    ``style`` is ``oneoff`` for a one-off and ``explicit`` otherwise, ``tags`` empty, ``judge``
    ``none`` (no independent reading), ``ambiguous`` false. Anything else is handed on as given,
    for the data's validation to name (a text where a list belongs is never read letter by letter).
    """
    if not isinstance(t, Mapping):
        raise InputError(SOURCE, None, f"turns[{k}]", f"expected an object, got {type(t).__name__}")
    for key in ("gold", "judge"):
        if t.get(key) is not None and not isinstance(t[key], Mapping):
            raise InputError(SOURCE, None, f"turns[{k}].{key}", f"expected an object, got {type(t[key]).__name__} {t[key]!r}")
    gold = dict(t.get("gold") or {})
    if gold.get("refs") is None:
        gold["refs"] = []
    judge = dict(t.get("judge") or {"thread": "none"})
    if judge.get("candidates") is None:
        judge.pop("candidates", None)
    if judge.get("thread") is None:
        judge["thread"] = "none"
    style = t.get("style")
    if style is None:
        style = "oneoff" if gold.get("thread") is None else "explicit"
    return {
        "i": k if t.get("i") is None else t["i"],
        "text": "" if t.get("text") is None else t["text"],
        "gold": gold,
        "style": style,
        "tags": [] if t.get("tags") is None else plain(t["tags"]),
        "judge": judge,
        "ambiguous": False if t.get("ambiguous") is None else t["ambiguous"],
    }


def _session(k: int, turns: Sequence[Any], *, threads: Sequence[str] | None = None, session_id: str | None = None,
             lang: str | None = None) -> dict[str, Any]:
    """Session ``k`` of the references as the data holds one (its turns by :func:`_turn`)."""
    try:
        records = [_turn(j, t) for j, t in enumerate(turns)]
    except InputError as exc:
        raise ValueError(f"{_session_argument(k, exc.field, False)}: {exc.message}") from None
    ids = list(threads) if threads is not None else _thread_ids_of(records)
    return {
        "session_id": session_id if session_id is not None else f"session-{k:05d}",
        "version": "interleave-v0",
        "split": "dev",
        "lang": lang or UNKNOWN_LANG,
        "threads": [{"id": tid, "title": tid, "domain": ""} for tid in ids] or [PLACEHOLDER_THREAD],
        "turns": records,
    }


#: where a session's field came from, among the evaluate inputs (``turns`` are the references)
_SESSION_ARGUMENT = {"turns": "references", "threads": "threads", "lang": "langs", "session_id": "session_ids"}
#: the evaluate input each prediction-row field comes from (``i`` is the reference turn's)
_ROW_ARGUMENT = {"pred": "predictions", "refs": "predicted_refs", "usage": "usage", "elapsed_ms": "elapsed_ms",
                 "via": "via", "i": "references", "session_id": "session_ids"}
_FIELD_HEAD = re.compile(r"^([A-Za-z_]+)(?:\[(\d+)\])?(.*)$")


def checked_sessions(sessions: Sequence[Mapping[str, Any]], *, threads_given: bool = False) -> list[Session]:
    """``sessions`` (:func:`_session`'s) validated as the data is, by the data's own checks; raises
    ``ValueError`` in one line naming the evaluate input, its session and message
    (``references[2][5].gold.action: True is not one of new, ...``)."""
    for k, s in enumerate(sessions):
        bad = find_bad_value(s)
        if bad is not None:
            raise ValueError(f"{_session_argument(k, bad[0], threads_given)}: {bad[1]}")
    try:
        return as_sessions(sessions, SOURCE)
    except InputError as exc:
        raise ValueError(f"{_session_argument((exc.line or 1) - 1, exc.field, threads_given)}: {exc.message}") from None


def _session_argument(k: int, field: str | None, threads_given: bool) -> str:
    """``turns[5].gold`` of session ``k`` as the input that gave it: ``references[k][5].gold``."""
    m = _FIELD_HEAD.match(field or "")
    name = _SESSION_ARGUMENT.get(m.group(1)) if m else None
    if m is None or name is None or (name == "threads" and not threads_given):
        return f"references[{k}]" + (f": {field}" if field else "")
    index = f"[{m.group(2)}]" if m.group(2) is not None else ""
    return f"{name}[{k}]{index}{m.group(3)}"


def _checked_row(k: int, j: int, row: dict[str, Any]) -> PredictionRow:
    """A prediction row built for message ``j`` of session ``k``, read as a predictions file's row
    is (once: the scorer takes the record as it is); raises ``ValueError`` in one line naming the
    evaluate input it came from (``elapsed_ms[0][3]: nan is not a JSON number ...``)."""
    try:
        return read_row(row, SOURCE)
    except InputError as exc:
        problem = (exc.field or "", exc.message)
    m = _FIELD_HEAD.match(problem[0])
    name = _ROW_ARGUMENT.get(m.group(1)) if m else None
    if m is None or name is None:
        raise ValueError(f"predictions[{k}][{j}]: {problem[0]}: {problem[1]}")
    rest = problem[0][len(m.group(1)):]
    raise ValueError(f"{name}[{k}][{j}]{rest}: {problem[1]}")


def build_inputs(
    references: Sequence[Sequence[Mapping[str, Any]]],
    predictions: Sequence[Sequence[str | None]],
    *,
    mode: str = "closed",
    threads: Sequence[Sequence[str]] | None = None,
    session_ids: Sequence[str] | None = None,
    langs: Sequence[str] | None = None,
    predicted_refs: Sequence[Sequence[Sequence[str] | None]] | None = None,
    row_fields: Sequence[Sequence[Mapping[str, Any] | None]] | None = None,
) -> tuple[list[Session], list[PredictionRow]]:
    """Sessions and prediction rows from per-session gold turns and labels (``None`` = no row).

    ``threads`` gives each session's thread ids (default: those its turns name; give them when a
    thread has no message, for exactly the CLI's numbers). ``row_fields`` adds, per session and
    message, prediction-row fields such as ``usage``, ``elapsed_ms`` and ``via`` (the cost metrics'
    inputs, docs/score.md#input-tokens-per-message). Raises ``ValueError`` in one line naming the
    input (and session and message) when lengths differ or a turn or a row is not valid, as the
    data's and the predictions' own checks find it.
    """
    n = len(references)
    if len(predictions) != n:
        raise ValueError(f"{n} sessions of references but {len(predictions)} of predictions")
    for name, extra in (("threads", threads), ("session_ids", session_ids), ("langs", langs),
                        ("predicted_refs", predicted_refs), ("row_fields", row_fields)):
        if extra is not None and len(extra) != n:
            raise ValueError(f"{n} sessions of references but {len(extra)} of {name}")
    refs_of: list[Optional[list[Any]]] = []
    for k, (turns, labels) in enumerate(zip(references, predictions)):
        if len(turns) != len(labels):
            raise ValueError(f"session {k}: {len(turns)} turns but {len(labels)} predicted labels")
        refs = None if predicted_refs is None else plain(predicted_refs[k])
        if refs is not None and (not isinstance(refs, list) or len(refs) != len(labels)):
            got = f"{len(refs)} entries" if isinstance(refs, list) else f"{type(refs).__name__} {refs!r}"
            raise ValueError(f"predicted_refs[{k}]: {got}, but session {k} has {len(labels)} messages "
                             "(one list of topic labels, or None, per message)")
        refs_of.append(refs)
    if session_ids is not None:
        seen: dict[Any, int] = {}
        for k, sid in enumerate(session_ids):
            if isinstance(sid, str) and seen.setdefault(sid, k) != k:
                raise ValueError(f"session_ids[{k}]: {sid!r} is the id of session {seen[sid]} too: each session "
                                 "needs its own id")
    dicts = [_session(k, turns, threads=threads[k] if threads is not None else None,
                      session_id=session_ids[k] if session_ids is not None else None,
                      lang=langs[k] if langs is not None else None)
             for k, turns in enumerate(references)]
    sessions = checked_sessions(dicts, threads_given=threads is not None)
    rows: list[PredictionRow] = []
    for k, (s, labels, refs) in enumerate(zip(dicts, predictions, refs_of)):
        sid, records = s["session_id"], s["turns"]
        for j, label in enumerate(labels):
            if label is None:
                continue
            row: dict[str, Any] = {"session_id": sid, "i": records[j]["i"], "pred": label, "mode": mode}
            if refs is not None and refs[j] is not None:
                row["refs"] = plain(refs[j])  # (a text stays one, and is refused: no list of its letters)
            if row_fields is not None and row_fields[k] is not None and row_fields[k][j] is not None:
                row.update(row_fields[k][j])
            rows.append(_checked_row(k, j, row))
    return sessions, rows


def _require_thread_labels(sessions: Sequence[Session], rows: Sequence[PredictionRow]) -> None:
    """Raise ``ValueError`` when closed mode would score labels of which not one (``CLARIFY`` and
    ``ERROR`` aside) names a thread of its session (:class:`~interleave_bench.score.labels.ThreadLabels`,
    the rule ``score`` holds a file to): every message would count as wrong, and such labels are a
    system's own topic labels, which open mode matches to threads."""
    ids = {s.session_id: set(s.thread_ids()) for s in sessions}
    labels = ThreadLabels()
    for k, r in enumerate(rows):
        labels.add(k, r.pred, ids[r.session_id])
    if labels.refused:
        raise ValueError(labels.problem("mode='closed' (the default)", "with mode='open'"))


def check_mode(mode: Any) -> None:
    """Raise ``ValueError`` in one line unless ``mode`` (the argument itself, not every row built
    from it) is one of :data:`~interleave_bench.schema.MODES`: the scorer's check
    (:func:`~interleave_bench.score.defaults.check_mode`), in a module's terms."""
    defaults_check_mode(mode, "mode", ValueError)


#: the per-session modules' arguments beside the inputs and ``mode``, which :func:`score_sessions` reads
SESSION_ARGUMENTS = ("threads", "session_ids", "langs", "predicted_refs", *COST_FIELDS)


def score_sessions(references: Any, predictions: Any, *, mode: str = "closed", thread_labels: bool = False,
                   threads: Any = None, session_ids: Any = None, langs: Any = None, predicted_refs: Any = None,
                   usage: Any = None, elapsed_ms: Any = None, via: Any = None) -> dict[str, Any]:
    """:func:`score_labels` of the per-session modules' ``compute`` arguments as users give them
    (``datasets`` columns, thread rows), every one of them checked, whichever metrics the module
    returns: the one reading of :data:`SESSION_ARGUMENTS` that ``interleave_routing`` and
    ``interleave_bcubed`` share, so each refuses what the other does, in the same words."""
    return score_labels(
        references,
        predictions,
        mode=mode,
        thread_labels=thread_labels,
        threads=thread_ids(threads),
        session_ids=listed(session_ids, "session_ids"),
        langs=listed(langs, "langs"),
        predicted_refs=listed(predicted_refs, "predicted_refs"),
        row_fields=row_fields([len(turns) for turns in references], usage=usage, elapsed_ms=elapsed_ms, via=via),
    )


def score_labels(
    references: Sequence[Sequence[Mapping[str, Any]]],
    predictions: Sequence[Sequence[str | None]],
    *,
    mode: str = "closed",
    bootstrap: int = 0,
    seed: int = 0,
    thread_labels: bool = False,
    **inputs: Any,
) -> dict[str, Any]:
    """The score document for per-session gold turns and labels; ``inputs`` are
    :func:`build_inputs`'s (``threads``, ``session_ids``, ``langs``, ``predicted_refs``,
    ``row_fields``).

    Every session is scored (there is no split here); a session whose labels are all ``None`` has
    no rows and is left out, as the CLI leaves out a session without predictions. With
    ``thread_labels`` (the routing module's, whose accuracy reads closed-mode labels as thread ids;
    B-cubed reads no label as a thread), closed-mode labels of which not one names a thread of its
    session are refused (:func:`_require_thread_labels`).
    """
    check_mode(mode)
    sessions, rows = build_inputs(references, predictions, mode=mode, **inputs)
    if thread_labels and mode == "closed":
        _require_thread_labels(sessions, rows)
    try:
        run = score_predictions(sessions, rows, system="evaluate", mode=mode, split="all", bootstrap=bootstrap,
                                seed=seed, source="<predictions>")
    except (InputError, InputErrors) as exc:  # what the checks above let through is still one ValueError line
        first = exc.errors[0] if isinstance(exc, InputErrors) else exc
        raise ValueError(first.format()) from None
    return run.result
