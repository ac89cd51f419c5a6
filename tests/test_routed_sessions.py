"""A run is scored on the sessions it routed: ``route`` records a digest of what the router saw of
each session (route/digest.py), and ``score``, ``compare`` and ``routing_inputs`` refuse other
sessions under the same ids, while a fix of gold labels alone still scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interleave_bench.route.digest import DIGESTS_FIELD, conversation_digest, conversation_digests
from interleave_bench.schema import Session

from _cli_util import cli
from _route_util import standard_sessions, twin


def errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error: ")]


def warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning: ")]


@pytest.fixture
def generated(tmp_path, capsys):
    """Two generated sets (same ids, other text) and a closed bm25 run on the first, scored."""
    mine, other = tmp_path / "mine", tmp_path / "other"
    for seed, out in ((7, mine), (8, other)):
        assert cli("generate", "--sessions", 6, "--offline", "--seed", seed, "--out", out) == 0
    assert cli("route", mine, "--mode", "closed", "--policy", "bm25", "--split", "all") == 0
    run = mine / "predictions" / "closed-bm25.jsonl"
    assert cli("score", mine, run, "--split", "all", "--bootstrap", 0) == 0
    capsys.readouterr()
    ids = [json.loads(line)["session_id"] for line in (mine / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert ids == [json.loads(line)["session_id"]
                   for line in (other / "sessions.jsonl").read_text(encoding="utf-8").splitlines()]
    return mine, other, run


def test_scoring_a_run_on_other_data_with_the_same_ids_is_refused_and_writes_nothing(generated, capsys):
    """The new-user repro: accuracy 0.29 for 0.69, exit 0, and the run's score file written over."""
    mine, other, run = generated
    own = run.with_name("closed-bm25.all.score.json")
    before = own.read_bytes()
    files = sorted(p.name for p in run.parent.iterdir())
    for extra in ((), ("--json",), ("--out", run.parent / "elsewhere.json")):
        assert cli("score", other, run, "--split", "all", "--bootstrap", 0, *extra) == 2
        out, err = capsys.readouterr()
        assert out == "" and "Traceback" not in err
        (line,) = errors(err)
        assert line.startswith(f"error: {run.with_suffix('.run.json')}: {DIGESTS_FIELD}: {run} was routed on other "
                               f"sessions than {other / 'sessions.jsonl'}: 6 of the 6 sessions it routed that the data "
                               "holds differ from what it was shown, the first 'en-0001'")
        assert line.endswith(f"score it on the data it was routed on ({mine / 'sessions.jsonl'}), or route it again "
                             "on this data")
    assert own.read_bytes() == before
    assert sorted(p.name for p in run.parent.iterdir()) == files
    # one session of the six replaced: named, and counted
    lines = (mine / "sessions.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    third = (other / "sessions.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)[2]
    mixed = other.parent / "mixed"
    mixed.mkdir()
    (mixed / "sessions.jsonl").write_text("".join(lines[:2] + [third] + lines[3:]), encoding="utf-8")
    assert cli("score", mixed, run, "--split", "all", "--bootstrap", 0) == 2
    (line,) = errors(capsys.readouterr().err)
    sid = json.loads(third)["session_id"]
    assert f": 1 of the 6 sessions it routed that the data holds differ from what it was shown, the first {sid!r}" in line
    assert own.read_bytes() == before



@pytest.mark.parametrize("digests", [{}, {"nope": "zz"}])
def test_a_record_listing_none_of_the_sessions_its_rows_name_is_refused(generated, capsys, digests):
    """Digests emptied or replaced in the record: the sessions the rows name have none, which is
    no match (score and routing_inputs alike), where a record without the field is refused too."""
    import interleave_bench

    mine, other, run = generated
    record = run.with_suffix(".run.json")
    doc = json.loads(record.read_text(encoding="utf-8"))
    doc[DIGESTS_FIELD] = digests
    record.write_text(json.dumps(doc), encoding="utf-8")
    assert cli("score", other, run, "--split", "all", "--bootstrap", 0) == 2
    (line,) = errors(capsys.readouterr().err)
    assert f"{DIGESTS_FIELD}: {run} was routed on other sessions than {other / 'sessions.jsonl'}: 6 of the 6 " in line
    with pytest.raises(ValueError, match="was routed on other sessions than the sessions given: 6 of the 6"):
        interleave_bench.routing_inputs(str(run), [json.loads(x) for x in
                                                   (other / "sessions.jsonl").read_text(encoding="utf-8").splitlines()])

