"""The board computes, never trusts: every row is scored here, from the run's own rows and its data.

A routing row comes from a predictions file and the data it was routed on (a local data folder or
a published revision, ``hub:ORG/NAME@REV#CONFIG``), scored with the project's scorer
(:func:`interleave_bench.score.run.score_files`). A facts row is re-scored from its result rows
(:func:`interleave_bench.facts.results.score_file`, the figures of :mod:`interleave_bench.facts.metrics`),
a mid-reply row from its result rows judged against its cases (:func:`interleave_bench.midreply.metrics.mid_reply_scores`;
both in :mod:`.board_summary`).
A score file or summary may come along: every figure it states is compared with the one computed
here, and the first that differs is refused, naming its field. What goes on the board is always
the computed figure. See docs/leaderboard.md.
"""

from __future__ import annotations

import math
import os
import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from ..errors import InputError, InputErrors, UsageError, clip, exc_text, require_file, shown
from ..io import read_json
from ..redaction import REDACTED
from .outgoing import published_secret
from ..text import is_unshown
from .board_rows import (
    SUMMARY_KINDS,
    row_from_score,
    row_from_summary,
)

#: what a fingerprint on the board must look like: a SHA-256, as every file and record hash is written
FINGERPRINT = re.compile(r"sha256:[0-9a-f]{64}")
#: a system name is a label in a table: longer than this is not a name
MAX_NAME_CHARS = 100
#: two figures agree when they differ by no more than float noise (both are rounded the same way)
AGREE = 1e-9
#: the most bootstrap resamples the board redraws to reproduce a stated file's intervals: ten times the
#: scorer's default already pins the interval's ends to their rounding; more only costs the board time
MAX_BOOTSTRAP = 10_000
#: a score file named like this is a document; anything else given to ``add`` is a predictions file
DOCUMENT_SUFFIX = ".json"


@dataclass
class Scored:
    """One run as the board computed it: the file that names it, its row and its computed document."""

    path: str
    row: dict[str, Any]
    doc: dict[str, Any]
    #: the run's rows as a set (:func:`rows_fingerprint`)
    rows_sha256: Optional[str] = None
    #: a routing run's decisions (:func:`~interleave_bench.score.routing.decisions_fingerprint`)
    decisions_sha256: Optional[str] = None


# --- names and fingerprints ------------------------------------------------------------------------


def normalise_name(raw: Any, path: str, field: str) -> str:
    """A system name as the board keeps it: NFKC, runs of white space as one space, trimmed.

    Raises :class:`InputError` (naming ``path`` and ``field``) for a name that is not text, is
    empty, holds a character no text is shown with (:func:`check_shown_text`: a line break forges a
    line of output), holds a secret (:func:`~.outgoing.published_secret`, push's rule for what it
    publishes: the board publishes its names, and a name redacted would be another name) or is
    longer than :data:`MAX_NAME_CHARS`.
    """
    if not isinstance(raw, str):
        raise InputError(path, None, field, f"expected a name (text), got {type(raw).__name__}")
    check_shown_text(raw, path, field)
    name = " ".join(unicodedata.normalize("NFKC", raw).split())
    if not name:
        raise InputError(path, None, field, "empty: the board needs a name for the run")
    if len(name) > MAX_NAME_CHARS:
        raise InputError(path, None, field, f"{len(name)} characters: a name on the board has at most {MAX_NAME_CHARS}")
    if published_secret(name) is not None:  # (push's rule: prose naming a secret's place is a name)
        raise InputError(path, None, field, f"{shown(name)} holds a secret (a key or token, {REDACTED} here): the board "
                                            "publishes its names; give a name without it")
    return name


