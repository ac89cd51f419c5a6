"""Export to Parquet + card, loading with `datasets`, the record <-> row round trip, the builder."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import datasets
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import _hub_util as u
import interleave_bench
from interleave_bench.errors import InputError
from interleave_bench.hub.features import (
    SPECS,
    features_for,
    from_row,
    row_to_session,
    rows_to_case_file,
    session_row,
)
from interleave_bench.io import read_sessions
from interleave_bench.fingerprints import records_fingerprint, sha256_file
from interleave_bench.schema import FACT_TYPES, PROBE_CATEGORIES, STEP_STATUS, MidReplyCaseFile, Session

PACKAGED_CASES = Path(interleave_bench.__file__).parent / "data" / "mid_reply" / "cases.json"


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    """Export and local loading must not need the network: any lookup but loopback fails."""
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    u._loopback_only(monkeypatch)


def _with_extras(rows: list[dict]) -> list[dict]:
    """Unknown fields at every level, and a v1-only field in a v0 session: all must survive."""
    rows = u.clone(rows)
    rows[0]["writer_note"] = {"by": "hand", "n": [1, 2.5, None]}
    rows[0]["threads"][0]["color"] = "blue"
    rows[0]["threads"][0]["facts"][0]["source"] = "turn 3"
    rows[0]["turns"][0]["mood"] = "calm"
    rows[0]["turns"][0]["gold"]["confidence"] = 0.9876543210987654
    rows[0]["turns"][3]["judge"]["why"] = "two CI threads"
    rows[0]["turns"][1]["fact"]["extra"] = "a field literally named extra"
    rows[1]["turns"][0]["reply"] = "a v0 file with a reply is kept as it is"
    return rows


@pytest.fixture
def v0_dir(tmp_path):
    return u.write_data(tmp_path / "src" / "interleave-v0", _with_extras(u.sessions(12)), u.manifest(n=12))


def _export(args, capsys):
    return u.cli(["export", *args], capsys)


def _load_local(folder: Path, config: str, cache: Path):
    # load_dataset("interleavebench", ...) from the folder's parent, as a user would
    cwd = os.getcwd()
    os.chdir(folder.parent)
    try:
        return datasets.load_dataset(folder.name, config, cache_dir=str(cache))
    finally:
        os.chdir(cwd)


def _source(path: Path) -> dict[str, dict]:
    return {json.loads(line)["session_id"]: json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()}


# --- export and load ------------------------------------------------------------------------------------


def test_export_then_load_dataset_gives_typed_rows_equal_to_the_source(v0_dir, tmp_path, capsys):
    out = tmp_path / "interleavebench"
    code, stdout, err = _export(["--v0", str(v0_dir), "--out", str(out)], capsys)
    assert code == 0, err
    assert (out / "v0" / "dev-00000-of-00001.parquet").is_file()
    assert (out / "v0" / "test-00000-of-00001.parquet").is_file()
    assert "done: export:" in err and "12 v0 sessions" in err

    ds = _load_local(out, "v0", tmp_path / "cache")
    assert set(ds) == {"dev", "test"}
    assert len(ds["dev"]) == 10 and len(ds["test"]) == 2  # every fifth session is test
    assert ds["dev"].features == features_for("v0")
    assert isinstance(ds["dev"].features["turns"], datasets.List)
    # closed label sets are ClassLabels with the schema's names
    assert ds["dev"].features["split"].names == ["dev", "test"]
    assert ds["dev"].features["turns"].feature["gold"]["action"].names == ["new", "continue", "switch", "return", "oneoff"]
    assert ds["dev"].features["turns"].feature["style"].names == ["explicit", "cue", "pronoun", "implicit", "oneoff"]

    src = _source(v0_dir / "sessions.jsonl")
    seen = set()
    for split in ds:
        for row in ds[split]:
            assert ds[split].features["split"].int2str(row["split"]) == split  # a ClassLabel: the name's index
            assert row_to_session(row, "v0") == src[row["session_id"]]  # field by field, extras included
            seen.add(row["session_id"])
            t = row["turns"]
            assert isinstance(t[0]["i"], int) and isinstance(t[0]["ambiguous"], bool)
            assert t[0]["fact"] is None and t[1]["fact"]["key"] == "budget"  # absent stays null, not {}
            assert t[0]["judge"]["candidates"] is None and t[3]["judge"]["candidates"] == ["t2", "t3"]
            assert t[2]["gold"]["thread"] is None  # a one-off's null is a value
            assert row["threads"][0]["twinOf"] is None and row["threads"][2]["twinOf"] == "t2"
    assert seen == set(src)

    first = next(r for r in ds["dev"] if r["session_id"] == "en-0000")
    assert json.loads(first["extra"]) == {"writer_note": {"by": "hand", "n": [1, 2.5, None]}}
    assert json.loads(first["turns"][0]["gold"]["extra"]) == {"confidence": 0.9876543210987654}
    assert first["turns"][1]["extra"] is None


def test_default_config_loads_without_a_name_and_readme_declares_exact_features(v0_dir, tmp_path, capsys):
    from huggingface_hub import DatasetCard
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs

    out = tmp_path / "interleavebench"
    assert _export(["--v0", str(v0_dir), "--mid-reply", str(PACKAGED_CASES), "--out", str(out)], capsys)[0] == 0
    data = DatasetCard.load(out / "README.md").data
    meta = MetadataConfigs.from_dataset_card_data(data)
    infos = DatasetInfosDict.from_dataset_card_data(data)
    assert set(meta) == {"v0", "mid_reply"} and meta.get_default_config_name() == "v0"
    assert infos["v0"].features == features_for("v0")
    assert infos["mid_reply"].features == features_for("mid_reply")
    assert {s.name: s.num_examples for s in infos["v0"].splits.values()} == {"dev": 10, "test": 2}
    assert data.license == "apache-2.0" and data.language == ["en", "zh"]
    assert data.task_categories == ["text-classification"] and data.size_categories == ["n<1K"]
    ds = _load_local(out, None, tmp_path / "cache")
    assert set(ds) == {"dev", "test"} and ds["dev"].features == features_for("v0")


def test_the_card_reports_this_runs_figures(v0_dir, tmp_path, capsys):
    out = tmp_path / "interleavebench"
    assert _export(["--v0", str(v0_dir), "--out", str(out)], capsys)[0] == 0
    text = (out / "README.md").read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1]
    assert "{{" not in body
    # 12 sessions of 5 turns; per session 4 thread messages of which 1 ambiguous -> 25.0%
    assert "| sessions | 12 |" in body and "| messages | 60 |" in body
    assert "| ambiguous share (of thread messages) | 25.0% |" in body
    assert "`en` 6 sessions / 30 messages, `zh` 6 sessions / 30 messages" in body
    assert "| `v0` | `templates` | none | 7 |" in body
    fingerprint = records_fingerprint(read_sessions(v0_dir / "sessions.jsonl"))
    assert fingerprint in body
    header = text.split("\n---\n", 1)[0]
    assert f"v0: '{fingerprint}'" in header or f"v0: {fingerprint}" in header
    # the Hugging Face dataset card template's sections, in order
    headings = [line for line in body.splitlines() if line.startswith("#")]
    for want in ("## Dataset Details", "### Dataset Description", "### Dataset Sources", "## Uses", "### Direct Use",
                 "### Out-of-Scope Use", "## Dataset Structure", "## Dataset Creation", "### Curation Rationale",
                 "### Source Data", "### Annotations", "### Personal and Sensitive Information",
                 "## Bias, Risks, and Limitations", "## Citation"):
        assert want in headings, want
    assert "author = {InterleaveBench contributors}" in body and "url    = {https://" in body
    from huggingface_hub import DatasetCard

    meta = DatasetCard(text).data.to_dict()
    assert meta["annotations_creators"] == ["machine-generated"] and meta["language_creators"] == ["machine-generated"]
    assert meta["source_datasets"] == ["original"] and meta["task_ids"] == ["multi-class-classification"]
    assert "year   = {2025}" in body


def test_v1_keeps_replies_timeline_and_probes_exactly(tmp_path, capsys):
    # a reference-format v1 file written by hand (tests/_hub_util.py, v1_fields)
    rows = u.sessions(3, "interleave-v1")
    src_dir = u.write_data(tmp_path / "v1", rows, u.manifest("interleave-v1", 3, model="deepseek-chat", writer="model"))
    out = tmp_path / "interleavebench"
    assert _export(["--v1", str(src_dir), "--out", str(out)], capsys)[0] == 0
    ds = _load_local(out, "v1", tmp_path / "cache")
    assert ds["dev"].features == features_for("v1")
    by_id = {r["session_id"]: r for r in ds["dev"]}
    for s in rows:
        row = by_id[s["session_id"]]
        assert row["turns"][1]["assistant"] == "reply to 1" and row["turns"][0]["fact"]["value"] == "250 EUR"
        assert row["timeline"][2]["value"] is None and row["timeline"][3]["miss"] is True
        assert row["timeline"][0]["miss"] is None  # absent in the source, null in the typed column
        assert row["probes"][0]["gold"] is None and row["probes"][2]["decoys"] == ["May 14"]
        assert json.loads(row["fact_types"]) == s["fact_types"]
        assert row_to_session(row, "v1") == s  # field by field, nulls where the source has them
    text = (out / "README.md").read_text(encoding="utf-8")
    assert "| `v1` | `model` | `deepseek-chat` |" in text


def test_mid_reply_rows_join_the_catalog_and_rebuild_the_case_file(tmp_path, capsys):
    cases = u.case_file()
    path = u.write_json(tmp_path / "cases.json", cases)
    out = tmp_path / "interleavebench"
    assert _export(["--mid-reply", path, "--out", str(out)], capsys)[0] == 0
    ds = _load_local(out, "mid_reply", tmp_path / "cache")
    assert list(ds) == ["test"] and ds["test"].features == features_for("mid_reply")
    rows = list(ds["test"])
    assert [t["id"] for t in rows[0]["catalog"]] == ["trip", "ci"]
    assert [t["id"] for t in rows[2]["catalog"]] == ["tax", "gym"]
    assert json.loads(rows[1]["extra"]) == {"note": "kept"}
    assert rows_to_case_file(rows, about=cases["about"]) == cases


def test_packaged_mid_reply_cases_export_and_validate(tmp_path, capsys):
    out = tmp_path / "interleavebench"
    assert _export(["--mid-reply", str(PACKAGED_CASES), "--out", str(out)], capsys)[0] == 0
    ds = _load_local(out, "mid_reply", tmp_path / "cache")
    original = json.loads(PACKAGED_CASES.read_text(encoding="utf-8"))
    rebuilt = rows_to_case_file(list(ds["test"]), about=original.get("about", ""))
    MidReplyCaseFile.model_validate(rebuilt)
    assert rebuilt["cases"] == original["cases"]


def _digest(out: Path) -> dict[str, str]:
    """Every file of the folder ``out`` by its path in it: its SHA-256."""
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file()}


def test_export_is_byte_identical_when_repeated(v0_dir, tmp_path, capsys):
    out = tmp_path / "interleavebench"
    assert _export(["--v0", str(v0_dir), "--out", str(out)], capsys)[0] == 0
    first = _digest(out)
    assert _export(["--v0", str(v0_dir), "--out", str(out)], capsys)[0] == 0
    assert _digest(out) == first


def test_reexport_replaces_only_what_the_export_owns(v0_dir, tmp_path, capsys):
    out = tmp_path / "interleavebench"
    assert _export(["--v0", str(v0_dir), "--mid-reply", str(PACKAGED_CASES), "--out", str(out)], capsys)[0] == 0
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert _export(["--v0", str(v0_dir), "--out", str(out)], capsys)[0] == 0
    assert not (out / "mid_reply").exists()  # a config no longer exported is gone
    assert (out / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"  # a clone's .git is left alone
    (out / "notes.txt").write_text("mine")
    code, _, err = _export(["--v0", str(v0_dir), "--out", str(out)], capsys)
    assert code == 2 and "notes.txt" in err and "refusing" in err
    assert (out / "notes.txt").read_text() == "mine"
    (out / "notes.txt").unlink()
    # under the names it owns, too: a file of the user's in a config folder, a README that is no card
    (out / "v0" / "notes.txt").write_text("mine too")
    code, _, err = _export(["--v0", str(v0_dir), "--out", str(out)], capsys)
    assert code == 2 and "holds v0/notes.txt, which an export does not write" in err, err
    assert (out / "v0" / "notes.txt").read_text() == "mine too"
    (out / "v0" / "notes.txt").unlink()
    (out / "README.md").write_text("# my own readme\n")
    code, _, err = _export(["--v0", str(v0_dir), "--out", str(out)], capsys)
    assert code == 2 and "holds README.md (no dataset card)" in err, err
    assert (out / "README.md").read_text() == "# my own readme\n"


def test_an_export_killed_mid_swap_is_put_back_by_the_next_and_two_never_meet(v0_dir, tmp_path, capsys):
    from _lock_util import Holder
    from interleave_bench.hub.export import export_lock

    out = tmp_path / "interleavebench"
    assert _export(["--v0", str(v0_dir), "--out", str(out)], capsys)[0] == 0
    before = _digest(out)
    # what a kill -9 in the middle of the swap leaves: the old entries set aside, the new README
    # moved in, the rest of the new export still in its staging folder
    aside = tmp_path / ".interleavebench.k1llswap.old"
    aside.mkdir()
    for name in ("README.md", "eval.yaml", "v0"):
        os.replace(out / name, aside / name)
    (out / "README.md").write_text("---\nconfigs: [the new export's]\n---\n")
    stage = tmp_path / ".interleavebench.h4lfbu1t.tmp"
    stage.mkdir()
    (stage / "eval.yaml").write_text("half")
    theirs = tmp_path / ".interleavebench.v2.abcdefgh.tmp"  # the staging folder of interleavebench.v2's export
    theirs.mkdir()
    # the next export, even one refused for bad input, first puts the previous export back
    rows = u.sessions(2)
    rows[1]["turns"][0]["gold"]["action"] = "wander"
    bad = u.write_data(tmp_path / "bad", rows)
    code, _, err = _export(["--v0", str(bad), "--out", str(out)], capsys)
    assert code == 2 and "wander" in err
    assert _digest(out) == before
    assert not aside.exists() and not stage.exists() and theirs.is_dir()
    # one export to a folder at a time: a second is refused at once, and the folder is untouched
    with Holder(export_lock(out)) as h:
        code, _, err = _export(["--v0", str(v0_dir), "--out", str(out)], capsys)
        assert code == 2 and f"another run is writing it (pid {h.proc.pid}: holder)" in err, err
    assert _digest(out) == before
    assert _export(["--v0", str(v0_dir), "--out", str(out)], capsys)[0] == 0 and _digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [theirs.name]


# --- bad input --------------------------------------------------------------------------------------


def test_invalid_sessions_are_refused_with_file_line_and_field(tmp_path, capsys):
    rows = u.sessions(3)
    rows[1]["turns"][2]["gold"]["action"] = "wander"
    src = u.write_data(tmp_path / "bad", rows)
    out = tmp_path / "interleavebench"
    code, stdout, err = _export(["--v0", str(src), "--out", str(out)], capsys)
    assert code == 2
    assert f"{src / 'sessions.jsonl'}:2: turns[2].gold.action: 'wander' is not one of" in err
    assert "Traceback" not in err
    assert not out.exists() and not any(p.name.startswith(".interleavebench") for p in tmp_path.iterdir())


def test_a_v1_session_in_the_v0_config_is_refused(tmp_path, capsys):
    rows = u.sessions(2)
    rows[1]["version"] = "interleave-v1"
    src = u.write_data(tmp_path / "mixed", rows)
    code, _, err = _export(["--v0", str(src), "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and f"{src / 'sessions.jsonl'}:2: version: 'interleave-v1' cannot go in config 'v0'" in err


def test_nothing_to_export_and_missing_folder_are_one_line_errors(tmp_path, capsys):
    code, _, err = _export(["--out", str(tmp_path / "o")], capsys)
    assert code == 2 and err.startswith("error: nothing to export")
    code, _, err = _export(["--v0", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "no such file" in err and len(err.strip().splitlines()) == 1


# --- the round trip as a property -------------------------------------------------------------------------

_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
#: an id's text: no control characters (an id is printed on one line)
_id_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)
_json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-2**62, 2**62),
                         st.floats(allow_nan=False, allow_infinity=False), _text)
_json = st.recursive(_json_scalar, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(_text, c, max_size=3)),
                     max_leaves=6)
_extras = st.dictionaries(st.sampled_from(["note", "x_meta", "extra", "score"]), _json, max_size=2)


@st.composite
def sessions_st(draw, version: str = "interleave-v0"):
    """A valid session; ``canonical`` ones write every defaulted field and never null an omittable one."""
    canonical = draw(st.booleans())
    n_threads = draw(st.integers(1, 3))
    ids = [f"t{k}" for k in range(n_threads)]

    def maybe(d: dict, key: str, value) -> None:
        if canonical or draw(st.booleans()):
            d[key] = value

    threads = []
    for k, tid in enumerate(ids):
        t = {"id": tid, "title": draw(_text), "domain": draw(_text)}
        maybe(t, "goal", draw(_text))
        maybe(t, "description", draw(_text))
        facts = [{"key": draw(_text), "value": draw(_text), "update": draw(st.none() | _text), **draw(_extras)}
                 for _ in range(draw(st.integers(0, 2)))]
        if version == "interleave-v1":
            for f in facts:
                maybe(f, "alternative", draw(st.none() | _text))
        maybe(t, "facts", facts)
        maybe(t, "constraints", draw(st.lists(_text, max_size=2)))
        if k and draw(st.booleans()):
            t["twinOf"] = ids[0]
        elif not canonical and draw(st.booleans()):
            t["twinOf"] = None
        t.update(draw(_extras))
        threads.append(t)
    turns = []
    for i in range(draw(st.integers(1, 4))):
        oneoff = draw(st.booleans())
        gold = {"thread": None if oneoff else draw(st.sampled_from(ids)),
                "action": "oneoff" if oneoff else draw(st.sampled_from(["new", "continue", "switch", "return"]))}
        maybe(gold, "refs", draw(st.lists(st.sampled_from(ids), max_size=2)))
        gold.update(draw(_extras))
        judge = {"thread": draw(st.sampled_from(ids + ["none", "ambiguous"]))}
        if draw(st.booleans()):
            judge["candidates"] = draw(st.lists(st.sampled_from(ids), max_size=2))
        judge.update(draw(_extras))
        turn = {"i": i, "text": draw(_text), "gold": gold, "style": draw(st.sampled_from(["explicit", "cue", "pronoun", "implicit", "oneoff"])),
                "judge": judge, "ambiguous": draw(st.booleans())}
        maybe(turn, "tags", draw(st.lists(_text, max_size=2)))
        if draw(st.booleans()):
            turn["fact"] = {"key": draw(_text), "kind": draw(_text), **draw(_extras)}
            if version == "interleave-v1":
                maybe(turn["fact"], "value", draw(st.none() | _text))
        if version == "interleave-v1" and draw(st.booleans()):
            turn["assistant"] = draw(_text)
        turn.update(draw(_extras))
        turns.append(turn)
    s = {"session_id": "s-" + draw(_id_text), "version": version, "split": draw(st.sampled_from(["dev", "test"])),
         "lang": draw(st.sampled_from(["en", "zh", "de"])), "threads": threads, "turns": turns}
    maybe(s, "persona", draw(_text))
    if version == "interleave-v1" and draw(st.booleans()):
        # typed, not checked across fields here (the records round-trip whatever their content)
        s["fact_types"] = {tid: {draw(_text): draw(st.sampled_from(FACT_TYPES))} for tid in ids}
        events = []
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(sorted(STEP_STATUS)))
            e = {"thread": draw(st.sampled_from(ids)), "key": draw(_text), "turn": draw(st.integers(0, 60)),
                 "kind": kind, "status": STEP_STATUS[kind], "value": draw(st.none() | _text)}
            if draw(st.booleans()):
                e["miss"] = True
            e.update(draw(_extras))
            events.append(e)
        s["timeline"] = events
        s["probes"] = [
            {"id": "p" + draw(_id_text), "after": draw(st.integers(0, 60)), "thread": draw(st.sampled_from(ids)),
             "source": draw(st.sampled_from(ids)), "key": draw(_text), "category": draw(st.sampled_from(PROBE_CATEGORIES)),
             "gold": draw(st.none() | _text), "decoys": draw(st.lists(_text, max_size=2)), "question": draw(_text),
             **draw(_extras)}
            for _ in range(draw(st.integers(0, 2)))
        ]
    s.update(draw(_extras))
    return canonical, s


def _through_arrow(row: dict, config: str) -> dict:
    return datasets.Dataset.from_list([row], features=features_for(config))[0]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions_st("interleave-v0"), )
def test_round_trip_v0_property(drawn):
    canonical, s = drawn
    rec = Session.model_validate(s)
    back = from_row(_through_arrow(session_row(rec, "v0"), "v0"), SPECS["v0"])
    assert Session.model_validate(back).model_dump() == rec.model_dump()
    if canonical:
        assert back == s


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions_st("interleave-v1"))
def test_round_trip_v1_property(drawn):
    canonical, s = drawn
    rec = Session.model_validate(s)
    back = row_to_session(_through_arrow(session_row(rec, "v1"), "v1"), "v1")
    assert Session.model_validate(back).model_dump() == rec.model_dump()
    if canonical:
        assert back == s


def test_omitted_defaults_come_back_as_defaults(tmp_path):
    s = u.session("en-0001")
    del s["persona"], s["threads"][0]["constraints"], s["turns"][0]["tags"], s["turns"][0]["gold"]["refs"]
    row = session_row(Session.model_validate(s), "v0")
    assert row["persona"] == "" and row["threads"][0]["constraints"] == [] and row["turns"][0]["tags"] == []
    back = row_to_session(row, "v0")
    assert back != s and Session.model_validate(back).model_dump() == Session.model_validate(s).model_dump()


# --- the builder ---------------------------------------------------------------------------------------------


def test_builder_builds_the_same_dataset_as_the_export(v0_dir, tmp_path, capsys):
    out = tmp_path / "interleavebench"
    assert _export(["--v0", str(v0_dir), "--out", str(out)], capsys)[0] == 0
    published = _load_local(out, "v0", tmp_path / "cache-a")
    built = interleave_bench.load("v0", data_dir=v0_dir, cache_dir=tmp_path / "cache-b")
    assert set(built) == set(published)
    for split in built:
        assert built[split].features == published[split].features == features_for("v0")
        assert sorted(built[split].to_list(), key=lambda r: r["session_id"]) == \
            sorted(published[split].to_list(), key=lambda r: r["session_id"])
    mid = interleave_bench.load("mid_reply", cache_dir=tmp_path / "cache-b", split="test")
    assert mid.features == features_for("mid_reply") and len(mid) == len(json.loads(PACKAGED_CASES.read_text())["cases"])


def test_builder_rebuilds_when_the_source_changes_and_refuses_bad_data(tmp_path):
    src = u.write_data(tmp_path / "d", u.sessions(2))
    first = interleave_bench.load("v0", data_dir=src, cache_dir=tmp_path / "c", split="dev")
    rows = u.sessions(2)
    rows[0]["turns"][0]["text"] = "changed"
    u.write_data(src, rows)
    again = interleave_bench.load("v0", data_dir=src / "sessions.jsonl", cache_dir=tmp_path / "c", split="dev")
    assert first[0]["turns"][0]["text"] != "changed" and again[0]["turns"][0]["text"] == "changed"
    rows[1]["turns"][0]["gold"]["thread"] = "t9"
    u.write_data(src, rows)
    with pytest.raises(InputError) as err:
        interleave_bench.load("v0", data_dir=src, cache_dir=tmp_path / "c")
    assert str(err.value).startswith(f"{src / 'sessions.jsonl'}:2: turns[0].gold.thread: 't9' is not a thread")
    with pytest.raises(InputError, match="no such file"):
        interleave_bench.load("v1", data_dir=tmp_path / "nothing", cache_dir=tmp_path / "c")


# --- the offline generator's output ----------------------------------------------------------------------


def test_export_of_offline_generated_data(tmp_path, capsys):
    from interleave_bench.generate import generate_offline

    out_dir = tmp_path / "interleave-v0"
    generate_offline(6, out_dir, seed=3, langs=("en", "zh"))
    assert _export(["--v0", str(out_dir), "--out", str(tmp_path / "interleavebench")], capsys)[0] == 0
    ds = _load_local(tmp_path / "interleavebench", "v0", tmp_path / "cache")
    src = _source(out_dir / "sessions.jsonl")
    rows = [r for split in ds for r in ds[split]]
    assert len(rows) == len(src) == 6
    for r in rows:
        assert Session.model_validate(row_to_session(r)).model_dump() == Session.model_validate(src[r["session_id"]]).model_dump()
        assert row_to_session(r) == src[r["session_id"]]


def test_an_exported_folder_is_data_for_route_score_and_stats_as_its_source_is(v0_dir, tmp_path, capsys, monkeypatch):
    """docs/harness.md: DATA is any data argument, an export's folder too; every command reads it as
    the JSONL it was exported from (the same numbers, no warning that the run was routed elsewhere)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTERLEAVE_HUB_DATA", str(tmp_path / "hub-data"))
    out = tmp_path / "interleavebench"
    assert _export(["--v0", str(v0_dir), "--out", str(out)], capsys)[0] == 0
    assert u.cli(["route", str(v0_dir), "--mode", "closed", "--policy", "bm25"], capsys)[0] == 0
    pred = v0_dir / "predictions" / "closed-bm25.jsonl"
    scores = {}
    for data in (str(v0_dir), str(out), f"{out}#v0"):
        code, printed, err = u.cli(["score", data, str(pred), "--split", "all", "--bootstrap", "0", "--json"], capsys)
        assert code == 0 and "warning" not in err, err
        doc = json.loads(printed)
        scores[data] = (doc["metrics"], doc["provenance"]["data_sha256"])
    assert len(set(json.dumps(v, sort_keys=True) for v in scores.values())) == 1, scores
    # routed from the export: the same rows as from the source
    routed = tmp_path / "from-export.jsonl"
    assert u.cli(["route", str(out), "--mode", "closed", "--policy", "bm25", "--out", str(routed)], capsys)[0] == 0
    def rows(path: Path) -> list[dict]:  # (an export holds each split apart: sessions in another order)
        return sorted((json.loads(x) for x in path.read_text().splitlines()), key=lambda r: (r["session_id"], r["i"]))

    assert rows(routed) == rows(pred)
    code, printed, _ = u.cli(["stats", str(out), str(v0_dir), "--json"], capsys)
    a, b = json.loads(printed)["data"]
    assert code == 0 and {k: v for k, v in a.items() if k != "path"} == {k: v for k, v in b.items() if k != "path"}
    code, _, err = u.cli(["score", f"{out}#v1", str(pred)], capsys)
    assert code == 2 and "no Parquet files of config 'v1'" in err and err.count("\n") == 1