def test_compare_refuses_a_run_routed_on_other_sessions(generated, capsys):
    mine, other, run = generated
    assert cli("compare", other, run, run, "--split", "all", "--bootstrap", 0) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(errors(err)) == 1 and f"{DIGESTS_FIELD}: {run} was routed on other sessions" in err
    assert cli("compare", mine, run, twin(run), "--split", "all", "--bootstrap", 0) == 0


def _gold_fixed(line: str) -> str:
    """A session with its gold annotations changed (style, tags, ambiguity, the judge's reading),
    what the router saw left as it was."""
    s = json.loads(line)
    for t in s["turns"]:
        t["ambiguous"] = not t.get("ambiguous", False)
        t["tags"] = [*t.get("tags", []), "relabelled"]
        t["judge"] = {"thread": s["threads"][-1]["id"]}
    return json.dumps(s, ensure_ascii=False) + "\n"


def test_a_fix_of_gold_annotations_alone_still_scores(generated, tmp_path, capsys):
    mine, _, run = generated
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    text = (mine / "sessions.jsonl").read_text(encoding="utf-8")
    (fixed / "sessions.jsonl").write_text("".join(map(_gold_fixed, text.splitlines())), encoding="utf-8")
    assert (fixed / "sessions.jsonl").read_bytes() != (mine / "sessions.jsonl").read_bytes()
    assert cli("score", fixed, run, "--split", "all", "--bootstrap", 0, "--json") == 0
    err = capsys.readouterr().err
    assert errors(err) == [] and warnings(err) == []


def _strip_digests(run: Path) -> None:
    record = run.with_suffix(".run.json")
    doc = json.loads(record.read_text(encoding="utf-8"))
    doc.pop(DIGESTS_FIELD)
    record.write_text(json.dumps(doc), encoding="utf-8")


def test_an_older_record_without_digests_is_refused_where_it_would_write_the_score_file(generated, capsys):
    mine, other, run = generated
    _strip_digests(run)
    own = run.with_name("closed-bm25.all.score.json")
    before = own.read_bytes()
    assert cli("score", other, run, "--split", "all", "--bootstrap", 0) == 2
    out, err = capsys.readouterr()
    (line,) = errors(err)
    assert line.startswith(f"error: {run.with_suffix('.run.json')}: data_sha256: {run} was routed on other data than "
                           f"{other / 'sessions.jsonl'}")
    assert "route it again on this data" in line and out == ""
    assert own.read_bytes() == before
    # written nowhere of the run's: scored, with the warning
    assert cli("score", other, run, "--split", "all", "--bootstrap", 0, "--json") == 0
    (line,) = warnings(capsys.readouterr().err)
    assert line.startswith(f"warning: {run} was routed on other data than {other / 'sessions.jsonl'} (closed-bm25.run.json")
    assert cli("compare", other, run, twin(run), "--split", "all", "--bootstrap", 0) == 0
    assert len(warnings(capsys.readouterr().err)) == 2
    # the same sessions in another layout (rewritten with another formatting): scored, no warning
    again = mine.parent / "again"
    again.mkdir()
    (again / "sessions.jsonl").write_text(
        "".join(json.dumps(json.loads(x), indent=None, separators=(", ", ": ")) + "\n"
                for x in (mine / "sessions.jsonl").read_text(encoding="utf-8").splitlines()), encoding="utf-8")
    assert cli("score", again, run, "--split", "all", "--bootstrap", 0, "--out", again / "s.json") == 0
    assert warnings(capsys.readouterr().err) == []
    assert own.read_bytes() == before


def _load_export(data: Path, tmp_path: Path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / f"hub-{data.name}"
    assert cli("export", "--v0", data, "--out", folder) == 0
    monkeypatch.chdir(folder.parent)
    return datasets.load_dataset(folder.name, "v0", cache_dir=str(tmp_path / "cache"))


def test_routing_inputs_refuses_rows_of_an_export_of_other_data(generated, tmp_path, monkeypatch, capsys):
    import interleave_bench

    mine, other, run = generated
    theirs, ours = _load_export(other, tmp_path, monkeypatch), _load_export(mine, tmp_path, monkeypatch)
    for given in (theirs["dev"], list(theirs["dev"])):
        with pytest.raises(ValueError) as refused:
            interleave_bench.routing_inputs(str(run), given)
        message = str(refused.value)
        assert "\n" not in message
        assert message.startswith(f"{run.with_suffix('.run.json')}: {DIGESTS_FIELD}: {run} was routed on other "
                                  "sessions than the sessions given: ")
    # its own data, exported and loaded back: lined up
    got = interleave_bench.routing_inputs(str(run), ours["dev"])
    assert got["session_ids"] and len(got["predictions"]) == len(ours["dev"])
    # rows handed in directly carry no record: not checkable, lined up as given
    rows = [json.loads(x) for x in run.read_text(encoding="utf-8").splitlines()]
    assert interleave_bench.routing_inputs(rows, theirs["dev"])["session_ids"]


# --- the digest ---------------------------------------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_text, min_size=1, max_size=5), replies=st.lists(st.one_of(st.none(), st.just(""), _text),
                                                                      min_size=5, max_size=5),
       speakers=st.lists(st.one_of(st.none(), st.just(""), _text), min_size=5, max_size=5))