def check_shown_text(raw: str, path: str, field: str) -> None:
    """Refuse text the board shows (a system name, a model, a policy, a data revision: in its tables,
    README and commit titles) that holds a character no text is shown with
    (:func:`~interleave_bench.text.is_unshown`), a tab aside: a line break
    would forge a line of output (a row of a table, a line of a commit message), a bidi control
    would make a name read as another. One :class:`InputError` naming ``path`` and ``field``."""
    bad = next((c for c in raw if is_unshown(c) and c != "\t"), None)
    if bad is not None:
        raise InputError(path, None, field, f"a name may not hold control characters (U+{ord(bad):04X}): "
                                            "a line break would forge a line of output, a bidi control reorder it")


#: letters that read as Latin ones (case-folded Cyrillic and Greek whose small or capital form looks
#: like a Latin letter), and every dash and the minus sign read as a hyphen: two names that differ
#: only in these look the same in a table, so the board takes them for one name (:func:`name_key`)
LOOK_ALIKES = str.maketrans(
    {**dict(zip("авекмнорстухіјѕԁӏԛԝ", "abekmhopctyxijsdlqw")), **dict(zip("αβεζηικμορτχϲ", "abezhikmoptxc")),
     "\u2212": "-", **{chr(c): "-" for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Pd"}})


def name_key(name: Optional[str]) -> str:
    """What makes two names the same on the board: equal when case-folded (after :func:`normalise_name`)
    with look-alike letters and dashes read alike (:data:`LOOK_ALIKES`: ``closed‐bm25`` with
    U+2010 and ``clоsed-bm25`` with a Cyrillic ``о`` are ``closed-bm25``).

    Case folding can undo the composition NFKC made (``ΐ`` folds to ``ι`` and two combining
    marks, its capital ``Ϊ́`` to ``ϊ`` and one), so the folded name is normalised again: Unicode's
    caseless match of identifiers.
    """
    folded = " ".join(unicodedata.normalize("NFKC", name or "").split()).casefold()
    return unicodedata.normalize("NFKC", folded).translate(LOOK_ALIKES)


def check_fingerprint(value: Any, path: str, field: str) -> None:
    """Refuse a stated fingerprint that is not ``sha256:`` and 64 hex digits."""
    if value is not None and not (isinstance(value, str) and FINGERPRINT.fullmatch(value)):
        raise InputError(path, None, field, f"{shown(str(value), 80)} is not a fingerprint (sha256: and 64 hex digits)")


# --- reading what was given -------------------------------------------------------------------------


def read_document(path: str) -> Any:
    """A JSON document, with one line for what Python's reader cannot hold (a 5,000-digit number)."""
    try:
        return read_json(path)
    except InputError:
        raise
    except (ValueError, RecursionError) as exc:
        raise unreadable(path, exc) from None


def unreadable(path: str, exc: Exception) -> InputError:
    """One line for a file Python's JSON reader gave up on (too deep, or a number too long to hold)."""
    if isinstance(exc, RecursionError):
        return InputError(path, None, None, "JSON nested too deeply to read")
    if "digits" in str(exc):  # Python refuses to read integers this long: no count or figure is
        return InputError(path, None, None, f"holds a number of more than {sys.get_int_max_str_digits()} digits: "
                                            "not a count or figure any run gives")
    return InputError(path, None, None, f"cannot be read: {exc_text(exc)}")


def is_document(path: str) -> bool:
    """Whether ``add`` takes ``path`` as a score file or summary (``*.json``) rather than predictions."""
    return path.endswith(DOCUMENT_SUFFIX)


def referenced_file(named: Any, doc_path: str, field: str, what: str) -> Path:
    """The file a document names (as given, else beside the document); refused when neither exists."""
    if not isinstance(named, str) or not named:
        raise InputError(doc_path, None, field, f"missing: the board recomputes the run from its {what}")
    for candidate in (Path(named), Path(doc_path).parent / named, Path(doc_path).parent / Path(named).name):
        if candidate.is_file():
            return candidate
    raise InputError(doc_path, None, field, f"{named}: no such file; the board recomputes the run from its {what} "
                                            "(give the file as it was scored)")


def read_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line, row)`` for every row of a JSONL results file, each line read as its reader reads it
    (:func:`~interleave_bench.io.parse_json`: one JSON value, strictly), after that reader has
    checked the file."""
    from ..io import iter_json_lines, parse_json

    return [(line, row) for line, text in iter_json_lines(path)
            if isinstance(row := parse_json(str(path), line, text), dict)]


def rows_fingerprint(rows: list[tuple[int, Any]], model: Optional[Callable[[Any], Any]] = None) -> str:
    """The run's rows (:func:`read_rows`, or a predictions file's records as its reader read them) as
    a set: SHA-256 (``sha256:<hex>``) over each row's canonical JSON, the lines sorted. With
    ``model`` (a predictions file's :class:`~interleave_bench.schema.PredictionRow`, which takes its
    own records as they are, or a function giving a row's record, as a facts result row is typed by
    its kind) a row is first taken as its reader takes it (a label written as
    a number is its text, a whole number of milliseconds is one) and only the fields the reader
    knows are kept (an unknown field is ignored by the scorer, so it makes no other run); then it
    is written with its keys sorted and null fields left out. So the same rows reordered,
    reformatted, written with other JSON types for the same values, with fields added, or as
    Parquet give the same fingerprint."""
    import json

    from ..fingerprints import sorted_lines_fingerprint

    def canonical(r: Any) -> str:
        if model is None:
            read = r
        else:
            record = model.model_validate(r) if isinstance(model, type) else model(r)
            read = record.model_dump(mode="json", include=set(type(record).model_fields))
        return json.dumps({k: v for k, v in read.items() if v is not None}, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)

    return sorted_lines_fingerprint(sorted(canonical(r) for _, r in rows))


#: why the scorer leaves a row out that the board refuses: a row for a message the data does not
#: hold is not part of a run on that data (the scorer lists and skips it; the board ranks only
#: runs whose every row is a message of the data), with the field at fault
OUTSIDE_DATA = {"unknown session": "session_id", "unknown turn": "i"}


def check_rows_in_data(pred: Path, doc: dict[str, Any], data: str) -> None:
    """Refuse a run with rows for sessions or turns ``data`` does not hold: one line naming the
    first such row (file, line, field) and how many there are."""
    outside = [x for x in doc.get("not_scored") or [] if isinstance(x, dict) and x.get("reason") in OUTSIDE_DATA]
    if not outside:
        return
    first = outside[0]
    more = f" (and {len(outside) - 1} more row{'s' if len(outside) > 2 else ''} outside the data)" if len(outside) > 1 else ""
    field = OUTSIDE_DATA[first["reason"]]
    what = (f"{first['session_id']!r} is not a session of {data}" if field == "session_id"
            else f"{first.get('i')}: session {first['session_id']!r} of {data} has no such turn")
    raise InputError(str(pred), first.get("line"), field, f"{what}{more}: the board ranks a run whose every row is a "
                                                          "message of its data")


def check_recorded_mode(pred: Path, table_mode: Any, where: str) -> None:
    """Refuse a score file stating another mode than the run record beside ``pred`` says it was
    routed in (:func:`~interleave_bench.score.paths.recorded_mode`), in the board's words: the
    scorer would refuse to score it so (``--mode``), and the board ranks a run in its own mode."""
    from ..score.paths import recorded_mode

    recorded = recorded_mode(pred) if table_mode is not None else None
    if recorded is not None and recorded[0] != table_mode:
        raise InputError(where, None, "mode", f"{_short(table_mode)}, but {pred} was routed in {recorded[0]!r} mode "
                                              f"({recorded[1].name}: options.mode): the board ranks a run in the "
                                              "table of its own mode")


def check_rows_mode(pred: Path, records: list[tuple[int, Any]], table_mode: str, where: str,
                    sessions: dict[str, Any]) -> None:
    """Refuse a run ranked in a mode its rows were not routed in: the rows (``(line, PredictionRow)``)
    must name a mode, and it must be the mode of the table the run goes to (a score file may rescore
    closed rows in open mode, but a router that saw the true history is not an open-mode system).
    Rows that say open mode are also read against ``sessions`` (the scored ones, by id): a label
    read off a session's thread cards (:func:`~interleave_bench.score.labels.card_label`) shows
    rows routed in closed mode, whatever their ``mode`` says."""
    named = next(((line, r.mode) for line, r in records if r.mode is not None), None)
    if named is None:
        raise InputError(str(pred), None, "mode", "no row names its mode: the board ranks a run in the table of the "
                                                  "mode it was routed in (closed or open), as its rows say")
    line, mode = named
    if mode != table_mode:
        raise InputError(where, None, "mode", f"{table_mode!r}, but the rows of {pred} were routed in {mode!r} mode "
                                              f"(line {line}): the board ranks a run in the table of its own mode")
    if table_mode == "open":
        _refuse_card_labels(pred, records, sessions)


def _refuse_card_labels(pred: Path, records: list[tuple[int, Any]], sessions: dict[str, Any]) -> None:
    """One line for an open-mode run whose labels were read off its sessions' thread cards: the
    first such row (file, line, field) and how many sessions hold one."""
    from collections import defaultdict

    from ..score.labels import card_label

    turns: dict[str, dict[int, tuple[int, str]]] = defaultdict(dict)
    for line, r in records:
        if r.session_id in sessions:
            turns[r.session_id][r.i] = (line, r.pred)
    found = []
    for sid, by_turn in turns.items():
        hit = card_label(((i, by_turn[i][1]) for i in sorted(by_turn)), {t.id for t in sessions[sid].threads})
        if hit is not None:
            found.append((by_turn[hit[0]][0], sid, *hit))
    if not found:
        return
    line, sid, _, label, expected = min(found)
    more = f" (and {len(found) - 1} more session{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
    raise InputError(str(pred), line, "pred",
                     f"{label!r} is a thread id of session {sid!r}, but opens a topic that the session's numbering "
                     f"of its topics, in turn, names {expected!r}{more}: an open-mode router is shown no thread "
                     "cards and names the topics it opens itself, in turn, so these rows were routed with the cards, "
                     "in closed mode: the board ranks a run in the table of the mode it was routed in")


# --- agreement --------------------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= AGREE
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def differences(stated: Any, computed: Any, prefix: str = "") -> Iterator[tuple[str, Any, Any]]:
    """``(field, stated, computed)`` for every leaf where the two documents differ, in the stated order
    (keys only the computed one has are differences too; a stated key the computer lacks is one). Two
    lists of as many objects (calibration's bins) are compared object by object (``reliability[9].n``)."""
    if isinstance(stated, dict) and isinstance(computed, dict):
        for k in [*stated, *(k for k in computed if k not in stated)]:
            yield from differences(stated.get(k), computed.get(k), f"{prefix}.{k}" if prefix else str(k))
        return
    if (isinstance(stated, list) and isinstance(computed, list) and len(stated) == len(computed)
            and all(isinstance(x, dict) for x in (*stated, *computed))):
        for k, (a, b) in enumerate(zip(stated, computed)):
            yield from differences(a, b, f"{prefix}[{k}]")
        return
    if not _same(stated, computed):
        yield prefix, stated, computed


def _short(v: Any) -> str:
    """A stated or computed value for a message: a string :func:`~interleave_bench.errors.shown`,
    any other value as JSON :func:`~interleave_bench.errors.clip`-ped (redacted, then cut short)."""
    import json

    return shown(v) if isinstance(v, str) else clip(json.dumps(v, default=str))


def refuse_disagreement(path: str, stated: dict[str, Any], computed: dict[str, Any], parts: tuple[str, ...],
                        source: str) -> None:
    """Raise one :class:`InputError` naming the first field of ``parts`` the two documents disagree on."""
    found = [d for part in parts for d in differences(stated.get(part), computed.get(part), part)]
    if found:
        field, said, got = found[0]
        more = f" (and {len(found) - 1} more field{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
        raise InputError(path, None, field, f"the file says {_short(said)}, but {source} gives {_short(got)}{more}: "
                                            "the board publishes what it computes, and refuses a file that disagrees")


# --- routing runs ------------------------------------------------------------------------------------

#: the parts of a routing score document the recomputation must reproduce
ROUTING_PARTS = ("mode", "split", "policy", "model", "metrics", "intervals", "counts", "outcomes", "burst", "breakdowns",
                 "cluster", "calibration", "in_sample")
#: parts of :data:`ROUTING_PARTS` whose form (its figures adding up) the board does not check
#: before the recomputation: whatever a stated one holds, the recomputation names its first field
#: that differs (the bins of a forged calibration add up or not)
RECOMPUTED_WHOLE = ("calibration",)
#: parts and fields (dotted) a score file written before they existed leaves out: reproduced when
#: the file states them (:func:`without_later` leaves them out of the comparison otherwise)
LATER_PARTS = ("calibration", "counts.error_rows", "in_sample")


def without_later(stated: dict[str, Any], computed: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``stated`` and ``computed`` without the :data:`LATER_PARTS` that ``stated`` leaves out (the
    containing objects copied, the documents left as they are)."""
    stated, computed = dict(stated), dict(computed)
    for path in LATER_PARTS:
        *parents, name = path.split(".")
        a, b = stated, computed
        for key in parents:
            if not isinstance(a.get(key), dict) or not isinstance(b.get(key), dict):
                break
            a[key], b[key] = dict(a[key]), dict(b[key])
            a, b = a[key], b[key]
        else:
            if name not in a:
                b.pop(name, None)
    return stated, computed


def _data_of(data: str) -> tuple[str, Optional[dict[str, Any]]]:
    """A data argument as a local path, with where it came from (a ``hub:`` revision is fetched)."""
    from .source import local_data

    return local_data(data)


def _stated_data(doc: dict[str, Any], doc_path: str) -> str:
    """The data a score file says it was scored on: its Hub revision, else its data file."""
    prov = doc.get("provenance") if isinstance(doc.get("provenance"), dict) else {}
    if prov.get("data_repo") and prov.get("data_revision"):
        config = f"#{prov['data_config']}" if prov.get("data_config") else ""
        return f"hub:{prov['data_repo']}@{prov['data_revision']}{config}"
    return str(referenced_file(prov.get("data_file"), doc_path, "provenance.data_file", "data (or give --data)"))


def score_routing(pred: Path, data: str, *, stated: Optional[dict[str, Any]] = None, stated_path: Optional[str] = None,
                  split: Optional[str] = None, bootstrap: Optional[int] = None, seed: Optional[int] = None,
                  data_field: Optional[str] = None) -> Scored:
    """Score one predictions file on ``data`` with the project's scorer; compare a stated score file.

    The split, mode, bootstrap and seed are the stated file's (else ``split``/``bootstrap``/``seed``,
    else the scorer's defaults), so its intervals can be reproduced. ``data_field`` is the stated
    file's field that named ``data`` (None when the command line gave it): data that cannot be read
    is refused naming that file and field. Raises :class:`InputError` naming the first field the
    stated file gets wrong.
    """
    from ..io import read_sessions, sessions_file
    from ..llm.prices import prices_from
    from ..schema import PredictionRow
    from ..score.defaults import DEFAULT_BOOTSTRAP, DEFAULT_SEED, DEFAULT_SPLIT, bootstrap_problem
    from ..score.routing import decisions_fingerprint
    from ..score.read import other_kind, read_predictions_fast
    from ..route.local_sample import fit_sample
    from ..score.run import score_files

    where = stated_path or str(pred)
    prov = (stated or {}).get("provenance") if isinstance((stated or {}).get("provenance"), dict) else {}
    n_boot = prov.get("bootstrap", bootstrap if bootstrap is not None else DEFAULT_BOOTSTRAP)
    n_seed = prov.get("seed", seed if seed is not None else DEFAULT_SEED)
    for field, v in (("provenance.bootstrap", n_boot), ("provenance.seed", n_seed)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0 or v.bit_length() > 63:
            raise InputError(where, None, field, f"{_short(v)} is not a count the scorer takes")
    if n_boot == 0:
        raise InputError(where, None, "provenance.bootstrap", "0: the run has no intervals, and the board shows every "
                                                              "headline number with its interval (score with --bootstrap N)")
    if n_boot > MAX_BOOTSTRAP:
        raise InputError(where, None, "provenance.bootstrap", f"{n_boot}: the board redraws at most {MAX_BOOTSTRAP:,} "
                                                              "resamples to check the intervals")
    if bootstrap_problem(n_boot) is not None:
        raise InputError(where, None, "provenance.bootstrap", f"{n_boot}: {bootstrap_problem(n_boot)}")
    run_split = (stated or {}).get("split") or split or DEFAULT_SPLIT
    try:
        local, source = _data_of(data)
    except UsageError as exc:
        if data_field is None:
            raise
        raise InputError(where, None, data_field, str(exc)) from None
    other_kind(pred, "predictions", data_goes="it is the data, given with --data")
    check_recorded_mode(pred, (stated or {}).get("mode"), where)
    try:
        run = score_files(local, [pred], mode=(stated or {}).get("mode"), split=run_split, bootstrap=n_boot, seed=n_seed,
                          write=False, data_source=source, price=prices_from(os.environ),
                          in_sample=fit_sample(sessions_file(local), run_split))[0]
    except UsageError as exc:
        raise InputError(where, None, None, str(exc)) from None
    except (ValueError, RecursionError) as exc:  # what the readers let through is still one line, not a traceback
        raise unreadable(str(pred), exc) from None
    doc = run.result
    check_rows_in_data(pred, doc, data)
    rows, lines = read_predictions_fast(pred)  # as compare reads it: JSONL or Parquet, as the scorer took it
    records = list(zip(lines, rows))
    scored = {s["session_id"] for s in doc["per_session"]}
    sessions = {s.session_id: s for s in read_sessions(sessions_file(local), where=lambda s: s.session_id in scored)}
    check_rows_mode(pred, records, doc["mode"], where, sessions)
    if not doc["counts"]["sessions"]:
        raise InputError(where, None, "counts.sessions", f"0: {pred} holds no predictions for a session of split "
                                                         f"{run_split!r} of {data}: nothing to rank")
    if stated is not None:
        for field in ("data_sha256", "predictions_sha256"):
            check_fingerprint(prov.get(field), where, f"provenance.{field}")
        what = f"the board's scoring of {pred} on {data}"
        refuse_disagreement(where, {"provenance": {k: prov.get(k) for k in ("data_sha256", "predictions_sha256")}},
                            {"provenance": {k: doc["provenance"][k] for k in ("data_sha256", "predictions_sha256")}},
                            ("provenance",), what)
        said, got = without_later(stated, doc)
        refuse_disagreement(where, said, got, ROUTING_PARTS, what)
        if _same(prov.get("price"), doc["provenance"].get("price")):
            refuse_disagreement(where, stated, doc, ("cost_usd_per_message",), what)
    decisions = decisions_fingerprint((r for _, r in records), doc["mode"], sessions)
    return Scored(where, {}, doc, rows_fingerprint(records, PredictionRow), decisions)


# --- one entry point ----------------------------------------------------------------------------------


def score_given(
    paths: list[str],
    *,
    data: Optional[str] = None,
    system: Optional[str] = None,
    model: Optional[str] = None,
    data_repo: Optional[str] = None,
    data_revision: Optional[str] = None,
    split: Optional[str] = None,
) -> list[Scored]:
    """One :class:`Scored` per file given, every row computed here; every file's problems collected.

    A ``*.json`` file is a score file or summary (its run recomputed from the files it names, or
    from ``data``); any other is a predictions file, scored on ``data``. ``system`` names the run
    (default: the document's name, else the predictions file's); names are normalised
    (:func:`normalise_name`). A run scored from ``hub:`` data claims that revision unless
    ``data_revision`` says otherwise.
    """
    out: list[Scored] = []
    errs: list[InputError] = []
    for p in paths:
        try:
            out.append(_score_one(p, data=data, system=system, model=model, data_repo=data_repo,
                                  data_revision=data_revision, split=split))
        except InputErrors as exc:
            errs += exc.errors
        except InputError as exc:
            errs.append(exc)
    if errs:
        raise InputErrors(errs)
    return out


def _score_one(p: str, *, data: Optional[str], system: Optional[str], model: Optional[str],
               data_repo: Optional[str], data_revision: Optional[str], split: Optional[str]) -> Scored:
    """One file given to ``add``, scored: a predictions file on ``data``, a score file from what it
    names, a summary from its result rows."""
    from ..score.run import system_name

    if system is not None:
        system = normalise_name(system, p, "--system")
    for option, value in (("--model", model), ("--data-revision", data_revision), ("--data-repo", data_repo)):
        if value is not None:
            check_shown_text(value, p, option)
    if not is_document(p):
        if data is None:
            raise UsageError(f"{p}: a predictions file is scored on its data: give --data DIR or --data hub:ORG/NAME@REV")
        require_file(p)
        scored = score_routing(Path(p), data, split=split)
        name = system or normalise_name(system_name(Path(p)), p, "system")
        return _routing_row(scored, name, model, data_repo, data_revision)
    doc = read_document(p)
    if not isinstance(doc, dict):
        raise InputError(p, None, None, "expected a score file or summary (a JSON object)")
    if doc.get("kind") in SUMMARY_KINDS:
        from .board_summary import score_summary

        scored = score_summary(p, doc, data)
        stated = doc.get("system")
        name = system or (normalise_name(stated, p, "system") if stated is not None else None)
        prov = doc.get("provenance") if isinstance(doc.get("provenance"), dict) else {}
        rev_claim = data_revision or prov.get("data_revision")
        scored.row = row_from_summary(p, scored.doc, system=name, model=model, data_repo=data_repo, data_revision=rev_claim)
        scored.row["system"] = normalise_name(scored.row["system"], p, "system")
        scored.row["rows_sha256"] = scored.rows_sha256
        return scored
    from ..documents import read_score_document

    # the stated document's form, first field at fault; a part the recomputation checks field by field
    # is left to it, so a forged one is refused as differing from what the board computes
    read_score_document(p, {k: v for k, v in doc.items() if k not in RECOMPUTED_WHOLE}, traced=True)
    name = system or normalise_name(doc.get("system"), p, "system")
    pred = referenced_file(doc["provenance"].get("predictions_file"), p, "provenance.predictions_file",
                           "predictions")
    scored = score_routing(pred, data or _stated_data(doc, p), stated=doc, stated_path=p, split=split,
                           data_field=None if data else "provenance.data_revision")
    return _routing_row(scored, name, model, data_repo, data_revision)


def _routing_row(scored: Scored, name: str, model: Optional[str], data_repo: Optional[str],
                 data_revision: Optional[str]) -> Scored:
    prov = scored.doc["provenance"]
    rev = data_revision or prov.get("data_revision")
    repo = data_repo or (prov.get("data_repo") if data_revision is None else None)
    scored.row = row_from_score(scored.path, scored.doc, system=name, model=model, data_repo=repo, data_revision=rev)
    scored.row["rows_sha256"] = scored.rows_sha256
    scored.row["decisions_sha256"] = scored.decisions_sha256
    if prov.get("data_config") and rev == prov.get("data_revision"):
        scored.row["data_config"] = prov["data_config"]
        scored.row["data_commit"] = prov.get("data_commit")
    return scored
