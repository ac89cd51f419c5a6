"""The ``sgd`` config: export with the corpus's licence and citation, ``load_dataset`` gives the import back."""

from __future__ import annotations

import json
from pathlib import Path

import datasets

from _hub_util import hub  # noqa: F401  (the fixture)
from _sgd_util import imported, run_cli  # noqa: F401  (imported: the fixture)
from interleave_bench.hub import card as cardlib
from interleave_bench.hub.builder import load
from interleave_bench.hub.features import features_for, row_to_session
from interleave_bench.schema import Session





def source_lines(folder: Path) -> dict[str, dict]:
    lines = (folder / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    return {json.loads(x)["session_id"]: json.loads(x) for x in lines}


def test_export_then_load_dataset_gives_the_import_back(tmp_path, capsys, imported):
    out = tmp_path / "interleavebench"
    code, stdout, err = run_cli(capsys, "export", "--sgd", imported, "--out", out)
    assert code == 0, err
    assert "sgd: dev 5" in stdout
    ds = datasets.load_dataset(str(out), "sgd", cache_dir=str(tmp_path / "cache"))
    assert set(ds) == {"dev"} and ds["dev"].features == features_for("sgd")
    # the corpus's id and split are columns of their own, the reply a typed turn column
    assert ds["dev"].column_names[:8] == ["session_id", "version", "split", "lang", "persona", "threads",
                                          "dialogue_id", "corpus_split"]
    assert ds["dev"][0]["dialogue_id"] == "8_00005" and ds["dev"][0]["corpus_split"] == "dev"
    assert ds["dev"][0]["turns"][0]["assistant"]
    source = source_lines(imported)
    rows = list(ds["dev"])
    assert [r["session_id"] for r in rows] == list(source)
    for row in rows:
        # field by field: the JSON written by the import, extras (corpus_turn) included
        assert row_to_session(row, "sgd") == source[row["session_id"]]


def test_the_card_carries_the_corpus_licence_and_citation(tmp_path, capsys, imported):
    out = tmp_path / "interleavebench"
    assert run_cli(capsys, "export", "--sgd", imported, "--out", out)[0] == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    head = card.split("---")[1]
    assert "- apache-2.0" in head and "- cc-by-sa-4.0" in head and "config_name: sgd" in head
    assert "language_creators:\n- machine-generated\n- crowdsourced" in head
    assert "Creative Commons Attribution-ShareAlike 4.0 International (`cc-by-sa-4.0`)" in card
    assert "must carry the same licence and the citation" in card
    assert "@inproceedings{rastogi2020towards" in card and "Schema-Guided Dialogue Dataset" in card


def test_a_card_of_real_chat_does_not_call_it_synthetic(tmp_path, capsys, imported):
    out = tmp_path / "interleavebench"
    assert run_cli(capsys, "export", "--sgd", imported, "--out", out)[0] == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    head, body = card.split("---")[1], card.split("---", 2)[2]
    assert "synthetic" not in head and "messages are synthetic" not in body and "The data is synthetic" not in body
    assert "no message comes from a real person" not in body and "none comes from a real person" not in body
    assert "People wrote the messages of `sgd`" in body
    assert "- **License:** Apache-2.0 (the toolkit's licence); `sgd` keep their corpus's licence" in body


def test_a_mixed_card_says_which_configs_are_synthetic():
    lines = cardlib.provenance_lines(["v0", "sgd", "mid_reply"])
    assert lines["use_line"].startswith("Conclusions about how real people write from `v0`: their messages are synthetic")
    assert "`sgd` is task dialogues crowd workers wrote from outlines" in lines["use_line"]
    assert lines["producers"] == (
        "A language model (or, for the offline writer, phrasing templates) wrote every message of `v0` from a "
        "seeded plan; none comes from a real person. People wrote the messages of `sgd`; the gold threads come "
        "from the corpus's own annotation. The `mid_reply` cases were written by hand.")
    assert lines["synthetic_line"].startswith("The data of `v0` is synthetic")
    assert cardlib.tags(["v0", "sgd"])[-1] == "synthetic" and "synthetic" not in cardlib.tags(["sgd", "irc_ubuntu"])
    assert cardlib.provenance_lines(["irc_ubuntu"])["use_line"] == (
        "Conclusions about chat unlike the corpora's: `irc_ubuntu` is one technical help channel where many "
        "people talk at once.")


def test_the_builder_gives_the_same_rows_as_the_export(tmp_path, capsys, imported):
    out = tmp_path / "interleavebench"
    assert run_cli(capsys, "export", "--sgd", imported, "--out", out)[0] == 0
    exported = datasets.load_dataset(str(out), "sgd", cache_dir=str(tmp_path / "cache"))
    built = load("sgd", imported, cache_dir=tmp_path / "build-cache")
    assert built["dev"].features == exported["dev"].features
    assert list(built["dev"]) == list(exported["dev"])


def test_other_sessions_are_refused_as_sgd(tmp_path, capsys):
    from _score_util import many_sessions, write_jsonl

    data = write_jsonl(tmp_path / "data" / "sessions.jsonl", many_sessions(2))
    code, _, err = run_cli(capsys, "export", "--sgd", data, "--out", tmp_path / "hub")
    assert code == 2 and "import sgd" in err and "dialogue_id" in err and err.count("\n") == 1


def test_session_records_round_trip_through_rows(imported):
    for line in (imported / "sessions.jsonl").read_text(encoding="utf-8").splitlines():
        s = Session.model_validate_json(line)
        from interleave_bench.hub.features import session_row

        row = session_row(s, "sgd")
        assert row["extra"] is None  # every session-level field has its column
        assert Session.model_validate(row_to_session(row, "sgd")) == s


#: the corpus's replies quote the phone numbers of the businesses in its service results; a release
#: of the corpus allows them (docs/sgd.md#releasing-it)
CORPUS_PHONES = r"phone:\+?[0-9][0-9 ()-]{7,}  # business numbers the corpus's own replies quote"


def test_a_release_carries_the_sgd_config_and_it_loads_back(hub, tmp_path, capsys, imported):  # noqa: F811
    import _hub_util as u

    allow = tmp_path / "vet-allow.txt"
    allow.write_text(CORPUS_PHONES + "\n", encoding="utf-8")
    code, out, err = u.cli(["release", "--repo", "org/interleavebench", "--revision", "v0.1", "--sgd", str(imported),
                            "--no-mid-reply", "--allow", str(allow), "--work", str(tmp_path / "rel"),
                            "--bootstrap", "40"], capsys)
    assert code == 0, err
    assert "[4/7] baselines: sgd 7 runs scored on 5 dev sessions" in out
    assert "[6/7] load: sgd dev 5: every record equals its source" in out
    card = hub.files("org/interleavebench", "v0.1")["README.md"].decode()
    assert "- cc-by-sa-4.0" in card and "@inproceedings{rastogi2020towards" in card
    assert "| closed-oracle | closed | 1.0000 [1.0000, 1.0000]" in card

    # without the allowance the corpus's phone numbers stop the release before anything is pushed
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    code, out, err = u.cli(["release", "--repo", "org/interleavebench", "--revision", "v0.2", "--sgd", str(imported),
                            "--no-mid-reply", "--allow", str(tmp_path / "empty.txt"), "--work", str(tmp_path / "rel2"),
                            "--bootstrap", "40"], capsys)
    assert code == 1 and "step 3/7 (vet)" in err and "phone" in out
    assert "v0.2" not in hub.tags("org/interleavebench")