def test_the_digest_of_a_session_survives_the_dataset_export(texts, replies, speakers):
    """What a router saw gives the same digest read back from the exported row (features.session_row
    and row_to_session, through an Arrow table of the config's features), and another one when a
    message, reply or speaker changes."""
    pa = pytest.importorskip("pyarrow")
    from interleave_bench.hub.features import features_for, row_to_session, session_row

    base = standard_sessions()[0]
    turns = []
    for k, text in enumerate(texts):
        t = dict(base["turns"][k])
        t["text"] = text
        if replies[k] is not None:
            t["assistant"] = replies[k]
        if speakers[k] is not None:
            t["speaker"] = speakers[k]
        turns.append(t)
    session = Session.model_validate({**base, "turns": turns})
    row = session_row(session, "v0")
    table = pa.Table.from_pylist([row], schema=features_for("v0").arrow_schema)
    back = Session.model_validate(row_to_session(table.to_pylist()[0], "v0"))
    assert conversation_digest(back) == conversation_digest(session)
    assert conversation_digests([back]) == {session.session_id: conversation_digest(session)}
    changed = Session.model_validate({**base, "turns": [{**turns[0], "text": turns[0]["text"] + "!"}, *turns[1:]]})
    assert conversation_digest(changed) != conversation_digest(session)


def test_the_digest_leaves_gold_out_and_keeps_what_a_router_sees():
    base = standard_sessions()[0]
    digest = conversation_digest(Session.model_validate(base))
    turns = [dict(t) for t in base["turns"]]
    turns[1] = {**turns[1], "style": "cue", "tags": ["x"]}
    assert conversation_digest(Session.model_validate({**base, "turns": turns})) == digest
    cards = [dict(t) for t in base["threads"]]
    cards[0] = {**cards[0], "title": cards[0]["title"] + " (2)"}
    assert conversation_digest(Session.model_validate({**base, "threads": cards})) != digest
    assert conversation_digest(Session.model_validate({**base, "session_id": "other"})) != digest


@pytest.mark.parametrize("command, options", [("route", ("--mode", "closed", "--policy", "bm25", "--split", "all", "--fresh")),
                                              ("baselines", ("--split", "all"))])
def test_a_data_file_replaced_while_it_is_read_is_refused(generated, capsys, monkeypatch, command, options):
    """The hostile repro: another ``generate`` replaced the file between the read and the hash, and
    the record paired the new file's hash with the old sessions' rows and digests, which ``score``
    then took (exit 0, 0.30 for the new data). The replacement comes from inside the read here
    (no timing): the run is refused in one line and writes nothing."""
    from interleave_bench.io import read_sessions
    from interleave_bench.route import selection
    from interleave_bench.score import read as score_read

    mine, other, _ = generated
    target = mine / "sessions.jsonl"
    replacement = (other / "sessions.jsonl").read_bytes()
    fast = score_read.read_sessions_fast

    def replaced_after(read):
        def reading(*args, **kwargs):
            got = read(*args, **kwargs)
            target.write_bytes(replacement)  # another writer, just after the parse
            return got
        return reading

    monkeypatch.setattr(selection, "read_sessions", replaced_after(read_sessions))
    monkeypatch.setattr("interleave_bench.commands.baselines.read_sessions_fast", replaced_after(fast))
    out_dir = mine / "predictions"
    before = sorted(p.name for p in out_dir.iterdir())
    assert cli(command, mine, *options) == 2
    out, err = capsys.readouterr()
    assert errors(err) == [f"error: {target} changed while it was being read: run again once whatever writes it is "
                           "done"] and "Traceback" not in err
    assert sorted(p.name for p in out_dir.iterdir()) == before


def test_a_record_hashes_the_bytes_its_sessions_were_read_from(generated):
    """Unchanged data: the record's ``data_sha256`` is the file's, read once and hashed around it."""
    from interleave_bench.fingerprints import sha256_file

    mine, _, run = generated
    record = json.loads(run.with_suffix(".run.json").read_text(encoding="utf-8"))
    assert record["data_sha256"] == sha256_file(mine / "sessions.jsonl")
    assert record[DIGESTS_FIELD] == conversation_digests(Session.model_validate(json.loads(line)) for line in
                                                         (mine / "sessions.jsonl").read_text(encoding="utf-8").splitlines())
