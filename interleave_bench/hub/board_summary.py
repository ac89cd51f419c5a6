"""The board's scoring of a facts or mid-reply run: re-scored from the result rows its summary names.

A facts run's answers and delivered lines are judged again against its data; a mid-reply run's destinations against
the cases of the case file it names (a row's own copy of its case is never believed), each derived
again from the row's own answer by the shipped rule (a destination is never taken as written). Every figure
the summary states must equal the recomputation (:func:`score_summary`). See
docs/leaderboard.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from ..errors import InputError
from ..fingerprints import sha256_file
from ..schema import MidReplyCaseFile
from .board_rows import KIND_MID_REPLY, SUMMARY_KINDS
from .board_score import (
    Scored,
    _data_of,
    check_fingerprint,
    read_rows,
    referenced_file,
    refuse_disagreement,
    rows_fingerprint,
    unreadable,
)


def _facts_metrics(results: Path, sessions: dict[str, Any], data: str) -> tuple[dict[str, Any], Optional[str]]:
    """A facts run's figures with every answer and delivered line judged again against its data, and the
    split answered."""
    from ..facts.results import read_rows as read_result_rows
    from ..facts.results import rejudge, score_rows, split_of

    rows = rejudge(read_result_rows(results, require_rows=True), sessions, str(results), data)
    return score_rows(rows, str(results)), split_of(rows, sessions)


#: what a mid-reply result row repeats of its case: the board scores from the case, and refuses a
#: row that says otherwise
CASE_FIELDS = ("lang", "how", "tags", "running", "expect")


def _mid_reply_metrics(results: Path, case_file: MidReplyCaseFile) -> dict[str, Any]:
    """A mid-reply run's metrics: each row's destination judged against its case of ``case_file``
    (by id), as ``mid-reply`` scores it. Refused naming the file, line and field: a row for no case,
    one whose copy of its case's fields (:data:`CASE_FIELDS`) differs from the case, one whose call
    failed (``via: error``: no decision of the classifier, and none the board can check), and one
    whose decision does not follow from its own record by the shipped rule
    (:func:`~interleave_bench.midreply.results.decision_problem`)."""
    from ..io import read_records_with_lines
    from ..midreply.metrics import mid_reply_scores
    from ..midreply.results import MidReplyResult, check_decisions
    from ..midreply.rule import VIA_ERROR

    cases = {c.id: c for c in case_file.cases}
    rows, lines = [], []
    for line, r in read_records_with_lines(results, MidReplyResult):
        case = cases.get(r.case_id)
        if case is None:
            raise InputError(str(results), line, "case_id", f"{r.case_id!r} is no case of the case file")
        of_case = {"lang": case.lang, "how": case.how, "tags": list(case.tags), "running": case.running.topicId,
                   "expect": case.expect}
        for field in CASE_FIELDS:
            if getattr(r, field) != of_case[field]:
                raise InputError(str(results), line, field, f"{getattr(r, field)!r}, but case {r.case_id} says "
                                                            f"{of_case[field]!r}: a row is judged against its case")
        if r.via == VIA_ERROR:
            raise InputError(str(results), line, "via", f"{VIA_ERROR!r}: the classifier call of case {r.case_id} "
                                                        "failed, so the run has no decision of it: run mid-reply "
                                                        "again (it tries failed calls again) before adding it")
        rows.append((r, case))
        lines.append((line, r))
    check_decisions(str(results), lines, case_file)
    return mid_reply_scores([r.destination for r, _ in rows], [c.expect for _, c in rows],
                            running=[c.running.topicId for _, c in rows], lang=[c.lang for _, c in rows],
                            how=[c.how for _, c in rows], tags=[list(c.tags) for _, c in rows])


#: what a mid-reply summary names as its case file when it ran on the cases the package ships
PACKAGED = "packaged"


def _check_case_set(path: str, doc: dict[str, Any], results: Path) -> MidReplyCaseFile:
    """A mid-reply run's cases, checked against the case file it names: the file hashes to
    ``cases.sha256``, its cases' fingerprint is the stated data fingerprint, and every case has a
    result row (else it is a partial run). Returns the case file."""
    from ..fingerprints import records_fingerprint
    from ..midreply.cases import load_cases, packaged_cases_path
    from ..midreply.results import read_results

    cases = doc.get("cases") if isinstance(doc.get("cases"), dict) else {}
    named = cases.get("path")
    if named == PACKAGED:
        with packaged_cases_path() as p:
            file_sha, case_file = sha256_file(p), load_cases(p)
    else:
        found = referenced_file(named, path, "cases.path", "case file")
        file_sha, case_file = sha256_file(found), load_cases(found)
    if cases.get("sha256") is not None and cases["sha256"] != file_sha:
        raise InputError(path, None, "cases.sha256", f"says {cases['sha256']}, but the case file {named} hashes to {file_sha}")
    prov = doc.get("provenance") if isinstance(doc.get("provenance"), dict) else {}
    fp = records_fingerprint(case_file.cases)
    if prov.get("data_sha256") is not None and prov["data_sha256"] != fp:
        raise InputError(path, None, "provenance.data_sha256", f"says {prov['data_sha256']}, but the cases of {named} "
                                                                f"have the fingerprint {fp}")
    answered = {r.case_id for r in read_results(results)}
    left = [c.id for c in case_file.cases if c.id not in answered]
    if left:
        raise InputError(path, None, "cases", f"a partial run: {len(left)} of {len(case_file.cases)} cases of {named} "
                                              f"have no result row (first {left[0]}): the board ranks runs over the whole case set")
    return case_file


def _facts_data(path: str, doc: dict[str, Any], data: Optional[str]) -> tuple[str, dict[str, Any], str]:
    """The sessions a facts run answered, as ``(sessions file, id -> session, fingerprint)``: ``data``
    (the command line's, a ``hub:`` revision fetched), else the file the summary names
    (``data.path``). Refused when neither is here, or when the fingerprint the summary states is not
    the sessions'. The board judges every answer and delivered line again against them: a verdict
    is never taken as written."""
    from ..io import read_sessions, sessions_file
    from ..fingerprints import records_fingerprint

    stated = doc.get("data") if isinstance(doc.get("data"), dict) else {}
    if data is not None:
        local, _ = _data_of(data)
        file, field = sessions_file(local), None
    else:
        file, field = referenced_file(stated.get("path"), path, "data.path",
                                      "data (its answers are judged again against it; or give --data)"), "data.path"
    try:
        sessions = read_sessions(file)
    except InputError as exc:
        if field is None:
            raise
        raise InputError(path, None, field, f"its sessions cannot be read: {exc.format()}") from None
    fp = records_fingerprint(sessions)
    prov = doc.get("provenance") if isinstance(doc.get("provenance"), dict) else {}
    for name, value in (("data.sha256", stated.get("sha256")), ("provenance.data_sha256", prov.get("data_sha256"))):
        if value is not None and value != fp:
            raise InputError(path, None, name, f"says {value}, but the sessions of {file} have the fingerprint {fp}")
    return str(file), {s.session_id: s for s in sessions}, fp


def score_summary(path: str, doc: dict[str, Any], data: Optional[str] = None) -> Scored:
    """Re-score a facts or mid-reply summary from the result rows it names; refuse any figure it gets wrong.

    The results file must hash to the summary's ``results.sha256``; the summary's ``passed`` (facts)
    and every figure of its ``metrics`` must equal the recomputation. A facts run's answers are
    judged again against its data (:func:`_facts_data`; ``data`` from the command line, else the
    summary's own), and its split is the one its rows' sessions are of there.
    """
    kind = SUMMARY_KINDS[doc["kind"]]
    results_doc = doc.get("results") if isinstance(doc.get("results"), dict) else {}
    results = referenced_file(results_doc.get("path"), path, "results.path", "result rows")
    sha = sha256_file(results)
    for field in ("results.sha256", "provenance.predictions_sha256"):
        part, key = field.split(".")
        stated = (doc.get(part) or {}).get(key) if isinstance(doc.get(part), dict) else None
        check_fingerprint(stated, path, field)
        if stated is not None and stated != sha:
            raise InputError(path, None, field, f"says {stated}, but {results} hashes to {sha}: not the rows it was scored from")
    prov = doc.get("provenance") if isinstance(doc.get("provenance"), dict) else {}
    for field, value in (("provenance.data_sha256", prov.get("data_sha256")),
                         ("data.sha256", (doc.get("data") or {}).get("sha256") if isinstance(doc.get("data"), dict) else None),
                         ("cases.sha256", (doc.get("cases") or {}).get("sha256") if isinstance(doc.get("cases"), dict) else None)):
        check_fingerprint(value, path, field)
    source = f"re-scoring {results}"
    if kind == KIND_MID_REPLY:
        case_file = _check_case_set(path, doc, results)
    else:
        data_file, sessions, data_sha = _facts_data(path, doc, data)
        source = f"judging {results} again against {data_file}"
    try:
        if kind == KIND_MID_REPLY:
            metrics = _mid_reply_metrics(results, case_file)
        else:
            metrics, split = _facts_metrics(results, sessions, data_file)
    except (ValueError, RecursionError) as exc:  # what the readers let through is still one line
        raise unreadable(str(results), exc) from None
    stated_metrics = doc.get("metrics") if isinstance(doc.get("metrics"), dict) else {}
    if kind != KIND_MID_REPLY:
        refuse_disagreement(path, doc, {"passed": metrics["passed"]}, ("passed",), source)
        if doc.get("split") is not None:
            refuse_disagreement(path, doc, {"split": split}, ("split",), source)
    refuse_disagreement(path, {"metrics": stated_metrics}, {"metrics": metrics}, ("metrics",), source)
    computed = {**doc, "metrics": metrics, "results": {**results_doc, "sha256": sha},
                "provenance": {**prov, "predictions_sha256": sha}}
    if kind != KIND_MID_REPLY:
        computed.update(passed=metrics["passed"], split=split, data={"path": data_file, "sha256": data_sha})
        computed["provenance"]["data_sha256"] = data_sha
    typed = None
    if kind != KIND_MID_REPLY:
        from ..facts.results import parse_row

        typed = lambda r: parse_row(str(results), None, r)  # noqa: E731 - a facts row typed by its kind
    return Scored(path, {}, computed, rows_fingerprint(read_rows(results), typed))


